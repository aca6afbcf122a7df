/*
 * route_pool_trim - a pool's reserve leaves "taken from the device" when the
 * driver gives it back, not at some later sample (tests/cases/
 * route_pool_trim.sh; GMT_FAKE_DEVICES=2, GPUMEMTRACE_SYNC_SAMPLE_MS=3600000:
 * only a device's first synchronisation gets its full sample). A
 * stream-ordered block from an explicit pool is the current context's:
 * its destruction takes it.
 * The doubles' pools reserve whole 2 MiB granules (tests/fakecuda/README.md).
 * Device 0, its primary context current, pool P on device 0 with its release
 * threshold at the maximum (a synchronisation trims nothing):
 *   1  3 MiB from P, freed, stream synchronised: P keeps 4 MiB reserved;
 *   2  cuMemPoolTrimTo(P, 0): P reserves 0;
 *   3  cuMemAlloc 3 MiB X (plain), then cuMemFree X: taken is then 3 MiB,
 *      not 7;
 *   4  3 MiB from P again, freed, synchronised (4 MiB reserved), then P's
 *      release threshold set to 0 and the stream synchronised again: that
 *      synchronisation trims P to 0;
 *   5  cuMemAlloc 3 MiB Y (plain), kept: taken 3 MiB, not 7.
 * So device 0's peak taken from the device is P's 4 MiB at step 1 (7 MiB at
 * step 3 or 5 if a trim were counted late), 3 MiB (Y) at the end.
 * Device 1, a context C made by cuCtxCreate, pool Q on device 1 (threshold
 * 0: the default):
 *   6  2 MiB from Q, kept live (Q reserves 2 MiB), then cuCtxDestroy(C): the
 *      block goes with C and the double trims Q to 0 (as at a
 *      synchronisation); then cuDevicePrimaryCtxRetain(1) + cuMemAlloc 1 MiB
 *      Z (plain): taken on device 1 is then 1 MiB, not 3.
 * The program prints results and the bytes used on each device (the same
 * with and without the preload).
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

static CUmemoryPool make_pool(int dev)
{
	CUmemPoolProps props;
	CUmemoryPool p = NULL;

	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev;
	ROUTE_CHECK("cuMemPoolCreate", cuMemPoolCreate(&p, &props), CUDA_SUCCESS);
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
	CUcontext p0, c, p1;
	CUstream s0, s1;
	CUmemoryPool p, q;
	CUdeviceptr x, y, b, z;
	cuuint64_t big = ~(cuuint64_t)0, zero = 0;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 0", cuDevicePrimaryCtxRetain(&p0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent 0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamCreate s0", cuStreamCreate(&s0, 0), CUDA_SUCCESS);
	route_name("s0", (uintptr_t)s0);
	p = make_pool(0);
	route_name("p", (uintptr_t)p);
	ROUTE_CHECK("threshold of P: the maximum",
		    cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big), CUDA_SUCCESS);

	reserve_and_free(p, s0);                                             /* 1 */
	ROUTE_CHECK("used on device 0 (P's reserve)", used_now(), 4 * MiB);
	ROUTE_CHECK("cuMemPoolTrimTo(P, 0)", cuMemPoolTrimTo(p, 0), CUDA_SUCCESS); /* 2 */
	ROUTE_CHECK("cuMemAlloc X 3 MiB", cuMemAlloc(&x, 3 * MiB), CUDA_SUCCESS);  /* 3 */
	route_name("x", x);
	ROUTE_CHECK("used on device 0 (X)", used_now(), 3 * MiB);
	ROUTE_CHECK("cuMemFree X", cuMemFree(x), CUDA_SUCCESS);

	reserve_and_free(p, s0);                                             /* 4 */
	ROUTE_CHECK("used on device 0 (P's reserve)", used_now(), 4 * MiB);
	ROUTE_CHECK("threshold of P: 0", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero),
		    CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize (trims P)", cuStreamSynchronize(s0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc Y 3 MiB", cuMemAlloc(&y, 3 * MiB), CUDA_SUCCESS); /* 5 */
	route_name("y", y);
	ROUTE_CHECK("used on device 0 (Y)", used_now(), 3 * MiB);

	ROUTE_CHECK("cuCtxCreate C on device 1", cuCtxCreate(&c, NULL, 0, 1), CUDA_SUCCESS); /* 6 */
	route_name("c", (uintptr_t)c);
	ROUTE_CHECK("cuStreamCreate s1", cuStreamCreate(&s1, 0), CUDA_SUCCESS);
	route_name("s1", (uintptr_t)s1);
	q = make_pool(1);
	route_name("q", (uintptr_t)q);
	ROUTE_CHECK("cuMemAllocFromPoolAsync B 2 MiB", cuMemAllocFromPoolAsync(&b, 2 * MiB, q, s1), CUDA_SUCCESS);
	route_name("b", b);
	ROUTE_CHECK("used on device 1 (Q's reserve)", used_now(), 2 * MiB);
	ROUTE_CHECK("cuCtxDestroy C", cuCtxDestroy(c), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 1", cuDevicePrimaryCtxRetain(&p1, 1), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent 1", cuCtxSetCurrent(p1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc Z 1 MiB", cuMemAlloc(&z, MiB), CUDA_SUCCESS);
	route_name("z", z);
	ROUTE_CHECK("used on device 1 (Z)", used_now(), MiB);
	return 0;
}
