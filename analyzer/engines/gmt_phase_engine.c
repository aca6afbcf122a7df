/*
 * gmt_phase_engine.c - pairs range events into phases and keeps, for every open
 * phase occurrence and every device, the values at its start and the
 * instants of its maxima.
 *
 * Pairing: push/pop ranges (our API and NVTX push/pop) nest per thread: an
 * end closes the thread's innermost open range of those sources (an end that
 * names another range is counted as a mismatch, and still closes it); NVTX
 * start/end ranges pair by range id. Every range is tracked for pairing,
 * selected as a phase or not, so that a pop of an operator range never
 * closes a phase.
 *
 * Figures: after each event, the levels of the devices it touched are
 * computed once per view and offered to every open occurrence, which keeps
 * the first instant each maximum was reached with all the values of that
 * instant: that is what makes the coinciding values real. An occurrence is
 * folded into its name when it closes: kept apart (the first max_listed) and
 * merged into the warm aggregate (occurrences 2 and later). With open_only
 * (the commands that ask only which occurrence is open) it is freed
 * instead, and a name keeps only its count, in the string table
 * (support/gmt_strtab.h): memory then follows the open occurrences and the
 * trace's strings, not the names' figures (docs/analyzer.md, "Memory for
 * many phase names").
 *
 * Checkpoints: a framework's own counters (FW_ALLOCATED, FW_RESERVED) are
 * compared, as they arrive, with the rebuilt allocated and reserved of
 * their device then (the requested view: PyTorch's memory_allocated drops
 * when a free is requested). Each device keeps its latest checkpoint of each
 * quantity as a candidate for the next phase boundary; any other framework
 * event of that device withdraws it, so a boundary pairs only with counters
 * that still describe the framework's state at the boundary (the companion
 * records them right before it emits the range). A disagreement remembers
 * the boundary before it at once and the one after it at the next boundary;
 * the report names the nearer.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_phase_engine.h"
#include "engines/gmt_timeline.h"
#include "support/gmt_strtab.h"
#include "support/gmt_u64map.h"

#define MAX_THREADS 65536u
#define MAX_DEPTH 4096u
#define MAX_OPEN_IDS 4096u   /* open NVTX start/end ranges (linear search) */

/* ---- engine ------------------------------------------------------------- */

typedef struct open_range {
	uint64_t id;             /* start/end: the range id */
	uint32_t name_id;
	gmt_occ_t *occ;          /* NULL: not a phase */
} open_range_t;

typedef struct tstack {
	open_range_t *r;
	uint32_t n, cap;
} tstack_t;

struct gmt_phases {
	gmt_phase_opts_t o;
	gmt_levels_t *lv;
	gmt_phases_hook_t hook;
	gmt_strtab_t strs;       /* the STRING records: ids of one text
				    merged (canon); a text's value: its
				    name's index + 1, or with open_only its
				    occurrences so far                    */
	gmt_u64map_t names_by_id;  /* a name id without a STRING (0 or
				    unknown) + 1 -> a: the text's value;
				    with open_only, every folded name's
				    index + 1 (texts' values count)       */
	uint32_t fold_id;        /* open_only: fold_only's id, 0: not seen */
	uint64_t n_distinct;     /* open_only: named phases seen */
	uint32_t first_names[8];
	gmt_phase_name_t *names;
	size_t n_names, cap_names;
	tstack_t *threads;       /* by thread index */
	size_t n_threads;
	open_range_t *ids;       /* open start/end ranges */
	size_t n_ids, cap_ids;
	gmt_occ_t **active;      /* open phase occurrences, in begin order */
	size_t n_active, cap_active;
	gmt_phase_anomalies_t anom;
	uint64_t last_ts;
	int finished;
	int *devbuf;
	size_t cap_devbuf;
	gmt_visitor_t rv;        /* the replay's metadata callbacks */
	/* Devices changed at pend_ts, not yet offered to the open
	 * occurrences: an instant's values are those after its last event. */
	int *pend;
	uint8_t *pend_flag;      /* by ordinal */
	size_t n_pend, cap_pend, cap_flag;
	uint64_t pend_ts;
	struct thr *thr;         /* by ordinal: what an instant must pass to
				    move a maximum of an open occurrence */
	size_t n_thr;
	uint64_t thr_gen;        /* a thr is up to date when its gen is this */
	gmt_ck_dev_t **ck;       /* checkpoints by ordinal; NULL: none */
	size_t n_ck;
	gmt_boundary_t last_boundary;
};

static uint64_t *map_value(gmt_phases_t *ph, uint32_t name_id);

static const char *str_of(const gmt_phases_t *ph, uint32_t id)
{
	return gmt_strtab_text(&ph->strs, id, NULL);
}

/* The id names are keyed by: a text defined again under a new id (the
 * tracer writes names beyond its names' budget by value, a STRING with
 * each use, docs/configuration.md GPUMEMTRACE_BUFFER_MB) is its first id. */
static uint32_t canon(const gmt_phases_t *ph, uint32_t id)
{
	return gmt_strtab_canon(&ph->strs, id);
}

/* The value kept for a name (canonical id): its text's in the string
 * table, or for an id without a STRING one in names_by_id. NULL: out of
 * memory. */
static uint64_t *name_value(gmt_phases_t *ph, uint32_t name_id)
{
	uint64_t *v = gmt_strtab_value(&ph->strs, name_id);
	if (v)
		return v;
	return map_value(ph, name_id);
}

static uint64_t *map_value(gmt_phases_t *ph, uint32_t name_id)
{
	int existed;
	gmt_u64map_slot_t *x = gmt_u64map_put(&ph->names_by_id, (uint64_t)name_id + 1, &existed);
	return x ? &x->a : NULL;
}

static int ph_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	gmt_phases_t *ph = ctx;
	return id ? gmt_strtab_put(&ph->strs, id, text, len) : 0;
}

gmt_phases_t *gmt_phases_new(const char *file, const gmt_phase_opts_t *o)
{
	gmt_phases_t *ph = calloc(1, sizeof(*ph));
	if (!ph)
		return NULL;
	if (o)
		ph->o = *o;
	else
		ph->o.top_n = GMT_PHASES_DEFAULT_TOP;
	if (!ph->o.max_listed)
		ph->o.max_listed = GMT_PHASES_DEFAULT_LISTED;
	if (!ph->o.max_ck_listed)
		ph->o.max_ck_listed = GMT_PHASES_DEFAULT_CK_LISTED;
	ph->thr_gen = 1;         /* a new thr (gen 0) is not made yet */
	ph->lv = gmt_levels_new(file, ph->o.top_n);
	if (!ph->lv) {
		free(ph);
		return NULL;
	}
	gmt_replay_visitor(gmt_levels_replay(ph->lv), &ph->rv);
	return ph;
}

static void occ_free(gmt_occ_t *o)
{
	if (!o)
		return;
	free(o->dev);
	free(o);
}

void gmt_phases_free(gmt_phases_t *ph)
{
	if (!ph)
		return;
	gmt_levels_free(ph->lv);
	gmt_strtab_clear(&ph->strs);
	gmt_u64map_clear(&ph->names_by_id);
	for (size_t i = 0; i < ph->n_names; i++) {
		for (size_t j = 0; j < ph->names[i].n_listed; j++)
			occ_free(ph->names[i].listed[j]);
		free(ph->names[i].listed);
		occ_free(ph->names[i].warm);
	}
	free(ph->names);
	for (size_t i = 0; i < ph->n_threads; i++)
		free(ph->threads[i].r);
	free(ph->threads);
	free(ph->ids);
	for (size_t i = 0; i < ph->n_active; i++)
		occ_free(ph->active[i]);
	free(ph->active);
	free(ph->devbuf);
	free(ph->pend);
	free(ph->pend_flag);
	free(ph->thr);
	for (size_t i = 0; i < ph->n_ck; i++) {
		if (ph->ck[i])
			free(ph->ck[i]->diffs);
		free(ph->ck[i]);
	}
	free(ph->ck);
	free(ph);
}

void gmt_phases_set_hook(gmt_phases_t *ph, const gmt_phases_hook_t *hook)
{
	if (hook)
		ph->hook = *hook;
	else
		memset(&ph->hook, 0, sizeof(ph->hook));
}

static int ph_header(void *ctx, const gmt_header_t *h)
{
	gmt_phases_t *ph = ctx;
	return ph->rv.header(ph->rv.ctx, h);
}

static int ph_device(void *ctx, const gmt_device_rec_t *d)
{
	gmt_phases_t *ph = ctx;
	return ph->rv.device(ph->rv.ctx, d);
}

static int ph_drops(void *ctx, const gmt_drops_t *d)
{
	gmt_phases_t *ph = ctx;
	return ph->rv.drops(ph->rv.ctx, d);
}

static int ph_end(void *ctx, const gmt_end_t *e)
{
	gmt_phases_t *ph = ctx;
	return ph->rv.end(ph->rv.ctx, e);
}

void gmt_phases_visitor(gmt_phases_t *ph, gmt_visitor_t *v)
{
	memset(v, 0, sizeof(*v));
	v->ctx = ph;
	v->header = ph_header;
	v->device = ph_device;
	v->drops = ph_drops;
	v->end = ph_end;
	v->string = ph_string;
}

/* ---- figures ------------------------------------------------------------- */

static gmt_pdev_t *occ_dev(gmt_occ_t *o, int ordinal)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= o->n_dev) {
		/* exactly the devices up to this one at first (most
		 * processes use one: a pdev is about 3 KB), then doubling */
		size_t n = o->n_dev ? o->n_dev : (size_t)ordinal + 1;
		while (n <= (size_t)ordinal)
			n *= 2;
		gmt_pdev_t *nd = realloc(o->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		for (size_t i = o->n_dev; i < n; i++) {
			memset(&nd[i], 0, sizeof(nd[i]));
			nd[i].ordinal = -1;
		}
		o->dev = nd;
		o->n_dev = n;
	}
	gmt_pdev_t *p = &o->dev[ordinal];
	if (p->ordinal < 0)
		p->ordinal = ordinal;
	return p;
}

static inline int64_t gap_of(const gmt_lv_vals_t *v)
{
	return v->gap;
}

static void moment(gmt_moment_t *m, uint64_t ts, uint64_t occ, const gmt_lv_vals_t *v)
{
	m->valid = 1;
	m->ts = ts;
	m->occ = occ;
	m->v = *v;
}

/* Offers the values of one instant to one occurrence's figures. */
static void fig_offer(gmt_pfig_t *f, uint64_t ts, uint64_t k, const gmt_lv_vals_t *v)
{
	if (v->has_allocated && (!f->max_alloc.valid || v->allocated > f->max_alloc.v.allocated))
		moment(&f->max_alloc, ts, k, v);
	if (v->has_reserved && (!f->max_res.valid || v->reserved > f->max_res.v.reserved))
		moment(&f->max_res, ts, k, v);
	if (!f->max_held.valid || v->held > f->max_held.v.held)
		moment(&f->max_held, ts, k, v);
	if (v->has_reserved && v->has_allocated &&
	    (!f->max_gap.valid || gap_of(v) > gap_of(&f->max_gap.v)))
		moment(&f->max_gap, ts, k, v);
	if (!f->max_outside.valid || v->outside > f->max_outside.v.outside)
		moment(&f->max_outside, ts, k, v);
	if (v->has_used && (!f->max_untraced.valid || v->untraced > f->max_untraced.v.untraced))
		moment(&f->max_untraced, ts, k, v);
}

/* ---- thresholds: most instants move no maximum -----------------------------
 *
 * An instant's values change an open occurrence's figures only where one
 * passes a maximum (fig_offer). Per device and view, the smallest of each
 * maximum over the open occurrences (or that one of them has none yet) is
 * kept, so an instant is compared with it from the scalars alone
 * (gmt_levels_keys) and the full values are made only when some maximum
 * moves. It is made again after such an instant, and for every device when
 * an occurrence opens or closes (thr_gen). */

enum { INV_ALLOC = 1, INV_RES = 2, INV_HELD = 4, INV_GAP = 8, INV_OUT = 16, INV_UNTR = 32,
       INV_ALL = 63 };

typedef struct thr {
	uint64_t gen;
	struct thr_view {
		uint64_t alloc, res, held, out;
		int64_t gap, untr;
		unsigned inv;        /* INV_*: an open occurrence has no such maximum */
	} w[GMT_VIEWS];
} thr_t;

static void thr_make(gmt_phases_t *ph, int ordinal, thr_t *t)
{
	for (int w = 0; w < GMT_VIEWS; w++)
		t->w[w] = (struct thr_view){ UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, INT64_MAX,
					     INT64_MAX, 0 };
	for (size_t a = 0; a < ph->n_active; a++) {
		const gmt_occ_t *o = ph->active[a];
		const gmt_pdev_t *p = (size_t)ordinal < o->n_dev ? &o->dev[ordinal] : NULL;
		for (int w = 0; w < GMT_VIEWS; w++) {
			struct thr_view *x = &t->w[w];
			if (!p || p->ordinal < 0) {
				x->inv = INV_ALL;
				continue;
			}
			const gmt_pfig_t *f = &p->fig[w];
#define MIN_OF(m, field, key, bit) \
	if (!f->m.valid) \
		x->inv |= bit; \
	else if (f->m.v.field < x->key) \
		x->key = f->m.v.field;
			MIN_OF(max_alloc, allocated, alloc, INV_ALLOC)
			MIN_OF(max_res, reserved, res, INV_RES)
			MIN_OF(max_held, held, held, INV_HELD)
			MIN_OF(max_gap, gap, gap, INV_GAP)
			MIN_OF(max_outside, outside, out, INV_OUT)
			MIN_OF(max_untraced, untraced, untr, INV_UNTR)
#undef MIN_OF
		}
	}
	t->gen = ph->thr_gen;
}

/* fig_offer's tests against every open occurrence at once: 1 when an
 * instant with these scalars moves some maximum. */
static inline int thr_moves(const thr_t *t, const gmt_lv_keys_t k[GMT_VIEWS])
{
	for (int w = 0; w < GMT_VIEWS; w++) {
		const struct thr_view *x = &t->w[w];
		const gmt_lv_keys_t *v = &k[w];
		if ((v->has_allocated && ((x->inv & INV_ALLOC) || v->allocated > x->alloc)) ||
		    (v->has_reserved && ((x->inv & INV_RES) || v->reserved > x->res)) ||
		    (x->inv & INV_HELD) || v->held > x->held ||
		    (v->has_reserved && v->has_allocated && ((x->inv & INV_GAP) || v->gap > x->gap)) ||
		    (x->inv & INV_OUT) || v->outside > x->out ||
		    (v->has_used && ((x->inv & INV_UNTR) || v->untraced > x->untr)))
			return 1;
	}
	return 0;
}

static thr_t *thr_of(gmt_phases_t *ph, int ordinal)
{
	if ((size_t)ordinal >= ph->n_thr) {
		size_t n = ph->n_thr ? ph->n_thr : 4;
		while (n <= (size_t)ordinal)
			n *= 2;
		thr_t *nt = realloc(ph->thr, n * sizeof(*nt));
		if (!nt)
			return NULL;
		memset(nt + ph->n_thr, 0, (n - ph->n_thr) * sizeof(*nt));   /* gen 0: not made */
		ph->thr = nt;
		ph->n_thr = n;
	}
	return &ph->thr[ordinal];
}

static int offer(gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (devs[i] < 0)
			continue;
		thr_t *t = thr_of(ph, devs[i]);
		if (!t)
			return -ENOMEM;
		if (t->gen == ph->thr_gen) {
			gmt_lv_keys_t k[GMT_VIEWS];
			gmt_levels_keys(ph->lv, devs[i], k);
			if (!thr_moves(t, k))
				continue;
		}
		gmt_lv_vals_t v[GMT_VIEWS];
		gmt_levels_values_all(ph->lv, devs[i], v);
		for (size_t a = 0; a < ph->n_active; a++) {
			gmt_occ_t *o = ph->active[a];
			gmt_pdev_t *p = occ_dev(o, devs[i]);
			if (!p)
				return -ENOMEM;
			for (int w = 0; w < GMT_VIEWS; w++)
				fig_offer(&p->fig[w], ts, o->k, &v[w]);
		}
		thr_make(ph, devs[i], t);
	}
	return 0;
}

/* Offers the pending instant's devices to the open occurrences. */
static int offer_pending(gmt_phases_t *ph)
{
	int rc = 0;
	if (!ph->n_pend)
		return 0;
	if (ph->n_active)
		rc = offer(ph, ph->pend_ts, ph->pend, ph->n_pend);
	for (size_t i = 0; i < ph->n_pend; i++)
		ph->pend_flag[ph->pend[i]] = 0;
	ph->n_pend = 0;
	return rc;
}

/* Devices changed at ts. Only open occurrences take an instant's values,
 * and none opens or closes between this and the offer (a range event
 * offers first), so without one there is nothing to keep. */
static int add_pending_open(gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n)
{
	ph->pend_ts = ts;
	for (size_t i = 0; i < n; i++) {
		int d = devs[i];
		if (d < 0)
			continue;
		if ((size_t)d >= ph->cap_flag) {
			size_t nc = ph->cap_flag ? ph->cap_flag : 8;
			while (nc <= (size_t)d)
				nc *= 2;
			uint8_t *nf = realloc(ph->pend_flag, nc);
			if (!nf)
				return -ENOMEM;
			memset(nf + ph->cap_flag, 0, nc - ph->cap_flag);
			ph->pend_flag = nf;
			ph->cap_flag = nc;
		}
		if (ph->pend_flag[d])
			continue;
		if (ph->n_pend == ph->cap_pend) {
			size_t nc = ph->cap_pend ? ph->cap_pend * 2 : 8;
			int *np = realloc(ph->pend, nc * sizeof(*np));
			if (!np)
				return -ENOMEM;
			ph->pend = np;
			ph->cap_pend = nc;
		}
		ph->pend[ph->n_pend++] = d;
		ph->pend_flag[d] = 1;
	}
	return 0;
}

static inline int add_pending(gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n)
{
	if (!ph->n_active)
		return 0;
	/* the common instant: one device, the first of its instant */
	if (n == 1 && !ph->n_pend && devs[0] >= 0 && (size_t)devs[0] < ph->cap_flag && ph->cap_pend) {
		ph->pend_ts = ts;
		ph->pend[0] = devs[0];
		ph->pend_flag[devs[0]] = 1;
		ph->n_pend = 1;
		return 0;
	}
	return add_pending_open(ph, ts, devs, n);
}

/* The devices with values now, into ph->devbuf. */
static size_t known_devices(gmt_phases_t *ph)
{
	size_t n = gmt_levels_devices(ph->lv, ph->devbuf, ph->cap_devbuf);
	if (n > ph->cap_devbuf) {
		int *p = realloc(ph->devbuf, n * 2 * sizeof(*p));
		if (!p)
			return 0;
		ph->devbuf = p;
		ph->cap_devbuf = n * 2;
		n = gmt_levels_devices(ph->lv, ph->devbuf, ph->cap_devbuf);
	}
	return n;
}

/* ---- checkpoints ---------------------------------------------------------- */

static gmt_ck_dev_t *ck_dev(gmt_phases_t *ph, int ordinal, int create)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= ph->n_ck) {
		if (!create)
			return NULL;
		size_t n = ph->n_ck ? ph->n_ck : 4;
		while (n <= (size_t)ordinal)
			n *= 2;
		gmt_ck_dev_t **nc = realloc(ph->ck, n * sizeof(*nc));
		if (!nc)
			return NULL;
		memset(nc + ph->n_ck, 0, (n - ph->n_ck) * sizeof(*nc));
		ph->ck = nc;
		ph->n_ck = n;
	}
	if (!ph->ck[ordinal] && create) {
		ph->ck[ordinal] = calloc(1, sizeof(**ph->ck));
		if (ph->ck[ordinal])
			ph->ck[ordinal]->ordinal = ordinal;
	}
	return ph->ck[ordinal];
}

/* A checkpoint (after gmt_levels has seen it: it changes no level), or
 * another framework event, which withdraws the device's candidates. A
 * checkpoint of no device (ordinal < 0) has nothing to compare with and is
 * ignored. */
static int ck_event(gmt_phases_t *ph, const gmt_devent_t *e)
{
	if (e->type != GMT_EV_FW_ALLOCATED && e->type != GMT_EV_FW_RESERVED) {
		gmt_ck_dev_t *c = ck_dev(ph, e->device, 0);
		if (c)
			c->cand[GMT_CK_ALLOCATED].valid = c->cand[GMT_CK_RESERVED].valid = 0;
		return 0;
	}
	if (e->device < 0)
		return 0;
	gmt_ck_dev_t *c = ck_dev(ph, e->device, 1);
	if (!c)
		return -ENOMEM;
	unsigned kind = e->type == GMT_EV_FW_ALLOCATED ? GMT_CK_ALLOCATED : GMT_CK_RESERVED;
	gmt_lv_vals_t v;
	gmt_levels_values(ph->lv, e->device, GMT_VIEW_REQUESTED, &v);
	gmt_ck_t ck = {
		.valid = 1, .ts = e->ts, .fw = (uint32_t)e->aux,
		.fw_current = e->addr, .fw_peak = e->size,
	};
	int known = kind == GMT_CK_ALLOCATED ? v.has_allocated : v.has_reserved;
	if (!known) {
		ck.state = GMT_CK_UNKNOWN;
	} else if (gmt_levels_fw_others(ph->lv, e->device, ck.fw)) {
		ck.state = GMT_CK_OTHERS;
	} else {
		ck.rebuilt = kind == GMT_CK_ALLOCATED ? v.allocated : v.reserved;
		ck.src = kind == GMT_CK_ALLOCATED ? v.asrc : v.rsrc;
		ck.state = ck.rebuilt == ck.fw_current ? GMT_CK_AGREE : GMT_CK_DISAGREE;
		ck.difference = (int64_t)(ck.fw_current - ck.rebuilt);
	}
	c->count[kind]++;
	c->by_state[kind][ck.state]++;
	c->latest[kind] = ck;
	c->cand[kind] = ck;
	if (ck.state != GMT_CK_DISAGREE || c->n_diffs >= ph->o.max_ck_listed)
		return 0;
	if (!c->diffs) {
		c->diffs = calloc(ph->o.max_ck_listed, sizeof(*c->diffs));
		if (!c->diffs)
			return -ENOMEM;
	}
	gmt_ck_diff_t *d = &c->diffs[c->n_diffs++];
	d->ck = ck;
	d->kind = kind;
	d->prev = ph->last_boundary;
	return 0;
}

/* A phase boundary: the candidates pair with it, and it is the next
 * boundary of the disagreements that wait for one. */
static int ck_boundary(gmt_phases_t *ph, gmt_occ_t *o, uint64_t ts, int is_end)
{
	gmt_boundary_t b = { .valid = 1, .is_end = is_end, .ts = ts, .k = o->k, .name_id = o->name_id };
	for (size_t i = 0; i < ph->n_ck; i++) {
		gmt_ck_dev_t *c = ph->ck[i];
		if (!c)
			continue;
		for (int k = 0; k < GMT_CK_KINDS; k++) {
			if (!c->cand[k].valid)
				continue;
			gmt_pdev_t *p = occ_dev(o, c->ordinal);
			if (!p)
				return -ENOMEM;
			(is_end ? p->ck_end : p->ck_start)[k] = c->cand[k];
		}
		for (size_t j = c->n_resolved; j < c->n_diffs; j++)
			c->diffs[j].next = b;
		c->n_resolved = c->n_diffs;
	}
	ph->last_boundary = b;
	return 0;
}

const gmt_boundary_t *gmt_ck_nearest(const gmt_ck_diff_t *d)
{
	if (!d->prev.valid)
		return d->next.valid ? &d->next : NULL;
	if (!d->next.valid)
		return &d->prev;
	return d->ck.ts - d->prev.ts < d->next.ts - d->ck.ts ? &d->prev : &d->next;
}

const gmt_ck_dev_t *gmt_phases_checkpoints(const gmt_phases_t *ph, int ordinal)
{
	return ordinal >= 0 && (size_t)ordinal < ph->n_ck ? ph->ck[ordinal] : NULL;
}

/* ---- occurrences --------------------------------------------------------- */

static gmt_phase_name_t *name_get(gmt_phases_t *ph, uint32_t name_id)
{
	uint64_t *v = ph->o.open_only ? map_value(ph, name_id) : name_value(ph, name_id);
	if (!v)
		return NULL;
	if (*v)
		return &ph->names[*v - 1];
	if (ph->n_names == ph->cap_names) {
		size_t nc = ph->cap_names ? ph->cap_names * 2 : 8;
		gmt_phase_name_t *nn = realloc(ph->names, nc * sizeof(*nn));
		if (!nn)
			return NULL;
		ph->names = nn;
		ph->cap_names = nc;
	}
	gmt_phase_name_t *n = &ph->names[ph->n_names];
	memset(n, 0, sizeof(*n));
	n->name_id = name_id;
	*v = ++ph->n_names;
	return n;
}

/* Whether a range is in one domain of --domain: "gpumemtrace" (our API and
 * our NVTX domain), "default" (NVTX's default domain: its outermost ranges,
 * nested ones too with --all-depths), "*" (all of those and every named
 * domain) or a named NVTX domain (at any depth). */
static int in_domain(const char *want, unsigned source, const char *dom, uint32_t domain_id,
		     uint64_t depth, int all_depths)
{
	const int ours = source == GMT_RANGE_API || (dom && !strcmp(dom, "gpumemtrace"));
	const int deflt = !ours && domain_id == 0;
	if (!strcmp(want, "*"))
		return !deflt || depth == 0 || all_depths;
	if (!strcmp(want, "gpumemtrace"))
		return ours;
	if (!strcmp(want, "default"))
		return deflt && (depth == 0 || all_depths);
	return !ours && !deflt && dom && !strcmp(want, dom);
}

/* The phase selection, the one rule every command applies (docs/analyzer.md,
 * "Which ranges are phases"): without --domain, our API's and our domain's
 * ranges and the default domain's outermost ones; with --domain, only the
 * ranges of the domains named; then --pattern on the name. */
static int selected(const gmt_phases_t *ph, unsigned source, uint32_t name_id,
		    uint32_t domain_id, uint64_t depth)
{
	const char *dom = str_of(ph, domain_id);
	int yes = 0;
	if (!ph->o.n_domains)
		yes = in_domain("gpumemtrace", source, dom, domain_id, depth, 0) ||
		      in_domain("default", source, dom, domain_id, depth, ph->o.all_depths);
	for (size_t i = 0; i < ph->o.n_domains && !yes; i++)
		yes = in_domain(ph->o.domains[i], source, dom, domain_id, depth, ph->o.all_depths);
	if (!yes || !ph->o.n_patterns)
		return yes;
	const char *name = str_of(ph, name_id);
	for (size_t i = 0; i < ph->o.n_patterns; i++)
		if (!fnmatch(ph->o.patterns[i], name ? name : "", 0))
			return 1;
	return 0;
}

static gmt_occ_t *occ_open(gmt_phases_t *ph, const gmt_devent_t *e, uint32_t name_id,
			   uint32_t domain_id)
{
	uint64_t k;
	if (ph->o.open_only) {
		uint64_t *c = name_value(ph, name_id);
		if (!c)
			return NULL;
		k = ++*c;
		const char *text = k == 1 ? str_of(ph, name_id) : NULL;
		if (text && ph->n_distinct++ < 8)
			ph->first_names[ph->n_distinct - 1] = name_id;
		if (text && ph->o.fold_only && !strcmp(text, ph->o.fold_only))
			ph->fold_id = name_id;
		if (name_id && name_id == ph->fold_id) {
			gmt_phase_name_t *nm = name_get(ph, name_id);
			if (!nm)
				return NULL;
			nm->occurrences = k;
		}
	} else {
		gmt_phase_name_t *nm = name_get(ph, name_id);
		if (!nm)
			return NULL;
		k = ++nm->occurrences;
	}
	if (ph->n_active == ph->cap_active) {
		size_t nc = ph->cap_active ? ph->cap_active * 2 : 8;
		gmt_occ_t **na = realloc(ph->active, nc * sizeof(*na));
		if (!na)
			return NULL;
		ph->active = na;
		ph->cap_active = nc;
	}
	gmt_occ_t *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->name_id = name_id;
	o->domain_id = domain_id;
	o->source = (unsigned)e->stream;
	o->thread = e->thread;
	o->k = k;
	o->begin_ts = e->ts;
	o->fail_dev = -1;
	size_t n = known_devices(ph);
	for (size_t i = 0; i < n; i++) {
		gmt_pdev_t *p = occ_dev(o, ph->devbuf[i]);
		if (!p) {
			occ_free(o);
			return NULL;
		}
		for (int w = 0; w < GMT_VIEWS; w++) {
			gmt_lv_vals_t v;
			gmt_levels_values(ph->lv, ph->devbuf[i], (enum gmt_view)w, &v);
			p->fig[w].has_start = 1;
			p->fig[w].start = v;
			fig_offer(&p->fig[w], e->ts, o->k, &v);
		}
	}
	ph->active[ph->n_active++] = o;
	ph->thr_gen++;           /* every device's thresholds: made again */
	return o;
}

static void vals_max(gmt_lv_vals_t *a, const gmt_lv_vals_t *b)
{
#define MX(f) if (b->f > a->f) a->f = b->f
	MX(allocated); MX(reserved); MX(outside); MX(used); MX(held); MX(untraced);
	for (int o = 0; o < GMT_DOWNERS; o++)
		MX(outside_owner[o]);
	MX(has_allocated); MX(has_reserved); MX(has_used); MX(asrc); MX(rsrc);
#undef MX
}

static void moment_max(gmt_moment_t *a, const gmt_moment_t *b, int (*gt)(const gmt_moment_t *, const gmt_moment_t *))
{
	if (b->valid && (!a->valid || gt(b, a)))
		*a = *b;
}

static int gt_alloc(const gmt_moment_t *a, const gmt_moment_t *b) { return a->v.allocated > b->v.allocated; }
static int gt_res(const gmt_moment_t *a, const gmt_moment_t *b) { return a->v.reserved > b->v.reserved; }
static int gt_held(const gmt_moment_t *a, const gmt_moment_t *b) { return a->v.held > b->v.held; }
static int gt_gap(const gmt_moment_t *a, const gmt_moment_t *b) { return gap_of(&a->v) > gap_of(&b->v); }
static int gt_out(const gmt_moment_t *a, const gmt_moment_t *b) { return a->v.outside > b->v.outside; }
static int gt_untr(const gmt_moment_t *a, const gmt_moment_t *b) { return a->v.untraced > b->v.untraced; }

/* Merges a warm occurrence into its name's aggregate: each figure's maximum
 * over the warm occurrences (a moment keeps the values of its own instant
 * and says which occurrence it was). */
static int warm_merge(gmt_occ_t *w, const gmt_occ_t *o)
{
	if (!w->k || o->begin_ts < w->begin_ts)
		w->begin_ts = o->begin_ts;
	if (o->end_ts > w->end_ts)
		w->end_ts = o->end_ts;
	w->k++;
	w->failed += o->failed ? 1 : 0;
	w->ended += o->ended ? 1 : 0;
	for (size_t d = 0; d < o->n_dev; d++) {
		const gmt_pdev_t *p = &o->dev[d];
		if (p->ordinal < 0)
			continue;
		gmt_pdev_t *q = occ_dev(w, p->ordinal);
		if (!q)
			return -ENOMEM;
		for (int v = 0; v < GMT_VIEWS; v++) {
			gmt_pfig_t *a = &q->fig[v];
			const gmt_pfig_t *b = &p->fig[v];
			a->has_start |= b->has_start;
			vals_max(&a->start, &b->start);
			vals_max(&a->end, &b->end);
			moment_max(&a->max_alloc, &b->max_alloc, gt_alloc);
			moment_max(&a->max_res, &b->max_res, gt_res);
			moment_max(&a->max_held, &b->max_held, gt_held);
			moment_max(&a->max_gap, &b->max_gap, gt_gap);
			moment_max(&a->max_outside, &b->max_outside, gt_out);
			moment_max(&a->max_untraced, &b->max_untraced, gt_untr);
		}
	}
	return 0;
}

/* Closes an occurrence at ts (ended: a matching end was seen) and folds it
 * into its name. */
static int occ_close(gmt_phases_t *ph, gmt_occ_t *o, uint64_t ts, int ended)
{
	for (size_t a = 0; a < ph->n_active; a++)
		if (ph->active[a] == o) {
			memmove(&ph->active[a], &ph->active[a + 1], (ph->n_active - a - 1) * sizeof(*ph->active));
			ph->n_active--;
			ph->thr_gen++;
			break;
		}
	o->end_ts = ts;
	o->ended = ended;
	if (ph->o.open_only && (!o->name_id || o->name_id != ph->fold_id)) {
		occ_free(o);   /* nobody asks for it again */
		return 0;
	}
	size_t n = known_devices(ph);
	for (size_t i = 0; i < n; i++) {
		gmt_pdev_t *p = occ_dev(o, ph->devbuf[i]);
		if (!p)
			return -ENOMEM;
		for (int w = 0; w < GMT_VIEWS; w++)
			gmt_levels_values(ph->lv, ph->devbuf[i], (enum gmt_view)w, &p->fig[w].end);
	}
	gmt_phase_name_t *nm = name_get(ph, o->name_id);
	if (!nm)
		return -ENOMEM;
	if (o->failed)
		nm->failed++;
	if (!ended)
		nm->unterminated++;
	if (o->k >= 2) {
		if (!nm->warm) {
			if (!(nm->warm = calloc(1, sizeof(*nm->warm))))
				return -ENOMEM;
			nm->warm->name_id = nm->name_id;
		}
		nm->n_warm++;
		if (warm_merge(nm->warm, o))
			return -ENOMEM;
	}
	if (nm->n_listed < ph->o.max_listed) {
		if (nm->n_listed == nm->cap_listed) {
			size_t nc = nm->cap_listed ? nm->cap_listed * 2 : 1;
			gmt_occ_t **nl = realloc(nm->listed, nc * sizeof(*nl));
			if (!nl)
				return -ENOMEM;
			nm->listed = nl;
			nm->cap_listed = nc;
		}
		/* keep them by occurrence number (nested ones of a name close
		 * in reverse order) */
		size_t i = nm->n_listed++;
		while (i && nm->listed[i - 1]->k > o->k) {
			nm->listed[i] = nm->listed[i - 1];
			i--;
		}
		nm->listed[i] = o;
		return 0;
	}
	occ_free(o);
	return 0;
}

static int hook_instant(gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n, int changed)
{
	if (!ph->hook.instant || (!n && !changed))
		return 0;
	return ph->hook.instant(ph->hook.ctx, ph, ts, devs, n, changed);
}

static int range_begin(gmt_phases_t *ph, const gmt_devent_t *e)
{
	uint32_t name_id = canon(ph, (uint32_t)e->aux), domain_id = canon(ph, (uint32_t)(e->aux >> 32));
	unsigned source = (unsigned)e->stream;
	open_range_t r = { .id = e->addr, .name_id = name_id, .occ = NULL };
	tstack_t *st = NULL;

	if (source == GMT_RANGE_NVTX_STARTEND) {
		if (ph->n_ids >= MAX_OPEN_IDS) {
			ph->anom.dropped_ranges++;
			return 0;
		}
		if (ph->n_ids == ph->cap_ids) {
			size_t nc = ph->cap_ids ? ph->cap_ids * 2 : 16;
			open_range_t *ni = realloc(ph->ids, nc * sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			ph->ids = ni;
			ph->cap_ids = nc;
		}
	} else {
		if (e->thread >= MAX_THREADS) {
			ph->anom.dropped_ranges++;
			return 0;
		}
		if (e->thread >= ph->n_threads) {
			size_t nc = ph->n_threads ? ph->n_threads : 8;
			while (nc <= e->thread)
				nc *= 2;
			tstack_t *nt = realloc(ph->threads, nc * sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			memset(nt + ph->n_threads, 0, (nc - ph->n_threads) * sizeof(*nt));
			ph->threads = nt;
			ph->n_threads = nc;
		}
		st = &ph->threads[e->thread];
		if (st->n >= MAX_DEPTH) {
			ph->anom.dropped_ranges++;
			return 0;
		}
		if (st->n == st->cap) {
			uint32_t nc = st->cap ? st->cap * 2 : 8;
			open_range_t *nr = realloc(st->r, nc * sizeof(*nr));
			if (!nr)
				return -ENOMEM;
			st->r = nr;
			st->cap = nc;
		}
	}
	if (selected(ph, source, name_id, domain_id, e->size)) {
		r.occ = occ_open(ph, e, name_id, domain_id);
		if (!r.occ || ck_boundary(ph, r.occ, e->ts, 0))
			return -ENOMEM;
	}
	if (st)
		st->r[st->n++] = r;
	else
		ph->ids[ph->n_ids++] = r;
	return r.occ ? hook_instant(ph, e->ts, NULL, 0, 1) : 0;
}

static int range_end(gmt_phases_t *ph, const gmt_devent_t *e)
{
	uint32_t name_id = canon(ph, (uint32_t)e->aux);
	open_range_t r;
	if ((unsigned)e->stream == GMT_RANGE_NVTX_STARTEND) {
		size_t i = 0;
		while (i < ph->n_ids && ph->ids[i].id != e->addr)
			i++;
		if (i == ph->n_ids) {
			ph->anom.unmatched_ends++;
			return 0;
		}
		r = ph->ids[i];
		ph->ids[i] = ph->ids[--ph->n_ids];
	} else {
		tstack_t *st = e->thread < ph->n_threads ? &ph->threads[e->thread] : NULL;
		if (!st || !st->n) {
			ph->anom.unmatched_ends++;
			return 0;
		}
		r = st->r[--st->n];
		if (name_id && name_id != r.name_id)
			ph->anom.name_mismatches++;
	}
	if (!r.occ)
		return 0;
	int rc = ck_boundary(ph, r.occ, e->ts, 1);
	if (!rc)
		rc = occ_close(ph, r.occ, e->ts, 1);
	return rc ? rc : hook_instant(ph, e->ts, NULL, 0, 1);
}

static void mark_failed(gmt_phases_t *ph, const gmt_devent_t *e)
{
	for (size_t a = 0; a < ph->n_active; a++) {
		gmt_occ_t *o = ph->active[a];
		if (o->failed)
			continue;
		o->failed = 1;
		o->fail_ts = e->ts;
		o->fail_size = e->size;
		o->fail_dev = e->device;
		o->fail_type = e->type;
		size_t n = known_devices(ph);
		for (size_t i = 0; i < n; i++) {
			gmt_pdev_t *p = occ_dev(o, ph->devbuf[i]);
			if (!p)
				continue;
			for (int w = 0; w < GMT_VIEWS; w++)
				gmt_levels_values(ph->lv, ph->devbuf[i], (enum gmt_view)w, &p->fig[w].at_fail);
		}
	}
}

/* New driver allocations wait for their segment (gmt_levels.h); one whose
 * grace runs out becomes outside at that moment, an instant of its own
 * when no event falls on it: every deadline before ts is played here. */
static int play_deadlines_slow(gmt_phases_t *ph, uint64_t ts)
{
	uint64_t dl;
	int rc;
	while (gmt_levels_next_deadline(ph->lv, &dl) && dl < ts) {
		if (ph->n_pend && dl != ph->pend_ts && (rc = offer_pending(ph)))
			return rc;
		if ((rc = gmt_levels_expire(ph->lv, dl)))
			return rc;
		size_t n;
		const int *devs = gmt_levels_take_dirty(ph->lv, &n);
		if (n && (rc = add_pending(ph, dl, devs, n)))
			return rc;
		if ((rc = hook_instant(ph, dl, devs, n, 0)))
			return rc;
	}
	return 0;
}

static inline int play_deadlines(gmt_phases_t *ph, uint64_t ts)
{
	return gmt_levels_waiting(ph->lv) ? play_deadlines_slow(ph, ts) : 0;
}

int gmt_phases_event(gmt_phases_t *ph, const gmt_devent_t *e)
{
	return gmt_phases_event_from(ph, e, 0);
}

/* gmt_phases_event_from, inlined into the run's loop over a batch. */
static inline __attribute__((always_inline)) int phase_event(gmt_phases_t *ph, const gmt_devent_t *e,
							     int side)
{
	int rc;
	size_t n;
	const int *devs;
	if (__builtin_expect(ph->o.pairing_only, 0)) {
		if (e->ts > ph->last_ts)
			ph->last_ts = e->ts;
		if (e->type == GMT_EV_RANGE_BEGIN)
			return range_begin(ph, e);
		if (e->type == GMT_EV_RANGE_END)
			return range_end(ph, e);
		if (e->type == GMT_EV_ALLOC_FAIL || e->type == GMT_EV_FW_OOM)
			mark_failed(ph, e);
		return 0;
	}
	if ((rc = play_deadlines(ph, e->ts)))
		return rc;
	if (e->ts > ph->last_ts)
		ph->last_ts = e->ts;
	if (ph->n_pend && e->ts != ph->pend_ts && (rc = offer_pending(ph)))
		return rc;
	switch (e->type) {
	case GMT_EV_RANGE_BEGIN:
	case GMT_EV_RANGE_END:
		/* What changed before the boundary belongs to the occurrences
		 * open before it (also at the same ts): that includes the
		 * allocations this event resolves (a thread's next event). */
		if ((rc = gmt_levels_event_from(ph->lv, e, side)))   /* counted */
			return rc;
		devs = gmt_levels_take_dirty(ph->lv, &n);
		if (n && (rc = add_pending(ph, e->ts, devs, n)))
			return rc;
		if ((rc = offer_pending(ph)) || (rc = hook_instant(ph, e->ts, devs, n, 0)))
			return rc;
		return e->type == GMT_EV_RANGE_BEGIN ? range_begin(ph, e) : range_end(ph, e);
	default:
		break;
	}
	if ((rc = gmt_levels_event_from(ph->lv, e, side)))
		return rc;
	if (e->type >= GMT_EV_FW_ALLOC && e->type <= GMT_EV_FW_LOST && (rc = ck_event(ph, e)))
		return rc;
	devs = gmt_levels_take_dirty(ph->lv, &n);
	if (n && (rc = add_pending(ph, e->ts, devs, n)))
		return rc;
	if (e->type == GMT_EV_ALLOC_FAIL || e->type == GMT_EV_FW_OOM)
		mark_failed(ph, e);
	return hook_instant(ph, e->ts, devs, n, 0);
}

int gmt_phases_event_from(gmt_phases_t *ph, const gmt_devent_t *e, int side)
{
	return phase_event(ph, e, side);
}

/* The figures' numbers derived from others, once, for the renderers:
 * bounds (sums and differences of maxima at different instants), durations,
 * what is not listed, each disagreement's nearest boundary. */
static void derive_fig(gmt_pfig_t *x)
{
	x->has_bound_sum = x->max_res.valid && x->max_outside.valid;
	x->bound_sum = x->has_bound_sum ? x->max_res.v.reserved + x->max_outside.v.outside : 0;
	x->has_bound_diff = x->max_res.valid && x->max_alloc.valid;
	x->bound_diff = x->has_bound_diff ? (int64_t)(x->max_res.v.reserved - x->max_alloc.v.allocated) : 0;
}

static void derive_occ(gmt_occ_t *o)
{
	o->duration_ns = o->end_ts - o->begin_ts;
	for (size_t d = 0; d < o->n_dev; d++)
		for (int w = 0; w < GMT_VIEWS; w++)
			derive_fig(&o->dev[d].fig[w]);
}

static void derive(gmt_phases_t *ph)
{
	for (size_t i = 0; i < ph->n_names; i++) {
		gmt_phase_name_t *n = &ph->names[i];
		n->not_listed = n->occurrences - n->n_listed;
		for (size_t k = 0; k < n->n_listed; k++)
			if (n->listed[k])
				derive_occ(n->listed[k]);
		if (n->warm)
			derive_occ(n->warm);
	}
	for (size_t i = 0; i < ph->n_ck; i++) {
		gmt_ck_dev_t *c = ph->ck[i];
		if (!c)
			continue;
		c->disagreements = c->by_state[GMT_CK_ALLOCATED][GMT_CK_DISAGREE] +
				   c->by_state[GMT_CK_RESERVED][GMT_CK_DISAGREE];
		c->not_listed = c->disagreements - c->n_diffs;
		for (size_t k = 0; k < c->n_diffs; k++) {
			gmt_ck_diff_t *d = &c->diffs[k];
			d->nearest = gmt_ck_nearest(d);
			d->from_nearest_ns = d->nearest ? (int64_t)(d->ck.ts - d->nearest->ts) : 0;
		}
	}
}

int gmt_phases_finish(gmt_phases_t *ph, const gmt_decode_result_t *res)
{
	int rc = 0;
	if (ph->finished)
		return 0;
	ph->finished = 1;
	/* The end of the trace resolves what still waits (rule (d)), at the
	 * last instant. */
	size_t n;
	const int *devs;
	if (ph->n_pend && ph->pend_ts != ph->last_ts && (rc = offer_pending(ph)))
		return rc;
	if ((rc = gmt_levels_end_pending(ph->lv)))
		return rc;
	devs = gmt_levels_take_dirty(ph->lv, &n);
	if (n && ((rc = add_pending(ph, ph->last_ts, devs, n)) ||
		  (rc = hook_instant(ph, ph->last_ts, devs, n, 0))))
		return rc;
	rc = offer_pending(ph);
	/* Still open at the end: unterminated, with the last values seen. */
	while (ph->n_active && !rc)
		rc = occ_close(ph, ph->active[ph->n_active - 1], ph->last_ts, 0);
	/* The open-range records pointed at those occurrences. */
	for (size_t i = 0; i < ph->n_threads; i++)
		ph->threads[i].n = 0;
	ph->n_ids = 0;
	gmt_levels_finish(ph->lv);
	gmt_replay_finish(gmt_levels_replay(ph->lv), res);
	derive(ph);
	return rc;
}

/* ---- running a trace ------------------------------------------------------ */

typedef struct run {
	const char *path;
	const gmt_phase_opts_t *o;
	const gmt_phases_hook_t *hook;
	gmt_phases_t *ph;
} run_t;

static int run_reset(void *ctx, int pass)
{
	run_t *r = ctx;
	(void)pass;
	gmt_phases_free(r->ph);
	r->ph = gmt_phases_new(r->path, r->o);
	if (!r->ph)
		return -ENOMEM;
	gmt_phases_set_hook(r->ph, r->hook);
	if (r->hook && r->hook->reset)
		return r->hook->reset(r->hook->ctx);
	return 0;
}

static int run_event(void *ctx, const gmt_devent_t *e, int side)
{
	run_t *r = ctx;
	int rc;
	if (side)
		gmt_replay_note_side(gmt_levels_replay(r->ph->lv), 1);
	if ((rc = gmt_phases_event_from(r->ph, e, side)))
		return rc;
	return r->hook && r->hook->event ? r->hook->event(r->hook->ctx, e, side) : 0;
}

static int run_events(void *ctx, const gmt_devent_t *ev, size_t n)
{
	run_t *r = ctx;
	gmt_phases_t *ph = r->ph;
	int (*hook)(void *, const gmt_devent_t *, int) = r->hook ? r->hook->event : NULL;
	for (size_t i = 0; i < n; i++) {
		int rc = phase_event(ph, &ev[i], 0);
		if (!rc && hook)
			rc = hook(r->hook->ctx, &ev[i], 0);
		if (rc)
			return rc;
	}
	return 0;
}

static int run_header(void *ctx, const gmt_header_t *h)
{
	return ph_header(((run_t *)ctx)->ph, h);
}
static int run_device(void *ctx, const gmt_device_rec_t *d)
{
	return ph_device(((run_t *)ctx)->ph, d);
}
static int run_drops(void *ctx, const gmt_drops_t *d)
{
	return ph_drops(((run_t *)ctx)->ph, d);
}
static int run_end(void *ctx, const gmt_end_t *e)
{
	return ph_end(((run_t *)ctx)->ph, e);
}
static int run_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	return ph_string(((run_t *)ctx)->ph, id, text, len);
}

int gmt_phases_run(const char *path, const gmt_phase_opts_t *o, const gmt_phases_hook_t *hook,
		   gmt_phases_t **out, gmt_decode_result_t *res)
{
	run_t r = { .path = path, .o = o, .hook = hook };
	gmt_timeline_sink_t sink = {
		.ctx = &r, .reset = run_reset, .event = run_event, .events = run_events,
		.meta = { .ctx = &r, .header = run_header, .device = run_device,
			  .drops = run_drops, .end = run_end, .string = run_string },
	};
	gmt_timeline_run(path, &sink, res, NULL);
	if (!r.ph && res->status != GMT_DECODE_STOPPED) {
		/* never reset: cannot happen (pass 1 always resets) */
		res->status = GMT_DECODE_STOPPED;
	}
	if (r.ph && gmt_phases_finish(r.ph, res) && res->status == GMT_DECODE_OK) {
		res->status = GMT_DECODE_STOPPED;
		snprintf(res->message, sizeof(res->message), "%s: out of memory while analysing", path);
	}
	*out = r.ph;
	return res->status;
}

/* ---- accessors ------------------------------------------------------------ */

gmt_levels_t *gmt_phases_levels(gmt_phases_t *ph)
{
	return ph->lv;
}

const gmt_summary_t *gmt_phases_summary(const gmt_phases_t *ph)
{
	return gmt_replay_summary(gmt_levels_replay(ph->lv));
}

const char *gmt_phases_string(const gmt_phases_t *ph, uint32_t id)
{
	return str_of(ph, id);
}

const gmt_phase_name_t *gmt_phases_names(const gmt_phases_t *ph, size_t *n)
{
	*n = ph->n_names;
	return ph->names;
}

const gmt_phase_anomalies_t *gmt_phases_anomalies(const gmt_phases_t *ph)
{
	return &ph->anom;
}

uint64_t gmt_phases_first_names(const gmt_phases_t *ph, const uint32_t **first, size_t *n_first)
{
	*first = ph->first_names;
	*n_first = ph->n_distinct < 8 ? (size_t)ph->n_distinct : 8;
	return ph->n_distinct;
}

uint32_t gmt_phases_current(const gmt_phases_t *ph, int *open)
{
	*open = ph->n_active > 0;
	return ph->n_active ? ph->active[ph->n_active - 1]->name_id : 0;
}

const gmt_occ_t *gmt_phases_current_occ(const gmt_phases_t *ph)
{
	return ph->n_active ? ph->active[ph->n_active - 1] : NULL;
}

size_t gmt_phases_devices(const gmt_phases_t *ph, int *out, size_t cap)
{
	return gmt_levels_devices(ph->lv, out, cap);
}
