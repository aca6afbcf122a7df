/*
 * gmt_fwpeaks.c - a framework's own blocks at their peaks, by stack
 * (gmt_fwpeaks.h for what; the mechanism is there too).
 */
#include "engines/gmt_fwpeaks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_timeline.h"
#include "support/gmt_u64map.h"

/* A peak record whose groups are still to be copied: -1 for the whole
 * run, else an index in windows; and the device. */
typedef struct fw_pend {
	long win;
	int ordinal;
} fw_pend_t;

typedef struct fw {
	gmt_fw_peak_t *peaks; size_t n_peaks;
	gmt_fw_window_t *win; size_t n_win;
	gmt_u64map_t blocks;   /* block key -> a size, b stack */
	gmt_u64map_t agg;      /* (dev + 1) << 32 | stack -> a bytes, b count */
	uint64_t ts;           /* the instant being applied */
	int any;
	size_t win_lo;         /* windows before it ended before ts */
	fw_pend_t *pend; size_t n_pend, cap_pend;
} fw_t;

/* Blocks of different devices never share an address under unified
 * addressing, but traces from test doubles may: the device goes in the key. */
static uint64_t fw_key(int dev, uint64_t addr)
{
	return (addr & 0x00ffffffffffffffull) ^ (uint64_t)(dev & 0xff) << 56;
}

/* The record of device ordinal in *recs (created when missing). */
static gmt_fw_peak_t *fw_rec(gmt_fw_peak_t **recs, size_t *n, int ordinal)
{
	for (size_t i = 0; i < *n; i++)
		if ((*recs)[i].ordinal == ordinal)
			return &(*recs)[i];
	gmt_fw_peak_t *nr = realloc(*recs, (*n + 1) * sizeof(*nr));
	if (!nr)
		return NULL;
	*recs = nr;
	memset(&nr[*n], 0, sizeof(*nr));
	nr[*n].ordinal = ordinal;
	return &nr[(*n)++];
}

static gmt_fw_peak_t *pend_rec(fw_t *f, const fw_pend_t *p)
{
	return p->win < 0 ? fw_rec(&f->peaks, &f->n_peaks, p->ordinal) :
			    fw_rec(&f->win[p->win].peaks, &f->win[p->win].n_peaks, p->ordinal);
}

/* A new peak of record d (of window win, -1: the whole run): its groups
 * are copied before the device's blocks next change. */
static int new_peak(fw_t *f, gmt_fw_peak_t *d, long win, uint64_t live, uint64_t ts)
{
	d->peak = live;
	d->peak_ts = ts;
	if (d->pending)
		return 0;
	if (f->n_pend == f->cap_pend) {
		size_t c = f->cap_pend ? f->cap_pend * 2 : 16;
		fw_pend_t *np = realloc(f->pend, c * sizeof(*np));
		if (!np)
			return -ENOMEM;
		f->pend = np;
		f->cap_pend = c;
	}
	f->pend[f->n_pend++] = (fw_pend_t){ win, d->ordinal };
	d->pending = 1;
	return 0;
}

/* The state after the events at f->ts holds until next_ts (UINT64_MAX: the
 * end): a device above a peak has a new one, for the whole run at ts, for
 * each window that meets [ts, next_ts) at the later of ts and its begin. */
static int close_instant(fw_t *f, uint64_t next_ts)
{
	for (size_t i = 0; i < f->n_peaks; i++) {
		gmt_fw_peak_t *d = &f->peaks[i];
		if (d->live > d->peak && new_peak(f, d, -1, d->live, f->ts))
			return -ENOMEM;
	}
	while (f->win_lo < f->n_win && f->win[f->win_lo].end_ts < f->ts)
		f->win_lo++;
	for (size_t i = f->win_lo; i < f->n_win && f->win[i].begin_ts < next_ts; i++) {
		gmt_fw_window_t *w = &f->win[i];
		if (w->end_ts < f->ts)
			continue;
		for (size_t k = 0; k < f->n_peaks; k++) {
			const uint64_t live = f->peaks[k].live;
			if (!live)
				continue;
			gmt_fw_peak_t *d = fw_rec(&w->peaks, &w->n_peaks, f->peaks[k].ordinal);
			if (!d)
				return -ENOMEM;
			if (live > d->peak &&
			    new_peak(f, d, (long)i, live, w->begin_ts > f->ts ? w->begin_ts : f->ts))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Copies device d's sums by stack: the groups at its peak. */
static int copy_groups(fw_t *f, gmt_fw_peak_t *d)
{
	free(d->groups);
	d->groups = NULL;
	d->n_groups = 0;
	d->pending = 0;
	size_t cap = 0;
	for (size_t i = 0; i < f->agg.cap; i++) {
		const gmt_u64map_slot_t *t = &f->agg.s[i];
		if (t->key == UINT64_MAX || (int)(t->key >> 32) - 1 != d->ordinal || !t->b)
			continue;
		if (d->n_groups == cap) {
			cap = cap ? cap * 2 : 16;
			gmt_live_group_t *ng = realloc(d->groups, cap * sizeof(*ng));
			if (!ng)
				return -ENOMEM;
			d->groups = ng;
		}
		d->groups[d->n_groups++] = (gmt_live_group_t){ .stack = (uint32_t)t->key, .bytes = t->a,
							       .count = t->b };
	}
	return 0;
}

/* Copies the groups of every pending record of device ordinal (-1: all). */
static int take_pending(fw_t *f, int ordinal)
{
	size_t m = 0;
	for (size_t i = 0; i < f->n_pend; i++) {
		fw_pend_t p = f->pend[i];
		if (ordinal >= 0 && p.ordinal != ordinal) {
			f->pend[m++] = p;
			continue;
		}
		gmt_fw_peak_t *d = pend_rec(f, &p);
		if (!d || copy_groups(f, d))
			return -ENOMEM;
	}
	f->n_pend = m;
	return 0;
}

static int agg_add(fw_t *f, int dev, uint32_t stack, uint64_t size, int sign)
{
	int existed;
	gmt_u64map_slot_t *a = gmt_u64map_put(&f->agg, (uint64_t)(dev + 1) << 32 | stack, &existed);
	if (!a)
		return -ENOMEM;
	if (sign > 0) {
		a->a += size;
		a->b++;
	} else {
		a->a -= size;
		if (--a->b == 0)
			gmt_u64map_del(&f->agg, a);
	}
	return 0;
}

void gmt_fw_peaks_free(gmt_fw_peak_t *peaks, size_t n)
{
	for (size_t i = 0; peaks && i < n; i++)
		free(peaks[i].groups);
	free(peaks);
}

static int fw_reset(void *ctx, int pass)
{
	fw_t *f = ctx;
	(void)pass;
	gmt_fw_peaks_free(f->peaks, f->n_peaks);
	f->peaks = NULL;
	f->n_peaks = 0;
	for (size_t i = 0; i < f->n_win; i++) {
		gmt_fw_peaks_free(f->win[i].peaks, f->win[i].n_peaks);
		f->win[i].peaks = NULL;
		f->win[i].n_peaks = 0;
	}
	gmt_u64map_clear(&f->blocks);
	gmt_u64map_clear(&f->agg);
	f->any = 0;
	f->win_lo = 0;
	f->n_pend = 0;
	return 0;
}

static int fw_event(void *ctx, const gmt_devent_t *e, int side)
{
	fw_t *f = ctx;
	(void)side;
	if ((e->type != GMT_EV_FW_ALLOC && e->type != GMT_EV_FW_FREE_REQUESTED) || e->device < 0)
		return 0;
	if (f->any && e->ts != f->ts && close_instant(f, e->ts))
		return -ENOMEM;
	f->ts = e->ts;
	f->any = 1;
	/* The device's blocks change: the peaks waiting for its groups first. */
	if (take_pending(f, e->device))
		return -ENOMEM;
	gmt_fw_peak_t *d = fw_rec(&f->peaks, &f->n_peaks, e->device);
	if (!d)
		return -ENOMEM;
	int existed;
	gmt_u64map_slot_t *b = e->type == GMT_EV_FW_ALLOC ?
		gmt_u64map_put(&f->blocks, fw_key(e->device, e->addr), &existed) :
		gmt_u64map_find(&f->blocks, fw_key(e->device, e->addr));
	if (e->type == GMT_EV_FW_ALLOC && !b)
		return -ENOMEM;
	if (b && (e->type == GMT_EV_FW_FREE_REQUESTED || existed)) {
		/* a free, or an allocation over a live block (which it replaces) */
		uint64_t size = b->a;
		uint32_t stack = (uint32_t)b->b;
		d->live -= size;
		if (e->type == GMT_EV_FW_FREE_REQUESTED)
			gmt_u64map_del(&f->blocks, b);
		if (agg_add(f, e->device, stack, size, -1))
			return -ENOMEM;
	}
	if (e->type == GMT_EV_FW_ALLOC) {
		b = gmt_u64map_put(&f->blocks, fw_key(e->device, e->addr), &existed);
		if (!b)
			return -ENOMEM;
		b->a = e->size;
		b->b = e->stack;
		d->live += e->size;
		if (agg_add(f, e->device, e->stack, e->size, 1))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_peak(const void *a, const void *b)
{
	const gmt_fw_peak_t *x = a, *y = b;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Records with a peak, by ordinal; the others out. */
static void finish(gmt_fw_peak_t **recs, size_t *n)
{
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		gmt_fw_peak_t *d = &(*recs)[i];
		if (!d->peak) {
			free(d->groups);
			continue;
		}
		(*recs)[m++] = *d;
	}
	*n = m;
	if (m)
		qsort(*recs, m, sizeof(**recs), cmp_peak);
}

int gmt_fwpeaks_run(const char *path, gmt_fw_peak_t **peaks, size_t *n_peaks,
		    gmt_fw_window_t *windows, size_t n_windows, gmt_decode_result_t *res)
{
	fw_t f;
	memset(&f, 0, sizeof(f));
	f.win = windows;
	f.n_win = n_windows;
	gmt_timeline_sink_t sink = { .ctx = &f, .reset = fw_reset, .event = fw_event };
	gmt_timeline_run(path, &sink, res, NULL);
	int rc = res->status == GMT_DECODE_STOPPED ? -ENOMEM : 0;
	if (!rc && f.any && close_instant(&f, UINT64_MAX))
		rc = -ENOMEM;
	if (!rc && take_pending(&f, -1))
		rc = -ENOMEM;
	finish(&f.peaks, &f.n_peaks);
	for (size_t i = 0; i < n_windows; i++)
		finish(&windows[i].peaks, &windows[i].n_peaks);
	gmt_u64map_clear(&f.blocks);
	gmt_u64map_clear(&f.agg);
	free(f.pend);
	*peaks = f.peaks;
	*n_peaks = f.n_peaks;
	return rc;
}
