/*
 * gmt_phases_render.c - renders the `phases` command's report: text (two
 * columns, one per view) and JSON (schemas/report.schema.json, "phases").
 * Every byte count is an exact integer; the text adds one conversion with
 * its binary unit named (gmt_fmt_bytes); every quantity says its source.
 */
#include <inttypes.h>
#include <string.h>

#include "engines/gmt_phase_engine.h"
#include "model/gmt_results.h"
#include "render/gmt_render.h"


static const char bound_note[] =
	"a sum or difference of maxima reached at different instants: a bound that "
	"describes no real moment";
static const char aggregate_note[] =
	"over the warm occurrences (2 and later): each figure's maximum; a moment keeps the "
	"values of its own instant and names its occurrence; start and end values are "
	"per-field maxima";

static const char ck_note[] =
	"the framework's own counters (FW_ALLOCATED, FW_RESERVED) at each checkpoint, compared "
	"with the rebuilt allocated and reserved of the requested view at that instant; the "
	"framework's peaks are its own, since its last reset (unknown to us), never ours";

static const char *const ck_kind_key[GMT_CK_KINDS] = { "allocated", "reserved" };
static const char *const ck_state_key[4] = { "rebuilt_unknown", "agree", "disagree", "not_comparable" };

static double since_s(const gmt_summary_t *s, uint64_t ts)
{
	return (double)gmt_summary_since_ns(s, ts) / 1e9;
}

static const char *fmt_s(char *b, size_t n, int64_t v)
{
	char t[64];
	if (v >= 0)
		return gmt_fmt_bytes(b, n, (uint64_t)v);
	/* "-N B (-x.xx MiB)" */
	gmt_fmt_bytes(t, sizeof(t), (uint64_t)0 - (uint64_t)v);
	char *paren = strchr(t, '(');
	if (paren)
		*paren = 0;
	snprintf(b, n, "-%.30s%s%.30s", t, paren ? "(-" : "", paren ? paren + 1 : "");
	return b;
}

static const char *source_name(unsigned src)
{
	switch (src) {
	case GMT_RANGE_API: return "api";
	case GMT_RANGE_NVTX_PUSHPOP: return "nvtx_push_pop";
	case GMT_RANGE_NVTX_STARTEND: return "nvtx_start_end";
	default: return "unknown";
	}
}

static const char *outside_source(const gmt_lv_vals_t *v)
{
	if (v->asrc == GMT_ASRC_STREAM)
		return "driver allocations other than stream-ordered ones (those are the allocator's)";
	if (v->asrc == GMT_ASRC_FRAMEWORK)
		return "driver allocations not inside a framework segment (address containment)";
	return "every driver allocation (no framework events on this device)";
}

/* ---- text ---------------------------------------------------------------- */

#define LABEL_W 36
#define COL_W 32

static void row(FILE *f, const char *label, const char *a, const char *b)
{
	fprintf(f, "      %-*s %-*s %s\n", LABEL_W, label, COL_W, a, b);
}

typedef const char *(*cell_fn)(char *b, size_t n, const gmt_pfig_t *fig, const gmt_summary_t *s);

static void row_fn(FILE *f, const char *label, const gmt_pfig_t *fig, const gmt_summary_t *s, cell_fn fn)
{
	char a[64], b[64];
	row(f, label, fn(a, sizeof(a), &fig[GMT_VIEW_REQUESTED], s), fn(b, sizeof(b), &fig[GMT_VIEW_HELD], s));
}

static const char *c_alloc(char *b, size_t n, const gmt_lv_vals_t *v)
{
	return v->has_allocated ? gmt_fmt_bytes(b, n, v->allocated) : "n/a";
}

static const char *c_res(char *b, size_t n, const gmt_lv_vals_t *v)
{
	return v->has_reserved ? gmt_fmt_bytes(b, n, v->reserved) : "n/a";
}

static const char *c_used(char *b, size_t n, const gmt_lv_vals_t *v)
{
	return v->has_used ? gmt_fmt_bytes(b, n, v->used) : "n/a";
}

static const char *c_untr(char *b, size_t n, const gmt_lv_vals_t *v)
{
	return v->has_used ? fmt_s(b, n, v->untraced) : "n/a";
}

/* The values block (start, end, at failure) of both views. */
static void t_vals(FILE *f, const char *what, const gmt_lv_vals_t *r, const gmt_lv_vals_t *h)
{
	char a[64], b[64], l[64];
	snprintf(l, sizeof(l), "%s: allocated", what);
	row(f, l, c_alloc(a, sizeof(a), r), c_alloc(b, sizeof(b), h));
	snprintf(l, sizeof(l), "%s: reserved", what);
	row(f, l, c_res(a, sizeof(a), r), c_res(b, sizeof(b), h));
	snprintf(l, sizeof(l), "%s: outside", what);
	row(f, l, gmt_fmt_bytes(a, sizeof(a), r->outside), gmt_fmt_bytes(b, sizeof(b), h->outside));
	snprintf(l, sizeof(l), "%s: taken (reserved + outside)", what);
	row(f, l, gmt_fmt_bytes(a, sizeof(a), r->held), gmt_fmt_bytes(b, sizeof(b), h->held));
	snprintf(l, sizeof(l), "%s: held by live allocations", what);
	row(f, l, gmt_fmt_bytes(a, sizeof(a), r->live), gmt_fmt_bytes(b, sizeof(b), h->live));
	snprintf(l, sizeof(l), "%s: device used", what);
	row(f, l, c_used(a, sizeof(a), r), c_used(b, sizeof(b), h));
	snprintf(l, sizeof(l), "%s: untraced (ESTIMATE)", what);
	row(f, l, c_untr(a, sizeof(a), r), c_untr(b, sizeof(b), h));
}

static void t_when2(FILE *f, const gmt_summary_t *s, const gmt_moment_t *r, const gmt_moment_t *h, int warm)
{
	char a[64], b[64];
	if (!r->valid)
		snprintf(a, sizeof(a), "-");
	else if (warm)
		snprintf(a, sizeof(a), "%+.9f s (occ. %" PRIu64 ")", since_s(s, r->ts), r->occ);
	else
		snprintf(a, sizeof(a), "%+.9f s", since_s(s, r->ts));
	if (!h->valid)
		snprintf(b, sizeof(b), "-");
	else if (warm)
		snprintf(b, sizeof(b), "%+.9f s (occ. %" PRIu64 ")", since_s(s, h->ts), h->occ);
	else
		snprintf(b, sizeof(b), "%+.9f s", since_s(s, h->ts));
	row(f, "  at", a, b);
}

/* One moment's line of values: which = 'a' allocated, 'r' reserved,
 * 'o' outside, 'h' held, 'g' gap, 'u' untraced, 'd' device used. */
static void t_mval(FILE *f, const char *label, const gmt_moment_t *m, char which)
{
	char c[2][64];
	const char *p[2];
	for (int w = 0; w < 2; w++) {
		const gmt_moment_t *x = &m[w];
		const gmt_lv_vals_t *v = &x->v;
		char *b = c[w];
		if (!x->valid) {
			p[w] = "n/a";
			continue;
		}
		switch (which) {
		case 'a': p[w] = c_alloc(b, 64, v); break;
		case 'r': p[w] = c_res(b, 64, v); break;
		case 'o': p[w] = gmt_fmt_bytes(b, 64, v->outside); break;
		case 'h': p[w] = gmt_fmt_bytes(b, 64, v->held); break;
		case 'g': p[w] = fmt_s(b, 64, v->gap); break;
		case 'u': p[w] = c_untr(b, 64, v); break;
		case 'd': p[w] = c_used(b, 64, v); break;
		default: {
			int o = which - '0';
			p[w] = gmt_fmt_bytes(b, 64, o >= 0 && o < GMT_DOWNERS ? v->outside_owner[o] : 0);
		}
		}
	}
	row(f, label, p[0], p[1]);
}

static const char *c_bound_sum(char *b, size_t n, const gmt_pfig_t *x, const gmt_summary_t *s)
{
	(void)s;
	return x->has_bound_sum ? gmt_fmt_bytes(b, n, x->bound_sum) : "n/a";
}

static const char *c_bound_diff(char *b, size_t n, const gmt_pfig_t *x, const gmt_summary_t *s)
{
	(void)s;
	return x->has_bound_diff ? fmt_s(b, n, x->bound_diff) : "n/a";
}

static const char *ck_src(unsigned kind, unsigned src)
{
	const char *n = kind == GMT_CK_ALLOCATED ? gmt_asrc_name(src) : gmt_rsrc_name(src);
	return n ? n : "nothing";
}

/* "framework X (its own peak P since its last reset); rebuilt Y: agree" */
static void t_ck(FILE *f, const gmt_phases_t *ph, unsigned kind, const gmt_ck_t *c)
{
	char a[64], b[64], r[64];
	const char *fw = gmt_phases_string(ph, c->fw);
	fprintf(f, "%s: framework ", ck_kind_key[kind]);
	gmt_text_str(f, fw ? fw : "?");
	fprintf(f, " %s (its own peak %s since its last reset); ", gmt_fmt_bytes(a, sizeof(a), c->fw_current),
		gmt_fmt_bytes(b, sizeof(b), c->fw_peak));
	switch (c->state) {
	case GMT_CK_UNKNOWN:
		fprintf(f, "rebuilt UNKNOWN (no framework events yet on this device)\n");
		break;
	case GMT_CK_OTHERS:
		fprintf(f, "NOT COMPARABLE (the rebuilt value holds other frameworks' events too)\n");
		break;
	default:
		fprintf(f, "rebuilt %s from %s: %s", gmt_fmt_bytes(r, sizeof(r), c->rebuilt),
			ck_src(kind, c->src), c->state == GMT_CK_AGREE ? "agree" : "DISAGREE");
		if (c->state == GMT_CK_DISAGREE)
			fprintf(f, " by %s", fmt_s(a, sizeof(a), c->difference));
		fputc('\n', f);
	}
}

/* The checkpoints paired with an occurrence's begin and end. */
static void t_ck_pairs(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_pdev_t *p)
{
	for (int e = 0; e < 2; e++)
		for (unsigned k = 0; k < GMT_CK_KINDS; k++) {
			const gmt_ck_t *c = e ? &p->ck_end[k] : &p->ck_start[k];
			if (!c->valid)
				continue;
			fprintf(f, "      checkpoint at %s (%+.9f s): ", e ? "end" : "start", since_s(s, c->ts));
			t_ck(f, ph, k, c);
		}
}

static void t_pdev(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_pdev_t *p,
		   int warm, int failed)
{
	const gmt_pfig_t *fig = p->fig;
	gmt_moment_t m[2];
	const gmt_lv_vals_t *e = &fig[GMT_VIEW_REQUESTED].end;
	const char *as = gmt_asrc_name(e->asrc), *rs = gmt_rsrc_name(e->rsrc);

	fprintf(f, "    device %d\n", p->ordinal);
	fprintf(f, "      sources: allocated from %s; reserved from %s; outside = %s; device used from %s\n",
		as ? as : "nothing (unknown)", rs ? rs : "nothing (unknown)", outside_source(e),
		e->has_used ? "cuMemGetInfo samples (the latest)" : "nothing (no cuMemGetInfo sample)");
	row(f, "", "view: requested", "view: held");
	if (fig[0].has_start)
		t_vals(f, warm ? "start (max)" : "start", &fig[0].start, &fig[1].start);
	else
		row(f, "start", "(device not seen yet)", "(device not seen yet)");
	t_vals(f, warm ? "end (max)" : "end", &fig[0].end, &fig[1].end);
	if (failed && !warm)
		t_vals(f, "at the failure", &fig[0].at_fail, &fig[1].at_fail);

#define BOTH(field) (m[0] = fig[0].field, m[1] = fig[1].field, m)
	t_mval(f, "max allocated", BOTH(max_alloc), 'a');
	t_when2(f, s, &m[0], &m[1], warm);
	t_mval(f, "  reserved at that instant", m, 'r');
	t_mval(f, "  outside at that instant", m, 'o');
	t_mval(f, "max reserved", BOTH(max_res), 'r');
	t_when2(f, s, &m[0], &m[1], warm);
	t_mval(f, "  allocated at that instant", m, 'a');
	t_mval(f, "  outside at that instant", m, 'o');
	t_mval(f, "max taken (reserved + outside)", BOTH(max_held), 'h');
	t_when2(f, s, &m[0], &m[1], warm);
	t_mval(f, "  reserved", m, 'r');
	t_mval(f, "  allocated", m, 'a');
	t_mval(f, "  outside", m, 'o');
	t_mval(f, "    of it application", m, '0');
	t_mval(f, "    of it nccl", m, '1');
	for (int o = 2; o < GMT_DOWNERS; o++) { /* the others when they hold bytes */
		char label[32];
		if (!m[0].v.outside_owner[o] && !m[1].v.outside_owner[o])
			continue;
		snprintf(label, sizeof label, "    of it %s", gmt_downer_key(o));
		t_mval(f, label, m, (char)('0' + o));
	}
	t_mval(f, "max gap (reserved - allocated)", BOTH(max_gap), 'g');
	t_when2(f, s, &m[0], &m[1], warm);
	t_mval(f, "  reserved at that instant", m, 'r');
	t_mval(f, "  allocated at that instant", m, 'a');
	t_mval(f, "max outside", BOTH(max_outside), 'o');
	t_when2(f, s, &m[0], &m[1], warm);
	row_fn(f, "BOUND max reserved + max outside", fig, s, c_bound_sum);
	row_fn(f, "BOUND max reserved - max allocated", fig, s, c_bound_diff);
	t_mval(f, "max untraced (ESTIMATE)", BOTH(max_untraced), 'u');
	if (m[0].valid || m[1].valid) {
		t_when2(f, s, &m[0], &m[1], warm);
		t_mval(f, "  device used at that instant", m, 'd');
	}
#undef BOTH
	if (!warm)
		t_ck_pairs(f, ph, s, p);
}

static void t_occ(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_occ_t *o)
{
	const char *dom = o->domain_id ? gmt_phases_string(ph, o->domain_id) : NULL;
	fprintf(f, "  occurrence %" PRIu64 " (%s): %s", o->k, o->k == 1 ? "cold" : "warm", source_name(o->source));
	if (o->source != GMT_RANGE_API) {
		fprintf(f, ", domain ");
		if (dom)
			gmt_text_str(f, dom);
		else
			fprintf(f, o->domain_id ? "#%u" : "(default)", o->domain_id);
	}
	fprintf(f, ", thread %u\n", o->thread);
	fprintf(f, "    begin %+.9f s (ts %" PRIu64 " ns), end %+.9f s (ts %" PRIu64 " ns), %.9f s\n",
		since_s(s, o->begin_ts), o->begin_ts, since_s(s, o->end_ts), o->end_ts,
		(double)o->duration_ns / 1e9);
	if (!o->ended)
		fprintf(f, "    UNTERMINATED: still open at the end of the trace; end values are the last seen\n");
	if (o->failed) {
		char b[64];
		fprintf(f, "    FAILED: %s at %+.9f s on device %d, requested %s\n",
			o->fail_type == GMT_EV_FW_OOM ? "the framework ran out of memory (FW_OOM)"
						       : "an allocation failed (ALLOC_FAIL)",
			since_s(s, o->fail_ts), o->fail_dev, gmt_fmt_bytes(b, sizeof(b), o->fail_size));
	}
	for (size_t d = 0; d < o->n_dev; d++)
		if (o->dev[d].ordinal >= 0)
			t_pdev(f, ph, s, &o->dev[d], 0, o->failed);
}

static int analysed(const gmt_summary_t *s)
{
	return s->status == GMT_DECODE_OK || s->status == GMT_DECODE_DAMAGED;
}

static void t_boundary(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_ck_diff_t *d)
{
	const gmt_boundary_t *b = d->nearest;
	const char *name = gmt_phases_string(ph, b->name_id);
	int64_t dt = d->from_nearest_ns;
	fprintf(f, "%s of \"", b->is_end ? "end" : "begin");
	gmt_text_str(f, name ? name : "(unnamed)");
	fprintf(f, "\" occurrence %" PRIu64 " at %+.9f s (checkpoint %.9f s %s it)", b->k, since_s(s, b->ts),
		(double)(dt >= 0 ? (uint64_t)dt : (uint64_t)0 - (uint64_t)dt) / 1e9, dt >= 0 ? "after" : "before");
}

/* A device's checkpoints, when it has any. */
static void t_checkpoints(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, int ordinal)
{
	const gmt_ck_dev_t *c = gmt_phases_checkpoints(ph, ordinal);
	if (!c || !(c->count[0] + c->count[1]))
		return;
	fprintf(f, "\nFramework checkpoints, device %d: %s\n", ordinal, ck_note);
	for (unsigned k = 0; k < GMT_CK_KINDS; k++) {
		const uint64_t *n = c->by_state[k];
		fprintf(f, "  %s: %" PRIu64 " checkpoints, %" PRIu64 " agree to the byte, %" PRIu64
			" DISAGREE, %" PRIu64 " with the rebuilt value unknown (no framework events yet), %"
			PRIu64 " not comparable (other frameworks)\n", ck_kind_key[k], c->count[k],
			n[GMT_CK_AGREE], n[GMT_CK_DISAGREE], n[GMT_CK_UNKNOWN], n[GMT_CK_OTHERS]);
	}
	for (unsigned k = 0; k < GMT_CK_KINDS; k++)
		if (c->latest[k].valid) {
			fprintf(f, "  latest (%+.9f s) ", since_s(s, c->latest[k].ts));
			t_ck(f, ph, k, &c->latest[k]);
		}
	for (size_t i = 0; i < c->n_diffs; i++) {
		const gmt_ck_diff_t *d = &c->diffs[i];
		fprintf(f, "  DISAGREE at %+.9f s (ts %" PRIu64 " ns) ", since_s(s, d->ck.ts), d->ck.ts);
		t_ck(f, ph, d->kind, &d->ck);
		fprintf(f, "    nearest phase boundary: ");
		if (d->nearest)
			t_boundary(f, ph, s, d);
		else
			fprintf(f, "none (no phase)");
		fputc('\n', f);
	}
	if (c->not_listed)
		fprintf(f, "  (%" PRIu64 " more disagreements not listed; --max-disagreements N)\n", c->not_listed);
}

void gmt_phases_report_text(FILE *f, gmt_phases_t *ph)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	gmt_levels_t *lv = gmt_phases_levels(ph);
	char b[64];
	if (!gmt_report_text_status(f, s))
		return;
	fprintf(f, "  %" PRIu64 " events", s->events);
	if (s->side_events)
		fprintf(f, " (%" PRIu64 " from the side stream, merged by time)", s->side_events);
	if (s->have_ts)
		fprintf(f, "; first event at ts %" PRIu64 " ns (times below are seconds after it)", s->first_ts);
	fputc('\n', f);
	fprintf(f, "  views: \"requested\" drops a block when its free is requested (FW_FREE_REQUESTED,\n"
		   "  cuMemFreeAsync); \"held\" when the framework completes it (FW_FREE_COMPLETED) or a\n"
		   "  synchronisation covers its stream. Untraced = device used - taken, an ESTIMATE.\n");

	int devs[256];
	size_t nd = gmt_phases_devices(ph, devs, 256);
	if (nd > 256)
		nd = 256;
	for (size_t i = 0; i < nd; i++) {
		gmt_lv_dev_info_t info;
		if (gmt_levels_dev_info(lv, devs[i], &info))
			continue;
		fprintf(f, "\nOutside the framework, device %d: %" PRIu64 " driver allocations never inside a "
			"framework segment (application %" PRIu64 ", nccl %" PRIu64, devs[i], info.outliers_total,
			info.outliers[0], info.outliers[1]);
		for (int o = 2; o < GMT_DOWNERS; o++)
			if (info.outliers[o])
				fprintf(f, ", %s %" PRIu64, gmt_downer_key(o), info.outliers[o]);
		fprintf(f, ")\n");
		for (size_t k = 0; k < info.n_top; k++) {
			const gmt_outlier_t *o = &info.top[k];
			fprintf(f, "  %s %s %s %s 0x%" PRIx64 ", allocated at %+.9f s, ", gmt_fmt_bytes(b, sizeof(b), o->size),
				gmt_downer_key(o->owner < GMT_DOWNERS ? o->owner : GMT_DOWNER_OTHER), gmt_kind_name(o->kind),
				o->is_handle ? "handle" : "at", o->addr, since_s(s, o->ts));
			if (o->freed_ts)
				fprintf(f, "freed at %+.9f s", since_s(s, o->freed_ts));
			else
				fprintf(f, "live at the end");
			fprintf(f, ", stack %u\n", o->stack);
		}
		if (info.outliers_total > info.n_top)
			fprintf(f, "  (the %zu largest listed)\n", info.n_top);
		if (info.fw_lost)
			fprintf(f, "  WARNING: the framework lost %" PRIu64 " events from %+.9f s on: its "
				"allocated and reserved are incomplete from there\n", info.fw_lost,
				since_s(s, info.fw_lost_first_ts));
		if (info.fw_anomalies)
			fprintf(f, "  %" PRIu64 " framework events did not match its state\n", info.fw_anomalies);
		t_checkpoints(f, ph, s, devs[i]);
	}

	size_t nn;
	const gmt_phase_name_t *names = gmt_phases_names(ph, &nn);
	if (!nn)
		fprintf(f, "\nNo phases (no range was selected as a phase)\n");
	for (size_t i = 0; i < nn; i++) {
		const gmt_phase_name_t *n = &names[i];
		const char *name = gmt_phases_string(ph, n->name_id);
		fprintf(f, "\nPhase \"");
		gmt_text_str(f, name ? name : "(unnamed)");
		fprintf(f, "\": %" PRIu64 " occurrence%s", n->occurrences, n->occurrences == 1 ? "" : "s");
		if (n->failed)
			fprintf(f, ", %" PRIu64 " FAILED", n->failed);
		if (n->unterminated)
			fprintf(f, ", %" PRIu64 " unterminated", n->unterminated);
		fputc('\n', f);
		for (size_t k = 0; k < n->n_listed; k++)
			t_occ(f, ph, s, n->listed[k]);
		if (n->not_listed)
			fprintf(f, "  (%" PRIu64 " more occurrences not listed; all warm ones are in the aggregate)\n",
				n->not_listed);
		if (n->n_warm) {
			fprintf(f, "  warm aggregate over %" PRIu64 " occurrences (%s)\n", n->n_warm, aggregate_note);
			for (size_t d = 0; d < n->warm->n_dev; d++)
				if (n->warm->dev[d].ordinal >= 0)
					t_pdev(f, ph, s, &n->warm->dev[d], 1, 0);
		}
	}
	const gmt_phase_anomalies_t *a = gmt_phases_anomalies(ph);
	if (a->unmatched_ends || a->name_mismatches || a->dropped_ranges)
		fprintf(f, "\nRange anomalies: %" PRIu64 " ends without an open range, %" PRIu64
			" ends naming another range, %" PRIu64 " ranges beyond the limits\n",
			a->unmatched_ends, a->name_mismatches, a->dropped_ranges);
	fprintf(f, "\nBOUND lines: %s.\n", bound_note);
}

/* ---- JSON (writers/gmt_json.h) -------------------------------------------- */

static void j_vals(gmt_json_t *j, const gmt_lv_vals_t *v)
{
	gmt_json_obj_begin(j);
	if (v->has_allocated)
		gmt_json_kv_u64(j, "allocated_bytes", v->allocated);
	else
		gmt_json_kv_null(j, "allocated_bytes");
	gmt_json_kv_str(j, "allocated_source", gmt_asrc_name(v->asrc));
	if (v->has_reserved)
		gmt_json_kv_u64(j, "reserved_bytes", v->reserved);
	else
		gmt_json_kv_null(j, "reserved_bytes");
	gmt_json_kv_str(j, "reserved_source", gmt_rsrc_name(v->rsrc));
	gmt_json_kv_u64(j, "outside_bytes", v->outside);
	gmt_json_kv_obj_begin(j, "outside_by_owner");
	for (int o = 0; o < GMT_DOWNERS; o++)
		gmt_json_kv_u64(j, gmt_downer_key(o), v->outside_owner[o]);
	gmt_json_obj_end(j);
	gmt_json_kv_u64(j, "taken_bytes", v->held);
	gmt_json_kv_u64(j, "live_bytes", v->live);
	if (v->has_used) {
		gmt_json_kv_u64(j, "device_used_bytes", v->used);
		gmt_json_kv_u64(j, "device_used_sample_ts_ns", v->used_ts);
		gmt_json_kv_i64(j, "untraced_estimate_bytes", v->untraced);
	} else {
		gmt_json_kv_null(j, "device_used_bytes");
		gmt_json_kv_null(j, "device_used_sample_ts_ns");
		gmt_json_kv_null(j, "untraced_estimate_bytes");
	}
	gmt_json_obj_end(j);
}

/* which: the maximised quantity, as in t_mval. */
static void j_moment(gmt_json_t *j, const char *k, const gmt_summary_t *s, const gmt_moment_t *m,
		     char which, int warm)
{
	gmt_json_key(j, k);
	if (!m->valid) {
		gmt_json_null(j);
		return;
	}
	gmt_json_obj_begin(j);
	switch (which) {
	case 'a': gmt_json_kv_u64(j, "bytes", m->v.allocated); break;
	case 'r': gmt_json_kv_u64(j, "bytes", m->v.reserved); break;
	case 'h': gmt_json_kv_u64(j, "bytes", m->v.held); break;
	case 'o': gmt_json_kv_u64(j, "bytes", m->v.outside); break;
	case 'g': gmt_json_kv_i64(j, "bytes", m->v.gap); break;
	default: gmt_json_kv_i64(j, "bytes", m->v.untraced); break;
	}
	gmt_json_kv_u64(j, "ts_ns", m->ts);
	gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, m->ts), 9);
	if (warm)
		gmt_json_kv_u64(j, "occurrence", m->occ);
	else
		gmt_json_kv_null(j, "occurrence");
	gmt_json_key(j, "values");
	j_vals(j, &m->v);
	gmt_json_obj_end(j);
}

/* A checkpoint object, or null. */
static void j_ck(gmt_json_t *j, const char *k, const gmt_phases_t *ph, const gmt_summary_t *s,
		 unsigned kind, const gmt_ck_t *c)
{
	gmt_json_key(j, k);
	if (!c->valid) {
		gmt_json_null(j);
		return;
	}
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "ts_ns", c->ts);
	gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, c->ts), 9);
	gmt_json_kv_str(j, "framework", gmt_phases_string(ph, c->fw));
	gmt_json_kv_u64(j, "framework_current_bytes", c->fw_current);
	gmt_json_kv_u64(j, "framework_own_peak_bytes", c->fw_peak);
	gmt_json_kv_str(j, "state", ck_state_key[c->state & 3]);
	if (c->state == GMT_CK_AGREE || c->state == GMT_CK_DISAGREE) {
		gmt_json_kv_u64(j, "rebuilt_bytes", c->rebuilt);
		gmt_json_kv_str(j, "rebuilt_source", ck_src(kind, c->src));
		gmt_json_kv_i64(j, "difference_bytes", c->difference);
	} else {
		gmt_json_kv_null(j, "rebuilt_bytes");
		gmt_json_kv_null(j, "rebuilt_source");
		gmt_json_kv_null(j, "difference_bytes");
	}
	gmt_json_obj_end(j);
}

/* {"allocated": checkpoint|null, "reserved": ...}, or null when neither. */
static void j_ck_pair(gmt_json_t *j, const char *k, const gmt_phases_t *ph, const gmt_summary_t *s,
		      const gmt_ck_t *c)
{
	if (!c[0].valid && !c[1].valid) {
		gmt_json_kv_null(j, k);
		return;
	}
	gmt_json_key(j, k);
	gmt_json_obj_begin(j);
	for (unsigned i = 0; i < GMT_CK_KINDS; i++)
		j_ck(j, ck_kind_key[i], ph, s, i, &c[i]);
	gmt_json_obj_end(j);
}

static void j_checkpoints(gmt_json_t *j, const gmt_phases_t *ph, const gmt_summary_t *s, int ordinal)
{
	static const gmt_ck_dev_t none;
	const gmt_ck_dev_t *c = gmt_phases_checkpoints(ph, ordinal);
	if (!c)
		c = &none;
	gmt_json_key(j, "checkpoints");
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "note", ck_note);
	for (unsigned k = 0; k < GMT_CK_KINDS; k++) {
		gmt_json_kv_obj_begin(j, ck_kind_key[k]);
		gmt_json_kv_u64(j, "count", c->count[k]);
		for (int st = 0; st < 4; st++)
			gmt_json_kv_u64(j, ck_state_key[st], c->by_state[k][st]);
		j_ck(j, "latest", ph, s, k, &c->latest[k]);
		gmt_json_obj_end(j);
	}
	gmt_json_kv_arr_begin(j, "disagreements");
	for (size_t i = 0; i < c->n_diffs; i++) {
		const gmt_ck_diff_t *d = &c->diffs[i];
		const gmt_boundary_t *b = d->nearest;
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "quantity", ck_kind_key[d->kind]);
		j_ck(j, "checkpoint", ph, s, d->kind, &d->ck);
		gmt_json_key(j, "nearest_boundary");
		if (b) {
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "phase", gmt_phases_string(ph, b->name_id));
			gmt_json_kv_u64(j, "occurrence", b->k);
			gmt_json_kv_str(j, "edge", b->is_end ? "end" : "begin");
			gmt_json_kv_u64(j, "ts_ns", b->ts);
			gmt_json_kv_i64(j, "checkpoint_minus_boundary_ns", d->from_nearest_ns);
			gmt_json_obj_end(j);
		} else {
			gmt_json_null(j);
		}
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_u64(j, "disagreements_not_listed", c->not_listed);
	gmt_json_obj_end(j);
}

static void j_fig(gmt_json_t *j, const gmt_summary_t *s, const gmt_pfig_t *x, int warm, int failed)
{
	gmt_json_obj_begin(j);
	gmt_json_key(j, "start");
	if (x->has_start)
		j_vals(j, &x->start);
	else
		gmt_json_null(j);
	gmt_json_key(j, "end");
	j_vals(j, &x->end);
	gmt_json_key(j, "at_failure");
	if (failed && !warm)
		j_vals(j, &x->at_fail);
	else
		gmt_json_null(j);
	j_moment(j, "max_allocated", s, &x->max_alloc, 'a', warm);
	j_moment(j, "max_reserved", s, &x->max_res, 'r', warm);
	j_moment(j, "max_taken", s, &x->max_held, 'h', warm);
	j_moment(j, "max_gap", s, &x->max_gap, 'g', warm);
	j_moment(j, "max_outside", s, &x->max_outside, 'o', warm);
	j_moment(j, "max_untraced_estimate", s, &x->max_untraced, 'u', warm);
	gmt_json_key(j, "bounds");
	{
		gmt_json_obj_begin(j);
		if (x->has_bound_sum)
			gmt_json_kv_u64(j, "max_reserved_plus_max_outside_bytes", x->bound_sum);
		else
			gmt_json_kv_null(j, "max_reserved_plus_max_outside_bytes");
		if (x->has_bound_diff)
			gmt_json_kv_i64(j, "max_reserved_minus_max_allocated_bytes", x->bound_diff);
		else
			gmt_json_kv_null(j, "max_reserved_minus_max_allocated_bytes");
		gmt_json_kv_str(j, "note", bound_note);
		gmt_json_obj_end(j);
	}
	gmt_json_obj_end(j);
}

static void j_devices(gmt_json_t *j, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_occ_t *o, int warm)
{
	gmt_json_arr_begin(j);
	for (size_t d = 0; d < o->n_dev; d++) {
		const gmt_pdev_t *p = &o->dev[d];
		if (p->ordinal < 0)
			continue;
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", p->ordinal);
		gmt_json_key(j, "requested");
		j_fig(j, s, &p->fig[GMT_VIEW_REQUESTED], warm, o->failed);
		gmt_json_key(j, "held");
		j_fig(j, s, &p->fig[GMT_VIEW_HELD], warm, o->failed);
		j_ck_pair(j, "checkpoint_at_start", ph, s, p->ck_start);
		j_ck_pair(j, "checkpoint_at_end", ph, s, p->ck_end);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

static void j_occ(gmt_json_t *j, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_occ_t *o)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "occurrence", o->k);
	gmt_json_kv_str(j, "temperature", o->k == 1 ? "cold" : "warm");
	gmt_json_kv_str(j, "source", source_name(o->source));
	gmt_json_kv_str(j, "domain", o->domain_id ? gmt_phases_string(ph, o->domain_id) : NULL);
	gmt_json_kv_u64(j, "thread", o->thread);
	gmt_json_kv_u64(j, "begin_ts_ns", o->begin_ts);
	gmt_json_kv_fixed(j, "begin_s", since_s(s, o->begin_ts), 9);
	gmt_json_kv_u64(j, "end_ts_ns", o->end_ts);
	gmt_json_kv_fixed(j, "end_s", since_s(s, o->end_ts), 9);
	gmt_json_kv_u64(j, "duration_ns", o->duration_ns);
	gmt_json_key(j, "terminated");
	gmt_json_bool(j, o->ended);
	gmt_json_key(j, "failure");
	if (o->failed) {
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "event", o->fail_type == GMT_EV_FW_OOM ? "fw_oom" : "alloc_fail");
		gmt_json_kv_u64(j, "ts_ns", o->fail_ts);
		gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, o->fail_ts), 9);
		gmt_json_kv_i64(j, "device", o->fail_dev);
		gmt_json_kv_u64(j, "requested_bytes", o->fail_size);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_key(j, "devices");
	j_devices(j, ph, s, o, 0);
	gmt_json_obj_end(j);
}

void gmt_phases_report_json(gmt_json_t *j, gmt_phases_t *ph)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	gmt_levels_t *lv = gmt_phases_levels(ph);
	gmt_json_newline(j);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", s->file);
	gmt_json_kv_str(j, "status", gmt_status_key(s));
	gmt_missing_json(j, s->missing, s->missing_timed, s->missing_first_ts, s->missing_last_ts);
	gmt_json_key(j, "decode");
	{
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "bytes_ok", s->bytes_ok);
		gmt_json_kv_u64(j, "file_size", s->file_size);
		gmt_json_key(j, "ended_cleanly");
		gmt_json_bool(j, s->ended_cleanly);
		if (s->status != GMT_DECODE_OK)
			gmt_json_kv_str(j, "message", s->message);
		else
			gmt_json_kv_null(j, "message");
		gmt_json_obj_end(j);
	}
	if (!analysed(s)) {
		gmt_json_obj_end(j);
		return;
	}
	gmt_report_gaps_json(j, &s->gaps);
	gmt_json_key(j, "events");
	{
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "total", s->events);
		gmt_json_kv_u64(j, "side", s->side_events);
		if (s->have_ts) {
			gmt_json_kv_u64(j, "first_ts_ns", s->first_ts);
			gmt_json_kv_u64(j, "last_ts_ns", s->last_ts);
		} else {
			gmt_json_kv_null(j, "first_ts_ns");
			gmt_json_kv_null(j, "last_ts_ns");
		}
		gmt_json_obj_end(j);
	}
	gmt_json_kv_arr_begin(j, "devices");
	int devs[256];
	size_t nd = gmt_phases_devices(ph, devs, 256);
	if (nd > 256)
		nd = 256;
	for (size_t i = 0; i < nd; i++) {
		gmt_lv_dev_info_t info;
		gmt_lv_vals_t v;
		gmt_levels_dev_info(lv, devs[i], &info);
		gmt_levels_values(lv, devs[i], GMT_VIEW_REQUESTED, &v);
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", devs[i]);
		gmt_json_key(j, "sources");
		{
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "allocated", gmt_asrc_name(v.asrc));
			gmt_json_kv_str(j, "reserved", gmt_rsrc_name(v.rsrc));
			gmt_json_kv_str(j, "outside", outside_source(&v));
			gmt_json_kv_str(j, "device_used", v.has_used ? "cuMemGetInfo samples" : NULL);
			gmt_json_obj_end(j);
		}
		gmt_json_key(j, "outside_allocations");
		{
			gmt_json_obj_begin(j);
			gmt_json_kv_obj_begin(j, "count_by_owner");
			for (int o = 0; o < GMT_DOWNERS; o++)
				gmt_json_kv_u64(j, gmt_downer_key(o), info.outliers[o]);
			gmt_json_obj_end(j);
			gmt_json_kv_arr_begin(j, "largest");
			for (size_t k = 0; k < info.n_top; k++) {
				const gmt_outlier_t *o = &info.top[k];
				gmt_json_obj_begin(j);
				gmt_json_kv_u64(j, "bytes", o->size);
				gmt_json_kv_str(j, "owner", gmt_downer_key(o->owner < GMT_DOWNERS ? o->owner : GMT_DOWNER_OTHER));
				gmt_json_kv_str(j, "kind", gmt_kind_name(o->kind));
				gmt_json_kv_u64(j, o->is_handle ? "handle" : "address", o->addr);
				gmt_json_kv_i64(j, "device", o->dev);
				gmt_json_kv_u64(j, "ts_ns", o->ts);
				gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, o->ts), 9);
				if (o->freed_ts)
					gmt_json_kv_u64(j, "freed_ts_ns", o->freed_ts);
				else
					gmt_json_kv_null(j, "freed_ts_ns");
				gmt_json_kv_u64(j, "stack", o->stack);
				gmt_json_obj_end(j);
			}
			gmt_json_arr_end(j);
			gmt_json_obj_end(j);
		}
		gmt_json_key(j, "framework");
		{
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "lost_events", info.fw_lost);
			if (info.fw_lost)
				gmt_json_kv_u64(j, "lost_first_ts_ns", info.fw_lost_first_ts);
			else
				gmt_json_kv_null(j, "lost_first_ts_ns");
			gmt_json_kv_u64(j, "anomalies", info.fw_anomalies);
			gmt_json_obj_end(j);
		}
		j_checkpoints(j, ph, s, devs[i]);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);

	gmt_json_kv_arr_begin(j, "phases");
	size_t nn;
	const gmt_phase_name_t *names = gmt_phases_names(ph, &nn);
	for (size_t i = 0; i < nn; i++) {
		const gmt_phase_name_t *n = &names[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "name", gmt_phases_string(ph, n->name_id));
		gmt_json_kv_u64(j, "occurrences", n->occurrences);
		gmt_json_kv_u64(j, "failed", n->failed);
		gmt_json_kv_u64(j, "unterminated", n->unterminated);
		gmt_json_kv_arr_begin(j, "listed");
		for (size_t k = 0; k < n->n_listed; k++)
			j_occ(j, ph, s, n->listed[k]);
		gmt_json_arr_end(j);
		gmt_json_kv_u64(j, "not_listed", n->not_listed);
		gmt_json_key(j, "warm");
		if (n->n_warm) {
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "occurrences", n->n_warm);
			gmt_json_kv_u64(j, "failed", (uint64_t)n->warm->failed);
			gmt_json_kv_str(j, "note", aggregate_note);
			gmt_json_key(j, "devices");
			j_devices(j, ph, s, n->warm, 1);
			gmt_json_obj_end(j);
		} else {
			gmt_json_null(j);
		}
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "range_anomalies");
	{
		const gmt_phase_anomalies_t *a = gmt_phases_anomalies(ph);
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "unmatched_ends", a->unmatched_ends);
		gmt_json_kv_u64(j, "name_mismatches", a->name_mismatches);
		gmt_json_kv_u64(j, "dropped_ranges", a->dropped_ranges);
		gmt_json_obj_end(j);
	}
	gmt_json_obj_end(j);
}
