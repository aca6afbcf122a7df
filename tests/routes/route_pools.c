/*
 * route_pools - stream-ordered allocations in the right place
 * (tests/cases/route_pools.sh; GMT_FAKE_DEVICES=2). With device 0's
 * context current:
 *   A  cuMemAllocAsync 3 MiB on a stream of device 1: device 1's default
 *      pool (reserve 4 MiB), not the current context's device;
 *   B  cuMemAllocFromPoolAsync 1 MiB from a pool of device 1, on a stream
 *      of device 0: device 1 (pool reserve 2 MiB);
 *   C  5000 B from a pool located in host memory: host memory;
 *   D  3 MiB from a managed pool: managed memory;
 *   ncclMemAlloc(NULL, 4096): fails (ncclInvalidArgument) before any driver
 *      call: a failed allocation all the same.
 * The program reads cuMemGetInfo of both devices (its own samples) and
 * prints results and used bytes (the same with and without the preload).
 */
#include <cuda.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "route_util.h"

#define MiB (1024ull * 1024)

static size_t used_on(CUcontext ctx)
{
	size_t fr = 0, total = 0;
	CUcontext popped;

	ROUTE_CHECK("cuCtxPushCurrent", cuCtxPushCurrent(ctx), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxPopCurrent", cuCtxPopCurrent(&popped), CUDA_SUCCESS);
	return total - fr;
}

static CUmemoryPool make_pool(CUmemLocationType where, int id, CUmemAllocationType type)
{
	CUmemPoolProps props;
	CUmemoryPool p = NULL;

	memset(&props, 0, sizeof(props));
	props.allocType = type;
	props.location.type = where;
	props.location.id = id;
	ROUTE_CHECK("cuMemPoolCreate", cuMemPoolCreate(&p, &props), CUDA_SUCCESS);
	return p;
}

int main(void)
{
	CUcontext p0, p1;
	CUstream s0, s1;
	CUmemoryPool q1, h, m, def1;
	CUdeviceptr a, b, c, d;
	void *n = NULL;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 1", cuDevicePrimaryCtxRetain(&p1, 1), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent 1", cuCtxSetCurrent(p1), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamCreate s1", cuStreamCreate(&s1, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 0", cuDevicePrimaryCtxRetain(&p0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent 0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamCreate s0", cuStreamCreate(&s0, 0), CUDA_SUCCESS);
	route_name("s0", (uintptr_t)s0);
	route_name("s1", (uintptr_t)s1);
	ROUTE_CHECK("cuDeviceGetDefaultMemPool 1", cuDeviceGetDefaultMemPool(&def1, 1), CUDA_SUCCESS);
	route_name("def1", (uintptr_t)def1);

	ROUTE_CHECK("cuMemAllocAsync A (device 1's stream)", cuMemAllocAsync(&a, 3 * MiB, s1), CUDA_SUCCESS);
	route_name("a", a);
	q1 = make_pool(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ALLOCATION_TYPE_PINNED);
	route_name("q1", (uintptr_t)q1);
	ROUTE_CHECK("cuMemAllocFromPoolAsync B (device 1's pool)", cuMemAllocFromPoolAsync(&b, MiB, q1, s0),
		    CUDA_SUCCESS);
	route_name("b", b);
	h = make_pool(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED);
	route_name("h", (uintptr_t)h);
	ROUTE_CHECK("cuMemAllocFromPoolAsync C (host pool)", cuMemAllocFromPoolAsync(&c, 5000, h, s0), CUDA_SUCCESS);
	route_name("c", c);
	m = make_pool(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
	route_name("m", (uintptr_t)m);
	ROUTE_CHECK("cuMemAllocFromPoolAsync D (managed pool)", cuMemAllocFromPoolAsync(&d, 3 * MiB, m, s0),
		    CUDA_SUCCESS);
	route_name("d", d);
	/* Device 0 holds nothing; device 1 the two device pools' reserve. */
	ROUTE_CHECK("used on device 0", used_on(p0), 0);
	ROUTE_CHECK("used on device 1", used_on(p1), 6 * MiB);

	ROUTE_CHECK("ncclMemAlloc(NULL)", ncclMemAlloc(NULL, 4096), ncclInvalidArgument);
	(void)n;

	ROUTE_CHECK("cuMemFreeAsync A", cuMemFreeAsync(a, s1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync B", cuMemFreeAsync(b, s0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync C", cuMemFreeAsync(c, s0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync D", cuMemFreeAsync(d, s0), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize s1", cuStreamSynchronize(s1), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize s0", cuStreamSynchronize(s0), CUDA_SUCCESS);
	ROUTE_CHECK("used on device 1 at the end", used_on(p1), 0);
	ROUTE_CHECK("cuMemPoolDestroy q1", cuMemPoolDestroy(q1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolDestroy h", cuMemPoolDestroy(h), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolDestroy m", cuMemPoolDestroy(m), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamDestroy s0", cuStreamDestroy(s0), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamDestroy s1", cuStreamDestroy(s1), CUDA_SUCCESS);
	return 0;
}
