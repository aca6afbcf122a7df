/*
 * gmt_replay.h - the analyzer's replay engine and its report (private to
 * analyzer/ and its unit tests).
 *
 * A replay consumes one trace through the decoder's visitor callbacks
 * (reader/gmt_decode.h) and rebuilds what each device held over time; the
 * result is a gmt_summary_t, the model of `summary`, that the renderers
 * (render/gmt_summary_render.c) print as text or JSON. The accounting rules are written down in docs/analyzer.md.
 *
 * Memory is proportional to what is live (blocks, VMM handles, mappings,
 * reservations) plus the failures and drops listed in the report, never to
 * the length of the trace.
 */
#ifndef GMT_REPLAY_H
#define GMT_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "gmt_decode.h"

/* Device kinds as report indices: 0 unknown, then the format's kinds 1-4,
 * then 5 = CUDA arrays (format kind 6). Host pinned (kind 5), imported
 * memory (7) and multicast objects (8) are never device kinds. */
#define GMT_DKINDS 6
#define GMT_DKIND_ARRAY 5
/* Owners as report indices: the format's owners (application, nccl,
 * cublas, cudnn), then other (a number out of range). */
#define GMT_DOWNERS (GMT_OWNER_MAX + 2)
#define GMT_DOWNER_OTHER (GMT_OWNER_MAX + 1)

static inline unsigned gmt_downer(unsigned owner)
{
	return owner <= GMT_OWNER_MAX ? owner : GMT_DOWNER_OTHER;
}

/* JSON keys and text names of the report indices: a device kind's is the
 * format's (tracer/gmt_format.def); an owner index's is the format's, or
 * "other". */
static inline const char *gmt_dkind_key(unsigned k)
{
	return gmt_kind_name(k == GMT_DKIND_ARRAY ? GMT_KIND_ARRAY : k);
}

static inline const char *gmt_downer_key(unsigned o)
{
	return o == GMT_DOWNER_OTHER ? "other" : gmt_owner_name(o);
}

/* Device bytes at one instant, split two ways (each split sums to total). */
typedef struct gmt_composition {
	uint64_t total;
	uint64_t kind[GMT_DKINDS];
	uint64_t owner[GMT_DOWNERS];
} gmt_composition_t;

typedef struct gmt_dev_summary {
	int ordinal;                 /* -1: events that named no device */
	int has_record;              /* a DEVICE record was read */
	int used;                    /* some event named this device */
	char name[256];
	uint8_t uuid[16];
	char pci_bus_id[64];
	uint64_t total_bytes;
	int cc_major, cc_minor, driver_version;

	gmt_composition_t live;      /* now; at the end: final live bytes */
	uint8_t owners_added;        /* bit o: live.owner[o] was ever added to
					(its other owners' bytes are 0)     */
	gmt_composition_t peak;      /* at the first instant the total peaked */
	uint64_t peak_ts;            /* valid when peak.total > 0 */
	uint64_t kind_max[GMT_DKINDS];    /* independent maxima per kind */
	uint64_t kind_max_ts[GMT_DKINDS];
	uint64_t kind_max_sum;            /* their sum: a bound, not a moment
					     (after gmt_replay_finish)     */
	uint64_t n_alloc[GMT_DKINDS], n_free[GMT_DKINDS], n_fail[GMT_DKINDS];

	uint64_t meminfo_samples;
	uint64_t meminfo_free, meminfo_total, meminfo_ts;   /* latest sample */
	uint64_t meminfo_min_free, meminfo_min_ts;          /* minimum free */

	/* Contexts (docs/analyzer.md, "Contexts"): live ones, destructions,
	 * and the device bytes the driver released with them. */
	int primary_active;          /* PRIMARY_RETAIN since its last destruction */
	uint64_t primary_ctx;        /* its handle (PRIMARY_RETAIN's addr), 0 unknown */
	uint64_t contexts_live;      /* CTX_CREATE not yet destroyed */
	uint64_t ctx_destroys;
	uint64_t ctx_released_blocks, ctx_released_bytes, ctx_release_ts;

	/* CUDA graphs (docs/analyzer.md, "Graph memory"): allocations made on a
	 * stream being captured (not in the totals above) and the latest
	 * GRAPH_MEM sample of the device's graph memory pool. */
	uint64_t graph_captured_allocs, graph_captured_bytes;
	uint64_t graph_samples, graph_ts;
	uint64_t graph_reserved, graph_reserved_high, graph_used, graph_used_high;

	/* Taken from the device (docs/analyzer.md, "Held and taken"): the live
	 * bytes above plus what the device's stream-ordered pools keep
	 * reserved beyond their live allocations: the latest POOL_RESERVED of
	 * each pool of the device (located on it), summed, less the live
	 * stream-ordered bytes, never below 0. */
	uint64_t pool_reserved;      /* now: that sum                       */
	uint64_t taken_peak, taken_peak_ts;   /* first instant of the maximum */
	uint64_t taken_peak_reserve; /* the pools' part of it then           */
	uint64_t taken_final, taken_final_reserve;  /* after gmt_replay_finish */
} gmt_dev_summary_t;

typedef struct gmt_fail_summary {
	uint64_t ts, size, stream;
	int device;
	unsigned kind, api, owner, result;
	gmt_composition_t live;      /* on that device at that instant */
	int has_meminfo;             /* a MEMINFO of that device came before */
	uint64_t meminfo_free, meminfo_ts;
} gmt_fail_summary_t;

typedef struct gmt_drop_summary {
	uint64_t count, first_ts, last_ts;
	char reason[32];
	int err;
} gmt_drop_summary_t;

typedef struct gmt_pool_summary {
	uint64_t pool;
	int device;                  /* -1 unknown */
	int created, destroyed;
	uint64_t trims;
	unsigned where;              /* POOL_CREATE's aux: 0 a device's memory,
					1 host, 2 managed, 4 imported        */
	int counted_dev;             /* the device whose pool_reserved holds */
	uint64_t counted;            /* ... this many of its bytes            */
	uint64_t samples;            /* POOL_RESERVED + POOL_USED events */
	uint64_t reserved_samples;   /* POOL_RESERVED events alone */
	uint64_t reserved_current, reserved_high, used_current, used_high;
	uint64_t ts;                 /* last sample */
} gmt_pool_summary_t;

/* Trace-level counts of events that did not match the state. */
typedef struct gmt_anomalies {
	uint64_t overlapping_allocations; /* ALLOC on an address already live */
	uint64_t unmatched_frees;         /* FREE of an address not live */
	uint64_t null_frees;              /* FREE of address 0 (a no-op) */
	uint64_t voided_frees;            /* FREE undone by a FREE_FAIL */
	uint64_t unmatched_free_fails;    /* FREE_FAIL with no recent FREE */
	uint64_t overlapping_vmm_handles; /* VMM_CREATE of a live handle */
	uint64_t unmatched_vmm_releases;  /* VMM_RELEASE of an unknown handle */
	uint64_t unmatched_vmm_retains;   /* VMM_RETAIN of an unknown handle */
	uint64_t unmatched_maps;          /* VMM_MAP of an unknown handle */
	uint64_t overlapping_maps;        /* VMM_MAP on a mapped address */
	uint64_t unmatched_unmaps;        /* VMM_UNMAP of an unmapped address */
	uint64_t overlapping_reserves;    /* VMM_RESERVE on a reserved address */
	uint64_t unmatched_addr_frees;    /* VMM_ADDR_FREE of an unknown range */
	uint64_t unknown_kinds;           /* ALLOC with a kind out of range */
	uint64_t ambiguous_ctx_destroys;  /* CTX_DESTROY while another context
					     of its device lived: nothing released */
} gmt_anomalies_t;

/* What a trace may lack (docs/analyzer.md, "Incomplete traces"): plain
 * data, which every command's model copies (render/gmt_render.h,
 * gmt_gap_line, says it). */
typedef struct gmt_gaps {
	uint64_t untraced_lookups;       /* PROC_UNIDENTIFIED with aux 0       */
	uint64_t untraced_entry_points;  /* ... distinct names among them      */
	int nvtx_only;                   /* NVTX_ONLY: loaded as an NVTX
					    injection alone                    */
	int driver_stub;                 /* DRIVER_STUB: NVIDIA's stub libcuda */
	uint64_t cuda_activity;          /* contexts, syncs, ranges, marks,
					    samples, NCCL calls, modules       */
	int activity_without_allocations;/* cuda_activity but no allocation
					    (after gmt_replay_finish)          */
	/* What this analyzer could not read (after gmt_replay_finish with
	 * the decode result): a newer minor version's records and fields
	 * (gmt_decode_result_t's newer_*), and events of types it does not
	 * know (counted, not replayed); trace_major.trace_minor: the file's */
	uint64_t newer_records, newer_fields, unknown_events;
	unsigned newer_tags[8], n_newer_tags;
	unsigned trace_major, trace_minor;
	int incomplete;                  /* untraced entry points, NVTX only, or
					    any of the three above (after
					    gmt_replay_finish)                 */
} gmt_gaps_t;

/* Everything the summary command reports about one trace. */
typedef struct gmt_summary {
	char *file;
	/* decoding */
	enum gmt_decode_status status;
	int ended_cleanly;
	uint64_t bytes_ok, file_size, frames, records;
	/* events the tracer dropped: the larger of the DROPS records' sum and
	 * END's count, and the DROPS records' time range (0 0: none known) */
	uint64_t missing, missing_first_ts, missing_last_ts;
	uint64_t missing_timed;          /* of missing: the DROPS records' sum */
	char message[512];

	/* process (valid when has_header) */
	int has_header;
	unsigned format_major, format_minor;
	char *tool_version, *host, *exe;
	uint64_t pid, ppid;
	char **cmdline; size_t n_cmdline;
	char **env_keys, **env_values; size_t n_env;
	uint64_t clock_monotonic_ns, clock_realtime_ns;

	/* events */
	uint64_t events, late_events;
	uint64_t side_events;        /* in SIDE EVENTS records: counted, not replayed */
	uint64_t by_type[GMT_EV_TYPE_MAX + 2];  /* last slot: unknown types */
	uint64_t by_type_unknown;    /* types without a name: gaps of the
					table and the last slot (after finish) */
	int have_ts;
	uint64_t first_ts, last_ts;
	uint64_t duration_ns;        /* last_ts - first_ts (after finish)   */

	/* devices, index = ordinal + 1 (slot 0: no device) */
	gmt_dev_summary_t **dev; size_t n_dev;

	/* host pinned, process wide */
	uint64_t host_live, host_peak, host_peak_ts;
	uint64_t host_allocs, host_frees, host_fails;
	uint64_t host_ctx_released;  /* bytes released with a destroyed context */

	/* imported memory (another process's or handle's: IPC-opened and
	 * pool-imported pointers, imported handles), process wide; never in
	 * device totals */
	uint64_t imported_live, imported_peak, imported_peak_ts;
	uint64_t imported_opens, imported_closes, imported_handles;
	/* multicast objects (their bound memory is counted where allocated) */
	uint64_t multicast_objects, multicast_binds;

	/* reserved virtual address space, process wide */
	uint64_t va_live, va_peak, va_peak_ts;
	uint64_t va_reserves, va_frees;

	/* virtual memory handles */
	uint64_t vmm_released_while_mapped, vmm_maps, vmm_unmaps, vmm_map_fails;
	uint64_t vmm_live_handles, vmm_live_mappings;

	gmt_pool_summary_t *pools; size_t n_pools, cap_pools;

	gmt_fail_summary_t *fails; size_t n_fails, cap_fails;
	uint64_t fails_total;                 /* n_fails may stop at a cap */
	uint64_t fails_not_listed;            /* fails_total - n_fails (after
						 finish)                     */

	gmt_drop_summary_t *drops; size_t n_drops, cap_drops;
	uint64_t drops_total, drop_records;

	int has_end;
	gmt_end_t end;               /* end.how points at end_how */
	char end_how[16];
	unsigned last_type;          /* the type of the latest event (by time) */
	/* after finish: how the process ended. END's how ("exit", "_exit",
	 * "signal", "shutdown"; "" in traces older than format 1.4) and value;
	 * without END: "exec" when the latest event is an EXEC (the new image
	 * writes its own trace), else "cut" (killed or still running). */
	const char *process_end;
	int process_end_value;

	gmt_anomalies_t anom;

	gmt_gaps_t gaps;
} gmt_summary_t;

/* A time as the reports give it: signed ns after the first event. */
static inline int64_t gmt_summary_since_ns(const gmt_summary_t *s, uint64_t ts)
{
	return (int64_t)(ts - s->first_ts);
}

/* The CLOCK_REALTIME ns of a trace (CLOCK_MONOTONIC) time, by the header's
 * pair of clock readings; meaningful when has_header. */
static inline uint64_t gmt_summary_realtime_ns(const gmt_summary_t *s, uint64_t ts)
{
	return ts + (s->clock_realtime_ns - s->clock_monotonic_ns);
}

/* Failures and DROPS records listed in full; beyond these only counted. */
#define GMT_REPLAY_MAX_FAILS 100000
#define GMT_REPLAY_MAX_DROPS 10000

typedef struct gmt_replay gmt_replay_t;

/* Creates a replay for a trace named file (used in the report). NULL when
 * out of memory. */
gmt_replay_t *gmt_replay_new(const char *file);

/* Fills v with the replay's callbacks (v->ctx = r). Tests call them
 * directly with synthetic records. A callback returns nonzero only when
 * memory runs out. */
void gmt_replay_visitor(gmt_replay_t *r, gmt_visitor_t *v);

/* What the replay tells an observer (the phase engine, gmt_levels.c) about
 * the device bytes it tracks, as they change. */
enum gmt_obs_op {
	GMT_OBS_BLOCK_ADD,   /* a device block became live (ALLOC, or a FREE
				undone by FREE_FAIL)                          */
	GMT_OBS_BLOCK_DEL,   /* a device block stopped being live (its FREE, or
				an overlapping ALLOC that replaced it)        */
	GMT_OBS_HANDLE_ADD,  /* a VMM handle's physical bytes started counting */
	GMT_OBS_HANDLE_DEL,  /* ... stopped counting (released and unmapped)  */
	GMT_OBS_MAP_ADD,     /* a mapping va -> handle appeared               */
	GMT_OBS_MAP_DEL      /* ... went                                       */
};

typedef struct gmt_obs {
	enum gmt_obs_op op;
	uint64_t key;        /* block address, handle, or mapping va          */
	uint64_t size;       /* bytes (a mapping: its virtual size)           */
	uint64_t handle;     /* mappings: the handle                          */
	int dev;             /* blocks and handles: device (-1 none)          */
	unsigned kind;       /* blocks: format kind; handles: vmm_physical    */
	unsigned owner;      /* format owner                                  */
	uint32_t *cookie;    /* blocks and mappings: the observer's own value,
				kept by the replay with the block or mapping
				(0 when it is added; valid during the call),
				so the observer needs no map of its own;
				NULL for handles                              */
	uint32_t *cookie_hi; /* blocks only: a second such value (the upper
				half of what gmt_replay_each_block gives);
				NULL for mappings and handles                 */
} gmt_obs_t;

/* cause: the event being replayed. Returns 0 or a negative errno (which
 * stops the replay like an out-of-memory). */
typedef int (*gmt_replay_observer_fn)(void *ctx, const gmt_devent_t *cause, const gmt_obs_t *o);

/* Installs (fn NULL: removes) the observer. Host pinned blocks are never
 * reported. */
void gmt_replay_observe(gmt_replay_t *r, gmt_replay_observer_fn fn, void *ctx);

/* Counts and applies one event in time order, whatever stream it came
 * from (the phase engine feeds the merged time line this way). Returns 0 or
 * a negative errno. */
int gmt_replay_event(gmt_replay_t *r, const gmt_devent_t *e);

/* Calls fn for every live device block an observer was told of (not host
 * pinned or imported memory, not a graph's captured node), in no
 * particular order, with the observer's values kept for it (cookie: the
 * gmt_obs_t.cookie value in the low half, cookie_hi's in the high). Stops
 * at the first nonzero fn and returns it. */
typedef int (*gmt_replay_block_fn)(void *ctx, uint64_t addr, uint64_t size, int dev, unsigned kind,
				   unsigned owner, uint64_t cookie);
int gmt_replay_each_block(const gmt_replay_t *r, gmt_replay_block_fn fn, void *ctx);

/* Forgets the allocation ids given so far (an EVENTS2 record flagged
 * IDS_RESET: call before its events; the visitor does it itself). Their
 * blocks stay live, found by address from then on. */
void gmt_replay_ids_reset(gmt_replay_t *r);

/* Whether the last event applied was a CTX_DESTROY that released its
 * device's blocks (the phase engine then drops what that device still held
 * for stream-ordered frees). */
int gmt_replay_ctx_released(const gmt_replay_t *r);

/* Counts n events (already given to gmt_replay_event) as side-stream ones. */
void gmt_replay_note_side(gmt_replay_t *r, uint64_t n);

/* Records the decoder's outcome (res may be NULL: a clean synthetic run)
 * and returns the summary, owned by r. */
const gmt_summary_t *gmt_replay_finish(gmt_replay_t *r, const gmt_decode_result_t *res);

/* The summary so far (also before finish). */
const gmt_summary_t *gmt_replay_summary(const gmt_replay_t *r);

void gmt_replay_free(gmt_replay_t *r);

/* Device slot of ordinal (-1 allowed), or NULL if none was seen. */
static inline const gmt_dev_summary_t *gmt_summary_device(const gmt_summary_t *s, int ordinal)
{
	if (ordinal < -1)
		return NULL;
	size_t idx = (size_t)(ordinal + 1);
	return idx < s->n_dev ? s->dev[idx] : NULL;
}

#endif /* GMT_REPLAY_H */
