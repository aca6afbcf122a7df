/*
 * gmt_levels.h - PRIVATE to analyzer/: what each device holds at each
 * instant, in the terms of a framework (allocated, reserved) and of the
 * driver (outside the framework, device used), for `phases` and `curves`.
 *
 * The engine is fed one event at a time in time order (the merged time line
 * of gmt_timeline.c). It drives a replay (gmt_replay.c) for the driver-level
 * bytes and observes it to know, for every live driver allocation, whether
 * it lies inside a framework segment. The definitions of every quantity and
 * its source are in docs/analyzer.md ("Quantities").
 */
#ifndef GMT_LEVELS_H
#define GMT_LEVELS_H

#include <stdint.h>

#include "engines/gmt_replay.h"

/* Two views of stream-ordered frees (docs/analyzer.md, "Views"). */
enum gmt_view {
	GMT_VIEW_REQUESTED = 0,  /* bytes leave at the free request        */
	GMT_VIEW_HELD = 1,       /* ... when the stream is known past it   */
	GMT_VIEWS = 2
};

/* Where "allocated" comes from on a device. */
enum gmt_alloc_src {
	GMT_ASRC_NONE = 0,       /* unknown                                */
	GMT_ASRC_FRAMEWORK = 1,  /* FW_ALLOC / FW_FREE_* events            */
	GMT_ASRC_STREAM = 2      /* driver stream-ordered allocations      */
};

/* Where "reserved" comes from on a device. */
enum gmt_res_src {
	GMT_RSRC_NONE = 0,
	GMT_RSRC_SEGMENTS = 1,   /* FW_SEGMENT_* events                    */
	GMT_RSRC_POOL = 2        /* POOL_RESERVED samples                  */
};

/* One device, one view, one instant. */
typedef struct gmt_lv_vals {
	uint64_t allocated;      /* valid when has_allocated               */
	uint64_t reserved;       /* valid when has_reserved                */
	uint64_t outside;        /* driver bytes outside the framework     */
	uint64_t pending;        /* new driver bytes not yet attributed (in
				    neither outside nor reserved; see
				    gmt_levels_event_from)                  */
	uint64_t outside_owner[GMT_DOWNERS];
	uint64_t used;           /* device used (MEMINFO), when has_used   */
	uint64_t used_ts;        /* ... the time of that (latest) sample    */
	uint64_t held;           /* taken from the device: reserved (else
				    allocated, else 0) + outside           */
	uint64_t live;           /* held by live allocations: the replay's
				    live device bytes (as summary's); held
				    view: + stream-ordered frees waiting   */
	int64_t gap;             /* reserved - allocated (signed)          */
	int64_t untraced;        /* used - held AT THAT SAMPLE: an estimate,
				    when has_used                           */
	uint8_t has_allocated, has_reserved, has_used;
	uint8_t asrc, rsrc;      /* enum gmt_alloc_src, gmt_res_src        */
} gmt_lv_vals_t;

/* A driver allocation that never lay inside a framework segment. */
typedef struct gmt_outlier {
	uint64_t addr, size, ts, freed_ts;   /* freed_ts 0: live at the end */
	uint32_t stack;
	int dev;
	uint8_t kind, owner, is_handle;
} gmt_outlier_t;

typedef struct gmt_lv_dev_info {
	int ordinal;
	uint64_t outliers[GMT_DOWNERS];      /* count by owner            */
	uint64_t outliers_total;             /* their sum                 */
	const gmt_outlier_t *top;            /* largest first             */
	size_t n_top;
	uint64_t fw_lost, fw_lost_first_ts;  /* FW_LOST: events lost      */
	uint64_t fw_anomalies;               /* framework events that did not
						match its state             */
} gmt_lv_dev_info_t;

typedef struct gmt_levels gmt_levels_t;

/* What the phase engine reads after every event, inline: the first member
 * of gmt_levels_t (read it only through the functions below). */
typedef struct gmt_levels_hot {
	size_t n_nw;             /* pending new allocations (gmt_levels_event_from) */
	size_t n_dirty;          /* devices in dirty[]                       */
	int *dirty;              /* ordinals of the devices changed          */
	uint64_t gen;            /* a device is in dirty[] when its mark is gen */
} gmt_levels_hot_t;

/* A new engine for the trace named file; top_n: outside allocations listed
 * per device. NULL when out of memory. */
gmt_levels_t *gmt_levels_new(const char *file, unsigned top_n);
void gmt_levels_free(gmt_levels_t *lv);

/* The replay inside (its visitor takes the trace's metadata records; its
 * summary gives devices, header and status). */
gmt_replay_t *gmt_levels_replay(gmt_levels_t *lv);

/* How long a new driver allocation may wait for its framework segment. */
#define GMT_LV_GRACE_NS 1000000ull

/* Applies one event (time order); side: it came from the side stream.
 * Returns 0 or a negative errno.
 *
 * A new driver-level device allocation (an ALLOC'd block, a VMM handle at
 * its create, re-armed by its mapping) on a device that has had a framework
 * event is PENDING: counted neither as outside nor as reserved, until the
 * first of (a) a framework segment contains it (the framework's, never
 * outside); (b) the same thread records another main-stream event, other
 * than the steps that build a VMM allocation (VMM_CREATE, VMM_MAP); (c)
 * GMT_LV_GRACE_NS have passed, checked at every later event (main or side)
 * and by gmt_levels_expire; (d) gmt_levels_end_pending. In (b)-(d) it becomes
 * outside then. The event's own claims come first: a FW_SEGMENT_ALLOC/MAP of
 * the same thread resolves after it has claimed what it contains. */
int gmt_levels_event_from(gmt_levels_t *lv, const gmt_devent_t *e, int side);

/* gmt_levels_event_from(lv, e, 0). */
int gmt_levels_event(gmt_levels_t *lv, const gmt_devent_t *e);

/* Whether an allocation is pending; *ts gets the earliest moment at which
 * rule (c) resolves one (its time + GMT_LV_GRACE_NS). */
int gmt_levels_next_deadline(const gmt_levels_t *lv, uint64_t *ts);

/* Whether an allocation is pending (gmt_levels_next_deadline's answer,
 * without the deadline). */
static inline int gmt_levels_waiting(const gmt_levels_t *lv)
{
	return ((const gmt_levels_hot_t *)(const void *)lv)->n_nw != 0;
}

/* Rule (c) at time now: pending allocations whose grace has run out by now
 * become outside (their devices are marked dirty). 0 or a negative errno. */
int gmt_levels_expire(gmt_levels_t *lv, uint64_t now);

/* Rule (d), the end of the trace: every pending allocation becomes
 * outside. 0 or a negative errno. */
int gmt_levels_end_pending(gmt_levels_t *lv);

/* Device ordinals whose values may have changed since the last call, in
 * the order first touched; the list is then cleared. *n gets the count;
 * the array is owned by lv and valid until the next event. */
static inline const int *gmt_levels_take_dirty(gmt_levels_t *lv, size_t *n)
{
	gmt_levels_hot_t *h = (gmt_levels_hot_t *)(void *)lv;
	*n = h->n_dirty;
	if (h->n_dirty) {
		h->n_dirty = 0;
		h->gen++;            /* every device's mark is old now */
	}
	return h->dirty;
}

/* Devices seen so far (ordinals >= 0, ascending) into out (cap entries);
 * returns how many there are. */
size_t gmt_levels_devices(const gmt_levels_t *lv, int *out, size_t cap);

/* The values of a device now, in a view. */
void gmt_levels_values(const gmt_levels_t *lv, int ordinal, enum gmt_view view, gmt_lv_vals_t *out);
/* Both views at once (v[GMT_VIEW_REQUESTED], v[GMT_VIEW_HELD]): what the
 * phase figures take at every instant. */
void gmt_levels_values_all(const gmt_levels_t *lv, int ordinal, gmt_lv_vals_t v[GMT_VIEWS]);

/* What a curves row takes of gmt_levels_values (the same numbers, each 0
 * where its has_ flag is 0), for one view, at less cost: it is asked at
 * nearly every event. */
typedef struct gmt_lv_curve {
	uint64_t allocated, reserved, outside, used, held, live;
	uint8_t has_allocated, has_reserved, has_used;
} gmt_lv_curve_t;
void gmt_levels_curve(const gmt_levels_t *lv, int ordinal, enum gmt_view view, gmt_lv_curve_t *out);

/* What the phase figures' maxima compare (gmt_phase_engine.c), in both
 * views at once: the same numbers as gmt_levels_values_all's (each 0 where
 * its has_ flag is 0), at less cost. It is asked at every instant a phase
 * is open; the full values only when a maximum moves. */
typedef struct gmt_lv_keys {
	uint64_t allocated, reserved, outside, held;
	int64_t gap, untraced;
	uint8_t has_allocated, has_reserved, has_used;
} gmt_lv_keys_t;
void gmt_levels_keys(const gmt_levels_t *lv, int ordinal, gmt_lv_keys_t k[GMT_VIEWS]);

/* Calls fn for every driver allocation that never lay inside a framework
 * segment (what counts as outside), whatever top_n: when it is freed
 * (freed_ts set) and, for those still live, in gmt_levels_finish (freed_ts
 * 0). For an export that lists them all (model/gmt_memviz_model.c). */
void gmt_levels_set_outside_fn(gmt_levels_t *lv, void (*fn)(void *ctx, const gmt_outlier_t *o), void *ctx);

/* Finishes the outside-allocation lists (allocations still live count
 * too); call once, after the last event. */
int gmt_levels_finish(gmt_levels_t *lv);

/* The outside-allocation list and framework notes of a device (after
 * gmt_levels_finish). Returns 0, or -1 for a device never seen. */
int gmt_levels_dev_info(const gmt_levels_t *lv, int ordinal, gmt_lv_dev_info_t *out);

/* Whether the framework events that made a device's allocated and reserved
 * (FW_ALLOC through FW_SEGMENT_UNMAP) include events of a framework other
 * than fw (a STRING id): then a counter of fw alone cannot be compared with
 * them. 0 for a device without such events. */
int gmt_levels_fw_others(const gmt_levels_t *lv, int ordinal, uint32_t fw);

/* Printable sources. */
const char *gmt_asrc_name(unsigned src);
const char *gmt_rsrc_name(unsigned src);
const char *gmt_view_name(unsigned view);

#endif /* GMT_LEVELS_H */
