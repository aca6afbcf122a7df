/* gmt_evrec.c - EVENTS and EVENTS2 record building (see gmt_evrec.h). */
#include <errno.h>
#include <stdlib.h>

#include "gmt_evrec.h"

static int colbuf_reserve(gmt_colbuf_t *c, size_t more)
{
	if (c->cap - c->n >= more)
		return 0;
	size_t cap = c->cap ? c->cap * 2 : 4096;
	while (cap - c->n < more)
		cap *= 2;
	uint8_t *p = realloc(c->p, cap);
	if (!p)
		return -ENOMEM;
	c->p = p;
	c->cap = cap;
	return 0;
}

/* What both record kinds do to their columns (cols[0..k)). */
static int cols_alloc(gmt_colbuf_t *cols, int k, size_t max_events)
{
	for (int i = 0; i < k; i++)
		if (colbuf_reserve(&cols[i], max_events * 10) < 0)
			return -ENOMEM;
	return 0;
}

static void cols_reset(gmt_colbuf_t *cols, int k)
{
	for (int i = 0; i < k; i++)
		cols[i].n = 0;
}

static size_t cols_bytes(const gmt_colbuf_t *cols, int k)
{
	size_t n = 0;
	for (int i = 0; i < k; i++)
		n += cols[i].n;
	return n;
}

/* [tag, n, base_ts, flags, (shifts,) k bin columns]; shifts < 0: none */
static void cols_pack(msgpack_packer *pk, unsigned tag, uint32_t n, uint64_t base_ts, unsigned flags,
		      int shifts, const gmt_colbuf_t *cols, int k)
{
	msgpack_pack_array(pk, 4 + (shifts >= 0) + (size_t)k);
	msgpack_pack_uint8(pk, (uint8_t)tag);
	msgpack_pack_uint32(pk, n);
	msgpack_pack_uint64(pk, base_ts);
	msgpack_pack_uint32(pk, flags);
	if (shifts >= 0)
		msgpack_pack_uint32(pk, (uint32_t)shifts);
	for (int i = 0; i < k; i++) {
		msgpack_pack_bin(pk, cols[i].n);
		msgpack_pack_bin_body(pk, cols[i].p, cols[i].n);
	}
}

int gmt_evrec_alloc(gmt_evrec_t *r, size_t max_events)
{
	return cols_alloc(r->col, GMT_COL_COUNT, max_events);
}

void gmt_evrec_free(gmt_evrec_t *r)
{
	for (int i = 0; i < GMT_COL_COUNT; i++) {
		free(r->col[i].p);
		r->col[i].p = NULL;
		r->col[i].n = r->col[i].cap = 0;
	}
	r->n = 0;
}

void gmt_evrec_reset(gmt_evrec_t *r)
{
	cols_reset(r->col, GMT_COL_COUNT);
	r->n = 0;
}

size_t gmt_evrec_bytes(const gmt_evrec_t *r)
{
	return cols_bytes(r->col, GMT_COL_COUNT);
}

void gmt_evrec_pack(const gmt_evrec_t *r, msgpack_packer *pk)
{
	cols_pack(pk, GMT_REC_EVENTS, r->n, r->base_ts, r->flags, -1, r->col, GMT_COL_COUNT);
}

int gmt_evrec2_alloc(gmt_evrec2_t *r, size_t max_events)
{
	return cols_alloc(r->col, GMT_C2_COUNT, max_events);
}

void gmt_evrec2_reset(gmt_evrec2_t *r)
{
	cols_reset(r->col, GMT_C2_COUNT);
	r->n = 0;
}

size_t gmt_evrec2_bytes(const gmt_evrec2_t *r)
{
	return cols_bytes(r->col, GMT_C2_COUNT);
}

void gmt_evrec2_pack(const gmt_evrec2_t *r, msgpack_packer *pk)
{
	if (r->sa || r->ss)
		cols_pack(pk, GMT_REC_EVENTS3, r->n, r->base_ts, r->flags, (int)GMT_SHIFTS(r->sa, r->ss),
			  r->col, GMT_C2_COUNT);
	else
		cols_pack(pk, GMT_REC_EVENTS2, r->n, r->base_ts, r->flags, -1, r->col, GMT_C2_COUNT);
}
