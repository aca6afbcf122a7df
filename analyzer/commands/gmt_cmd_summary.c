/*
 * gmt_cmd_summary.c - `summary`: per trace, the replay (gmt_replay.h) and
 * its report as text or JSON (render/gmt_summary_render.c); when the trace
 * has ranges, a second pass (model/gmt_phase_at.h) names the phase
 * occurrence of each peak and failure. docs/analyzer.md, "summary".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "engines/gmt_replay.h"
#include "model/gmt_job_model.h"
#include "model/gmt_phase_at.h"
#include "model/gmt_report_model.h"
#include "render/gmt_render.h"

/* The phases of s's peaks (by device slot) and failures: at[] holds
 * n_dev + n_fails entries. 0, or -ENOMEM. A trace without ranges costs
 * nothing (sp->ran stays 0). */
static int phases_of(const gmt_common_t *c, const char *path, const gmt_summary_t *s,
		     gmt_phase_at_t **at, gmt_summary_phases_t *sp)
{
	memset(sp, 0, sizeof(*sp));
	*at = NULL;
	if (s->status != GMT_DECODE_OK && s->status != GMT_DECODE_DAMAGED)
		return 0;
	if (!s->by_type[GMT_EV_RANGE_BEGIN])
		return 0;
	size_t n = s->n_dev + s->n_fails;
	uint64_t *ts = calloc(n ? n : 1, sizeof(*ts));
	*at = calloc(n ? n : 1, sizeof(**at));
	if (!ts || !*at) {
		free(ts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_dev; i++)
		ts[i] = s->dev[i] && s->dev[i]->peak.total ? s->dev[i]->peak_ts : UINT64_MAX;
	for (size_t i = 0; i < s->n_fails; i++)
		ts[s->n_dev + i] = s->fails[i].ts;
	gmt_phase_opts_t po = { .max_listed = GMT_PHASES_DEFAULT_LISTED, .top_n = GMT_PHASES_DEFAULT_TOP,
				.domains = c->domains, .n_domains = c->n_domains,
				.patterns = c->patterns, .n_patterns = c->n_patterns,
				.all_depths = c->all_depths, .open_only = 1 };
	gmt_decode_result_t res;
	int rc = gmt_phase_at_run(path, &po, ts, n, *at, &res);
	free(ts);
	if (rc == -ENOMEM)
		return rc;
	sp->ran = 1;
	sp->peak = *at;
	sp->fail = *at + s->n_dev;
	return 0;
}

int gmt_cmd_job(const gmt_common_t *c, gmt_report_model_t **rmp, gmt_job_model_t **jmp)
{
	gmt_report_opts_t ro = {
		.domains = c->domains, .n_domains = c->n_domains,
		.patterns = c->patterns, .n_patterns = c->n_patterns,
		.all_depths = c->all_depths,
	};
	*rmp = NULL;
	*jmp = NULL;
	gmt_report_model_t *rm = gmt_report_model_new(&ro);
	if (!rm)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < c->n_files && !rc; i++) {
		int r = gmt_report_model_add(rm, c->files[i]);
		if (r < 0)
			rc = r;
	}
	if (!rc)
		rc = gmt_report_model_finish(rm);
	if (!rc)
		gmt_cmd_same_notes(rm);
	gmt_job_model_t *jm = rc ? NULL : gmt_job_model_build(rm);
	if (!rc && !jm)
		rc = -ENOMEM;
	if (rc) {
		gmt_report_model_free(rm);
		return rc;
	}
	*rmp = rm;
	*jmp = jm;
	return 0;
}

int gmt_cmd_job_finish(gmt_out_t *out, gmt_report_model_t *rm, gmt_job_model_t *jm, int rc)
{
	if (!rc) {
		if (out->json) {
			gmt_job_json(out->json, jm);
		} else {
			gmt_cli_separator(out->f);
			gmt_job_text(out->f, jm);
		}
	}
	gmt_job_model_free(jm);
	gmt_report_model_free(rm);
	return rc;
}

/* Several traces: the processes of one job by physical device (the report
 * model's grouping and merge; model/gmt_job_model.h), after the traces'
 * own reports. Traces that cannot be read were said above; they only
 * count as processes without devices here. 0, or -ENOMEM / -EIO. */
static int job_section(const gmt_common_t *c, gmt_out_t *out)
{
	gmt_report_model_t *rm;
	gmt_job_model_t *jm;
	int rc = gmt_cmd_job(c, &rm, &jm);
	if (rc)
		return rc;
	return gmt_cmd_job_finish(out, rm, jm, 0);
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	(void)st;
	int rc = GMT_EXIT_OK;
	if (out->json)
		gmt_json_kv_arr_begin(out->json, "traces");
	for (size_t i = 0; i < c->n_files; i++) {
		gmt_replay_t *r = gmt_replay_new(c->files[i]);
		if (!r) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			rc = GMT_EXIT_USAGE;
			break;
		}
		gmt_visitor_t v;
		gmt_decode_result_t res;
		memset(&res, 0, sizeof(res));
		gmt_replay_visitor(r, &v);
		gmt_decode_file(c->files[i], &v, &res);
		if (res.status == GMT_DECODE_STOPPED)
			snprintf(res.message, sizeof(res.message), "%s: offset %llu: out of memory while analysing",
				 c->files[i], (unsigned long long)res.bytes_ok);
		const gmt_summary_t *s = gmt_replay_finish(r, &res);
		out->events += s->events;
		int t = gmt_cli_outcome(c->files[i], &res);
		gmt_cli_gaps(c->files[i], &s->gaps);
		if (t > rc)
			rc = t;
		gmt_phase_at_t *at = NULL;
		gmt_summary_phases_t sp;
		if (phases_of(c, c->files[i], s, &at, &sp)) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			gmt_replay_free(r);
			rc = GMT_EXIT_USAGE;
			break;
		}
		if (out->json) {
			gmt_report_json(out->json, s, &sp);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_report_text(out->f, s, &sp);
		}
		if (at)
			gmt_phase_at_clear(at, s->n_dev + s->n_fails);
		free(at);
		gmt_replay_free(r);
	}
	if (out->json)
		gmt_json_arr_end(out->json);
	if (c->n_files > 1 && rc != GMT_EXIT_USAGE) {
		int r = job_section(c, out);
		if (r) {
			fprintf(stderr, "gpumemtrace-analyze: summary: grouping the processes: %s\n", strerror(-r));
			rc = GMT_EXIT_USAGE;
		}
	}
	return rc;
}

const gmt_cmd_t gmt_cmd_summary = {
	.name = "summary",
	.operands = "TRACE...",
	.help = "Per process and device: the peak of device bytes held with its instant and\n"
		"exact composition, independent per-kind maxima, final live bytes, counts,\n"
		"failed allocations with what was live then, host pinned memory and reserved\n"
		"address space (apart), pools, drops, and whether the trace ended cleanly, was\n"
		"cut or damaged, and how the process ended. When the trace has phases, each\n"
		"peak and failure names the phase occurrence it happened in. Several traces\n"
		"(several processes) are reported in the order given, then grouped by host and\n"
		"physical device: each device's coinciding peak across its processes with each\n"
		"one's share (the sum of their own peaks only as a bound), a skew table of the\n"
		"processes' own peaks, and stray contexts.\n",
	.run = run,
};
