/*
 * gmt_cmd_summary.c - `summary`: per trace, the replay (gmt_replay.h) and
 * its report as text or JSON (render/gmt_summary_render.c). docs/analyzer.md, "summary".
 */
#include <stdio.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "engines/gmt_replay.h"
#include "render/gmt_render.h"

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
		if (out->json) {
			gmt_report_json(out->json, s);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_report_text(out->f, s);
		}
		gmt_replay_free(r);
	}
	if (out->json)
		gmt_json_arr_end(out->json);
	return rc;
}

const gmt_cmd_t gmt_cmd_summary = {
	.name = "summary",
	.operands = "TRACE...",
	.help = "Per process and device: the peak of device bytes held with its instant and\n"
		"exact composition, independent per-kind maxima, final live bytes, counts,\n"
		"failed allocations with what was live then, host pinned memory and reserved\n"
		"address space (apart), pools, drops, and whether the trace ended cleanly, was\n"
		"cut or damaged. Several traces (several processes) are reported in the order\n"
		"given.\n",
	.run = run,
};
