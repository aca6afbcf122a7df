/*
 * route_threads - 8 threads, each 20000 cuMemAlloc/cuMemFree pairs of the
 * same size at once. The driver double reuses a freed address at once (last
 * in, first out, any thread), so threads keep taking each other's
 * addresses: the trace is right only if every FREE is recorded before the
 * real free and every ALLOC after the real allocation.
 */
#include <cuda.h>
#include <pthread.h>

#include "route_util.h"

#define THREADS 8
#define PAIRS 20000

static CUcontext ctx;

static void *worker(void *arg)
{
	CUdeviceptr p;
	intptr_t bad = 0;

	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return (void *)-1;
	for (int i = 0; i < PAIRS; i++) {
		bad += cuMemAlloc(&p, 4096) != CUDA_SUCCESS;
		bad += cuMemFree(p) != CUDA_SUCCESS;
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t t[THREADS];
	intptr_t bad = 0;
	void *r;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	for (int i = 0; i < THREADS; i++)
		ROUTE_CHECK("pthread_create", pthread_create(&t[i], NULL, worker, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		ROUTE_CHECK("pthread_join", pthread_join(t[i], &r), 0);
		bad += (intptr_t)r;
	}
	ROUTE_CHECK("failed calls", bad, 0);
	return 0;
}
