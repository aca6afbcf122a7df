/*
 * gmt_cmd_sites.c - `sites` and `flamegraph`: per trace, the sites model
 * (model/gmt_sites_model.h) rendered as the sites report (text, JSON) or
 * as folded stacks (text, JSON). docs/analyzer.md, "Call sites".
 */
#include <stdlib.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "model/gmt_sites_model.h"
#include "render/gmt_render.h"

typedef struct sites_opts {
	int flamegraph;
	int framework;
	unsigned top;
	const char *phase;
} sites_opts_t;

static void sites_init(void *st)
{
	sites_opts_t *o = st;
	o->top = 20;
}

static void flame_init(void *st)
{
	sites_opts_t *o = st;
	sites_init(st);
	o->flamegraph = 1;
}

static const gmt_cmd_opt_t sites_opts[] = {
	{ "top", "N", "sites listed per device and list (default 20)\n" },
	{ "phase", "NAME", "also the sites at each device's peak within each occurrence of\n"
			   "phase NAME (phases chosen by the selection)\n" },
	{ "framework", NULL, "the framework's own blocks (allocated, the requested view) at the\n"
			     "peak of each device's (with --phase: of each occurrence's), by\n"
			     "stack (Python frames from the companion shown as text), instead\n"
			     "of the driver-level blocks\n" },
	{ NULL, NULL, NULL },
};

static const gmt_cmd_opt_t flame_opts[] = {
	{ "phase", "NAME", "only the stacks at each device's peak within each occurrence of\n"
			   "phase NAME, rooted at \"NAME #K\"\n" },
	{ "framework", NULL, "the framework's own blocks by stack (as sites --framework)\n" },
	{ NULL, NULL, NULL },
};

static int sites_option(void *st, size_t i, const char *v)
{
	sites_opts_t *o = st;
	unsigned long long x;
	/* flamegraph's list is sites' without --top */
	if (o->flamegraph)
		i++;
	switch (i) {
	case 0:
		if (gmt_cli_number(&gmt_cmd_sites, "--top", v, 1000000, &x))
			return -1;
		o->top = (unsigned)x;
		return 0;
	case 1:
		o->phase = v;
		return 0;
	default:
		o->framework = 1;
		return 0;
	}
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	const sites_opts_t *so = st;
	gmt_json_t *j = out->json;
	gmt_sites_model_opts_t mo = {
		.what = so->flamegraph ? GMT_SITES_FOLDED : GMT_SITES_REPORT,
		.top = so->top, .phase = so->phase, .framework = so->framework,
		.symbols = c->symbols, .debug_dirs = c->debug_dirs, .n_debug_dirs = c->n_debug_dirs,
		.domains = c->domains, .n_domains = c->n_domains,
		.patterns = c->patterns, .n_patterns = c->n_patterns, .all_depths = c->all_depths,
	};
	gmt_sites_totals_t t = { .symbols = c->symbols };
	int rc = GMT_EXIT_OK;
	size_t read_ok = 0, with_phase = 0;   /* --phase: traces read, with NAME */
	/* No network lookups of debug information from here. */
	unsetenv("DEBUGINFOD_URLS");
	if (j) {
		if (!so->flamegraph)
			gmt_json_kv_u64(j, "top", so->top);
		gmt_json_kv_arr_begin(j, "traces");
	}
	for (size_t i = 0; i < c->n_files; i++) {
		gmt_sites_model_t *m = gmt_sites_model_build(c->files[i], &mo);
		if (!m) {
			fprintf(stderr, "gpumemtrace-analyze: %s: out of memory\n", c->files[i]);
			rc = GMT_EXIT_USAGE;
			break;
		}
		out->events += m->events;
		int r = gmt_cli_outcome(c->files[i], &m->res);
		gmt_cli_gaps(c->files[i], &m->gaps);
		if (r > rc)
			rc = r;
		if (so->phase && r != GMT_EXIT_USAGE) {
			/* A name that is not there (a typo) is said, not an empty output. */
			read_ok++;
			if (m->occ_total)
				with_phase++;
			else
				fprintf(stderr, "gpumemtrace-analyze: %s: no phase \"%s\"%s; %s%s%s%s\n",
					c->files[i], so->phase,
					c->n_domains || c->n_patterns || c->all_depths ? " under the phase selection" : "",
					m->phase_names ? "its phases: " : "it has no phases",
					m->phase_names_hint ? m->phase_names_hint : "",
					m->phase_names > 8 ? ", ..." : "",
					m->phase_names > 8 ? " (see: gpumemtrace-analyze phases)" : "");
		}
		if (so->flamegraph && j) {
			gmt_sites_folded_json(j, m);
		} else if (so->flamegraph) {
			gmt_sites_folded(out->f, m);
		} else if (j) {
			gmt_sites_json(j, m);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_sites_text(out->f, m);
		}
		t.addresses += m->sym_addresses;
		t.files += m->sym_files;
		t.seconds += m->sym_seconds;
		gmt_sites_model_free(m);
	}
	if (j) {
		gmt_json_arr_end(j);
		gmt_sites_json_end(j, &t);
	} else if (!so->flamegraph) {
		gmt_sites_text_end(out->f, &t);
	} else {
		gmt_sites_folded_end(&t);
	}
	if (read_ok && !with_phase && rc < GMT_EXIT_USAGE)
		rc = GMT_EXIT_USAGE;   /* no trace has the phase asked for */
	return rc;
}

const gmt_cmd_t gmt_cmd_sites = {
	.name = "sites",
	.operands = "TRACE...",
	.help = "Per device, at its coinciding peak: the call sites holding the live bytes\n"
		"(bytes, blocks, share, recorded and stack owner, the symbolised stack), the\n"
		"sites that allocated most over the run, and the stack of every failed\n"
		"allocation.\n",
	.opts = sites_opts,
	.state_size = sizeof(sites_opts_t),
	.init = sites_init,
	.option = sites_option,
	.run = run,
};

const gmt_cmd_t gmt_cmd_flamegraph = {
	.name = "flamegraph",
	.operands = "TRACE",
	.max_traces = 1,
	.help = "The memory live at each device's peak as folded stacks (flamegraph.pl,\n"
		"speedscope), rooted at \"device N\"; with --json, the same lines as\n"
		"{\"folded\", \"bytes\"} objects.\n",
	.opts = flame_opts,
	.state_size = sizeof(sites_opts_t),
	.init = flame_init,
	.option = sites_option,
	.run = run,
};
