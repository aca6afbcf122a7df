/*
 * gmt_sites_model.h - PRIVATE to analyzer/: the report of `sites` and
 * `flamegraph` for one trace, as plain data: every number and every name
 * they print, derived ones included (shares, how many are listed, the
 * folded lines and their sums), computed once here (gmt_sites_model.c) and
 * only formatted by the renderers (analyzer/render/gmt_sites_*.c).
 *
 * Built from the engines: a replay (each device's coinciding peak, the
 * bytes allocated per stack, the failed allocations), the phase engine
 * (--phase: the occurrences, chosen by the selection), the live set at
 * chosen instants (gmt_liveset.h: the sites at each peak) and the
 * framework's peaks (gmt_fwpeaks.h: --framework). Sites whose stacks
 * symbolise to the same frames and whose recorded owner is the same are
 * merged. The rules are in docs/analyzer.md ("Call sites").
 *
 * The model owns everything it points to (the symbol table included);
 * gmt_sites_model_free frees it all.
 */
#ifndef GMT_SITES_MODEL_H
#define GMT_SITES_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"
#include "engines/gmt_replay.h"
#include "model/gmt_phase_at.h"
#include "model/gmt_stacks.h"

/* When a peak or failure happened: seconds after the trace's first event,
 * wall-clock time (the header's CLOCK_REALTIME pair) and the phase
 * occurrence open then (gmt_phase_at.h; the whole run's peaks and the
 * failures only, when the trace has ranges). */
typedef struct gmt_sites_when {
	double since_s;
	int has_utc;
	uint64_t utc_ns;
	gmt_phase_at_t phase;
	double phase_begin_s;      /* phase.begin_ts after the first event     */
} gmt_sites_when_t;

/* One device at its peak (the whole run's, or within an occurrence). */
typedef struct gmt_sites_dev {
	int ordinal;
	uint64_t peak, peak_ts;
	gmt_sites_when_t when;     /* of peak_ts                              */
	gmt_site_list_t live;      /* live at the peak, by site               */
	gmt_site_list_t top;       /* allocated most over the run (whole run
				      only; n_listed = n)                     */
} gmt_sites_dev_t;

/* One occurrence of the phase asked for (--phase). */
typedef struct gmt_sites_occ {
	uint64_t k, begin_ts, end_ts;
	int ended;
	gmt_sites_dev_t *devs; size_t n_devs;     /* devices that held bytes  */
	gmt_sites_dev_t *fwdevs; size_t n_fwdevs; /* --framework              */
} gmt_sites_occ_t;

typedef struct gmt_sites_fail {
	uint64_t ts, size;
	int device;
	unsigned result;
	const char *result_name;   /* NULL: a code not in the table           */
	const char *kind_key, *api_key;
	unsigned owner;
	const char *owner_key;
	uint32_t stack;            /* the stack id                            */
	const gmt_stack_view_t *st;  /* its view (GMT_SITES_REPORT)           */
	gmt_sites_when_t when;
} gmt_sites_fail_t;

/* One folded line: frames outermost first, ';' between. */
typedef struct gmt_folded {
	char *text;
	uint64_t bytes;            /* the sum of the identical lines          */
} gmt_folded_t;

enum {
	GMT_SITES_REPORT = 1,      /* the sites report (stack views)          */
	GMT_SITES_FOLDED = 2,      /* the folded lines                        */
	GMT_SITES_AT_ONLY = 4      /* only the instants asked for (opts.at;
				      without a phase): ats alone is made (no
				      devices, totals or failures), and the
				      trace is read up to the event of the
				      last of them (res: GMT_DECODE_STOPPED
				      when that was before its end; events:
				      those read). Their live sets are the
				      same as from the whole trace; a frame's
				      module is the latest MODULE record read
				      by then (gmt_symbols.c)               */
};

/* An instant asked for by the caller: device ordinal after main-stream
 * event number seq (gmt_liveset.h's numbering; 0: before any event). */
typedef struct gmt_sites_at {
	int ordinal;
	uint64_t seq;
} gmt_sites_at_t;

typedef struct gmt_sites_model_opts {
	unsigned what;             /* GMT_SITES_REPORT and/or GMT_SITES_FOLDED */
	unsigned top;              /* sites listed per device and list        */
	const char *phase;         /* --phase NAME, or NULL                   */
	int framework;             /* --framework                             */
	int symbols;               /* 0: --no-symbols                         */
	const char *const *debug_dirs; size_t n_debug_dirs;
	/* the phase selection (--phase) */
	const char *const *domains; size_t n_domains;
	const char *const *patterns; size_t n_patterns;
	int all_depths;
	/* more instants (the report's coinciding peaks): their live sets in
	   the model's ats, in this order */
	const gmt_sites_at_t *at; size_t n_at;
} gmt_sites_model_opts_t;

typedef struct gmt_sites_model_priv gmt_sites_model_priv_t;

typedef struct gmt_sites_model {
	const char *file;
	gmt_decode_result_t res;   /* how the trace was read                  */
	const char *status_key;    /* "clean", "cut", "damaged", ...          */
	gmt_gaps_t gaps;           /* what the trace may lack                 */
	uint64_t events;           /* events decoded (once)                   */
	int framework;
	const char *phase;
	gmt_sites_dev_t *devs; size_t n_devs;      /* devices with a peak     */
	gmt_sites_dev_t *fwdevs; size_t n_fwdevs;  /* --framework             */
	gmt_sites_occ_t *occs; size_t n_occs;      /* --phase: listed ones    */
	/* the opts' instants: ordinal, peak = the bytes live then (the
	   share's base), peak_ts = the time of the event it was taken after
	   (0: before any), live (n_ats = n_at; top empty) */
	gmt_sites_dev_t *ats; size_t n_ats;
	uint64_t occ_total;                        /* all of them             */
	/* --phase: the phases the trace has (under the selection; a name in
	 * two domains counts twice), for the error when NAME is none of them:
	 * how many, and the first 8 as "\"a\", \"b\"" (each cut at 40 bytes,
	 * control characters as '?'; NULL: none). */
	uint64_t phase_names;
	char *phase_names_hint;
	int occ_more;                              /* occ_total > n_occs      */
	gmt_sites_fail_t *fails; size_t n_fails;   /* the first ones          */
	uint64_t fails_total;
	int fails_more;                            /* fails_total > n_fails   */
	gmt_folded_t *folded; size_t n_folded;     /* GMT_SITES_FOLDED        */
	int phases_looked_up;                      /* the trace has ranges:
						      the phases of the peaks
						      and failures were looked
						      up                      */
	/* symbolisation (the symbol table's statistics once built) */
	int symbols;
	uint64_t sym_addresses, sym_files;
	double sym_seconds;
	gmt_sites_model_priv_t *priv;              /* what the model owns     */
} gmt_sites_model_t;

/* Builds the model of the trace at file (kept by pointer). Returns NULL
 * only when out of memory; a trace that cannot be read gives a model
 * whose res says why, with no devices. */
gmt_sites_model_t *gmt_sites_model_build(const char *file, const gmt_sites_model_opts_t *o);
void gmt_sites_model_free(gmt_sites_model_t *m);

#endif /* GMT_SITES_MODEL_H */
