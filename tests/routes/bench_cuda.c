/* bench_cuda.c - N cuMemAlloc_v2/cuMemFree_v2 pairs at call depth D on the
 * driver double (make bench runs it plain and traced). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include "bench_workload.h"

static CUcontext ctx;

static void setup(void)
{
	CUdevice dev;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "bench_cuda: no device\n");
		exit(1);
	}
}

static void body(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096 + (size_t)(i & 7) * 512) != CUDA_SUCCESS)
			exit(1);
		cuMemFree_v2(p);
	}
}

int main(int argc, char **argv)
{
	return bench_main(argc, argv, setup, body);
}
