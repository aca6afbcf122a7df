/*
 * gmt_report_model.h - PRIVATE to analyzer/: the report of `report` (the
 * HTML page) and `export` (Chrome trace JSON) as plain data: per PHYSICAL
 * device, every process of the traces given that used it, their values at
 * every instant merged on one time axis, the coinciding peak of what they
 * held with its composition, their phase occurrences and failed
 * allocations; per trace, what it could not see and its environment. Every
 * number the page and the exports show is here (gmt_report_model.c);
 * renderers (render/gmt_report_*.c) only format it. The definitions are in
 * docs/analyzer.md ("report").
 *
 * Built from the engines: one run of the phase engine per trace (its
 * replay gives the summary, its levels the values), whose values at each
 * instant go, per process and device, into a compact stream of a temporary
 * file (support/gmt_spool.h: ~10 bytes per instant before zstd, ~6 after);
 * at the end the traces' devices are grouped by host and device UUID
 * (answers/gmt_group.h), each group's coinciding peak is found by
 * gmt_group_merge over its processes' held, and one merged pass gives the
 * composition at that peak, the number of instants and the series that
 * ever hold a byte. The merged instants can be read again
 * (gmt_report_each_instant, _all) by a renderer that draws or exports them.
 *
 * Bounded: the temporary file has a budget (opts.temp_max, default
 * GMT_REPORT_TEMP_MAX). Once the file is past it, every stream that still
 * grows is given up (its rows are counted, no longer kept). A device with
 * a member given up is read by running that member's trace again (the one
 * with the most rows, its "live" member: its rows go straight into the
 * merge with the others' streams), at the end for its peak and for each
 * reading; its other members given up are spooled again by one more run,
 * without a budget (only processes that share a device AND each exceed
 * the budget grow the file beyond it). Results are the same to the byte
 * either way (tests/cases/report_temp_max.sh). Memory: the engines' (what
 * is live) plus one chunk per process stream being read or written; never
 * the trace's length.
 */
#ifndef GMT_REPORT_MODEL_H
#define GMT_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gmt_phase_engine.h"

/* Ordinals of one trace that the model keeps apart (more are left out and
 * counted in gmt_rm_trace_t.devices_left_out). */
#define GMT_RM_MAX_ORDINALS 64

/* A device's chart: the stacked series, bottom first, then the line. The
 * stacked ones add up to the stack's top. */
enum gmt_rm_series {
	GMT_RM_ALLOCATED = 0,    /* the framework's allocated (requested view),
				    at most its reserved                     */
	GMT_RM_CACHE = 1,        /* reserved, not allocated                   */
	GMT_RM_OUTSIDE = 2,      /* + owner (GMT_DOWNERS): outside the
				    framework, by owner                      */
	GMT_RM_REST = GMT_RM_OUTSIDE + GMT_DOWNERS,
				 /* rest of device used: the untraced
				    estimate where positive                  */
	GMT_RM_USED,             /* device used (a line, not stacked)          */
	GMT_RM_SERIES
};
#define GMT_RM_STACKED GMT_RM_USED  /* series [0, GMT_RM_STACKED) are stacked */

/* A device's values at one instant, summed over its processes (each
 * process's values after the last event of that nanosecond). */
typedef struct gmt_rm_instant {
	uint64_t ts;                  /* CLOCK_MONOTONIC ns                     */
	uint64_t v[GMT_RM_SERIES];
	uint8_t known[GMT_RM_SERIES]; /* unknown: no process knew it yet        */
	uint64_t held;                /* what the processes held: the sum of
					 v[ALLOCATED .. REST), each process's
					 reserved (else allocated) + outside    */
	uint64_t top;                 /* the stack's top: held + v[REST]        */
	uint64_t allocated, reserved; /* sums over the processes that know them */
	uint8_t has_allocated, has_reserved;
	int64_t untraced;             /* device used - held at the latest
					 sample (when known[GMT_RM_USED])      */
	uint64_t syncs;               /* synchronisations at this nanosecond    */
} gmt_rm_instant_t;

/* One traced process. */
typedef struct gmt_rm_trace {
	const char *file;
	gmt_decode_result_t res;      /* how the trace was read                 */
	const char *status_key;       /* clean, cut, damaged, refused,
					 unreadable, stopped                    */
	const gmt_summary_t *s;       /* its summary (devices, header, drops,
					 failures: docs/analyzer.md "summary")  */
	uint64_t entry_points_untraced;    /* PROC_UNIDENTIFIED, NOT traced (aux 0) */
	uint64_t entry_points_identified;  /* PROC_UNIDENTIFIED traced through their
					      prototype                        */
	uint64_t syncs;               /* SYNC events naming a device            */
	uint64_t devices_left_out;    /* ordinals >= GMT_RM_MAX_ORDINALS        */
	uint64_t instants;            /* rows recorded over its devices         */
	int from_file;                /* added by gmt_report_model_add         */
	size_t same_as;               /* the same process as trace same_as - 1
					 (its header: host, pid, ppid, clocks;
					 the same file given twice, or a copy):
					 counted once, on no device; 0: none    */
	struct gmt_sites_model *sites;  /* opts.sites: its `sites` model, with
					   the live set of each of its devices
					   at the device's coinciding peak
					   (members' site_at); NULL otherwise
					   (and for synthetic input)           */
} gmt_rm_trace_t;

/* One process on one physical device. */
typedef struct gmt_rm_member {
	size_t trace;                 /* index in the model's traces            */
	int ordinal;                  /* the device's ordinal in that process   */
	const gmt_dev_summary_t *dev; /* that process's summary of it           */
	uint64_t rows;                /* instants it recorded                   */
	uint64_t first_ts, last_ts;   /* of those (rows > 0)                    */
	uint64_t own_peak, own_peak_ts;   /* its highest held, the first instant */
	uint64_t at_peak;             /* its held at the device's coinciding peak */
	uint64_t at_peak_seq;         /* its state then: after its main-stream
					 event number at_peak_seq (0: before
					 any; gmt_liveset.h's numbering)       */
	size_t site_at;               /* its live set then: the trace's
					 sites->ats[site_at] (SIZE_MAX: none)  */
	uint64_t fw_lost;             /* framework events lost (FW_LOST)        */
	uint64_t syncs;
	size_t stream;                /* private: its values' stream (SIZE_MAX:
					 none: given up, read by a run)        */
	int abandoned;                /* private: its stream was given up      */
} gmt_rm_member_t;

/* A listed phase occurrence of one process on the device (the `phases`
 * figures, requested view). */
typedef struct gmt_rm_phase {
	size_t member;                /* index in the device's members          */
	const char *name;             /* NULL: a name the trace never gave      */
	size_t name_index;            /* the name's index in `phases`' list     */
	uint64_t k;                   /* occurrence number (1: cold)            */
	uint32_t thread;
	uint64_t begin_ts, end_ts;    /* end_ts: the last event if not ended    */
	int ended, failed;
	int has_allocated, has_reserved;
	uint64_t max_allocated, max_reserved, max_held, max_outside;
	uint64_t max_held_ts;
} gmt_rm_phase_t;

/* A failed allocation of one process on the device. */
typedef struct gmt_rm_fail {
	size_t member;
	size_t index;                 /* in the process's summary's failures    */
	const gmt_fail_summary_t *f;  /* the summary's record of it             */
	const char *result_name;      /* NULL: a code not in the table          */
} gmt_rm_fail_t;

/* One physical device. */
typedef struct gmt_rm_device {
	char id[16];                  /* "d0", "d1", ... in order of appearance */
	const char *name;             /* the DEVICE record's, "" when none      */
	const char *host;
	uint8_t uuid[16];
	int uuid_known;               /* not all zeros: else grouped by host,
					 ordinal and name                       */
	int ordinal;                  /* the first member's                     */
	uint64_t total_bytes;         /* the DEVICE record's; 0: unknown        */
	gmt_rm_member_t *members; size_t n_members;  /* in trace order          */
	uint64_t t0, t_end;           /* the time axis (CLOCK_MONOTONIC ns): the
					 members' first and last event or row   */
	int has_wall;                 /* wall_t0_ns: CLOCK_REALTIME at t0 (the
					 first member's header)                 */
	uint64_t wall_t0_ns;
	uint64_t instants;            /* merged instants                        */
	uint64_t last_instant_ts;     /* the last one's time (0: none)          */
	uint64_t syncs;
	uint8_t series_used[GMT_RM_SERIES];  /* ever above 0 (the line: ever
						known)                          */
	uint8_t asrc_seen, rsrc_seen; /* the sources of allocated and reserved
					 its members' values had: 1 <<
					 gmt_alloc_src, 1 << gmt_res_src       */
	int has_peak;                 /* some instant held a byte               */
	gmt_rm_instant_t peak;        /* the coinciding peak: the first instant
					 the held of all members together was
					 highest, with its composition         */
	uint64_t own_peak_sum;        /* the sum of the members' own peaks: a
					 BOUND, at no instant unless they
					 coincide                               */
	gmt_rm_phase_t *phases; size_t n_phases;
	gmt_rm_fail_t *fails; size_t n_fails;
	size_t live;                  /* private: the member read by running its
					 trace again (SIZE_MAX: all from the
					 temporary file)                        */
} gmt_rm_device_t;

typedef struct gmt_report_opts {
	/* the phase selection */
	const char *const *domains; size_t n_domains;
	const char *const *patterns; size_t n_patterns;
	int all_depths;
	unsigned max_listed;          /* occurrences listed per name (0: the
					 default of `phases`)                   */
	/* sites: each trace's `sites` model too (model/gmt_sites_model.h:
	   the call sites at each device's driver-level peak), sites_top
	   listed per device, symbolised as symbols and debug_dirs say */
	int sites;
	unsigned sites_top;
	int symbols;
	const char *const *debug_dirs; size_t n_debug_dirs;
	/* the temporary file's budget in bytes (temp_max_set; else
	   GMT_REPORT_TEMP_MAX): beyond it, the streams still growing are given
	   up and their traces read again when needed (0: every stream) */
	int temp_max_set;
	uint64_t temp_max;
} gmt_report_opts_t;

#define GMT_REPORT_TEMP_MAX (256ull << 20)

typedef struct gmt_report_priv gmt_report_priv_t;

typedef struct gmt_report_model {
	gmt_rm_trace_t *traces; size_t n_traces;
	gmt_rm_device_t *devices; size_t n_devices;  /* after finish           */
	uint64_t events;              /* events decoded, all traces (main stream,
					 as every command's --stats)       */
	uint64_t spool_bytes;         /* the temporary file's size (compressed) */
	uint64_t spool_raw_bytes;     /* what was written to it, uncompressed   */
	gmt_report_priv_t *priv;
} gmt_report_model_t;

/* NULL when out of memory. */
gmt_report_model_t *gmt_report_model_new(const gmt_report_opts_t *o);
void gmt_report_model_free(gmt_report_model_t *m);

/* Runs the trace at path (kept by pointer) through the phase engine into
 * the model. Returns the decoder's status (the trace's res says why), or
 * -ENOMEM / -EIO (the temporary file). */
int gmt_report_model_add(gmt_report_model_t *m, const char *path);

/* The same for synthetic input: begin gives the engine (its visitor takes
 * header, device and string records), events go through
 * gmt_report_model_event in time order, end finishes it (res NULL: a clean
 * synthetic run). */
gmt_phases_t *gmt_report_model_begin(gmt_report_model_t *m, const char *name);
int gmt_report_model_event(gmt_report_model_t *m, const gmt_devent_t *e, int side);
int gmt_report_model_end(gmt_report_model_t *m, const gmt_decode_result_t *res);

/* After the last trace: the devices, their peaks, phases and failures.
 * 0, -ENOMEM or -EIO. */
int gmt_report_model_finish(gmt_report_model_t *m);

/* Calls fn for every merged instant of device dev, in time order (after
 * finish). Returns 0, the first nonzero fn, -ENOMEM or -EIO. */
int gmt_report_each_instant(const gmt_report_model_t *m, size_t dev,
			    int (*fn)(void *ctx, const gmt_rm_instant_t *in), void *ctx);

/* The same for every device (fn gets its index), with at most one run of
 * each trace: a device's instants come in time order, the devices' may
 * interleave. */
int gmt_report_each_instant_all(const gmt_report_model_t *m,
				int (*fn)(void *ctx, size_t dev, const gmt_rm_instant_t *in), void *ctx);

/* The coinciding peak of device dev's processes within [from, to]
 * (CLOCK_MONOTONIC ns, both included; each process's value in force at
 * from counts from from on): the first instant in it at which what they
 * held together was highest, and what each held then (at[member], the
 * device's n_members entries). from == to: their values at that instant.
 * Not found (nothing held in the window): ts = from, held and at[] 0.
 * After finish; 0, -ENOMEM or -EIO (one pass over the members' rows). */
typedef struct gmt_rm_window {
	int found;
	uint64_t ts, held;
} gmt_rm_window_t;
int gmt_report_window_peak(const gmt_report_model_t *m, size_t dev, uint64_t from, uint64_t to,
			   gmt_rm_window_t *out, uint64_t *at);

/* A name of the phase engine's string table of a trace (NULL: unknown). */
const char *gmt_report_string(const gmt_report_model_t *m, size_t trace, uint32_t id);

/* Series keys and labels ("allocated", "framework allocated", ...). */
const char *gmt_rm_series_key(unsigned s);
const char *gmt_rm_series_label(unsigned s);
/* The label of series s on device d: allocated and its reserve name their
 * source (docs/analyzer.md "Held and taken": a framework's, or the
 * driver's stream-ordered allocations and their pools, or unknown); on a
 * device that never had a framework event, the outside series say what
 * they hold then (every driver-level byte, but the stream-ordered ones when
 * those are the allocated). */
const char *gmt_rm_series_label_of(const gmt_rm_device_t *d, unsigned s);

#endif /* GMT_REPORT_MODEL_H */
