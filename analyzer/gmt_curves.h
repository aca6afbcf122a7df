/*
 * gmt_curves.h - PRIVATE to analyzer/: the `curves` command's time series
 * (docs/analyzer.md, "curves"): per device, one row per instant a value
 * changes, from the phase engine's time line.
 */
#ifndef GMT_CURVES_H
#define GMT_CURVES_H

#include <stdio.h>

#include "gmt_phases.h"

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

/* CSV: the header line once, then each trace's rows (trace = its index). */
void gmt_curves_csv_header(FILE *f);
int gmt_curves_csv(FILE *f, gmt_curves_t *c, gmt_phases_t *ph, unsigned trace);

/* JSON: one trace object, inside the document of gmt_report_json_head. */
int gmt_curves_json(gmt_json_t *j, gmt_curves_t *c, gmt_phases_t *ph);

#endif /* GMT_CURVES_H */
