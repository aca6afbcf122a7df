/*
 * route_fail - failures (run with GMT_FAKE_MEM_BYTES=67108864, 64 MiB):
 * allocations the device cannot hold, through the driver and the runtime,
 * plain, stream-ordered and virtual memory; a free of a pointer that was
 * never allocated. The program must see exactly the error it sees without
 * the preload. With the argument "kill" it kills itself (SIGKILL) right
 * after the first failure: what a post-mortem finds on disk then.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr a = 0x1111, b, as = 0x2222;
	CUmemGenericAllocationHandle hdl = 0x3333;
	void *r = (void *)0x4444;
	CUstream s;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc 16 MiB", cuMemAlloc(&b, 16 * MiB), CUDA_SUCCESS);
	route_name("b", b);
	ROUTE_CHECK("cuMemAlloc 128 MiB", cuMemAlloc(&a, 128 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	ROUTE_CHECK("out-parameter untouched", a, 0x1111);
	if (argc > 1 && strcmp(argv[1], "kill") == 0) {
		fflush(stdout);
		kill(getpid(), SIGKILL);
	}
	ROUTE_CHECK("cudaMalloc 100 MiB", cudaMalloc(&r, 100 * MiB), cudaErrorMemoryAllocation);
	ROUTE_CHECK("out-parameter untouched", (uintptr_t)r, 0x4444);
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	route_name("s", (uintptr_t)s);
	ROUTE_CHECK("cuMemAllocAsync 60 MiB", cuMemAllocAsync(&as, 60 * MiB, s), CUDA_ERROR_OUT_OF_MEMORY);
	ROUTE_CHECK("out-parameter untouched", as, 0x2222);
	CUmemAllocationProp prop = { 0 };
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	ROUTE_CHECK("cuMemCreate 64 MiB", cuMemCreate(&hdl, 64 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	ROUTE_CHECK("cuMemCreate 1 MiB (not a multiple of the granularity)", cuMemCreate(&hdl, MiB, &prop, 0),
		    CUDA_ERROR_INVALID_VALUE);
	ROUTE_CHECK("out-parameter untouched", hdl, 0x3333);
	CUresult bogus = cuMemFree((CUdeviceptr)0xdead000);
	printf("cuMemFree of a bogus pointer = %d\n", (int)bogus);
	ROUTE_CHECK("it failed", bogus != CUDA_SUCCESS, 1);
	ROUTE_CHECK("cuMemFree b", cuMemFree(b), CUDA_SUCCESS);
	return 0;
}
