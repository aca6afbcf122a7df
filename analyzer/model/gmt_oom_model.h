/*
 * gmt_oom_model.h - PRIVATE to analyzer/: the report of `oom` for one
 * trace: every out-of-memory failure, what the device held at that instant,
 * who held it, what led to it and where to look, as plain data; every
 * number printed is computed here (gmt_oom_model.c) and only formatted by
 * the renderers (render/gmt_oom_render.c). docs/analyzer.md, "oom", says
 * how each is found.
 *
 * A failure is one request that the driver refused, with the attempts
 * made for it: the same thread asking the same device for the same bytes
 * again (a caching allocator gives back its cache and retries). It is
 * RECOVERED when one of those attempts then succeeded; the framework GAVE
 * UP when its out-of-memory event (FW_OOM) followed. A framework's FW_OOM
 * with no driver failure before it (a limit of the framework's own) is a
 * failure of its own.
 */
#ifndef GMT_OOM_MODEL_H
#define GMT_OOM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"
#include "engines/gmt_replay.h"
#include "model/gmt_stacks.h"

/* One attempt of a failure's request, and a release of cached memory
 * between its attempts. */
typedef struct gmt_oom_attempt {
	uint64_t ts;
	uint64_t size;
	int ok;                    /* the attempt that succeeded (recovered)  */
	double since_start_s;
} gmt_oom_attempt_t;

typedef struct gmt_oom_release {
	uint64_t ts, bytes;
	double since_start_s;
	const char *what;          /* "framework segment" (FW_SEGMENT_FREE /
				      UNMAP) or "driver free" (a FREE of a
				      block on the device)                    */
} gmt_oom_release_t;

typedef struct gmt_oom_failure {
	/* what failed */
	const char *source;        /* "driver" or "framework"                */
	int recovered;             /* a later attempt succeeded              */
	uint64_t recovered_ts;
	int gave_up;               /* the framework's FW_OOM followed        */
	int has_fw_oom;
	uint64_t fw_request, fw_free, fw_ts;   /* the FW_OOM's request, free bytes
				      as the framework saw them, time          */
	uint64_t ts;               /* the instant reported: the last failed
				      attempt (or the FW_OOM)                 */
	double since_start_s;      /* ts - the trace's first event            */
	int has_utc;
	uint64_t utc_ns;           /* CLOCK_REALTIME of ts (the header's pair) */
	int device;
	uint64_t request;          /* bytes asked for at the instant          */
	uint64_t stream;
	const char *kind_key, *api_key, *owner_key;
	unsigned result;
	const char *result_name;   /* NULL: a code not in the table           */
	uint32_t thread;
	uint64_t tid;
	const char *thread_name;   /* NULL: unknown                           */
	uint32_t stack;
	const gmt_stack_view_t *st;  /* the request's stack (native, or the
				      FW_OOM's text stack)                    */

	/* the phase occurrence it failed in (the innermost open phase) */
	int in_phase;
	const char *phase;
	uint64_t phase_k;
	const char *temperature;   /* "cold" (k = 1) or "warm"                */
	uint64_t phase_begin_ts;
	int has_phase_start_held;
	uint64_t phase_start_held; /* held at the occurrence's begin          */

	/* the device at that instant */
	const char *device_name;
	int has_total;
	uint64_t total;            /* as the device reports it (DEVICE record,
				      else the sample's)                      */
	int has_free;              /* a MEMINFO taken at the failure (right
				      after it, same thread and device)       */
	uint64_t free, free_ts;
	uint64_t held;             /* this process's device bytes            */
	uint64_t held_kind[GMT_DKINDS]; /* by device kind index (gmt_replay.h) */
	uint64_t held_owner[6];    /* by owner index                          */
	int has_allocated, has_reserved;
	uint64_t allocated, reserved;
	int has_cache;
	uint64_t cache;            /* reserved - allocated                    */
	int has_largest_free;      /* framework segments are known            */
	uint64_t largest_free;     /* the largest free block in them          */
	int largest_below_request; /* largest_free < request                  */
	uint64_t outside;          /* driver bytes outside the framework      */
	uint64_t outside_owner[6];
	int has_graph_pool;
	uint64_t graph_pool;       /* the graph memory pool's reserved bytes  */
	int has_rest;
	int64_t rest;              /* total - free - held: context and other
				      processes, an ESTIMATE from samples     */
	int has_shortfall;
	int64_t shortfall;         /* request - free                          */

	/* who held it */
	gmt_site_list_t holders;   /* driver-level blocks live then, by site  */
	gmt_site_list_t fw_holders;/* the framework's blocks, by stack        */
	uint64_t fw_held;          /* their bytes                             */

	/* what led to it */
	gmt_oom_attempt_t *attempts; size_t n_attempts;
	gmt_oom_release_t *releases; size_t n_releases;
	uint64_t released_bytes;
	int has_fw_retries;
	uint64_t fw_retries, fw_ooms, fw_retries_ts;  /* FW_RETRIES at or after
				      the instant (else the latest before)    */
	int has_peak_before;
	uint64_t peak_before, peak_before_ts;  /* the device's peak so far: a
				      partial peak before saturation          */

	/* where to look */
	int lead;                  /* enum gmt_lead; GMT_LEAD_NONE           */
	const char *lead_key, *lead_text;
} gmt_oom_failure_t;

typedef struct gmt_oom_model_opts {
	unsigned top;              /* holders listed per failure             */
	int symbols;
	const char *const *debug_dirs; size_t n_debug_dirs;
	const char *const *domains; size_t n_domains;
	const char *const *patterns; size_t n_patterns;
	int all_depths;
	const void *leads;         /* a gmt_leads_t (answers/gmt_leads.h)     */
} gmt_oom_model_opts_t;

#define GMT_OOM_MAX_LISTED 100

typedef struct gmt_oom_model_priv gmt_oom_model_priv_t;

typedef struct gmt_oom_model {
	const char *file;
	gmt_decode_result_t res;
	const char *status_key;
	gmt_gaps_t gaps;                 /* what the trace may lack           */
	uint64_t events;
	uint64_t pid, ppid;
	const char *rank, *local_rank;   /* from the header's env; NULL: unset */
	gmt_oom_failure_t *failures; size_t n_failures;  /* the first ones   */
	uint64_t failures_total;
	uint64_t recovered_total;
	int failures_more;
	uint64_t failures_not_listed;    /* failures_total - n_failures     */
	/* how the process ended */
	const char *end_how;       /* "exit", "_exit", "signal", "shutdown",
				      "exec", "" (END without it: before 1.4),
				      "cut" (no END record: killed or crashed) */
	int end_value;
	gmt_oom_model_priv_t *priv;
} gmt_oom_model_t;

gmt_oom_model_t *gmt_oom_model_build(const char *file, const gmt_oom_model_opts_t *o);
void gmt_oom_model_free(gmt_oom_model_t *m);

#endif /* GMT_OOM_MODEL_H */
