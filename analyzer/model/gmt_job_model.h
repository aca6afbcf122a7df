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
 *   worker touching CUDA).
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
} gmt_job_model_t;

/* NULL when out of memory. rm must be finished and outlive the model. */
gmt_job_model_t *gmt_job_model_build(const gmt_report_model_t *rm);
void gmt_job_model_free(gmt_job_model_t *m);

#endif /* GMT_JOB_MODEL_H */
