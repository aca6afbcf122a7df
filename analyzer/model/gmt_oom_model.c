/*
 * gmt_oom_model.c - builds the oom model of one trace (gmt_oom_model.h).
 *
 *  1. One pass over the merged time line (gmt_timeline.h) drives the phase
 *     engine (phases, levels: allocated, reserved, outside by owner; its
 *     replay: held by kind and owner, the peak so far) and, beside it, what
 *     the engines do not keep: each thread's open failure (its attempts),
 *     the blocks of the driver level (a FREE's device) and the framework's
 *     segments and blocks per device (the largest free block, the
 *     framework's holders by stack), the latest FW_RETRIES per device, and
 *     main-stream event numbers as the live set engine counts them. At each
 *     failed attempt the device's state is taken into the failure (the last
 *     attempt's stays); the MEMINFO the preload writes right after a failed
 *     allocation (same thread, same device, before that thread's next
 *     event) is its free sample.
 *  2. The live set engine (gmt_liveset.h) gives the driver-level blocks live
 *     after each failure's instant, by stack; sites are merged by
 *     symbolised stack (gmt_stacks.h) and listed largest first.
 *
 * Most traces have no failure, and then only the replay's summary is
 * reported (pid, rank, how the process ended, completeness): pass 1 runs
 * just the replay, as `summary` does, and stops at the first failure
 * (ALLOC_FAIL or FW_OOM); only then is the time line run again with the
 * phase engine and the state above (what a failure needs from before it).
 */
#include "model/gmt_oom_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_levels.h"
#include "engines/gmt_liveset.h"
#include "engines/gmt_phase_engine.h"
#include "engines/gmt_replay.h"
#include "engines/gmt_timeline.h"
#include "gmt_leads.h"
#include "model/gmt_results.h"
#include "support/gmt_u64map.h"

/* A FW_OOM joins a failure whose last attempt is at most this much older
 * (the side stream's times are approximate: a little earlier counts too). */
#define FW_JOIN_NS 1000000000ull
#define FW_EARLY_NS 1000000ull

/* The framework's state on one device. */
typedef struct fwdev {
	gmt_u64map_t segs;       /* addr -> a size                             */
	gmt_u64map_t blocks;     /* addr -> a size, b stack | freed << 63:
				    from FW_ALLOC to FW_FREE_COMPLETED; freed:
				    FW_FREE_REQUESTED came (no longer allocated) */
	int seen;                /* a FW_SEGMENT_* event on the device         */
	int has_retries;
	uint64_t retries, ooms, retries_ts;
} fwdev_t;

typedef struct thr {
	uint64_t tid;
	char *name;
	size_t open;             /* 1 + index of its open failure; 0: none     */
	size_t meminfo_for;      /* 1 + index of a failure waiting for its
				    sample; 0: none                            */
} thr_t;

typedef struct work {
	uint64_t seq;            /* the instant's main-stream event number     */
	int await_fw;            /* a driver failure not yet given up/recovered */
	gmt_instant_t at;
} work_t;

struct gmt_oom_model_priv {
	const gmt_oom_model_opts_t *o;
	gmt_stacks_t *cat;
	gmt_phases_t *ph;
	gmt_visitor_t phv;       /* the phase engine's metadata callbacks       */
	uint64_t seq;            /* main-stream events applied                  */
	unsigned last_type;      /* the last main-stream event's type           */
	thr_t *thr; size_t n_thr;
	fwdev_t *fw; size_t n_fw;     /* by ordinal                              */
	gmt_u64map_t dblocks;    /* driver blocks: addr -> a size, b device + 1 */
	size_t *dev_last; size_t n_dev_last;   /* by ordinal: 1 + latest failure */
	work_t *work; size_t cap_work;
	size_t cap_failures;
	int oom;
	/* the pass without a failure: the replay alone */
	int lite, lite_hit;
	gmt_replay_t *rp;
};

/* ---- small helpers ----------------------------------------------------------- */

static fwdev_t *fwdev(gmt_oom_model_priv_t *p, int ordinal)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= p->n_fw) {
		size_t n = (size_t)ordinal + 1;
		fwdev_t *nf = realloc(p->fw, n * sizeof(*nf));
		if (!nf)
			return NULL;
		memset(nf + p->n_fw, 0, (n - p->n_fw) * sizeof(*nf));
		p->fw = nf;
		p->n_fw = n;
	}
	return &p->fw[ordinal];
}

static thr_t *thread_of(gmt_oom_model_priv_t *p, uint32_t idx)
{
	if (idx >= p->n_thr) {
		size_t n = (size_t)idx + 1;
		thr_t *nt = realloc(p->thr, n * sizeof(*nt));
		if (!nt)
			return NULL;
		memset(nt + p->n_thr, 0, (n - p->n_thr) * sizeof(*nt));
		p->thr = nt;
		p->n_thr = n;
	}
	return &p->thr[idx];
}

static size_t *dev_last(gmt_oom_model_priv_t *p, int ordinal)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= p->n_dev_last) {
		size_t n = (size_t)ordinal + 1;
		size_t *nd = realloc(p->dev_last, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + p->n_dev_last, 0, (n - p->n_dev_last) * sizeof(*nd));
		p->dev_last = nd;
		p->n_dev_last = n;
	}
	return &p->dev_last[ordinal];
}

static int push(void **a, size_t *n, size_t size)
{
	void *na = realloc(*a, (*n + 1) * size);
	if (!na)
		return -ENOMEM;
	*a = na;
	memset((char *)na + *n * size, 0, size);
	(*n)++;
	return 0;
}

/* ---- the state at an instant ----------------------------------------------- */

typedef struct span {
	uint64_t addr, size;
} span_t;

static int cmp_span(const void *a, const void *b)
{
	const span_t *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static span_t *spans(const gmt_u64map_t *m, size_t *n)
{
	span_t *s = malloc((m->n ? m->n : 1) * sizeof(*s));
	*n = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].key != UINT64_MAX)
			s[(*n)++] = (span_t){ m->s[i].key, m->s[i].a };
	qsort(s, *n, sizeof(*s), cmp_span);
	return s;
}

/* The largest free block inside the framework's segments: the largest
 * stretch of a segment that no block occupies. */
static int largest_free(const fwdev_t *d, uint64_t *out)
{
	size_t ns, nb;
	span_t *s = spans(&d->segs, &ns), *b = spans(&d->blocks, &nb);
	uint64_t best = 0;
	size_t k = 0;
	if (!s || !b) {
		free(s);
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		uint64_t lo = s[i].addr, hi = s[i].addr + s[i].size, at = lo;
		while (k < nb && b[k].addr < lo)
			k++;
		for (size_t q = k; q < nb && b[q].addr < hi; q++) {
			if (b[q].addr > at && b[q].addr - at > best)
				best = b[q].addr - at;
			if (b[q].addr + b[q].size > at)
				at = b[q].addr + b[q].size;
		}
		if (hi > at && hi - at > best)
			best = hi - at;
	}
	free(s);
	free(b);
	*out = best;
	return 0;
}

/* The framework's allocated blocks by stack, largest first. */
static int fw_holders(const fwdev_t *d, gmt_site_list_t *l, uint64_t *total)
{
	gmt_u64map_t by = { 0 };
	*total = 0;
	for (size_t i = 0; i < d->blocks.cap; i++) {
		const gmt_u64map_slot_t *s = &d->blocks.s[i];
		if (s->key == UINT64_MAX || (s->b >> 63))
			continue;
		int existed;
		gmt_u64map_slot_t *g = gmt_u64map_put(&by, s->b & 0xffffffffu, &existed);
		if (!g) {
			gmt_u64map_clear(&by);
			return -ENOMEM;
		}
		g->a += s->a;
		g->b++;
		*total += s->a;
	}
	gmt_live_group_t *groups = malloc((by.n ? by.n : 1) * sizeof(*groups));
	size_t n = 0;
	if (!groups) {
		gmt_u64map_clear(&by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < by.cap; i++)
		if (by.s[i].key != UINT64_MAX)
			groups[n++] = (gmt_live_group_t){ .stack = (uint32_t)by.s[i].key,
							  .owner = GMT_OWNER_APP, .bytes = by.s[i].a,
							  .count = by.s[i].b };
	gmt_u64map_clear(&by);
	gmt_site_list_free(l);
	int rc = gmt_site_list_of(l, groups, n);
	free(groups);
	return rc;
}

/* Takes the device's state at this instant into f. */
static int snapshot(gmt_oom_model_t *m, gmt_oom_failure_t *f, int dev, uint64_t ts)
{
	gmt_oom_model_priv_t *p = m->priv;
	gmt_levels_t *lv = gmt_phases_levels(p->ph);
	const gmt_summary_t *s = gmt_phases_summary(p->ph);
	const gmt_dev_summary_t *ds = gmt_summary_device(s, dev);
	gmt_lv_vals_t v;

	f->ts = ts;
	f->device = dev;
	f->has_free = 0;
	memset(f->held_kind, 0, sizeof(f->held_kind));
	memset(f->held_owner, 0, sizeof(f->held_owner));
	f->held = 0;
	f->has_total = 0;
	f->has_peak_before = 0;
	if (ds) {
		f->held = ds->live.total;
		for (int k = 0; k < GMT_DKINDS; k++)
			f->held_kind[k] = ds->live.kind[k];
		for (int o = 0; o < GMT_DOWNERS; o++)
			f->held_owner[o] = ds->live.owner[o];
		if (ds->has_record && ds->total_bytes) {
			f->has_total = 1;
			f->total = ds->total_bytes;
		} else if (ds->meminfo_samples) {
			f->has_total = 1;
			f->total = ds->meminfo_total;
		}
		f->device_name = ds->has_record ? ds->name : NULL;
		if (ds->peak.total) {
			f->has_peak_before = 1;
			f->peak_before = ds->peak.total;
			f->peak_before_ts = ds->peak_ts;
		}
		f->has_graph_pool = ds->graph_samples > 0;
		f->graph_pool = ds->graph_reserved;
	}
	gmt_levels_values(lv, dev, GMT_VIEW_REQUESTED, &v);
	f->has_allocated = v.has_allocated;
	f->allocated = v.allocated;
	f->has_reserved = v.has_reserved;
	f->reserved = v.reserved;
	f->has_cache = v.has_allocated && v.has_reserved && v.reserved >= v.allocated;
	f->cache = f->has_cache ? v.reserved - v.allocated : 0;
	f->outside = v.outside + v.pending;
	for (int o = 0; o < GMT_DOWNERS; o++)
		f->outside_owner[o] = v.outside_owner[o];
	f->outside_owner[GMT_OWNER_APP] += v.pending;
	fwdev_t *fd = dev >= 0 && (size_t)dev < p->n_fw ? &p->fw[dev] : NULL;
	f->has_largest_free = 0;
	f->fw_held = 0;
	if (fd && fd->segs.n) {
		if (largest_free(fd, &f->largest_free))
			return -ENOMEM;
		f->has_largest_free = 1;
	}
	if (fd && fw_holders(fd, &f->fw_holders, &f->fw_held))
		return -ENOMEM;
	/* the framework's own counts so far (a later checkpoint replaces them) */
	f->has_fw_retries = fd && fd->has_retries;
	if (f->has_fw_retries) {
		f->fw_retries = fd->retries;
		f->fw_ooms = fd->ooms;
		f->fw_retries_ts = fd->retries_ts;
	}
	/* the phase occurrence */
	const gmt_occ_t *oc = gmt_phases_current_occ(p->ph);
	f->in_phase = oc != NULL;
	f->has_phase_start_held = 0;
	if (oc) {
		f->phase = gmt_phases_string(p->ph, oc->name_id);
		f->phase_k = oc->k;
		f->temperature = oc->k == 1 ? "cold" : "warm";
		f->phase_begin_ts = oc->begin_ts;
		if (dev >= 0 && (size_t)dev < oc->n_dev && oc->dev[dev].ordinal == dev &&
		    oc->dev[dev].fig[GMT_VIEW_REQUESTED].has_start) {
			f->has_phase_start_held = 1;
			f->phase_start_held = oc->dev[dev].fig[GMT_VIEW_REQUESTED].start.held;
		}
	}
	return 0;
}

/* ---- the pass ------------------------------------------------------------------ */

static gmt_oom_failure_t *new_failure(gmt_oom_model_t *m, const char *source)
{
	gmt_oom_model_priv_t *p = m->priv;
	m->failures_total++;
	if (m->n_failures >= GMT_OOM_MAX_LISTED)
		return NULL;
	if (m->n_failures == p->cap_failures) {
		size_t c = p->cap_failures ? p->cap_failures * 2 : 8;
		gmt_oom_failure_t *nf = realloc(m->failures, c * sizeof(*nf));
		work_t *nw = realloc(p->work, c * sizeof(*nw));
		if (nf)
			m->failures = nf;
		if (nw)
			p->work = nw;
		if (!nf || !nw) {
			p->oom = 1;
			return NULL;
		}
		p->cap_failures = c;
	}
	gmt_oom_failure_t *f = &m->failures[m->n_failures];
	memset(f, 0, sizeof(*f));
	memset(&p->work[m->n_failures], 0, sizeof(work_t));
	m->n_failures++;
	f->source = source;
	f->lead = GMT_LEAD_NONE;
	return f;
}

static void close_open(gmt_oom_model_priv_t *p, thr_t *t)
{
	(void)p;
	t->open = 0;
}

static int on_alloc_fail(gmt_oom_model_t *m, const gmt_devent_t *e)
{
	gmt_oom_model_priv_t *p = m->priv;
	thr_t *t = thread_of(p, e->thread);
	size_t *last = dev_last(p, e->device);
	if (!t || (e->device >= 0 && !last))
		return -ENOMEM;
	gmt_oom_failure_t *f = NULL;
	size_t ix = 0;
	if (t->open) {
		f = &m->failures[t->open - 1];
		if (f->device != e->device || f->request != e->size || f->has_fw_oom)
			f = NULL;
		else
			ix = t->open - 1;
	}
	if (!f) {
		close_open(p, t);
		f = new_failure(m, "driver");
		if (!f)
			return p->oom ? -ENOMEM : 0;
		ix = m->n_failures - 1;
		f->request = e->size;
		f->stream = e->stream;
		f->kind_key = gmt_kind_name(GMT_AUX_KIND(e->aux));
		f->api_key = gmt_api_name(GMT_AUX_API(e->aux));
		f->owner_key = gmt_owner_name(GMT_AUX_OWNER(e->aux));
		f->result = GMT_AUX_RESULT(e->aux);
		f->result_name = gmt_curesult_name(f->result);
		f->thread = e->thread;
		f->stack = e->stack;
		t->open = ix + 1;
		p->work[ix].await_fw = 1;
	}
	if (push((void **)&f->attempts, &f->n_attempts, sizeof(*f->attempts)))
		return -ENOMEM;
	f->attempts[f->n_attempts - 1] = (gmt_oom_attempt_t){ .ts = e->ts, .size = e->size };
	p->work[ix].seq = p->seq;
	if (last)
		*last = ix + 1;
	t->meminfo_for = ix + 1;
	return snapshot(m, f, e->device, e->ts);
}

static int on_fw_oom(gmt_oom_model_t *m, const gmt_devent_t *e)
{
	gmt_oom_model_priv_t *p = m->priv;
	size_t *last = dev_last(p, e->device);
	gmt_oom_failure_t *f = NULL;
	if (last && *last) {
		f = &m->failures[*last - 1];
		uint64_t at = f->n_attempts ? f->attempts[f->n_attempts - 1].ts : f->ts;
		if (f->recovered || f->has_fw_oom || e->ts + FW_EARLY_NS < at || e->ts > at + FW_JOIN_NS)
			f = NULL;
	}
	if (!f) {
		f = new_failure(m, "framework");
		if (!f)
			return p->oom ? -ENOMEM : 0;
		size_t ix = m->n_failures - 1;
		f->request = e->size;
		f->thread = e->thread;
		f->stack = e->stack;
		f->kind_key = NULL;
		f->api_key = NULL;
		f->owner_key = NULL;
		p->work[ix].seq = p->seq;
		if (last)
			*last = ix + 1;
		int rc = snapshot(m, f, e->device, e->ts);
		if (rc)
			return rc;
	}
	f->has_fw_oom = 1;
	f->gave_up = 1;
	f->fw_request = e->size;
	f->fw_free = e->addr;
	f->fw_ts = e->ts;
	return 0;
}

static void on_release(gmt_oom_model_t *m, int dev, uint64_t ts, uint64_t bytes, const char *what)
{
	gmt_oom_model_priv_t *p = m->priv;
	size_t *last = dev >= 0 && (size_t)dev < p->n_dev_last ? &p->dev_last[dev] : NULL;
	if (!last || !*last)
		return;
	gmt_oom_failure_t *f = &m->failures[*last - 1];
	if (f->recovered || f->has_fw_oom || !p->work[*last - 1].await_fw)
		return;
	if (push((void **)&f->releases, &f->n_releases, sizeof(*f->releases))) {
		p->oom = 1;
		return;
	}
	f->releases[f->n_releases - 1] = (gmt_oom_release_t){ .ts = ts, .bytes = bytes, .what = what };
	f->released_bytes += bytes;
}

static int on_event(gmt_oom_model_t *m, const gmt_devent_t *e, int side)
{
	gmt_oom_model_priv_t *p = m->priv;
	thr_t *t = side ? NULL : thread_of(p, e->thread);
	if (!side && !t)
		return -ENOMEM;
	int samples = e->type == GMT_EV_MEMINFO || e->type == GMT_EV_POOL_RESERVED ||
		      e->type == GMT_EV_POOL_USED || e->type == GMT_EV_GRAPH_MEM;
	if (t && t->meminfo_for && e->type == GMT_EV_MEMINFO) {
		gmt_oom_failure_t *f = &m->failures[t->meminfo_for - 1];
		if (e->device == f->device && !f->has_free) {
			f->has_free = 1;
			f->free = e->addr;
			f->free_ts = e->ts;
			if (!f->has_total) {
				f->has_total = 1;
				f->total = e->size;
			}
			t->meminfo_for = 0;
		}
	} else if (t && t->meminfo_for && !samples && e->type != GMT_EV_ALLOC_FAIL) {
		t->meminfo_for = 0;
	}
	fwdev_t *fd = NULL;
	int existed;
	gmt_u64map_slot_t *s;
	switch (e->type) {
	case GMT_EV_ALLOC_FAIL:
		if (GMT_AUX_KIND(e->aux) == GMT_KIND_HOST)
			break;
		return on_alloc_fail(m, e);
	case GMT_EV_ALLOC:
		if (GMT_AUX_KIND(e->aux) != GMT_KIND_HOST && !(GMT_AUX_FLAGS(e->aux) & GMT_FLAG_CAPTURED)) {
			if (!(s = gmt_u64map_put(&p->dblocks, e->addr, &existed)))
				return -ENOMEM;
			s->a = e->size;
			s->b = (uint64_t)(e->device + 1);
		}
		if (t && t->open) {
			gmt_oom_failure_t *f = &m->failures[t->open - 1];
			if (f->device == e->device && f->request == e->size && !f->has_fw_oom) {
				f->recovered = 1;
				f->recovered_ts = e->ts;
				if (push((void **)&f->attempts, &f->n_attempts, sizeof(*f->attempts)))
					return -ENOMEM;
				f->attempts[f->n_attempts - 1] = (gmt_oom_attempt_t){ .ts = e->ts, .size = e->size,
										       .ok = 1 };
				m->recovered_total++;
			}
			p->work[t->open - 1].await_fw = 0;
			close_open(p, t);
		}
		break;
	case GMT_EV_FREE:
		if ((s = gmt_u64map_find(&p->dblocks, e->addr))) {
			int dev = (int)s->b - 1;
			uint64_t bytes = s->a;
			gmt_u64map_del(&p->dblocks, s);
			fd = dev >= 0 && (size_t)dev < p->n_fw ? &p->fw[dev] : NULL;
			if (!fd || !fd->seen)
				on_release(m, dev, e->ts, bytes, "driver free");
		}
		break;
	case GMT_EV_FW_SEGMENT_ALLOC:
	case GMT_EV_FW_SEGMENT_MAP:
		if (!(fd = fwdev(p, e->device)))
			break;
		fd->seen = 1;
		if (!(s = gmt_u64map_put(&fd->segs, e->addr, &existed)))
			return -ENOMEM;
		s->a = e->size;
		break;
	case GMT_EV_FW_SEGMENT_FREE:
	case GMT_EV_FW_SEGMENT_UNMAP:
		if (!(fd = fwdev(p, e->device)))
			break;
		fd->seen = 1;
		if ((s = gmt_u64map_find(&fd->segs, e->addr)))
			gmt_u64map_del(&fd->segs, s);
		on_release(m, e->device, e->ts, e->size, "framework segment");
		break;
	case GMT_EV_FW_ALLOC:
		if (!(fd = fwdev(p, e->device)))
			break;
		if (!(s = gmt_u64map_put(&fd->blocks, e->addr, &existed)))
			return -ENOMEM;
		s->a = e->size;
		s->b = e->stack;
		break;
	case GMT_EV_FW_FREE_REQUESTED:
		if ((fd = fwdev(p, e->device)) && (s = gmt_u64map_find(&fd->blocks, e->addr)))
			s->b |= 1ull << 63;
		break;
	case GMT_EV_FW_FREE_COMPLETED:
		if ((fd = fwdev(p, e->device)) && (s = gmt_u64map_find(&fd->blocks, e->addr)))
			gmt_u64map_del(&fd->blocks, s);
		break;
	case GMT_EV_FW_OOM:
		return on_fw_oom(m, e);
	case GMT_EV_FW_RETRIES:
		if (!(fd = fwdev(p, e->device)))
			break;
		fd->has_retries = 1;
		fd->retries = e->addr;
		fd->ooms = e->size;
		fd->retries_ts = e->ts;
		/* the first checkpoint at or after a failure counts it */
		for (size_t i = m->n_failures; i-- > 0;) {
			gmt_oom_failure_t *f = &m->failures[i];
			if (f->device != e->device || f->ts > e->ts)
				continue;
			if (f->has_fw_retries && f->fw_retries_ts >= f->ts)
				break;
			f->has_fw_retries = 1;
			f->fw_retries = e->addr;
			f->fw_ooms = e->size;
			f->fw_retries_ts = e->ts;
		}
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the time line's sink -------------------------------------------------------- */

static void state_clear(gmt_oom_model_t *m)
{
	gmt_oom_model_priv_t *p = m->priv;
	for (size_t i = 0; i < m->n_failures; i++) {
		gmt_oom_failure_t *f = &m->failures[i];
		free(f->attempts);
		free(f->releases);
		gmt_site_list_free(&f->holders);
		gmt_site_list_free(&f->fw_holders);
	}
	m->n_failures = 0;
	m->failures_total = m->recovered_total = 0;
	for (size_t i = 0; i < p->n_thr; i++)
		free(p->thr[i].name);
	free(p->thr);
	p->thr = NULL;
	p->n_thr = 0;
	for (size_t i = 0; i < p->n_fw; i++) {
		gmt_u64map_clear(&p->fw[i].segs);
		gmt_u64map_clear(&p->fw[i].blocks);
	}
	free(p->fw);
	p->fw = NULL;
	p->n_fw = 0;
	free(p->dev_last);
	p->dev_last = NULL;
	p->n_dev_last = 0;
	gmt_u64map_clear(&p->dblocks);
	p->seq = 0;
	p->last_type = 0;
}

static gmt_phase_opts_t phase_opts(const gmt_oom_model_opts_t *o)
{
	return (gmt_phase_opts_t){ .max_listed = GMT_PHASES_DEFAULT_LISTED, .top_n = GMT_PHASES_DEFAULT_TOP,
				   .domains = o->domains, .n_domains = o->n_domains,
				   .patterns = o->patterns, .n_patterns = o->n_patterns,
				   .all_depths = o->all_depths, .open_only = 1 };
}

static int s_reset(void *ctx, int pass)
{
	gmt_oom_model_t *m = ctx;
	gmt_oom_model_priv_t *p = m->priv;
	(void)pass;
	state_clear(m);
	if (p->lite) {
		gmt_replay_free(p->rp);
		if (!(p->rp = gmt_replay_new(m->file)))
			return -ENOMEM;
		/* the metadata the phase engine hands its replay, no more */
		gmt_replay_visitor(p->rp, &p->phv);
		p->phv.events = NULL;
		p->phv.string = NULL;
		return 0;
	}
	gmt_phases_free(p->ph);
	gmt_phase_opts_t po = phase_opts(p->o);
	if (!(p->ph = gmt_phases_new(m->file, &po)))
		return -ENOMEM;
	gmt_phases_visitor(p->ph, &p->phv);
	return 0;
}

static int s_event(void *ctx, const gmt_devent_t *e, int side)
{
	gmt_oom_model_t *m = ctx;
	gmt_oom_model_priv_t *p = m->priv;
	if (p->lite) {
		if (e->type == GMT_EV_ALLOC_FAIL || e->type == GMT_EV_FW_OOM) {
			p->lite_hit = 1;
			return 1;   /* stops the pass: the full one follows */
		}
		/* as the phase engine's levels feed their replay */
		if (side)
			gmt_replay_note_side(p->rp, 1);
		int rc = gmt_replay_event(p->rp, e);
		if (!side) {
			p->seq++;
			p->last_type = e->type;
		}
		return rc;
	}
	if (side)
		gmt_replay_note_side(gmt_levels_replay(gmt_phases_levels(p->ph)), 1);
	int rc = gmt_phases_event_from(p->ph, e, side);
	if (rc)
		return rc;
	if (!side) {
		p->seq++;
		p->last_type = e->type;
	}
	rc = on_event(m, e, side);
	return rc ? rc : p->oom ? -ENOMEM : 0;
}

#define FWD(name, ...) \
	(p->phv.name ? p->phv.name(p->phv.ctx, __VA_ARGS__) : 0)

static int s_header(void *ctx, const gmt_header_t *h)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	return FWD(header, h);
}

static int s_device(void *ctx, const gmt_device_rec_t *d)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	return FWD(device, d);
}

static int s_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	return FWD(string, id, text, len);
}

static int s_drops(void *ctx, const gmt_drops_t *d)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	return FWD(drops, d);
}

static int s_end(void *ctx, const gmt_end_t *e)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	return FWD(end, e);
}

static int s_thread(void *ctx, uint32_t idx, uint64_t tid, const char *name)
{
	gmt_oom_model_priv_t *p = ((gmt_oom_model_t *)ctx)->priv;
	thr_t *t = thread_of(p, idx);
	if (!t)
		return 1;
	t->tid = tid;
	free(t->name);
	t->name = strdup(name ? name : "");
	return t->name ? 0 : 1;
}

static int s_module(void *ctx, const gmt_module_t *mod)
{
	return gmt_stacks_module(((gmt_oom_model_t *)ctx)->priv->cat, mod);
}

static int s_stack(void *ctx, uint32_t id, const uint64_t *frames, size_t n)
{
	return gmt_stacks_stack(((gmt_oom_model_t *)ctx)->priv->cat, id, frames, n);
}

static int s_text_stack(void *ctx, uint32_t id, const char *const *frames, size_t n)
{
	return gmt_stacks_text_stack(((gmt_oom_model_t *)ctx)->priv->cat, id, frames, n);
}

/* ---- after the pass ---------------------------------------------------------------- */

static const char *env_of(const gmt_summary_t *s, const char *key)
{
	for (size_t i = 0; i < s->n_env; i++)
		if (!strcmp(s->env_keys[i], key))
			return s->env_values[i];
	return NULL;
}

static int holders(gmt_oom_model_t *m)
{
	gmt_oom_model_priv_t *p = m->priv;
	size_t n = 0;
	gmt_instant_t **at = calloc(m->n_failures ? m->n_failures : 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_failures; i++) {
		if (m->failures[i].device < 0)
			continue;
		p->work[i].at = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = m->failures[i].device,
						 .seq = p->work[i].seq };
		at[n++] = &p->work[i].at;
	}
	gmt_decode_result_t res;
	int rc = n ? gmt_liveset_run(m->file, at, n, &res) : 0;
	for (size_t i = 0; !rc && i < m->n_failures; i++) {
		gmt_oom_failure_t *f = &m->failures[i];
		if (f->device < 0)
			continue;
		rc = gmt_site_list_of(&f->holders, p->work[i].at.groups, p->work[i].at.n_groups);
		if (!rc)
			rc = gmt_stacks_group(p->cat, f->holders.sites, &f->holders.n);
		if (!rc)
			rc = gmt_stacks_list(p->cat, &f->holders, f->held, p->o->top, 0, 1);
		if (!rc)
			rc = gmt_stacks_list(p->cat, &f->fw_holders, f->fw_held, p->o->top, 1, 1);
	}
	for (size_t i = 0; i < m->n_failures; i++)
		gmt_instant_clear(&p->work[i].at);
	free(at);
	return rc;
}

/* Every derived number, once. */
static int derive(gmt_oom_model_t *m)
{
	gmt_oom_model_priv_t *p = m->priv;
	const gmt_summary_t *s = p->ph ? gmt_phases_summary(p->ph) : gmt_replay_summary(p->rp);
	for (size_t i = 0; i < m->n_failures; i++) {
		gmt_oom_failure_t *f = &m->failures[i];
#define SINCE(t) (s->have_ts && (t) >= s->first_ts ? (double)((t) - s->first_ts) / 1e9 : 0.0)
		f->since_start_s = SINCE(f->ts);
		for (size_t k = 0; k < f->n_attempts; k++)
			f->attempts[k].since_start_s = SINCE(f->attempts[k].ts);
		for (size_t k = 0; k < f->n_releases; k++)
			f->releases[k].since_start_s = SINCE(f->releases[k].ts);
#undef SINCE
		f->has_utc = s->has_header;
		f->utc_ns = f->ts + (s->clock_realtime_ns - s->clock_monotonic_ns);
		if (f->thread < p->n_thr) {
			f->tid = p->thr[f->thread].tid;
			f->thread_name = p->thr[f->thread].name;
		}
		f->has_rest = f->has_free && f->has_total;
		f->rest = f->has_rest ? (int64_t)(f->total - f->free - f->held) : 0;
		f->has_shortfall = f->has_free;
		f->shortfall = f->has_free ? (int64_t)(f->request - f->free) : 0;
		f->largest_below_request = f->has_largest_free && f->largest_free < f->request;
		if (!(f->st = gmt_stacks_view(p->cat, f->stack, f->source[0] == 'f')))
			return -ENOMEM;
		const gmt_leads_t *l = p->o->leads;
		f->lead = l && f->in_phase ? gmt_leads_classify(l, f->phase) : GMT_LEAD_NONE;
		f->lead_key = gmt_lead_key(f->lead);
		f->lead_text = gmt_lead_text(f->lead);
	}
	m->failures_more = m->failures_total > m->n_failures;
	m->failures_not_listed = m->failures_total - m->n_failures;
	m->pid = s->pid;
	m->ppid = s->ppid;
	m->rank = env_of(s, "RANK");
	m->local_rank = env_of(s, "LOCAL_RANK");
	if (s->has_end) {
		m->end_how = s->end.how ? s->end.how : "";
		m->end_value = s->end.value;
	} else {
		m->end_how = p->last_type == GMT_EV_EXEC ? "exec" : "cut";
		m->end_value = 0;
	}
	return 0;
}

static const char *status_of(const gmt_decode_result_t *res)
{
	switch (res->status) {
	case GMT_DECODE_OK: return res->ended_cleanly ? "clean" : "cut";
	case GMT_DECODE_DAMAGED: return "damaged";
	case GMT_DECODE_REFUSED: return "refused";
	case GMT_DECODE_IO: return "unreadable";
	default: return "stopped";
	}
}

gmt_oom_model_t *gmt_oom_model_build(const char *file, const gmt_oom_model_opts_t *o)
{
	gmt_oom_model_t *m = calloc(1, sizeof(*m));
	if (!m || !(m->priv = calloc(1, sizeof(*m->priv)))) {
		free(m);
		return NULL;
	}
	gmt_oom_model_priv_t *p = m->priv;
	p->o = o;
	m->file = file;
	p->cat = gmt_stacks_new(o->debug_dirs, o->n_debug_dirs, o->symbols);
	int rc = p->cat ? 0 : -ENOMEM;
	if (!rc) {
		gmt_timeline_sink_t sink = {
			.ctx = m, .reset = s_reset, .event = s_event,
			.meta = { .ctx = m, .header = s_header, .device = s_device, .string = s_string,
				  .drops = s_drops, .end = s_end, .thread = s_thread, .module = s_module,
				  .stack = s_stack, .text_stack = s_text_stack },
		};
		gmt_timeline_stats_t ts;
		p->lite = 1;
		gmt_timeline_run(file, &sink, &m->res, &ts);
		if (p->lite_hit) {
			/* a failure: everything, from the start */
			p->lite = 0;
			gmt_replay_free(p->rp);
			p->rp = NULL;
			gmt_timeline_run(file, &sink, &m->res, &ts);
		}
		if (p->lite) {
			if (!p->rp || m->res.status == GMT_DECODE_STOPPED)
				rc = -ENOMEM;
			else
				gmt_replay_finish(p->rp, &m->res);
		} else if (!p->ph || m->res.status == GMT_DECODE_STOPPED) {
			rc = -ENOMEM;
		} else if (gmt_phases_finish(p->ph, &m->res)) {
			rc = -ENOMEM;
		}
		if (!rc) {
			m->events = ts.main_events + ts.side_events;
			m->gaps = (p->lite ? gmt_replay_summary(p->rp) : gmt_phases_summary(p->ph))->gaps;
		}
	}
	if (!rc)
		rc = holders(m);
	if (!rc)
		rc = derive(m);
	m->status_key = status_of(&m->res);
	if (rc) {
		gmt_oom_model_free(m);
		return NULL;
	}
	return m;
}

void gmt_oom_model_free(gmt_oom_model_t *m)
{
	if (!m)
		return;
	gmt_oom_model_priv_t *p = m->priv;
	if (p) {
		state_clear(m);
		free(p->work);
		gmt_phases_free(p->ph);
		gmt_replay_free(p->rp);
		gmt_stacks_free(p->cat);
		free(p);
	}
	free(m->failures);
	free(m);
}
