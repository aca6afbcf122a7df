/*
 * gmt_liveset.c - the live set by stack at chosen instants (gmt_liveset.h).
 *
 * The replay's observer (gmt_replay_observe) gives each live block two
 * values, kept by the replay with the block (no map of our own): its stack
 * (gmt_obs_t.cookie) and its device's peak generation when it became live
 * (cookie_hi); live handles are kept here with the same two. After the
 * main-stream events due, the instants named by event number are taken
 * (sorted, so each is looked at once: a batch of events is cut right after
 * each), and those named by a device's peak bytes after every event until
 * the peak reaches them.
 *
 * The peaks found on the way (gmt_liveset_new's maxima) need no second
 * pass. Each device has a generation, raised after every event at which
 * its peak rose (the replay's dev_add raises the peak only as it adds a
 * block or handle, which it tells the observer right after: that is where
 * a rise is seen, and the raise waits until the event is over). A block
 * was live at the device's latest peak exactly when it became live at a
 * lower generation and is still live, or was freed since that peak; so a
 * free of such a block adds its bytes to its group's "freed since the
 * peak" (kept with the generation it counts for: a rise makes every older
 * one void without touching it), and at the end the live set at the peak
 * is those plus every block and handle still live that became live at a
 * lower generation. A FREE undone by FREE_FAIL is a free and then a new
 * block to the replay, so to this too (it keeps its allocation's stack).
 *
 * Groups are by stack id; a group's owner is the lowest recorded owner of
 * its blocks (so that it does not depend on the order blocks are met in).
 */
#include "engines/gmt_liveset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "support/gmt_hmap.h"
#include "support/gmt_u64map.h"

uint32_t gmt_liveset_max_rises = UINT32_MAX - 1;

/* Frees recorded lately, for a FREE_FAIL that brings a block back. */
#define RECENT 16

/* (device, stack, owner) as one key. */
#define GKEY(dev, stack, owner) ((uint64_t)(uint32_t)(stack) | (uint64_t)((owner) & 0xff) << 32 | \
				 (uint64_t)(uint16_t)((dev) + 1) << 40)
#define K_STACK(k) ((uint32_t)(k))
#define K_OWNER(k) ((unsigned)(((k) >> 32) & 0xff))
#define K_DEV(k)   ((int)(((k) >> 40) & 0xffff) - 1)

/* A live handle: its size, stack, owner, device and generation. */
typedef struct ls_handle {
	uint64_t key, size;
	uint32_t stack, gen;
	int16_t dev;
	uint8_t owner, used;
} ls_handle_t;
#define H_EMPTY(s) (!(s)->used)
#define H_SET_EMPTY(s) ((s)->used = 0)
#define H_SET_USED(s) ((s)->used = 1)
GMT_HMAP_DEFINE(ls_hmap, ls_handle_t, GMT_HMAP_FIB, H_EMPTY, H_SET_EMPTY, H_SET_USED, 1, 2, 4)

/* Bytes freed since a device's latest peak that were live at it, by group
 * (key GKEY; valid while gen is the device's generation). */
typedef struct ls_freed {
	uint64_t key, bytes, count;
	uint32_t gen, used;
} ls_freed_t;
#define F_EMPTY(s) (!(s)->used)
#define F_SET_EMPTY(s) ((s)->used = 0)
#define F_SET_USED(s) ((s)->used = 1)
GMT_HMAP_DEFINE(ls_fmap, ls_freed_t, GMT_HMAP_FIB, F_EMPTY, F_SET_EMPTY, F_SET_USED, 1, 2, 4)

/* A device's peak as found so far. */
typedef struct ls_dev {
	const gmt_dev_summary_t *ds;   /* its summary (stays put once made) */
	uint64_t peak;           /* its summary's peak.total when last seen  */
	uint32_t gen;            /* rises so far                              */
	int lost;                /* more rises than gmt_liveset_max_rises: not
				    followed any more                          */
	int pending;             /* rose during the event being applied       */
	uint64_t at_seq, at_ts;  /* the event of the latest rise              */
} ls_dev_t;

struct gmt_liveset {
	gmt_replay_t *rp;
	gmt_visitor_t inner;          /* the replay's own callbacks */
	ls_hmap_t handles;
	struct { uint64_t addr; uint32_t stack, valid; } recent[RECENT];
	unsigned recent_next;
	gmt_instant_t **by_seq;       /* GMT_AT_EVENT, by seq */
	size_t n_seq, next_seq;
	gmt_instant_t **by_peak;      /* GMT_AT_PEAK */
	size_t n_peak, peak_left;
	int maxima;                   /* find every device's peak */
	ls_dev_t *dev;                /* index ordinal + 1 */
	size_t n_dev;
	ls_fmap_t freed;
	ls_freed_t *last_freed;       /* the slot of the latest key put (valid
					 until another key is put)            */
	const gmt_devent_t *pending_cause;   /* a rise waits for its event's end */
	size_t pending_dev;           /* ... of this device (index), or of
					 several (pending_many)               */
	int pending_many;
	const gmt_devent_t *batch;    /* the events being applied ...        */
	uint64_t batch_seq;           /* ... the first of them numbered this + 1 */
	uint64_t seq, ts;
	int observing;
};

static ls_dev_t *dev_grow(gmt_liveset_t *l, int ordinal)
{
	size_t i = (size_t)(ordinal + 1);
	if (ordinal < -1)
		return NULL;
	if (i >= l->n_dev) {
		size_t n = l->n_dev ? l->n_dev : 4;
		while (n <= i)
			n *= 2;
		ls_dev_t *nd = realloc(l->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + l->n_dev, 0, (n - l->n_dev) * sizeof(*nd));
		l->dev = nd;
		l->n_dev = n;
	}
	return &l->dev[i];
}

/* The event that raised peaks is over: their generations go up. */
static void rises_done(gmt_liveset_t *l)
{
	const gmt_devent_t *c = l->pending_cause;
	const size_t lo = l->pending_many ? 0 : l->pending_dev;
	const size_t hi = l->pending_many ? l->n_dev : l->pending_dev + 1;
	for (size_t i = lo; i < hi; i++) {
		ls_dev_t *d = &l->dev[i];
		if (!d->pending)
			continue;
		d->pending = 0;
		if (d->gen >= gmt_liveset_max_rises)
			d->lost = 1;   /* (the caller takes this one another way) */
		else
			d->gen++;
		d->at_seq = l->batch_seq + (uint64_t)(c - l->batch) + 1;
		d->at_ts = c->ts;
	}
	l->pending_cause = NULL;
	l->pending_many = 0;
}

/* A block or handle became live on device dev: its generation, and
 * whether the device's peak rose. */
static inline __attribute__((always_inline)) int added(gmt_liveset_t *l, const gmt_devent_t *cause, int dev, uint32_t *gen)
{
	*gen = 0;
	if (!l->maxima || dev < 0)
		return 0;   /* (blocks of no device have no peak here) */
	ls_dev_t *d = (size_t)dev + 1 < l->n_dev ? &l->dev[dev + 1] : dev_grow(l, dev);
	if (!d)
		return -ENOMEM;
	*gen = d->gen;
	const gmt_dev_summary_t *ds = d->ds;
	if (!ds)
		ds = d->ds = gmt_summary_device(gmt_replay_summary(l->rp), dev);
	if (ds && ds->peak.total > d->peak && cause) {
		d->peak = ds->peak.total;
		d->pending = 1;
		if (!l->pending_cause)
			l->pending_dev = (size_t)dev + 1;
		else if (l->pending_dev != (size_t)dev + 1)
			l->pending_many = 1;
		l->pending_cause = cause;
	}
	return 0;
}

/* A block or handle of generation gen stopped being live on device dev:
 * if it was live at the device's latest peak, its bytes count there. */
static inline int removed(gmt_liveset_t *l, int dev, uint32_t stack, unsigned owner, uint32_t gen,
			  uint64_t size)
{
	if (!l->maxima || dev < 0 || (size_t)(dev + 1) >= l->n_dev)
		return 0;
	const ls_dev_t *d = &l->dev[dev + 1];
	if (gen >= d->gen)
		return 0;   /* became live after the latest peak */
	const uint64_t key = GKEY(dev, stack, owner);
	ls_freed_t *f = l->last_freed;
	if (!f || f->key != key) {
		int existed;
		if (!(f = ls_fmap_put(&l->freed, key, &existed)))
			return -ENOMEM;
		l->last_freed = f;
	}
	if (f->gen != d->gen) {
		f->gen = d->gen;
		f->bytes = f->count = 0;
	}
	f->bytes += size;
	f->count++;
	return 0;
}

static int observe(void *ctx, const gmt_devent_t *cause, const gmt_obs_t *o)
{
	gmt_liveset_t *l = ctx;
	if (l->pending_cause && cause != l->pending_cause)
		rises_done(l);
	switch (o->op) {
	case GMT_OBS_BLOCK_ADD: {
		uint32_t stack = cause ? cause->stack : 0;
		if (cause && cause->type == GMT_EV_FREE_FAIL) {
			/* A free undone: the block keeps its allocation's stack. */
			stack = 0;
			for (unsigned i = 0; i < RECENT; i++)
				if (l->recent[i].addr == o->key && l->recent[i].valid)
					stack = l->recent[i].stack;
		}
		*o->cookie = stack;
		return added(l, cause, o->dev, o->cookie_hi);
	}
	case GMT_OBS_BLOCK_DEL: {
		unsigned k = l->recent_next++ % RECENT;
		l->recent[k].addr = o->key;
		l->recent[k].stack = *o->cookie;
		l->recent[k].valid = 1;
		return removed(l, o->dev, *o->cookie, o->owner, *o->cookie_hi, o->size);
	}
	case GMT_OBS_HANDLE_ADD: {
		int existed;
		ls_handle_t *h = ls_hmap_put(&l->handles, o->key, &existed);
		if (!h)
			return -ENOMEM;
		h->size = o->size;
		h->stack = cause ? cause->stack : 0;
		h->owner = (uint8_t)o->owner;
		h->dev = (int16_t)o->dev;
		return added(l, cause, o->dev, &h->gen);
	}
	case GMT_OBS_HANDLE_DEL: {
		ls_handle_t *h = ls_hmap_find(&l->handles, o->key);
		if (!h)
			return 0;
		ls_handle_t x = *h;
		ls_hmap_del(&l->handles, h);
		return removed(l, x.dev, x.stack, x.owner, x.gen, x.size);
	}
	default:
		return 0;
	}
}

static int cmp_group(const void *a, const void *b)
{
	const gmt_live_group_t *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Groups being summed for one instant. */
typedef struct acc {
	gmt_instant_t *at;
	gmt_u64map_t by;   /* stack -> index in groups */
	size_t cap;
	uint32_t below;    /* blocks of generations below this only (0: all) */
} acc_t;

static int acc_add(acc_t *t, uint32_t stack, unsigned owner, uint64_t bytes, uint64_t count)
{
	gmt_instant_t *at = t->at;
	int existed;
	gmt_u64map_slot_t *x = gmt_u64map_put(&t->by, stack, &existed);
	if (!x)
		return -ENOMEM;
	if (!existed) {
		if (at->n_groups == t->cap) {
			size_t c = t->cap ? t->cap * 2 : 16;
			gmt_live_group_t *ng = realloc(at->groups, c * sizeof(*ng));
			if (!ng)
				return -ENOMEM;
			at->groups = ng;
			t->cap = c;
		}
		x->a = at->n_groups;
		at->groups[at->n_groups++] = (gmt_live_group_t){ .stack = stack, .owner = owner };
	}
	gmt_live_group_t *g = &at->groups[x->a];
	g->bytes += bytes;
	g->count += count;
	if (owner < g->owner)
		g->owner = owner;
	return 0;
}

/* Accumulators by device (index ordinal + 1; NULL: not wanted). */
typedef struct acc_set {
	acc_t **by_dev;
	size_t n;
} acc_set_t;

static int add_block(void *ctx, uint64_t addr, uint64_t size, int dev, unsigned kind, unsigned owner,
		     uint64_t cookie)
{
	acc_set_t *s = ctx;
	(void)addr;
	(void)kind;
	if (dev < -1 || (size_t)(dev + 1) >= s->n || !s->by_dev[dev + 1])
		return 0;
	acc_t *t = s->by_dev[dev + 1];
	if (t->below && (uint32_t)(cookie >> 32) >= t->below)
		return 0;
	return acc_add(t, (uint32_t)cookie, owner, size, 1);
}

/* Sums what is live now (of generations below each accumulator's bound)
 * into the accumulators. */
static int sum_live(gmt_liveset_t *l, acc_set_t *s)
{
	int rc = l->rp ? gmt_replay_each_block(l->rp, add_block, s) : 0;
	for (size_t i = 0; !rc && i <= l->handles.mask && l->handles.s; i++) {
		const ls_handle_t *h = &l->handles.s[i];
		if (h->used)
			rc = add_block(s, h->key, h->size, h->dev, 0, h->owner,
				       h->stack | (uint64_t)h->gen << 32);
	}
	return rc ? -ENOMEM : 0;
}

static void acc_done(acc_t *t)
{
	gmt_u64map_clear(&t->by);
	if (t->at->n_groups)
		qsort(t->at->groups, t->at->n_groups, sizeof(*t->at->groups), cmp_group);
	t->at->taken = 1;
}

/* Sums the live blocks and handles of the instant's device by stack. */
static int take(gmt_liveset_t *l, gmt_instant_t *at)
{
	acc_t t = { .at = at };
	int rc = 0;
	if (at->ordinal >= -1) {
		/* a set in which only the instant's device is wanted */
		size_t n = (size_t)(at->ordinal + 1) + 1;
		acc_t **by = calloc(n, sizeof(*by));
		if (!by)
			return -ENOMEM;
		by[n - 1] = &t;
		acc_set_t s = { by, n };
		rc = sum_live(l, &s);
		free(by);
	}
	if (rc) {
		gmt_u64map_clear(&t.by);
		return -ENOMEM;
	}
	acc_done(&t);
	at->at_seq = l->seq;
	at->at_ts = l->ts;
	return 0;
}

/* The instants due after event number l->seq. */
static int take_due(gmt_liveset_t *l)
{
	while (l->next_seq < l->n_seq && l->by_seq[l->next_seq]->seq <= l->seq)
		if (take(l, l->by_seq[l->next_seq++]))
			return -ENOMEM;
	if (!l->peak_left)
		return 0;
	const gmt_summary_t *s = gmt_replay_summary(l->rp);
	for (size_t k = 0; k < l->n_peak; k++) {
		gmt_instant_t *at = l->by_peak[k];
		if (at->taken)
			continue;
		const gmt_dev_summary_t *ds = gmt_summary_device(s, at->ordinal);
		if (ds && ds->peak.total >= at->bytes) {
			if (take(l, at))
				return -ENOMEM;
			l->peak_left--;
		}
	}
	return 0;
}

int gmt_liveset_events(gmt_liveset_t *l, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	if (!gmt_liveset_counts(flags))
		return l->inner.events(l->inner.ctx, ev, n, flags);
	size_t i = 0;
	while (i < n) {
		/* up to the next instant due, or one event while a peak is
		 * awaited */
		size_t k = n - i;
		if (l->peak_left)
			k = 1;
		else if (l->next_seq < l->n_seq && l->by_seq[l->next_seq]->seq - l->seq < k)
			k = (size_t)(l->by_seq[l->next_seq]->seq - l->seq);
		l->batch = &ev[i];
		l->batch_seq = l->seq;
		int rc = l->inner.events(l->inner.ctx, &ev[i], k, flags);
		if (rc)
			return rc;
		if (l->pending_cause)
			rises_done(l);
		/* (an id reset is for the record's first event) */
		flags &= ~(unsigned)GMT_EVENTS_IDS_RESET;
		l->seq += k;
		i += k;
		l->ts = ev[i - 1].ts;
		if ((l->peak_left || l->next_seq < l->n_seq) && take_due(l))
			return 1;
		if (!l->maxima && !l->peak_left && l->next_seq == l->n_seq && l->observing) {
			/* nothing more to keep */
			gmt_replay_observe(l->rp, NULL, NULL);
			l->observing = 0;
		}
	}
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const gmt_instant_t *x = *(gmt_instant_t *const *)a, *y = *(gmt_instant_t *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

gmt_liveset_t *gmt_liveset_new(gmt_replay_t *rp, gmt_instant_t *const *at, size_t n, int maxima)
{
	gmt_liveset_t *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->rp = rp;
	l->maxima = maxima;
	l->by_seq = calloc(n ? n : 1, sizeof(*l->by_seq));
	l->by_peak = calloc(n ? n : 1, sizeof(*l->by_peak));
	if (!l->by_seq || !l->by_peak) {
		gmt_liveset_free(l);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		gmt_instant_clear(at[i]);
		if (at[i]->kind == GMT_AT_PEAK)
			l->by_peak[l->n_peak++] = at[i];
		else
			l->by_seq[l->n_seq++] = at[i];
	}
	l->peak_left = l->n_peak;
	if (l->n_seq)
		qsort(l->by_seq, l->n_seq, sizeof(*l->by_seq), cmp_seq);
	/* instants before any event */
	while (l->next_seq < l->n_seq && !l->by_seq[l->next_seq]->seq)
		if (take(l, l->by_seq[l->next_seq++])) {
			gmt_liveset_free(l);
			return NULL;
		}
	gmt_replay_visitor(rp, &l->inner);
	if (maxima || l->peak_left || l->next_seq < l->n_seq) {
		gmt_replay_observe(rp, observe, l);
		l->observing = 1;
	}
	return l;
}

int gmt_liveset_finish(gmt_liveset_t *l, gmt_instant_t **maxima, size_t *n_maxima)
{
	*maxima = NULL;
	*n_maxima = 0;
	if (l->pending_cause)
		rises_done(l);
	if (!l->maxima)
		return 0;
	size_t n = 0;
	for (size_t i = 1; i < l->n_dev; i++)
		n += l->dev[i].gen != 0 && !l->dev[i].lost;
	if (!n)
		return 0;
	gmt_instant_t *at = calloc(n, sizeof(*at));
	acc_t *acc = calloc(n, sizeof(*acc));
	acc_t **by = calloc(l->n_dev, sizeof(*by));
	int rc = (!at || !acc || !by) ? -ENOMEM : 0;
	const gmt_summary_t *s = gmt_replay_summary(l->rp);
	size_t k = 0;
	for (size_t i = 1; !rc && i < l->n_dev; i++) {
		const ls_dev_t *d = &l->dev[i];
		if (!d->gen || d->lost)
			continue;
		const gmt_dev_summary_t *ds = gmt_summary_device(s, (int)i - 1);
		at[k] = (gmt_instant_t){ .kind = GMT_AT_PEAK, .ordinal = (int)i - 1,
					 .bytes = ds ? ds->peak.total : d->peak,
					 .at_seq = d->at_seq, .at_ts = d->at_ts };
		acc[k] = (acc_t){ .at = &at[k], .below = d->gen };
		by[i] = &acc[k];
		k++;
	}
	/* what was freed since each peak, then what is still live */
	for (size_t i = 0; !rc && l->freed.s && i <= l->freed.mask; i++) {
		const ls_freed_t *f = &l->freed.s[i];
		if (!f->used)
			continue;
		size_t di = (size_t)(K_DEV(f->key) + 1);
		if (di < l->n_dev && by[di] && f->gen == l->dev[di].gen)
			rc = acc_add(by[di], K_STACK(f->key), K_OWNER(f->key), f->bytes, f->count);
	}
	acc_set_t set = { by, l->n_dev };
	if (!rc)
		rc = sum_live(l, &set);
	for (size_t i = 0; acc && i < k; i++) {
		if (rc)
			gmt_u64map_clear(&acc[i].by);
		else
			acc_done(&acc[i]);
	}
	free(acc);
	free(by);
	if (rc) {
		for (size_t i = 0; at && i < k; i++)
			gmt_instant_clear(&at[i]);
		free(at);
		return -ENOMEM;
	}
	*maxima = at;
	*n_maxima = k;
	return 0;
}

void gmt_liveset_free(gmt_liveset_t *l)
{
	if (!l)
		return;
	if (l->rp && l->observing)
		gmt_replay_observe(l->rp, NULL, NULL);
	ls_hmap_free(&l->handles);
	ls_fmap_free(&l->freed);
	free(l->dev);
	free(l->by_seq);
	free(l->by_peak);
	free(l);
}

static int ls_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	return gmt_liveset_events(ctx, ev, n, flags);
}

int gmt_liveset_run(const char *path, gmt_instant_t *const *at, size_t n, gmt_decode_result_t *res)
{
	memset(res, 0, sizeof(*res));
	gmt_replay_t *rp = gmt_replay_new(path);
	gmt_liveset_t *l = rp ? gmt_liveset_new(rp, at, n, 0) : NULL;
	if (!l) {
		gmt_replay_free(rp);
		res->status = GMT_DECODE_STOPPED;
		return -ENOMEM;
	}
	gmt_visitor_t v;
	memset(&v, 0, sizeof(v));
	v.ctx = l;
	v.events = ls_events;
	gmt_decode_file(path, &v, res);
	int rc = res->status == GMT_DECODE_STOPPED ? -ENOMEM : 0;
	gmt_liveset_free(l);
	gmt_replay_free(rp);
	return rc;
}

void gmt_instant_clear(gmt_instant_t *at)
{
	free(at->groups);
	at->groups = NULL;
	at->n_groups = 0;
	at->taken = 0;
	at->at_seq = at->at_ts = 0;
}
