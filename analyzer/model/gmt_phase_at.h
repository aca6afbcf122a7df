/*
 * gmt_phase_at.h - PRIVATE to analyzer/: which phase occurrence was open at
 * given instants of a trace (a device's peak, a failed allocation), for the
 * reports that name the phase of each peak or failure (`summary`, `sites`).
 *
 * One run of the phase engine (gmt_phase_engine.h, the common phase
 * selection; pairing only: nothing is computed of the levels) over the
 * trace; the occurrence of an instant ts is the
 * innermost phase occurrence open (the latest begun) right after the first
 * main-stream event at or after ts, i.e. after the event that made the peak
 * or failed (it has that time). docs/analyzer.md, "Phase of a peak".
 */
#ifndef GMT_PHASE_AT_H
#define GMT_PHASE_AT_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gmt_phase_engine.h"

typedef struct gmt_phase_at {
	int in_phase;            /* 0: no phase occurrence open then        */
	char *name;              /* the phase's name ("" when the trace never
				    named it); owned                         */
	uint64_t k;              /* occurrence number (1: cold)             */
	uint64_t begin_ts;       /* the occurrence's begin (CLOCK_MONOTONIC) */
	uint32_t thread;
} gmt_phase_at_t;

/* Fills out[i] for each ts[i] (any order) of the trace at path. Returns the
 * decoder's status (*res says why); out[] is all "no phase" when it did not
 * read the trace. -ENOMEM when out of memory. */
int gmt_phase_at_run(const char *path, const gmt_phase_opts_t *o, const uint64_t *ts, size_t n,
		     gmt_phase_at_t *out, gmt_decode_result_t *res);

/* The phases of summary's peaks and failures (render/gmt_summary_render.c).
 * ran: the trace has ranges, so the lookup ran; else every entry is "no
 * phase" and the report says nothing about phases. */
typedef struct gmt_summary_phases {
	int ran;
	const gmt_phase_at_t *peak;   /* by device slot of gmt_summary_t.dev */
	const gmt_phase_at_t *fail;   /* by failure of gmt_summary_t.fails   */
} gmt_summary_phases_t;

/* Frees out[i].name for i < n. */
void gmt_phase_at_clear(gmt_phase_at_t *out, size_t n);

#endif /* GMT_PHASE_AT_H */
