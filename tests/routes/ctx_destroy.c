/*
 * ctx_destroy - allocations that a destroyed context takes with it
 * (tests/cases/ctx_destroy.sh). "driver" (default), two devices:
 *
 *   device 0, primary context P (retained): A 1 MiB, host H 64 KiB, S 2 MiB
 *     stream-ordered then freed on the stream (not synchronised), V a 2 MiB
 *     VMM handle mapped into a reservation;
 *   cuDevicePrimaryCtxReset: A, H (and S's pending free) go; V stays;
 *   P retained again: B 3 MiB (device 0 now 5 MiB: its peak would be 6
 *     with A still counted);
 *   device 1, created context C1: D 4 MiB; cuCtxDestroy(C1): D goes;
 *   device 0, created context C3 beside P: E 512 KiB; cuCtxDestroy(C3): E
 *     goes, B stays (the trace says which context each was made under);
 *   P released twice: the second release destroys it: B and E go.
 *
 * "runtime": cudaMalloc 8 MiB, cudaDeviceReset, cudaMalloc 1 MiB.
 * Prints results and cuMemGetInfo deltas (the same with and without the
 * preload).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "route_util.h"

#define MiB (1024ull * 1024)
#define KiB 1024ull

static size_t used(void)
{
	size_t fr = 0, total = 0;
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	return total - fr;
}

static int runtime(void)
{
	void *a, *b;
	size_t fr, total, u0, u1;

	ROUTE_CHECK("cudaMalloc 8 MiB", cudaMalloc(&a, 8 * MiB), cudaSuccess);
	ROUTE_CHECK("cudaMemGetInfo", cudaMemGetInfo(&fr, &total), cudaSuccess);
	u0 = total - fr;
	ROUTE_CHECK("used", u0, 8 * MiB);
	ROUTE_CHECK("cudaDeviceReset", cudaDeviceReset(), cudaSuccess);
	ROUTE_CHECK("cudaMalloc 1 MiB", cudaMalloc(&b, MiB), cudaSuccess);
	ROUTE_CHECK("cudaMemGetInfo", cudaMemGetInfo(&fr, &total), cudaSuccess);
	u1 = total - fr;
	ROUTE_CHECK("used after the reset", u1, MiB);
	ROUTE_CHECK("cudaFree", cudaFree(b), cudaSuccess);
	return 0;
}

int main(int argc, char **argv)
{
	CUdevice d0, d1;
	CUcontext p, p2, c1, c3;
	CUdeviceptr a, s, b, d, e, va;
	CUmemGenericAllocationHandle v;
	void *h;

	if (argc > 1 && !strcmp(argv[1], "runtime"))
		return runtime();
	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGet 0", cuDeviceGet(&d0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGet 1", cuDeviceGet(&d1, 1), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&p, d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent", cuCtxSetCurrent(p), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc A", cuMemAlloc(&a, MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocHost H", cuMemAllocHost(&h, 64 * KiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocAsync S", cuMemAllocAsync(&s, 2 * MiB, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync S", cuMemFreeAsync(s, NULL), CUDA_SUCCESS);
	CUmemAllocationProp vp = { 0 };
	vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	vp.location.id = 0;
	ROUTE_CHECK("cuMemCreate V", cuMemCreate(&v, 2 * MiB, &vp, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAddressReserve", cuMemAddressReserve(&va, 2 * MiB, 2 * MiB, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemMap", cuMemMap(va, 2 * MiB, 0, v, 0), CUDA_SUCCESS);
	/* A 1 + the pool's 2 MiB (S's free waits for the stream) + V 2 */
	ROUTE_CHECK("used", used(), 5 * MiB);

	ROUTE_CHECK("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&p2, d0), CUDA_SUCCESS);
	ROUTE_CHECK("the same primary context", p2 == p, 1);
	ROUTE_CHECK("cuCtxSetCurrent", cuCtxSetCurrent(p), CUDA_SUCCESS);
	ROUTE_CHECK("used after the reset (V)", used(), 2 * MiB);
	ROUTE_CHECK("cuMemAlloc B", cuMemAlloc(&b, 3 * MiB), CUDA_SUCCESS);

	ROUTE_CHECK("cuCtxCreate C1", cuCtxCreate(&c1, NULL, 0, d1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc D", cuMemAlloc(&d, 4 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("used on device 1", used(), 4 * MiB);
	ROUTE_CHECK("cuCtxDestroy C1", cuCtxDestroy(c1), CUDA_SUCCESS);

	ROUTE_CHECK("cuCtxCreate C3", cuCtxCreate(&c3, NULL, 0, d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc E", cuMemAlloc(&e, 512 * KiB), CUDA_SUCCESS);
	ROUTE_CHECK("used with E", used(), 5 * MiB + 512 * KiB);
	ROUTE_CHECK("cuCtxDestroy C3", cuCtxDestroy(c3), CUDA_SUCCESS);
	ROUTE_CHECK("used after C3 (B, V)", used(), 5 * MiB);

	ROUTE_CHECK("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRelease (the last)", cuDevicePrimaryCtxRelease(d0), CUDA_SUCCESS);
	/* V belongs to no context: it stays until released. */
	ROUTE_CHECK("cuCtxCreate C4", cuCtxCreate(&c3, NULL, 0, d0), CUDA_SUCCESS);
	ROUTE_CHECK("used at the end (V)", used(), 2 * MiB);
	ROUTE_CHECK("cuCtxDestroy C4", cuCtxDestroy(c3), CUDA_SUCCESS);
	return 0;
}
