/*
 * route_pool_recycle - a pool made at the address of a destroyed one is a
 * new pool: its reserve is read at the synchronisations that may trim it
 * (tests/cases/route_pool_recycle.sh; GPUMEMTRACE_SYNC_SAMPLE_MS=3600000:
 * only the device's first synchronisation takes its full sample). The
 * preload keeps, per thread, the last pool it marked as serving
 * stream-ordered allocations; a destruction must end that.
 * Device 0, its primary context current, stream S:
 *   1  pool P (release threshold at the maximum): 3 MiB from P, freed, S
 *      synchronised (the full sample): P keeps 4 MiB;
 *   2  cuMemPoolTrimTo(P, 0), cuMemPoolDestroy(P);
 *   3  pool P2, which gets P's handle (GMT_FAKE_POOL_RECYCLE), threshold at
 *      the maximum: 3 MiB from P2, freed, S synchronised: P2 keeps 4 MiB;
 *   4  P2's threshold set to 0, S synchronised: that synchronisation trims
 *      P2 to 0, and its sample must say so;
 *   5  cuMemAlloc Y 3 MiB, kept: taken from the device 3 MiB, not 7.
 * The program prints results and the bytes used (the same with and
 * without the preload).
 */
#include <cuda.h>
#include <string.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

static size_t used_now(void)
{
	size_t fr = 0, total = 0;

	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	return total - fr;
}

static CUmemoryPool make_pool(void)
{
	cuuint64_t big = ~(cuuint64_t)0;
	CUmemPoolProps props;
	CUmemoryPool p = NULL;

	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	ROUTE_CHECK("cuMemPoolCreate", cuMemPoolCreate(&p, &props), CUDA_SUCCESS);
	ROUTE_CHECK("threshold: the maximum", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big),
		    CUDA_SUCCESS);
	return p;
}

static void reserve_and_free(CUmemoryPool p, CUstream s)
{
	CUdeviceptr a;

	ROUTE_CHECK("cuMemAllocFromPoolAsync 3 MiB", cuMemAllocFromPoolAsync(&a, 3 * MiB, p, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync", cuMemFreeAsync(a, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
}

int main(void)
{
	cuuint64_t zero = 0;
	CUmemoryPool p, p2;
	CUdeviceptr y;
	CUcontext p0;
	CUstream s;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 0", cuDevicePrimaryCtxRetain(&p0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent 0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	route_name("s", (uintptr_t)s);
	p = make_pool();                                                             /* 1 */
	route_name("p", (uintptr_t)p);
	reserve_and_free(p, s);
	ROUTE_CHECK("used (P's reserve)", used_now(), 4 * MiB);
	ROUTE_CHECK("cuMemPoolTrimTo(P, 0)", cuMemPoolTrimTo(p, 0), CUDA_SUCCESS);  /* 2 */
	ROUTE_CHECK("cuMemPoolDestroy(P)", cuMemPoolDestroy(p), CUDA_SUCCESS);
	p2 = make_pool();                                                            /* 3 */
	ROUTE_CHECK("P2 has P's handle", p2 == p, 1);
	reserve_and_free(p2, s);
	ROUTE_CHECK("used (P2's reserve)", used_now(), 4 * MiB);
	ROUTE_CHECK("threshold of P2: 0", cuMemPoolSetAttribute(p2, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero),
		    CUDA_SUCCESS);                                                   /* 4 */
	ROUTE_CHECK("cuStreamSynchronize (trims P2)", cuStreamSynchronize(s), CUDA_SUCCESS);
	ROUTE_CHECK("used (nothing)", used_now(), 0);
	ROUTE_CHECK("cuMemAlloc Y 3 MiB", cuMemAlloc(&y, 3 * MiB), CUDA_SUCCESS);   /* 5 */
	route_name("y", y);
	ROUTE_CHECK("used (Y)", used_now(), 3 * MiB);
	return 0;
}
