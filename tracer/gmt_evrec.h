/*
 * gmt_evrec.h - PRIVATE to tracer/: one EVENTS record under construction
 * (schemas/trace-format.md, "EVENTS columns"), shared by the writer thread
 * (gmt_writer.c) and the side stream (gmt_side.c) so that the column coding
 * exists once.
 */
#ifndef GMT_EVREC_H
#define GMT_EVREC_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "gmt_tracer.h"

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

#endif /* GMT_EVREC_H */
