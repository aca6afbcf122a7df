/*
 * gmt_timeline.h - PRIVATE to analyzer/: one time line from a trace's two
 * streams (the main stream and the side stream, schemas/trace-format.md).
 *
 * The main stream is in time order; the side stream (SIDE EVENTS records:
 * a framework's history handed over after the fact) is in time order too,
 * but its events are older than the main events written around them. A
 * sink that needs one time line gets every event once, merged by ts (side
 * first on equal ts), with memory bounded by one decoded frame: the side
 * stream is spilled to an anonymous temporary file.
 *
 * How: pass 1 decodes the file, hands main events to the sink and spills
 * side events. If the trace has no side record, that was all. At the first
 * side record the sink's view is wrong (older events will come), so pass 1
 * only spills from there on; pass 2 resets the sink, decodes again and
 * merges the main stream with a sequential read of the spill.
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
