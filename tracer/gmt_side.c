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

#include "gmt_evrec.h"
#include "gmt_internal.h"

#define SIDE_MAX_PER_RECORD 4096u

static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t side_newest;    /* under side_lock */

/* Encodes ev[0..n) (n <= SIDE_MAX_PER_RECORD, sorted, ts already clamped)
 * into one SIDE EVENTS record. Returns NULL when out of memory. */
static gmt_mrec_t *encode(const gmt_event_t *ev, size_t n, uint32_t thread)
{
	gmt_evrec_t rec = { .flags = GMT_EVENTS_SIDE };
	gmt_mrec_t *r = NULL;

	if (gmt_evrec_alloc(&rec, n) == 0) {
		for (size_t i = 0; i < n; i++)
			gmt_evrec_add(&rec, &ev[i], thread);
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		gmt_evrec_pack(&rec, &pk);
		if (sb.data)
			r = gmt_mrec_new(sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
	}
	gmt_evrec_free(&rec);
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
		gmt_mrec_t *r = encode(copy + off, k, (uint32_t)idx);
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
