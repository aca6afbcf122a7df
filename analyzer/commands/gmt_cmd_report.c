/*
 * gmt_cmd_report.c - `report`: one HTML page that opens offline for the
 * traces given, per physical device (docs/analyzer.md "report",
 * docs/report-page.md): the report model (model/gmt_report_model.h) of
 * all the traces, rendered by render/gmt_report_html.c, or with --json by
 * render/gmt_report_json.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands/gmt_commands.h"
#include "model/gmt_report_model.h"
#include "render/gmt_render.h"

typedef struct report_opts {
	unsigned long long buckets;
	int temp_max_set;
	unsigned long long temp_max;
} report_opts_t;

static const gmt_cmd_opt_t opts[] = {
	{ "buckets", "N", "the finest zoom level's buckets per device (default: 65536 shared by\n"
			  "the devices, 4096 to 32768 each)\n" },
	{ "temp-max", "BYTES", GMT_CMD_TEMP_MAX_HELP },
	{ NULL, NULL, NULL },
};

static int option(void *st, size_t i, const char *value)
{
	report_opts_t *o = st;
	if (i == 1) {
		o->temp_max_set = 1;
		return gmt_cmd_temp_max(&gmt_cmd_report, value, &o->temp_max);
	}
	if (gmt_cli_number(&gmt_cmd_report, "--buckets", value, 1u << 24, &o->buckets))
		return -1;
	if (!o->buckets) {
		gmt_cli_error(&gmt_cmd_report, "--buckets needs at least 1");
		return -1;
	}
	return 0;
}

/* The model of c's traces, or NULL (said on stderr); *rc the worst outcome. */
int gmt_cmd_temp_max(const gmt_cmd_t *cmd, const char *value, unsigned long long *out)
{
	return gmt_cli_number(cmd, "--temp-max", value, 1ull << 50, out) ? -1 : 0;
}

void gmt_cmd_same_notes(const gmt_report_model_t *m)
{
	for (size_t i = 0; i < m->n_traces; i++) {
		const gmt_rm_trace_t *t = &m->traces[i];
		if (!t->same_as)
			continue;
		const gmt_rm_trace_t *a = &m->traces[t->same_as - 1];
		fprintf(stderr, "gpumemtrace-analyze: %s (trace %zu) records the same process as %s (trace %zu: "
			"pid %" PRIu64 ", the same header): counted once, in that trace\n",
			t->file, i + 1, a->file, t->same_as, a->s->pid);
	}
}

gmt_report_model_t *gmt_cmd_report_model(const gmt_cmd_t *cmd, const gmt_common_t *c, gmt_out_t *out,
					 int *rc, const unsigned long long *temp_max)
{
	gmt_report_opts_t ro = {
		.domains = c->domains, .n_domains = c->n_domains,
		.patterns = c->patterns, .n_patterns = c->n_patterns,
		.all_depths = c->all_depths,
		/* the page's sites at the peak (not in --json: the JSON of
		   `sites` has them, symbolised the same) */
		.sites = cmd == &gmt_cmd_report && !c->json, .sites_top = 20,
		.symbols = c->symbols, .debug_dirs = c->debug_dirs, .n_debug_dirs = c->n_debug_dirs,
		.temp_max_set = temp_max != NULL, .temp_max = temp_max ? *temp_max : 0,
	};
	gmt_report_model_t *m = gmt_report_model_new(&ro);
	*rc = GMT_EXIT_OK;
	if (!m) {
		gmt_cli_error(cmd, "out of memory");
		*rc = GMT_EXIT_USAGE;
		return NULL;
	}
	for (size_t i = 0; i < c->n_files; i++) {
		int r = gmt_report_model_add(m, c->files[i]);
		if (r < 0) {
			gmt_cli_error(cmd, "%s: %s", c->files[i], strerror(-r));
			gmt_report_model_free(m);
			*rc = GMT_EXIT_USAGE;
			return NULL;
		}
		int t = gmt_cli_outcome(c->files[i], &m->traces[i].res);
		*rc = t > *rc ? t : *rc;
	}
	int r = gmt_report_model_finish(m);
	if (r) {
		gmt_cli_error(cmd, "%s", strerror(-r));
		gmt_report_model_free(m);
		*rc = GMT_EXIT_USAGE;
		return NULL;
	}
	for (size_t i = 0; i < c->n_files && i < m->n_traces; i++)
		if (m->traces[i].s)
			gmt_cli_gaps(c->files[i], &m->traces[i].s->gaps);
	gmt_cmd_same_notes(m);
	out->events += m->events;
	if (c->stats)
		fprintf(stderr, "gpumemtrace-analyze stats: temporary_file_bytes=%" PRIu64
			" uncompressed=%" PRIu64 "\n", m->spool_bytes, m->spool_raw_bytes);
	return m;
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	const report_opts_t *o = st;
	int rc;
	gmt_report_model_t *m = gmt_cmd_report_model(&gmt_cmd_report, c, out, &rc,
						     o->temp_max_set ? &o->temp_max : NULL);
	if (!m)
		return rc;
	if (out->json) {
		gmt_report_model_json(out->json, m);
	} else {
		int r = gmt_report_html(out->f, m, (size_t)o->buckets);
		if (r) {
			gmt_cli_error(&gmt_cmd_report, "%s", strerror(-r));
			rc = GMT_EXIT_USAGE;
		}
	}
	gmt_report_model_free(m);
	return rc;
}

const gmt_cmd_t gmt_cmd_report = {
	.name = "report",
	.operands = "TRACE...",
	.help = "One HTML page that opens offline: per physical device (all the processes\n"
		"given that used it), the memory over time stacked (allocated, by a framework\n"
		"or the driver's stream-ordered allocations, its label naming which; the\n"
		"reserve beyond it; outside the framework by owner; the rest of device used),\n"
		"phases, synchronisations, the peak and failed allocations marked, zoomable,\n"
		"and the tables under it. --json: the same report as JSON.\n",
	.opts = opts,
	.state_size = sizeof(report_opts_t),
	.option = option,
	.run = run,
};
