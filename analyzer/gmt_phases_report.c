/*
 * gmt_phases_report.c - renders the `phases` command's report: text (two
 * columns, one per view) and JSON (schemas/report.schema.json, "phases").
 * Every byte count is an exact integer; the text adds one conversion with
 * its binary unit named (gmt_fmt_bytes); every quantity says its source.
 */
#include <inttypes.h>
#include <string.h>

#include "gmt_phases.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif


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
	return (double)(int64_t)(ts - s->first_ts) / 1e9;
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
	snprintf(l, sizeof(l), "%s: held (reserved + outside)", what);
	row(f, l, gmt_fmt_bytes(a, sizeof(a), r->held), gmt_fmt_bytes(b, sizeof(b), h->held));
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
		case 'g': p[w] = fmt_s(b, 64, (int64_t)(v->reserved - v->allocated)); break;
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
	if (!x->max_res.valid || !x->max_outside.valid)
		return "n/a";
	return gmt_fmt_bytes(b, n, x->max_res.v.reserved + x->max_outside.v.outside);
}

static const char *c_bound_diff(char *b, size_t n, const gmt_pfig_t *x, const gmt_summary_t *s)
{
	(void)s;
	if (!x->max_res.valid || !x->max_alloc.valid)
		return "n/a";
	return fmt_s(b, n, (int64_t)(x->max_res.v.reserved - x->max_alloc.v.allocated));
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
			fprintf(f, " by %s", fmt_s(a, sizeof(a), (int64_t)(c->fw_current - c->rebuilt)));
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
	t_mval(f, "max held (reserved + outside)", BOTH(max_held), 'h');
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
		(double)(o->end_ts - o->begin_ts) / 1e9);
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

static void t_boundary(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, uint64_t ts,
		       const gmt_boundary_t *b)
{
	const char *name = gmt_phases_string(ph, b->name_id);
	fprintf(f, "%s of \"", b->is_end ? "end" : "begin");
	gmt_text_str(f, name ? name : "(unnamed)");
	fprintf(f, "\" occurrence %" PRIu64 " at %+.9f s (checkpoint %.9f s %s it)", b->k, since_s(s, b->ts),
		(double)(ts >= b->ts ? ts - b->ts : b->ts - ts) / 1e9, ts >= b->ts ? "after" : "before");
}

/* A device's checkpoints, when it has any. */
static void t_checkpoints(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, int ordinal)
{
	const gmt_ck_dev_t *c = gmt_phases_checkpoints(ph, ordinal);
	if (!c || !(c->count[0] + c->count[1]))
		return;
	fprintf(f, "\nFramework checkpoints, device %d: %s\n", ordinal, ck_note);
	uint64_t ndiff = 0;
	for (unsigned k = 0; k < GMT_CK_KINDS; k++) {
		const uint64_t *n = c->by_state[k];
		ndiff += n[GMT_CK_DISAGREE];
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
		const gmt_boundary_t *b = gmt_ck_nearest(d);
		fprintf(f, "  DISAGREE at %+.9f s (ts %" PRIu64 " ns) ", since_s(s, d->ck.ts), d->ck.ts);
		t_ck(f, ph, d->kind, &d->ck);
		fprintf(f, "    nearest phase boundary: ");
		if (b)
			t_boundary(f, ph, s, d->ck.ts, b);
		else
			fprintf(f, "none (no phase)");
		fputc('\n', f);
	}
	if (ndiff > c->n_diffs)
		fprintf(f, "  (%" PRIu64 " more disagreements not listed; --max-disagreements N)\n", ndiff - c->n_diffs);
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
		   "  synchronisation covers its stream. Untraced = device used - held, an ESTIMATE.\n");

	int devs[256];
	size_t nd = gmt_phases_devices(ph, devs, 256);
	if (nd > 256)
		nd = 256;
	for (size_t i = 0; i < nd; i++) {
		gmt_lv_dev_info_t info;
		if (gmt_levels_dev_info(lv, devs[i], &info))
			continue;
		uint64_t total = 0;
		for (int o = 0; o < GMT_DOWNERS; o++)
			total += info.outliers[o];
		fprintf(f, "\nOutside the framework, device %d: %" PRIu64 " driver allocations never inside a "
			"framework segment (application %" PRIu64 ", nccl %" PRIu64, devs[i], total,
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
		if (total > info.n_top)
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
		if (n->occurrences > n->n_listed)
			fprintf(f, "  (%" PRIu64 " more occurrences not listed; all warm ones are in the aggregate)\n",
				n->occurrences - n->n_listed);
		if (n->n_warm) {
			fprintf(f, "  warm aggregate over %" PRIu64 " occurrences (%s)\n", n->n_warm, aggregate_note);
			for (size_t d = 0; d < n->warm.n_dev; d++)
				if (n->warm.dev[d].ordinal >= 0)
					t_pdev(f, ph, s, &n->warm.dev[d], 1, 0);
		}
	}
	const gmt_phase_anomalies_t *a = gmt_phases_anomalies(ph);
	if (a->unmatched_ends || a->name_mismatches || a->dropped_ranges)
		fprintf(f, "\nRange anomalies: %" PRIu64 " ends without an open range, %" PRIu64
			" ends naming another range, %" PRIu64 " ranges beyond the limits\n",
			a->unmatched_ends, a->name_mismatches, a->dropped_ranges);
	fprintf(f, "\nBOUND lines: %s.\n", bound_note);
}

/* ---- JSON ------------------------------------------------------------------ */

static void jk(FILE *f, int *first, const char *k)
{
	fprintf(f, "%s\"%s\":", *first ? "" : ",", k);
	*first = 0;
}

static void ju(FILE *f, int *first, const char *k, uint64_t v)
{
	jk(f, first, k);
	fprintf(f, "%" PRIu64, v);
}

static void ji(FILE *f, int *first, const char *k, int64_t v)
{
	jk(f, first, k);
	fprintf(f, "%" PRId64, v);
}

static void jnull(FILE *f, int *first, const char *k)
{
	jk(f, first, k);
	fputs("null", f);
}

static void js(FILE *f, int *first, const char *k, const char *v)
{
	jk(f, first, k);
	if (v)
		gmt_json_str(f, v);
	else
		fputs("null", f);
}

static void jsec(FILE *f, int *first, const char *k, double v)
{
	jk(f, first, k);
	fprintf(f, "%.9f", v);
}

static void j_vals(FILE *f, const gmt_lv_vals_t *v)
{
	int q = 1;
	fputc('{', f);
	if (v->has_allocated)
		ju(f, &q, "allocated_bytes", v->allocated);
	else
		jnull(f, &q, "allocated_bytes");
	js(f, &q, "allocated_source", gmt_asrc_name(v->asrc));
	if (v->has_reserved)
		ju(f, &q, "reserved_bytes", v->reserved);
	else
		jnull(f, &q, "reserved_bytes");
	js(f, &q, "reserved_source", gmt_rsrc_name(v->rsrc));
	ju(f, &q, "outside_bytes", v->outside);
	jk(f, &q, "outside_by_owner");
	fputc('{', f);
	for (int o = 0; o < GMT_DOWNERS; o++)
		fprintf(f, "%s\"%s\":%" PRIu64, o ? "," : "", gmt_downer_key(o), v->outside_owner[o]);
	fputc('}', f);
	ju(f, &q, "held_bytes", v->held);
	if (v->has_used) {
		ju(f, &q, "device_used_bytes", v->used);
		ju(f, &q, "device_used_sample_ts_ns", v->used_ts);
		ji(f, &q, "untraced_estimate_bytes", v->untraced);
	} else {
		jnull(f, &q, "device_used_bytes");
		jnull(f, &q, "device_used_sample_ts_ns");
		jnull(f, &q, "untraced_estimate_bytes");
	}
	fputc('}', f);
}

/* which: the maximised quantity, as in t_mval. */
static void j_moment(FILE *f, int *first, const char *k, const gmt_summary_t *s, const gmt_moment_t *m,
		     char which, int warm)
{
	jk(f, first, k);
	if (!m->valid) {
		fputs("null", f);
		return;
	}
	int q = 1;
	fputc('{', f);
	switch (which) {
	case 'a': ju(f, &q, "bytes", m->v.allocated); break;
	case 'r': ju(f, &q, "bytes", m->v.reserved); break;
	case 'h': ju(f, &q, "bytes", m->v.held); break;
	case 'o': ju(f, &q, "bytes", m->v.outside); break;
	case 'g': ji(f, &q, "bytes", (int64_t)(m->v.reserved - m->v.allocated)); break;
	default: ji(f, &q, "bytes", m->v.untraced); break;
	}
	ju(f, &q, "ts_ns", m->ts);
	jsec(f, &q, "since_first_event_s", since_s(s, m->ts));
	if (warm)
		ju(f, &q, "occurrence", m->occ);
	else
		jnull(f, &q, "occurrence");
	jk(f, &q, "values");
	j_vals(f, &m->v);
	fputc('}', f);
}

/* A checkpoint object, or null. */
static void j_ck(FILE *f, int *first, const char *k, const gmt_phases_t *ph, const gmt_summary_t *s,
		 unsigned kind, const gmt_ck_t *c)
{
	jk(f, first, k);
	if (!c->valid) {
		fputs("null", f);
		return;
	}
	int q = 1;
	fputc('{', f);
	ju(f, &q, "ts_ns", c->ts);
	jsec(f, &q, "since_first_event_s", since_s(s, c->ts));
	js(f, &q, "framework", gmt_phases_string(ph, c->fw));
	ju(f, &q, "framework_current_bytes", c->fw_current);
	ju(f, &q, "framework_own_peak_bytes", c->fw_peak);
	js(f, &q, "state", ck_state_key[c->state & 3]);
	if (c->state == GMT_CK_AGREE || c->state == GMT_CK_DISAGREE) {
		ju(f, &q, "rebuilt_bytes", c->rebuilt);
		js(f, &q, "rebuilt_source", ck_src(kind, c->src));
		ji(f, &q, "difference_bytes", (int64_t)(c->fw_current - c->rebuilt));
	} else {
		jnull(f, &q, "rebuilt_bytes");
		jnull(f, &q, "rebuilt_source");
		jnull(f, &q, "difference_bytes");
	}
	fputc('}', f);
}

/* {"allocated": checkpoint|null, "reserved": ...}, or null when neither. */
static void j_ck_pair(FILE *f, int *first, const char *k, const gmt_phases_t *ph, const gmt_summary_t *s,
		      const gmt_ck_t *c)
{
	if (!c[0].valid && !c[1].valid) {
		jnull(f, first, k);
		return;
	}
	jk(f, first, k);
	int q = 1;
	fputc('{', f);
	for (unsigned i = 0; i < GMT_CK_KINDS; i++)
		j_ck(f, &q, ck_kind_key[i], ph, s, i, &c[i]);
	fputc('}', f);
}

static void j_checkpoints(FILE *f, int *first, const gmt_phases_t *ph, const gmt_summary_t *s, int ordinal)
{
	static const gmt_ck_dev_t none;
	const gmt_ck_dev_t *c = gmt_phases_checkpoints(ph, ordinal);
	if (!c)
		c = &none;
	jk(f, first, "checkpoints");
	int q = 1;
	fputc('{', f);
	js(f, &q, "note", ck_note);
	uint64_t ndiff = 0;
	for (unsigned k = 0; k < GMT_CK_KINDS; k++) {
		int w = 1;
		jk(f, &q, ck_kind_key[k]);
		fputc('{', f);
		ju(f, &w, "count", c->count[k]);
		for (int st = 0; st < 4; st++)
			ju(f, &w, ck_state_key[st], c->by_state[k][st]);
		j_ck(f, &w, "latest", ph, s, k, &c->latest[k]);
		fputc('}', f);
		ndiff += c->by_state[k][GMT_CK_DISAGREE];
	}
	jk(f, &q, "disagreements");
	fputc('[', f);
	for (size_t i = 0; i < c->n_diffs; i++) {
		const gmt_ck_diff_t *d = &c->diffs[i];
		const gmt_boundary_t *b = gmt_ck_nearest(d);
		int w = 1;
		fputs(i ? ",{" : "{", f);
		js(f, &w, "quantity", ck_kind_key[d->kind]);
		j_ck(f, &w, "checkpoint", ph, s, d->kind, &d->ck);
		jk(f, &w, "nearest_boundary");
		if (b) {
			int z = 1;
			fputc('{', f);
			js(f, &z, "phase", gmt_phases_string(ph, b->name_id));
			ju(f, &z, "occurrence", b->k);
			js(f, &z, "edge", b->is_end ? "end" : "begin");
			ju(f, &z, "ts_ns", b->ts);
			ji(f, &z, "checkpoint_minus_boundary_ns", (int64_t)(d->ck.ts - b->ts));
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputc(']', f);
	ju(f, &q, "disagreements_not_listed", ndiff - c->n_diffs);
	fputc('}', f);
}

static void j_fig(FILE *f, const gmt_summary_t *s, const gmt_pfig_t *x, int warm, int failed)
{
	int q = 1;
	fputc('{', f);
	jk(f, &q, "start");
	if (x->has_start)
		j_vals(f, &x->start);
	else
		fputs("null", f);
	jk(f, &q, "end");
	j_vals(f, &x->end);
	jk(f, &q, "at_failure");
	if (failed && !warm)
		j_vals(f, &x->at_fail);
	else
		fputs("null", f);
	j_moment(f, &q, "max_allocated", s, &x->max_alloc, 'a', warm);
	j_moment(f, &q, "max_reserved", s, &x->max_res, 'r', warm);
	j_moment(f, &q, "max_held", s, &x->max_held, 'h', warm);
	j_moment(f, &q, "max_gap", s, &x->max_gap, 'g', warm);
	j_moment(f, &q, "max_outside", s, &x->max_outside, 'o', warm);
	j_moment(f, &q, "max_untraced_estimate", s, &x->max_untraced, 'u', warm);
	jk(f, &q, "bounds");
	{
		int b = 1;
		fputc('{', f);
		if (x->max_res.valid && x->max_outside.valid)
			ju(f, &b, "max_reserved_plus_max_outside_bytes",
			   x->max_res.v.reserved + x->max_outside.v.outside);
		else
			jnull(f, &b, "max_reserved_plus_max_outside_bytes");
		if (x->max_res.valid && x->max_alloc.valid)
			ji(f, &b, "max_reserved_minus_max_allocated_bytes",
			   (int64_t)(x->max_res.v.reserved - x->max_alloc.v.allocated));
		else
			jnull(f, &b, "max_reserved_minus_max_allocated_bytes");
		js(f, &b, "note", bound_note);
		fputc('}', f);
	}
	fputc('}', f);
}

static void j_devices(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_occ_t *o, int warm)
{
	int n = 0;
	fputc('[', f);
	for (size_t d = 0; d < o->n_dev; d++) {
		const gmt_pdev_t *p = &o->dev[d];
		if (p->ordinal < 0)
			continue;
		int q = 1;
		fputs(n++ ? ",{" : "{", f);
		ji(f, &q, "ordinal", p->ordinal);
		jk(f, &q, "requested");
		j_fig(f, s, &p->fig[GMT_VIEW_REQUESTED], warm, o->failed);
		jk(f, &q, "held");
		j_fig(f, s, &p->fig[GMT_VIEW_HELD], warm, o->failed);
		j_ck_pair(f, &q, "checkpoint_at_start", ph, s, p->ck_start);
		j_ck_pair(f, &q, "checkpoint_at_end", ph, s, p->ck_end);
		fputc('}', f);
	}
	fputc(']', f);
}

static void j_occ(FILE *f, const gmt_phases_t *ph, const gmt_summary_t *s, const gmt_occ_t *o)
{
	int q = 1;
	fputc('{', f);
	ju(f, &q, "occurrence", o->k);
	js(f, &q, "temperature", o->k == 1 ? "cold" : "warm");
	js(f, &q, "source", source_name(o->source));
	js(f, &q, "domain", o->domain_id ? gmt_phases_string(ph, o->domain_id) : NULL);
	ju(f, &q, "thread", o->thread);
	ju(f, &q, "begin_ts_ns", o->begin_ts);
	jsec(f, &q, "begin_s", since_s(s, o->begin_ts));
	ju(f, &q, "end_ts_ns", o->end_ts);
	jsec(f, &q, "end_s", since_s(s, o->end_ts));
	ju(f, &q, "duration_ns", o->end_ts - o->begin_ts);
	jk(f, &q, "terminated");
	fputs(o->ended ? "true" : "false", f);
	jk(f, &q, "failure");
	if (o->failed) {
		int w = 1;
		fputc('{', f);
		js(f, &w, "event", o->fail_type == GMT_EV_FW_OOM ? "fw_oom" : "alloc_fail");
		ju(f, &w, "ts_ns", o->fail_ts);
		jsec(f, &w, "since_first_event_s", since_s(s, o->fail_ts));
		ji(f, &w, "device", o->fail_dev);
		ju(f, &w, "requested_bytes", o->fail_size);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	jk(f, &q, "devices");
	j_devices(f, ph, s, o, 0);
	fputc('}', f);
}

void gmt_phases_json_begin(FILE *f, const char *command, const char *extra)
{
	fprintf(f, "{\"tool\":\"gpumemtrace-analyze\",\"tool_version\":");
	gmt_json_str(f, GMT_VERSION);
	fprintf(f, ",\"command\":\"%s\"%s%s,\"traces\":[", command, extra && *extra ? "," : "",
		extra ? extra : "");
}

void gmt_phases_json_end(FILE *f)
{
	fputs("]}\n", f);
}

void gmt_phases_report_json(FILE *f, gmt_phases_t *ph, int first)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	gmt_levels_t *lv = gmt_phases_levels(ph);
	int fi = 1;
	if (!first)
		fputc(',', f);
	fputs("\n{", f);
	js(f, &fi, "file", s->file);
	js(f, &fi, "status", gmt_status_key(s));
	jk(f, &fi, "decode");
	{
		int d = 1;
		fputc('{', f);
		ju(f, &d, "bytes_ok", s->bytes_ok);
		ju(f, &d, "file_size", s->file_size);
		jk(f, &d, "ended_cleanly");
		fputs(s->ended_cleanly ? "true" : "false", f);
		if (s->status != GMT_DECODE_OK)
			js(f, &d, "message", s->message);
		else
			jnull(f, &d, "message");
		fputc('}', f);
	}
	if (!analysed(s)) {
		fputc('}', f);
		return;
	}
	jk(f, &fi, "events");
	{
		int e = 1;
		fputc('{', f);
		ju(f, &e, "total", s->events);
		ju(f, &e, "side", s->side_events);
		if (s->have_ts) {
			ju(f, &e, "first_ts_ns", s->first_ts);
			ju(f, &e, "last_ts_ns", s->last_ts);
		} else {
			jnull(f, &e, "first_ts_ns");
			jnull(f, &e, "last_ts_ns");
		}
		fputc('}', f);
	}
	jk(f, &fi, "devices");
	fputc('[', f);
	int devs[256];
	size_t nd = gmt_phases_devices(ph, devs, 256);
	if (nd > 256)
		nd = 256;
	for (size_t i = 0; i < nd; i++) {
		gmt_lv_dev_info_t info;
		gmt_lv_vals_t v;
		gmt_levels_dev_info(lv, devs[i], &info);
		gmt_levels_values(lv, devs[i], GMT_VIEW_REQUESTED, &v);
		int q = 1;
		fputs(i ? ",{" : "{", f);
		ji(f, &q, "ordinal", devs[i]);
		jk(f, &q, "sources");
		{
			int w = 1;
			fputc('{', f);
			js(f, &w, "allocated", gmt_asrc_name(v.asrc));
			js(f, &w, "reserved", gmt_rsrc_name(v.rsrc));
			js(f, &w, "outside", outside_source(&v));
			js(f, &w, "device_used", v.has_used ? "cuMemGetInfo samples" : NULL);
			fputc('}', f);
		}
		jk(f, &q, "outside_allocations");
		{
			int w = 1;
			fputc('{', f);
			jk(f, &w, "count_by_owner");
			fputc('{', f);
			for (int o = 0; o < GMT_DOWNERS; o++)
				fprintf(f, "%s\"%s\":%" PRIu64, o ? "," : "", gmt_downer_key(o), info.outliers[o]);
			fputc('}', f);
			jk(f, &w, "largest");
			fputc('[', f);
			for (size_t k = 0; k < info.n_top; k++) {
				const gmt_outlier_t *o = &info.top[k];
				int z = 1;
				fputs(k ? ",{" : "{", f);
				ju(f, &z, "bytes", o->size);
				js(f, &z, "owner", gmt_downer_key(o->owner < GMT_DOWNERS ? o->owner : GMT_DOWNER_OTHER));
				js(f, &z, "kind", gmt_kind_name(o->kind));
				ju(f, &z, o->is_handle ? "handle" : "address", o->addr);
				ji(f, &z, "device", o->dev);
				ju(f, &z, "ts_ns", o->ts);
				jsec(f, &z, "since_first_event_s", since_s(s, o->ts));
				if (o->freed_ts)
					ju(f, &z, "freed_ts_ns", o->freed_ts);
				else
					jnull(f, &z, "freed_ts_ns");
				ju(f, &z, "stack", o->stack);
				fputc('}', f);
			}
			fputs("]}", f);
		}
		jk(f, &q, "framework");
		{
			int w = 1;
			fputc('{', f);
			ju(f, &w, "lost_events", info.fw_lost);
			if (info.fw_lost)
				ju(f, &w, "lost_first_ts_ns", info.fw_lost_first_ts);
			else
				jnull(f, &w, "lost_first_ts_ns");
			ju(f, &w, "anomalies", info.fw_anomalies);
			fputc('}', f);
		}
		j_checkpoints(f, &q, ph, s, devs[i]);
		fputc('}', f);
	}
	fputc(']', f);

	jk(f, &fi, "phases");
	fputc('[', f);
	size_t nn;
	const gmt_phase_name_t *names = gmt_phases_names(ph, &nn);
	for (size_t i = 0; i < nn; i++) {
		const gmt_phase_name_t *n = &names[i];
		int q = 1;
		fputs(i ? ",{" : "{", f);
		js(f, &q, "name", gmt_phases_string(ph, n->name_id));
		ju(f, &q, "occurrences", n->occurrences);
		ju(f, &q, "failed", n->failed);
		ju(f, &q, "unterminated", n->unterminated);
		jk(f, &q, "listed");
		fputc('[', f);
		for (size_t k = 0; k < n->n_listed; k++) {
			if (k)
				fputc(',', f);
			j_occ(f, ph, s, n->listed[k]);
		}
		fputc(']', f);
		ju(f, &q, "not_listed", n->occurrences - n->n_listed);
		jk(f, &q, "warm");
		if (n->n_warm) {
			int w = 1;
			fputc('{', f);
			ju(f, &w, "occurrences", n->n_warm);
			ju(f, &w, "failed", (uint64_t)n->warm.failed);
			js(f, &w, "note", aggregate_note);
			jk(f, &w, "devices");
			j_devices(f, ph, s, &n->warm, 1);
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputc(']', f);
	jk(f, &fi, "range_anomalies");
	{
		const gmt_phase_anomalies_t *a = gmt_phases_anomalies(ph);
		int w = 1;
		fputc('{', f);
		ju(f, &w, "unmatched_ends", a->unmatched_ends);
		ju(f, &w, "name_mismatches", a->name_mismatches);
		ju(f, &w, "dropped_ranges", a->dropped_ranges);
		fputc('}', f);
	}
	fputc('}', f);
}
