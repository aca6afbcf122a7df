/*
 * route_devices - two devices (GMT_FAKE_DEVICES=2): allocations made under
 * each device's context are attributed to that device; a pool allocation to
 * the pool's device whatever context is current; cuMemCreate to
 * prop->location, also from a thread that has no context at all.
 */
#include <cuda.h>
#include <pthread.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

static CUmemGenericAllocationHandle hdl;

static void *worker(void *arg)
{
	CUcontext cur = (CUcontext)1;
	CUmemAllocationProp prop = { 0 };
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 1;
	if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != NULL)
		return (void *)1;
	if (cuMemCreate(&hdl, 2 * MiB, &prop, 0) != CUDA_SUCCESS)
		return (void *)2;
	return NULL;
}

static size_t held(CUcontext ctx)
{
	size_t fr = 0, total = 0;
	if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS || cuMemGetInfo(&fr, &total) != CUDA_SUCCESS ||
	    cuCtxPopCurrent(&ctx) != CUDA_SUCCESS)
		return (size_t)-1;
	return total - fr;
}

int main(void)
{
	CUcontext ctx0, ctx1;
	CUdeviceptr a0, a1, m1, b0, p1;
	CUmemoryPool pool1;
	pthread_t t;
	void *tr;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate dev0", cuCtxCreate(&ctx0, NULL, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc dev0", cuMemAlloc(&a0, MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate dev1", cuCtxCreate(&ctx1, NULL, 0, 1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc dev1", cuMemAlloc(&a1, 2 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocManaged dev1", cuMemAllocManaged(&m1, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent ctx0", cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc dev0 again", cuMemAlloc(&b0, 3 * MiB), CUDA_SUCCESS);

	CUmemPoolProps props = { 0 };
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 1;
	ROUTE_CHECK("cuMemPoolCreate dev1", cuMemPoolCreate(&pool1, &props), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocFromPoolAsync (ctx0 current)", cuMemAllocFromPoolAsync(&p1, 5000, pool1, NULL),
		    CUDA_SUCCESS);
	ROUTE_CHECK("pthread_create", pthread_create(&t, NULL, worker, NULL), 0);
	ROUTE_CHECK("pthread_join", pthread_join(t, &tr), 0);
	ROUTE_CHECK("worker", (intptr_t)tr, 0);
	route_name("ctx0", (uintptr_t)ctx0);
	route_name("ctx1", (uintptr_t)ctx1);
	route_name("a0", a0);
	route_name("a1", a1);
	route_name("m1", m1);
	route_name("b0", b0);
	route_name("p1", p1);
	route_name("pool1", (uintptr_t)pool1);
	route_name("hdl", hdl);
	ROUTE_CHECK("device 0 bytes held", held(ctx0), 4 * MiB);
	ROUTE_CHECK("device 1 bytes held", held(ctx1), 2 * MiB + 4096 + 2 * MiB + 2 * MiB);

	ROUTE_CHECK("cuMemRelease", cuMemRelease(hdl), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync", cuMemFreeAsync(p1, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolDestroy", cuMemPoolDestroy(pool1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree a1 (ctx0 current)", cuMemFree(a1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree m1", cuMemFree(m1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree a0", cuMemFree(a0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree b0", cuMemFree(b0), CUDA_SUCCESS);
	ROUTE_CHECK("device 0 bytes held", held(ctx0), 0);
	ROUTE_CHECK("device 1 bytes held", held(ctx1), 0);
	return 0;
}
