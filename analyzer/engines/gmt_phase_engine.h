/*
 * gmt_phase_engine.h - PRIVATE to analyzer/: phases (RANGE_BEGIN/RANGE_END pairs
 * chosen as phases) and, per occurrence of each phase name and per device,
 * what was allocated, reserved, outside the framework and used at its
 * start and end, and which peaks happened at the same instant.
 *
 * The engine takes the merged time line (gmt_timeline.h) one event at a
 * time and drives a gmt_levels_t for the quantities. Selection, pairing and
 * the figures are defined in docs/analyzer.md ("phases").
 */
#ifndef GMT_PHASE_ENGINE_H
#define GMT_PHASE_ENGINE_H

#include <stdio.h>

#include "engines/gmt_levels.h"

typedef struct gmt_phase_opts {
	const char *const *domains;  /* only these domains' ranges are phases:
					NVTX names (any depth), "gpumemtrace",
					"default", "*"; none: the default set
					(gmt_phase_engine.c, selected) */
	size_t n_domains;
	const char *const *patterns; /* fnmatch globs on the name; none: all */
	size_t n_patterns;
	int all_depths;              /* nested default-domain ranges too */
	unsigned max_listed;         /* occurrences kept apart per name */
	unsigned top_n;              /* outside allocations listed per device */
	unsigned max_ck_listed;      /* checkpoint disagreements listed per
					device (0: the default) */
	int open_only;               /* keep only what the open occurrences
					need: a closed one is freed, no name
					is folded (gmt_phases_names: none;
					occurrences are still numbered per
					name), for the commands that ask which
					occurrence is open (hooks,
					gmt_phases_current_occ), not for a
					list of phases */
	const char *fold_only;       /* with open_only: the name whose
					occurrences are still folded (the only
					one gmt_phases_names lists) */
	int pairing_only;            /* only which occurrences are open
					(gmt_phases_current_occ): ranges are
					paired, nothing else is applied (no
					levels: no figures, no checkpoints, no
					device values, no instants but the
					phase changes) */
} gmt_phase_opts_t;

#define GMT_PHASES_DEFAULT_LISTED 100
#define GMT_PHASES_DEFAULT_TOP 20
#define GMT_PHASES_DEFAULT_CK_LISTED 20

/* ---- the framework's own counters (docs/analyzer.md, "Checkpoints") ---- */

enum { GMT_CK_ALLOCATED = 0, GMT_CK_RESERVED = 1, GMT_CK_KINDS = 2 };

/* How a checkpoint compares with the rebuilt value. */
enum gmt_ck_state {
	GMT_CK_UNKNOWN = 0,      /* rebuilt value unknown (no framework
				    events yet on the device)            */
	GMT_CK_AGREE = 1,        /* equal to the byte                     */
	GMT_CK_DISAGREE = 2,
	GMT_CK_OTHERS = 3        /* not comparable: the rebuilt value holds
				    other frameworks' events too          */
};

/* One checkpoint (FW_ALLOCATED or FW_RESERVED) and the rebuilt value of
 * its device and quantity at that instant (requested view). */
typedef struct gmt_ck {
	int valid;
	uint64_t ts;
	uint32_t fw;             /* framework STRING id */
	uint64_t fw_current;     /* the framework's own counter, bytes */
	uint64_t fw_peak;        /* the framework's own peak since ITS last
				    reset (unknown to us): never ours    */
	uint64_t rebuilt;        /* ours, when state is AGREE or DISAGREE */
	unsigned src;            /* gmt_alloc_src / gmt_res_src of rebuilt */
	unsigned state;          /* enum gmt_ck_state */
	int64_t difference;      /* fw_current - rebuilt, when AGREE or
				    DISAGREE                             */
} gmt_ck_t;

/* The begin or end of a phase occurrence. */
typedef struct gmt_boundary {
	int valid;
	int is_end;
	uint64_t ts, k;
	uint32_t name_id;
} gmt_boundary_t;

typedef struct gmt_ck_diff {
	gmt_ck_t ck;
	unsigned kind;           /* GMT_CK_ALLOCATED or GMT_CK_RESERVED */
	gmt_boundary_t prev;     /* the latest boundary at or before it */
	gmt_boundary_t next;     /* the first after it                  */
	/* after finish */
	const gmt_boundary_t *nearest;   /* gmt_ck_nearest; NULL: none   */
	int64_t from_nearest_ns;         /* ck.ts - nearest->ts          */
} gmt_ck_diff_t;

/* The checkpoints of one device. */
typedef struct gmt_ck_dev {
	int ordinal;
	uint64_t count[GMT_CK_KINDS];
	uint64_t by_state[GMT_CK_KINDS][4];   /* index: enum gmt_ck_state */
	gmt_ck_diff_t *diffs;    /* the first max_ck_listed disagreements */
	size_t n_diffs, n_resolved;           /* n_resolved: next known */
	gmt_ck_t latest[GMT_CK_KINDS];
	gmt_ck_t cand[GMT_CK_KINDS];          /* pairs with the next boundary */
	/* after finish */
	uint64_t disagreements;  /* both quantities                       */
	uint64_t not_listed;     /* disagreements beyond diffs            */
} gmt_ck_dev_t;

/* The nearest of a disagreement's boundaries (a tie goes to the one after:
 * counters are recorded right before a boundary); NULL: none. */
const gmt_boundary_t *gmt_ck_nearest(const gmt_ck_diff_t *d);

/* An instant and the values of one device then. */
typedef struct gmt_moment {
	uint64_t ts;
	uint64_t occ;                /* warm aggregate: the occurrence */
	int valid;
	gmt_lv_vals_t v;
} gmt_moment_t;

/* One occurrence, one device, one view. */
typedef struct gmt_pfig {
	int has_start;               /* the device was known at the begin */
	gmt_lv_vals_t start, end, at_fail;
	gmt_moment_t max_alloc;      /* maximum allocated, values then */
	gmt_moment_t max_res;        /* maximum reserved */
	gmt_moment_t max_held;       /* maximum reserved + outside */
	gmt_moment_t max_gap;        /* maximum reserved - allocated */
	gmt_moment_t max_outside;    /* maximum outside (for the bound) */
	gmt_moment_t max_untraced;   /* maximum untraced estimate */
	/* after finish: bounds, sums and differences of maxima reached at
	 * different instants (no real moment) */
	int has_bound_sum;           /* max_res and max_outside valid */
	uint64_t bound_sum;          /* max reserved + max outside */
	int has_bound_diff;          /* max_res and max_alloc valid */
	int64_t bound_diff;          /* max reserved - max allocated */
} gmt_pfig_t;

typedef struct gmt_pdev {
	int ordinal;                 /* -1: slot unused */
	gmt_pfig_t fig[GMT_VIEWS];
	gmt_ck_t ck_start[GMT_CK_KINDS];  /* checkpoint paired with the begin */
	gmt_ck_t ck_end[GMT_CK_KINDS];    /* ... with the end (listed
					     occurrences only, not warm) */
} gmt_pdev_t;

typedef struct gmt_occ {
	uint32_t name_id, domain_id;
	unsigned source;
	uint32_t thread;
	uint64_t k;                  /* 1 = cold */
	uint64_t begin_ts, end_ts;   /* end_ts: the last event if unterminated */
	uint64_t duration_ns;        /* end_ts - begin_ts (after finish) */
	int ended;
	int failed;
	uint64_t fail_ts, fail_size;
	int fail_dev;
	unsigned fail_type;          /* GMT_EV_ALLOC_FAIL or GMT_EV_FW_OOM */
	gmt_pdev_t *dev;             /* index = ordinal */
	size_t n_dev;
} gmt_occ_t;

typedef struct gmt_phase_name {
	uint32_t name_id;
	uint64_t occurrences, failed, unterminated;
	uint64_t not_listed;         /* occurrences - n_listed (after finish) */
	gmt_occ_t **listed;          /* by occurrence number */
	size_t n_listed, cap_listed;
	uint64_t n_warm;
	gmt_occ_t *warm;             /* aggregate over occurrences >= 2;
					NULL while n_warm is 0 */
} gmt_phase_name_t;

typedef struct gmt_phase_anomalies {
	uint64_t unmatched_ends;     /* an end with no open range */
	uint64_t name_mismatches;    /* an end naming another range */
	uint64_t dropped_ranges;     /* beyond the engine's limits */
} gmt_phase_anomalies_t;

typedef struct gmt_phases gmt_phases_t;

/* instant: called after each event that changed device values (devs:
 * ordinals >= 0) or the innermost open phase (phase_changed). event (may be
 * NULL): called by gmt_phases_run for every event of the time line once the
 * engine has applied it (after the instants it made; side: from the side
 * stream), for a report that also marks events that change no value
 * (synchronisations). */
typedef struct gmt_phases_hook {
	void *ctx;
	int (*reset)(void *ctx);
	int (*instant)(void *ctx, gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n,
		       int phase_changed);
	int (*event)(void *ctx, const gmt_devent_t *e, int side);
} gmt_phases_hook_t;

gmt_phases_t *gmt_phases_new(const char *file, const gmt_phase_opts_t *o);
void gmt_phases_free(gmt_phases_t *ph);
void gmt_phases_set_hook(gmt_phases_t *ph, const gmt_phases_hook_t *hook);

/* Metadata visitor (header, device, string, drops, end) for synthetic
 * input; ctx = ph. */
void gmt_phases_visitor(gmt_phases_t *ph, gmt_visitor_t *v);

/* One event of the merged time line; side: from the side stream (its time
 * approximate: it never counts as its thread's next step, see
 * gmt_levels_event_from). Returns 0 or a negative errno. */
int gmt_phases_event_from(gmt_phases_t *ph, const gmt_devent_t *e, int side);

/* gmt_phases_event_from(ph, e, 0): a main-stream event. */
int gmt_phases_event(gmt_phases_t *ph, const gmt_devent_t *e);

/* Closes what is still open (unterminated) and finishes the lists. res
 * as for gmt_replay_finish (NULL: a clean synthetic run). */
int gmt_phases_finish(gmt_phases_t *ph, const gmt_decode_result_t *res);

/* Runs the trace at path through a new engine (two passes when it has a
 * side stream) and finishes it; *out gets the engine (NULL only when out
 * of memory). Returns the decoder's status. */
int gmt_phases_run(const char *path, const gmt_phase_opts_t *o, const gmt_phases_hook_t *hook,
		   gmt_phases_t **out, gmt_decode_result_t *res);

/* Accessors for renderers. */
gmt_levels_t *gmt_phases_levels(gmt_phases_t *ph);
const gmt_summary_t *gmt_phases_summary(const gmt_phases_t *ph);
const char *gmt_phases_string(const gmt_phases_t *ph, uint32_t id);  /* NULL: unknown */
const gmt_phase_name_t *gmt_phases_names(const gmt_phases_t *ph, size_t *n);
const gmt_phase_anomalies_t *gmt_phases_anomalies(const gmt_phases_t *ph);
/* With open_only: the number of distinct named phases seen; *first gets
 * the ids of the first ones (at most 8, in the order they first began). */
uint64_t gmt_phases_first_names(const gmt_phases_t *ph, const uint32_t **first, size_t *n_first);
/* Name id of the innermost open phase (the latest begun), 0 if none;
 * *open says whether one is open. */
uint32_t gmt_phases_current(const gmt_phases_t *ph, int *open);
/* The innermost open phase occurrence (the latest begun), or NULL: what a
 * failure at this instant failed in. */
const gmt_occ_t *gmt_phases_current_occ(const gmt_phases_t *ph);
/* Devices with values (ordinals >= 0, ascending), as gmt_levels_devices. */
size_t gmt_phases_devices(const gmt_phases_t *ph, int *out, size_t cap);

/* The checkpoints of a device; NULL when it had none. */
const gmt_ck_dev_t *gmt_phases_checkpoints(const gmt_phases_t *ph, int ordinal);


#endif /* GMT_PHASE_ENGINE_H */
