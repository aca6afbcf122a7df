/* bench_workload.h - shared shape of the benchmark workloads (private to
 * tests/routes): N allocation/free pairs made at call depth D, timed by the
 * program itself so that start-up and tracer shutdown are not counted. */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

typedef void (*bench_body_fn)(long pairs);

/* Recurses to depth d (no tail calls: each level keeps a frame), then runs
 * the body. */
__attribute__((noinline)) static long bench_descend(int d, long pairs, bench_body_fn body)
{
	volatile long keep = d;
	if (d <= 1)
		body(pairs);
	else
		bench_descend(d - 1, pairs, body);
	return keep;
}

/* argv: PAIRS DEPTH. Prints "pairs=N depth=D ns_per_event=X". */
static inline int bench_main(int argc, char **argv, void (*setup)(void), bench_body_fn body)
{
	long pairs = argc > 1 ? atol(argv[1]) : 1000000;
	int depth = argc > 2 ? atoi(argv[2]) : 20;
	if (setup)
		setup();
	body(1000); /* warm up: first touches, first stacks */
	double t0 = bench_now();
	bench_descend(depth, pairs, body);
	double t1 = bench_now();
	printf("pairs=%ld depth=%d ns_per_event=%.1f\n", pairs, depth,
	       (t1 - t0) / (2.0 * (double)pairs));
	return 0;
}
#endif
