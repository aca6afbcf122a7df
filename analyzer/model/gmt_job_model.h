/*
 * gmt_job_model.h - PRIVATE to analyzer/: several processes of one job, as
 * `summary` reports them when given several traces (docs/analyzer.md,
 * "Several processes"). Built on the report model (gmt_report_model.h:
 * the traces' devices grouped by host and device UUID, each physical
 * device's coinciding peak of what its processes held together, found by
 * answers/gmt_group_merge on CLOCK_MONOTONIC), so there is one merge, not
 * two. This model adds what summary prints beside it, every number
 * computed here (gmt_job_model.c):
 * - per physical device, each process's share of the coinciding peak;
 * - per process: pid, RANK and LOCAL_RANK when set, the physical devices
 *   it used, its own peak (its highest held on one device) with the phase
 *   occurrence it happened in: a skew table across ranks, with the largest
 *   and the smallest own peak;
 * - stray contexts: a process present on a device (a context: it made a
 *   CUDA context there, device used grew) where it never held a byte
 *   (a rank without set_device putting its context on GPU 0, a DataLoader
 *   worker touching CUDA);
 * - for `phases`, each phase occurrence matched across the processes of a
 *   shared device, and for `oom`, what every process on the failing
 *   device held at the failure (gmt_report_window_peak).
 */
#ifndef GMT_JOB_MODEL_H
#define GMT_JOB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/gmt_report_model.h"

typedef struct gmt_job_proc {
	size_t trace;                 /* index in the report model's traces    */
	uint64_t pid;
	const char *rank, *local_rank;   /* RANK, LOCAL_RANK; NULL when unset   */
	size_t *devs; size_t n_devs;  /* the physical devices it used (indices
					 in the report model's devices)         */
	int has_peak;                 /* it held a byte somewhere              */
	size_t peak_dev;              /* where its own peak was (the first
					 device of the highest)                 */
	uint64_t own_peak, own_peak_ts;
	double own_peak_s;            /* own_peak_ts after its first event      */
	int in_phase;                 /* the phase occurrence open then        */
	const char *phase;            /* its name (NULL: one the trace never
					 named)                                 */
	uint64_t phase_k;
} gmt_job_proc_t;

typedef struct gmt_job_stray {
	size_t proc;                  /* index in procs                        */
	size_t dev;                   /* index in the report model's devices   */
	int ordinal;                  /* the device's ordinal in that process  */
} gmt_job_stray_t;

/* `phases` of several traces: on a physical device that two or more
 * processes used, each phase occurrence matched across them by name and
 * number (gmt_job_phases_build). */
typedef struct gmt_job_phase {
	size_t dev;                   /* index in the report model's devices   */
	const char *name;             /* NULL: a name the trace never gave     */
	uint64_t k;                   /* occurrence number (1: cold)            */
	uint64_t from, to;            /* the window: the earliest begin and the
					 latest end of the processes' ones     */
	uint8_t *present;             /* [member]: it had this occurrence      */
	size_t n_present;
	uint64_t *own;                /* [member]: its maximum held in its own
					 occurrence (present ones)              */
	uint64_t own_sum;             /* their sum: a BOUND, at no instant     */
	gmt_rm_window_t peak;         /* the coinciding peak of all the device's
					 processes in the window               */
	uint64_t *at;                 /* [member]: what each held then         */
} gmt_job_phase_t;

/* `oom` of several traces: a failure, and what every process on its
 * physical device held at that instant (gmt_job_failures_build). */
typedef struct gmt_job_fail_in {
	size_t trace;                 /* the failing process (trace index)      */
	size_t index;                 /* the failure's number in its report     */
	uint64_t ts;
	int ordinal;                  /* its device in that process             */
	uint64_t request;
	const char *source;           /* "driver" or "framework"               */
	int recovered;
} gmt_job_fail_in_t;

typedef struct gmt_job_fail {
	gmt_job_fail_in_t in;
	int found;                    /* the process is a member of a device   */
	size_t dev, member;
	uint64_t held_all;            /* all the device's processes together   */
	uint64_t *at;                 /* [member]: what each held then         */
} gmt_job_fail_t;

typedef struct gmt_job_model {
	const gmt_report_model_t *rm;
	double **share;               /* [device][member]: held at the device's
					 coinciding peak / the peak (0 when the
					 device has no peak)                    */
	gmt_job_proc_t *procs; size_t n_procs;   /* in trace order            */
	gmt_job_stray_t *strays; size_t n_strays;
	int has_skew;                 /* two or more processes held bytes      */
	size_t skew_max, skew_min;    /* procs with the largest and smallest
					 own peak (the first of equals)         */
	uint64_t skew_spread;         /* their difference, bytes               */
	int phases_built, fails_built;    /* the two below were asked for     */
	gmt_job_phase_t *phases; size_t n_phases;   /* by device, then begin */
	gmt_job_fail_t *fails; size_t n_fails;      /* in the order given    */
} gmt_job_model_t;

/* NULL when out of memory. rm must be finished and outlive the model. */
gmt_job_model_t *gmt_job_model_build(const gmt_report_model_t *rm);
void gmt_job_model_free(gmt_job_model_t *m);

/* The phase occurrences matched across the processes of each shared
 * device (two or more members): by name (as text) and number, the window
 * from the first begin to the last end, each one's own maximum held and
 * the coinciding peak of them all in the window with what each held.
 * 0, -ENOMEM or -EIO. */
int gmt_job_phases_build(gmt_job_model_t *m);

/* Each failure's physical device (the member of trace in->trace with
 * in->ordinal) and what every process on it held at in->ts (the values
 * after the events of that nanosecond). 0, -ENOMEM or -EIO. */
int gmt_job_failures_build(gmt_job_model_t *m, const gmt_job_fail_in_t *in, size_t n);

#endif /* GMT_JOB_MODEL_H */
