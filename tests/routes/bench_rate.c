/* bench_rate.c - THREADS threads, each making cuMemAlloc_v2/cuMemFree_v2
 * pairs on the driver double at RATE events a second for SECONDS seconds
 * (make bench's "offered rate" section: is the writer ever the
 * bottleneck?).
 *   bench_rate THREADS RATE SECONDS
 * Each thread keeps to its schedule (RATE * elapsed events): ahead of it,
 * it sleeps; behind it (the machine cannot run it that fast), it runs
 * flat out and the printed rate says how far it got. Prints
 * "threads=T rate=R seconds=S offered=N offered_per_s=X per_thread_per_s=Y"
 * after gpumemtrace_flush() returned (when the preload is there): offered
 * counts the events the program made (two per pair), to be compared with
 * what the trace holds (written) and what it says it dropped. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_workload.h"

static CUcontext ctx;
static double rate, seconds;
static _Atomic long offered;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	long id = (long)arg, n = 0;
	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		exit(1);
	pthread_barrier_wait(&start);
	double t0 = bench_now(), end = t0 + seconds * 1e9;
	for (;;) {
		double now = bench_now();
		if (now >= end)
			break;
		/* the events due by now, a burst of at most 64 pairs at a time */
		double due = (now - t0) * 1e-9 * rate;
		if ((double)n >= due + 128) {
			double wait_ns = ((double)n - due) / rate * 1e9;
			struct timespec d = { 0, (long)(wait_ns < 1e6 ? wait_ns : 1e6) };
			nanosleep(&d, NULL);
			continue;
		}
		for (int i = 0; i < 64; i++) {
			CUdeviceptr p;
			if (cuMemAlloc_v2(&p, 4096 + (size_t)((n / 2 + id) & 7) * 512) != CUDA_SUCCESS)
				exit(1);
			cuMemFree_v2(p);
			n += 2;
		}
	}
	atomic_fetch_add(&offered, n);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 8;
	rate = argc > 2 ? atof(argv[2]) : 2e6;
	seconds = argc > 3 ? atof(argv[3]) : 2;
	if (threads < 1 || threads > 256 || rate <= 0 || seconds <= 0) {
		fprintf(stderr, "usage: bench_rate THREADS RATE SECONDS\n");
		return 2;
	}
	CUdevice dev;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev)) {
		fprintf(stderr, "bench_rate: no device\n");
		return 1;
	}
	int (*flush)(void);
	*(void **)&flush = dlsym(RTLD_DEFAULT, "gpumemtrace_flush");
	pthread_t th[256];
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 1;
	pthread_barrier_wait(&start);
	double t0 = bench_now();
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	double t1 = bench_now();
	if (flush)
		flush();
	long n = atomic_load(&offered);
	printf("threads=%d rate=%.0f seconds=%.1f offered=%ld offered_per_s=%.0f per_thread_per_s=%.0f\n",
	       threads, rate, seconds, n, n / ((t1 - t0) * 1e-9), n / ((t1 - t0) * 1e-9) / threads);
	return 0;
}
