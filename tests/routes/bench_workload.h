/* bench_workload.h - shared shape of the benchmark workloads (private to
 * tests/routes): N allocation/free pairs made at call depth D, timed by the
 * program itself so that start-up and tracer shutdown are not counted.
 * Three figures per event: wall clock in the loop; CPU time of the thread
 * that runs the loop (what the allocating thread pays, whatever else the
 * machine runs); CPU time of the whole process from the loop's start until
 * gpumemtrace_flush() returned when the preload is there (the writer
 * thread's share included: what the tracer costs the machine). */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_clock(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static inline double bench_now(void)
{
	return bench_clock(CLOCK_MONOTONIC);
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

/* argv: PAIRS DEPTH. Prints "pairs=N depth=D ns_per_event=X
 * thread_ns_per_event=Y cpu_ns_per_event=Z". */
static inline int bench_main(int argc, char **argv, void (*setup)(void), bench_body_fn body)
{
	long pairs = argc > 1 ? atol(argv[1]) : 1000000;
	int depth = argc > 2 ? atoi(argv[2]) : 20;
	int (*flush)(void);
	*(void **)&flush = dlsym(RTLD_DEFAULT, "gpumemtrace_flush");
	if (setup)
		setup();
	body(1000); /* warm up: first touches, first stacks */
	if (flush)
		flush();
	double c0 = bench_clock(CLOCK_PROCESS_CPUTIME_ID);
	double u0 = bench_clock(CLOCK_THREAD_CPUTIME_ID);
	double t0 = bench_now();
	bench_descend(depth, pairs, body);
	double t1 = bench_now();
	double u1 = bench_clock(CLOCK_THREAD_CPUTIME_ID);
	if (flush)
		flush();
	double c1 = bench_clock(CLOCK_PROCESS_CPUTIME_ID);
	double ev = 2.0 * (double)pairs;
	printf("pairs=%ld depth=%d ns_per_event=%.1f thread_ns_per_event=%.1f cpu_ns_per_event=%.1f\n",
	       pairs, depth, (t1 - t0) / ev, (u1 - u0) / ev, (c1 - c0) / ev);
	return 0;
}
#endif
