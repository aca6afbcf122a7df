/*
 * route_driver - route 1: a program linked against libcuda calling the
 * exported driver symbols directly (cuMemAlloc -> cuMemAlloc_v2 through the
 * header's macros). Every kind of memory, pools, virtual memory and the
 * three synchronisation points, in an order tests/cases/route_driver.sh
 * knows exactly.
 */
#include <cuda.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr a, p, m, as, pa, va;
	CUmemGenericAllocationHandle hdl;
	CUstream s;
	CUevent e;
	CUmemoryPool pool, defpool;
	size_t pitch, free0, free1, total;
	void *h, *h2;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
	route_name("ctx", (uintptr_t)ctx);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&free0, &total), CUDA_SUCCESS);

	ROUTE_CHECK("cuMemAlloc", cuMemAlloc(&a, MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocPitch", cuMemAllocPitch(&p, &pitch, 1000, 10, 4), CUDA_SUCCESS);
	ROUTE_CHECK("pitch", pitch, 1024);
	ROUTE_CHECK("cuMemAllocManaged", cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocHost", cuMemAllocHost(&h, 8192), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemHostAlloc", cuMemHostAlloc(&h2, 4096, 0), CUDA_SUCCESS);
	route_name("a", a);
	route_name("p", p);
	route_name("m", m);
	route_name("h", (uintptr_t)h);
	route_name("h2", (uintptr_t)h2);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
	ROUTE_CHECK("device bytes held", free0 - free1, MiB + 10240 + 4096);

	/* Stream-ordered, from the device's default pool. */
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	route_name("s", (uintptr_t)s);
	ROUTE_CHECK("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&defpool, dev), CUDA_SUCCESS);
	route_name("defpool", (uintptr_t)defpool);
	ROUTE_CHECK("cuMemAllocAsync", cuMemAllocAsync(&as, 3000, s), CUDA_SUCCESS);
	route_name("as", as);
	ROUTE_CHECK("cuMemFreeAsync", cuMemFreeAsync(as, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);

	/* An explicit pool, synchronised through an event. */
	CUmemPoolProps props = { 0 };
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	ROUTE_CHECK("cuMemPoolCreate", cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
	route_name("pool", (uintptr_t)pool);
	ROUTE_CHECK("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync(&pa, 5000, pool, s), CUDA_SUCCESS);
	route_name("pa", pa);
	ROUTE_CHECK("cuMemFreeAsync", cuMemFreeAsync(pa, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuEventCreate", cuEventCreate(&e, 0), CUDA_SUCCESS);
	route_name("e", (uintptr_t)e);
	ROUTE_CHECK("cuEventRecord", cuEventRecord(e, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuEventSynchronize", cuEventSynchronize(e), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolTrimTo", cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolDestroy", cuMemPoolDestroy(pool), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);

	/* Many synchronisation points in a short time: each is recorded, the
	 * samples at most every 10 ms. */
	int bad = 0;
	for (int i = 0; i < 3000; i++)
		bad += cuStreamSynchronize(s) != CUDA_SUCCESS;
	ROUTE_CHECK("3000 x cuStreamSynchronize failures", bad, 0);

	/* Virtual memory: 2 MiB physical mapped into a 4 MiB reservation. */
	CUmemAllocationProp vp = { 0 };
	vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	vp.location.id = 0;
	ROUTE_CHECK("cuMemCreate", cuMemCreate(&hdl, 2 * MiB, &vp, 0), CUDA_SUCCESS);
	route_name("hdl", hdl);
	ROUTE_CHECK("cuMemAddressReserve", cuMemAddressReserve(&va, 4 * MiB, 2 * MiB, 0, 0), CUDA_SUCCESS);
	route_name("va", va);
	ROUTE_CHECK("cuMemMap", cuMemMap(va, 2 * MiB, 0, hdl, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemUnmap", cuMemUnmap(va, 2 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAddressFree", cuMemAddressFree(va, 4 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemRelease", cuMemRelease(hdl), CUDA_SUCCESS);

	ROUTE_CHECK("cuMemFree a", cuMemFree(a), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree p", cuMemFree(p), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree m", cuMemFree(m), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeHost h", cuMemFreeHost(h), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeHost h2", cuMemFreeHost(h2), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
	ROUTE_CHECK("device bytes held", free0 - free1, 0);
	ROUTE_CHECK("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);
	return 0;
}
