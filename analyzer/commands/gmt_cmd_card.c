/*
 * gmt_cmd_card.c - `card`: the sizing card of each trace
 * (model/gmt_card_model.h, render/gmt_card_render.c) as text, Markdown or
 * JSON; the estimate options make its computed part. docs/analyzer.md,
 * "card".
 */
#include <stdio.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "model/gmt_card_model.h"
#include "render/gmt_render.h"

typedef struct card_state {
	int markdown;
	const char *parameters, *bits, *reserve_gib, *kv;
	unsigned max_listed;
	gmt_card_estimate_t est;
} card_state_t;

static const gmt_cmd_opt_t opts[] = {
	{ "markdown", NULL, "Markdown, to paste into a ticket (text by default)\n" },
	{ "parameters", "N", "the model's parameters (7e9 and 7000000000 both work): the\n"
			     "computed weights = N x B / 8 bytes\n" },
	{ "bits", "B", "bits per parameter (16, 8, 4.5)\n" },
	{ "reserve-gib", "R", "an assumed reserve in GiB (activations, caches, workspaces,\n"
			      "context), added to the envelope and labelled an ASSUMPTION\n" },
	{ "kv", "L,H,D,T,B,S", "the computed KV cache = 2 x layers x KV heads x head dimension\n"
			       "x tokens x bytes per value x concurrent sequences\n" },
	{ "max-occurrences", "N", "occurrences listed per phase name (default 100)\n" },
	{ NULL, NULL, NULL },
};

static void init(void *st)
{
	((card_state_t *)st)->max_listed = GMT_PHASES_DEFAULT_LISTED;
}

static int option(void *st, size_t i, const char *v)
{
	card_state_t *s = st;
	unsigned long long x;
	switch (i) {
	case 0: s->markdown = 1; return 0;
	case 1: s->parameters = v; return 0;
	case 2: s->bits = v; return 0;
	case 3: s->reserve_gib = v; return 0;
	case 4: s->kv = v; return 0;
	default:
		if (gmt_cli_number(&gmt_cmd_card, "--max-occurrences", v, 100000000, &x))
			return -1;
		s->max_listed = x ? (unsigned)x : 1;
		return 0;
	}
}

static int check(void *st, const gmt_common_t *c)
{
	card_state_t *s = st;
	char err[512];
	if (s->markdown && c->json) {
		gmt_cli_error(&gmt_cmd_card, "--markdown and --json exclude each other");
		return -1;
	}
	if (gmt_card_estimate(s->parameters, s->bits, s->reserve_gib, s->kv, &s->est, err, sizeof(err))) {
		gmt_cli_error(&gmt_cmd_card, "%s", err);
		return -1;
	}
	return 0;
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	card_state_t *s = st;
	int rc = GMT_EXIT_OK;
	gmt_phase_opts_t po = {
		.domains = c->domains, .n_domains = c->n_domains,
		.patterns = c->patterns, .n_patterns = c->n_patterns,
		.all_depths = c->all_depths, .max_listed = s->max_listed,
		.top_n = GMT_PHASES_DEFAULT_TOP, .max_ck_listed = GMT_PHASES_DEFAULT_CK_LISTED,
	};
	if (out->json) {
		gmt_card_computed_json(out->json, &s->est);
		gmt_json_kv_arr_begin(out->json, "traces");
	} else {
		gmt_card_head_text(out->f, &s->est, s->markdown);
	}
	for (size_t i = 0; i < c->n_files; i++) {
		gmt_card_trace_t *t = gmt_card_trace_build(c->files[i], &po, &s->est);
		if (!t) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			rc = GMT_EXIT_USAGE;
			break;
		}
		const gmt_summary_t *sum = gmt_phases_summary(t->ph);
		out->events += sum->events;
		int r = gmt_cli_outcome(c->files[i], &t->res);
		gmt_cli_gaps(c->files[i], &sum->gaps);
		if (r > rc)
			rc = r;
		if (out->json) {
			gmt_card_trace_json(out->json, t, &s->est);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_card_trace_text(out->f, t, &s->est, s->markdown);
		}
		gmt_card_trace_free(t);
	}
	if (out->json)
		gmt_json_arr_end(out->json);
	return rc;
}

const gmt_cmd_t gmt_cmd_card = {
	.name = "card",
	.operands = "TRACE...",
	.help = "The sizing card, in three labelled parts never mixed: COMPUTED (the estimate\n"
		"from the options: weights, KV cache, reserve, envelope; bytes, GB and GiB side\n"
		"by side), OBSERVED (per device and phase occurrence: ok or failed, allocated\n"
		"and reserved at start and end and their maxima, the coinciding peak of\n"
		"everything held, outside the framework, device used; the tested dimensions\n"
		"the job recorded), ASSUMED (the reserve, inputs not tested, the headroom of\n"
		"the worst observed phase against the device's reported total); then the\n"
		"environment. Text, --markdown or --json.\n",
	.opts = opts,
	.state_size = sizeof(card_state_t),
	.init = init,
	.option = option,
	.check = check,
	.run = run,
};
