/*
 * gmt_memviz_model.c - the memory-viz model of gmt_memviz_model.h.
 *
 * One pass of the time line (engines/gmt_timeline.h) through the phase
 * engine, whose levels engine says, through its outside callback, which
 * driver allocations never lay inside a framework segment (at their free,
 * or at the end for those still live). The framework's events are written
 * per device, as they come, to a stream of a temporary file; the outside
 * allocations are kept in memory and merged into the entries by time when
 * they are read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_phase_engine.h"
#include "engines/gmt_timeline.h"
#include "model/gmt_memviz_model.h"
#include "support/gmt_spool.h"
#include "support/gmt_u64map.h"

struct gmt_mv_priv {
	const char *path;
	gmt_phase_opts_t po;
	gmt_phases_t *ph;
	gmt_visitor_t pv;        /* the engine's metadata visitor */
	gmt_spool_t *sp;
	size_t stream[GMT_MV_MAX_DEVICES];
	int open[GMT_MV_MAX_DEVICES];
	gmt_u64map_t segs, blocks;   /* key: addr ^ device << 56; a = size,
					b = stream (segs) / pending (blocks),
					the stack in the high half of b     */
	gmt_outlier_t *out;      /* outside allocations */
	size_t n_out, cap_out;
	int err;
};

static const char *const action_keys[GMT_MV_ACTIONS] = {
	"segment_alloc", "segment_map", "alloc", "free_requested",
	"free_completed", "segment_free", "segment_unmap", "oom",
};

const char *gmt_mv_action_key(unsigned a)
{
	return a < GMT_MV_ACTIONS ? action_keys[a] : "?";
}

static uint64_t key_of(int dev, uint64_t addr)
{
	return (addr & ((1ull << 56) - 1)) ^ ((uint64_t)(unsigned)dev << 56);
}

/* ---- the levels engine's outside allocations ------------------------------ */

static void on_outside(void *ctx, const gmt_outlier_t *o)
{
	gmt_memviz_model_t *m = ctx;
	gmt_mv_priv_t *p = m->priv;
	if (o->dev < 0 || o->dev >= GMT_MV_MAX_DEVICES)
		return;
	m->outside_allocations++;
	if (p->n_out >= GMT_MV_MAX_OUTSIDE) {
		m->outside_left_out++;
		return;
	}
	if (p->n_out == p->cap_out) {
		size_t c = p->cap_out ? p->cap_out * 2 : 64;
		gmt_outlier_t *q = realloc(p->out, c * sizeof(*q));
		if (!q) {
			p->err = -ENOMEM;
			return;
		}
		p->out = q;
		p->cap_out = c;
	}
	p->out[p->n_out++] = *o;
	if (o->dev >= m->n_devices)
		m->n_devices = o->dev + 1;
}

/* ---- the time line's sink ------------------------------------------------- */

static int s_reset(void *ctx, int pass)
{
	gmt_memviz_model_t *m = ctx;
	gmt_mv_priv_t *p = m->priv;
	(void)pass;
	gmt_phases_free(p->ph);
	if (!(p->ph = gmt_phases_new(p->path, &p->po)))
		return p->err = -ENOMEM;
	gmt_phases_visitor(p->ph, &p->pv);
	gmt_levels_set_outside_fn(gmt_phases_levels(p->ph), on_outside, m);
	for (int d = 0; d < GMT_MV_MAX_DEVICES; d++)
		if (p->open[d])
			gmt_spool_truncate(p->sp, p->stream[d]);
	gmt_u64map_clear(&p->segs);
	gmt_u64map_clear(&p->blocks);
	p->n_out = 0;
	m->n_devices = 0;
	m->fw_entries = m->outside_allocations = m->outside_left_out = 0;
	return 0;
}

static int s_header(void *ctx, const gmt_header_t *h)
{
	gmt_memviz_model_t *m = ctx;
	gmt_mv_priv_t *p = m->priv;
	m->wall_offset_ns = h->clock_realtime_ns - h->clock_monotonic_ns;
	return p->pv.header ? p->pv.header(p->pv.ctx, h) : 0;
}

static int s_thread(void *ctx, uint32_t idx, uint64_t tid, const char *name)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.thread ? p->pv.thread(p->pv.ctx, idx, tid, name) : 0;
}

static int s_device(void *ctx, const gmt_device_rec_t *d)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.device ? p->pv.device(p->pv.ctx, d) : 0;
}

static int s_drops(void *ctx, const gmt_drops_t *d)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.drops ? p->pv.drops(p->pv.ctx, d) : 0;
}

static int s_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.string ? p->pv.string(p->pv.ctx, id, text, len) : 0;
}

static int s_end(void *ctx, const gmt_end_t *e)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.end ? p->pv.end(p->pv.ctx, e) : 0;
}

static int s_meta(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	gmt_mv_priv_t *p = ((gmt_memviz_model_t *)ctx)->priv;
	return p->pv.meta ? p->pv.meta(p->pv.ctx, ts, kv, n) : 0;
}

static int s_module(void *ctx, const gmt_module_t *mod)
{
	gmt_memviz_model_t *m = ctx;
	gmt_mv_priv_t *p = m->priv;
	if (gmt_stacks_module(m->stacks, mod))
		return p->err = -ENOMEM;
	return p->pv.module ? p->pv.module(p->pv.ctx, mod) : 0;
}

static int s_stack(void *ctx, uint32_t id, const uint64_t *frames, size_t n)
{
	gmt_memviz_model_t *m = ctx;
	return gmt_stacks_stack(m->stacks, id, frames, n) ? (m->priv->err = -ENOMEM) : 0;
}

static int s_text_stack(void *ctx, uint32_t id, const char *const *frames, size_t n)
{
	gmt_memviz_model_t *m = ctx;
	return gmt_stacks_text_stack(m->stacks, id, frames, n) ? (m->priv->err = -ENOMEM) : 0;
}

static int fw_action(unsigned type)
{
	switch (type) {
	case GMT_EV_FW_SEGMENT_ALLOC: return GMT_MV_SEGMENT_ALLOC;
	case GMT_EV_FW_SEGMENT_MAP: return GMT_MV_SEGMENT_MAP;
	case GMT_EV_FW_ALLOC: return GMT_MV_ALLOC;
	case GMT_EV_FW_FREE_REQUESTED: return GMT_MV_FREE_REQUESTED;
	case GMT_EV_FW_FREE_COMPLETED: return GMT_MV_FREE_COMPLETED;
	case GMT_EV_FW_SEGMENT_FREE: return GMT_MV_SEGMENT_FREE;
	case GMT_EV_FW_SEGMENT_UNMAP: return GMT_MV_SEGMENT_UNMAP;
	case GMT_EV_FW_OOM: return GMT_MV_OOM;
	default: return -1;
	}
}

/* The live segments and blocks follow the framework's events. */
static int fw_live(gmt_mv_priv_t *p, int a, int d, const gmt_devent_t *e)
{
	gmt_u64map_slot_t *sl;
	int existed;
	uint64_t k = key_of(d, e->addr);
	switch (a) {
	case GMT_MV_SEGMENT_ALLOC:
	case GMT_MV_SEGMENT_MAP:
		if (!(sl = gmt_u64map_put(&p->segs, k, &existed)))
			return -ENOMEM;
		sl->a = e->size;
		sl->b = e->stream;
		break;
	case GMT_MV_SEGMENT_FREE:
	case GMT_MV_SEGMENT_UNMAP:
		if ((sl = gmt_u64map_find(&p->segs, k)))
			gmt_u64map_del(&p->segs, sl);
		break;
	case GMT_MV_ALLOC:
		if (!(sl = gmt_u64map_put(&p->blocks, k, &existed)))
			return -ENOMEM;
		sl->a = e->size;
		sl->b = (uint64_t)e->stack << 32;
		break;
	case GMT_MV_FREE_REQUESTED:
		if ((sl = gmt_u64map_find(&p->blocks, k)))
			sl->b |= 1;
		break;
	case GMT_MV_FREE_COMPLETED:
		if ((sl = gmt_u64map_find(&p->blocks, k)))
			gmt_u64map_del(&p->blocks, sl);
		break;
	default:
		break;
	}
	return 0;
}

static int s_event(void *ctx, const gmt_devent_t *e, int side)
{
	gmt_memviz_model_t *m = ctx;
	gmt_mv_priv_t *p = m->priv;
	int rc = gmt_phases_event_from(p->ph, e, side);
	if (rc)
		return p->err = rc;
	if (p->err)
		return p->err;
	int a = fw_action(e->type);
	if (a < 0 || e->device < 0 || e->device >= GMT_MV_MAX_DEVICES)
		return 0;
	int d = e->device;
	if (!p->open[d]) {
		if ((rc = gmt_spool_open(p->sp, &p->stream[d])))
			return p->err = rc;
		p->open[d] = 1;
	}
	if (d >= m->n_devices)
		m->n_devices = d + 1;
	gmt_mv_entry_t x = { .action = (uint8_t)a, .stack = e->stack, .ts = e->ts, .addr = e->addr,
			     .size = e->size, .stream = e->stream };
	if (a == GMT_MV_OOM) {
		x.device_free = e->addr;
		x.addr = 0;
	}
	if ((rc = gmt_spool_write(p->sp, p->stream[d], &x, sizeof(x))) || (rc = fw_live(p, a, d, e)))
		return p->err = rc;
	m->fw_entries++;
	return 0;
}

/* ---- building ------------------------------------------------------------- */

static int cmp_slot(const void *a, const void *b)
{
	const gmt_u64map_slot_t *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static gmt_u64map_slot_t *sorted(const gmt_u64map_t *mp, size_t *n)
{
	gmt_u64map_slot_t *v = malloc((mp->n ? mp->n : 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < mp->cap; i++)
		if (mp->s[i].key != UINT64_MAX)
			v[(*n)++] = mp->s[i];
	if (v)
		qsort(v, *n, sizeof(*v), cmp_slot);
	return v;
}

static int cmp_out(const void *a, const void *b)
{
	const gmt_outlier_t *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The segments live at the end: the framework's with their blocks, then
   the outside allocations still live, each a segment of one block. */
static int live_segments(gmt_memviz_model_t *m)
{
	gmt_mv_priv_t *p = m->priv;
	size_t ns = 0, nb = 0, nlive = 0;
	gmt_u64map_slot_t *segs = sorted(&p->segs, &ns), *blocks = sorted(&p->blocks, &nb);
	for (size_t i = 0; i < p->n_out; i++)
		nlive += !p->out[i].freed_ts;
	int rc = segs && blocks ? 0 : -ENOMEM;
	if (!rc && !(m->segments = calloc(ns + nlive + 1, sizeof(*m->segments))))
		rc = -ENOMEM;
	size_t j = 0, in_segs = 0;
	for (size_t i = 0; !rc && i < ns; i++) {
		gmt_mv_segment_t *s = &m->segments[m->n_segments++];
		uint64_t base = segs[i].key & ((1ull << 56) - 1);
		*s = (gmt_mv_segment_t){ .device = (int)(segs[i].key >> 56), .addr = base, .size = segs[i].a,
					 .stream = segs[i].b };
		while (j < nb && blocks[j].key < segs[i].key)
			j++;
		size_t first = j;
		while (j < nb && blocks[j].key >> 56 == segs[i].key >> 56 &&
		       (blocks[j].key & ((1ull << 56) - 1)) + blocks[j].a <= base + segs[i].a)
			j++;
		if (j > first) {
			if (!(s->blocks = calloc(j - first, sizeof(*s->blocks)))) {
				rc = -ENOMEM;
				break;
			}
			for (size_t k = first; k < j; k++)
				s->blocks[s->n_blocks++] = (gmt_mv_block_t){
					blocks[k].key & ((1ull << 56) - 1), blocks[k].a, (int)(blocks[k].b & 1),
					(uint32_t)(blocks[k].b >> 32) };
			in_segs += j - first;
		}
	}
	m->blocks_outside_segments = nb - in_segs;
	for (size_t i = 0; !rc && i < p->n_out; i++) {
		const gmt_outlier_t *o = &p->out[i];
		if (o->freed_ts)
			continue;
		gmt_mv_segment_t *s = &m->segments[m->n_segments++];
		*s = (gmt_mv_segment_t){ .device = o->dev, .addr = o->addr, .size = o->size, .stack = o->stack,
					 .outside = 1, .owner = gmt_downer(o->owner), .is_handle = o->is_handle };
		if (!(s->blocks = calloc(1, sizeof(*s->blocks)))) {
			rc = -ENOMEM;
			break;
		}
		s->blocks[s->n_blocks++] = (gmt_mv_block_t){ o->addr, o->size, 0, o->stack };
	}
	free(segs);
	free(blocks);
	return rc;
}

gmt_memviz_model_t *gmt_memviz_model_build(const char *path, const char *const *debug_dirs,
					   size_t n_dirs, int symbols)
{
	gmt_memviz_model_t *m = calloc(1, sizeof(*m));
	if (!m || !(m->priv = calloc(1, sizeof(*m->priv))) || !(m->priv->sp = gmt_spool_new()) ||
	    !(m->stacks = gmt_stacks_new(debug_dirs, n_dirs, symbols))) {
		gmt_memviz_model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	gmt_mv_priv_t *p = m->priv;
	m->file = path;
	p->path = path;
	p->po.max_listed = GMT_PHASES_DEFAULT_LISTED;
	p->po.top_n = GMT_PHASES_DEFAULT_TOP;
	p->po.open_only = 1;
	gmt_timeline_sink_t sink = {
		.ctx = m, .reset = s_reset, .event = s_event,
		.meta = { .ctx = m, .header = s_header, .thread = s_thread, .module = s_module,
			  .stack = s_stack, .device = s_device, .drops = s_drops, .string = s_string,
			  .end = s_end, .meta = s_meta, .text_stack = s_text_stack },
	};
	gmt_timeline_run(path, &sink, &m->res, NULL);
	int rc = p->err;
	if (!p->ph) {
		/* the time line never began (an unreadable file): an empty engine */
		if (!(p->ph = gmt_phases_new(path, &p->po))) {
			gmt_memviz_model_free(m);
			errno = ENOMEM;
			return NULL;
		}
		gmt_levels_set_outside_fn(gmt_phases_levels(p->ph), on_outside, m);
	}
	if (!rc)
		rc = gmt_phases_finish(p->ph, &m->res);
	rc = rc ? rc : p->err;
	m->s = gmt_phases_summary(p->ph);
	for (int d = 0; !rc && d < GMT_MV_MAX_DEVICES; d++)
		if (p->open[d])
			rc = gmt_spool_close(p->sp, p->stream[d]);
	if (!rc) {
		qsort(p->out, p->n_out, sizeof(*p->out), cmp_out);
		rc = live_segments(m);
	}
	if (rc) {
		gmt_memviz_model_free(m);
		errno = -rc;
		return NULL;
	}
	return m;
}

void gmt_memviz_model_free(gmt_memviz_model_t *m)
{
	if (!m)
		return;
	gmt_mv_priv_t *p = m->priv;
	for (size_t i = 0; i < m->n_segments; i++)
		free(m->segments[i].blocks);
	free(m->segments);
	gmt_stacks_free(m->stacks);
	if (p) {
		gmt_phases_free(p->ph);
		gmt_spool_free(p->sp);
		free(p->segs.s);
		free(p->blocks.s);
		free(p->out);
		free(p);
	}
	free(m);
}

/* ---- reading a device's entries ------------------------------------------ */

static int read_entry(gmt_spool_reader_t *r, gmt_mv_entry_t *e)
{
	uint8_t *dst = (uint8_t *)e;
	size_t got = 0;
	while (got < sizeof(*e)) {
		if (!gmt_spool_reader_fill(r))
			return got ? -EIO : (r->err ? r->err : 0);
		size_t k = r->len - r->pos;
		if (k > sizeof(*e) - got)
			k = sizeof(*e) - got;
		memcpy(dst + got, r->buf + r->pos, k);
		r->pos += k;
		got += k;
	}
	return 1;
}

/* The outside allocations' frees due, earliest first (a heap). */
static void heap_push(const gmt_outlier_t **h, size_t *n, const gmt_outlier_t *o)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2]->freed_ts > o->freed_ts) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = o;
}

static const gmt_outlier_t *heap_pop(const gmt_outlier_t **h, size_t *n)
{
	const gmt_outlier_t *top = h[0], *x = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1]->freed_ts < h[c]->freed_ts)
			c++;
		if (h[c]->freed_ts >= x->freed_ts)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

static int outside_entries(const gmt_outlier_t *o, int freeing, int (*fn)(void *, const gmt_mv_entry_t *),
			   void *ctx)
{
	static const uint8_t alloc_seq[] = { GMT_MV_SEGMENT_ALLOC, GMT_MV_ALLOC };
	static const uint8_t free_seq[] = { GMT_MV_FREE_REQUESTED, GMT_MV_FREE_COMPLETED, GMT_MV_SEGMENT_FREE };
	const uint8_t *seq = freeing ? free_seq : alloc_seq;
	size_t n = freeing ? sizeof(free_seq) : sizeof(alloc_seq);
	for (size_t i = 0; i < n; i++) {
		gmt_mv_entry_t e = { .action = seq[i], .outside = 1, .owner = (uint8_t)gmt_downer(o->owner),
				     .is_handle = o->is_handle, .stack = o->stack,
				     .ts = freeing ? o->freed_ts : o->ts, .addr = o->addr, .size = o->size };
		int rc = fn(ctx, &e);
		if (rc)
			return rc;
	}
	return 0;
}

int gmt_memviz_each_entry(const gmt_memviz_model_t *m, int device,
			  int (*fn)(void *ctx, const gmt_mv_entry_t *e), void *ctx)
{
	const gmt_mv_priv_t *p = m->priv;
	if (device < 0 || device >= GMT_MV_MAX_DEVICES)
		return 0;
	gmt_spool_reader_t r;
	int have_r = 0, rc = 0;
	gmt_mv_entry_t fe;
	int fe_ok = 0;
	if (p->open[device]) {
		if ((rc = gmt_spool_reader_open(&r, p->sp, p->stream[device])))
			return rc;
		have_r = 1;
		if ((fe_ok = read_entry(&r, &fe)) < 0)
			rc = fe_ok;
	}
	const gmt_outlier_t **heap = malloc((p->n_out ? p->n_out : 1) * sizeof(*heap));
	size_t nh = 0, oi = 0;
	if (!heap)
		rc = -ENOMEM;
	while (!rc) {
		while (oi < p->n_out && p->out[oi].dev != device)
			oi++;
		/* the next of: a framework entry, an outside allocation, a free */
		uint64_t t_f = fe_ok == 1 ? fe.ts : UINT64_MAX;
		uint64_t t_a = oi < p->n_out ? p->out[oi].ts : UINT64_MAX;
		uint64_t t_x = nh ? heap[0]->freed_ts : UINT64_MAX;
		if (fe_ok != 1 && oi >= p->n_out && !nh)
			break;
		if (fe_ok == 1 && t_f <= t_a && t_f <= t_x) {
			if ((rc = fn(ctx, &fe)))
				break;
			if ((fe_ok = read_entry(&r, &fe)) < 0)
				rc = fe_ok;
		} else if (nh && t_x <= t_a) {
			rc = outside_entries(heap_pop(heap, &nh), 1, fn, ctx);
		} else {
			const gmt_outlier_t *o = &p->out[oi++];
			if (!(rc = outside_entries(o, 0, fn, ctx)) && o->freed_ts)
				heap_push(heap, &nh, o);
		}
	}
	free(heap);
	if (have_r)
		gmt_spool_reader_close(&r);
	return rc;
}
