/*
 * gmt_evrec.h - PRIVATE to tracer/: one EVENTS record under construction
 * (schemas/trace-format.md, "EVENTS columns"), for the side stream
 * (gmt_side.c), and one EVENTS2 record ("EVENTS2 columns", 1.4), for the
 * writer's main stream (gmt_writer.c).
 */
#ifndef GMT_EVREC_H
#define GMT_EVREC_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmt_tracer.h"

#define GMT_EVREC_UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef struct gmt_colbuf {
	uint8_t *p;
	size_t n, cap;
} gmt_colbuf_t;

typedef struct gmt_evrec {
	gmt_colbuf_t col[GMT_COL_COUNT];
	uint32_t n;
	unsigned flags;
	uint64_t base_ts, prev_ts, prev_addr, prev_stream;
	uint64_t first_ts, last_ts;
} gmt_evrec_t;

/* Sizes the columns for max_events events (at most 10 bytes a value), so
 * that gmt_evrec_add checks nothing. 0 or -ENOMEM. */
int gmt_evrec_alloc(gmt_evrec_t *r, size_t max_events);
void gmt_evrec_free(gmt_evrec_t *r);
/* Empties the record (keeps its buffers and flags). */
void gmt_evrec_reset(gmt_evrec_t *r);
/* Encoded bytes so far (all columns). */
size_t gmt_evrec_bytes(const gmt_evrec_t *r);
/* Packs [7, n, base_ts, flags, 9 bin columns] with pk; the record is left
 * as it was (reset it to start the next). */
void gmt_evrec_pack(const gmt_evrec_t *r, msgpack_packer *pk);

static inline void gmt_colbuf_uv(gmt_colbuf_t *c, uint64_t v)
{
	c->n += gmt_uvarint_put(c->p + c->n, v);
}

/* Appends one event of thread (events in nondecreasing ts order). */
static inline void gmt_evrec_add(gmt_evrec_t *r, const gmt_event_t *e, uint32_t thread)
{
	if (r->n == 0) {
		r->base_ts = r->prev_ts = e->ts;
		r->prev_addr = r->prev_stream = 0;
		r->first_ts = e->ts;
	}
	r->col[GMT_COL_TYPE].p[r->col[GMT_COL_TYPE].n++] = (uint8_t)e->type;
	gmt_colbuf_uv(&r->col[GMT_COL_TS], e->ts - r->prev_ts);
	r->prev_ts = e->ts;
	gmt_colbuf_uv(&r->col[GMT_COL_THREAD], thread);
	gmt_colbuf_uv(&r->col[GMT_COL_DEVICE], e->device < 0 ? 0 : (uint64_t)e->device + 1);
	gmt_colbuf_uv(&r->col[GMT_COL_ADDR], gmt_zigzag((int64_t)(e->addr - r->prev_addr)));
	r->prev_addr = e->addr;
	gmt_colbuf_uv(&r->col[GMT_COL_SIZE], e->size);
	gmt_colbuf_uv(&r->col[GMT_COL_STREAM], gmt_zigzag((int64_t)(e->stream - r->prev_stream)));
	r->prev_stream = e->stream;
	gmt_colbuf_uv(&r->col[GMT_COL_STACK], e->stack);
	gmt_colbuf_uv(&r->col[GMT_COL_AUX], e->aux);
	r->last_ts = e->ts;
	r->n++;
}

/* ---- EVENTS2 (1.4): the writer's main stream ---------------------------- */

/* The previous values of one event type in a record. */
typedef struct gmt_evprev {
	uint64_t device, stream, stack, aux, addr, size;
} gmt_evprev_t;

#define GMT_EVREC2_TYPES 128   /* the type column is a byte; 128+: invalid */

typedef struct gmt_evrec2 {
	gmt_colbuf_t col[GMT_C2_COUNT];
	uint32_t n;
	unsigned flags;
	uint64_t base_ts, prev_ts, first_ts, last_ts;
	uint64_t prev_thread, prev_ref;
	gmt_evprev_t prev[GMT_EVREC2_TYPES];
} gmt_evrec2_t;

int gmt_evrec2_alloc(gmt_evrec2_t *r, size_t max_events);
void gmt_evrec2_reset(gmt_evrec2_t *r);
size_t gmt_evrec2_bytes(const gmt_evrec2_t *r);
/* Packs [17, n, base_ts, flags, 11 bin columns] with pk. */
void gmt_evrec2_pack(const gmt_evrec2_t *r, msgpack_packer *pk);

static inline void gmt_put_uv(uint8_t *restrict *pp, uint64_t v)
{
	uint8_t *p = *pp;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	*pp = p;
}

/* Appends n events of thread (nondecreasing ts; types < 128; at most the
 * room left of the size given to gmt_evrec2_alloc). id[i]: for a FREE, the
 * id of the allocation it frees (0: named by address); for an ALLOC, the
 * id it takes (0: none). The reader gives an ALLOC the same id as the
 * writer by the same rule (gmt_writer.c, allocation ids), so an ALLOC's id
 * is not written. The column ends live in locals for the whole batch: a
 * byte store could alias anything, a register cannot. */
static inline void gmt_evrec2_add_n(gmt_evrec2_t *r, const gmt_event_t *restrict ev, size_t n,
				    uint32_t thread, const uint32_t *restrict id)
{
	if (!n)
		return;
	if (r->n == 0) {
		r->base_ts = r->prev_ts = r->first_ts = ev[0].ts;
		r->prev_thread = r->prev_ref = 0;
		memset(r->prev, 0, sizeof(r->prev));
	}
	uint8_t *restrict c_type = r->col[GMT_C2_TYPE].p + r->col[GMT_C2_TYPE].n;
	uint8_t *restrict c_mask = r->col[GMT_C2_MASK].p + r->col[GMT_C2_MASK].n;
	uint8_t *restrict c_ts = r->col[GMT_C2_TS].p + r->col[GMT_C2_TS].n;
	uint8_t *restrict c_thread = r->col[GMT_C2_THREAD].p + r->col[GMT_C2_THREAD].n;
	uint8_t *restrict c_dev = r->col[GMT_C2_DEVICE].p + r->col[GMT_C2_DEVICE].n;
	uint8_t *restrict c_stream = r->col[GMT_C2_STREAM].p + r->col[GMT_C2_STREAM].n;
	uint8_t *restrict c_stack = r->col[GMT_C2_STACK].p + r->col[GMT_C2_STACK].n;
	uint8_t *restrict c_aux = r->col[GMT_C2_AUX].p + r->col[GMT_C2_AUX].n;
	uint8_t *restrict c_ref = r->col[GMT_C2_REF].p + r->col[GMT_C2_REF].n;
	uint8_t *restrict c_addr = r->col[GMT_C2_ADDR].p + r->col[GMT_C2_ADDR].n;
	uint8_t *restrict c_size = r->col[GMT_C2_SIZE].p + r->col[GMT_C2_SIZE].n;
	gmt_evprev_t *restrict prev = r->prev;
	uint64_t prev_ts = r->prev_ts, prev_thread = r->prev_thread, prev_ref = r->prev_ref;
	for (size_t i = 0; i < n; i++) {
		const gmt_event_t *e = &ev[i];
		const unsigned t = e->type;
		gmt_evprev_t *p = &prev[t];
		unsigned m = 0;
		*c_type++ = (uint8_t)t;
		gmt_put_uv(&c_ts, e->ts - prev_ts);
		prev_ts = e->ts;
		if (GMT_EVREC_UNLIKELY(thread != prev_thread)) {
			m |= GMT_M_THREAD;
			gmt_put_uv(&c_thread, thread);
			prev_thread = thread;
		}
		const uint64_t dev = e->device < 0 ? 0 : (uint64_t)e->device + 1;
		if (dev != p->device) {
			m |= GMT_M_DEVICE;
			gmt_put_uv(&c_dev, dev);
			p->device = dev;
		}
		if (e->stream != p->stream) {
			m |= GMT_M_STREAM;
			gmt_put_uv(&c_stream, gmt_zigzag((int64_t)(e->stream - p->stream)));
			p->stream = e->stream;
		}
		if (e->stack != p->stack) {
			m |= GMT_M_STACK;
			gmt_put_uv(&c_stack, e->stack);
			p->stack = e->stack;
		}
		if (e->aux != p->aux) {
			m |= GMT_M_AUX;
			gmt_put_uv(&c_aux, e->aux);
			p->aux = e->aux;
		}
		const uint32_t k = id[i];
		if (t == GMT_EV_FREE && k) {
			gmt_put_uv(&c_ref, gmt_zigzag((int64_t)k - (int64_t)prev_ref));
			prev_ref = k;
		} else {
			if (t == GMT_EV_ALLOC && k)
				prev_ref = k;
			else if (t == GMT_EV_ALLOC || t == GMT_EV_FREE)
				m |= GMT_M_NOID;
			gmt_put_uv(&c_addr, gmt_zigzag((int64_t)(e->addr - p->addr)));
			p->addr = e->addr;
		}
		if (e->size != p->size) {
			m |= GMT_M_SIZE;
			gmt_put_uv(&c_size, e->size);
			p->size = e->size;
		}
		*c_mask++ = (uint8_t)m;
	}
	r->prev_ts = prev_ts;
	r->prev_thread = thread;
	r->prev_ref = prev_ref;
	r->last_ts = prev_ts;
	r->n += (uint32_t)n;
#define GMT_EVREC_END(c, ptr) r->col[c].n = (size_t)(ptr - r->col[c].p)
	GMT_EVREC_END(GMT_C2_TYPE, c_type);
	GMT_EVREC_END(GMT_C2_MASK, c_mask);
	GMT_EVREC_END(GMT_C2_TS, c_ts);
	GMT_EVREC_END(GMT_C2_THREAD, c_thread);
	GMT_EVREC_END(GMT_C2_DEVICE, c_dev);
	GMT_EVREC_END(GMT_C2_STREAM, c_stream);
	GMT_EVREC_END(GMT_C2_STACK, c_stack);
	GMT_EVREC_END(GMT_C2_AUX, c_aux);
	GMT_EVREC_END(GMT_C2_REF, c_ref);
	GMT_EVREC_END(GMT_C2_ADDR, c_addr);
	GMT_EVREC_END(GMT_C2_SIZE, c_size);
#undef GMT_EVREC_END
}

#endif /* GMT_EVREC_H */
