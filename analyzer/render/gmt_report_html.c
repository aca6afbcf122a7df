/*
 * gmt_report_html.c - the `report` command's page (docs/report-page.md)
 * from the report model (model/gmt_report_model.h): per physical device a
 * section with its chart and tables, then per trace what it could not see
 * and its environment, as HTML (the body); the model's merged instants,
 * phase occurrences, synchronisations, peak and failures as the page's data
 * (export/gmt_pagedata.c puts the instants into its zoom levels); the shell
 * and the assets by web/gmt_web.c. Every number is the model's, formatted.
 *
 * Ids (the chart's links and the tests' handles): a device's section is its
 * model id (d0, ...), its peak row ID-peak, a phase occurrence's row
 * ID-mM-phase-N-K (member M, the name's index N in `phases`' list,
 * occurrence K), a failure's ID-fail-J (the device's J-th), a process's row
 * ID-mM; a trace's section tI.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_buckets.h"
#include "gmt_pagedata.h"
#include "gmt_web.h"
#include "model/gmt_report_model.h"
#include "model/gmt_sites_model.h"
#include "render/gmt_render.h"

/* docs/report-page.md, "Styles" */
static const int series_style[GMT_RM_SERIES] = { 0, 1, 2, 3, 4, 5, 7, 8, 9 };

/* "N B (X MiB)": a narrow table may wrap it before the parenthesis only */
static void td_bytes(FILE *f, uint64_t b)
{
	char buf[64];
	gmt_fmt_bytes(buf, sizeof(buf), b);
	fprintf(f, "<td class=\"bytes\" data-bytes=\"%" PRIu64 "\">", b);
	for (const char *c = buf; *c; c++)
		if (*c == ' ' && c[1] != '(')
			fputs("&nbsp;", f);
		else
			fputc(*c, f);
	fputs("</td>", f);
}

static void td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	gmt_web_text(f, s ? s : "");
	fputs("</td>", f);
}

static void td_count(FILE *f, uint64_t n)
{
	fprintf(f, "<td class=\"num\" data-count=\"%" PRIu64 "\">%" PRIu64 "</td>", n, n);
}

static void td_seconds(FILE *f, uint64_t ts, uint64_t t0)
{
	uint64_t d = ts >= t0 ? ts - t0 : 0;
	fprintf(f, "<td class=\"num\" data-ns=\"%" PRIu64 "\">%" PRIu64 ".%09" PRIu64 " s</td>", d,
		d / 1000000000u, d % 1000000000u);
}

static const gmt_summary_t *msum(const gmt_report_model_t *m, const gmt_rm_device_t *d, size_t k)
{
	return m->traces[d->members[k].trace].s;
}

/* The executable's path (else the trace's). */
static const char *process_path(const gmt_report_model_t *m, size_t trace)
{
	const gmt_rm_trace_t *t = &m->traces[trace];
	return t->s->exe && *t->s->exe ? t->s->exe : t->file;
}

/* "python3 (pid 1234)": the path's last name (the whole path is in the
   links' title and the trace's environment table) */
static void process_name(FILE *f, const gmt_report_model_t *m, size_t trace)
{
	const char *path = process_path(m, trace), *base = strrchr(path, '/');
	gmt_web_text(f, base && base[1] ? base + 1 : path);
	fprintf(f, " (pid %" PRIu64 ")", m->traces[trace].s->pid);
}

/* A link to the trace's section, titled with the whole path. */
static void process_link(FILE *f, const gmt_report_model_t *m, size_t trace)
{
	fprintf(f, "<a href=\"#t%zu\" title=\"", trace);
	gmt_web_text(f, process_path(m, trace));
	fputs("\">", f);
	process_name(f, m, trace);
	fputs("</a>", f);
}

static void td_process(FILE *f, const gmt_report_model_t *m, size_t trace)
{
	fputs("<td class=\"process\">", f);
	process_link(f, m, trace);
	fputs("</td>", f);
}

static void peak_table(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	fputs("<h3>Peak taken from the device</h3>\n", f);
	if (!d->has_peak) {
		fputs("<p class=\"note\">Nothing was taken from this device.</p>\n", f);
		return;
	}
	const gmt_rm_instant_t *p = &d->peak;
	fputs("<table class=\"peak\"><thead><tr><th>part</th><th>bytes</th></tr></thead><tbody>\n", f);
	fprintf(f, "<tr id=\"%s-peak\"><th>taken by ", d->id);
	fputs(d->n_members > 1 ? "all its processes together" : "the process", f);
	fprintf(f, " (the first instant of the highest, at %" PRIu64 ".%09" PRIu64 " s)</th>",
		(p->ts - d->t0) / 1000000000u, (p->ts - d->t0) % 1000000000u);
	td_bytes(f, p->held);
	fputs("</tr>\n", f);
	for (unsigned s = 0; s < GMT_RM_STACKED; s++) {
		if (s == GMT_RM_REST)
			continue;
		fprintf(f, "<tr data-key=\"%s\"><td>", gmt_rm_series_key(s));
		gmt_web_text(f, gmt_rm_series_label_of(d, s));
		fputs("</td>", f);
		if (p->known[s])
			td_bytes(f, p->v[s]);
		else
			td_text(f, "n/a");
		fputs("</tr>\n", f);
	}
	if (d->n_members > 1)
		for (size_t k = 0; k < d->n_members; k++) {
			fprintf(f, "<tr data-key=\"member.%zu\"><td>taken by ", k);
			process_name(f, m, d->members[k].trace);
			fputs("</td>", f);
			td_bytes(f, d->members[k].at_peak);
			fputs("</tr>\n", f);
		}
	if (p->known[GMT_RM_USED]) {
		fputs("<tr data-key=\"device_used\"><td>device used then (the latest cuMemGetInfo sample)</td>", f);
		td_bytes(f, p->v[GMT_RM_USED]);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p class=\"note\">Held: each process's framework reserved (else "
	      "allocated) plus its driver-level bytes outside the framework, at one instant; the "
	      "stack's parts add up to it. The rest of device used above it is an estimate.</p>\n", f);
}

static void processes_table(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	fprintf(f, "<h3>Processes on this device</h3>\n<table class=\"processes\"><thead><tr><th>process</th>"
		"<th>ordinal</th><th>own peak taken</th><th>at</th><th>taken at the device's peak</th>"
		"<th>driver-level peak (summary)</th><th>failed allocations</th><th>synchronisations</th>"
		"</tr></thead><tbody>\n");
	for (size_t k = 0; k < d->n_members; k++) {
		const gmt_rm_member_t *mb = &d->members[k];
		size_t nf = 0;
		for (size_t j = 0; j < d->n_fails; j++)
			nf += d->fails[j].member == k;
		fprintf(f, "<tr id=\"%s-m%zu\">", d->id, k);
		td_process(f, m, mb->trace);
		fprintf(f, "<td class=\"num\">%d</td>", mb->ordinal);
		td_bytes(f, mb->own_peak);
		if (mb->own_peak)
			td_seconds(f, mb->own_peak_ts, d->t0);
		else
			td_text(f, "");
		td_bytes(f, mb->at_peak);
		td_bytes(f, mb->dev ? mb->dev->peak.total : 0);
		td_count(f, nf);
		td_count(f, mb->syncs);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (d->n_members > 1) {
		fputs("<p class=\"note\">The sum of each process's own peak taken, ", f);
		fprintf(f, "<span class=\"bytes\" id=\"%s-bound\" data-bytes=\"%" PRIu64 "\">", d->id, d->own_peak_sum);
		char buf[64];
		fputs(gmt_fmt_bytes(buf, sizeof(buf), d->own_peak_sum), f);
		fputs("</span>, is a bound: it happened at no instant unless the peaks coincide.</p>\n", f);
	}
	fputs("<p class=\"note\">The driver-level peak is <code>summary</code>'s: every driver "
	      "allocation live at once (framework segments included, pending ones too), counted in file "
	      "order.</p>\n", f);
}

/* Each process's call sites at the device's coinciding peak (the live set
   after the process's event of that instant, listed as `sites` lists). */
static void sites_table(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	int any = 0;
	for (size_t k = 0; k < d->n_members; k++)
		any |= m->traces[d->members[k].trace].sites != NULL;
	if (!any)
		return;
	fputs("<h3>Call sites at the peak</h3>\n<table class=\"sites\"><thead><tr><th>process</th><th>#</th>"
	      "<th>live bytes</th><th>blocks</th><th>share of its live bytes then</th><th>owner</th>"
	      "<th>call stack (innermost first)</th></tr></thead><tbody>\n", f);
	size_t rows = 0;
	for (size_t k = 0; k < d->n_members; k++) {
		const gmt_sites_model_t *sm = m->traces[d->members[k].trace].sites;
		size_t a = d->members[k].site_at;
		const gmt_sites_dev_t *sd = sm && a < sm->n_ats ? &sm->ats[a] : NULL;
		if (!sd)
			continue;
		fprintf(f, "<tr id=\"%s-m%zu-live\" class=\"total\">", d->id, k);
		td_process(f, m, d->members[k].trace);
		td_text(f, "all");
		td_bytes(f, sd->peak);
		uint64_t blocks = 0;
		for (size_t j = 0; j < sd->live.n; j++)
			blocks += sd->live.sites[j].count;
		td_count(f, blocks);
		fputs("<td colspan=\"3\">every driver-level allocation of the process live on this device "
		      "then</td></tr>\n", f);
		for (size_t j = 0; j < sd->live.n_listed; j++) {
			const gmt_site_t *x = &sd->live.sites[j];
			fprintf(f, "<tr id=\"%s-m%zu-site-%zu\">", d->id, k, j);
			td_process(f, m, d->members[k].trace);
			fprintf(f, "<td class=\"num\">%zu</td>", j + 1);
			td_bytes(f, x->bytes);
			td_count(f, x->count);
			char pct[32];
			if (x->has_share)
				snprintf(pct, sizeof(pct), "%.2f%%", x->percent);
			else
				snprintf(pct, sizeof(pct), "n/a");
			td_text(f, pct);
			td_text(f, x->owner_key);
			fputs("<td class=\"stack\">", f);
			for (size_t i = 0; x->st && i < x->st->n; i++) {
				if (i)
					fputs("<br>", f);
				const gmt_frame_t *fr = &x->st->frames[i];
				gmt_web_text(f, fr->name ? fr->name : "?");
				if (fr->file_base && fr->line)
					fprintf(f, " (%s:%u)", fr->file_base, fr->line);
			}
			if (!x->st || !x->st->n)
				fputs("(no stack recorded)", f);
			fputs("</td></tr>\n", f);
			rows++;
		}
		if (sd->live.more)
			fprintf(f, "<tr><td colspan=\"7\">%zu more sites not listed</td></tr>\n",
				sd->live.n - sd->live.n_listed);
		(void)sm;
	}
	if (!rows)
		fputs("<tr><td colspan=\"7\">no call site held bytes</td></tr>\n", f);
	fputs("</tbody></table>\n<p class=\"note\">The driver-level allocations of each process live "
	      "on this device at the coinciding peak taken above (after the process's last event of that "
	      "instant), grouped by call site as <code>gpumemtrace-analyze sites</code> groups them; "
	      "<code>sites</code> itself lists them at each process's own driver-level peak.</p>\n", f);
}

static void phases_table(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	fputs("<h3>Phases</h3>\n", f);
	if (!d->n_phases) {
		fputs("<p class=\"note\">No phase on this device.</p>\n", f);
		return;
	}
	fputs("<table class=\"phases\"><thead><tr><th>process</th><th>phase</th><th>occurrence</th>"
	      "<th>begin</th><th>end</th><th>max allocated</th><th>max reserved</th>"
	      "<th>max taken (reserved + outside)</th><th>max outside</th><th>status</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < d->n_phases; i++) {
		const gmt_rm_phase_t *p = &d->phases[i];
		fprintf(f, "<tr id=\"%s-m%zu-phase-%zu-%" PRIu64 "\">", d->id, p->member, p->name_index, p->k);
		td_process(f, m, d->members[p->member].trace);
		td_text(f, p->name ? p->name : "?");
		fprintf(f, "<td class=\"num\">%" PRIu64 " (%s)</td>", p->k, p->k == 1 ? "cold" : "warm");
		td_seconds(f, p->begin_ts, d->t0);
		td_seconds(f, p->end_ts, d->t0);
		if (p->has_allocated)
			td_bytes(f, p->max_allocated);
		else
			td_text(f, "n/a");
		if (p->has_reserved)
			td_bytes(f, p->max_reserved);
		else
			td_text(f, "n/a");
		td_bytes(f, p->max_held);
		td_bytes(f, p->max_outside);
		td_text(f, p->failed ? "failed (out of memory)" : p->ended ? "ended" : "not ended");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p class=\"note\">Each maximum is one instant's value (requested view), "
	      "as <code>gpumemtrace-analyze phases</code> gives them.</p>\n", f);
}

static void fails_table(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	fputs("<h3>Failed allocations</h3>\n", f);
	if (!d->n_fails) {
		fputs("<p class=\"note\">None.</p>\n", f);
		return;
	}
	fputs("<table class=\"failures\"><thead><tr><th>time</th><th>process</th><th>requested</th>"
	      "<th>kind</th><th>API</th><th>owner</th><th>result</th><th>driver-level bytes live then</th>"
	      "<th>free bytes at the latest sample</th></tr></thead><tbody>\n", f);
	for (size_t j = 0; j < d->n_fails; j++) {
		const gmt_rm_fail_t *x = &d->fails[j];
		const gmt_fail_summary_t *fs = x->f;
		fprintf(f, "<tr id=\"%s-fail-%zu\">", d->id, j);
		td_seconds(f, fs->ts, d->t0);
		td_process(f, m, d->members[x->member].trace);
		td_bytes(f, fs->size);
		td_text(f, gmt_dkind_key(fs->kind));
		td_text(f, gmt_api_name(fs->api));
		td_text(f, gmt_downer_key(gmt_downer(fs->owner)));
		char res[96];
		snprintf(res, sizeof(res), "%u %s", fs->result, x->result_name ? x->result_name : "");
		td_text(f, res);
		td_bytes(f, fs->live.total);
		if (fs->has_meminfo)
			td_bytes(f, fs->meminfo_free);
		else
			td_text(f, "n/a");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void device_section(FILE *f, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	fprintf(f, "<section class=\"device\" id=\"%s\"><h2>Device %d: ", d->id, d->ordinal);
	gmt_web_text(f, *d->name ? d->name : "(no device record)");
	fputs(" on ", f);
	gmt_web_text(f, *d->host ? d->host : "?");
	fputs("</h2>\n<p class=\"meta\">", f);
	if (d->uuid_known) {
		fputs("UUID ", f);
		for (int i = 0; i < 16; i++)
			fprintf(f, "%02x%s", d->uuid[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	} else {
		fputs("no UUID recorded: processes are taken to share it by host, ordinal and name", f);
	}
	if (d->total_bytes) {
		char buf[64];
		fprintf(f, "; capacity <span class=\"bytes\" data-bytes=\"%" PRIu64 "\">%s</span>", d->total_bytes,
			gmt_fmt_bytes(buf, sizeof(buf), d->total_bytes));
	}
	fprintf(f, "; %zu process%s.</p>\n", d->n_members, d->n_members == 1 ? "" : "es");
	fprintf(f, "<figure class=\"chart\" data-device=\"%s\"><noscript><p>The chart needs JavaScript; "
		"every number is in the tables below.</p></noscript></figure>\n", d->id);
	peak_table(f, m, d);
	processes_table(f, m, d);
	sites_table(f, m, d);
	phases_table(f, m, d);
	fails_table(f, m, d);
	fputs("</section>\n", f);
}

static void row_count(FILE *f, const char *key, const char *what, uint64_t n)
{
	fputs("<tr data-key=\"", f);
	gmt_web_text(f, key);
	fputs("\"><th>", f);
	gmt_web_text(f, what);
	fputs("</th>", f);
	td_count(f, n);
	fputs("</tr>\n", f);
}

static void trace_section(FILE *f, const gmt_report_model_t *m, size_t i)
{
	const gmt_rm_trace_t *t = &m->traces[i];
	const gmt_summary_t *s = t->s;
	fprintf(f, "<section class=\"trace\" id=\"t%zu\"><h2>Process ", i);
	process_name(f, m, i);
	fputs("</h2>\n<p class=\"meta path\">trace ", f);
	gmt_web_text(f, t->file);
	fputs("</p>\n<h3>What this trace could not see</h3>\n<table class=\"limits\"><tbody>\n<tr><th>status</th>", f);
	char st[700];
	if (!strcmp(t->status_key, "clean"))
		snprintf(st, sizeof(st), "ended cleanly%s%s", s->has_end && s->end.how && *s->end.how ? ": " : "",
			 s->has_end && s->end.how ? s->end.how : "");
	else if (!strcmp(t->status_key, "cut"))
		snprintf(st, sizeof(st), "cut: no end record (the process was killed or is still running); "
			 "what it did after the last frame is missing");
	else
		snprintf(st, sizeof(st), "%s: %s", t->status_key, t->res.message);
	if (s->missing && (!strcmp(t->status_key, "clean") || !strcmp(t->status_key, "cut") ||
			   !strcmp(t->status_key, "damaged"))) {
		size_t n = strlen(st);
		n += (size_t)snprintf(st + n, sizeof(st) - n, "%s %" PRIu64 " events are missing (dropped by the tracer)",
				      !strcmp(t->status_key, "clean") ? ", but" : "; and", s->missing);
		if (s->missing_timed && n < sizeof(st)) {
			uint64_t a = s->missing_first_ts >= s->first_ts ? s->missing_first_ts - s->first_ts : 0;
			uint64_t b = s->missing_last_ts >= s->first_ts ? s->missing_last_ts - s->first_ts : 0;
			n += (size_t)snprintf(st + n, sizeof(st) - n, " from +%.3f s to +%.3f s after the first event",
					      (double)a / 1e9, (double)b / 1e9);
		}
		if (n < sizeof(st))
			snprintf(st + n, sizeof(st) - n, ": the numbers on this page from that time on may be off either way (a lost allocation makes them low, a lost free high)");
	}
	fprintf(f, "<td data-status=\"%s\">", t->status_key);
	gmt_web_text(f, st);
	fputs("</td></tr>\n", f);
	/* the drops caveat (the same numbers as "missing_events" of report
	 * --json and the stderr line): data-ts = CLOCK_MONOTONIC ns */
	fprintf(f, "<tr data-key=\"missing_events\" id=\"t%zu-missing\"><th>events missing (results from "
		"their time on may be off either way)</th>", i);
	td_count(f, s->missing);
	if (s->missing_timed) {
		for (int k = 0; k < 2; k++) {
			uint64_t ts = k ? s->missing_last_ts : s->missing_first_ts;
			uint64_t d = ts >= s->first_ts ? ts - s->first_ts : 0;
			fprintf(f, "<td class=\"num\" data-ts=\"%" PRIu64 "\">%s+%" PRIu64 ".%09" PRIu64 " s</td>", ts,
				k ? "to " : "from ", d / 1000000000u, d % 1000000000u);
		}
	} else {
		fprintf(f, "<td>%s</td>", s->missing ? "when is not recorded (at the end)" : "none");
	}
	fputs("</tr>\n", f);
	row_count(f, "dropped_events", "events dropped (buffer full, write errors)", s->drops_total);
	for (size_t k = 0; k < s->n_drops; k++) {
		char what[128];
		snprintf(what, sizeof(what), "  dropped: %s", s->drops[k].reason);
		char key[128];
		snprintf(key, sizeof(key), "drop.%s", s->drops[k].reason);
		row_count(f, key, what, s->drops[k].count);
	}
	row_count(f, "late_events", "late events (written after their time)", s->late_events);
	row_count(f, "entry_points_untraced", "entry points handed out untraced (cuGetProcAddress of a newer ABI)",
		  t->entry_points_untraced);
	row_count(f, "unmatched_frees", "frees of addresses the trace never saw allocated", s->anom.unmatched_frees);
	row_count(f, "devices_left_out", "devices left out (ordinal 64 or more)", t->devices_left_out);
	fputs("<tr><th>outside the trace</th><td>the CUDA context, other processes and memory the driver "
	      "keeps appear only in cuMemGetInfo samples (the rest of device used, an estimate)</td></tr>\n"
	      "</tbody></table>\n", f);

	fputs("<h3>Environment</h3>\n<table class=\"env\"><tbody>\n<tr><th>command</th><td class=\"path\"><code>", f);
	for (size_t k = 0; k < s->n_cmdline; k++) {
		if (k)
			fputc(' ', f);
		gmt_web_text(f, s->cmdline[k]);
	}
	fputs("</code></td></tr>\n", f);
	fprintf(f, "<tr><th>pid</th><td class=\"num\">%" PRIu64 "</td></tr>\n", s->pid);
	fprintf(f, "<tr><th>parent pid</th><td class=\"num\">%" PRIu64 "</td></tr>\n", s->ppid);
	fputs("<tr><th>host</th>", f);
	td_text(f, s->host);
	fputs("</tr>\n<tr><th>executable</th><td class=\"path\">", f);
	gmt_web_text(f, s->exe ? s->exe : "");
	fputs("</td>", f);
	fputs("</tr>\n<tr><th>traced by</th>", f);
	td_text(f, s->tool_version);
	fprintf(f, "</tr>\n<tr><th>trace format</th><td>%u.%u</td></tr>\n", s->format_major, s->format_minor);
	if (s->has_header && s->have_ts) {
		char buf[64];
		fputs("<tr><th>first event (UTC)</th>", f);
		td_text(f, gmt_fmt_utc(buf, sizeof(buf), s->first_ts + (s->clock_realtime_ns - s->clock_monotonic_ns)));
		fputs("</tr>\n", f);
	}
	for (size_t k = 0; k < s->n_env; k++) {
		fputs("<tr><th>", f);
		gmt_web_text(f, s->env_keys[k]);
		fputs("</th>", f);
		td_text(f, s->env_values[k]);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n</section>\n", f);
}

typedef struct page {
	const gmt_report_model_t *m;
	size_t buckets;
} page_t;

static int body(FILE *f, void *arg)
{
	const gmt_report_model_t *m = ((const page_t *)arg)->m;
	fputs("<header><h1>gpumemtrace report</h1><p class=\"meta\">Device memory over time, per physical "
	      "device and all the processes that used it, every number in bytes (binary units: KiB = "
	      "2^10 B, MiB = 2^20 B, GiB = 2^30 B).</p>\n<ul class=\"traces\">\n", f);
	for (size_t i = 0; i < m->n_traces; i++) {
		fputs("<li>", f);
		process_link(f, m, i);
		fputs(": ", f);
		gmt_web_text(f, m->traces[i].file);
		fprintf(f, " (%s)</li>\n", m->traces[i].status_key);
	}
	fputs("</ul></header>\n", f);
	if (!m->n_devices)
		fputs("<p class=\"note\">No device was used in these traces.</p>\n", f);
	for (size_t i = 0; i < m->n_devices; i++)
		device_section(f, m, &m->devices[i]);
	for (size_t i = 0; i < m->n_traces; i++)
		trace_section(f, m, i);
	return ferror(f) ? -EIO : 0;
}

/* ---- the data ---- */

typedef struct feed {
	gmt_page_dev_t *pd;
	const gmt_rm_device_t *d;
	unsigned map[GMT_RM_SERIES], n;
	int rc;
} feed_t;

static int feed_instant(void *ctx, const gmt_rm_instant_t *in)
{
	feed_t *x = ctx;
	uint64_t v[GMT_RM_SERIES];
	uint8_t k[GMT_RM_SERIES];
	for (unsigned j = 0; j < x->n; j++) {
		v[j] = in->v[x->map[j]];
		k[j] = in->known[x->map[j]];
	}
	uint64_t t = in->ts - x->d->t0;
	int rc = gmt_page_dev_instant(x->pd, t, v, k, in->top);
	for (uint64_t s = 0; !rc && s < in->syncs; s++)
		rc = gmt_page_dev_sync(x->pd, t);
	return rc;
}

/* A device's chart data, its series chosen (the instants come later). */
static int device_new(const gmt_report_model_t *m, size_t di, size_t buckets, feed_t *out)
{
	const gmt_rm_device_t *d = &m->devices[di];
	feed_t x = { .d = d };
	gmt_page_series_t ser[GMT_RM_SERIES];
	for (unsigned s = 0; s < GMT_RM_SERIES; s++)
		if (d->series_used[s]) {
			x.map[x.n] = s;
			ser[x.n++] = (gmt_page_series_t){ gmt_rm_series_key(s), gmt_rm_series_label_of(d, s),
							 s < GMT_RM_STACKED ? GMT_PAGE_STACK : GMT_PAGE_LINE,
							 series_style[s] };
		}
	if (!x.n) {
		x.map[x.n] = GMT_RM_USED;
		ser[x.n++] = (gmt_page_series_t){ gmt_rm_series_key(GMT_RM_USED), gmt_rm_series_label(GMT_RM_USED),
						 GMT_PAGE_LINE, series_style[GMT_RM_USED] };
	}
	char label[600];
	snprintf(label, sizeof(label), "device %d: %s on %s", d->ordinal, *d->name ? d->name : "(no record)",
		 *d->host ? d->host : "?");
	gmt_page_dev_info_t info = {
		.id = d->id, .label = label, .top_label = "the stack's top: taken + the rest of device used",
		.total_bytes = d->total_bytes, .t0_ns = d->t0,
		/* the extent is known: no widening of the finest level on the way */
		.duration_ns = d->instants ? d->last_instant_ts - d->t0 : 0,
		.has_wall = d->has_wall, .wall_s = d->wall_t0_ns / 1000000000u,
		.wall_ns = (uint32_t)(d->wall_t0_ns % 1000000000u),
		.series = ser, .n_series = x.n, .max_buckets = buckets,
	};
	if (!(x.pd = gmt_page_dev_new(&info)))
		return -ENOMEM;
	*out = x;
	return 0;
}

static int feed_all(void *ctx, size_t dev, const gmt_rm_instant_t *in)
{
	return feed_instant(&((feed_t *)ctx)[dev], in);
}

/* A device's marks: peak, phases, failures. */
static int device_marks(const gmt_report_model_t *m, const gmt_rm_device_t *d, feed_t *f)
{
	feed_t x = *f;
	int rc = 0;
	char href[96], lab[400];
	if (d->has_peak) {
		gmt_page_part_t parts[GMT_RM_STACKED];
		size_t np = 0;
		for (unsigned s = 0; s < GMT_RM_STACKED; s++)
			if (s != GMT_RM_REST && d->peak.known[s] && d->peak.v[s])
				parts[np++] = (gmt_page_part_t){ gmt_rm_series_label_of(d, s), d->peak.v[s] };
		snprintf(href, sizeof(href), "#%s-peak", d->id);
		if ((rc = gmt_page_dev_peak(x.pd, d->n_members > 1 ? "peak taken (all processes)" : "peak taken",
					    d->peak.ts - d->t0, d->peak.held, parts, np, href)))
			return rc;
	}
	for (size_t i = 0; i < d->n_phases; i++) {
		const gmt_rm_phase_t *p = &d->phases[i];
		snprintf(href, sizeof(href), "#%s-m%zu-phase-%zu-%" PRIu64, d->id, p->member, p->name_index, p->k);
		if (d->n_members > 1)
			snprintf(lab, sizeof(lab), "pid %" PRIu64 ": %s", msum(m, d, p->member)->pid, p->name ? p->name : "?");
		else
			snprintf(lab, sizeof(lab), "%s", p->name ? p->name : "?");
		if ((rc = gmt_page_dev_phase(x.pd, lab, (unsigned)p->k, p->k == 1, p->begin_ts - d->t0,
					     p->ended ? p->end_ts - d->t0 : GMT_PAGE_NO_END, p->failed, href)))
			return rc;
	}
	for (size_t j = 0; j < d->n_fails; j++) {
		const gmt_rm_fail_t *fl = &d->fails[j];
		snprintf(href, sizeof(href), "#%s-fail-%zu", d->id, j);
		if (d->n_members > 1)
			snprintf(lab, sizeof(lab), "failed allocation (pid %" PRIu64 ")", msum(m, d, fl->member)->pid);
		else
			snprintf(lab, sizeof(lab), "failed allocation");
		if ((rc = gmt_page_dev_failure(x.pd, lab, fl->f->ts - d->t0, fl->f->size, href)))
			return rc;
	}
	return 0;
}

static int data(FILE *f, void *arg)
{
	const page_t *pg = arg;
	const gmt_report_model_t *m = pg->m;
	gmt_page_dev_t **devs = calloc(m->n_devices ? m->n_devices : 1, sizeof(*devs));
	feed_t *fd = calloc(m->n_devices ? m->n_devices : 1, sizeof(*fd));
	if (!devs || !fd) {
		free(devs);
		free(fd);
		return -ENOMEM;
	}
	size_t buckets = pg->buckets;
	if (!buckets) {
		buckets = m->n_devices ? GMT_REPORT_BUCKETS_ALL / m->n_devices : GMT_REPORT_BUCKETS_MAX;
		buckets = buckets < GMT_REPORT_BUCKETS_MIN ? GMT_REPORT_BUCKETS_MIN :
			  buckets > GMT_REPORT_BUCKETS_MAX ? GMT_REPORT_BUCKETS_MAX : buckets;
	}
	int rc = 0;
	size_t n = 0;
	for (; n < m->n_devices && !rc; n++)
		if (!(rc = device_new(m, n, buckets, &fd[n])))
			devs[n] = fd[n].pd;
	/* every device's instants: each trace read at most once */
	if (!rc)
		rc = gmt_report_each_instant_all(m, feed_all, fd);
	for (size_t i = 0; i < n && !rc; i++)
		rc = device_marks(m, &m->devices[i], &fd[i]);
	if (!rc)
		rc = gmt_page_data_write(f, "gpumemtrace report", devs, n);
	for (size_t i = 0; i < n; i++)
		gmt_page_dev_free(devs[i]);
	free(devs);
	free(fd);
	return rc;
}

int gmt_report_html(FILE *out, const gmt_report_model_t *m, size_t buckets)
{
	page_t pg = { m, buckets };
	return gmt_web_page_write(out, "gpumemtrace report", body, data, (void *)&pg);
}
