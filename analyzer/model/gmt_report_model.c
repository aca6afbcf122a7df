/*
 * gmt_report_model.c - the report model of gmt_report_model.h.
 *
 * While a trace runs, the phase engine's hook keeps, per ordinal, the
 * values of the latest instant (requested view) and writes one row to the
 * process's stream when the time moves on and they differ from the row
 * before (or a synchronisation fell on that nanosecond). A row is: the
 * time since the previous row (uvarint), a mask of what changed (uvarint),
 * the main-stream events since the previous row (uvarint: the row is the
 * state after event number seq, as gmt_liveset.h counts them, so that the
 * live set at any row can be taken), each changed value as a zigzag delta
 * (wrapping differences; held's beyond what the others' differences
 * predict, held_pred: on most rows nothing), the flags when they changed,
 * the synchronisations when any. A trace with
 * an END record gets a last row of zeros there (the process ended: it
 * holds nothing after). Reading a device merges its members' streams by
 * time (all rows of one nanosecond applied before the instant is made) and
 * sums them (combine()).
 *
 * Where rows go (pdev_t.route): the stream (R_SPOOL) until the file passes
 * its budget, then nowhere (R_COUNT: the stream is given up); when a trace
 * runs again (rerun()), into a device's merge (R_MERGE: pmerge_t, the
 * other members' streams read alongside), a new stream (R_SPOOL) or
 * nowhere (R_SKIP). A run again must give the rows of the first run
 * (-EIO otherwise). A trace whose time line took two passes (a side
 * stream) delivers rows to a merge only in its second.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_group.h"
#include "model/gmt_report_model.h"
#include "model/gmt_results.h"
#include "model/gmt_sites_model.h"
#include "support/gmt_spool.h"

/* One process's values on one device, as its rows carry them. */
enum { F_ALLOC, F_RES, F_OUT0, F_USED = F_OUT0 + GMT_DOWNERS, F_USED_TS, F_HELD, NF };
enum { HAS_ALLOC = 1, HAS_RES = 2, HAS_USED = 4 };
#define M_FLAGS (1u << NF)
#define M_SYNCS (1u << (NF + 1))

typedef struct mvals {
	uint64_t f[NF];
	uint8_t flags;
	uint64_t seq;            /* main-stream events applied (gmt_liveset.h's
				    numbering): the state is after event seq */
} mvals_t;

struct pmerge;
static int pmerge_row(struct pmerge *pm, const mvals_t *cur, uint64_t ts, uint64_t syncs);

/* Where an ordinal's rows go while its trace runs. */
enum {
	R_SPOOL = 0,             /* its stream in the temporary file           */
	R_COUNT,                 /* counted only: the temporary file reached its
				    budget (the stream was given up)           */
	R_MERGE,                 /* a re-run: straight into a device's merge   */
	R_SKIP                   /* a re-run: not wanted                       */
};

/* A trace's ordinal while the trace runs. */
typedef struct pdev {
	int route;               /* R_*                                        */
	int abandoned;           /* R_SPOOL given up for R_COUNT               */
	struct pmerge *pm;       /* R_MERGE                                    */
	int open;                /* seen (R_SPOOL: stream is open)             */
	size_t stream;
	mvals_t cur;             /* the latest values                          */
	int due;                 /* a row may be due at due_ts                 */
	uint64_t due_ts, syncs;
	int written;             /* a row was written: last, last_ts           */
	mvals_t last;
	uint64_t last_ts;
	uint64_t rows, first_ts, syncs_total;
	uint8_t asrc_seen, rsrc_seen;   /* 1 << gmt_alloc_src / gmt_res_src of
					   the values it saw known           */
} pdev_t;

/* A trace's ordinal once the trace has run. */
typedef struct tmem {
	int ordinal;
	size_t stream;           /* SIZE_MAX: no rows, or given up             */
	uint64_t rows, first_ts, last_ts, syncs;
	int abandoned;           /* rows counted, not kept: a re-run gives them */
	uint8_t asrc_seen, rsrc_seen;   /* pdev_t's */
} tmem_t;

typedef struct ptrace {
	gmt_phases_t *ph;
	tmem_t *mem;
	size_t n_mem;
	unsigned resets;         /* the engine's resets in its run (2: the time
				    line took two passes)                    */
} ptrace_t;

struct gmt_report_priv {
	gmt_phase_opts_t po;
	gmt_report_opts_t ro;
	gmt_spool_t *sp;
	ptrace_t *t;             /* parallel to the model's traces */
	size_t cap;
	/* the trace being run */
	int running;
	gmt_phases_t *ph;        /* synthetic input: the engine made by begin */
	size_t run_trace;        /* the trace the hook works for               */
	int budget_on;           /* the temporary file's budget applies        */
	uint64_t budget;         /* its bytes (opts.temp_max)                  */
	unsigned resets;         /* the hook's resets in this run              */
	unsigned want_resets;    /* a re-run: rows before this many resets are
				    the first pass of two: not delivered      */
	uint64_t seq;            /* main-stream events of the trace so far     */
	pdev_t dev[GMT_RM_MAX_ORDINALS];
	int due[GMT_RM_MAX_ORDINALS];
	size_t n_due;
	int err;
};

static const char *const series_keys[GMT_RM_SERIES] = {
	"allocated", "cache", "outside_application", "outside_nccl", "outside_cublas",
	"outside_cudnn", "outside_other", "rest", "device_used",
};
static const char *const series_labels[GMT_RM_SERIES] = {
	"framework allocated",
	"reserved, not allocated (the framework's cache)",
	"outside the framework: application",
	"outside the framework: nccl",
	"outside the framework: cublas",
	"outside the framework: cudnn",
	"outside the framework: other",
	"rest of device used (context, other processes: an estimate from samples)",
	"device used (cuMemGetInfo samples)",
};

const char *gmt_rm_series_key(unsigned s)
{
	return s < GMT_RM_SERIES ? series_keys[s] : "?";
}

const char *gmt_rm_series_label(unsigned s)
{
	return s < GMT_RM_SERIES ? series_labels[s] : "?";
}

/* The outside series of a device that never had a framework event: what
 * they hold then (docs/analyzer.md, "Quantities": every driver byte, but
 * the stream-ordered ones when those are the allocated). */
static const char *const outside_stream_labels[GMT_DOWNERS] = {
	"driver-level, not stream-ordered (no framework): application",
	"driver-level, not stream-ordered (no framework): nccl",
	"driver-level, not stream-ordered (no framework): cublas",
	"driver-level, not stream-ordered (no framework): cudnn",
	"driver-level, not stream-ordered (no framework): other",
};
static const char *const outside_driver_labels[GMT_DOWNERS] = {
	"driver-level (no framework): application",
	"driver-level (no framework): nccl",
	"driver-level (no framework): cublas",
	"driver-level (no framework): cudnn",
	"driver-level (no framework): other",
};

const char *gmt_rm_series_label_of(const gmt_rm_device_t *d, unsigned s)
{
	const unsigned fw_a = 1u << GMT_ASRC_FRAMEWORK, st_a = 1u << GMT_ASRC_STREAM;
	const unsigned fw_r = 1u << GMT_RSRC_SEGMENTS, pool_r = 1u << GMT_RSRC_POOL;
	if (s == GMT_RM_ALLOCATED && (d->asrc_seen & st_a))
		return d->asrc_seen & fw_a ? "allocated (by a framework, else the driver's stream-ordered allocations)"
					   : "allocated (the driver's stream-ordered allocations: no framework)";
	if (s == GMT_RM_CACHE && (d->rsrc_seen & pool_r))
		return d->rsrc_seen & fw_r ? "reserved, not allocated (a framework's cache, else the pools' reserve)"
					   : "reserved, not allocated (the stream-ordered pools' reserve)";
	if ((d->asrc_seen & fw_a) || (d->rsrc_seen & fw_r))
		return gmt_rm_series_label(s);
	/* no framework */
	if (s == GMT_RM_ALLOCATED)
		return "allocated (unknown: no framework, no stream-ordered allocations)";
	if (s == GMT_RM_CACHE && !(d->rsrc_seen & pool_r))
		return "reserved, not allocated (unknown: no framework, no pools)";
	if (s >= GMT_RM_OUTSIDE && s < GMT_RM_OUTSIDE + GMT_DOWNERS)
		return d->asrc_seen & st_a ? outside_stream_labels[s - GMT_RM_OUTSIDE]
					   : outside_driver_labels[s - GMT_RM_OUTSIDE];
	return gmt_rm_series_label(s);
}

/* ---- rows ------------------------------------------------------------------ */

/* What held's difference is predicted to be from the others' differences
 * dv (flags: the row's): the base's (reserved when known, else allocated)
 * plus every outside owner's. Held is usually exactly that sum, so a row
 * carries only what held moved beyond it, and on most rows nothing.
 * held_pred_of: the same from the three sums (a row read back keeps those,
 * mrd_next), held_pred from a row's differences. */
static inline uint64_t held_pred_of(uint64_t d_alloc, uint64_t d_res, uint64_t d_out, unsigned flags)
{
	return ((flags & HAS_RES) ? d_res : d_alloc) + d_out;
}

static inline uint64_t held_pred(const uint64_t *dv, unsigned flags)
{
	uint64_t d_out = 0;
	for (unsigned w = 0; w < GMT_DOWNERS; w++)
		d_out += dv[F_OUT0 + w];
	return held_pred_of(dv[F_ALLOC], dv[F_RES], d_out, flags);
}

static int write_row(gmt_report_priv_t *p, pdev_t *d)
{
	uint8_t buf[16 * 12];
	size_t n = 0;
	unsigned mask = 0;
	const mvals_t *prev = d->written ? &d->last : NULL;
	static const mvals_t zero;
	if (!prev)
		prev = &zero;
	uint64_t dv[NF];
	for (unsigned i = 0; i < NF; i++)
		dv[i] = d->cur.f[i] - prev->f[i];
	dv[F_HELD] -= held_pred(dv, d->cur.flags);
	/* the mask of the fields that moved, one compare each (unrolled) */
#define MV(i) ((unsigned)(dv[i] != 0) << (i))
	_Static_assert(NF == 10, "the mask names every field");
	mask = MV(0) | MV(1) | MV(2) | MV(3) | MV(4) | MV(5) | MV(6) | MV(7) | MV(8) | MV(9);
#undef MV
	if (d->cur.flags != prev->flags)
		mask |= M_FLAGS;
	if (d->syncs)
		mask |= M_SYNCS;
	if (!mask && d->written)
		return 0;  /* the same values: the row before stands for them */
	if (d->written && d->due_ts < d->last_ts)
		d->due_ts = d->last_ts;  /* never back in time */
	int rc = 0;
	if (d->route == R_MERGE && p->resets >= p->want_resets)
		rc = pmerge_row(d->pm, &d->cur, d->due_ts, d->syncs);
	if (d->route != R_SPOOL)
		goto written;
	n += gmt_uvarint_put(buf + n, d->due_ts - (d->written ? d->last_ts : 0));
	n += gmt_uvarint_put(buf + n, mask);
	n += gmt_uvarint_put(buf + n, d->cur.seq - prev->seq);
	for (unsigned m = mask & ((1u << NF) - 1); m; m &= m - 1)
		n += gmt_uvarint_put(buf + n, gmt_zigzag((int64_t)dv[__builtin_ctz(m)]));
	if (mask & M_FLAGS)
		buf[n++] = d->cur.flags;
	if (mask & M_SYNCS)
		n += gmt_uvarint_put(buf + n, d->syncs);
	rc = gmt_spool_write(p->sp, d->stream, buf, n);
	if (!rc && p->budget_on && (!p->budget || gmt_spool_file_bytes(p->sp) > p->budget)) {
		/* the file reached its budget: this stream is given up (its rows
		   come again from a re-run of the trace when read) */
		gmt_spool_truncate(p->sp, d->stream);
		d->route = R_COUNT;
		d->abandoned = 1;
	}
written:
	if (rc)
		return rc;
	if (!d->rows++)
		d->first_ts = d->due_ts;
	d->last = d->cur;
	d->last_ts = d->due_ts;
	d->written = 1;
	d->syncs_total += d->syncs;
	d->syncs = 0;
	return 0;
}

/* The rows due before ts are written. */
static int advance(gmt_report_priv_t *p, uint64_t ts)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n_due; i++) {
		pdev_t *d = &p->dev[p->due[i]];
		if (d->due_ts == ts) {
			p->due[k++] = p->due[i];
			continue;
		}
		d->due = 0;
		int rc = write_row(p, d);
		if (rc)
			return rc;
	}
	p->n_due = k;
	return 0;
}

/* Ordinal o has something at ts: a row is due then. */
static int touch(gmt_report_priv_t *p, int o, uint64_t ts, pdev_t **out)
{
	pdev_t *d = &p->dev[o];
	int rc;
	if (!d->open) {
		if (d->route == R_SPOOL && (rc = gmt_spool_open(p->sp, &d->stream)))
			return rc;
		d->open = 1;
	}
	if ((rc = advance(p, ts)))
		return rc;
	if (!d->due) {
		d->due = 1;
		d->due_ts = ts;
		p->due[p->n_due++] = o;
	}
	*out = d;
	return 0;
}

/* ---- the phase engine's hook ------------------------------------------------ */

static gmt_rm_trace_t *cur_trace(gmt_report_model_t *m)
{
	return &m->traces[m->priv->run_trace];
}

static int h_reset(void *ctx)
{
	gmt_report_model_t *m = ctx;
	gmt_report_priv_t *p = m->priv;
	p->resets++;
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++) {
		pdev_t *d = &p->dev[o];
		if (d->open && d->route == R_SPOOL)
			gmt_spool_truncate(p->sp, d->stream);
		pdev_t keep = *d;
		memset(d, 0, sizeof(*d));
		d->stream = keep.stream;
		d->open = keep.open;
		d->route = keep.route;  /* a stream given up stays given up */
		d->abandoned = keep.abandoned;
		d->pm = keep.pm;
	}
	p->n_due = 0;
	p->seq = 0;
	gmt_rm_trace_t *t = cur_trace(m);
	t->entry_points_untraced = t->entry_points_identified = t->syncs = 0;
	t->devices_left_out = 0;
	return 0;
}

static uint64_t last_seen_ts(const gmt_report_priv_t *p)
{
	uint64_t ts = 0;
	for (size_t i = 0; i < p->n_due; i++)
		if (p->dev[p->due[i]].due_ts > ts)
			ts = p->dev[p->due[i]].due_ts;
	return ts;
}

static int h_instant(void *ctx, gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n, int changed)
{
	gmt_report_model_t *m = ctx;
	gmt_report_priv_t *p = m->priv;
	(void)changed;
	uint64_t floor = last_seen_ts(p);
	ts = ts < floor ? floor : ts;  /* the time line never goes back */
	for (size_t i = 0; i < n; i++) {
		int o = devs[i];
		if (o < 0)
			continue;
		if (o >= GMT_RM_MAX_ORDINALS) {
			cur_trace(m)->devices_left_out++;
			continue;
		}
		pdev_t *d;
		int rc = touch(p, o, ts, &d);
		if (rc)
			return p->err = rc;
		gmt_lv_vals_t v;
		gmt_levels_values(gmt_phases_levels(ph), o, GMT_VIEW_REQUESTED, &v);
		mvals_t *c = &d->cur;
		c->f[F_ALLOC] = v.has_allocated ? v.allocated : 0;
		c->f[F_RES] = v.has_reserved ? v.reserved : 0;
		for (unsigned w = 0; w < GMT_DOWNERS; w++)
			c->f[F_OUT0 + w] = v.outside_owner[w];
		c->f[F_USED] = v.has_used ? v.used : 0;
		c->f[F_USED_TS] = v.has_used ? v.used_ts : 0;
		c->f[F_HELD] = v.held;
		c->flags = (uint8_t)((v.has_allocated ? HAS_ALLOC : 0) | (v.has_reserved ? HAS_RES : 0) |
				     (v.has_used ? HAS_USED : 0));
		if (v.has_allocated)
			d->asrc_seen |= (uint8_t)(1u << (v.asrc & 7));
		if (v.has_reserved)
			d->rsrc_seen |= (uint8_t)(1u << (v.rsrc & 7));
	}
	return 0;
}

/* A main-stream event has been applied: the rows due at its time are the
   state after it (the event numbers of gmt_liveset.h). */
static void count_event(gmt_report_priv_t *p, const gmt_devent_t *e, int side)
{
	if (side)
		return;
	p->seq++;
	uint64_t floor = last_seen_ts(p), ts = e->ts < floor ? floor : e->ts;
	for (size_t i = 0; i < p->n_due; i++) {
		pdev_t *d = &p->dev[p->due[i]];
		if (d->due_ts == ts)
			d->cur.seq = p->seq;
	}
}

static int h_event_apply(gmt_report_model_t *m, const gmt_devent_t *e, int side)
{
	gmt_report_priv_t *p = m->priv;
	gmt_rm_trace_t *t = cur_trace(m);
	(void)side;
	if (e->type == GMT_EV_PROC_UNIDENTIFIED) {
		if (e->aux)
			t->entry_points_identified++;
		else
			t->entry_points_untraced++;
		return 0;
	}
	if (e->type != GMT_EV_SYNC || e->device < 0)
		return 0;
	if (e->device >= GMT_RM_MAX_ORDINALS) {
		t->devices_left_out++;
		return 0;
	}
	uint64_t floor = last_seen_ts(p), ts = e->ts < floor ? floor : e->ts;
	pdev_t *d;
	int rc = touch(p, e->device, ts, &d);
	if (rc)
		return p->err = rc;
	d->syncs++;
	t->syncs++;
	return 0;
}

static int h_event(void *ctx, const gmt_devent_t *e, int side)
{
	gmt_report_model_t *m = ctx;
	gmt_report_priv_t *p = m->priv;
	int rc = h_event_apply(m, e, side);
	if (!rc)
		count_event(p, e, side);
	return rc;
}

/* ---- traces ------------------------------------------------------------------ */

gmt_report_model_t *gmt_report_model_new(const gmt_report_opts_t *o)
{
	gmt_report_model_t *m = calloc(1, sizeof(*m));
	if (!m || !(m->priv = calloc(1, sizeof(*m->priv))) || !(m->priv->sp = gmt_spool_new())) {
		if (m)
			free(m->priv);
		free(m);
		return NULL;
	}
	if (o)
		m->priv->ro = *o;
	m->priv->budget = o && o->temp_max_set ? o->temp_max : GMT_REPORT_TEMP_MAX;
	gmt_phase_opts_t *po = &m->priv->po;
	po->domains = o ? o->domains : NULL;
	po->n_domains = o ? o->n_domains : 0;
	po->patterns = o ? o->patterns : NULL;
	po->n_patterns = o ? o->n_patterns : 0;
	po->all_depths = o ? o->all_depths : 0;
	po->max_listed = o && o->max_listed ? o->max_listed : GMT_PHASES_DEFAULT_LISTED;
	po->top_n = GMT_PHASES_DEFAULT_TOP;
	return m;
}

void gmt_report_model_free(gmt_report_model_t *m)
{
	if (!m)
		return;
	gmt_report_priv_t *p = m->priv;
	for (size_t i = 0; i < m->n_traces; i++) {
		gmt_phases_free(p->t[i].ph);
		free(p->t[i].mem);
		gmt_sites_model_free(m->traces[i].sites);
	}
	free(p->t);
	for (size_t i = 0; i < m->n_devices; i++) {
		free(m->devices[i].members);
		free(m->devices[i].phases);
		free(m->devices[i].fails);
	}
	free(m->devices);
	if (p->running)
		gmt_phases_free(p->ph);
	gmt_spool_free(p->sp);
	free(p);
	free(m->traces);
	free(m);
}

static int trace_new(gmt_report_model_t *m, const char *file)
{
	gmt_report_priv_t *p = m->priv;
	if (m->n_traces == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 8;
		gmt_rm_trace_t *t = realloc(m->traces, c * sizeof(*t));
		if (!t)
			return -ENOMEM;
		m->traces = t;
		ptrace_t *q = realloc(p->t, c * sizeof(*q));
		if (!q)
			return -ENOMEM;
		p->t = q;
		p->cap = c;
	}
	memset(&m->traces[m->n_traces], 0, sizeof(m->traces[0]));
	memset(&p->t[m->n_traces], 0, sizeof(p->t[0]));
	m->traces[m->n_traces].file = file;
	m->n_traces++;
	p->run_trace = m->n_traces - 1;
	memset(p->dev, 0, sizeof(p->dev));
	p->n_due = 0;
	p->seq = 0;
	p->err = 0;
	p->resets = p->want_resets = 0;
	p->budget_on = 0;
	p->running = 1;
	return 0;
}

static void hook_of(gmt_report_model_t *m, gmt_phases_hook_t *h)
{
	memset(h, 0, sizeof(*h));
	h->ctx = m;
	h->reset = h_reset;
	h->instant = h_instant;
	h->event = h_event;
}

static const char *status_key(const gmt_decode_result_t *res)
{
	switch (res->status) {
	case GMT_DECODE_OK: return res->ended_cleanly ? "clean" : "cut";
	case GMT_DECODE_DAMAGED: return "damaged";
	case GMT_DECODE_REFUSED: return "refused";
	case GMT_DECODE_IO: return "unreadable";
	default: return "stopped";
	}
}

/* The rows still due, and a process that ended holds nothing after its
   end (the driver releases what it left): a last row of zeros at its END,
   so that a process of the same device that runs later is not summed with
   it. A cut trace keeps its last values (what came after is unknown). */
static int last_rows(gmt_report_priv_t *p, const gmt_summary_t *s)
{
	int rc = advance(p, UINT64_MAX);
	if (!rc && s->has_end)
		for (int o = 0; o < GMT_RM_MAX_ORDINALS && !rc; o++) {
			pdev_t *d = &p->dev[o];
			if (!d->open || !d->written)
				continue;
			/* the device-used sample stands: it said what the device
			   used then, whoever used it */
			mvals_t keep = d->last;
			memset(&d->cur, 0, sizeof(d->cur));
			d->cur.f[F_USED] = keep.f[F_USED];
			d->cur.f[F_USED_TS] = keep.f[F_USED_TS];
			d->cur.flags = keep.flags;
			d->cur.seq = p->seq;
			d->due_ts = s->end.ts > d->last_ts ? s->end.ts : d->last_ts + 1;
			d->syncs = 0;
			rc = write_row(p, d);
		}
	return rc;
}

/* The trace has run: its last rows, its members. */
static int trace_end(gmt_report_model_t *m, gmt_phases_t *ph, const gmt_decode_result_t *res)
{
	gmt_report_priv_t *p = m->priv;
	gmt_rm_trace_t *t = cur_trace(m);
	ptrace_t *pt = &p->t[m->n_traces - 1];
	int rc = p->err;
	p->running = 0;
	pt->ph = ph;
	if (res)
		t->res = *res;
	else
		memset(&t->res, 0, sizeof(t->res));
	if (!ph)
		return -ENOMEM;
	t->s = gmt_phases_summary(ph);
	if (!res) {
		t->res.status = GMT_DECODE_OK;
		t->res.ended_cleanly = t->s->ended_cleanly;
	}
	t->status_key = status_key(&t->res);
	m->events += t->s->events;
	pt->resets = p->resets;
	if (!rc)
		rc = last_rows(p, t->s);
	size_t n = 0;
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
		n += p->dev[o].open;
	for (size_t k = 0; k < t->s->n_dev; k++) {
		const gmt_dev_summary_t *d = t->s->dev[k];
		n += d && d->ordinal >= 0 && d->ordinal < GMT_RM_MAX_ORDINALS && d->used && !p->dev[d->ordinal].open;
	}
	if (!(pt->mem = calloc(n ? n : 1, sizeof(*pt->mem))))
		return -ENOMEM;
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++) {
		pdev_t *d = &p->dev[o];
		const gmt_dev_summary_t *ds = gmt_summary_device(t->s, o);
		if (!d->open && !(ds && ds->used))
			continue;
		tmem_t *tm = &pt->mem[pt->n_mem++];
		*tm = (tmem_t){ o, SIZE_MAX, 0, 0, 0, 0, 0, 0, 0 };
		if (d->open) {
			int r = gmt_spool_close(p->sp, d->stream);
			rc = rc ? rc : r;
			if (d->rows)
				*tm = (tmem_t){ o, d->abandoned ? SIZE_MAX : d->stream, d->rows, d->first_ts,
						d->last_ts, d->syncs_total, d->abandoned, 0, 0 };
			t->instants += d->rows;
		}
		tm->asrc_seen = d->asrc_seen;
		tm->rsrc_seen = d->rsrc_seen;
	}
	return rc;
}

int gmt_report_model_add(gmt_report_model_t *m, const char *path)
{
	int rc = trace_new(m, path);
	if (rc)
		return rc;
	gmt_phases_hook_t h;
	hook_of(m, &h);
	gmt_phases_t *ph = NULL;
	gmt_decode_result_t res;
	memset(&res, 0, sizeof(res));
	/* a trace on disk can be read again: its streams may be given up */
	m->priv->budget_on = 1;
	int st = gmt_phases_run(path, &m->priv->po, &h, &ph, &res);
	m->priv->budget_on = 0;
	rc = trace_end(m, ph, &res);
	cur_trace(m)->from_file = 1;
	return rc ? rc : st;
}

gmt_phases_t *gmt_report_model_begin(gmt_report_model_t *m, const char *name)
{
	if (trace_new(m, name))
		return NULL;
	gmt_report_priv_t *p = m->priv;
	if (!(p->ph = gmt_phases_new(name, &p->po)))
		return NULL;
	gmt_phases_hook_t h;
	hook_of(m, &h);
	gmt_phases_set_hook(p->ph, &h);
	return p->ph;
}

int gmt_report_model_event(gmt_report_model_t *m, const gmt_devent_t *e, int side)
{
	gmt_report_priv_t *p = m->priv;
	int rc = gmt_phases_event_from(p->ph, e, side);
	return rc ? rc : h_event(m, e, side);
}

int gmt_report_model_end(gmt_report_model_t *m, const gmt_decode_result_t *res)
{
	gmt_report_priv_t *p = m->priv;
	int rc = gmt_phases_finish(p->ph, res);
	int r = trace_end(m, p->ph, res);
	p->ph = NULL;
	return rc ? rc : r;
}

/* ---- reading a device's streams ------------------------------------------- */

typedef struct mrd {
	gmt_spool_reader_t r;
	int open;
	int has_next;            /* next, next_ts: its next row, read ahead    */
	uint64_t next_ts, next_syncs;
	mvals_t next;
	int started;             /* state: the values in force                 */
	mvals_t state;
} mrd_t;

static __attribute__((noinline)) int get_uv_slow(gmt_spool_reader_t *r, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned sh = 0; sh < 64; sh += 7) {
		if (!gmt_spool_reader_fill(r))
			return r->err ? r->err : -EIO;
		uint8_t b = r->buf[r->pos++];
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EIO;
}

/* An unsigned LEB128 value: from the buffer at once when its longest
 * form (10 bytes) is there, else a byte at a time across chunks. */
static inline __attribute__((always_inline)) int get_uv(gmt_spool_reader_t *r, uint64_t *v)
{
	if (r->len - r->pos < 10)
		return get_uv_slow(r, v);
	const uint8_t *p = r->buf + r->pos;
	uint64_t x = 0;
	for (unsigned i = 0; i < 10; i++) {   /* as get_uv_slow, without the fills */
		const uint8_t b = p[i];
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			r->pos += i + 1;
			*v = x;
			return 0;
		}
	}
	return -EIO;
}

/* A row's longest form: its three leading values, NF values and the
 * synchronisations as 10-byte varints, and the flags' byte. */
#define ROW_BYTES_MAX ((3 + NF + 1) * 10 + 1)

/* An unsigned LEB128 value at q (at least 10 bytes readable): the byte
 * after it, or NULL when it runs past 10 bytes. */
static inline __attribute__((always_inline)) const uint8_t *uv_at(const uint8_t *q, uint64_t *v)
{
	uint64_t x = q[0];
	if (x < 0x80) {
		*v = x;
		return q + 1;
	}
	x &= 0x7f;
	for (unsigned i = 1; i < 10; i++) {
		const uint64_t b = q[i];
		x |= (b & 0x7f) << (7 * i);
		if (b < 0x80) {
			*v = x;
			return q + i + 1;
		}
	}
	return NULL;
}

/* A row's difference v of field i applied to x; dd keeps what held_pred
 * takes (the row's flags come after its values) and held's own. */
enum { D_ALLOC, D_RES, D_OUT, D_HELD };
static inline __attribute__((always_inline)) void field_add(mvals_t *x, unsigned i, uint64_t v, uint64_t dd[4])
{
	if (i == F_HELD) {
		dd[D_HELD] = v;
		return;
	}
	x->f[i] += v;
	if (i == F_ALLOC)
		dd[D_ALLOC] = v;
	else if (i == F_RES)
		dd[D_RES] = v;
	else if (i >= F_OUT0 && i < F_OUT0 + GMT_DOWNERS)
		dd[D_OUT] += v;
}

/* Reads the member's next row (values cumulative on the one before): from
 * the chunk at once when the longest row fits in what is left of it, else
 * a value at a time across chunks. */
static int mrd_next(mrd_t *d)
{
	d->has_next = 0;
	if (d->r.pos >= d->r.len && !gmt_spool_reader_fill(&d->r))
		return d->r.err;
	uint64_t dt, mask, x, syncs = 0;
	uint64_t dd[4] = { 0 };
	mvals_t *nx = &d->next;
	int rc;
	if (d->r.len - d->r.pos >= ROW_BYTES_MAX) {
		const uint8_t *q = d->r.buf + d->r.pos;
		if (!(q = uv_at(q, &dt)) || !(q = uv_at(q, &mask)) || !(q = uv_at(q, &x)))
			return -EIO;
		nx->seq += x;
		for (unsigned m = mask & ((1u << NF) - 1); m; m &= m - 1) {
			if (!(q = uv_at(q, &x)))
				return -EIO;
			const unsigned i = (unsigned)__builtin_ctz(m);
			field_add(nx, i, (uint64_t)gmt_unzigzag(x), dd);
		}
		if (mask & M_FLAGS)
			nx->flags = *q++;
		if ((mask & M_SYNCS) && !(q = uv_at(q, &syncs)))
			return -EIO;
		d->r.pos = (size_t)(q - d->r.buf);
	} else {
		if ((rc = get_uv(&d->r, &dt)) || (rc = get_uv(&d->r, &mask)) || (rc = get_uv(&d->r, &x)))
			return rc;
		nx->seq += x;
		for (unsigned m = mask & ((1u << NF) - 1); m; m &= m - 1) {
			if ((rc = get_uv(&d->r, &x)))
				return rc;
			const unsigned i = (unsigned)__builtin_ctz(m);
			field_add(nx, i, (uint64_t)gmt_unzigzag(x), dd);
		}
		if (mask & M_FLAGS) {
			if (!gmt_spool_reader_fill(&d->r))
				return -EIO;
			nx->flags = d->r.buf[d->r.pos++];
		}
		if ((mask & M_SYNCS) && (rc = get_uv(&d->r, &syncs)))
			return rc;
	}
	nx->f[F_HELD] += dd[D_HELD] + held_pred_of(dd[D_ALLOC], dd[D_RES], dd[D_OUT], nx->flags);
	d->next_syncs = syncs;
	d->next_ts += dt;
	d->has_next = 1;
	return 0;
}

typedef struct merge {
	const gmt_report_model_t *m;
	const gmt_rm_device_t *dev;
	mrd_t *rd;
	size_t n;
	int have_sample;
	uint64_t sample_ts;
	int64_t untraced;
} merge_t;

static void merge_close(merge_t *g)
{
	for (size_t i = 0; g->rd && i < g->n; i++)
		if (g->rd[i].open)
			gmt_spool_reader_close(&g->rd[i].r);
	free(g->rd);
	g->rd = NULL;
}

static int merge_open(merge_t *g, const gmt_report_model_t *m, const gmt_rm_device_t *dev)
{
	memset(g, 0, sizeof(*g));
	g->m = m;
	g->dev = dev;
	g->n = dev->n_members;
	if (!(g->rd = calloc(g->n ? g->n : 1, sizeof(*g->rd))))
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const gmt_rm_member_t *mb = &dev->members[i];
		if (!mb->rows || mb->stream == SIZE_MAX)
			continue;  /* nothing, or the live member (fed by a run) */
		int rc = gmt_spool_reader_open(&g->rd[i].r, m->priv->sp, mb->stream);
		if (rc) {
			merge_close(g);
			return rc;
		}
		g->rd[i].open = 1;
		if ((rc = mrd_next(&g->rd[i]))) {
			merge_close(g);
			return rc;
		}
	}
	return 0;
}

/* The members' values at the instant the states hold, summed. */
/* A new device-used sample: the estimate is taken against what is held
   now, and kept until the next sample. */
static inline void sample(merge_t *g, const mvals_t *latest, gmt_rm_instant_t *in)
{
	if (!g->have_sample || latest->f[F_USED_TS] != g->sample_ts) {
		g->have_sample = 1;
		g->sample_ts = latest->f[F_USED_TS];
		g->untraced = (int64_t)(latest->f[F_USED] - in->held);
	}
	in->known[GMT_RM_REST] = in->known[GMT_RM_USED] = 1;
	in->v[GMT_RM_USED] = latest->f[F_USED];
	in->v[GMT_RM_REST] = g->untraced > 0 ? (uint64_t)g->untraced : 0;
	in->untraced = g->untraced;
}

/* combine() of a device with one process (the common case), every field
   set once instead of cleared and summed. */
static inline void combine1(merge_t *g, uint64_t ts, uint64_t syncs, gmt_rm_instant_t *in)
{
	const mrd_t *d = &g->rd[0];
	in->ts = ts;
	in->syncs = syncs;
	in->untraced = 0;
	if (!d->started) {
		memset(in->v, 0, sizeof(in->v));
		memset(in->known, 0, sizeof(in->known));
		for (unsigned w = 0; w < GMT_DOWNERS; w++)
			in->known[GMT_RM_OUTSIDE + w] = 1;
		in->held = in->top = in->allocated = in->reserved = 0;
		in->has_allocated = in->has_reserved = 0;
		return;
	}
	const mvals_t *s = &d->state;
	int ha = s->flags & HAS_ALLOC, hr = s->flags & HAS_RES;
	uint64_t base = hr ? s->f[F_RES] : ha ? s->f[F_ALLOC] : 0;
	uint64_t ap = ha ? (s->f[F_ALLOC] < base ? s->f[F_ALLOC] : base) : 0;
	in->v[GMT_RM_ALLOCATED] = ap;
	in->v[GMT_RM_CACHE] = base - ap;
	in->known[GMT_RM_ALLOCATED] = ha ? 1 : 0;
	in->known[GMT_RM_CACHE] = hr ? 1 : 0;
	/* the owners' series are the row's fields in the same order */
	memcpy(&in->v[GMT_RM_OUTSIDE], &s->f[F_OUT0], GMT_DOWNERS * sizeof(in->v[0]));
	memset(&in->known[GMT_RM_OUTSIDE], 1, GMT_DOWNERS);
	in->held = s->f[F_HELD];
	in->allocated = ha ? s->f[F_ALLOC] : 0;
	in->has_allocated = ha ? 1 : 0;
	in->reserved = hr ? s->f[F_RES] : 0;
	in->has_reserved = hr ? 1 : 0;
	in->v[GMT_RM_REST] = in->v[GMT_RM_USED] = 0;
	in->known[GMT_RM_REST] = in->known[GMT_RM_USED] = 0;
	if (s->flags & HAS_USED)
		sample(g, s, in);
	in->top = in->held + in->v[GMT_RM_REST];
}

static inline void combine(merge_t *g, uint64_t ts, uint64_t syncs, gmt_rm_instant_t *in)
{
	if (g->n == 1) {
		combine1(g, ts, syncs, in);
		return;
	}
	memset(in, 0, sizeof(*in));
	in->ts = ts;
	in->syncs = syncs;
	const mvals_t *latest = NULL;
	for (size_t i = 0; i < g->n; i++) {
		const mrd_t *d = &g->rd[i];
		if (!d->started)
			continue;
		const mvals_t *s = &d->state;
		int ha = s->flags & HAS_ALLOC, hr = s->flags & HAS_RES;
		uint64_t base = hr ? s->f[F_RES] : ha ? s->f[F_ALLOC] : 0;
		uint64_t ap = ha ? (s->f[F_ALLOC] < base ? s->f[F_ALLOC] : base) : 0;
		in->v[GMT_RM_ALLOCATED] += ap;
		in->v[GMT_RM_CACHE] += base - ap;
		in->known[GMT_RM_ALLOCATED] |= ha ? 1 : 0;
		in->known[GMT_RM_CACHE] |= hr ? 1 : 0;
		for (unsigned w = 0; w < GMT_DOWNERS; w++)
			in->v[GMT_RM_OUTSIDE + w] += s->f[F_OUT0 + w];
		in->held += s->f[F_HELD];
		if (ha) {
			in->allocated += s->f[F_ALLOC];
			in->has_allocated = 1;
		}
		if (hr) {
			in->reserved += s->f[F_RES];
			in->has_reserved = 1;
		}
		if ((s->flags & HAS_USED) && (!latest || s->f[F_USED_TS] > latest->f[F_USED_TS]))
			latest = s;
	}
	for (unsigned w = 0; w < GMT_DOWNERS; w++)
		in->known[GMT_RM_OUTSIDE + w] = 1;
	if (latest)
		sample(g, latest, in);
	in->top = in->held + in->v[GMT_RM_REST];
}

/* The time of the streams' next row (0: none left). */
static int merge_min(const merge_t *g, uint64_t *ts)
{
	int any = 0;
	for (size_t i = 0; i < g->n; i++)
		if (g->rd[i].has_next && (!any || g->rd[i].next_ts < *ts)) {
			*ts = g->rd[i].next_ts;
			any = 1;
		}
	return any;
}

/* The streams' rows of nanosecond ts applied (several rows of one stream:
   the last values stand); *syncs gains their synchronisations. */
static int merge_apply(merge_t *g, uint64_t ts, uint64_t *syncs)
{
	for (size_t i = 0; i < g->n; i++) {
		mrd_t *d = &g->rd[i];
		while (d->has_next && d->next_ts == ts) {
			d->state = d->next;
			d->started = 1;
			*syncs += d->next_syncs;
			int rc = mrd_next(d);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The next merged instant: 1, 0 at the end, or a negative errno. One
 * member (one process on the device, the common case): its rows of one
 * nanosecond, without the search for the earliest. */
static int merge_next(merge_t *g, gmt_rm_instant_t *in)
{
	if (g->n == 1) {
		mrd_t *d = &g->rd[0];
		if (!d->has_next)
			return d->open && d->r.err ? d->r.err : 0;
		uint64_t ts = d->next_ts, syncs = 0;
		do {
			d->state = d->next;
			d->started = 1;
			syncs += d->next_syncs;
			int rc = mrd_next(d);
			if (rc)
				return rc;
		} while (d->has_next && d->next_ts == ts);
		combine(g, ts, syncs, in);
		return 1;
	}
	uint64_t ts = UINT64_MAX, syncs = 0;
	if (!merge_min(g, &ts)) {
		for (size_t i = 0; i < g->n; i++)
			if (g->rd[i].open && g->rd[i].r.err)
				return g->rd[i].r.err;
		return 0;
	}
	int rc = merge_apply(g, ts, &syncs);
	if (rc)
		return rc;
	combine(g, ts, syncs, in);
	return 1;
}

/* ---- a device read by running a trace again -------------------------------- */

/* A device whose live member's rows come from a run of its trace (routed
   R_MERGE), merged with the others' streams as they come. fn gets every
   merged instant, in time order, and the members' states then. */
typedef int (*pm_fn)(void *ctx, const gmt_rm_instant_t *in, const merge_t *g);

typedef struct pmerge {
	merge_t g;
	size_t live;
	pm_fn fn;
	void *ctx;
} pmerge_t;

static int pmerge_open(pmerge_t *pm, const gmt_report_model_t *m, const gmt_rm_device_t *dv, pm_fn fn,
		       void *ctx)
{
	pm->live = dv->live;
	pm->fn = fn;
	pm->ctx = ctx;
	return merge_open(&pm->g, m, dv);  /* the live member has no stream */
}

/* The live member's row at ts: the streams' instants before it, then the
   instant at ts with every stream's rows of that nanosecond. */
static int pmerge_row(pmerge_t *pm, const mvals_t *cur, uint64_t ts, uint64_t syncs)
{
	gmt_rm_instant_t in;
	uint64_t t = 0;
	int rc = 0;
	while (!rc && merge_min(&pm->g, &t) && t < ts) {
		uint64_t sy = 0;
		if (!(rc = merge_apply(&pm->g, t, &sy))) {
			combine(&pm->g, t, sy, &in);
			rc = pm->fn(pm->ctx, &in, &pm->g);
		}
	}
	if (!rc && merge_min(&pm->g, &t) && t == ts)
		rc = merge_apply(&pm->g, ts, &syncs);
	if (rc)
		return rc;
	mrd_t *d = &pm->g.rd[pm->live];
	d->state = *cur;
	d->started = 1;
	combine(&pm->g, ts, syncs, &in);
	return pm->fn(pm->ctx, &in, &pm->g);
}

/* After the run: the streams' rows after the live member's last. */
static int pmerge_end(pmerge_t *pm)
{
	gmt_rm_instant_t in;
	int rc;
	while ((rc = merge_next(&pm->g, &in)) == 1)
		if ((rc = pm->fn(pm->ctx, &in, &pm->g)))
			break;
	merge_close(&pm->g);
	return rc;
}

/* Runs trace ti again (the model's private run state; the trace's own
   counters come out the same), each ordinal's rows routed as route says:
   R_SPOOL into a new stream (p->dev[o].stream once closed), R_MERGE into
   pm[o], R_SKIP nowhere. The rows must be those of the first run (-EIO
   otherwise: the file changed). */
static int rerun(const gmt_report_model_t *cm, size_t ti, const int *route, pmerge_t *const *pm)
{
	gmt_report_model_t *m = (gmt_report_model_t *)cm;
	gmt_report_priv_t *p = m->priv;
	const gmt_rm_trace_t *t = &m->traces[ti];
	const ptrace_t *pt = &p->t[ti];
	p->run_trace = ti;
	memset(p->dev, 0, sizeof(p->dev));
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++) {
		p->dev[o].route = route[o];
		p->dev[o].pm = pm ? pm[o] : NULL;
	}
	p->n_due = 0;
	p->seq = 0;
	p->err = 0;
	p->resets = 0;
	p->want_resets = pt->resets;
	p->budget_on = 0;
	gmt_phases_hook_t h;
	hook_of(m, &h);
	gmt_phases_t *ph = NULL;
	gmt_decode_result_t res;
	memset(&res, 0, sizeof(res));
	gmt_phases_run(t->file, &p->po, &h, &ph, &res);
	int rc = p->err;
	if (!rc && p->resets != pt->resets)
		rc = -EIO;
	if (!rc)
		rc = last_rows(p, t->s);
	for (size_t k = 0; !rc && k < pt->n_mem; k++) {
		const tmem_t *tm = &pt->mem[k];
		if (route[tm->ordinal] != R_SKIP && p->dev[tm->ordinal].rows != tm->rows)
			rc = -EIO;
	}
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
		if (route[o] == R_SPOOL && p->dev[o].open) {
			int r = gmt_spool_close(p->sp, p->dev[o].stream);
			rc = rc ? rc : r;
		}
	gmt_phases_free(ph);
	p->want_resets = 0;
	return rc;
}

typedef struct fwrap {
	int (*fn)(void *ctx, size_t dev, const gmt_rm_instant_t *in);
	void *ctx;
	size_t dev;
} fwrap_t;

static int fwrap_fn(void *ctx, const gmt_rm_instant_t *in, const merge_t *g)
{
	const fwrap_t *w = ctx;
	(void)g;
	return w->fn(w->ctx, w->dev, in);
}

/* The instants of the devices whose live member is in trace ti, by one run
   of it (dev SIZE_MAX: all of them, else that one only). */
static int live_instants(const gmt_report_model_t *m, size_t ti, size_t dev,
			 int (*fn)(void *ctx, size_t dev, const gmt_rm_instant_t *in), void *ctx)
{
	int route[GMT_RM_MAX_ORDINALS];
	pmerge_t *pm[GMT_RM_MAX_ORDINALS] = { 0 };
	fwrap_t w[GMT_RM_MAX_ORDINALS];
	pmerge_t store[GMT_RM_MAX_ORDINALS];
	int rc = 0, any = 0;
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
		route[o] = R_SKIP;
	for (size_t i = 0; i < m->n_devices && !rc; i++) {
		const gmt_rm_device_t *dv = &m->devices[i];
		if (dv->live == SIZE_MAX || dv->members[dv->live].trace != ti || (dev != SIZE_MAX && i != dev))
			continue;
		int o = dv->members[dv->live].ordinal;
		w[o] = (fwrap_t){ fn, ctx, i };
		if (!(rc = pmerge_open(&store[o], m, dv, fwrap_fn, &w[o]))) {
			pm[o] = &store[o];
			route[o] = R_MERGE;
			any = 1;
		}
	}
	if (!rc && any)
		rc = rerun(m, ti, route, pm);
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
		if (pm[o]) {
			if (rc)
				merge_close(&pm[o]->g);
			else
				rc = pmerge_end(pm[o]);
		}
	return rc;
}

typedef struct onedev {
	int (*fn)(void *ctx, const gmt_rm_instant_t *in);
	void *ctx;
} onedev_t;

static int onedev_fn(void *ctx, size_t dev, const gmt_rm_instant_t *in)
{
	const onedev_t *x = ctx;
	(void)dev;
	return x->fn(x->ctx, in);
}

int gmt_report_each_instant(const gmt_report_model_t *m, size_t dev,
			    int (*fn)(void *ctx, const gmt_rm_instant_t *in), void *ctx)
{
	const gmt_rm_device_t *dv = &m->devices[dev];
	if (dv->live != SIZE_MAX) {
		onedev_t x = { fn, ctx };
		return live_instants(m, dv->members[dv->live].trace, dev, onedev_fn, &x);
	}
	merge_t g;
	int rc = merge_open(&g, m, dv);
	if (rc)
		return rc;
	gmt_rm_instant_t in;
	while ((rc = merge_next(&g, &in)) == 1)
		if ((rc = fn(ctx, &in)))
			break;
	merge_close(&g);
	return rc;
}

int gmt_report_each_instant_all(const gmt_report_model_t *m,
				int (*fn)(void *ctx, size_t dev, const gmt_rm_instant_t *in), void *ctx)
{
	int rc = 0;
	for (size_t i = 0; i < m->n_devices && !rc; i++) {
		if (m->devices[i].live != SIZE_MAX)
			continue;
		fwrap_t w = { fn, ctx, i };
		merge_t g;
		gmt_rm_instant_t in;
		if ((rc = merge_open(&g, m, &m->devices[i])))
			break;
		while ((rc = merge_next(&g, &in)) == 1)
			if ((rc = fwrap_fn(&w, &in, &g)))
				break;
		merge_close(&g);
	}
	for (size_t ti = 0; ti < m->n_traces && !rc; ti++)
		rc = live_instants(m, ti, SIZE_MAX, fn, ctx);
	return rc;
}

/* ---- finishing: devices, peaks ------------------------------------------- */

/* gmt_group_merge's source over a member's rows: (ts, held). */
typedef struct hsrc {
	mrd_t rd;
	int err;
} hsrc_t;

static int hsrc_next(void *ctx, gmt_step_t *out)
{
	hsrc_t *h = ctx;
	if (!h->rd.has_next)
		return 0;
	out->ts = h->rd.next_ts;
	out->bytes = h->rd.next.f[F_HELD];
	int rc = mrd_next(&h->rd);
	if (rc)
		h->err = rc;
	return 1;
}

/* A member's rows seen through the window [from, to]: first its value in
 * force at from (as one change at from), then its changes up to to. */
typedef struct wsrc {
	hsrc_t h;
	uint64_t from, to;
	int started;
} wsrc_t;

static int wsrc_next(void *ctx, gmt_step_t *out)
{
	wsrc_t *w = ctx;
	mrd_t *rd = &w->h.rd;
	if (!w->started) {
		uint64_t v = 0;
		w->started = 1;
		while (rd->has_next && rd->next_ts <= w->from) {
			v = rd->next.f[F_HELD];
			int rc = mrd_next(rd);
			if (rc) {
				w->h.err = rc;
				break;
			}
		}
		*out = (gmt_step_t){ w->from, v };
		return 1;
	}
	if (!rd->has_next || rd->next_ts > w->to || w->h.err)
		return 0;
	return hsrc_next(&w->h, out);
}

int gmt_report_window_peak(const gmt_report_model_t *m, size_t dev, uint64_t from, uint64_t to,
			   gmt_rm_window_t *out, uint64_t *at)
{
	const gmt_rm_device_t *dv = &m->devices[dev];
	size_t n = dv->n_members;
	wsrc_t *w = calloc(n ? n : 1, sizeof(*w));
	gmt_group_src_t *src = calloc(n ? n : 1, sizeof(*src));
	gmt_group_member_t *gm = calloc(n ? n : 1, sizeof(*gm));
	int rc = w && src && gm ? 0 : -ENOMEM;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; !rc && i < n; i++) {
		w[i].from = from;
		w[i].to = to;
		src[i] = (gmt_group_src_t){ wsrc_next, &w[i] };
		if (!dv->members[i].rows)
			continue;
		if (!(rc = gmt_spool_reader_open(&w[i].h.rd.r, m->priv->sp, dv->members[i].stream))) {
			w[i].h.rd.open = 1;
			rc = mrd_next(&w[i].h.rd);
		}
	}
	gmt_group_result_t res;
	memset(&res, 0, sizeof(res));
	if (!rc)
		rc = gmt_group_merge(src, n, gm, &res);
	for (size_t i = 0; w && i < n; i++) {
		if (w[i].h.rd.open) {
			if (!rc && w[i].h.err)
				rc = w[i].h.err;
			gmt_spool_reader_close(&w[i].h.rd.r);
		}
		if (!rc)
			at[i] = res.found ? gm[i].at_peak : 0;
	}
	if (!rc) {
		out->found = res.found && res.peak_bytes > 0;
		out->ts = out->found ? res.peak_ts : from;
		out->held = out->found ? res.peak_bytes : 0;
	}
	free(w);
	free(src);
	free(gm);
	return rc;
}

/* A device's peak over the instants of its members' merged rows, in one
 * pass: the instants, their synchronisations and the series used; each
 * member's own peak (the first instant of its highest held); the
 * coinciding peak (the first instant of the highest sum of held) with
 * every member's held and event number then. The same numbers as
 * gmt_group_merge's over the members' held (answers/gmt_group.c), with the
 * composition at the peak from the same pass. */
typedef struct pstats {
	gmt_rm_device_t *dv;
} pstats_t;

static int stats_fn(void *ctx, const gmt_rm_instant_t *in, const merge_t *g)
{
	gmt_rm_device_t *dv = ((pstats_t *)ctx)->dv;
	dv->instants++;
	dv->last_instant_ts = in->ts;
	dv->syncs += in->syncs;
	for (unsigned s = 0; s < GMT_RM_SERIES; s++)
		dv->series_used[s] |= s == GMT_RM_USED ? in->known[s] : in->known[s] && in->v[s];
	for (size_t i = 0; i < g->n; i++) {
		gmt_rm_member_t *mb = &dv->members[i];
		if (g->rd[i].started && g->rd[i].state.f[F_HELD] > mb->own_peak) {
			mb->own_peak = g->rd[i].state.f[F_HELD];
			mb->own_peak_ts = in->ts;
		}
	}
	/* the coinciding peak: the first instant of the highest held */
	if (in->held > (dv->has_peak ? dv->peak.held : 0)) {
		dv->has_peak = 1;
		dv->peak = *in;
		for (size_t i = 0; i < g->n; i++) {
			dv->members[i].at_peak = g->rd[i].started ? g->rd[i].state.f[F_HELD] : 0;
			dv->members[i].at_peak_seq = g->rd[i].started ? g->rd[i].state.seq : 0;
		}
	}
	return 0;
}

static int dev_peak(gmt_report_model_t *m, gmt_rm_device_t *dv)
{
	merge_t g;
	pstats_t st = { dv };
	gmt_rm_instant_t in;
	int rc;
	if ((rc = merge_open(&g, m, dv)))
		return rc;
	dv->instants = 0;
	while ((rc = merge_next(&g, &in)) == 1 && !(rc = stats_fn(&st, &in, &g)))
		;
	merge_close(&g);
	if (rc < 0)
		return rc;
	dv->own_peak_sum = 0;
	for (size_t k = 0; k < dv->n_members; k++)
		dv->own_peak_sum += dv->members[k].own_peak;
	return 0;
}

static int add_member(gmt_report_model_t *m, size_t ti, const tmem_t *tm)
{
	const gmt_rm_trace_t *t = &m->traces[ti];
	const gmt_dev_summary_t *ds = gmt_summary_device(t->s, tm->ordinal);
	static const uint8_t no_uuid[16];
	const char *host = t->s->host ? t->s->host : "";
	const char *name = ds && ds->has_record ? ds->name : "";
	const uint8_t *uuid = ds && ds->has_record ? ds->uuid : no_uuid;
	gmt_rm_device_t *dv = NULL;
	for (size_t i = 0; i < m->n_devices && !dv; i++) {
		gmt_rm_device_t *x = &m->devices[i];
		if (gmt_group_same_device(x->host, x->uuid, x->ordinal, x->name, host, uuid, tm->ordinal, name))
			dv = x;
	}
	if (!dv) {
		gmt_rm_device_t *p = realloc(m->devices, (m->n_devices + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->devices = p;
		dv = &m->devices[m->n_devices];
		memset(dv, 0, sizeof(*dv));
		snprintf(dv->id, sizeof(dv->id), "d%zu", m->n_devices);
		dv->live = SIZE_MAX;
		m->n_devices++;
		dv->name = name;
		dv->host = host;
		memcpy(dv->uuid, uuid, 16);
		dv->uuid_known = memcmp(uuid, no_uuid, 16) != 0;
		dv->ordinal = tm->ordinal;
		dv->t0 = UINT64_MAX;
	}
	gmt_rm_member_t *mb = realloc(dv->members, (dv->n_members + 1) * sizeof(*mb));
	if (!mb)
		return -ENOMEM;
	dv->members = mb;
	mb = &dv->members[dv->n_members++];
	memset(mb, 0, sizeof(*mb));
	mb->trace = ti;
	mb->ordinal = tm->ordinal;
	mb->dev = ds;
	mb->rows = tm->rows;
	mb->first_ts = tm->first_ts;
	mb->last_ts = tm->last_ts;
	mb->syncs = tm->syncs;
	mb->stream = tm->stream;
	mb->abandoned = tm->abandoned;
	mb->site_at = SIZE_MAX;
	gmt_lv_dev_info_t info;
	if (!gmt_levels_dev_info(gmt_phases_levels(m->priv->t[ti].ph), tm->ordinal, &info))
		mb->fw_lost = info.fw_lost;
	if (!dv->total_bytes && ds && ds->has_record)
		dv->total_bytes = ds->total_bytes;
	dv->asrc_seen |= tm->asrc_seen;
	dv->rsrc_seen |= tm->rsrc_seen;
	/* the axis: the process's first and last event, its first and last row */
	uint64_t lo = t->s->have_ts ? t->s->first_ts : UINT64_MAX, hi = t->s->have_ts ? t->s->last_ts : 0;
	if (tm->rows) {
		lo = tm->first_ts < lo ? tm->first_ts : lo;
		hi = tm->last_ts > hi ? tm->last_ts : hi;
	}
	dv->t0 = lo < dv->t0 ? lo : dv->t0;
	dv->t_end = hi > dv->t_end ? hi : dv->t_end;
	return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* The device's phase occurrences and failures, member by member. */
static int dev_lists(gmt_report_model_t *m, gmt_rm_device_t *dv)
{
	size_t cap_p = 0, cap_f = 0;
	for (size_t k = 0; k < dv->n_members; k++) {
		const gmt_rm_member_t *mb = &dv->members[k];
		gmt_phases_t *ph = m->priv->t[mb->trace].ph;
		const gmt_summary_t *s = m->traces[mb->trace].s;
		size_t n_names;
		const gmt_phase_name_t *names = gmt_phases_names(ph, &n_names);
		for (size_t i = 0; i < n_names; i++)
			for (size_t j = 0; j < names[i].n_listed; j++) {
				const gmt_occ_t *o = names[i].listed[j];
				if (!o || (size_t)mb->ordinal >= o->n_dev || o->dev[mb->ordinal].ordinal < 0)
					continue;
				if (grow((void **)&dv->phases, &cap_p, dv->n_phases, sizeof(*dv->phases)))
					return -ENOMEM;
				const gmt_pfig_t *g = &o->dev[mb->ordinal].fig[GMT_VIEW_REQUESTED];
				dv->phases[dv->n_phases++] = (gmt_rm_phase_t){
					.member = k,
					.name = gmt_phases_string(ph, names[i].name_id),
					.name_index = i,
					.k = o->k,
					.thread = o->thread,
					.begin_ts = o->begin_ts,
					.end_ts = o->end_ts,
					.ended = o->ended,
					.failed = o->failed,
					.has_allocated = g->max_alloc.valid && g->max_alloc.v.has_allocated,
					.has_reserved = g->max_res.valid && g->max_res.v.has_reserved,
					.max_allocated = g->max_alloc.v.allocated,
					.max_reserved = g->max_res.v.reserved,
					.max_held = g->max_held.v.held,
					.max_outside = g->max_outside.v.outside,
					.max_held_ts = g->max_held.ts,
				};
			}
		for (size_t i = 0; i < s->n_fails; i++) {
			if (s->fails[i].device != mb->ordinal)
				continue;
			if (grow((void **)&dv->fails, &cap_f, dv->n_fails, sizeof(*dv->fails)))
				return -ENOMEM;
			dv->fails[dv->n_fails++] = (gmt_rm_fail_t){ k, i, &s->fails[i],
								    gmt_curesult_name(s->fails[i].result) };
		}
	}
	return 0;
}

/* Devices with members whose streams were given up: the one with the most
   rows is read by running its trace again (the device's live member);
   the others' rows are spooled again now, one run per trace. */
static int plan_reruns(gmt_report_model_t *m)
{
	int rc = 0;
	for (size_t i = 0; i < m->n_devices; i++) {
		gmt_rm_device_t *dv = &m->devices[i];
		for (size_t k = 0; k < dv->n_members; k++)
			if (dv->members[k].abandoned &&
			    (dv->live == SIZE_MAX || dv->members[k].rows > dv->members[dv->live].rows))
				dv->live = k;
	}
	for (size_t ti = 0; ti < m->n_traces && !rc; ti++) {
		int route[GMT_RM_MAX_ORDINALS], any = 0;
		for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
			route[o] = R_SKIP;
		for (size_t i = 0; i < m->n_devices; i++)
			for (size_t k = 0; k < m->devices[i].n_members; k++) {
				const gmt_rm_member_t *mb = &m->devices[i].members[k];
				if (mb->trace == ti && mb->abandoned && k != m->devices[i].live) {
					route[mb->ordinal] = R_SPOOL;
					any = 1;
				}
			}
		if (!any || (rc = rerun(m, ti, route, NULL)))
			continue;
		for (size_t i = 0; i < m->n_devices; i++)
			for (size_t k = 0; k < m->devices[i].n_members; k++) {
				gmt_rm_member_t *mb = &m->devices[i].members[k];
				if (mb->trace == ti && route[mb->ordinal] == R_SPOOL) {
					mb->stream = m->priv->dev[mb->ordinal].stream;
					mb->abandoned = 0;
				}
			}
	}
	return rc;
}

/* The peaks of the devices whose live member is in trace ti: one run. */
static int live_peaks(gmt_report_model_t *m, size_t ti)
{
	int route[GMT_RM_MAX_ORDINALS];
	pmerge_t store[GMT_RM_MAX_ORDINALS], *pm[GMT_RM_MAX_ORDINALS] = { 0 };
	pstats_t st[GMT_RM_MAX_ORDINALS];
	int rc = 0, any = 0;
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++)
		route[o] = R_SKIP;
	for (size_t i = 0; i < m->n_devices && !rc; i++) {
		gmt_rm_device_t *dv = &m->devices[i];
		if (dv->live == SIZE_MAX || dv->members[dv->live].trace != ti)
			continue;
		int o = dv->members[dv->live].ordinal;
		st[o].dv = dv;
		dv->instants = 0;
		if (!(rc = pmerge_open(&store[o], m, dv, stats_fn, &st[o]))) {
			pm[o] = &store[o];
			route[o] = R_MERGE;
			any = 1;
		}
	}
	if (!rc && any)
		rc = rerun(m, ti, route, pm);
	for (int o = 0; o < GMT_RM_MAX_ORDINALS; o++) {
		if (!pm[o])
			continue;
		if (rc) {
			merge_close(&pm[o]->g);
			continue;
		}
		rc = pmerge_end(pm[o]);
		gmt_rm_device_t *dv = st[o].dv;
		dv->own_peak_sum = 0;
		for (size_t k = 0; k < dv->n_members; k++)
			dv->own_peak_sum += dv->members[k].own_peak;
	}
	return rc;
}

/* opts.sites: each trace's sites model, with the live set of each of its
   devices at that device's coinciding peak (after the event number its
   row then carried). */
static int trace_sites(gmt_report_model_t *m, size_t ti)
{
	const gmt_report_opts_t *ro = &m->priv->ro;
	gmt_rm_trace_t *t = &m->traces[ti];
	size_t n = 0;
	for (size_t i = 0; i < m->n_devices; i++)
		for (size_t k = 0; k < m->devices[i].n_members; k++)
			n += m->devices[i].members[k].trace == ti && m->devices[i].has_peak;
	gmt_sites_at_t *at = calloc(n ? n : 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < m->n_devices; i++)
		for (size_t k = 0; k < m->devices[i].n_members; k++) {
			gmt_rm_member_t *mb = &m->devices[i].members[k];
			if (mb->trace != ti || !m->devices[i].has_peak)
				continue;
			mb->site_at = n;
			at[n++] = (gmt_sites_at_t){ mb->ordinal, mb->at_peak_seq };
		}
	gmt_sites_model_opts_t so = {
		.what = GMT_SITES_REPORT | GMT_SITES_AT_ONLY, .top = ro->sites_top ? ro->sites_top : 20,
		.symbols = ro->symbols, .debug_dirs = ro->debug_dirs, .n_debug_dirs = ro->n_debug_dirs,
		.at = at, .n_at = n,
	};
	t->sites = gmt_sites_model_build(t->file, &so);
	free(at);
	return t->sites ? 0 : -ENOMEM;
}

/* Whether two traces record the same process: the same header (a trace
 * given twice, or a copy of it). A fork child has its own pid and header. */
static int same_process(const gmt_summary_t *a, const gmt_summary_t *b)
{
	return a && b && a->has_header && b->has_header && a->pid == b->pid && a->ppid == b->ppid &&
	       a->clock_monotonic_ns == b->clock_monotonic_ns &&
	       a->clock_realtime_ns == b->clock_realtime_ns &&
	       !strcmp(a->host ? a->host : "", b->host ? b->host : "");
}

int gmt_report_model_finish(gmt_report_model_t *m)
{
	int rc = 0;
	for (size_t ti = 0; ti < m->n_traces; ti++)
		for (size_t tj = 0; tj < ti && !m->traces[ti].same_as; tj++)
			if (!m->traces[tj].same_as && same_process(m->traces[ti].s, m->traces[tj].s))
				m->traces[ti].same_as = tj + 1;
	for (size_t ti = 0; ti < m->n_traces && !rc; ti++) {
		const ptrace_t *pt = &m->priv->t[ti];
		for (size_t k = 0; k < pt->n_mem && !rc && !m->traces[ti].same_as; k++)
			rc = add_member(m, ti, &pt->mem[k]);
	}
	for (size_t i = 0; i < m->n_devices && !rc; i++) {
		gmt_rm_device_t *dv = &m->devices[i];
		if (dv->t0 == UINT64_MAX)
			dv->t0 = dv->t_end = 0;
		const gmt_summary_t *s = m->traces[dv->members[0].trace].s;
		if (s->has_header) {
			dv->has_wall = 1;
			dv->wall_t0_ns = dv->t0 + (s->clock_realtime_ns - s->clock_monotonic_ns);
		}
	}
	if (!rc)
		rc = plan_reruns(m);
	for (size_t i = 0; i < m->n_devices && !rc; i++)
		if (m->devices[i].live == SIZE_MAX)
			rc = dev_peak(m, &m->devices[i]);
	for (size_t ti = 0; ti < m->n_traces && !rc; ti++)
		rc = live_peaks(m, ti);
	for (size_t i = 0; i < m->n_devices && !rc; i++)
		rc = dev_lists(m, &m->devices[i]);
	for (size_t ti = 0; ti < m->n_traces && !rc && m->priv->ro.sites; ti++)
		if (m->traces[ti].from_file)
			rc = trace_sites(m, ti);
	m->spool_bytes = gmt_spool_file_bytes(m->priv->sp);
	m->spool_raw_bytes = gmt_spool_raw_bytes(m->priv->sp);
	return rc;
}
