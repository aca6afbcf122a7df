/*
 * gmt_fwpeaks.h - PRIVATE to analyzer/: a framework's own blocks at their
 * peaks, by stack: the engine of `sites --framework` and `flamegraph
 * --framework`, for the whole run and for chosen windows of time (the
 * occurrences of a phase).
 *
 * The framework's blocks are live from FW_ALLOC to FW_FREE_REQUESTED (the
 * "requested" view of docs/analyzer.md), on the merged time line
 * (gmt_timeline.h: the framework's history arrives in the side stream).
 * Per device, the bytes live are summed by stack as they change. A peak is
 * the first instant of a device's maximum; its sums by stack are copied
 * lazily, just before the device's next change (the state at a peak lasts
 * until then), so a run that climbs for long copies only when it turns. A
 * window keeps peaks of its own: the state after an instant lasts until the
 * next one, so it counts for every window that meets that interval (at the
 * later of the instant and the window's begin). Nothing is printed.
 */
#ifndef GMT_FWPEAKS_H
#define GMT_FWPEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gmt_liveset.h"

/* One device's framework blocks at their peak. */
typedef struct gmt_fw_peak {
	int ordinal;
	uint64_t peak, peak_ts;     /* the peak's bytes and first instant     */
	gmt_live_group_t *groups;   /* the blocks then, by stack (owner 0);
				       in no order; owned                     */
	size_t n_groups;
	/* the engine's own */
	uint64_t live;
	int pending;
} gmt_fw_peak_t;

/* A window [begin_ts, end_ts] and its devices' peaks within it. */
typedef struct gmt_fw_window {
	uint64_t begin_ts, end_ts;  /* in */
	gmt_fw_peak_t *peaks;       /* out: devices whose framework held bytes
				       in the window, by ordinal; owned       */
	size_t n_peaks;
} gmt_fw_window_t;

/* Runs the trace at path: *peaks gets the whole run's peaks (devices whose
 * framework ever held a byte, by ordinal), and each window its own;
 * windows sorted by begin_ts. Returns 0 or -ENOMEM; res gets the outcome
 * of the (last) decoding pass. */
int gmt_fwpeaks_run(const char *path, gmt_fw_peak_t **peaks, size_t *n_peaks,
		    gmt_fw_window_t *windows, size_t n_windows, gmt_decode_result_t *res);

/* Frees an array of peaks (and their groups). */
void gmt_fw_peaks_free(gmt_fw_peak_t *peaks, size_t n);

#endif /* GMT_FWPEAKS_H */
