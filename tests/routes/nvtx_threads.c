/*
 * nvtx_threads - phase boundaries on a thread that makes no CUDA call of its
 * own (tests/cases/nvtx_threads.sh). The main thread allocates (a traced
 * call), then a second thread makes the same context current with
 * cuCtxSetCurrent (not traced: as the driver does for the thread that runs
 * a host function, where CUDA calls are not allowed) and opens and closes
 * the range "worker"; then the main thread opens and closes "main". Only
 * "main"'s boundaries may read the device.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>

static CUcontext ctx;

static void *worker(void *arg)
{
	(void)arg;
	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return (void *)1;
	nvtxRangePushA("worker");
	nvtxRangePop();
	return NULL;
}

int main(void)
{
	void *p = NULL, *rv = (void *)1;
	pthread_t t;

	if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&p, 1 << 20) != cudaSuccess ||
	    cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
		printf("set-up failed\n");
		return 1;
	}
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, &rv) || rv) {
		printf("worker failed\n");
		return 1;
	}
	nvtxRangePushA("main");
	nvtxRangePop();
	cudaFree(p);
	printf("done\n");
	return 0;
}
