/*
 * gmt_group.h - several processes of one job on one physical device: their
 * traces grouped by host and device UUID, and their bytes over time merged
 * on CLOCK_MONOTONIC (which one host shares: every trace's event times are
 * CLOCK_MONOTONIC nanoseconds of that host).
 *
 * The engine knows no trace: a caller gives, for each process, its bytes on
 * the device as a step function (the value after each change, in time
 * order) through an iterator, and gets the coinciding peak of their sum:
 * the first instant at which the processes together held the most, with
 * what each held at that instant; and each process's own peak. The sum of
 * the own peaks is returned apart, as a bound: it happened at no instant
 * unless the own peaks coincide. Memory: O(processes); one pass, a k-way
 * merge (a binary heap on the next change's time).
 *
 * Changes of several processes at the same nanosecond count as simultaneous
 * (all applied before the sum is looked at); several changes of one process
 * at one nanosecond leave its last value.
 */
#ifndef GMT_GROUP_H
#define GMT_GROUP_H

#include <stddef.h>
#include <stdint.h>

/* One change: from ts on, the process holds bytes (until its next change). */
typedef struct gmt_step {
	uint64_t ts;
	uint64_t bytes;
} gmt_step_t;

/* A process's changes, in nondecreasing ts: next() fills *out and returns
 * 1, or returns 0 at the end (and keeps returning 0). Before its first
 * change a process holds 0. A change older than the one before it is taken
 * at the earlier one's time (the merge never goes back). */
typedef struct gmt_group_src {
	int (*next)(void *ctx, gmt_step_t *out);
	void *ctx;
} gmt_group_src_t;

/* For an array of changes: a source over steps[0..n). */
typedef struct gmt_group_array {
	const gmt_step_t *steps;
	size_t n, i;
} gmt_group_array_t;
int gmt_group_array_next(void *ctx, gmt_step_t *out);

/* What each process held at the coinciding peak, and its own peak. */
typedef struct gmt_group_member {
	uint64_t at_peak;       /* bytes at the coinciding peak's instant       */
	uint64_t own_peak;      /* its own maximum                              */
	uint64_t own_peak_ts;   /* the first instant of it (0 if it never held) */
	uint64_t last_ts;       /* its last change (0 if none)                  */
} gmt_group_member_t;

typedef struct gmt_group_result {
	int found;              /* 0: no process ever held a byte               */
	uint64_t peak_ts;       /* the first instant the sum reached its maximum */
	uint64_t peak_bytes;    /* the sum then                                  */
	uint64_t own_peak_sum;  /* the sum of own peaks: a BOUND, not a moment   */
	uint64_t changes;       /* changes merged                                */
} gmt_group_result_t;

/* Merges n sources; members[i] describes source i. Returns 0, or -ENOMEM. */
int gmt_group_merge(const gmt_group_src_t *src, size_t n, gmt_group_member_t *members,
		    gmt_group_result_t *res);

/* Whether two devices are one physical device: the same host and the same
 * UUID (16 bytes). A UUID of all zeros is unknown: then the same host and
 * the same ordinal and name count as the same device (say so to the user:
 * the doubles and old drivers give no UUID). */
int gmt_group_same_device(const char *host_a, const uint8_t uuid_a[16], int ordinal_a,
			  const char *name_a, const char *host_b, const uint8_t uuid_b[16],
			  int ordinal_b, const char *name_b);

#endif /* GMT_GROUP_H */
