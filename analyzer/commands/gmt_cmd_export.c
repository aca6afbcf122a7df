/*
 * gmt_cmd_export.c - `export --format chrome|memory-viz`: the traces in
 * another viewer's format (docs/exports.md). chrome: the report model of
 * all the traces (gmt_cmd_report_model, per physical device) rendered by
 * render/gmt_report_chrome.c within an event budget; memory-viz: one
 * trace's memory-viz model (model/gmt_memviz_model.h) rendered by
 * render/gmt_memviz_render.c as a pickle or JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "gmt_memviz.h"
#include "model/gmt_memviz_model.h"
#include "model/gmt_report_model.h"
#include "render/gmt_render.h"

typedef struct export_opts {
	const char *format;
	unsigned long long max_events;
	int encoding;   /* memory-viz: GMT_MEMVIZ_JSON or the pickle protocol */
	int temp_max_set;
	unsigned long long temp_max;
} export_opts_t;

static const gmt_cmd_opt_t opts[] = {
	{ "format", "F", "chrome (the default: Chrome trace event JSON, for Perfetto's UI and\n"
			 "chrome://tracing; with --json inside the command's document) or\n"
			 "memory-viz (PyTorch's memory viewer snapshot; one trace)\n" },
	{ "encoding", "E", "memory-viz: pickle (protocol 4, the default), pickle2, or json\n" },
	{ "max-events", "N", "chrome: counter events in all, at most (default 1000000), shared by\n"
			     "the devices; beyond, each device's counters keep every lowest, highest\n"
			     "and last value per time bucket (the file says so)\n" },
	{ "temp-max", "BYTES", "chrome: " GMT_CMD_TEMP_MAX_HELP },
	{ NULL, NULL, NULL },
};

static void init(void *st)
{
	export_opts_t *o = st;
	o->format = "chrome";
	o->max_events = 1000000;
	o->encoding = 4;
}

static int option(void *st, size_t i, const char *value)
{
	export_opts_t *o = st;
	if (i == 0) {
		if (strcmp(value, "chrome") && strcmp(value, "memory-viz")) {
			gmt_cli_error(&gmt_cmd_export, "--format: chrome or memory-viz");
			return -1;
		}
		o->format = value;
		return 0;
	}
	if (i == 1) {
		if (!strcmp(value, "pickle"))
			o->encoding = 4;
		else if (!strcmp(value, "pickle2"))
			o->encoding = 2;
		else if (!strcmp(value, "json"))
			o->encoding = GMT_MEMVIZ_JSON;
		else {
			gmt_cli_error(&gmt_cmd_export, "--encoding: pickle, pickle2 or json");
			return -1;
		}
		return 0;
	}
	if (i == 3) {
		o->temp_max_set = 1;
		return gmt_cmd_temp_max(&gmt_cmd_export, value, &o->temp_max);
	}
	if (gmt_cli_number(&gmt_cmd_export, "--max-events", value, 1ull << 40, &o->max_events))
		return -1;
	if (!o->max_events) {
		gmt_cli_error(&gmt_cmd_export, "--max-events needs at least 1");
		return -1;
	}
	return 0;
}

static int check(void *st, const gmt_common_t *c)
{
	const export_opts_t *o = st;
	if (!strcmp(o->format, "memory-viz") && c->n_files != 1) {
		gmt_cli_error(&gmt_cmd_export, "--format memory-viz takes one trace (one process's allocator)");
		return -1;
	}
	if (!strcmp(o->format, "memory-viz") && c->json) {
		gmt_cli_error(&gmt_cmd_export, "--format memory-viz: --encoding json, not --json");
		return -1;
	}
	return 0;
}

static int memviz(const export_opts_t *x, const gmt_common_t *c, gmt_out_t *out)
{
	gmt_memviz_model_t *m = gmt_memviz_model_build(c->files[0], c->debug_dirs, c->n_debug_dirs, c->symbols);
	if (!m) {
		gmt_cli_error(&gmt_cmd_export, "%s: %s", c->files[0], strerror(errno));
		return GMT_EXIT_USAGE;
	}
	int rc = gmt_cli_outcome(c->files[0], &m->res);
	gmt_cli_gaps(c->files[0], &m->s->gaps);
	out->events += m->s->events;  /* the main stream, as every command's --stats */
	int r = gmt_memviz_model_write(out->f, m, x->encoding);
	if (r) {
		gmt_cli_error(&gmt_cmd_export, "%s", strerror(-r));
		rc = GMT_EXIT_USAGE;
	}
	if (m->outside_left_out)
		fprintf(stderr, "gpumemtrace-analyze: export: %" PRIu64 " of %" PRIu64
			" allocations outside the framework left out (more than %u)\n",
			m->outside_left_out, m->outside_allocations, GMT_MV_MAX_OUTSIDE);
	gmt_memviz_model_free(m);
	return rc;
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	const export_opts_t *x = st;
	if (!strcmp(x->format, "memory-viz"))
		return memviz(x, c, out);
	int rc;
	gmt_report_model_t *m = gmt_cmd_report_model(&gmt_cmd_export, c, out, &rc,
						     x->temp_max_set ? &x->temp_max : NULL);
	if (!m)
		return rc;
	int r = gmt_report_chrome(out->f, out->json, m, (size_t)x->max_events);
	if (r) {
		gmt_cli_error(&gmt_cmd_export, "%s", strerror(-r));
		rc = GMT_EXIT_USAGE;
	}
	gmt_report_model_free(m);
	return rc;
}

const gmt_cmd_t gmt_cmd_export = {
	.name = "export",
	.operands = "TRACE...",
	.help = "The traces in another viewer's format. --format chrome: Chrome trace event\n"
		"JSON (Perfetto's UI, chrome://tracing): per physical device its counters in\n"
		"bytes (taken, allocated, reserved, outside by owner, device used), per\n"
		"process its phase occurrences as slices and its failed allocations.\n"
		"--format memory-viz: one trace as the snapshot PyTorch's memory viewer\n"
		"reads (the framework's segments and blocks, and the driver allocations\n"
		"outside it as segments of their own, labelled by owner).\n",
	.opts = opts,
	.state_size = sizeof(export_opts_t),
	.init = init,
	.option = option,
	.check = check,
	.run = run,
};
