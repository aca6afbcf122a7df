/*
 * gmt_levels.c - allocated, reserved, outside and device used, per device,
 * at every instant of a time-ordered event stream.
 *
 * Three sources meet here:
 *   - the driver level, from the replay engine (gmt_replay.c), which this
 *     file feeds and observes: every device block, VMM handle and mapping
 *     that becomes live or goes is reported to levels_observe();
 *   - the framework's own events (FW_*): its blocks (allocated) and its
 *     segments (reserved), with the address ranges the segments cover;
 *   - samples: MEMINFO (device used) and POOL_RESERVED (a pool's reserved
 *     bytes, the cudaMallocAsync backend's "reserved").
 *
 * "Outside the framework" is decided by address containment: a driver
 * allocation (a block, or a VMM handle through its mappings) whose range
 * lies inside a live framework segment is the framework's memory; the rest
 * is outside. Either side may come first (a segment is reported after the
 * cudaMalloc that made it, or from a history whose times are approximate),
 * so containment is kept up to date both ways: a new driver range looks up
 * the framework's ranges of its device (a sorted array of disjoint
 * intervals, few: segments are large), and a framework range that appears
 * or goes re-examines the driver ranges that intersect it. Those are found
 * in an ordered map keyed by start address (the treap of
 * support/gmt_treap.h over a node pool, no allocation per event once the
 * pool has grown), built only once a framework range exists: driver ranges
 * do not overlap each other, so the ranges that intersect [a, b) are the
 * one that starts before a (if it reaches past a) and those that start in
 * [a, b). A device block itself is a 16-byte record (its time, stack and
 * flags) by the cookie the replay keeps in its slot: the replay holds the
 * rest and tells it with every observation, so memory per live block is
 * the replay's slot plus 16 bytes.
 *
 * Stream order: a stream-ordered free (kind stream_ordered) leaves the
 * requested view at once and the held view at the next SYNC that covers its
 * stream (a stream sync of that stream value, or a context sync: every
 * stream of the process), or a pool trim on its device. Pending frees are
 * aggregated per (stream, device, owner): a handful of entries.
 *
 * New allocations wait: a framework allocator learns a segment's address
 * from cudaMalloc (or cuMemCreate + cuMemMap) and only then reports
 * FW_SEGMENT_ALLOC/MAP, so between the two the bytes would be "outside" for
 * an instant that the user never saw. On a device that has had a framework
 * event, a new driver allocation is therefore pending (counted nowhere)
 * until a segment claims it, its thread moves on, its grace runs out or the
 * trace ends (the rules are at gmt_levels_event_from). Pending allocations
 * are few at any time (they resolve within one thread step or 1 ms): a flat
 * array, searched linearly.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_levels.h"
#include "support/gmt_treap.h"

/* ---- an ordered map: treap over a node pool ----------------------------- */

enum { T_RANGE = 1, T_HANDLE = 2, T_FW = 3 };
#define F_MAP    0x01u   /* a range that is a VMM mapping (aux = handle)   */
#define F_INSIDE 0x02u   /* inside a framework range now                   */
#define F_EVER   0x04u   /* was inside at some time                        */
#define F_PEND   0x08u   /* a new block or handle, not yet attributed      */
#define F_SHADOW 0x10u   /* a block's place in the ranges treap (aux: its
			    record); the block itself is an lv_blk_t      */
#define F_LIVE   0x80u   /* lv_blk_t: the record is in use                 */

typedef struct tnode {
	uint64_t key, size, ts;
	uint64_t aux;        /* mapping: handle; handle: mappings inside; fw: state */
	uint32_t left, right, prio, stack;
	int16_t dev;
	uint8_t kind, owner, flags, tree;   /* tree 0: free */
} tnode_t;

/* t_insert, t_find, t_unlink, t_lower, t_pred over the pool's nodes */
GMT_TREAP_DEFINE(t, tnode_t)

typedef struct tpool {
	tnode_t *n;          /* n[0] is the null node */
	uint32_t cap, used, free_head;
	uint64_t rng;
} tpool_t;

static uint32_t t_alloc(tpool_t *p)
{
	uint32_t i;
	if (p->free_head) {
		i = p->free_head;
		p->free_head = p->n[i].left;
	} else {
		if (p->used + 1 >= p->cap) {
			uint32_t nc = p->cap ? p->cap * 2 : 1024;
			if (nc < p->cap || nc > (1u << 30))
				return 0;
			tnode_t *nn = realloc(p->n, (size_t)nc * sizeof(*nn));
			if (!nn)
				return 0;
			p->n = nn;
			p->cap = nc;
			if (!p->used) {
				memset(&p->n[0], 0, sizeof(p->n[0]));
				p->used = 1;
			}
		}
		i = p->used++;
	}
	memset(&p->n[i], 0, sizeof(p->n[i]));
	/* xorshift64: priorities the input cannot steer */
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	p->n[i].prio = (uint32_t)(p->rng >> 32);
	return i;
}

static void t_release(tpool_t *p, uint32_t i)
{
	p->n[i].tree = 0;
	p->n[i].left = p->free_head;
	p->free_head = i;
}

/* ---- device blocks: what the replay's slot lacks ------------------------ */

/* A live device block's own record, indexed by the cookie the replay keeps
 * in the block's slot: the replay has its address, size, device, kind and
 * owner and hands them over with every observation, so only its time,
 * stack and flags are kept here (16 bytes a block). A free record's ts is
 * the next free one. */
typedef struct lv_blk {
	uint64_t ts;
	uint32_t stack;
	uint8_t flags;       /* F_INSIDE, F_EVER, F_PEND, F_LIVE */
} lv_blk_t;

typedef struct bpool {
	lv_blk_t *b;         /* b[0] unused: cookie 0 is "none" */
	uint32_t cap, used, free_head;
} bpool_t;

static uint32_t b_alloc(bpool_t *p)
{
	uint32_t i;
	if (p->free_head) {
		i = p->free_head;
		p->free_head = (uint32_t)p->b[i].ts;
	} else {
		if (p->used + 1 >= p->cap) {
			/* doubled; realloc moves a large array by remapping its
			 * pages, and only records up to the most live at once are
			 * ever written */
			uint32_t nc = p->cap ? p->cap * 2 : 1024;
			if (nc < p->cap || nc > (1u << 30))
				return 0;
			lv_blk_t *nb = realloc(p->b, (size_t)nc * sizeof(*nb));
			if (!nb)
				return 0;
			p->b = nb;
			p->cap = nc;
			if (!p->used)
				p->used = 1;
		}
		i = p->used++;
	}
	return i;
}

static void b_release(bpool_t *p, uint32_t i)
{
	p->b[i].flags = 0;
	p->b[i].ts = p->free_head;
	p->free_head = i;
}

/* ---- disjoint intervals [s, e), sorted --------------------------------- */

typedef struct iset {
	uint64_t (*iv)[2];
	size_t n, cap;
} iset_t;

/* First interval whose end >= x (adjacent counts), n if none. */
static size_t iset_first_end_ge(const iset_t *s, uint64_t x)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (s->iv[m][1] >= x)
			hi = m;
		else
			lo = m + 1;
	}
	return lo;
}

static int iset_contains(const iset_t *s, uint64_t a, uint64_t b)
{
	size_t i = iset_first_end_ge(s, a + 1 > a ? a + 1 : a);
	return i < s->n && s->iv[i][0] <= a && b <= s->iv[i][1];
}

static int iset_room(iset_t *s)
{
	if (s->n < s->cap)
		return 0;
	size_t nc = s->cap ? s->cap * 2 : 16;
	void *p = realloc(s->iv, nc * sizeof(*s->iv));
	if (!p)
		return -ENOMEM;
	s->iv = p;
	s->cap = nc;
	return 0;
}

static int iset_add(iset_t *s, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	size_t lo = iset_first_end_ge(s, a), hi = lo;
	while (hi < s->n && s->iv[hi][0] <= b)
		hi++;
	if (lo == hi) {
		if (iset_room(s))
			return -ENOMEM;
		memmove(&s->iv[lo + 1], &s->iv[lo], (s->n - lo) * sizeof(*s->iv));
		s->iv[lo][0] = a;
		s->iv[lo][1] = b;
		s->n++;
		return 0;
	}
	if (s->iv[lo][0] < a)
		a = s->iv[lo][0];
	if (s->iv[hi - 1][1] > b)
		b = s->iv[hi - 1][1];
	s->iv[lo][0] = a;
	s->iv[lo][1] = b;
	memmove(&s->iv[lo + 1], &s->iv[hi], (s->n - hi) * sizeof(*s->iv));
	s->n -= hi - lo - 1;
	return 0;
}

static int iset_remove(iset_t *s, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	size_t i = iset_first_end_ge(s, a + 1);
	while (i < s->n && s->iv[i][0] < b) {
		uint64_t x = s->iv[i][0], y = s->iv[i][1];
		if (x < a && y > b) {
			if (iset_room(s))
				return -ENOMEM;
			memmove(&s->iv[i + 2], &s->iv[i + 1], (s->n - i - 1) * sizeof(*s->iv));
			s->iv[i][1] = a;
			s->iv[i + 1][0] = b;
			s->iv[i + 1][1] = y;
			s->n++;
			return 0;
		}
		if (x < a) {
			s->iv[i][1] = a;
			i++;
		} else if (y > b) {
			s->iv[i][0] = b;
			return 0;
		} else {
			memmove(&s->iv[i], &s->iv[i + 1], (s->n - i - 1) * sizeof(*s->iv));
			s->n--;
		}
	}
	return 0;
}

/* ---- engine state ------------------------------------------------------- */

typedef struct lv_pending {
	uint64_t stream, total, outside;
	int dev;
	unsigned owner;
} lv_pending_t;

/* A pending new allocation (F_PEND: a block's record, or a VMM handle's
 * node), with what its bytes count in while it waits. */
typedef struct lv_new {
	uint64_t ts;         /* its time (a handle: of its latest mapping)   */
	uint64_t size;
	uint32_t idx, thread;
	int16_t dev;
	uint8_t owner, is_blk;
} lv_new_t;

typedef struct lv_dev {
	int ordinal;
	uint64_t mark;                         /* hot.gen: in the dirty list  */
	int fw_seen, fw_seg_seen, async_seen;
	int fw_any;                            /* any FW_* event: allocations wait */
	uint32_t fw_id;                        /* the framework of the first level event */
	int fw_many;                           /* level events of several frameworks */
	uint64_t pnew_owner[GMT_DOWNERS];      /* pending new allocations      */
	uint64_t fw_req, fw_held, fw_reserved;
	uint64_t fw_lost, fw_lost_first_ts, fw_anomalies;
	uint64_t async_owner[GMT_DOWNERS];     /* live stream-ordered, requested */
	uint64_t inside_owner[GMT_DOWNERS];    /* driver bytes inside FW ranges */
	uint64_t pend_total;                   /* stream-ordered frees not synced */
	uint64_t pend_out_owner[GMT_DOWNERS];  /* ... of them outside          */
	iset_t fwr;                            /* framework ranges             */
	int64_t untraced[GMT_VIEWS];           /* at the latest MEMINFO sample */
	uint64_t outliers[GMT_DOWNERS];
	gmt_outlier_t *top;                    /* min-heap, then sorted        */
	size_t n_top;
} lv_dev_t;

/* Driver ranges: the replay keeps each block's record index (bpool_t) or
 * mapping's node index in its own slot (gmt_obs_t.cookie), so the
 * observations need no lookup here; the ordered treap over the same ranges
 * is only needed to find the ranges that a framework range intersects, so
 * it is built at the first framework segment event and kept from then on
 * (a trace without segments never pays for it). In it, a block is a
 * shadow node (F_SHADOW: its address, size, device, kind and owner, aux
 * its record), a mapping its own node. */

struct gmt_levels {
	gmt_levels_hot_t hot;                  /* first (gmt_levels.h): pending
						  new allocations and the dirty
						  list                        */
	gmt_replay_t *rp;
	int fw_registered;                     /* FW_REGISTER seen: allocations
						  wait on every device        */
	int fw_any;                            /* some device's fw_any        */
	int fw_ranges;                         /* a framework range was added:
						  blocks are evaluated        */
	tpool_t pool;
	bpool_t blk;                           /* device blocks' records */
	uint32_t ranges, handles, fw;          /* tree roots */
	int ranges_ordered;                    /* the ranges treap is kept */
	int fw_none;                           /* none of fw_registered, fw_any,
						  fw_ranges, ranges_ordered
						  yet: blocks take the short way */
	lv_dev_t **dev;                        /* index ordinal + 1 */
	size_t n_dev, n_devs;                  /* slots; devices in them */
	size_t cap_dirty;                      /* room in hot.dirty           */
	lv_pending_t *pend;
	size_t n_pend, cap_pend;
	lv_new_t *nw;                          /* pending new allocations      */
	size_t n_nw, cap_nw;
	unsigned top_n;
	int finished;
	void (*outside_fn)(void *ctx, const gmt_outlier_t *o);
	void *outside_ctx;
};

_Static_assert(offsetof(struct gmt_levels, hot) == 0, "gmt_levels.h reads hot at the start");

static inline uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static inline uint64_t end_of(uint64_t a, uint64_t size)
{
	return a + size < a ? UINT64_MAX : a + size;
}

/* Block record b's shadow node in the ranges treap. 0 or -ENOMEM. */
static int shadow_add(gmt_levels_t *lv, uint32_t b, uint64_t key, uint64_t size, int dev,
		      unsigned kind, unsigned owner)
{
	uint32_t t = t_alloc(&lv->pool);
	if (!t)
		return -ENOMEM;
	tnode_t *n = &lv->pool.n[t];
	n->key = key;
	n->size = size;
	n->dev = (int16_t)dev;
	n->kind = (uint8_t)kind;
	n->owner = (uint8_t)gmt_downer(owner);
	n->aux = b;
	n->flags = F_SHADOW;
	n->tree = T_RANGE;
	t_insert(lv->pool.n, &lv->ranges, t);
	return 0;
}

static int shadow_block(void *ctx, uint64_t addr, uint64_t size, int dev, unsigned kind,
			unsigned owner, uint64_t cookie_all)
{
	gmt_levels_t *lv = ctx;
	uint32_t cookie = (uint32_t)cookie_all;   /* ours: the low half */
	if (!cookie || cookie >= lv->blk.used || !(lv->blk.b[cookie].flags & F_LIVE))
		return 0;
	return shadow_add(lv, cookie, addr, size, dev, kind, owner);
}

/* Builds the ranges treap from the live driver ranges, once: the mappings'
 * nodes, and a shadow node for each live block (the replay's). 0 or
 * -ENOMEM. */
static int ranges_order(gmt_levels_t *lv)
{
	if (lv->ranges_ordered)
		return 0;
	lv->ranges_ordered = 1;
	lv->fw_none = 0;
	for (uint32_t i = 1; i < lv->pool.used; i++)
		if (lv->pool.n[i].tree == T_RANGE)
			t_insert(lv->pool.n, &lv->ranges, i);
	return gmt_replay_each_block(lv->rp, shadow_block, lv);
}

static lv_dev_t *dev_get_slow(gmt_levels_t *lv, int ordinal)
{
	if (ordinal < -1)
		ordinal = -1;
	if (ordinal > 32766)
		ordinal = 32766;
	size_t idx = (size_t)(ordinal + 1);
	if (idx < lv->n_dev && lv->dev[idx])
		return lv->dev[idx];
	if (idx >= lv->n_dev) {
		size_t n = lv->n_dev ? lv->n_dev : 4;
		while (n <= idx)
			n *= 2;
		lv_dev_t **nd = realloc(lv->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + lv->n_dev, 0, (n - lv->n_dev) * sizeof(*nd));
		lv->dev = nd;
		lv->n_dev = n;
	}
	/* the dirty list holds each device at most once: room for all */
	if (lv->cap_dirty <= lv->n_devs) {
		size_t nc = lv->cap_dirty ? lv->cap_dirty * 2 : 8;
		int *p = realloc(lv->hot.dirty, nc * sizeof(*p));
		if (!p)
			return NULL;
		lv->hot.dirty = p;
		lv->cap_dirty = nc;
	}
	lv_dev_t *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->ordinal = ordinal;
	lv->dev[idx] = d;
	lv->n_devs++;
	return d;
}

/* The device's state, created when first seen (NULL: out of memory). */
static inline lv_dev_t *dev_get(gmt_levels_t *lv, int ordinal)
{
	size_t idx = (size_t)(ordinal + 1);
	if (__builtin_expect(ordinal >= -1 && idx < lv->n_dev && lv->dev[idx] != NULL, 1))
		return lv->dev[idx];
	return dev_get_slow(lv, ordinal);
}

static const lv_dev_t *dev_find(const gmt_levels_t *lv, int ordinal)
{
	if (ordinal < -1)
		return NULL;
	size_t idx = (size_t)(ordinal + 1);
	return idx < lv->n_dev ? lv->dev[idx] : NULL;
}

/* Device d's values may have changed (at most once per instant it is
 * listed; dev_get_slow made room for every device). Returns 0. */
static inline int mark(gmt_levels_t *lv, lv_dev_t *d)
{
	if (d->mark != lv->hot.gen) {
		lv->hot.dirty[lv->hot.n_dirty++] = d->ordinal;
		d->mark = lv->hot.gen;
	}
	return 0;
}

/* Whether a driver range of a device counts as outside (for the list of
 * outside allocations) when it was never inside a framework range: without
 * framework events, stream-ordered allocations are the allocator's own. */
static int counts_outside(const lv_dev_t *d, unsigned kind)
{
	return !(kind == GMT_KIND_ASYNC && !d->fw_seen && d->async_seen);
}

static int outlier_less(const gmt_outlier_t *a, const gmt_outlier_t *b)
{
	if (a->size != b->size)
		return a->size < b->size;
	if (a->ts != b->ts)
		return a->ts > b->ts;   /* the earlier one ranks higher */
	return a->addr > b->addr;
}

static void outlier_push(gmt_levels_t *lv, lv_dev_t *d, const gmt_outlier_t *o)
{
	d->outliers[gmt_downer(o->owner)]++;
	if (!lv->top_n)
		return;
	if (!d->top) {
		d->top = calloc(lv->top_n, sizeof(*d->top));
		if (!d->top)
			return;  /* the list is a convenience: counts stay right */
	}
	size_t i;
	if (d->n_top < lv->top_n) {
		i = d->n_top++;
		while (i && outlier_less(o, &d->top[(i - 1) / 2])) {
			d->top[i] = d->top[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		d->top[i] = *o;
		return;
	}
	if (!outlier_less(&d->top[0], o))
		return;
	i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= d->n_top)
			break;
		if (c + 1 < d->n_top && outlier_less(&d->top[c + 1], &d->top[c]))
			c++;
		if (!outlier_less(&d->top[c], o))
			break;
		d->top[i] = d->top[c];
		i = c;
	}
	d->top[i] = *o;
}

/* An allocation that went (freed_ts) or is live at the end (0): listed if
 * it never lay inside a framework range (flags: its F_EVER). */
static void outlier_add(gmt_levels_t *lv, lv_dev_t *d, unsigned flags, const gmt_outlier_t *o)
{
	if (!d)
		d = dev_get(lv, o->dev);
	if (!d || (flags & F_EVER) || !counts_outside(d, o->kind))
		return;
	outlier_push(lv, d, o);
	if (lv->outside_fn)
		lv->outside_fn(lv->outside_ctx, o);
}

static void handle_outlier(gmt_levels_t *lv, const tnode_t *n, uint64_t freed_ts)
{
	gmt_outlier_t o = { .addr = n->key, .size = n->size, .ts = n->ts, .freed_ts = freed_ts,
			    .stack = n->stack, .dev = n->dev, .kind = n->kind, .owner = n->owner,
			    .is_handle = 1 };
	outlier_add(lv, NULL, n->flags, &o);
}

/* A block as the replay tells it, with its record x (d: its device's
 * state, NULL: looked up). */
static void block_outlier(gmt_levels_t *lv, lv_dev_t *d, const lv_blk_t *x, uint64_t addr, uint64_t size,
			  int dev, unsigned kind, unsigned owner, uint64_t freed_ts)
{
	gmt_outlier_t o = { .addr = addr, .size = size, .ts = x->ts, .freed_ts = freed_ts,
			    .stack = x->stack, .dev = (int16_t)dev, .kind = (uint8_t)kind,
			    .owner = (uint8_t)gmt_downer(owner) };
	outlier_add(lv, d, x->flags, &o);
}

void gmt_levels_set_outside_fn(gmt_levels_t *lv, void (*fn)(void *ctx, const gmt_outlier_t *o), void *ctx)
{
	lv->outside_fn = fn;
	lv->outside_ctx = ctx;
}

/* ---- pending new allocations --------------------------------------------- */

static lv_new_t *nw_find(gmt_levels_t *lv, int is_blk, uint32_t idx)
{
	for (size_t i = 0; i < lv->hot.n_nw; i++)
		if (lv->nw[i].idx == idx && lv->nw[i].is_blk == is_blk)
			return &lv->nw[i];
	return NULL;
}

static uint8_t *flags_of(gmt_levels_t *lv, int is_blk, uint32_t idx)
{
	return is_blk ? &lv->blk.b[idx].flags : &lv->pool.n[idx].flags;
}

/* Makes a block's record or a handle's node (idx) pending from cause. */
static int pend_new(gmt_levels_t *lv, lv_dev_t *d, int is_blk, uint32_t idx, uint64_t size,
		    unsigned owner, const gmt_devent_t *cause)
{
	if (lv->hot.n_nw == lv->cap_nw) {
		size_t nc = lv->cap_nw ? lv->cap_nw * 2 : 8;
		lv_new_t *p = realloc(lv->nw, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		lv->nw = p;
		lv->cap_nw = nc;
	}
	lv->nw[lv->hot.n_nw++] = (lv_new_t){ .ts = cause->ts, .size = size, .idx = idx, .thread = cause->thread,
					 .dev = (int16_t)d->ordinal, .owner = (uint8_t)owner,
					 .is_blk = (uint8_t)is_blk };
	*flags_of(lv, is_blk, idx) |= F_PEND;
	d->pnew_owner[owner] += size;
	return mark(lv, d);
}

/* The block or handle is attributed (claimed, outside or gone): its bytes
 * count as the other quantities say from now. */
static int unpend_slow(gmt_levels_t *lv, int is_blk, uint32_t idx)
{
	uint8_t *f = flags_of(lv, is_blk, idx);
	*f &= (uint8_t)~F_PEND;
	lv_new_t *w = nw_find(lv, is_blk, idx);
	if (!w)
		return 0;
	lv_new_t x = *w;
	*w = lv->nw[--lv->hot.n_nw];
	lv_dev_t *d = dev_get(lv, x.dev);
	if (!d)
		return -ENOMEM;
	d->pnew_owner[x.owner] = sub0(d->pnew_owner[x.owner], x.size);
	return mark(lv, d);
}

static inline int unpend(gmt_levels_t *lv, int is_blk, uint32_t idx)
{
	return *flags_of(lv, is_blk, idx) & F_PEND ? unpend_slow(lv, is_blk, idx) : 0;
}

/* Resolves the pending allocations that rule (b) (thread, when by_thread)
 * or rule (c) (grace run out by now) resolves. Downwards: unpend moves the
 * last entry into the hole, and that one was already examined. */
static int pend_resolve(gmt_levels_t *lv, uint64_t now, int by_thread, uint32_t thread)
{
	int rc;
	for (size_t i = lv->hot.n_nw; i-- > 0;) {
		const lv_new_t *w = &lv->nw[i];
		if (((by_thread && w->thread == thread) ||
		     (now >= w->ts && now - w->ts >= GMT_LV_GRACE_NS)) &&
		    (rc = unpend(lv, w->is_blk, w->idx)))
			return rc;
	}
	return 0;
}

/* ---- containment -------------------------------------------------------- */

static int blk_inside_moves(gmt_levels_t *lv, uint32_t b, int dev, unsigned owner, uint64_t size, int inside)
{
	uint8_t *f = &lv->blk.b[b].flags;
	if (inside)
		*f |= F_INSIDE | F_EVER;
	else
		*f &= (uint8_t)~F_INSIDE;
	lv_dev_t *d = dev_get(lv, dev);
	if (!d)
		return -ENOMEM;
	int rc;
	if (inside && (rc = unpend(lv, 1, b)))   /* rule (a): claimed */
		return rc;
	if (inside)
		d->inside_owner[owner] += size;
	else
		d->inside_owner[owner] = sub0(d->inside_owner[owner], size);
	return mark(lv, d);
}

/* Sets a block's inside flag and moves its bytes. */
static inline int blk_set_inside(gmt_levels_t *lv, uint32_t b, int dev, unsigned owner, uint64_t size,
				 int inside)
{
	if (!!(lv->blk.b[b].flags & F_INSIDE) == !!inside)
		return 0;
	return blk_inside_moves(lv, b, dev, owner, size, inside);
}

/* Whether a block lies inside a framework range of its device now. */
static int blk_eval(gmt_levels_t *lv, uint32_t b, uint64_t key, uint64_t size, int dev, unsigned owner)
{
	if (!(lv->blk.b[b].flags & F_LIVE))
		return 0;
	const lv_dev_t *d = dev_find(lv, dev);
	int in = d && d->fwr.n && iset_contains(&d->fwr, key, end_of(key, size));
	return blk_set_inside(lv, b, dev, owner, size, in);
}

/* Sets a mapping's inside flag and moves its handle's bytes. */
static int set_inside(gmt_levels_t *lv, uint32_t t, int inside)
{
	tnode_t *N = lv->pool.n;
	if (!!(N[t].flags & F_INSIDE) == !!inside)
		return 0;
	if (inside)
		N[t].flags |= F_INSIDE | F_EVER;
	else
		N[t].flags &= (uint8_t)~F_INSIDE;
	uint32_t h = t_find(N, lv->handles, N[t].aux);
	if (!h)
		return 0;
	lv_dev_t *d = dev_get(lv, N[h].dev);
	if (!d)
		return -ENOMEM;
	unsigned o = gmt_downer(N[h].owner);
	if (inside) {
		int rc = unpend(lv, 0, h);  /* rule (a): claimed through a mapping */
		if (rc)
			return rc;
		N = lv->pool.n;
		if (N[h].aux++ == 0) {
			d->inside_owner[o] += N[h].size;
			N[h].flags |= F_EVER;
		}
	} else if (N[h].aux) {
		if (--N[h].aux == 0)
			d->inside_owner[o] = sub0(d->inside_owner[o], N[h].size);
	}
	return mark(lv, d);
}

/* The device whose framework ranges decide a driver range (-2: none). */
static int range_dev(const gmt_levels_t *lv, uint32_t t)
{
	const tnode_t *N = lv->pool.n;
	if (!(N[t].flags & F_MAP))
		return N[t].dev;
	uint32_t h = t_find(N, lv->handles, N[t].aux);
	return h ? N[h].dev : -2;
}

/* Node t: a mapping, or a block's shadow. */
static int eval_range(gmt_levels_t *lv, uint32_t t)
{
	const tnode_t *n = &lv->pool.n[t];
	if (n->flags & F_SHADOW)
		return blk_eval(lv, (uint32_t)n->aux, n->key, n->size, n->dev, n->owner);
	int dv = range_dev(lv, t);
	if (dv < -1)
		return 0;
	const lv_dev_t *d = dev_find(lv, dv);
	int in = d && d->fwr.n && iset_contains(&d->fwr, n->key, end_of(n->key, n->size));
	return set_inside(lv, t, in);
}

/* Re-examines the driver ranges of device dv that intersect [a, b). */
static int reeval(gmt_levels_t *lv, int dv, uint64_t a, uint64_t b)
{
	int rc = ranges_order(lv);
	if (rc)
		return rc;
	const tnode_t *N = lv->pool.n;
	uint32_t t = t_pred(N, lv->ranges, a);
	if (t && end_of(N[t].key, N[t].size) > a && range_dev(lv, t) == dv)
		rc = eval_range(lv, t);
	for (t = t_lower(N, lv->ranges, a); t && !rc && lv->pool.n[t].key < b;) {
		uint64_t k = lv->pool.n[t].key;
		if (range_dev(lv, t) == dv)
			rc = eval_range(lv, t);
		if (k == UINT64_MAX)
			break;
		t = t_lower(lv->pool.n, lv->ranges, k + 1);
	}
	return rc;
}

/* ---- pending stream-ordered frees --------------------------------------- */

static int pend_add(gmt_levels_t *lv, lv_dev_t *d, uint64_t stream, unsigned owner,
		    uint64_t size, int outside)
{
	lv_pending_t *p = NULL;
	for (size_t i = 0; i < lv->n_pend; i++)
		if (lv->pend[i].stream == stream && lv->pend[i].dev == d->ordinal &&
		    lv->pend[i].owner == owner) {
			p = &lv->pend[i];
			break;
		}
	if (!p) {
		if (lv->n_pend == lv->cap_pend) {
			size_t nc = lv->cap_pend ? lv->cap_pend * 2 : 8;
			lv_pending_t *np = realloc(lv->pend, nc * sizeof(*np));
			if (!np)
				return -ENOMEM;
			lv->pend = np;
			lv->cap_pend = nc;
		}
		p = &lv->pend[lv->n_pend++];
		memset(p, 0, sizeof(*p));
		p->stream = stream;
		p->dev = d->ordinal;
		p->owner = owner;
	}
	p->total += size;
	d->pend_total += size;
	if (outside) {
		p->outside += size;
		d->pend_out_owner[owner] += size;
	}
	return mark(lv, d);
}

/* Drops pending entries: all (all = 1), of one stream, or of one device. */
static int pend_release(gmt_levels_t *lv, int all, int by_stream, uint64_t stream, int dev)
{
	size_t j = 0;
	int rc = 0;
	for (size_t i = 0; i < lv->n_pend; i++) {
		lv_pending_t *p = &lv->pend[i];
		int hit = all || (by_stream ? p->stream == stream : p->dev == dev);
		if (!hit) {
			lv->pend[j++] = *p;
			continue;
		}
		lv_dev_t *d = dev_get(lv, p->dev);
		if (!d)
			return -ENOMEM;
		d->pend_total = sub0(d->pend_total, p->total);
		d->pend_out_owner[p->owner] = sub0(d->pend_out_owner[p->owner], p->outside);
		rc |= mark(lv, d);
	}
	lv->n_pend = j;
	return rc;
}

/* A FREE_FAIL put a stream-ordered block back: its free is no longer
 * pending (the free's stream is not known here: the first entry of that
 * device and owner large enough gives the bytes back). */
static void pend_undo(gmt_levels_t *lv, lv_dev_t *d, unsigned owner, uint64_t size, int outside)
{
	for (size_t i = 0; i < lv->n_pend; i++) {
		lv_pending_t *p = &lv->pend[i];
		if (p->dev != d->ordinal || p->owner != owner || p->total < size)
			continue;
		p->total -= size;
		d->pend_total = sub0(d->pend_total, size);
		if (outside) {
			p->outside = sub0(p->outside, size);
			d->pend_out_owner[owner] = sub0(d->pend_out_owner[owner], size);
		}
		return;
	}
}

/* ---- the replay's observer ---------------------------------------------- */

/* A mapping went. */
static int map_del(gmt_levels_t *lv, uint32_t t)
{
	int rc = set_inside(lv, t, 0);
	if (rc)
		return rc;
	if (lv->ranges_ordered)
		t_unlink(lv->pool.n, &lv->ranges, lv->pool.n[t].key);
	t_release(&lv->pool, t);
	return 0;
}

/* Block record b went (o: the replay's observation of it). */
static int blk_del(gmt_levels_t *lv, uint32_t b, const gmt_obs_t *o, const gmt_devent_t *cause)
{
	int dev = (int16_t)o->dev;
	unsigned owner = gmt_downer(o->owner);
	int rc = blk_set_inside(lv, b, dev, owner, o->size, 0);
	if (rc || (rc = unpend(lv, 1, b)))   /* gone before it was attributed */
		return rc;
	if (lv->ranges_ordered) {
		uint32_t t = t_find(lv->pool.n, lv->ranges, o->key);
		if (t && (lv->pool.n[t].flags & F_SHADOW) && lv->pool.n[t].aux == b) {
			t_unlink(lv->pool.n, &lv->ranges, o->key);
			t_release(&lv->pool, t);
		}
	}
	lv_blk_t x = lv->blk.b[b];
	b_release(&lv->blk, b);
	lv_dev_t *d = dev_get(lv, dev);
	if (!d)
		return -ENOMEM;
	if (o->kind == GMT_KIND_ASYNC) {
		d->async_owner[owner] = sub0(d->async_owner[owner], o->size);
		if (cause && cause->type == GMT_EV_FREE &&
		    (rc = pend_add(lv, d, cause->stream, owner, o->size, counts_outside(d, o->kind))))
			return rc;
	}
	block_outlier(lv, d, &x, o->key, o->size, dev, o->kind, owner, cause ? cause->ts : 0);
	return mark(lv, d);
}

/* A block just added (and evaluated): a new block that no segment contains
 * waits (only an ALLOC makes a new one: a FREE undone by FREE_FAIL is not
 * new). */
static int blk_new(gmt_levels_t *lv, uint32_t b, const gmt_obs_t *o, const gmt_devent_t *cause)
{
	if ((lv->blk.b[b].flags & F_INSIDE) || !(lv->fw_any || lv->fw_registered))
		return 0;
	lv_dev_t *d = dev_get(lv, (int16_t)o->dev);
	if (!d)
		return -ENOMEM;
	if (cause->type != GMT_EV_ALLOC || !(d->fw_any || lv->fw_registered) || !counts_outside(d, o->kind))
		return 0;
	return pend_new(lv, d, 1, b, o->size, gmt_downer(o->owner), cause);
}

/* A mapping just added (and evaluated): a mapping of a pending handle
 * re-arms the handle's wait from the mapping's time, since the mapping is
 * what the framework's FW_SEGMENT_MAP will report. */
static void map_new(gmt_levels_t *lv, uint32_t t, const gmt_devent_t *cause)
{
	const tnode_t *n = &lv->pool.n[t];
	if (n->flags & F_INSIDE)
		return;
	uint32_t h = t_find(lv->pool.n, lv->handles, n->aux);
	lv_new_t *w = h && (lv->pool.n[h].flags & F_PEND) ? nw_find(lv, 0, h) : NULL;
	if (w) {
		w->ts = cause->ts;
		w->thread = cause->thread;
	}
}

/* The common block added and block gone: no framework range or event
 * yet (so never inside, never pending, no ranges treap to keep), not
 * stream-ordered (no pending frees), a record from the free list or the
 * room the records have. 1 when done, 0 to take the general way (nothing
 * done). */
static inline __attribute__((always_inline)) int blk_add_fast(gmt_levels_t *lv, const gmt_devent_t *cause,
							      const gmt_obs_t *o)
{
	uint32_t b = lv->blk.free_head;
	size_t idx = (size_t)(o->dev + 1);
	if (!cause || !lv->fw_none || o->kind == GMT_KIND_ASYNC || o->dev < -1 || idx >= lv->n_dev ||
	    !lv->dev[idx])
		return 0;
	lv_blk_t *x;
	if (__builtin_expect(b != 0, 1)) {
		x = &lv->blk.b[b];
		lv->blk.free_head = (uint32_t)x->ts;
	} else if (lv->blk.used + 1 < lv->blk.cap) {   /* a record never used yet */
		b = lv->blk.used++;
		x = &lv->blk.b[b];
	} else {
		return 0;
	}
	*x = (lv_blk_t){ .ts = cause->ts, .stack = cause->stack, .flags = F_LIVE };
	*o->cookie = b;
	mark(lv, lv->dev[idx]);
	return 1;
}

static inline __attribute__((always_inline)) int blk_del_fast(gmt_levels_t *lv, const gmt_devent_t *cause,
							      const gmt_obs_t *o)
{
	uint32_t b = *o->cookie;
	size_t idx = (size_t)(o->dev + 1);
	if (!cause || !b || b >= lv->blk.used || lv->blk.b[b].flags != F_LIVE || lv->ranges_ordered ||
	    o->kind == GMT_KIND_ASYNC || o->dev < -1 || idx >= lv->n_dev || !lv->dev[idx])
		return 0;
	lv_dev_t *d = lv->dev[idx];
	lv_blk_t x = lv->blk.b[b];
	*o->cookie = 0;
	b_release(&lv->blk, b);
	/* outlier_add: never inside, and not stream-ordered: outside. The
	 * smallest of a full list is the heap's top: a smaller one is only
	 * counted. */
	unsigned owner = gmt_downer(o->owner);
	if (lv->outside_fn || !lv->top_n || d->n_top < lv->top_n || o->size >= d->top[0].size) {
		block_outlier(lv, d, &x, o->key, o->size, o->dev, o->kind, owner, cause->ts);
	} else {
		d->outliers[owner]++;
	}
	mark(lv, d);
	return 1;
}

static __attribute__((noinline)) int observe_slow(gmt_levels_t *lv, const gmt_devent_t *cause,
						    const gmt_obs_t *o);

static int levels_observe(void *ctx, const gmt_devent_t *cause, const gmt_obs_t *o)
{
	gmt_levels_t *lv = ctx;
	if (o->op == GMT_OBS_BLOCK_ADD ? blk_add_fast(lv, cause, o)
	    : o->op == GMT_OBS_BLOCK_DEL && blk_del_fast(lv, cause, o))
		return 0;
	return observe_slow(lv, cause, o);
}

static int observe_slow(gmt_levels_t *lv, const gmt_devent_t *cause, const gmt_obs_t *o)
{
	uint32_t t;
	int rc;
	switch (o->op) {
	case GMT_OBS_BLOCK_ADD: {
		/* The replay keeps our record's index in its own slot (the
		 * cookie), 0 when a block is added. */
		uint32_t b = b_alloc(&lv->blk);
		if (!b)
			return -ENOMEM;
		lv_blk_t *x = &lv->blk.b[b];
		x->ts = cause ? cause->ts : 0;
		x->stack = cause ? cause->stack : 0;
		x->flags = F_LIVE;
		*o->cookie = b;
		if (lv->ranges_ordered && (rc = shadow_add(lv, b, o->key, o->size, (int16_t)o->dev, o->kind, o->owner)))
			return rc;
		lv_dev_t *d = dev_get(lv, o->dev);
		if (!d)
			return -ENOMEM;
		if (o->kind == GMT_KIND_ASYNC) {
			d->async_seen = 1;
			d->async_owner[gmt_downer(o->owner)] += o->size;
			if (cause && cause->type == GMT_EV_FREE_FAIL)
				pend_undo(lv, d, gmt_downer(o->owner), o->size, counts_outside(d, o->kind));
		}
		if ((rc = mark(lv, d)))
			return rc;
		/* (no framework range ever: never inside) */
		if (lv->fw_ranges && (rc = blk_eval(lv, b, o->key, o->size, (int16_t)o->dev, gmt_downer(o->owner))))
			return rc;
		return cause ? blk_new(lv, b, o, cause) : 0;
	}
	case GMT_OBS_BLOCK_DEL:
		t = *o->cookie;
		*o->cookie = 0;
		return t && t < lv->blk.used && (lv->blk.b[t].flags & F_LIVE) ? blk_del(lv, t, o, cause) : 0;
	case GMT_OBS_MAP_ADD: {
		/* an address that was live was deleted first, so this is 0 */
		if ((t = *o->cookie) && (rc = map_del(lv, t)))
			return rc;
		if (!(t = t_alloc(&lv->pool)))
			return -ENOMEM;
		tnode_t *n = &lv->pool.n[t];
		n->key = o->key;
		n->size = o->size;
		n->ts = cause ? cause->ts : 0;
		n->stack = cause ? cause->stack : 0;
		n->dev = -1;
		n->kind = (uint8_t)o->kind;
		n->owner = (uint8_t)gmt_downer(o->owner);
		n->aux = o->handle;
		n->flags = F_MAP;
		n->tree = T_RANGE;
		*o->cookie = t;
		if (lv->ranges_ordered)
			t_insert(lv->pool.n, &lv->ranges, t);
		if ((rc = eval_range(lv, t)))
			return rc;
		if (cause)
			map_new(lv, t, cause);
		return 0;
	}
	case GMT_OBS_MAP_DEL:
		t = *o->cookie;
		*o->cookie = 0;
		return t ? map_del(lv, t) : 0;
	case GMT_OBS_HANDLE_ADD: {
		if ((t = t_find(lv->pool.n, lv->handles, o->key))) {
			if ((rc = unpend(lv, 0, t)))
				return rc;
			t_unlink(lv->pool.n, &lv->handles, o->key);
			t_release(&lv->pool, t);
		}
		if (!(t = t_alloc(&lv->pool)))
			return -ENOMEM;
		tnode_t *n = &lv->pool.n[t];
		n->key = o->key;
		n->size = o->size;
		n->ts = cause ? cause->ts : 0;
		n->stack = cause ? cause->stack : 0;
		n->dev = (int16_t)o->dev;
		n->kind = GMT_KIND_VMM;
		n->owner = (uint8_t)gmt_downer(o->owner);
		n->tree = T_HANDLE;
		t_insert(lv->pool.n, &lv->handles, t);
		lv_dev_t *d = dev_get(lv, o->dev);
		if (!d)
			return -ENOMEM;
		if ((d->fw_any || lv->fw_registered) && cause && cause->type == GMT_EV_VMM_CREATE)
			return pend_new(lv, d, 0, t, n->size, n->owner, cause);
		return mark(lv, d);
	}
	case GMT_OBS_HANDLE_DEL: {
		t = t_find(lv->pool.n, lv->handles, o->key);
		if (!t)
			return 0;
		if ((rc = unpend(lv, 0, t)))
			return rc;
		t_unlink(lv->pool.n, &lv->handles, o->key);
		tnode_t n = lv->pool.n[t];
		t_release(&lv->pool, t);
		lv_dev_t *d = dev_get(lv, n.dev);
		if (!d)
			return -ENOMEM;
		if (n.aux)
			d->inside_owner[n.owner] = sub0(d->inside_owner[n.owner], n.size);
		handle_outlier(lv, &n, cause ? cause->ts : 0);
		return mark(lv, d);
	}
	}
	return 0;
}

/* ---- framework events --------------------------------------------------- */

static int fw_event(gmt_levels_t *lv, const gmt_devent_t *e)
{
	lv_dev_t *d = dev_get(lv, e->device);
	uint32_t t;
	int rc = 0;
	if (!d)
		return -ENOMEM;
	d->fw_any = lv->fw_any = 1;
	lv->fw_none = 0;
	if (e->type <= GMT_EV_FW_SEGMENT_UNMAP) {
		/* whose bytes the rebuilt allocated and reserved hold (checkpoints
		 * of one framework compare with them only while alone) */
		uint32_t fw = (uint32_t)e->aux;
		if (!d->fw_seen)
			d->fw_id = fw;
		else if (fw != d->fw_id)
			d->fw_many = 1;
	}
	tnode_t *N = lv->pool.n;
	switch (e->type) {
	case GMT_EV_FW_ALLOC:
		d->fw_seen = 1;
		if ((t = t_unlink(N, &lv->fw, e->addr))) {
			d->fw_anomalies++;   /* a block handed out twice */
			lv_dev_t *od = dev_get(lv, N[t].dev);
			if (!od)
				return -ENOMEM;
			if (N[t].aux == 1)
				od->fw_req = sub0(od->fw_req, N[t].size);
			od->fw_held = sub0(od->fw_held, N[t].size);
			t_release(&lv->pool, t);
			if ((rc = mark(lv, od)))
				return rc;
		}
		if (!(t = t_alloc(&lv->pool)))
			return -ENOMEM;
		N = lv->pool.n;
		N[t].key = e->addr;
		N[t].size = e->size;
		N[t].ts = e->ts;
		N[t].dev = (int16_t)d->ordinal;
		N[t].aux = 1;        /* live; 2: free requested */
		N[t].tree = T_FW;
		t_insert(N, &lv->fw, t);
		d->fw_req += e->size;
		d->fw_held += e->size;
		break;
	case GMT_EV_FW_FREE_REQUESTED:
		d->fw_seen = 1;
		t = t_find(N, lv->fw, e->addr);
		if (!t || N[t].aux != 1) {
			d->fw_anomalies++;
			break;
		}
		N[t].aux = 2;
		d = dev_get(lv, N[t].dev);
		if (!d)
			return -ENOMEM;
		d->fw_req = sub0(d->fw_req, N[t].size);
		break;
	case GMT_EV_FW_FREE_COMPLETED:
		d->fw_seen = 1;
		t = t_unlink(N, &lv->fw, e->addr);
		if (!t) {
			d->fw_anomalies++;
			break;
		}
		d = dev_get(lv, N[t].dev);
		if (!d)
			return -ENOMEM;
		if (N[t].aux == 1)   /* completed with no request seen */
			d->fw_req = sub0(d->fw_req, N[t].size);
		d->fw_held = sub0(d->fw_held, N[t].size);
		t_release(&lv->pool, t);
		break;
	case GMT_EV_FW_SEGMENT_ALLOC:
	case GMT_EV_FW_SEGMENT_MAP:
		d->fw_seen = d->fw_seg_seen = 1;
		d->fw_reserved += e->size;
		lv->fw_ranges = 1;
		lv->fw_none = 0;
		if ((rc = iset_add(&d->fwr, e->addr, end_of(e->addr, e->size))))
			return rc;
		if ((rc = reeval(lv, d->ordinal, e->addr, end_of(e->addr, e->size))))
			return rc;
		break;
	case GMT_EV_FW_SEGMENT_FREE:
	case GMT_EV_FW_SEGMENT_UNMAP:
		d->fw_seen = d->fw_seg_seen = 1;
		if (e->size > d->fw_reserved)
			d->fw_anomalies++;
		d->fw_reserved = sub0(d->fw_reserved, e->size);
		if ((rc = iset_remove(&d->fwr, e->addr, end_of(e->addr, e->size))))
			return rc;
		if ((rc = reeval(lv, d->ordinal, e->addr, end_of(e->addr, e->size))))
			return rc;
		break;
	case GMT_EV_FW_LOST:
		if (!d->fw_lost)
			d->fw_lost_first_ts = e->ts;
		d->fw_lost += e->size;
		return 0;
	default:
		return 0;   /* FW_OOM and the checkpoints change no level */
	}
	return mark(lv, d);
}

/* ---- public -------------------------------------------------------------- */

gmt_levels_t *gmt_levels_new(const char *file, unsigned top_n)
{
	gmt_levels_t *lv = calloc(1, sizeof(*lv));
	if (!lv)
		return NULL;
	lv->rp = gmt_replay_new(file);
	if (!lv->rp) {
		free(lv);
		return NULL;
	}
	lv->hot.gen = 1;         /* a new device's mark (0) is not in the list */
	lv->fw_none = 1;
	lv->pool.rng = 0x9E3779B97F4A7C15ull;
	lv->top_n = top_n;
	gmt_replay_observe(lv->rp, levels_observe, lv);
	return lv;
}

void gmt_levels_free(gmt_levels_t *lv)
{
	if (!lv)
		return;
	gmt_replay_free(lv->rp);
	for (size_t i = 0; i < lv->n_dev; i++) {
		if (!lv->dev[i])
			continue;
		free(lv->dev[i]->fwr.iv);
		free(lv->dev[i]->top);
		free(lv->dev[i]);
	}
	free(lv->dev);
	free(lv->hot.dirty);
	free(lv->pend);
	free(lv->nw);
	free(lv->pool.n);
	free(lv->blk.b);
	free(lv);
}

gmt_replay_t *gmt_levels_replay(gmt_levels_t *lv)
{
	return lv->rp;
}

/* The steps that build a VMM allocation: PyTorch's expandable segments
 * create every page's handle, then map them all, then report one
 * FW_SEGMENT_MAP. They do not end the thread's wait (rule (b)). */
static int vmm_step(unsigned type)
{
	return type == GMT_EV_VMM_CREATE || type == GMT_EV_VMM_MAP;
}

static int claims(unsigned type)
{
	return type == GMT_EV_FW_SEGMENT_ALLOC || type == GMT_EV_FW_SEGMENT_MAP;
}

static int apply(gmt_levels_t *lv, const gmt_devent_t *e);

int gmt_levels_event_from(gmt_levels_t *lv, const gmt_devent_t *e, int side)
{
	int rc;
	/* With nothing pending, an ALLOC or a FREE is the replay's and its
	 * observer's alone: apply() has nothing more for them, and neither
	 * claims. */
	if (__builtin_expect(!lv->hot.n_nw, 1) && (e->type == GMT_EV_ALLOC || e->type == GMT_EV_FREE))
		return gmt_replay_event(lv->rp, e);
	/* Rules (b) and (c) before the event (a MEMINFO sample then sees
	 * them), except that a segment of the same thread first claims what
	 * it contains and resolves the rest after. */
	if (lv->hot.n_nw &&
	    (rc = pend_resolve(lv, e->ts, !side && !vmm_step(e->type) && !claims(e->type), e->thread)))
		return rc;
	if ((rc = apply(lv, e)))
		return rc;
	if (lv->hot.n_nw && !side && claims(e->type))
		return pend_resolve(lv, e->ts, 1, e->thread);
	return 0;
}

int gmt_levels_event(gmt_levels_t *lv, const gmt_devent_t *e)
{
	return gmt_levels_event_from(lv, e, 0);
}

int gmt_levels_next_deadline(const gmt_levels_t *lv, uint64_t *ts)
{
	if (!lv->hot.n_nw)
		return 0;
	uint64_t m = UINT64_MAX;
	for (size_t i = 0; i < lv->hot.n_nw; i++) {
		uint64_t d = lv->nw[i].ts + GMT_LV_GRACE_NS;
		if (d < lv->nw[i].ts)
			d = UINT64_MAX;
		if (d < m)
			m = d;
	}
	*ts = m;
	return 1;
}

int gmt_levels_expire(gmt_levels_t *lv, uint64_t now)
{
	return lv->hot.n_nw ? pend_resolve(lv, now, 0, 0) : 0;
}

int gmt_levels_end_pending(gmt_levels_t *lv)
{
	int rc = 0;
	while (lv->hot.n_nw && !rc)
		rc = unpend(lv, lv->nw[lv->hot.n_nw - 1].is_blk, lv->nw[lv->hot.n_nw - 1].idx);
	return rc;
}

static int apply(gmt_levels_t *lv, const gmt_devent_t *e)
{
	int rc = gmt_replay_event(lv->rp, e);
	if (rc)
		return rc;
	switch (e->type) {
	case GMT_EV_MEMINFO: {
		/* The untraced estimate is taken at the sample, against what
		 * was held then; it stays that until the next sample. */
		lv_dev_t *d = dev_get(lv, e->device);
		if (!d)
			return -ENOMEM;
		for (int w = 0; w < GMT_VIEWS; w++) {
			gmt_lv_vals_t v;
			gmt_levels_values(lv, d->ordinal, (enum gmt_view)w, &v);
			d->untraced[w] = (int64_t)(v.used - v.held);
		}
		return mark(lv, d);
	}
	case GMT_EV_POOL_RESERVED: {
		lv_dev_t *d = dev_get(lv, e->device);
		return d ? mark(lv, d) : -ENOMEM;
	}
	case GMT_EV_SYNC: {
		unsigned kind = (unsigned)(e->aux & 0xffffffffu);
		if (e->aux >> 32)
			return 0;   /* a failed sync proves nothing */
		if (kind == GMT_SYNC_STREAM)
			return lv->n_pend ? pend_release(lv, 0, 1, e->stream, 0) : 0;
		if (kind == GMT_SYNC_CTX)
			return lv->n_pend ? pend_release(lv, 1, 0, 0, 0) : 0;
		return 0;
	}
	case GMT_EV_POOL_TRIM:
		if (!lv->n_pend)
			return 0;
		return pend_release(lv, e->device < 0, 0, 0, e->device);
	case GMT_EV_CTX_DESTROY:
		/* The context took its memory, stream-ordered frees included. */
		if (!lv->n_pend || !gmt_replay_ctx_released(lv->rp))
			return 0;
		return pend_release(lv, 0, 0, 0, e->device);
	case GMT_EV_FW_REGISTER:
		lv->fw_registered = 1;
		lv->fw_none = 0;
		return 0;
	default:
		if (e->type >= GMT_EV_FW_ALLOC && e->type <= GMT_EV_FW_LOST)
			return fw_event(lv, e);
		return 0;
	}
}

size_t gmt_levels_devices(const gmt_levels_t *lv, int *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 1; i < lv->n_dev; i++) {
		if (!lv->dev[i])
			continue;
		if (n < cap)
			out[n] = lv->dev[i]->ordinal;
		n++;
	}
	return n;
}

/* The pools' latest reserved bytes on a device; 0 when none was sampled
 * (*has says whether one was). */
static uint64_t pool_reserved(const gmt_summary_t *s, int dev, int *has)
{
	uint64_t sum = 0;
	*has = 0;
	for (size_t i = 0; i < s->n_pools; i++) {
		const gmt_pool_summary_t *p = &s->pools[i];
		/* a pool located on the device (not in host memory, not
		 * managed, not another process's), as summary counts it */
		if (p->device == dev && p->reserved_samples && p->where == 0) {
			*has = 1;
			sum += p->reserved_current;
		}
	}
	return sum;
}

/* What every view derives from its parts. */
static inline void finish_view(gmt_lv_vals_t *x, int64_t untraced)
{
	/* A pool's reserve holds its live allocations: a sample older than an
	 * allocation (or taken right after a context went, before its blocks
	 * do) never counts less than they hold. */
	if (x->has_reserved && x->rsrc == GMT_RSRC_POOL && x->has_allocated && x->allocated > x->reserved)
		x->reserved = x->allocated;
	x->held = (x->has_reserved ? x->reserved : x->has_allocated ? x->allocated : 0) + x->outside;
	x->gap = (int64_t)(x->reserved - x->allocated);
	if (x->has_used)
		x->untraced = untraced;
}

/* The requested view into *q and, when h is not NULL, the held view. */
static void values_into(const gmt_levels_t *lv, int ordinal, gmt_lv_vals_t *q, gmt_lv_vals_t *h)
{
	const gmt_summary_t *s = gmt_replay_summary(lv->rp);
	const gmt_dev_summary_t *rd = gmt_summary_device(s, ordinal);
	const lv_dev_t *d = dev_find(lv, ordinal);
	static const lv_dev_t none;
	static const gmt_dev_summary_t rnone;
	int has_pool = 0;
	if (!d)
		d = &none;
	if (!rd)
		rd = &rnone;

	/* What both views share; they differ only in what waits for a stream
	 * or for the framework's completion. */
	memset(q, 0, sizeof(*q));
	uint64_t async_live = 0;
	if (!d->fw_seen && d->async_seen)    /* (what allocated is then) */
		for (int o = 0; o < GMT_DOWNERS; o++)
			async_live += d->async_owner[o];
	if (d->fw_seen) {
		q->has_allocated = 1;
		q->asrc = GMT_ASRC_FRAMEWORK;
		q->allocated = d->fw_req;
	} else if (d->async_seen) {
		q->has_allocated = 1;
		q->asrc = GMT_ASRC_STREAM;
		q->allocated = async_live;
	}
	uint64_t pool = d->fw_seg_seen || !s->n_pools ? 0 : pool_reserved(s, ordinal, &has_pool);
	if (d->fw_seg_seen) {
		q->has_reserved = 1;
		q->rsrc = GMT_RSRC_SEGMENTS;
		q->reserved = d->fw_reserved;
	} else if (has_pool) {
		q->has_reserved = 1;
		q->rsrc = GMT_RSRC_POOL;
		q->reserved = pool;
	}
	/* pending new allocations are live, and not inside (a claim ends the
	 * wait): neither outside nor reserved yet */
	for (int o = 0; o < GMT_DOWNERS; o++)
		q->pending += d->pnew_owner[o];
	/* an owner whose live bytes the replay never added to holds none
	 * outside (lv_base below): only the owners it added to */
	const uint64_t *in = q->asrc == GMT_ASRC_STREAM ? d->async_owner : d->inside_owner;
	for (unsigned m = rd->owners_added; m; m &= m - 1) {
		const unsigned o = (unsigned)__builtin_ctz(m);
		const uint64_t x = sub0(sub0(rd->live.owner[o], in[o]), d->pnew_owner[o]);
		q->outside_owner[o] = x;
		q->outside += x;
	}
	if (rd->meminfo_samples) {
		q->has_used = 1;
		q->used = sub0(rd->meminfo_total, rd->meminfo_free);
		q->used_ts = rd->meminfo_ts;
	}
	q->live = rd->live.total;
	if (!h) {
		finish_view(q, d->untraced[GMT_VIEW_REQUESTED]);
		return;
	}
	*h = *q;
	h->live = q->live + d->pend_total;
	if (d->fw_seen)
		h->allocated = d->fw_held;
	else if (d->async_seen)
		h->allocated = async_live + d->pend_total;
	if (h->asrc != GMT_ASRC_STREAM) {
		for (int o = 0; o < GMT_DOWNERS; o++) {
			h->outside_owner[o] += d->pend_out_owner[o];
			h->outside += d->pend_out_owner[o];
		}
	}
	finish_view(q, d->untraced[GMT_VIEW_REQUESTED]);
	finish_view(h, d->untraced[GMT_VIEW_HELD]);
}

void gmt_levels_values_all(const gmt_levels_t *lv, int ordinal, gmt_lv_vals_t v[GMT_VIEWS])
{
	values_into(lv, ordinal, &v[GMT_VIEW_REQUESTED], &v[GMT_VIEW_HELD]);
}

void gmt_levels_values(const gmt_levels_t *lv, int ordinal, enum gmt_view view, gmt_lv_vals_t *v)
{
	if (view != GMT_VIEW_HELD) {
		values_into(lv, ordinal, v, NULL);
		return;
	}
	gmt_lv_vals_t q;
	values_into(lv, ordinal, &q, v);
}

/* What a curves row and the phase figures' maxima take of a device, asked
 * at nearly every event: values_into's numbers by its rules (finish_view's
 * included), without the per-owner split. What both views share is made
 * once (lv_base); view() derives one view from it. An owner whose live
 * bytes the replay never added to holds none, so only the owners it added
 * to are summed. */
typedef struct lv_base {
	const lv_dev_t *d;
	const gmt_dev_summary_t *rd;
	uint64_t outside, async_live, pend_out, reserved, used;
	uint8_t has_allocated, has_reserved, has_pool, has_used;
} lv_base_t;

static inline __attribute__((always_inline)) void base(const gmt_levels_t *lv, int ordinal, int held_too,
							lv_base_t *b)
{
	static const lv_dev_t none;
	static const gmt_dev_summary_t rnone;
	const gmt_summary_t *s = gmt_replay_summary(lv->rp);
	const gmt_dev_summary_t *rd = gmt_summary_device(s, ordinal);
	const lv_dev_t *d = dev_find(lv, ordinal);
	if (!d)
		d = &none;
	if (!rd)
		rd = &rnone;
	b->d = d;
	b->rd = rd;
	const int stream = !d->fw_seen && d->async_seen;    /* asrc GMT_ASRC_STREAM */
	const uint64_t *in = stream ? d->async_owner : d->inside_owner;
	uint64_t outside = 0;
	for (unsigned m = rd->owners_added; m; m &= m - 1) {
		unsigned o = (unsigned)__builtin_ctz(m);
		outside += sub0(sub0(rd->live.owner[o], in[o]), d->pnew_owner[o]);
	}
	b->outside = outside;
	b->async_live = 0;
	b->pend_out = 0;
	if (stream) {
		for (int o = 0; o < GMT_DOWNERS; o++)
			b->async_live += d->async_owner[o];
	} else if (held_too) {
		for (int o = 0; o < GMT_DOWNERS; o++)
			b->pend_out += d->pend_out_owner[o];
	}
	b->has_allocated = (uint8_t)(d->fw_seen || d->async_seen);
	int has_pool = 0;
	if (d->fw_seg_seen)
		b->reserved = d->fw_reserved;
	else
		b->reserved = s->n_pools ? pool_reserved(s, ordinal, &has_pool) : 0;
	b->has_pool = (uint8_t)has_pool;
	b->has_reserved = (uint8_t)(d->fw_seg_seen || has_pool);
	b->has_used = rd->meminfo_samples != 0;
	b->used = b->has_used ? sub0(rd->meminfo_total, rd->meminfo_free) : 0;
}

/* One view of b: allocated, reserved (a pool's reserve holds its live
 * allocations), outside, held, live. */
static inline __attribute__((always_inline)) void view(const lv_base_t *b, int held, uint64_t *allocated,
							uint64_t *reserved, uint64_t *outside,
							uint64_t *taken, uint64_t *live)
{
	const lv_dev_t *d = b->d;
	uint64_t a = d->fw_seen ? (held ? d->fw_held : d->fw_req)
		   : d->async_seen ? b->async_live + (held ? d->pend_total : 0) : 0;
	uint64_t r = b->reserved;
	if (b->has_pool && b->has_allocated && a > r)
		r = a;
	uint64_t out = b->outside + (held ? b->pend_out : 0);
	*allocated = a;
	*reserved = r;
	*outside = out;
	*taken = (b->has_reserved ? r : a) + out;
	*live = b->rd->live.total + (held ? d->pend_total : 0);
}

void gmt_levels_curve(const gmt_levels_t *lv, int ordinal, enum gmt_view v, gmt_lv_curve_t *out)
{
	const int held = v == GMT_VIEW_HELD;
	lv_base_t b;
	base(lv, ordinal, held, &b);
	view(&b, held, &out->allocated, &out->reserved, &out->outside, &out->held, &out->live);
	out->used = b.used;
	out->has_allocated = b.has_allocated;
	out->has_reserved = b.has_reserved;
	out->has_used = b.has_used;
}

void gmt_levels_keys(const gmt_levels_t *lv, int ordinal, gmt_lv_keys_t k[GMT_VIEWS])
{
	lv_base_t b;
	base(lv, ordinal, 1, &b);
	for (int w = 0; w < GMT_VIEWS; w++) {
		uint64_t live;
		view(&b, w == GMT_VIEW_HELD, &k[w].allocated, &k[w].reserved, &k[w].outside, &k[w].held, &live);
		k[w].gap = (int64_t)(k[w].reserved - k[w].allocated);
		k[w].untraced = b.has_used ? b.d->untraced[w] : 0;
		k[w].has_allocated = b.has_allocated;
		k[w].has_reserved = b.has_reserved;
		k[w].has_used = b.has_used;
	}
}

/* A block live at the end (the replay's). */
static int live_block(void *ctx, uint64_t addr, uint64_t size, int dev, unsigned kind,
		      unsigned owner, uint64_t cookie_all)
{
	gmt_levels_t *lv = ctx;
	uint32_t cookie = (uint32_t)cookie_all;   /* ours: the low half */
	if (cookie && cookie < lv->blk.used && (lv->blk.b[cookie].flags & F_LIVE))
		block_outlier(lv, NULL, &lv->blk.b[cookie], addr, size, dev, kind, owner, 0);
	return 0;
}

int gmt_levels_finish(gmt_levels_t *lv)
{
	if (lv->finished)
		return 0;
	lv->finished = 1;
	int rc = gmt_levels_end_pending(lv);
	if (rc)
		return rc;
	if ((rc = gmt_replay_each_block(lv->rp, live_block, lv)))
		return rc;
	for (uint32_t i = 1; i < lv->pool.used; i++) {
		const tnode_t *n = &lv->pool.n[i];
		if (n->tree == T_HANDLE)
			handle_outlier(lv, n, 0);
	}
	for (size_t i = 0; i < lv->n_dev; i++) {
		lv_dev_t *d = lv->dev[i];
		if (!d || !d->n_top)
			continue;
		/* heap -> largest first (insertion sort: at most top_n) */
		for (size_t a = 1; a < d->n_top; a++) {
			gmt_outlier_t x = d->top[a];
			size_t b = a;
			while (b && outlier_less(&d->top[b - 1], &x)) {
				d->top[b] = d->top[b - 1];
				b--;
			}
			d->top[b] = x;
		}
	}
	return 0;
}

int gmt_levels_dev_info(const gmt_levels_t *lv, int ordinal, gmt_lv_dev_info_t *out)
{
	const lv_dev_t *d = dev_find(lv, ordinal);
	memset(out, 0, sizeof(*out));
	out->ordinal = ordinal;
	if (!d)
		return -1;
	memcpy(out->outliers, d->outliers, sizeof(out->outliers));
	for (int o = 0; o < GMT_DOWNERS; o++)
		out->outliers_total += d->outliers[o];
	out->top = d->top;
	out->n_top = d->n_top;
	out->fw_lost = d->fw_lost;
	out->fw_lost_first_ts = d->fw_lost_first_ts;
	out->fw_anomalies = d->fw_anomalies;
	return 0;
}

int gmt_levels_fw_others(const gmt_levels_t *lv, int ordinal, uint32_t fw)
{
	const lv_dev_t *d = dev_find(lv, ordinal);
	if (!d || !d->fw_seen)
		return 0;
	return d->fw_many || d->fw_id != fw;
}

const char *gmt_asrc_name(unsigned src)
{
	switch (src) {
	case GMT_ASRC_FRAMEWORK: return "framework events";
	case GMT_ASRC_STREAM: return "driver stream-ordered events";
	default: return NULL;
	}
}

const char *gmt_rsrc_name(unsigned src)
{
	switch (src) {
	case GMT_RSRC_SEGMENTS: return "framework segments";
	case GMT_RSRC_POOL: return "pool attributes";
	default: return NULL;
	}
}

const char *gmt_view_name(unsigned view)
{
	return view == GMT_VIEW_HELD ? "held" : "requested";
}
