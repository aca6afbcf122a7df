/*
 * gmt_cmd_oom.c - `oom`: the post-mortem of every out-of-memory failure of
 * each trace (model/gmt_oom_model.h, render/gmt_oom_render.c).
 * docs/analyzer.md, "oom".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "gmt_leads.h"
#include "model/gmt_job_model.h"
#include "model/gmt_oom_model.h"
#include "render/gmt_render.h"

typedef struct oom_state {
	unsigned top;
	gmt_leads_t leads;
} oom_state_t;

static const gmt_cmd_opt_t opts[] = {
	{ "top", "N", "call sites listed per failure (default 10)\n" },
	{ "lead", "CATEGORY=GLOB[,GLOB...]", "the phase names of a lead (evaluation, loading, generation,\n"
					     "backward), replacing its defaults; repeatable; CATEGORY= turns it\n"
					     "off (docs/analyzer.md, \"Leads\")\n" },
	{ NULL, NULL, NULL },
};

static void init(void *st)
{
	oom_state_t *s = st;
	s->top = 10;
	gmt_leads_default(&s->leads);
}

static int option(void *st, size_t i, const char *v)
{
	oom_state_t *s = st;
	unsigned long long x;
	char err[256];
	if (i == 0) {
		if (gmt_cli_number(&gmt_cmd_oom, "--top", v, 1000000, &x))
			return -1;
		s->top = (unsigned)x;
		return 0;
	}
	if (gmt_leads_rule(&s->leads, v, err, sizeof(err))) {
		gmt_cli_error(&gmt_cmd_oom, "%s", err);
		return -1;
	}
	return 0;
}

/* Several traces: the processes grouped by host and physical device
 * (model/gmt_job_model.h, as summary), with what every process on a
 * failing device held at each failure. 0, or -ENOMEM / -EIO. */
static int job_failures(const gmt_common_t *c, gmt_out_t *out, const gmt_job_fail_in_t *in, size_t n)
{
	gmt_report_model_t *rm;
	gmt_job_model_t *jm;
	int rc = gmt_cmd_job(c, &rm, &jm);
	if (rc)
		return rc;
	return gmt_cmd_job_finish(out, rm, jm, gmt_job_failures_build(jm, in, n));
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	oom_state_t *s = st;
	int rc = GMT_EXIT_OK;
	gmt_oom_model_opts_t o = { .top = s->top, .symbols = c->symbols,
				   .debug_dirs = c->debug_dirs, .n_debug_dirs = c->n_debug_dirs,
				   .domains = c->domains, .n_domains = c->n_domains,
				   .patterns = c->patterns, .n_patterns = c->n_patterns,
				   .all_depths = c->all_depths, .leads = &s->leads };
	gmt_job_fail_in_t *fin = NULL;
	size_t n_fin = 0;
	if (out->json)
		gmt_json_kv_arr_begin(out->json, "traces");
	for (size_t i = 0; i < c->n_files; i++) {
		gmt_oom_model_t *m = gmt_oom_model_build(c->files[i], &o);
		if (!m) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			rc = GMT_EXIT_USAGE;
			break;
		}
		out->events += m->events;
		int t = gmt_cli_outcome(c->files[i], &m->res);
		gmt_cli_gaps(c->files[i], &m->gaps);
		if (t > rc)
			rc = t;
		if (out->json) {
			gmt_oom_json(out->json, m);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_oom_text(out->f, m);
		}
		if (c->n_files > 1 && m->n_failures) {
			gmt_job_fail_in_t *x = realloc(fin, (n_fin + m->n_failures) * sizeof(*x));
			if (!x) {
				fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
				gmt_oom_model_free(m);
				rc = GMT_EXIT_USAGE;
				break;
			}
			fin = x;
			for (size_t k = 0; k < m->n_failures; k++) {
				const gmt_oom_failure_t *f = &m->failures[k];
				fin[n_fin++] = (gmt_job_fail_in_t){
					.trace = i, .index = k, .ts = f->ts, .ordinal = f->device,
					.request = f->request, .source = f->source, .recovered = f->recovered,
				};
			}
		}
		gmt_oom_model_free(m);
	}
	if (out->json)
		gmt_json_arr_end(out->json);
	if (c->n_files > 1 && rc != GMT_EXIT_USAGE) {
		int r = job_failures(c, out, fin, n_fin);
		if (r) {
			fprintf(stderr, "gpumemtrace-analyze: oom: grouping the processes: %s\n", strerror(-r));
			rc = GMT_EXIT_USAGE;
		}
	}
	free(fin);
	return rc;
}

const gmt_cmd_t gmt_cmd_oom = {
	.name = "oom",
	.operands = "TRACE...",
	.help = "Every out-of-memory failure: the request, the device at that instant (total,\n"
		"free from the sample taken at the failure, held by kind and owner, the\n"
		"framework's allocated, reserved and cache with its largest free block, outside\n"
		"by owner, the rest as an estimate), the shortfall, the call sites that held the\n"
		"memory, the attempts and cache releases before it (marked recovered when a\n"
		"retry succeeded), the peak before it, how the process ended, and a lead from\n"
		"the phase it failed in. A trace without failures: one line saying so.\n"
		"Several traces: also grouped by host and physical device, as summary does,\n"
		"with what every process on the device held at each failure.\n",
	.opts = opts,
	.state_size = sizeof(oom_state_t),
	.init = init,
	.option = option,
	.run = run,
};
