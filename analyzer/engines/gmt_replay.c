/*
 * gmt_replay.c - rebuilds device memory over time from a trace's events.
 *
 * The decoder hands over batches of events in file order, which is time
 * order (schemas/trace-format.md, "Time order"), so the replay applies each
 * event as it comes: no reorder buffer, no per-event allocation.
 *
 * Blocks with an allocation id (format 1.4: the reader gives every ALLOC
 * and FREE of the main stream its id) live in a dense array indexed by id:
 * ids are small (at most the most blocks live at once) and reused last
 * freed first, so the array stays compact and its hot end in cache. The
 * tracer never gives two live ids one address (schemas/trace-format.md,
 * "Allocation ids"), so an ALLOC with an id needs no address look-up, and
 * neither does its FREE (the common case, a device block with an id and
 * nothing by address, is applied inline: alloc_fast, free_fast; every
 * other case by ev_alloc, ev_free). Everything else lives in open-addressing hash maps
 * (support/gmt_hmap.h) keyed by a 64-bit value (linear probing, at most
 * half full, deletion by backward shift so that no tombstones accumulate):
 * blocks without an id by address (older traces, LATE events, an address
 * allocated again without its free), VMM handles by handle, VMM mappings
 * by virtual address, reservations by virtual address. An event without
 * an id that must find a block by address while blocks with ids are live (a free of
 * an address, an ALLOC without id, a FREE_FAIL) first builds an address
 * index of the dense blocks, kept from then on: exact whatever the trace
 * holds, with the map's cost only for traces that need it. Each structure
 * holds only what is live, so memory follows the live set, not the trace.
 *
 * A FREE is recorded before the real free runs, and a FREE_FAIL follows when
 * that free failed. To undo such a free the replay remembers the last
 * GMT_RECENT_FREES frees in a ring; a FREE_FAIL looks for its address there
 * (newest first) and puts the block back. The thread that freed writes the
 * FREE_FAIL right after the failed call, so the ring only has to cover the
 * frees of other threads in between.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "support/gmt_hmap.h"

/* ---- the slots of the maps -------------------------------------------- */

typedef struct rp_slot {
	uint64_t key;
	uint64_t a;        /* blocks: size; handles: size; maps: size; va: size */
	union {
		uint64_t b;        /* handles: mapping count; maps: handle */
		uint32_t ck[2];    /* blocks: the observer's values
				      (gmt_obs_t.cookie, cookie_hi): b's low
				      and high halves                     */
	};
	uint32_t c;        /* kind | owner << 8, then blocks: context index
			      << 16 (0 unknown), handles: references << 16;
			      maps: the observer's value                    */
	int16_t dev;
	uint8_t bflags;    /* blocks: BF_* */
	uint8_t used;
} rp_slot_t;

/* ck[0] is b's low half (gmt_replay_each_block gives b) */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "rp_slot_t.ck: little-endian halves of b");

/* A block made on a stream being captured (GMT_FLAG_CAPTURED): a graph's
 * memory node, in no device total (the graph memory pool backs it when the
 * graph runs; GRAPH_MEM samples tell that pool). */
#define BF_CAPTURED 0x01u

/* The maps: support/gmt_hmap.h with Fibonacci hashing (the top bits of the
 * product mix every key bit, which matters because addresses share their
 * low, aligned bits), at most half full; rp_map_init/find/put/del. */
#define RP_EMPTY(s) (!(s)->used)
#define RP_SET_EMPTY(s) ((s)->used = 0)
#define RP_SET_USED(s) ((s)->used = 1)
GMT_HMAP_DEFINE(rp_map, rp_slot_t, GMT_HMAP_FIB, RP_EMPTY, RP_SET_EMPTY, RP_SET_USED, 1, 2, 6)

/* ---- replay state ------------------------------------------------------ */

#define GMT_RECENT_FREES 1024

typedef struct rp_recent {
	uint64_t addr, size;
	uint32_t c;
	int16_t dev;
	uint8_t found;     /* the free matched a live block */
	uint8_t voided;    /* already undone by a FREE_FAIL */
	uint8_t bflags;    /* the block's BF_* */
} rp_recent_t;

struct gmt_replay {
	gmt_summary_t s;
	rp_map_t blocks, handles, maps, va;
	/* Blocks by allocation id (used = live; key = address), and once
	 * needed the index address -> id of the live ones (a = id). */
	rp_slot_t *dense;
	size_t n_dense;              /* slots in use so far (initialised) */
	size_t cap_dense;            /* slots allocated                   */
	size_t dense_live;
	rp_map_t ix;
	int indexed;
	rp_recent_t recent[GMT_RECENT_FREES];
	unsigned recent_next;
	int oom;
	gmt_replay_observer_fn obs;
	void *obs_ctx;
	const gmt_devent_t *cause;   /* the event being applied, for obs */
	gmt_dev_summary_t *dev_last; /* the last device dev_get gave, ...     */
	int dev_last_ord;            /* ... and its ordinal (summaries never move) */
	int ctx_released;            /* the last event released a context's blocks */
	/* Contexts (CTX_CURRENT, 1.3): handle -> a: index (1..65535) while it
	 * lives; each thread's current context index (0: unknown). */
	rp_map_t ctxs;
	uint32_t next_ctx;
	uint16_t *thr_ctx;
	size_t n_thr;
	uint8_t *ctx_created;        /* by index: made by cuCtxCreate (not primary) */
	size_t n_ctx_created;
	/* Names of untraced entry points (PROC_UNIDENTIFIED aux 0), to count
	 * the distinct ones: a handful; past the cap each counts as new. */
	uint64_t untraced_names[256];
	size_t n_untraced_names;
};

#define BLK_C(kind, owner) ((uint32_t)(kind) | (uint32_t)(owner) << 8)
#define BLK_KIND(c)  ((c) & 0xff)
#define BLK_OWNER(c) (((c) >> 8) & 0xff)
/* Blocks: the index of the context they were allocated under (0 unknown). */
#define BLK_CTX(c)   (((c) >> 16) & 0xffff)
/* VMM handles: references (VMM_CREATE and each VMM_RETAIN add one,
 * VMM_RELEASE takes one) in bits 16-31; 0 = released. */
#define BLK_REFS(c)  (((c) >> 16) & 0xffff)
#define BLK_REF1     0x10000u

static inline unsigned dkind(unsigned kind)
{
	return kind >= 1 && kind <= 4 ? kind : kind == GMT_KIND_ARRAY ? GMT_DKIND_ARRAY : 0;
}

static inline uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Kinds kept apart from every device total: host pinned memory, and memory
 * another process or handle owns (imported). */
static inline int apart(unsigned kind)
{
	return kind == GMT_KIND_HOST || kind == GMT_KIND_IMPORTED;
}

/* Handles that are no physical memory of this process (an imported
 * handle, a multicast object): known, so their maps and releases match,
 * counted in no total. */
static inline int handle_apart(uint32_t c)
{
	return BLK_KIND(c) == GMT_KIND_IMPORTED || BLK_KIND(c) == GMT_KIND_MULTICAST;
}

static void apart_add(gmt_summary_t *s, unsigned kind, uint64_t size, uint64_t ts)
{
	uint64_t *live = kind == GMT_KIND_HOST ? &s->host_live : &s->imported_live;
	uint64_t *peak = kind == GMT_KIND_HOST ? &s->host_peak : &s->imported_peak;
	uint64_t *peak_ts = kind == GMT_KIND_HOST ? &s->host_peak_ts : &s->imported_peak_ts;

	*live += size;
	if (*live > *peak) {
		*peak = *live;
		*peak_ts = ts;
	}
}

static void apart_sub(gmt_summary_t *s, unsigned kind, uint64_t size)
{
	uint64_t *live = kind == GMT_KIND_HOST ? &s->host_live : &s->imported_live;
	*live = sub0(*live, size);
}

/* Tells the observer, if any; cookie: its value for a block or mapping. */
static int notify_ck(gmt_replay_t *r, enum gmt_obs_op op, uint64_t key, uint64_t size,
		     uint64_t handle, int dev, unsigned kind, unsigned owner, uint32_t *cookie)
{
	if (!r->obs)
		return 0;
	gmt_obs_t o = { .op = op, .key = key, .size = size, .handle = handle, .dev = dev,
			.kind = kind, .owner = owner, .cookie = cookie };
	return r->obs(r->obs_ctx, r->cause, &o);
}

static int notify(gmt_replay_t *r, enum gmt_obs_op op, uint64_t key, uint64_t size,
		  uint64_t handle, int dev, unsigned kind, unsigned owner)
{
	return notify_ck(r, op, key, size, handle, dev, kind, owner, NULL);
}

/* A block's observer values live in its slot (ck), where the observer
 * reads and writes them. */
static inline __attribute__((always_inline)) int notify_block_obs(gmt_replay_t *r, enum gmt_obs_op op, rp_slot_t *b,
						       uint64_t key, uint64_t size, int dev, unsigned kind,
						       unsigned owner)
{
	gmt_obs_t o = { .op = op, .key = key, .size = size, .dev = dev, .kind = kind, .owner = owner,
			.cookie = &b->ck[0], .cookie_hi = &b->ck[1] };
	return r->obs(r->obs_ctx, r->cause, &o);
}

static inline int notify_block(gmt_replay_t *r, enum gmt_obs_op op, rp_slot_t *b, uint64_t key,
			       uint64_t size, int dev, unsigned kind, unsigned owner)
{
	return r->obs ? notify_block_obs(r, op, b, key, size, dev, kind, owner) : 0;
}

void gmt_replay_observe(gmt_replay_t *r, gmt_replay_observer_fn fn, void *ctx)
{
	r->obs = fn;
	r->obs_ctx = ctx;
}

static char *dupstr(const char *p)
{
	return strdup(p ? p : "");
}

gmt_replay_t *gmt_replay_new(const char *file)
{
	gmt_replay_t *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->s.file = dupstr(file);
	if (!r->s.file || rp_map_init(&r->blocks, 12) || rp_map_init(&r->handles, 6) ||
	    rp_map_init(&r->maps, 6) || rp_map_init(&r->va, 6) || rp_map_init(&r->ctxs, 4)) {
		gmt_replay_free(r);
		return NULL;
	}
	return r;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void gmt_replay_free(gmt_replay_t *r)
{
	if (!r)
		return;
	gmt_summary_t *s = &r->s;
	free(s->file);
	free(s->tool_version);
	free(s->host);
	free(s->exe);
	free_strv(s->cmdline, s->n_cmdline);
	free_strv(s->env_keys, s->n_env);
	free_strv(s->env_values, s->n_env);
	for (size_t i = 0; i < s->n_dev; i++)
		free(s->dev[i]);
	free(s->dev);
	free(s->pools);
	free(s->fails);
	free(s->drops);
	free(r->blocks.s);
	free(r->dense);
	free(r->ix.s);
	free(r->handles.s);
	free(r->maps.s);
	free(r->va.s);
	free(r->ctxs.s);
	free(r->thr_ctx);
	free(r->ctx_created);
	free(r);
}

/* Device slot of an ordinal (-1 = none), created on first use. */
static gmt_dev_summary_t *dev_get_slow(gmt_replay_t *r, int ordinal)
{
	gmt_summary_t *s = &r->s;
	if (ordinal < -1)
		ordinal = -1;
	size_t idx = (size_t)(ordinal + 1);
	if (idx < s->n_dev && s->dev[idx])
		return s->dev[idx];
	if (idx >= s->n_dev) {
		size_t n = s->n_dev ? s->n_dev : 4;
		while (n <= idx)
			n *= 2;
		gmt_dev_summary_t **nd = realloc(s->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + s->n_dev, 0, (n - s->n_dev) * sizeof(*nd));
		s->dev = nd;
		s->n_dev = n;
	}
	gmt_dev_summary_t *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->ordinal = ordinal;
	s->dev[idx] = d;
	return d;
}

/* The device's summary, created when first seen (NULL: out of memory). */
static inline gmt_dev_summary_t *dev_get(gmt_replay_t *r, int ordinal)
{
	if (__builtin_expect(r->dev_last && ordinal == r->dev_last_ord, 1))
		return r->dev_last;
	size_t idx = (size_t)(ordinal + 1);
	gmt_dev_summary_t *d = ordinal >= -1 && idx < r->s.n_dev && r->s.dev[idx] ? r->s.dev[idx]
										: dev_get_slow(r, ordinal);
	if (d) {
		r->dev_last = d;
		r->dev_last_ord = ordinal;
	}
	return d;
}

/* What the device's pools keep reserved beyond their live allocations:
 * their latest reserved bytes, summed, less the live stream-ordered bytes
 * (every one of which lies in one of them). */
static inline uint64_t taken_reserve(const gmt_dev_summary_t *d)
{
	return sub0(d->pool_reserved, d->live.kind[GMT_KIND_ASYNC]);
}

/* Keeps the maximum of the bytes taken from the device (live + that). It
 * can only grow when bytes are added or a pool's reserve grows. */
static inline void taken_check(gmt_dev_summary_t *d, uint64_t ts)
{
	uint64_t res = taken_reserve(d), t = d->live.total + res;
	if (t > d->taken_peak) {
		d->taken_peak = t;
		d->taken_peak_ts = ts;
		d->taken_peak_reserve = res;
	}
}

/* Adds bytes of (kind index, owner index) to a device and keeps its peak
 * and per-kind maxima. The peak is the first instant the total reached its
 * maximum, so its composition is what was live at that instant. */
static inline void dev_add(gmt_dev_summary_t *d, unsigned k, unsigned o, uint64_t size, uint64_t ts)
{
	d->live.total += size;
	d->live.kind[k] += size;
	d->live.owner[o] += size;
	d->owners_added |= (uint8_t)(1u << o);
	if (d->live.kind[k] > d->kind_max[k]) {
		d->kind_max[k] = d->live.kind[k];
		d->kind_max_ts[k] = ts;
	}
	if (d->live.total > d->peak.total) {
		d->peak = d->live;
		d->peak_ts = ts;
	}
	taken_check(d, ts);
}

static inline void dev_sub(gmt_dev_summary_t *d, unsigned k, unsigned o, uint64_t size)
{
	d->live.total = sub0(d->live.total, size);
	d->live.kind[k] = sub0(d->live.kind[k], size);
	d->live.owner[o] = sub0(d->live.owner[o], size);
}

/* ---- visitor callbacks -------------------------------------------------- */

static int rp_header(void *ctx, const gmt_header_t *h)
{
	gmt_replay_t *r = ctx;
	gmt_summary_t *s = &r->s;
	if (s->has_header)
		return 0;  /* one per file; a second one changes nothing */
	s->has_header = 1;
	s->format_major = h->format_major;
	s->format_minor = h->format_minor;
	s->pid = h->pid;
	s->ppid = h->ppid;
	s->clock_monotonic_ns = h->clock_monotonic_ns;
	s->clock_realtime_ns = h->clock_realtime_ns;
	s->tool_version = dupstr(h->tool_version);
	s->host = dupstr(h->host);
	s->exe = dupstr(h->exe);
	if (!s->tool_version || !s->host || !s->exe)
		return -ENOMEM;
	if (h->n_cmdline) {
		s->cmdline = calloc(h->n_cmdline, sizeof(char *));
		if (!s->cmdline)
			return -ENOMEM;
		for (size_t i = 0; i < h->n_cmdline; i++) {
			if (!(s->cmdline[i] = dupstr(h->cmdline[i])))
				return -ENOMEM;
			s->n_cmdline = i + 1;
		}
	}
	if (h->n_env) {
		s->env_keys = calloc(h->n_env, sizeof(char *));
		s->env_values = calloc(h->n_env, sizeof(char *));
		if (!s->env_keys || !s->env_values)
			return -ENOMEM;
		for (size_t i = 0; i < h->n_env; i++) {
			s->n_env = i + 1;
			s->env_keys[i] = dupstr(h->env[i].key);
			s->env_values[i] = dupstr(h->env[i].value);
			if (!s->env_keys[i] || !s->env_values[i])
				return -ENOMEM;
		}
	}
	return 0;
}

static int rp_device(void *ctx, const gmt_device_rec_t *rec)
{
	gmt_replay_t *r = ctx;
	gmt_dev_summary_t *d = dev_get(r, rec->ordinal < 0 ? -1 : rec->ordinal > 32766 ? 32766 : rec->ordinal);
	if (!d)
		return -ENOMEM;
	d->has_record = 1;
	snprintf(d->name, sizeof(d->name), "%s", rec->name ? rec->name : "");
	memcpy(d->uuid, rec->uuid, sizeof(d->uuid));
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", rec->pci_bus_id ? rec->pci_bus_id : "");
	d->total_bytes = rec->total_bytes;
	d->cc_major = rec->cc_major;
	d->cc_minor = rec->cc_minor;
	d->driver_version = rec->driver_version;
	return 0;
}

static int rp_drops(void *ctx, const gmt_drops_t *dr)
{
	gmt_replay_t *r = ctx;
	gmt_summary_t *s = &r->s;
	s->drops_total += dr->count;
	s->drop_records++;
	if (s->n_drops >= GMT_REPLAY_MAX_DROPS)
		return 0;
	if (s->n_drops == s->cap_drops) {
		size_t n = s->cap_drops ? s->cap_drops * 2 : 8;
		gmt_drop_summary_t *nd = realloc(s->drops, n * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		s->drops = nd;
		s->cap_drops = n;
	}
	gmt_drop_summary_t *d = &s->drops[s->n_drops++];
	memset(d, 0, sizeof(*d));
	d->count = dr->count;
	d->first_ts = dr->first_ts;
	d->last_ts = dr->last_ts;
	d->err = dr->err;
	snprintf(d->reason, sizeof(d->reason), "%s", dr->reason ? dr->reason : "");
	return 0;
}

static int rp_end(void *ctx, const gmt_end_t *e)
{
	gmt_replay_t *r = ctx;
	r->s.has_end = 1;
	r->s.end = *e;
	/* how points into the decoder's buffer: keep a copy */
	snprintf(r->s.end_how, sizeof(r->s.end_how), "%s", e->how ? e->how : "");
	r->s.end.how = r->s.end_how;
	return 0;
}

/* -- events -- */

/* The context index of a thread's allocations (0: no CTX_CURRENT yet). */
static inline uint16_t thread_ctx(const gmt_replay_t *r, uint32_t thread)
{
	return thread < r->n_thr ? r->thr_ctx[thread] : 0;
}

/* ---- the block store: dense by id, else by address -------------------- */

static inline int in_dense(const gmt_replay_t *r, const rp_slot_t *b)
{
	return r->dense && b >= r->dense && b < r->dense + r->n_dense;   /* NULL + 0 is undefined */
}

/* Builds the address index of the dense blocks (once; kept up to date
 * from then on). */
static int index_dense(gmt_replay_t *r)
{
	if (r->indexed)
		return 0;
	if (!r->ix.s && rp_map_init(&r->ix, 6))
		return -ENOMEM;
	for (size_t i = 0; i < r->n_dense; i++) {
		if (!r->dense[i].used)
			continue;
		int existed;
		rp_slot_t *x = rp_map_put(&r->ix, r->dense[i].key, &existed);
		if (!x)
			return -ENOMEM;
		x->a = i;
	}
	r->indexed = 1;
	return 0;
}

/* The live block at addr, wherever it is; NULL if none (*err: out of
 * memory). */
static rp_slot_t *block_at(gmt_replay_t *r, uint64_t addr, int *err)
{
	*err = 0;
	rp_slot_t *b = r->blocks.n ? rp_map_find(&r->blocks, addr) : NULL;
	if (b || !r->dense_live || !addr)
		return b;
	if (index_dense(r)) {
		*err = -ENOMEM;
		return NULL;
	}
	rp_slot_t *x = rp_map_find(&r->ix, addr);
	return x ? &r->dense[x->a] : NULL;
}

/* A new zeroed live block for addr: in the dense array when id is given
 * (the slot must be free), else in the address map (addr must have no
 * block there). NULL when out of memory. */
static rp_slot_t *block_new(gmt_replay_t *r, uint64_t addr, uint32_t id)
{
	if (!id) {
		int existed;
		rp_slot_t *b = rp_map_put(&r->blocks, addr, &existed);
		if (b && existed) {
			memset(b, 0, sizeof(*b));
			b->key = addr;
			b->used = 1;
		}
		return b;
	}
	if (id >= r->n_dense) {
		/* Grown by half (realloc moves a large array by remapping its
		 * pages), and only the slots up to the highest id so far are
		 * ever written: memory follows the most blocks live at once. */
		if (id >= r->cap_dense) {
			size_t n = r->cap_dense ? r->cap_dense : 1024;
			while (n <= id)
				n += n / 2;
			rp_slot_t *nd = realloc(r->dense, n * sizeof(*nd));
			if (!nd)
				return NULL;
			r->dense = nd;
			r->cap_dense = n;
		}
		memset(r->dense + r->n_dense, 0, ((size_t)id + 1 - r->n_dense) * sizeof(*r->dense));
		r->n_dense = (size_t)id + 1;
	}
	if (r->indexed) {
		int existed;
		rp_slot_t *x = rp_map_put(&r->ix, addr, &existed);
		if (!x)
			return NULL;
		x->a = id;
	}
	rp_slot_t *b = &r->dense[id];
	memset(b, 0, sizeof(*b));
	b->key = addr;
	b->used = 1;
	r->dense_live++;
	return b;
}

/* Forgets the live block b (from block_at or block_new). */
static __attribute__((noinline)) void block_del_slow(gmt_replay_t *r, rp_slot_t *b)
{
	if (!in_dense(r, b)) {
		rp_map_del(&r->blocks, b);
		return;
	}
	rp_slot_t *x = rp_map_find(&r->ix, b->key);
	if (x)
		rp_map_del(&r->ix, x);
	b->used = 0;
	r->dense_live--;
}

static inline void block_del(gmt_replay_t *r, rp_slot_t *b)
{
	if (__builtin_expect(!in_dense(r, b) || r->indexed, 0)) {
		block_del_slow(r, b);
		return;
	}
	b->used = 0;
	r->dense_live--;
}

int gmt_replay_each_block(const gmt_replay_t *r, gmt_replay_block_fn fn, void *ctx)
{
	const size_t n_slots = r->n_dense + r->blocks.mask + 1;
	for (size_t i = 0; i < n_slots; i++) {
		const rp_slot_t *b = i < r->n_dense ? &r->dense[i] : &r->blocks.s[i - r->n_dense];
		if (!b->used || apart(BLK_KIND(b->c)) || (b->bflags & BF_CAPTURED))
			continue;
		int rc = fn(ctx, b->key, b->a, b->dev, BLK_KIND(b->c), BLK_OWNER(b->c), b->b);
		if (rc)
			return rc;
	}
	return 0;
}

void gmt_replay_ids_reset(gmt_replay_t *r)
{
	/* The ids given so far are forgotten (a frame was lost): their blocks
	 * stay live, by address, and their frees will name addresses. */
	for (size_t i = 0; i < r->n_dense && r->dense_live; i++) {
		rp_slot_t *b = &r->dense[i];
		if (!b->used)
			continue;
		int existed;
		rp_slot_t *m = rp_map_put(&r->blocks, b->key, &existed);
		if (!m) {
			r->oom = 1;
			return;
		}
		*m = *b;
		b->used = 0;
		r->dense_live--;
	}
	if (r->ix.s) {
		memset(r->ix.s, 0, (r->ix.mask + 1) * sizeof(*r->ix.s));
		r->ix.n = 0;
	}
	r->indexed = 0;
}

static int ev_alloc(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	unsigned kind = GMT_AUX_KIND(e->aux), owner = GMT_AUX_OWNER(e->aux);
	/* (the dense array never holds address 0: a free of 0 is a null free,
	 * found without the index) */
	const uint32_t id = e->addr ? e->alloc_id : 0;
	int err = 0;
	rp_slot_t *b;
	if (id && id < r->n_dense && r->dense[id].used) {
		/* not from a valid trace (the reader hands out free ids only):
		 * keep that block, by address */
		rp_slot_t old = r->dense[id];
		int existed;
		block_del(r, &r->dense[id]);
		if (!(b = rp_map_put(&r->blocks, old.key, &existed)))
			return -ENOMEM;
		*b = old;
	}
	/* An ALLOC with an id repeats no live id's address (the tracer's
	 * rule): only blocks without id need looking at. */
	b = id ? (r->blocks.n ? rp_map_find(&r->blocks, e->addr) : NULL) : block_at(r, e->addr, &err);
	if (err)
		return err;
	if (b) {
		/* The old block cannot still be live: replace it. */
		s->anom.overlapping_allocations++;
		unsigned ok = BLK_KIND(b->c);
		if (apart(ok)) {
			apart_sub(s, ok, b->a);
		} else if (!(b->bflags & BF_CAPTURED)) {
			gmt_dev_summary_t *od = dev_get(r, b->dev);
			if (!od)
				return -ENOMEM;
			dev_sub(od, dkind(ok), gmt_downer(BLK_OWNER(b->c)), b->a);
			if (notify_block(r, GMT_OBS_BLOCK_DEL, b, e->addr, b->a, b->dev, ok, BLK_OWNER(b->c)))
				return -ENOMEM;
		}
		block_del(r, b);
	}
	if (!(b = block_new(r, e->addr, id)))
		return -ENOMEM;
	/* A deferred-mapping array holds nothing of its own: the memory mapped
	 * into it is a VMM allocation, counted as such. */
	uint64_t size = kind == GMT_KIND_ARRAY && (GMT_AUX_FLAGS(e->aux) & GMT_FLAG_DEFERRED) ? 0 : e->size;
	b->a = size;
	b->c = BLK_C(kind, owner) | (uint32_t)thread_ctx(r, e->thread) << 16;
	b->dev = e->device;
	b->bflags = 0;
	if (!apart(kind) && (GMT_AUX_FLAGS(e->aux) & GMT_FLAG_CAPTURED)) {
		/* A graph's memory node: counted apart, in no total. */
		gmt_dev_summary_t *d = dev_get(r, e->device);
		if (!d)
			return -ENOMEM;
		b->bflags = BF_CAPTURED;
		d->used = 1;
		d->graph_captured_allocs++;
		d->graph_captured_bytes += e->size;
		return 0;
	}
	if (apart(kind)) {
		if (kind == GMT_KIND_HOST)
			s->host_allocs++;
		else
			s->imported_opens++;
		apart_add(s, kind, size, e->ts);
		return 0;
	}
	if (dkind(kind) != kind && kind != GMT_KIND_ARRAY)
		s->anom.unknown_kinds++;
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	d->used = 1;
	d->n_alloc[dkind(kind)]++;
	dev_add(d, dkind(kind), gmt_downer(owner), size, e->ts);
	return notify_block(r, GMT_OBS_BLOCK_ADD, b, e->addr, size, e->device, kind, owner);
}

static int ev_free(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	rp_recent_t *rec = &r->recent[r->recent_next++ % GMT_RECENT_FREES];
	memset(rec, 0, sizeof(*rec));
	rec->addr = e->addr;
	const uint32_t id = e->alloc_id;
	rp_slot_t *b = NULL;
	if (id && id < r->n_dense && r->dense[id].used && r->dense[id].key == e->addr) {
		b = &r->dense[id];
	} else {
		int err;
		b = block_at(r, e->addr, &err);
		if (err)
			return err;
	}
	if (!b) {
		if (e->addr == 0) {
			s->anom.null_frees++;
			rec->voided = 1;  /* nothing to undo */
		} else {
			s->anom.unmatched_frees++;
		}
		return 0;
	}
	rec->found = 1;
	rec->size = b->a;
	rec->c = b->c;
	rec->dev = b->dev;
	rec->bflags = b->bflags;
	unsigned kind = BLK_KIND(b->c);
	if (b->bflags & BF_CAPTURED) {
		/* a graph's free node, or the free of what outlived the graph */
	} else if (apart(kind)) {
		if (kind == GMT_KIND_HOST)
			s->host_frees++;
		else
			s->imported_closes++;
		apart_sub(s, kind, b->a);
	} else {
		gmt_dev_summary_t *d = dev_get(r, b->dev);
		if (!d)
			return -ENOMEM;
		d->n_free[dkind(kind)]++;
		dev_sub(d, dkind(kind), gmt_downer(BLK_OWNER(b->c)), b->a);
		int rc = notify_block(r, GMT_OBS_BLOCK_DEL, b, e->addr, b->a, b->dev, kind, BLK_OWNER(b->c));
		if (rc)
			return rc;
	}
	block_del(r, b);
	return 0;
}

static int ev_free_fail(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	for (unsigned i = 1; i <= GMT_RECENT_FREES && i <= r->recent_next; i++) {
		rp_recent_t *rec = &r->recent[(r->recent_next - i) % GMT_RECENT_FREES];
		if (rec->addr != e->addr || rec->voided)
			continue;
		rec->voided = 1;
		s->anom.voided_frees++;
		if (!rec->found) {
			s->anom.unmatched_frees = sub0(s->anom.unmatched_frees, 1);
			return 0;
		}
		/* The block is live again, as if the free never happened. */
		int err;
		rp_slot_t *b = block_at(r, rec->addr, &err);
		if (err)
			return err;
		if (b)
			return 0;  /* something took the address since: keep that */
		if (!(b = block_new(r, rec->addr, 0)))
			return -ENOMEM;
		b->a = rec->size;
		b->c = rec->c;
		b->dev = rec->dev;
		b->bflags = rec->bflags;
		unsigned kind = BLK_KIND(rec->c);
		if (rec->bflags & BF_CAPTURED)
			return 0;
		if (apart(kind)) {
			if (kind == GMT_KIND_HOST)
				s->host_frees = sub0(s->host_frees, 1);
			else
				s->imported_closes = sub0(s->imported_closes, 1);
			apart_add(s, kind, rec->size, e->ts);
			return 0;
		}
		gmt_dev_summary_t *d = dev_get(r, rec->dev);
		if (!d)
			return -ENOMEM;
		d->n_free[dkind(kind)] = sub0(d->n_free[dkind(kind)], 1);
		dev_add(d, dkind(kind), gmt_downer(BLK_OWNER(rec->c)), rec->size, e->ts);
		return notify_block(r, GMT_OBS_BLOCK_ADD, b, rec->addr, rec->size, rec->dev, kind,
				    BLK_OWNER(rec->c));
	}
	s->anom.unmatched_free_fails++;
	return 0;
}

static int ev_alloc_fail(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	unsigned kind = GMT_AUX_KIND(e->aux);
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	s->fails_total++;
	if (kind == GMT_KIND_HOST) {
		s->host_fails++;
	} else if (kind == GMT_KIND_IMPORTED) {
		/* opening another's memory failed: no device bytes asked for */
	} else {
		d->used = 1;
		d->n_fail[dkind(kind)]++;
	}
	if (s->n_fails >= GMT_REPLAY_MAX_FAILS)
		return 0;
	if (s->n_fails == s->cap_fails) {
		size_t n = s->cap_fails ? s->cap_fails * 2 : 8;
		gmt_fail_summary_t *nf = realloc(s->fails, n * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		s->fails = nf;
		s->cap_fails = n;
	}
	gmt_fail_summary_t *f = &s->fails[s->n_fails++];
	memset(f, 0, sizeof(*f));
	f->ts = e->ts;
	f->size = e->size;
	f->stream = e->stream;
	f->device = d->ordinal;
	f->kind = kind;
	f->api = GMT_AUX_API(e->aux);
	f->owner = GMT_AUX_OWNER(e->aux);
	f->result = GMT_AUX_RESULT(e->aux);
	f->live = d->live;
	if (d->meminfo_samples) {
		f->has_meminfo = 1;
		f->meminfo_free = d->meminfo_free;
		f->meminfo_ts = d->meminfo_ts;
	}
	return 0;
}

/* Physical bytes of a handle stop counting once it is released and no
 * mapping of it remains (CUDA frees the memory only then). */
static int handle_drop(gmt_replay_t *r, rp_slot_t *h)
{
	if (handle_apart(h->c)) {
		rp_map_del(&r->handles, h);
		return 0;
	}
	gmt_dev_summary_t *d = dev_get(r, h->dev);
	if (!d)
		return -ENOMEM;
	dev_sub(d, GMT_KIND_VMM, gmt_downer(BLK_OWNER(h->c)), h->a);
	int rc = notify(r, GMT_OBS_HANDLE_DEL, h->key, h->a, 0, h->dev, GMT_KIND_VMM, BLK_OWNER(h->c));
	rp_map_del(&r->handles, h);
	return rc;
}

static int ev_vmm_create(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	int existed;
	rp_slot_t *h = rp_map_put(&r->handles, e->addr, &existed);
	if (!h)
		return -ENOMEM;
	if (existed) {
		s->anom.overlapping_vmm_handles++;
		if (!handle_apart(h->c)) {
			gmt_dev_summary_t *od = dev_get(r, h->dev);
			if (!od)
				return -ENOMEM;
			dev_sub(od, GMT_KIND_VMM, gmt_downer(BLK_OWNER(h->c)), h->a);
			if (notify(r, GMT_OBS_HANDLE_DEL, h->key, h->a, 0, h->dev, GMT_KIND_VMM, BLK_OWNER(h->c)))
				return -ENOMEM;
		}
	}
	unsigned owner = GMT_AUX_OWNER(e->aux);
	unsigned kind = GMT_AUX_KIND(e->aux);
	if (kind == GMT_KIND_IMPORTED || kind == GMT_KIND_MULTICAST) {
		/* Another's physical memory under a handle of ours, or a
		 * multicast object: known (its maps and release match), no
		 * bytes of this process. */
		h->a = 0;
		h->b = 0;
		h->c = BLK_C(kind, owner) | BLK_REF1;
		h->dev = e->device;
		if (kind == GMT_KIND_IMPORTED)
			s->imported_handles++;
		else
			s->multicast_objects++;
		return 0;
	}
	h->a = e->size;
	h->b = 0;
	h->c = BLK_C(GMT_KIND_VMM, owner) | BLK_REF1;
	h->dev = e->device;
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	d->used = 1;
	d->n_alloc[GMT_KIND_VMM]++;
	dev_add(d, GMT_KIND_VMM, gmt_downer(owner), e->size, e->ts);
	return notify(r, GMT_OBS_HANDLE_ADD, e->addr, e->size, 0, e->device, GMT_KIND_VMM, owner);
}

static int ev_vmm_release(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	rp_slot_t *h = rp_map_find(&r->handles, e->addr);
	if (!h || BLK_REFS(h->c) == 0) {
		s->anom.unmatched_vmm_releases++;
		return 0;
	}
	h->c -= BLK_REF1;
	if (BLK_REFS(h->c) > 0)
		return 0;  /* a retained reference is still held */
	if (handle_apart(h->c))
		return h->b == 0 ? handle_drop(r, h) : 0;
	gmt_dev_summary_t *d = dev_get(r, h->dev);
	if (!d)
		return -ENOMEM;
	d->n_free[GMT_KIND_VMM]++;
	if (h->b == 0)
		return handle_drop(r, h);
	s->vmm_released_while_mapped++;
	return 0;
}

/* cuMemRetainAllocationHandle: one more reference to a live handle. */
static int ev_vmm_retain(gmt_replay_t *r, const gmt_devent_t *e)
{
	rp_slot_t *h = rp_map_find(&r->handles, e->addr);
	if (!h || BLK_REFS(h->c) == 0 || BLK_REFS(h->c) == 0xffff) {
		r->s.anom.unmatched_vmm_retains++;
		return 0;
	}
	h->c += BLK_REF1;
	return 0;
}

/* Forgets the mapping m; drops its handle's bytes if that was the last
 * mapping of a released handle. */
static int mapping_drop(gmt_replay_t *r, rp_slot_t *m)
{
	uint64_t handle = m->b;
	int rc = notify_ck(r, GMT_OBS_MAP_DEL, m->key, m->a, handle, -1, 0, 0, &m->c);
	if (rc)
		return rc;
	rp_map_del(&r->maps, m);
	rp_slot_t *h = rp_map_find(&r->handles, handle);
	if (!h)
		return 0;
	h->b = sub0(h->b, 1);
	if (h->b == 0 && BLK_REFS(h->c) == 0)
		return handle_drop(r, h);
	return 0;
}

static int ev_vmm_map(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	s->vmm_maps++;
	rp_slot_t *m = rp_map_find(&r->maps, e->addr);
	if (m) {
		s->anom.overlapping_maps++;
		if (mapping_drop(r, m))
			return -ENOMEM;
	}
	int existed;
	m = rp_map_put(&r->maps, e->addr, &existed);
	if (!m)
		return -ENOMEM;
	m->a = e->size;
	m->b = e->stream;
	rp_slot_t *h = rp_map_find(&r->handles, e->stream);
	if (h)
		h->b++;
	else
		s->anom.unmatched_maps++;
	return notify_ck(r, GMT_OBS_MAP_ADD, e->addr, e->size, e->stream, h ? h->dev : -1, 0, 0, &m->c);
}

static int ev_vmm_unmap(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	uint64_t va = e->addr, left = e->size;
	s->vmm_unmaps++;
	/* One unmap may cover several whole mappings laid side by side. */
	for (int first = 1;; first = 0) {
		rp_slot_t *m = rp_map_find(&r->maps, va);
		if (!m) {
			if (first)
				s->anom.unmatched_unmaps++;
			return 0;
		}
		uint64_t msize = m->a;
		if (mapping_drop(r, m))
			return -ENOMEM;
		if (msize == 0 || msize >= left)
			return 0;
		left -= msize;
		va += msize;
	}
}

static int ev_reserve(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	int existed;
	rp_slot_t *v = rp_map_put(&r->va, e->addr, &existed);
	if (!v)
		return -ENOMEM;
	if (existed) {
		s->anom.overlapping_reserves++;
		s->va_live = sub0(s->va_live, v->a);
	}
	v->a = e->size;
	s->va_reserves++;
	s->va_live += e->size;
	if (s->va_live > s->va_peak) {
		s->va_peak = s->va_live;
		s->va_peak_ts = e->ts;
	}
	return 0;
}

static int ev_addr_free(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	rp_slot_t *v = rp_map_find(&r->va, e->addr);
	if (!v) {
		s->anom.unmatched_addr_frees++;
		return 0;
	}
	s->va_frees++;
	s->va_live = sub0(s->va_live, v->a);
	rp_map_del(&r->va, v);
	return 0;
}

/* Contexts. A destroyed context takes every allocation made in it. Since
 * format 1.3 a thread's CTX_CURRENT says which context its allocations are
 * made under, so each block carries its context's index and a destruction
 * releases exactly that context's blocks (device, stream-ordered, managed,
 * and pinned host memory); VMM handles belong to no context and stay.
 * Blocks whose context is unknown (older traces, or made before their
 * thread's first CTX_CURRENT) go with the destruction only when no other
 * context of the device lives; with another one alive they stay, and the
 * destruction is counted as ambiguous. */

/* The index of the context handle (created when new; 0: out of indices or
 * of memory). */
static uint16_t ctx_index(gmt_replay_t *r, uint64_t handle, int create)
{
	rp_slot_t *c = rp_map_find(&r->ctxs, handle);
	if (c || !create)
		return c ? (uint16_t)c->a : 0;
	if (r->next_ctx >= 0xffff)
		return 0;
	int existed;
	c = rp_map_put(&r->ctxs, handle, &existed);
	if (!c)
		return 0;
	c->a = ++r->next_ctx;
	return (uint16_t)c->a;
}

static int ev_ctx_current(gmt_replay_t *r, const gmt_devent_t *e)
{
	uint16_t idx = ctx_index(r, e->addr, 1);
	if (e->thread >= r->n_thr) {
		size_t n = r->n_thr ? r->n_thr : 16;
		while (n <= e->thread)
			n *= 2;
		uint16_t *nt = realloc(r->thr_ctx, n * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		memset(nt + r->n_thr, 0, (n - r->n_thr) * sizeof(*nt));
		r->thr_ctx = nt;
		r->n_thr = n;
	}
	r->thr_ctx[e->thread] = idx;
	return 0;
}

static int ev_ctx(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	if (e->type == GMT_EV_CTX_CURRENT)
		return ev_ctx_current(r, e);
	if (e->device < 0)
		return 0;
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	switch (e->type) {
	case GMT_EV_CTX_CREATE: {
		d->contexts_live++;
		uint16_t idx = ctx_index(r, e->addr, 1);
		if (idx >= r->n_ctx_created) {
			size_t n = r->n_ctx_created ? r->n_ctx_created : 16;
			while (n <= idx)
				n *= 2;
			uint8_t *nc = realloc(r->ctx_created, n);
			if (!nc)
				return -ENOMEM;
			memset(nc + r->n_ctx_created, 0, n - r->n_ctx_created);
			r->ctx_created = nc;
			r->n_ctx_created = n;
		}
		if (idx)
			r->ctx_created[idx] = 1;
		return 0;
	}
	case GMT_EV_PRIMARY_RETAIN:
		d->primary_active = 1;
		d->primary_ctx = e->addr;
		return 0;
	default: break;
	}
	d->ctx_destroys++;
	/* The destroyed context's index; its handle may come back as a new
	 * context, with a new index. */
	uint64_t handle = (e->aux & GMT_CTX_PRIMARY) ? d->primary_ctx : e->addr;
	uint16_t idx = handle ? ctx_index(r, handle, 0) : 0;
	if (idx && !(e->aux & GMT_CTX_PRIMARY)) {
		rp_slot_t *c = rp_map_find(&r->ctxs, handle);
		if (c)
			rp_map_del(&r->ctxs, c);
	} else if (idx) {
		/* A primary context keeps its handle: later blocks get a new
		 * index, the old one is released now. */
		rp_slot_t *c = rp_map_find(&r->ctxs, handle);
		if (c && r->next_ctx < 0xffff)
			c->a = ++r->next_ctx;
		for (size_t t = 0; t < r->n_thr; t++)
			if (r->thr_ctx[t] == idx)
				r->thr_ctx[t] = c ? (uint16_t)c->a : 0;
	}
	if (e->aux & GMT_CTX_PRIMARY)
		d->primary_active = 0;
	else if (d->contexts_live)
		d->contexts_live--;
	const int others = d->contexts_live || d->primary_active;
	int unknown_left = 0;
	size_t n = 0, cap = 0;
	/* the blocks taken: dense ones by id, the others by address (id 0) */
	struct taken { uint64_t key; size_t id; } *keys = NULL;
	const size_t n_slots = r->n_dense + r->blocks.mask + 1;
	for (size_t i = 0; i < n_slots; i++) {
		const int dense = i < r->n_dense;
		const rp_slot_t *b = dense ? &r->dense[i] : &r->blocks.s[i - r->n_dense];
		/* graph memory belongs to the device's graph pool, not a context */
		if (!b->used || b->dev != e->device || (b->bflags & BF_CAPTURED))
			continue;
		const unsigned bctx = BLK_CTX(b->c);
		int take;
		if (!bctx)
			take = !others;          /* context unknown: the old rule */
		else if (idx)
			take = bctx == idx;
		else
			/* the primary context's handle was never retained where we
			 * could see it: any context not made by cuCtxCreate is it */
			take = (e->aux & GMT_CTX_PRIMARY) &&
			       !(bctx < r->n_ctx_created && r->ctx_created[bctx]);
		if (!take) {
			unknown_left |= !bctx;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct taken *nk = realloc(keys, cap * sizeof(*nk));
			if (!nk) {
				free(keys);
				return -ENOMEM;
			}
			keys = nk;
		}
		keys[n].key = b->key;
		keys[n++].id = dense ? i : 0;
	}
	if (unknown_left)
		s->anom.ambiguous_ctx_destroys++;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		rp_slot_t *b = keys[i].id ? &r->dense[keys[i].id] : rp_map_find(&r->blocks, keys[i].key);
		unsigned kind = BLK_KIND(b->c);
		if (kind == GMT_KIND_HOST) {
			s->host_live = sub0(s->host_live, b->a);
			s->host_ctx_released += b->a;
		} else if (kind == GMT_KIND_IMPORTED) {
			s->imported_live = sub0(s->imported_live, b->a);
		} else {
			dev_sub(d, dkind(kind), gmt_downer(BLK_OWNER(b->c)), b->a);
			d->ctx_released_bytes += b->a;
			rc = notify_block(r, GMT_OBS_BLOCK_DEL, b, keys[i].key, b->a, b->dev, kind, BLK_OWNER(b->c));
		}
		d->ctx_released_blocks++;
		block_del(r, b);
	}
	free(keys);
	if (n) {
		d->ctx_release_ts = e->ts;
		r->ctx_released = 1;
	}
	return rc;
}

int gmt_replay_ctx_released(const gmt_replay_t *r)
{
	return r->ctx_released;
}

static int ev_graph_mem(gmt_replay_t *r, const gmt_devent_t *e)
{
	if (e->device < 0)
		return 0;
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	d->graph_samples++;
	d->graph_ts = e->ts;
	d->graph_reserved = e->addr;
	d->graph_reserved_high = e->size;
	d->graph_used = e->stream;
	d->graph_used_high = e->aux;
	return 0;
}

static int ev_meminfo(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return -ENOMEM;
	if (!d->meminfo_samples || e->addr < d->meminfo_min_free) {
		d->meminfo_min_free = e->addr;
		d->meminfo_min_ts = e->ts;
	}
	d->meminfo_samples++;
	d->meminfo_free = e->addr;
	d->meminfo_total = e->size;
	d->meminfo_ts = e->ts;
	return 0;
}

static gmt_pool_summary_t *pool_get(gmt_replay_t *r, uint64_t pool)
{
	gmt_summary_t *s = &r->s;
	/* Programs have a handful of pools: a linear search from the newest
	 * is cheaper than a map; a cap keeps hostile input linear. */
	for (size_t i = s->n_pools; i-- > 0;)
		if (s->pools[i].pool == pool)
			return &s->pools[i];
	if (s->n_pools >= 4096)
		return NULL;
	if (s->n_pools == s->cap_pools) {
		size_t n = s->cap_pools ? s->cap_pools * 2 : 4;
		gmt_pool_summary_t *np = realloc(s->pools, n * sizeof(*np));
		if (!np) {
			r->oom = 1;
			return NULL;
		}
		s->pools = np;
		s->cap_pools = n;
	}
	gmt_pool_summary_t *p = &s->pools[s->n_pools++];
	memset(p, 0, sizeof(*p));
	p->pool = pool;
	p->device = -1;
	return p;
}

/* Counts a pool's reserved bytes in the pool_reserved of device dev (-1:
 * in none), moving them from where they were counted. */
static void pool_count(gmt_replay_t *r, gmt_pool_summary_t *p, int dev, uint64_t bytes, uint64_t ts)
{
	if (p->counted) {
		gmt_dev_summary_t *o = dev_get(r, p->counted_dev);
		if (o)
			o->pool_reserved = sub0(o->pool_reserved, p->counted);
		p->counted = 0;
	}
	if (dev < 0 || !bytes)
		return;
	gmt_dev_summary_t *d = dev_get(r, dev);
	if (!d) {
		r->oom = 1;
		return;
	}
	d->pool_reserved += bytes;
	p->counted = bytes;
	p->counted_dev = dev;
	taken_check(d, ts);
}

static void ev_pool(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_pool_summary_t *p = pool_get(r, e->stream);
	if (!p)
		return;
	if (e->device >= 0)
		p->device = e->device;
	switch (e->type) {
	case GMT_EV_POOL_CREATE:
		p->created = 1;
		p->where = (unsigned)e->aux;
		break;
	case GMT_EV_POOL_DESTROY:
		p->destroyed = 1;
		pool_count(r, p, -1, 0, e->ts);
		break;
	case GMT_EV_POOL_TRIM: p->trims++; break;
	case GMT_EV_POOL_RESERVED:
		/* A pool located on a device (not in host memory, not managed,
		 * not another process's) reserves that device's memory. */
		pool_count(r, p, p->where == 0 ? e->device : -1, e->addr, e->ts);
		p->reserved_current = e->addr;
		p->reserved_high = e->size;
		p->samples++;
		p->reserved_samples++;
		p->ts = e->ts;
		break;
	case GMT_EV_POOL_USED:
		p->used_current = e->addr;
		p->used_high = e->size;
		p->samples++;
		p->ts = e->ts;
		break;
	default: break;
	}
}

/* A look-up passed on untraced: one more, and maybe one more name. */
static void ev_untraced(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	s->gaps.untraced_lookups++;
	for (size_t i = 0; i < r->n_untraced_names; i++)
		if (r->untraced_names[i] == e->addr)
			return;
	if (r->n_untraced_names < sizeof(r->untraced_names) / sizeof(r->untraced_names[0]))
		r->untraced_names[r->n_untraced_names++] = e->addr;
	s->gaps.untraced_entry_points++;
}

/* Counts one event (any stream). */
static inline void count_event(gmt_summary_t *s, const gmt_devent_t *e)
{
	if (!s->have_ts) {
		s->have_ts = 1;
		s->first_ts = s->last_ts = e->ts;
	}
	/* Late and side events may be older than the first one seen. */
	if (e->ts < s->first_ts)
		s->first_ts = e->ts;
	if (e->ts >= s->last_ts) {
		s->last_ts = e->ts;
		s->last_type = e->type;
	}
	s->by_type[e->type <= GMT_EV_TYPE_MAX ? e->type : GMT_EV_TYPE_MAX + 1]++;
}

/* The common ALLOC and FREE, inline: a block with an id in the dense
 * array (or the next slot in its room), of a device kind (plain, stream-ordered, VMM, managed) and no
 * flag that sets it apart, on a device already seen, with no block by
 * address and no address index to keep. Exactly what ev_alloc/ev_free do
 * then (they take every other case); 0 when it is not that case, else 1
 * with *rc the observer's answer. */
static inline __attribute__((always_inline)) int alloc_fast(gmt_replay_t *r, const gmt_devent_t *e, int *rc)
{
	const uint32_t id = e->alloc_id;
	const unsigned kind = GMT_AUX_KIND(e->aux), owner = GMT_AUX_OWNER(e->aux);
	if (!id || !e->addr || r->blocks.n || r->indexed || kind - 1 > 3u ||
	    (GMT_AUX_FLAGS(e->aux) & GMT_FLAG_CAPTURED))
		return 0;
	/* a free slot, or the next one in the room the array has (ids are
	 * handed out in order while the live blocks grow) */
	int grow = 0;
	if (__builtin_expect(id < r->n_dense, 1)) {
		if (r->dense[id].used)
			return 0;
	} else if (id == r->n_dense && id < r->cap_dense) {
		grow = 1;
	} else {
		return 0;
	}
	gmt_dev_summary_t *d = dev_get(r, e->device);
	if (!d)
		return 0;
	if (grow)
		r->n_dense++;
	rp_slot_t *b = &r->dense[id];
	*b = (rp_slot_t){ .key = e->addr, .a = e->size,
			  .c = BLK_C(kind, owner) | (uint32_t)thread_ctx(r, e->thread) << 16,
			  .dev = e->device, .used = 1 };
	r->dense_live++;
	d->used = 1;
	d->n_alloc[kind]++;
	dev_add(d, kind, gmt_downer(owner), e->size, e->ts);
	*rc = notify_block(r, GMT_OBS_BLOCK_ADD, b, e->addr, e->size, e->device, kind, owner);
	return 1;
}

static inline __attribute__((always_inline)) int free_fast(gmt_replay_t *r, const gmt_devent_t *e, int *rc)
{
	const uint32_t id = e->alloc_id;
	if (!id || id >= r->n_dense || r->indexed)
		return 0;
	rp_slot_t *b = &r->dense[id];
	const unsigned kind = BLK_KIND(b->c);
	if (!b->used || b->key != e->addr || kind - 1 > 3u || b->bflags)
		return 0;
	gmt_dev_summary_t *d = dev_get(r, b->dev);
	if (!d)
		return 0;
	r->recent[r->recent_next++ % GMT_RECENT_FREES] =
		(rp_recent_t){ .addr = e->addr, .size = b->a, .c = b->c, .dev = b->dev, .found = 1 };
	d->n_free[kind]++;
	dev_sub(d, kind, gmt_downer(BLK_OWNER(b->c)), b->a);
	*rc = notify_block(r, GMT_OBS_BLOCK_DEL, b, e->addr, b->a, b->dev, kind, BLK_OWNER(b->c));
	if (!*rc) {
		b->used = 0;
		r->dense_live--;
	}
	return 1;
}

/* count_event over a batch, the times and the last type kept in registers
 * (nothing is called in between; observers never read them). */
static void count_events(gmt_summary_t *s, const gmt_devent_t *ev, size_t n)
{
	if (!n)
		return;
	if (!s->have_ts) {
		s->have_ts = 1;
		s->first_ts = s->last_ts = ev[0].ts;
	}
	uint64_t first = s->first_ts, last = s->last_ts;
	unsigned last_type = s->last_type;
	for (size_t i = 0; i < n; i++) {
		const uint64_t ts = ev[i].ts;
		const unsigned t = ev[i].type;
		first = ts < first ? ts : first;
		if (ts >= last) {
			last = ts;
			last_type = t;
		}
		s->by_type[t <= GMT_EV_TYPE_MAX ? t : GMT_EV_TYPE_MAX + 1]++;
	}
	s->first_ts = first;
	s->last_ts = last;
	s->last_type = last_type;
}

static inline __attribute__((always_inline)) int apply_event(gmt_replay_t *r, const gmt_devent_t *e)
{
	gmt_summary_t *s = &r->s;
	int rc = 0;
	r->cause = e;
	r->ctx_released = 0;
	switch (e->type) {
	case GMT_EV_ALLOC:
		if (!alloc_fast(r, e, &rc))
			rc = ev_alloc(r, e);
		break;
	case GMT_EV_FREE:
		if (!free_fast(r, e, &rc))
			rc = ev_free(r, e);
		break;
	case GMT_EV_ALLOC_FAIL: rc = ev_alloc_fail(r, e); break;
	case GMT_EV_FREE_FAIL: rc = ev_free_fail(r, e); break;
	case GMT_EV_VMM_CREATE: rc = ev_vmm_create(r, e); break;
	case GMT_EV_VMM_RELEASE: rc = ev_vmm_release(r, e); break;
	case GMT_EV_VMM_RETAIN: rc = ev_vmm_retain(r, e); break;
	case GMT_EV_VMM_RESERVE: rc = ev_reserve(r, e); break;
	case GMT_EV_VMM_ADDR_FREE: rc = ev_addr_free(r, e); break;
	case GMT_EV_VMM_MAP: rc = ev_vmm_map(r, e); break;
	case GMT_EV_VMM_UNMAP: rc = ev_vmm_unmap(r, e); break;
	case GMT_EV_VMM_MAP_FAIL: s->vmm_map_fails++; break;
	case GMT_EV_MULTICAST_BIND: s->multicast_binds++; break;
	case GMT_EV_MEMINFO: rc = ev_meminfo(r, e); break;
	case GMT_EV_GRAPH_MEM: rc = ev_graph_mem(r, e); break;
	case GMT_EV_CTX_CREATE:
	case GMT_EV_PRIMARY_RETAIN:
	case GMT_EV_CTX_DESTROY:
	case GMT_EV_CTX_CURRENT:
		rc = ev_ctx(r, e);
		break;
	case GMT_EV_POOL_CREATE:
	case GMT_EV_POOL_DESTROY:
	case GMT_EV_POOL_TRIM:
	case GMT_EV_POOL_RESERVED:
	case GMT_EV_POOL_USED:
		ev_pool(r, e);
		break;
	case GMT_EV_PROC_UNIDENTIFIED:
		if (!e->aux)
			ev_untraced(r, e);
		break;
	case GMT_EV_NVTX_ONLY: s->gaps.nvtx_only = 1; break;
	case GMT_EV_DRIVER_STUB: s->gaps.driver_stub = 1; break;
	default: break;  /* sync, NCCL, phases, framework: not here */
	}
	r->cause = NULL;
	if (r->oom)
		rc = -ENOMEM;
	return rc;
}

static __attribute__((noinline)) int apply_event_slow(gmt_replay_t *r, const gmt_devent_t *e)
{
	return apply_event(r, e);
}

int gmt_replay_event(gmt_replay_t *r, const gmt_devent_t *e)
{
	r->s.events++;
	count_event(&r->s, e);
	/* The common ALLOC and FREE here, the rest (and what they do not
	 * take) in a function of its own: this path then needs few
	 * registers. */
	if (e->type == GMT_EV_ALLOC || e->type == GMT_EV_FREE) {
		int rc = 0;
		r->cause = e;
		r->ctx_released = 0;
		if (e->type == GMT_EV_ALLOC ? alloc_fast(r, e, &rc) : free_fast(r, e, &rc)) {
			r->cause = NULL;
			return r->oom ? -ENOMEM : rc;
		}
	}
	return apply_event_slow(r, e);
}

void gmt_replay_note_side(gmt_replay_t *r, uint64_t n)
{
	r->s.side_events += n;
}

static int rp_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	gmt_replay_t *r = ctx;
	gmt_summary_t *s = &r->s;
	int rc = 0;
	if (!n)
		return 0;
	s->events += n;
	if (flags & GMT_EVENTS_IDS_RESET)
		gmt_replay_ids_reset(r);
	if (flags & GMT_EVENTS_LATE)
		s->late_events += n;
	if (flags & GMT_EVENTS_SIDE) {
		/* The side stream (a framework's history, past times) is
		 * counted here but not replayed: this one-pass replay applies
		 * events in file order, and side events are older than the main
		 * events around them. `phases` and `curves` merge the streams. */
		s->side_events += n;
		count_events(s, ev, n);
		return 0;
	}
	/* (counted first: a batch stops only at an error, which ends the
	 * replay) */
	count_events(s, ev, n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = apply_event(r, &ev[i]);
	return rc;
}

void gmt_replay_visitor(gmt_replay_t *r, gmt_visitor_t *v)
{
	memset(v, 0, sizeof(*v));
	v->ctx = r;
	v->header = rp_header;
	v->device = rp_device;
	v->events = rp_events;
	v->drops = rp_drops;
	v->end = rp_end;
}

const gmt_summary_t *gmt_replay_summary(const gmt_replay_t *r)
{
	return &r->s;
}

const gmt_summary_t *gmt_replay_finish(gmt_replay_t *r, const gmt_decode_result_t *res)
{
	gmt_summary_t *s = &r->s;
	s->vmm_live_handles = r->handles.n;
	s->vmm_live_mappings = r->maps.n;
	/* numbers derived once for the renderers */
	s->duration_ns = s->have_ts ? s->last_ts - s->first_ts : 0;
	s->fails_not_listed = s->fails_total - s->n_fails;
	s->by_type_unknown = s->by_type[GMT_EV_TYPE_MAX + 1];
	for (unsigned i = 0; i <= GMT_EV_TYPE_MAX; i++)
		if (!gmt_ev_type_known(i))
			s->by_type_unknown += s->by_type[i];
	for (size_t i = 0; i < s->n_dev; i++) {
		gmt_dev_summary_t *d = s->dev[i];
		if (!d)
			continue;
		d->kind_max_sum = 0;
		for (int k = 0; k < GMT_DKINDS; k++)
			d->kind_max_sum += d->kind_max[k];
		d->taken_final_reserve = taken_reserve(d);
		d->taken_final = d->live.total + d->taken_final_reserve;
	}
	/* CUDA activity without a single allocation of any route. */
	static const unsigned activity[] = {
		GMT_EV_CTX_CREATE, GMT_EV_PRIMARY_RETAIN, GMT_EV_CTX_CURRENT, GMT_EV_SYNC,
		GMT_EV_RANGE_BEGIN, GMT_EV_MARK, GMT_EV_MEMINFO, GMT_EV_NCCL_BEGIN,
		GMT_EV_MODULE_LOAD, GMT_EV_CTX_LIMIT, GMT_EV_POOL_CREATE, GMT_EV_GRAPH_MEM,
	};
	static const unsigned allocation[] = {
		GMT_EV_ALLOC, GMT_EV_ALLOC_FAIL, GMT_EV_VMM_CREATE, GMT_EV_FW_ALLOC,
		GMT_EV_FW_SEGMENT_ALLOC, GMT_EV_FW_SEGMENT_MAP, GMT_EV_FW_ALLOCATED, GMT_EV_FW_RESERVED,
	};
	uint64_t allocs = 0;
	s->gaps.cuda_activity = 0;
	for (size_t i = 0; i < sizeof(activity) / sizeof(activity[0]); i++)
		s->gaps.cuda_activity += s->by_type[activity[i]];
	for (size_t i = 0; i < sizeof(allocation) / sizeof(allocation[0]); i++)
		allocs += s->by_type[allocation[i]];
	s->gaps.activity_without_allocations = s->gaps.cuda_activity && !allocs;
	s->gaps.unknown_events = s->by_type_unknown;
	if (res) {
		s->gaps.newer_records = res->newer_records;
		s->gaps.newer_fields = res->newer_fields;
		s->gaps.n_newer_tags = res->n_newer_tags;
		memcpy(s->gaps.newer_tags, res->newer_tags, sizeof(s->gaps.newer_tags));
		s->gaps.trace_major = res->format_major;
		s->gaps.trace_minor = res->format_minor;
	}
	s->gaps.incomplete = s->gaps.untraced_entry_points || s->gaps.nvtx_only ||
			     s->gaps.newer_records || s->gaps.newer_fields || s->gaps.unknown_events;
	if (s->has_end) {
		s->process_end = s->end.how ? s->end.how : "";
		s->process_end_value = s->end.value;
	} else {
		s->process_end = s->last_type == GMT_EV_EXEC ? "exec" : "cut";
		s->process_end_value = 0;
	}
	if (!res) {
		s->status = GMT_DECODE_OK;
		s->ended_cleanly = s->has_end;
		return s;
	}
	s->status = res->status;
	s->ended_cleanly = res->ended_cleanly;
	s->bytes_ok = res->bytes_ok;
	s->file_size = res->file_size;
	s->frames = res->frames;
	s->records = res->records;
	s->missing = res->dropped > res->end_dropped ? res->dropped : res->end_dropped;
	s->missing_timed = res->dropped;
	if (res->dropped) {
		s->missing_first_ts = res->drop_first_ts;
		s->missing_last_ts = res->drop_last_ts;
	}
	snprintf(s->message, sizeof(s->message), "%s", res->message);
	if (!s->has_header && res->format_major) {
		s->format_major = res->format_major;
		s->format_minor = res->format_minor;
	}
	return s;
}
