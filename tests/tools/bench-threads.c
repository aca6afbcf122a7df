/*
 * bench-threads - the writer under many threads (make bench): T threads
 * each record R events a second for S seconds through the tracer core
 * (gmt_emit: the hot path and the writer, no driver double), paced in
 * bursts of R/1000 events a millisecond; then the trace is flushed.
 * Prints what was recorded, written and dropped, and the CPU per event of
 * the recording threads and of the whole process.
 *
 *   bench-threads DIR [THREADS (8)] [RATE (2000000)] [SECONDS (2)]
 *
 * The configuration is the environment's (GPUMEMTRACE_BUFFER_MB ...),
 * stacks off.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gmt_tracer.h"

static long rate;
static double seconds;
static _Atomic uint64_t thread_cpu_ns;
static pthread_barrier_t go;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *worker(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg, i = 0;
	long burst = rate / 1000;
	pthread_barrier_wait(&go);
	uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t end = t0 + (uint64_t)(seconds * 1e9);
	for (uint64_t slot = t0; slot < end; slot += 1000000) {
		for (long b = 0; b < burst; b++, i++) {
			gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
					  .addr = (k << 40) + (i / 2 % 1024) * 4096,
					  .size = 4096 + (i & 7) * 512, .device = (i & 1) ? -1 : 0 };
			gmt_emit(&e, 0, 0);
		}
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now < slot + 1000000) {
			struct timespec d = { 0, (long)(slot + 1000000 - now) };
			nanosleep(&d, NULL);
		}
	}
	atomic_fetch_add(&thread_cpu_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench-threads DIR [THREADS] [RATE] [SECONDS]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 8;
	rate = argc > 3 ? atol(argv[3]) : 2000000;
	seconds = argc > 4 ? atof(argv[4]) : 2;
	gmt_config_t cfg;
	gmt_config_from_env(&cfg);
	cfg.output = argv[1];
	cfg.stack_depth = 0;
	if (gmt_tracer_init(&cfg))
		return 1;
	pthread_t *th = calloc((size_t)threads, sizeof(*th));
	pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
	for (int k = 0; k < threads; k++)
		pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)k);
	uint64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&go);
	for (int k = 0; k < threads; k++)
		pthread_join(th[k], NULL);
	gmt_tracer_flush(10000);
	uint64_t p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	uint64_t all = st.emitted + st.dropped;
	printf("threads=%d rate=%ld seconds=%.1f events=%llu written=%llu dropped=%llu "
	       "wall_s=%.2f thread_ns_per_event=%.1f cpu_ns_per_event=%.1f\n",
	       threads, rate, seconds, (unsigned long long)all, (unsigned long long)st.written,
	       (unsigned long long)st.dropped, (double)(w1 - w0) * 1e-9,
	       (double)atomic_load(&thread_cpu_ns) / (double)all, (double)(p1 - p0) / (double)all);
	gmt_tracer_shutdown();
	return 0;
}
