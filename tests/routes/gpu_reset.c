/*
 * gpu_reset - what cudaDeviceReset takes with it, measured: the program of
 * the GPU check's row 15 (scripts/gpu-check.sh, docs/gpu-validation.md),
 * built against the real runtime by `make gpu-progs` and against the test
 * doubles as a route program (tests/cases/gpu_reset.sh runs the row's
 * evaluator on them).
 *
 *   A: cudaMalloc 256 MiB; V: cuMemCreate 64 MiB mapped into a reservation
 *   cudaDeviceReset, then cudaFree(NULL) (the runtime makes a context again)
 *   V unmapped, released, its range freed: the device memory that this
 *   gives back is what V still held after the reset (0 if the reset took it)
 *   B: cudaMalloc 128 MiB, cudaFree(B)
 *
 * Prints every result and the device-used deltas (cudaMemGetInfo) that say
 * what the driver did; the same with and without the tracer.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#define MiB (1024ll * 1024)

static long long used(void)
{
	size_t fr = 0, total = 0;
	if (cudaMemGetInfo(&fr, &total) != cudaSuccess)
		return -1;
	return (long long)(total - fr);
}

int main(void)
{
	void *a = NULL, *b = NULL;
	CUmemGenericAllocationHandle v = 0;
	CUdeviceptr va = 0;
	CUmemAllocationProp vp = { 0 };
	long long u0, u1, u2, u3;
	int rc = 0;

	printf("cudaSetDevice: %d\n", (int)cudaSetDevice(0));
	printf("cudaFree(NULL): %d\n", (int)cudaFree(NULL));
	u0 = used();
	printf("cudaMalloc A 256 MiB: %d\n", (int)cudaMalloc(&a, 256 * MiB));
	vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	vp.location.id = 0;
	printf("cuMemCreate V 64 MiB: %d\n", (int)cuMemCreate(&v, 64 * MiB, &vp, 0));
	printf("cuMemAddressReserve: %d\n", (int)cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0));
	printf("cuMemMap: %d\n", (int)cuMemMap(va, 64 * MiB, 0, v, 0));
	u1 = used();
	printf("held before the reset: %lld\n", u0 < 0 || u1 < 0 ? -1 : u1 - u0);
	printf("cudaDeviceReset: %d\n", (int)cudaDeviceReset());
	printf("cudaFree(NULL) after the reset: %d\n", (int)cudaFree(NULL));
	u2 = used();
	printf("cuMemUnmap: %d\n", (int)cuMemUnmap(va, 64 * MiB));
	printf("cuMemRelease: %d\n", (int)cuMemRelease(v));
	printf("cuMemAddressFree: %d\n", (int)cuMemAddressFree(va, 64 * MiB));
	u3 = used();
	printf("V held after the reset: %lld\n", u2 < 0 || u3 < 0 ? -1 : u2 - u3);
	printf("cudaMalloc B 128 MiB: %d\n", (int)cudaMalloc(&b, 128 * MiB));
	printf("cudaFree B: %d\n", (int)cudaFree(b));
	if (u0 < 0 || u1 < 0 || u2 < 0 || u3 < 0)
		rc = 1;
	return rc;
}
