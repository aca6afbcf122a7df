/*
 * gmt_phase_at.c - the phase occurrence open at given instants: one phase
 * engine run, a cursor over the instants sorted by time (gmt_phase_at.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/gmt_phase_at.h"

typedef struct {
	const uint64_t *ts;
	size_t n, next;
	size_t *order;           /* indices of ts, by time */
	gmt_phase_at_t *out;
	gmt_phases_t *ph;        /* the run's engine (known from its first
				    instant: before it no phase was open) */
	int oom;
} at_t;

static int by_ts(const void *a, const void *b, void *ts_)
{
	const uint64_t *ts = ts_;
	uint64_t x = ts[*(const size_t *)a], y = ts[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

void gmt_phase_at_clear(gmt_phase_at_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(out[i].name);
		memset(&out[i], 0, sizeof(out[i]));
	}
}

static int at_reset(void *ctx)
{
	at_t *a = ctx;
	gmt_phase_at_clear(a->out, a->n);
	a->next = 0;
	a->ph = NULL;
	return 0;
}

static int at_instant(void *ctx, gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n,
		      int phase_changed)
{
	(void)ts; (void)devs; (void)n; (void)phase_changed;
	((at_t *)ctx)->ph = ph;
	return 0;
}

static int at_event(void *ctx, const gmt_devent_t *e, int side)
{
	at_t *a = ctx;
	if (side)
		return 0;
	while (a->next < a->n && a->ts[a->order[a->next]] <= e->ts) {
		gmt_phase_at_t *o = &a->out[a->order[a->next++]];
		const gmt_occ_t *occ = a->ph ? gmt_phases_current_occ(a->ph) : NULL;
		if (!occ)
			continue;
		const char *name = gmt_phases_string(a->ph, occ->name_id);
		if (!(o->name = strdup(name ? name : "")))
			return -ENOMEM;
		o->in_phase = 1;
		o->k = occ->k;
		o->begin_ts = occ->begin_ts;
		o->thread = occ->thread;
	}
	return 0;
}

int gmt_phase_at_run(const char *path, const gmt_phase_opts_t *o, const uint64_t *ts, size_t n,
		     gmt_phase_at_t *out, gmt_decode_result_t *res)
{
	memset(out, 0, n * sizeof(*out));
	at_t a = { .ts = ts, .n = n, .out = out };
	if (!(a.order = malloc((n ? n : 1) * sizeof(*a.order))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		a.order[i] = i;
	qsort_r(a.order, n, sizeof(*a.order), by_ts, (void *)ts);
	gmt_phases_hook_t hook = { .ctx = &a, .reset = at_reset, .instant = at_instant, .event = at_event };
	gmt_phases_t *ph = NULL;
	/* only which occurrence is open: no levels, no figures */
	gmt_phase_opts_t po = *o;
	po.pairing_only = 1;
	memset(res, 0, sizeof(*res));
	int st = gmt_phases_run(path, &po, &hook, &ph, res);
	gmt_phases_free(ph);
	free(a.order);
	if (st == GMT_DECODE_STOPPED) {
		gmt_phase_at_clear(out, n);
		return -ENOMEM;
	}
	return st;
}
