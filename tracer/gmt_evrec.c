/* gmt_evrec.c - EVENTS record building (see gmt_evrec.h). */
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

int gmt_evrec_alloc(gmt_evrec_t *r, size_t max_events)
{
	for (int i = 0; i < GMT_COL_COUNT; i++)
		if (colbuf_reserve(&r->col[i], max_events * 10) < 0)
			return -ENOMEM;
	return 0;
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
	for (int i = 0; i < GMT_COL_COUNT; i++)
		r->col[i].n = 0;
	r->n = 0;
}

size_t gmt_evrec_bytes(const gmt_evrec_t *r)
{
	size_t n = 0;
	for (int i = 0; i < GMT_COL_COUNT; i++)
		n += r->col[i].n;
	return n;
}

void gmt_evrec_pack(const gmt_evrec_t *r, msgpack_packer *pk)
{
	msgpack_pack_array(pk, 4 + GMT_COL_COUNT);
	msgpack_pack_uint8(pk, GMT_REC_EVENTS);
	msgpack_pack_uint32(pk, r->n);
	msgpack_pack_uint64(pk, r->base_ts);
	msgpack_pack_uint32(pk, r->flags);
	for (int i = 0; i < GMT_COL_COUNT; i++) {
		msgpack_pack_bin(pk, r->col[i].n);
		msgpack_pack_bin_body(pk, r->col[i].p, r->col[i].n);
	}
}
