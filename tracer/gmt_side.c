/*
 * gmt_side.c - the side stream: events that arrive with times in the past.
 *
 * A framework's history (PyTorch's allocator trace, moved at a phase
 * boundary) holds events hundreds of milliseconds old: the main stream has
 * already been written past them, and its time order (the writer's
 * watermark, schemas/trace-format.md) must not break. They are encoded here,
 * in the caller's thread, into EVENTS records flagged SIDE and queued as
 * pre-encoded records, which the writer copies into the next frame in queue
 * order. Each call's events are sorted and never older than the previous
 * call's newest, so the side stream is itself in time order and a reader
 * merges two sorted streams.
 */
#include <errno.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_internal.h"

#define SIDE_MAX_PER_RECORD 4096u

static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t side_newest;    /* under side_lock */

typedef struct col {
	uint8_t *p;
	size_t n;
} col_t;

static void col_uv(col_t *c, uint64_t v)
{
	c->n += gmt_uvarint_put(c->p + c->n, v);
}

/* Encodes ev[0..n) (n <= SIDE_MAX_PER_RECORD, sorted) into one SIDE EVENTS
 * record; ts values already clamped. Returns NULL when out of memory. */
static gmt_mrec_t *encode(const gmt_event_t *ev, size_t n, uint32_t thread, unsigned flags)
{
	col_t col[GMT_COL_COUNT];
	uint8_t *mem = malloc((size_t)GMT_COL_COUNT * n * 10);
	gmt_mrec_t *r = NULL;
	uint64_t prev_ts = ev[0].ts, prev_addr = 0, prev_stream = 0;

	if (!mem)
		return NULL;
	for (int i = 0; i < GMT_COL_COUNT; i++) {
		col[i].p = mem + (size_t)i * n * 10;
		col[i].n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		const gmt_event_t *e = &ev[i];
		col[GMT_COL_TYPE].p[col[GMT_COL_TYPE].n++] = (uint8_t)e->type;
		col_uv(&col[GMT_COL_TS], e->ts - prev_ts);
		prev_ts = e->ts;
		col_uv(&col[GMT_COL_THREAD], thread);
		col_uv(&col[GMT_COL_DEVICE], e->device < 0 ? 0 : (uint64_t)e->device + 1);
		col_uv(&col[GMT_COL_ADDR], gmt_zigzag((int64_t)(e->addr - prev_addr)));
		prev_addr = e->addr;
		col_uv(&col[GMT_COL_SIZE], e->size);
		col_uv(&col[GMT_COL_STREAM], gmt_zigzag((int64_t)(e->stream - prev_stream)));
		prev_stream = e->stream;
		col_uv(&col[GMT_COL_STACK], e->stack);
		col_uv(&col[GMT_COL_AUX], e->aux);
	}

	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4 + GMT_COL_COUNT);
	msgpack_pack_uint8(&pk, GMT_REC_EVENTS);
	msgpack_pack_uint32(&pk, (uint32_t)n);
	msgpack_pack_uint64(&pk, ev[0].ts);
	msgpack_pack_uint32(&pk, flags);
	for (int i = 0; i < GMT_COL_COUNT; i++) {
		msgpack_pack_bin(&pk, col[i].n);
		msgpack_pack_bin_body(&pk, col[i].p, col[i].n);
	}
	if (sb.data)
		r = gmt_mrec_new(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	free(mem);
	return r;
}

void gmt_emit_side(const gmt_event_t *ev, size_t n)
{
	if (!ev || !n)
		return;
	int64_t idx = gmt_thread_index();
	if (idx < 0)
		return;  /* tracing is off: nothing to write into */

	gmt_event_t *copy = malloc(n * sizeof(*copy));
	if (!copy) {
		atomic_fetch_add(&gmt_g.dropped, n);
		return;
	}
	memcpy(copy, ev, n * sizeof(*copy));

	/* The lock orders whole calls: the side stream stays sorted even when
	 * two threads hand over histories at once. */
	pthread_mutex_lock(&side_lock);
	uint64_t late = 0;
	for (size_t i = 0; i < n; i++) {
		if (copy[i].ts == 0)
			copy[i].ts = gmt_now_ns();
		if (copy[i].ts < side_newest) {
			copy[i].ts = side_newest;   /* out of order: clamped, counted */
			late++;
		}
		side_newest = copy[i].ts;
	}
	for (size_t off = 0; off < n; off += SIDE_MAX_PER_RECORD) {
		size_t k = n - off < SIDE_MAX_PER_RECORD ? n - off : SIDE_MAX_PER_RECORD;
		gmt_mrec_t *r = encode(copy + off, k, (uint32_t)idx, GMT_EVENTS_SIDE);
		if (!r) {
			atomic_fetch_add(&gmt_g.dropped, k);
			continue;
		}
		gmt_meta_push(r, 0);
		atomic_fetch_add(&gmt_g.written, k);
	}
	pthread_mutex_unlock(&side_lock);
	if (late)
		atomic_fetch_add(&gmt_g.late, late);
	free(copy);
	gmt_writer_wake();
}
