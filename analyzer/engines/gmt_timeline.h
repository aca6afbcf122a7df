/*
 * gmt_timeline.h - PRIVATE to analyzer/: one time line from a trace's two
 * streams (the main stream and the side stream, schemas/trace-format.md).
 *
 * The main stream is in time order; the side stream (SIDE EVENTS records:
 * a framework's history handed over after the fact) is in time order too,
 * but its events are older than the main events written around them. A
 * sink that needs one time line gets every event once, merged by ts (side
 * first on equal ts) except where the driver's events anchor the side
 * stream (below), with memory bounded by one decoded frame and a bounded
 * look-ahead: the side stream is spilled to an anonymous temporary file.
 *
 * How: pass 1 decodes the file, hands main events to the sink and spills
 * side events. If the trace has no side record, that was all. At the first
 * side record the sink's view is wrong (older events will come), so pass 1
 * only spills from there on; pass 2 resets the sink, decodes again and
 * merges the main stream with a sequential read of the spill.
 *
 * Anchors (pass 2). A framework's history is stamped with its own clock,
 * converted (PyTorch: TSC to wall-clock microseconds, then the companion's
 * offset to CLOCK_MONOTONIC), so an entry may be stamped a little before or
 * after the driver event it surrounds, and a merge by ts alone would put
 * it on the wrong side. Where the driver event is known, the order is the
 * allocator's own, whatever the stamps say (at most ANCHOR_NS, 1 ms, off;
 * a side event is moved to the ts of the main event it is anchored to, and
 * the side stream keeps its order, the events after a held one waiting with
 * it):
 *   - FW_SEGMENT_ALLOC right after the ALLOC of its address (a caching
 *     allocator records it when cudaMalloc returned), with the history
 *     before it when that is stamped later;
 *   - FW_SEGMENT_FREE right before the FREE of its address (recorded just
 *     before cudaFree), with the history before it;
 *   - a failed device allocation: the history before the framework's
 *     answer to it (a release, a segment whose driver event is still ahead,
 *     an OOM on that device) goes before it: the allocator does nothing
 *     else between its attempt and its answer (it holds its lock);
 *   - FW_OOM after the last of the failed attempts on its device that no
 *     allocation on the device ended.
 * For that, pass 2 holds back the main events of the next ANCHOR_NS (at
 * most MAIN_AHEAD_MAX, 65536 of them: 3.5 MiB) and reads up to 4096 side
 * events ahead. Other side events keep their stamps (never before the last
 * delivered ts). Pass 1, and a trace without a side record, are as above.
 */
#ifndef GMT_TIMELINE_H
#define GMT_TIMELINE_H

#include "gmt_decode.h"

typedef struct gmt_timeline_sink {
	void *ctx;
	/* Before each pass (pass = 1, 2): forget everything received. */
	int (*reset)(void *ctx, int pass);
	/* Metadata records (header, device, string, drops, end, ...): the
	 * visitor's ctx is used; its events callback is ignored. */
	gmt_visitor_t meta;
	/* One event, in merged time order. side: it came from the side stream. */
	int (*event)(void *ctx, const gmt_devent_t *e, int side);
	/* Optional: n main-stream events in a row (what event would get one
	 * at a time, side 0), as the decoder gives them while no merge is
	 * needed (pass 1 before any side record). */
	int (*events)(void *ctx, const gmt_devent_t *ev, size_t n);
} gmt_timeline_sink_t;

typedef struct gmt_timeline_stats {
	uint64_t main_events, side_events;
	int passes;
} gmt_timeline_stats_t;

/* Decodes path into sink. Returns res->status (GMT_DECODE_STOPPED when the
 * sink returned nonzero or the temporary file failed; res->message says
 * which). st may be NULL. */
int gmt_timeline_run(const char *path, const gmt_timeline_sink_t *sink,
		     gmt_decode_result_t *res, gmt_timeline_stats_t *st);

#endif /* GMT_TIMELINE_H */
