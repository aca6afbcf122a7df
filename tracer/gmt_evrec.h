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

/* The previous values of one event type in a record, and the type's shifts
 * (EVENTS3: its addr deltas and sizes count in units of 2^sa and 2^ss). */
typedef struct gmt_evprev {
	uint64_t device, stream, stack, aux, addr, size;
	unsigned sa, ss;
} gmt_evprev_t;

#define GMT_EVREC2_TYPES 128   /* the type column is a byte; 128+: invalid */

typedef struct gmt_evrec2 {
	gmt_colbuf_t col[GMT_C2_COUNT];
	uint32_t n;
	unsigned flags;
	unsigned sa, ss;               /* the record's shifts (0, 0: EVENTS2)   */
	uint64_t base_ts, prev_ts, first_ts, last_ts;
	uint64_t prev_thread, prev_ref;
	gmt_evprev_t prev[GMT_EVREC2_TYPES];
} gmt_evrec2_t;

int gmt_evrec2_alloc(gmt_evrec2_t *r, size_t max_events);
/* Empties the record (keeps its buffers, flags and shifts). */
void gmt_evrec2_reset(gmt_evrec2_t *r);
size_t gmt_evrec2_bytes(const gmt_evrec2_t *r);
/* Packs [17, n, base_ts, flags, 11 bin columns] with pk, or with a shift
 * [18, n, base_ts, flags, shifts, 11 bin columns] (EVENTS3). */
void gmt_evrec2_pack(const gmt_evrec2_t *r, msgpack_packer *pk);

static inline __attribute__((always_inline)) void gmt_put_uv(uint8_t *restrict *pp, uint64_t v)
{
	uint8_t *p = *pp;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	*pp = p;
}

/* A record's write position for a loop of gmt_evrec2_put: the column ends
 * and the previous values live in the caller's locals for the whole loop (a
 * byte store could alias anything, a register cannot). gmt_evrec2_open
 * starts it (first_ts: the ts of the record's first event if the record
 * is empty), gmt_evrec2_close writes it back into the record. */
typedef struct gmt_evrec2_pos {
	uint8_t *type, *mask, *ts, *thread, *dev, *stream, *stack, *aux, *ref, *addr, *size;
	gmt_evprev_t *prev;
	uint64_t prev_ts, prev_thread, prev_ref;
	uint32_t n;
} gmt_evrec2_pos_t;

static inline __attribute__((always_inline)) void gmt_evrec2_open(gmt_evrec2_t *r, gmt_evrec2_pos_t *q, uint64_t first_ts)
{
	if (r->n == 0) {
		r->base_ts = r->prev_ts = r->first_ts = first_ts;
		r->prev_thread = r->prev_ref = 0;
		memset(r->prev, 0, sizeof(r->prev));
		r->prev[GMT_EV_ALLOC].sa = r->prev[GMT_EV_FREE].sa = r->sa;
		r->prev[GMT_EV_ALLOC].ss = r->prev[GMT_EV_FREE].ss = r->ss;
	}
#define GMT_EVREC_AT(c) (r->col[c].p + r->col[c].n)
	q->type = GMT_EVREC_AT(GMT_C2_TYPE);
	q->mask = GMT_EVREC_AT(GMT_C2_MASK);
	q->ts = GMT_EVREC_AT(GMT_C2_TS);
	q->thread = GMT_EVREC_AT(GMT_C2_THREAD);
	q->dev = GMT_EVREC_AT(GMT_C2_DEVICE);
	q->stream = GMT_EVREC_AT(GMT_C2_STREAM);
	q->stack = GMT_EVREC_AT(GMT_C2_STACK);
	q->aux = GMT_EVREC_AT(GMT_C2_AUX);
	q->ref = GMT_EVREC_AT(GMT_C2_REF);
	q->addr = GMT_EVREC_AT(GMT_C2_ADDR);
	q->size = GMT_EVREC_AT(GMT_C2_SIZE);
#undef GMT_EVREC_AT
	q->prev = r->prev;
	q->prev_ts = r->prev_ts;
	q->prev_thread = r->prev_thread;
	q->prev_ref = r->prev_ref;
	q->n = 0;
}

/* Appends one event of thread (ts not below the previous one's; type <
 * 128; within the room given to gmt_evrec2_alloc; an ALLOC's or FREE's
 * addr and size multiples of 2^r->sa and 2^r->ss). k: for a FREE, the id
 * of the allocation it frees (0: named by address); for an ALLOC, the id
 * it takes (0: none). The reader gives an ALLOC the same id as the writer
 * by the same rule (gmt_writer.c, allocation ids), so an ALLOC's id is not
 * written. */
static inline __attribute__((always_inline)) void gmt_evrec2_put(gmt_evrec2_pos_t *restrict q, const gmt_event_t *restrict e,
				  uint32_t thread, uint32_t k)
{
	const unsigned t = e->type;
	gmt_evprev_t *p = &q->prev[t];
	unsigned m = 0;
	*q->type++ = (uint8_t)t;
	gmt_put_uv(&q->ts, e->ts - q->prev_ts);
	q->prev_ts = e->ts;
	if (GMT_EVREC_UNLIKELY(thread != q->prev_thread)) {
		m |= GMT_M_THREAD;
		gmt_put_uv(&q->thread, thread);
		q->prev_thread = thread;
	}
	const uint64_t dev = e->device < 0 ? 0 : (uint64_t)e->device + 1;
	if (dev != p->device) {
		m |= GMT_M_DEVICE;
		gmt_put_uv(&q->dev, dev);
		p->device = dev;
	}
	if (e->stream != p->stream) {
		m |= GMT_M_STREAM;
		gmt_put_uv(&q->stream, gmt_zigzag((int64_t)(e->stream - p->stream)));
		p->stream = e->stream;
	}
	if (e->stack != p->stack) {
		m |= GMT_M_STACK;
		gmt_put_uv(&q->stack, e->stack);
		p->stack = e->stack;
	}
	if (e->aux != p->aux) {
		m |= GMT_M_AUX;
		gmt_put_uv(&q->aux, e->aux);
		p->aux = e->aux;
	}
	if (t == GMT_EV_FREE && k) {
		gmt_put_uv(&q->ref, gmt_zigzag((int64_t)k - (int64_t)q->prev_ref));
		q->prev_ref = k;
	} else {
		if (t == GMT_EV_ALLOC && k)
			q->prev_ref = k;
		else if (t == GMT_EV_ALLOC || t == GMT_EV_FREE)
			m |= GMT_M_NOID;
		gmt_put_uv(&q->addr, gmt_zigzag((int64_t)(e->addr - p->addr) >> p->sa));
		p->addr = e->addr;
	}
	if (e->size != p->size) {
		m |= GMT_M_SIZE;
		gmt_put_uv(&q->size, e->size >> p->ss);
		p->size = e->size;
	}
	*q->mask++ = (uint8_t)m;
	q->n++;
}

static inline __attribute__((always_inline)) void gmt_evrec2_close(gmt_evrec2_t *r, const gmt_evrec2_pos_t *q)
{
	if (!q->n)
		return;
	r->prev_ts = q->prev_ts;
	r->prev_thread = q->prev_thread;
	r->prev_ref = q->prev_ref;
	r->last_ts = q->prev_ts;
	r->n += q->n;
#define GMT_EVREC_END(c, ptr) r->col[c].n = (size_t)(q->ptr - r->col[c].p)
	GMT_EVREC_END(GMT_C2_TYPE, type);
	GMT_EVREC_END(GMT_C2_MASK, mask);
	GMT_EVREC_END(GMT_C2_TS, ts);
	GMT_EVREC_END(GMT_C2_THREAD, thread);
	GMT_EVREC_END(GMT_C2_DEVICE, dev);
	GMT_EVREC_END(GMT_C2_STREAM, stream);
	GMT_EVREC_END(GMT_C2_STACK, stack);
	GMT_EVREC_END(GMT_C2_AUX, aux);
	GMT_EVREC_END(GMT_C2_REF, ref);
	GMT_EVREC_END(GMT_C2_ADDR, addr);
	GMT_EVREC_END(GMT_C2_SIZE, size);
#undef GMT_EVREC_END
}

/* Appends n events of thread (as gmt_evrec2_put each; id[i] is event i's
 * k). */
static inline void gmt_evrec2_add_n(gmt_evrec2_t *r, const gmt_event_t *restrict ev, size_t n,
				    uint32_t thread, const uint32_t *restrict id)
{
	if (!n)
		return;
	gmt_evrec2_pos_t q;
	gmt_evrec2_open(r, &q, ev[0].ts);
	for (size_t i = 0; i < n; i++)
		gmt_evrec2_put(&q, &ev[i], thread, id[i]);
	gmt_evrec2_close(r, &q);
}

#endif /* GMT_EVREC_H */
