/*
 * gmt_curves.h - PRIVATE to analyzer/: the `curves` command's time series
 * (docs/analyzer.md, "curves"): per device, one row per instant a value
 * changes, from the phase engine's time line.
 */
#ifndef GMT_CURVES_H
#define GMT_CURVES_H

#include <stdio.h>

#include "engines/gmt_phase_engine.h"

typedef struct gmt_curves gmt_curves_t;

/* view: the view of allocated, outside and held; max_rows: per device,
 * 0 = all rows. */
gmt_curves_t *gmt_curves_new(enum gmt_view view, uint64_t max_rows);
void gmt_curves_free(gmt_curves_t *c);

/* The hook to give the phase engine (gmt_phases_run). */
void gmt_curves_hook(gmt_curves_t *c, gmt_phases_hook_t *hook);

/* Ends the series (call after the run). Returns 0 or a negative errno. */
int gmt_curves_finish(gmt_curves_t *c);

/* Rows kept (after --max-rows) and all rows. */
uint64_t gmt_curves_rows(const gmt_curves_t *c, uint64_t *all);

/* One row: a device's values after the last event of an instant. */
typedef struct gmt_curve_row {
	uint64_t ts, allocated, reserved, outside, used, held, live;
	int32_t dev;
	uint32_t phase;          /* the innermost open phase's name id        */
	uint8_t has_alloc, has_res, has_used, has_phase;
	uint8_t pad[4];
} gmt_curve_row_t;

/* Rows handed to a sink as they are made instead of kept for
 * gmt_curves_each_row: the CSV of every row is made from them with no
 * temporary rows while the sink holds them. Only without max_rows (its
 * buckets need each device's count of rows first); call before the run.
 * reset: the time line starts again (a second pass, gmt_timeline.h),
 * every row given so far is void. row: the next row, in time order; ph is
 * the engine that made it (for its phase's name); 0 taken, 1 the sink is
 * full: that row and every later one go to the rows' temporary file, for
 * gmt_curves_each_row after the sink's; negative stops the run. */
typedef struct gmt_curves_sink {
	void *ctx;
	int (*reset)(void *ctx);
	int (*row)(void *ctx, gmt_phases_t *ph, const gmt_curve_row_t *r);
} gmt_curves_sink_t;
void gmt_curves_set_sink(gmt_curves_t *c, const gmt_curves_sink_t *sink);

/* Calls out(ctx, row) for every kept row, in time order (after finish).
 * Returns 0, the first nonzero out, or -ENOMEM. */
int gmt_curves_each_row(gmt_curves_t *c, int (*out)(void *ctx, const gmt_curve_row_t *r), void *ctx);

/* The view asked for; the rows a device wrote (before --max-rows). */
enum gmt_view gmt_curves_view(const gmt_curves_t *c);
uint64_t gmt_curves_dev_rows(gmt_curves_t *c, int ordinal);

#endif /* GMT_CURVES_H */
