/* double_pool.c - tests the driver double's stream-ordered allocator alone:
 * pool growth in 2 MiB granules, frees that complete at synchronisation
 * (stream, event recorded after the free, context), release down to the
 * threshold, cuMemPoolTrimTo, high-water marks and their reset, per-thread
 * default stream, created pools, deferred destruction, out of memory.
 * Expects GMT_FAKE_MEM_BYTES=1073741824 (tests/cases/doubles_pool.sh). */
#include <cuda.h>
#include <string.h>

#include "../fakecuda/double_check.h"

static uint64_t free_now(void)
{
	size_t f = 0, t = 0;

	cuMemGetInfo(&f, &t);
	return f;
}

static uint64_t attr(CUmemoryPool p, CUmemPool_attribute a)
{
	cuuint64_t v = 0;

	DC_EQ(CUDA_SUCCESS, cuMemPoolGetAttribute(p, a, &v));
	return v;
}

/* reserved, used, reserved high, used high */
#define POOL_IS(p, r, u, rh, uh) do { \
	DC_EQ(r, attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)); \
	DC_EQ(u, attr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)); \
	DC_EQ(rh, attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)); \
	DC_EQ(uh, attr(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH)); } while (0)

static void set_attr(CUmemoryPool p, CUmemPool_attribute a, cuuint64_t v, CUresult want)
{
	DC_EQ(want, cuMemPoolSetAttribute(p, a, &v));
}

int main(void)
{
	CUcontext ctx;
	CUstream s, s2;
	CUevent e, e2;
	CUmemoryPool P, Q, cur;
	CUmemPoolProps props;
	CUdeviceptr a, b, c, x, y, q1, q2, keep = 777;
	CUresult (*alloc_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*free_ptsz)(CUdeviceptr, CUstream);
	CUresult (*sync_ptsz)(CUstream);
	uint64_t f0;

	DC_EQ(CUDA_SUCCESS, cuInit(0));
	DC_EQ(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&ctx, 0));
	DC_EQ(CUDA_SUCCESS, cuCtxSetCurrent(ctx));
	DC_EQ(CUDA_SUCCESS, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	DC_EQ(CUDA_SUCCESS, cuStreamCreate(&s2, CU_STREAM_DEFAULT));
	DC_EQ(CUDA_SUCCESS, cuEventCreate(&e, CU_EVENT_DEFAULT));
	DC_EQ(CUDA_SUCCESS, cuEventCreate(&e2, CU_EVENT_DEFAULT));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetDefaultMemPool(&P, 0));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetMemPool(&cur, 0));
	DC_TRUE(cur == P);
	f0 = free_now();
	DC_EQ(1 << 30, f0);

	/* Growth: whole granules of roundup(rounded request, 2 MiB). */
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&a, 1000, s));
	POOL_IS(P, 2 * MiB, 1024, 2 * MiB, 1024);
	DC_EQ(f0 - 2 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&b, 3 * MiB, s));
	POOL_IS(P, 6 * MiB, 3 * MiB + 1024, 6 * MiB, 3 * MiB + 1024);
	DC_EQ(f0 - 6 * MiB, free_now());
	/* Fits in what is reserved: no growth. */
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&c, 1 * MiB, s));
	POOL_IS(P, 6 * MiB, 4 * MiB + 1024, 6 * MiB, 4 * MiB + 1024);
	/* A synchronisation releases reserved down to
	 * roundup(max(used, threshold 0), 2 MiB): 3 MiB + 1024 -> 4 MiB. */
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(c, s));
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s));
	POOL_IS(P, 4 * MiB, 3 * MiB + 1024, 6 * MiB, 4 * MiB + 1024);

	/* A free changes nothing until its stream is synchronised. */
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(b, s));
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(b, s));	/* already pending */
	POOL_IS(P, 4 * MiB, 3 * MiB + 1024, 6 * MiB, 4 * MiB + 1024);
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s2));	/* another stream: nothing */
	POOL_IS(P, 4 * MiB, 3 * MiB + 1024, 6 * MiB, 4 * MiB + 1024);
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s));
	POOL_IS(P, 2 * MiB, 1024, 6 * MiB, 4 * MiB + 1024);
	DC_EQ(f0 - 2 * MiB, free_now());

	/* Release threshold keeps reserved; an event recorded after the free
	 * completes it. */
	set_attr(P, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 8 * MiB, CUDA_SUCCESS);
	DC_EQ(8 * MiB, attr(P, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD));
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&c, 5 * MiB, s));	/* grows 6 MiB */
	POOL_IS(P, 8 * MiB, 5 * MiB + 1024, 8 * MiB, 5 * MiB + 1024);
	DC_EQ(CUDA_SUCCESS, cuEventRecord(e2, s));		/* before the free */
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(c, s));
	DC_EQ(CUDA_SUCCESS, cuEventRecord(e, s));		/* after the free */
	DC_EQ(CUDA_SUCCESS, cuEventSynchronize(e2));
	POOL_IS(P, 8 * MiB, 5 * MiB + 1024, 8 * MiB, 5 * MiB + 1024);
	DC_EQ(CUDA_SUCCESS, cuEventSynchronize(e));
	POOL_IS(P, 8 * MiB, 1024, 8 * MiB, 5 * MiB + 1024);
	DC_EQ(f0 - 8 * MiB, free_now());

	/* TrimTo: down to max(roundup(used), roundup(keep)). */
	DC_EQ(CUDA_SUCCESS, cuMemPoolTrimTo(P, 3 * MiB));
	POOL_IS(P, 4 * MiB, 1024, 8 * MiB, 5 * MiB + 1024);
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemPoolTrimTo(P, 64 * MiB));	/* keeps what it has */
	POOL_IS(P, 4 * MiB, 1024, 8 * MiB, 5 * MiB + 1024);

	/* High-water marks: only 0 may be set, and it resets to current. */
	set_attr(P, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 5, CUDA_ERROR_INVALID_VALUE);
	set_attr(P, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0, CUDA_SUCCESS);
	set_attr(P, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0, CUDA_SUCCESS);
	POOL_IS(P, 4 * MiB, 1024, 4 * MiB, 1024);

	/* Context synchronisation completes every stream's frees; with the
	 * threshold above reserved nothing is released, at 0 everything. */
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(a, s2));
	DC_EQ(CUDA_SUCCESS, cuCtxSynchronize());
	POOL_IS(P, 4 * MiB, 0, 4 * MiB, 1024);
	set_attr(P, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0, CUDA_SUCCESS);
	DC_EQ(CUDA_SUCCESS, cuCtxSynchronize_v2(ctx));
	POOL_IS(P, 0, 0, 4 * MiB, 1024);
	DC_EQ(f0, free_now());

	/* Freed block's address is reused once the free completed. */
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&x, 1000, s));
	DC_EQ(a, x);
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(x, s));
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s));

	/* Per-thread default stream: the _ptsz variants with stream 0 and
	 * CU_STREAM_PER_THREAD are one stream, distinct from the legacy one. */
	DC_EQ(CUDA_SUCCESS, cuGetProcAddress_v2("cuMemAllocAsync", (void **)&alloc_ptsz, 13000,
						CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	DC_EQ(CUDA_SUCCESS, cuGetProcAddress_v2("cuMemFreeAsync", (void **)&free_ptsz, 13000,
						CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	DC_EQ(CUDA_SUCCESS, cuGetProcAddress_v2("cuStreamSynchronize", (void **)&sync_ptsz, 13000,
						CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	DC_EQ(CUDA_SUCCESS, alloc_ptsz(&y, 1 * MiB, NULL));
	DC_EQ(CUDA_SUCCESS, free_ptsz(y, NULL));
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(NULL));	/* legacy stream: not it */
	DC_EQ(1 * MiB, attr(P, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(CU_STREAM_PER_THREAD));
	DC_EQ(0, attr(P, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
	DC_EQ(CUDA_SUCCESS, alloc_ptsz(&y, 1 * MiB, NULL));
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(y, CU_STREAM_PER_THREAD));
	DC_EQ(CUDA_SUCCESS, sync_ptsz(NULL));
	DC_EQ(0, attr(P, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
	DC_EQ(f0, free_now());

	/* Out of memory: untouched out-parameter, nothing reserved. */
	DC_EQ(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocAsync(&keep, f0 + 1, s));
	DC_EQ(777, keep);
	DC_EQ(0, attr(P, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));
	/* The largest request that fits: exactly the free bytes. */
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&x, f0, s));
	DC_EQ(0, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(x, s));
	DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s));
	DC_EQ(f0, free_now());

	/* A created pool with a maximum size, made current for the device. */
	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	props.maxSize = 4 * MiB;
	DC_EQ(CUDA_SUCCESS, cuMemPoolCreate(&Q, &props));
	DC_EQ(CUDA_SUCCESS, cuMemAllocFromPoolAsync(&q1, 3 * MiB, Q, s));
	POOL_IS(Q, 4 * MiB, 3 * MiB, 4 * MiB, 3 * MiB);
	keep = 777;
	DC_EQ(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocFromPoolAsync(&keep, 2 * MiB, Q, s));
	DC_EQ(777, keep);
	DC_EQ(CUDA_SUCCESS, cuDeviceSetMemPool(0, Q));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetMemPool(&cur, 0));
	DC_TRUE(cur == Q);
	DC_EQ(CUDA_SUCCESS, cuMemAllocAsync(&q2, 100, s));	/* from Q now */
	POOL_IS(Q, 4 * MiB, 3 * MiB + 512, 4 * MiB, 3 * MiB + 512);
	DC_EQ(f0 - 4 * MiB, free_now());
	/* Destroying a pool with live blocks defers it to their last free. */
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(P));	/* default pool */
	DC_EQ(CUDA_SUCCESS, cuMemPoolDestroy(Q));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetMemPool(&cur, 0));
	DC_TRUE(cur == P);
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(q1, s));
	DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(q2, s));
	/* Destroying the stream completes its frees. */
	DC_EQ(CUDA_SUCCESS, cuStreamDestroy(s));
	DC_EQ(f0, free_now());

	/* Pools located in host memory and managed pools charge no device
	 * (their blocks are not device memory): reserved and used follow the
	 * same rules, the device's free bytes do not move. */
	{
		CUmemoryPool H, M, Hd, Md, cur2;
		CUdeviceptr h1, m1;
		CUmemLocation loc = { CU_MEM_LOCATION_TYPE_HOST, 0 };
		CUdevice sd = -1;
		CUcontext sc = NULL, cc = NULL;
		int ord = 7;
		unsigned managed = 0;

		memset(&props, 0, sizeof(props));
		props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		props.location.type = CU_MEM_LOCATION_TYPE_HOST;
		DC_EQ(CUDA_SUCCESS, cuMemPoolCreate(&H, &props));
		props.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
		DC_EQ(CUDA_SUCCESS, cuMemPoolCreate(&Hd, &props));
		DC_EQ(CUDA_SUCCESS, cuMemPoolDestroy(Hd));
		props.location.type = CU_MEM_LOCATION_TYPE_NONE;
		DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&Hd, &props));	/* pinned needs a place */
		props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
		DC_EQ(CUDA_SUCCESS, cuMemPoolCreate(&M, &props));
		DC_EQ(CUDA_SUCCESS, cuMemAllocFromPoolAsync(&h1, 5000, H, s2));
		DC_EQ(CUDA_SUCCESS, cuMemAllocFromPoolAsync(&m1, 3 * MiB, M, s2));
		POOL_IS(H, 2 * MiB, 5120, 2 * MiB, 5120);
		POOL_IS(M, 4 * MiB, 3 * MiB, 4 * MiB, 3 * MiB);
		DC_EQ(f0, free_now());
		DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, h1));
		DC_EQ(-1, ord);
		DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m1));
		DC_EQ(1, managed);
		/* CUDA 13's look-ups by location: one host pool and one managed
		 * pool per process, a device's pinned pools are the device's. */
		DC_EQ(CUDA_SUCCESS, cuMemGetDefaultMemPool(&Hd, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
		DC_EQ(CUDA_SUCCESS, cuMemGetDefaultMemPool(&Md, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
		DC_TRUE(Hd != Md && Hd != H);
		DC_EQ(CUDA_SUCCESS, cuMemGetMemPool(&cur2, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
		DC_TRUE(cur2 == Hd);
		loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
		DC_EQ(CUDA_SUCCESS, cuMemGetMemPool(&cur2, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
		DC_TRUE(cur2 == P);
		DC_EQ(CUDA_ERROR_INVALID_VALUE, cuDeviceSetMemPool(0, H));	/* not the device's */
		DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(h1, s2));
		DC_EQ(CUDA_SUCCESS, cuMemFreeAsync(m1, s2));
		DC_EQ(CUDA_SUCCESS, cuStreamSynchronize(s2));
		POOL_IS(H, 0, 0, 2 * MiB, 5120);
		POOL_IS(M, 0, 0, 4 * MiB, 3 * MiB);
		DC_EQ(CUDA_SUCCESS, cuMemPoolDestroy(H));
		DC_EQ(CUDA_SUCCESS, cuMemPoolDestroy(M));
		/* A stream's device and context. */
		DC_EQ(CUDA_SUCCESS, cuStreamGetDevice(s2, &sd));
		DC_EQ(0, sd);
		DC_EQ(CUDA_SUCCESS, cuStreamGetCtx(s2, &sc));
		DC_EQ(CUDA_SUCCESS, cuCtxGetCurrent(&cc));
		DC_TRUE(sc == cc && sc != NULL);
		DC_EQ(CUDA_SUCCESS, cuStreamGetDevice(NULL, &sd));
		DC_EQ(0, sd);
	}

	DC_EQ(CUDA_SUCCESS, cuEventDestroy(e));
	DC_EQ(CUDA_SUCCESS, cuEventDestroy(e2));
	DC_EQ(CUDA_SUCCESS, cuStreamDestroy(s2));
	DC_DONE();
}
