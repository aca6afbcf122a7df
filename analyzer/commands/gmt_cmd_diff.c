/*
 * gmt_cmd_diff.c - `diff A B`: two runs compared (model/gmt_diff_model.h,
 * render/gmt_diff_render.c); exit status 3 when a peak grew by more than
 * --fail-above. docs/analyzer.md, "diff".
 */
#include <stdio.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "gmt_diff.h"
#include "model/gmt_diff_model.h"
#include "render/gmt_render.h"

typedef struct diff_state {
	const char *fail_above;
	unsigned top;
} diff_state_t;

static const gmt_cmd_opt_t opts[] = {
	{ "fail-above", "PCT", "exit status 3 when a matched peak (a device's, a phase occurrence's)\n"
			       "grew by more than PCT percent (for CI gates)\n" },
	{ "top", "N", "call sites listed per device and list (default 20)\n" },
	{ NULL, NULL, NULL },
};

static void init(void *st)
{
	((diff_state_t *)st)->top = 20;
}

static int option(void *st, size_t i, const char *v)
{
	diff_state_t *s = st;
	unsigned long long x;
	if (i == 0) {
		if (gmt_diff_exceeds(1, 2, v) < 0) {
			gmt_cli_error(&gmt_cmd_diff, "--fail-above needs a percentage (0 or more, at most 6 decimals), got '%s'", v);
			return -1;
		}
		s->fail_above = v;
		return 0;
	}
	if (gmt_cli_number(&gmt_cmd_diff, "--top", v, 1000000, &x))
		return -1;
	s->top = (unsigned)x;
	return 0;
}

static int check(void *st, const gmt_common_t *c)
{
	(void)st;
	if (c->n_files != 2) {
		gmt_cli_error(&gmt_cmd_diff, "needs two runs, A and B (each a trace or a directory of one job's traces)");
		return -1;
	}
	return 0;
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	diff_state_t *s = st;
	char **pa, **pb, err[512];
	long n = gmt_diff_pairs(c->files[0], c->files[1], &pa, &pb, err, sizeof(err));
	if (n < 0) {
		gmt_cli_error(&gmt_cmd_diff, "%s", err);
		return GMT_EXIT_USAGE;
	}
	gmt_diff_model_opts_t o = { .symbols = c->symbols, .debug_dirs = c->debug_dirs,
				    .n_debug_dirs = c->n_debug_dirs, .domains = c->domains,
				    .n_domains = c->n_domains, .patterns = c->patterns,
				    .n_patterns = c->n_patterns, .all_depths = c->all_depths,
				    .fail_above = s->fail_above, .top = s->top };
	int rc = GMT_EXIT_OK;
	size_t exceeded = 0;
	if (out->json) {
		if (s->fail_above)
			gmt_json_kv_str(out->json, "fail_above", s->fail_above);
		else
			gmt_json_kv_null(out->json, "fail_above");
		gmt_json_kv_arr_begin(out->json, "pairs");
	}
	for (long i = 0; i < n; i++) {
		gmt_diff_model_t *m = gmt_diff_model_build(pa[i], pb[i], &o);
		if (!m) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			rc = GMT_EXIT_USAGE;
			break;
		}
		out->events += m->events;
		int ta = gmt_cli_outcome(pa[i], &m->res_a), tb = gmt_cli_outcome(pb[i], &m->res_b);
		gmt_cli_gaps(pa[i], &m->gaps_a);
		gmt_cli_gaps(pb[i], &m->gaps_b);
		if (ta > rc)
			rc = ta;
		if (tb > rc)
			rc = tb;
		exceeded += m->n_exceeded;
		if (out->json) {
			gmt_diff_json(out->json, m);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_diff_text(out->f, m);
		}
		gmt_diff_model_free(m);
	}
	if (out->json) {
		gmt_json_arr_end(out->json);
		gmt_json_kv_bool(out->json, "exceeded", exceeded > 0);
	}
	gmt_diff_pairs_free(pa, pb, n);
	if (rc == GMT_EXIT_OK && exceeded)
		rc = 3;
	return rc;
}

const gmt_cmd_t gmt_cmd_diff = {
	.name = "diff",
	.operands = "A B",
	.max_traces = 2,
	.help = "Two runs side by side (A, B, B - A, percent): the environment with the\n"
		"differences marked (driver, runtime and NCCL versions, the framework's\n"
		"settings, allow-listed variables, devices, library files and build ids), the\n"
		"device's cost before the first allocation and at the end, each device's peak,\n"
		"each phase occurrence's coinciding peaks (matched by name and number), and\n"
		"the call sites at each run's peak and over the run, matched by symbolised\n"
		"stack, growth largest first. A and B: a trace each, or a directory of one\n"
		"job's traces (paired by RANK).\n",
	.opts = opts,
	.state_size = sizeof(diff_state_t),
	.init = init,
	.option = option,
	.check = check,
	.run = run,
};
