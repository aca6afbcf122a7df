/*
 * gmt_cmd_timeline.c - `phases` and `curves`: one run of the phase engine
 * (engines/gmt_phase_engine.h) per trace over its merged time line; curves adds its
 * series (gmt_curves.h) as the engine's hook. docs/analyzer.md, "phases",
 * "curves".
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands/gmt_commands.h"
#include "engines/gmt_curves.h"
#include "engines/gmt_phase_engine.h"
#include "model/gmt_job_model.h"
#include "render/gmt_render.h"

typedef struct tl_opts {
	int curves;
	/* phases */
	unsigned top, max_listed, max_ck;
	/* curves */
	int csv;
	enum gmt_view view;
	unsigned long long max_rows;
} tl_opts_t;

static void phases_init(void *st)
{
	tl_opts_t *o = st;
	o->top = GMT_PHASES_DEFAULT_TOP;
	o->max_listed = GMT_PHASES_DEFAULT_LISTED;
	o->max_ck = GMT_PHASES_DEFAULT_CK_LISTED;
}

static void curves_init(void *st)
{
	tl_opts_t *o = st;
	phases_init(st);
	o->curves = 1;
	o->view = GMT_VIEW_REQUESTED;
}

static const gmt_cmd_opt_t phases_opts[] = {
	{ "top", "N", "outside allocations listed per device (default 20)\n" },
	{ "max-occurrences", "N", "occurrences listed per name (default 100)\n" },
	{ "max-disagreements", "N", "framework checkpoints that disagree with the rebuilt values,\n"
				    "listed per device (default 20; all are counted)\n" },
	{ NULL, NULL, NULL },
};

static int phases_option(void *st, size_t i, const char *v)
{
	tl_opts_t *o = st;
	unsigned long long x;
	switch (i) {
	case 0:
		if (gmt_cli_number(&gmt_cmd_phases, "--top", v, 1000000, &x))
			return -1;
		o->top = (unsigned)x;
		return 0;
	case 1:
		if (gmt_cli_number(&gmt_cmd_phases, "--max-occurrences", v, 100000000, &x))
			return -1;
		o->max_listed = x ? (unsigned)x : 1;
		return 0;
	default:
		if (gmt_cli_number(&gmt_cmd_phases, "--max-disagreements", v, 1000000, &x))
			return -1;
		o->max_ck = x ? (unsigned)x : 1;
		return 0;
	}
}

static const gmt_cmd_opt_t curves_opts[] = {
	{ "csv", NULL, "CSV (the default)\n" },
	{ "view", "V", "the view of allocated, outside and taken: requested (the\n"
		       "default) or held\n" },
	{ "max-rows", "N", "at most N rows per device; each of N buckets keeps its row with\n"
			   "the most bytes taken\n" },
	{ NULL, NULL, NULL },
};

static int curves_option(void *st, size_t i, const char *v)
{
	tl_opts_t *o = st;
	unsigned long long x;
	switch (i) {
	case 0:
		o->csv = 1;
		return 0;
	case 1:
		if (!strcmp(v, "requested")) {
			o->view = GMT_VIEW_REQUESTED;
		} else if (!strcmp(v, "held")) {
			o->view = GMT_VIEW_HELD;
		} else {
			gmt_cli_error(&gmt_cmd_curves, "--view is requested or held, not '%s'", v);
			return -1;
		}
		return 0;
	default:
		if (gmt_cli_number(&gmt_cmd_curves, "--max-rows", v, 1000000000ull, &x))
			return -1;
		if (!x) {
			gmt_cli_error(&gmt_cmd_curves, "--max-rows needs at least 1");
			return -1;
		}
		o->max_rows = x;
		return 0;
	}
}

static int curves_check(void *st, const gmt_common_t *c)
{
	tl_opts_t *o = st;
	if (o->csv && c->json) {
		gmt_cli_error(&gmt_cmd_curves, "--csv and --json exclude each other");
		return -1;
	}
	return 0;
}

/* The selection (and for curves the columns) the document says it used. */
static void json_head(gmt_json_t *j, const tl_opts_t *o, const gmt_common_t *c)
{
	if (o->curves) {
		static const char *const columns[] = {
			"device", "ts_ns", "time_s", "phase", "allocated_bytes", "reserved_bytes",
			"outside_bytes", "device_used_bytes", "taken_bytes", "live_bytes",
		};
		gmt_json_kv_str(j, "view", gmt_view_name(o->view));
		gmt_json_kv_arr_begin(j, "columns");
		for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
			gmt_json_str(j, columns[i]);
		gmt_json_arr_end(j);
		gmt_json_kv_u64(j, "max_rows", o->max_rows);
	}
	gmt_json_kv_obj_begin(j, "selection");
	gmt_json_kv_bool(j, "all_depths", c->all_depths);
	gmt_json_kv_arr_begin(j, "domains");
	for (size_t i = 0; i < c->n_domains; i++)
		gmt_json_str(j, c->domains[i]);
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "patterns");
	for (size_t i = 0; i < c->n_patterns; i++)
		gmt_json_str(j, c->patterns[i]);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

/* Several traces: the processes grouped by host and physical device
 * (model/gmt_job_model.h, as summary), with each phase occurrence matched
 * across the processes of a shared device. 0, or -ENOMEM / -EIO. */
static int job_phases(const gmt_common_t *c, gmt_out_t *out)
{
	gmt_report_model_t *rm;
	gmt_job_model_t *jm;
	int rc = gmt_cmd_job(c, &rm, &jm);
	if (rc)
		return rc;
	return gmt_cmd_job_finish(out, rm, jm, gmt_job_phases_build(jm));
}

/* Where every row's CSV can go as the rows are made
 * (gmt_curves_csv_stream_direct): 1 a regular file (what a second pass
 * voids is truncated away), 0 /dev/null (keeps nothing), -1 anything else
 * (a pipe or a terminal cannot take text back: the rows wait). */
static int out_keeps(FILE *f)
{
	struct stat a, n;
	if (fstat(fileno(f), &a))
		return -1;
	if (S_ISREG(a.st_mode))
		return 1;
	if (S_ISCHR(a.st_mode) && !stat("/dev/null", &n) && S_ISCHR(n.st_mode) && a.st_rdev == n.st_rdev)
		return 0;
	return -1;
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	const tl_opts_t *o = st;
	int rc = GMT_EXIT_OK;
	gmt_phase_opts_t po = {
		.domains = c->domains, .n_domains = c->n_domains,
		.patterns = c->patterns, .n_patterns = c->n_patterns,
		.all_depths = c->all_depths, .max_listed = o->max_listed,
		.top_n = o->top, .max_ck_listed = o->max_ck,
		.open_only = o->curves,   /* curves names the open phase only */
	};
	if (out->json) {
		json_head(out->json, o, c);
		gmt_json_kv_arr_begin(out->json, "traces");
	} else if (o->curves) {
		gmt_curves_csv_header(out->f);
	}
	const int keeps = o->curves && !out->json && !o->max_rows ? out_keeps(out->f) : -1;
	for (size_t i = 0; i < c->n_files; i++) {
		gmt_decode_result_t res;
		gmt_phases_t *ph = NULL;
		gmt_curves_t *cv = NULL;
		gmt_curves_csv_stream_t *csv = NULL;   /* every row as CSV */
		gmt_phases_hook_t hook;
		int again = 0;           /* a run again with the first time known */
		uint64_t first_ts = 0;
again:
		if (o->curves) {
			cv = gmt_curves_new(o->view, o->max_rows);
			if (cv && !out->json && !o->max_rows) {
				gmt_curves_sink_t sink;
				if ((csv = gmt_curves_csv_stream_new((unsigned)i))) {
					gmt_curves_csv_stream_sink(csv, &sink);
					gmt_curves_set_sink(cv, &sink);
					if (keeps >= 0)
						gmt_curves_csv_stream_direct(csv, out->f, keeps);
					if (again)
						gmt_curves_csv_stream_first(csv, first_ts);
				}
			}
			if (!cv || (!out->json && !o->max_rows && !csv)) {
				fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
				gmt_curves_free(cv);
				rc = GMT_EXIT_USAGE;
				break;
			}
			gmt_curves_hook(cv, &hook);
		}
		gmt_phases_run(c->files[i], &po, o->curves ? &hook : NULL, &ph, &res);
		if (!ph) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			gmt_curves_free(cv);
			gmt_curves_csv_stream_free(csv);
			rc = GMT_EXIT_USAGE;
			break;
		}
		if (csv && !again && gmt_curves_csv_stream_again(csv, ph, &first_ts) == 1) {
			/* rows written with a first time that a LATE event moved
			 * back: taken back, the trace runs again knowing it */
			gmt_curves_free(cv);
			gmt_curves_csv_stream_free(csv);
			gmt_phases_free(ph);
			cv = NULL;
			csv = NULL;
			ph = NULL;
			again = 1;
			goto again;
		}
		out->events += gmt_phases_summary(ph)->events;
		if (cv && gmt_curves_finish(cv) && res.status == GMT_DECODE_OK) {
			res.status = GMT_DECODE_STOPPED;
			snprintf(res.message, sizeof(res.message), "%s: the rows' temporary file failed", c->files[i]);
		}
		int r = gmt_cli_outcome(c->files[i], &res);
		gmt_cli_gaps(c->files[i], &gmt_phases_summary(ph)->gaps);
		if (r > rc)
			rc = r;
		if (o->curves && out->json) {
			gmt_curves_json(out->json, cv, ph);
		} else if (csv) {
			gmt_curves_csv_stream_write(csv, out->f, cv, ph);
		} else if (o->curves) {
			gmt_curves_csv(out->f, cv, ph, (unsigned)i);
		} else if (out->json) {
			gmt_phases_report_json(out->json, ph);
		} else {
			if (i)
				gmt_cli_separator(out->f);
			gmt_phases_report_text(out->f, ph);
		}
		gmt_curves_free(cv);
		gmt_curves_csv_stream_free(csv);
		gmt_phases_free(ph);
	}
	if (out->json)
		gmt_json_arr_end(out->json);
	if (!o->curves && c->n_files > 1 && rc != GMT_EXIT_USAGE) {
		int r = job_phases(c, out);
		if (r) {
			fprintf(stderr, "gpumemtrace-analyze: phases: grouping the processes: %s\n", strerror(-r));
			rc = GMT_EXIT_USAGE;
		}
	}
	return rc;
}

const gmt_cmd_t gmt_cmd_phases = {
	.name = "phases",
	.operands = "TRACE...",
	.help = "Per phase occurrence (cold: the first; warm: the later ones, also aggregated)\n"
		"and device: allocated, reserved, outside the framework, device used at start\n"
		"and end; the maximum allocated, reserved, taken and gap with the other values\n"
		"AT THAT SAME INSTANT; bounds from independent maxima (labelled: no real\n"
		"moment); failed phases; the driver allocations outside the framework. Both\n"
		"views: requested, held. Several traces: also grouped by host and physical\n"
		"device, as summary does, with each phase occurrence matched across the\n"
		"processes of a shared device (their coinciding peak in it, each one's share).\n",
	.opts = phases_opts,
	.state_size = sizeof(tl_opts_t),
	.init = phases_init,
	.option = phases_option,
	.run = run,
};

const gmt_cmd_t gmt_cmd_curves = {
	.name = "curves",
	.operands = "TRACE...",
	.help = "Time series per device (time, phase, allocated, reserved, outside, device\n"
		"used, taken, held by live allocations), one row per instant a value\n"
		"changes; CSV, or JSON with --json.\n",
	.opts = curves_opts,
	.state_size = sizeof(tl_opts_t),
	.init = curves_init,
	.option = curves_option,
	.check = curves_check,
	.run = run,
};
