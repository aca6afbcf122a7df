/*
 * route_procaddr - route 4: cuGetProcAddress_v2 and the legacy
 * cuGetProcAddress, at two versions, with and without the per-thread flag.
 * The driver chooses the implementation; the program must get our wrapper of
 * exactly that implementation (dladdr names are the driver's own, printed),
 * with unchanged semantics: cuCtxSynchronize at 13000 takes a context
 * (shown by synchronising device 1's context while device 0's is current:
 * its pending stream-ordered free completes and the pool is trimmed), and
 * the _ptsz variant records flags=1. Run with GMT_FAKE_DEVICES=2.
 */
#include <cuda.h>
#include <dlfcn.h>

#include "route_util.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

static const char *sym_name(void *p)
{
	Dl_info info;
	if (p == NULL)
		return "(null)";
	if (!dladdr(p, &info) || info.dli_sname == NULL || info.dli_saddr != p)
		return "(unnamed)";
	return info.dli_sname;
}

static CUresult (*lookup)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
	cuGetProcAddress_v2;

static void *get(const char *name, int version, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st = -1;
	void *p = NULL;
	CUresult r = lookup(name, &p, version, flags, &st);
	printf("%s@%d flags=%llu -> %d status=%d %s\n", name, version, (unsigned long long)flags,
	       (int)r, (int)st, sym_name(p));
	return p;
}

int main(void)
{
	const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const cuuint64_t LEG = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	CUcontext ctx0, ctx1;
	CUdeviceptr x1, x2, y, z;
	CUstream s1;
	size_t fr, total;
	void *p;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate dev1", cuCtxCreate(&ctx1, NULL, 0, 1), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate dev0", cuCtxCreate(&ctx0, NULL, 0, 0), CUDA_SUCCESS);
	route_name("ctx0", (uintptr_t)ctx0);
	route_name("ctx1", (uintptr_t)ctx1);

	CUresult (*alloc_pt)(CUdeviceptr *, size_t, CUstream) = get("cuMemAllocAsync", 13000, PT);
	CUresult (*alloc_leg)(CUdeviceptr *, size_t, CUstream) = get("cuMemAllocAsync", 13000, LEG);
	CUresult (*free_pt)(CUdeviceptr, CUstream) = get("cuMemFreeAsync", 13000, PT);
	CUresult (*ssync_pt)(CUstream) = get("cuStreamSynchronize", 13000, PT);
	CUresult (*sync13)(CUcontext) = get("cuCtxSynchronize", 13000, 0);
	CUresult (*sync12)(void) = get("cuCtxSynchronize", 12000, 0);
	get("cuCtxCreate", 11000, 0);
	get("cuMemAlloc", 2000, 0);
	get("cuMemGetInfo", 13000, 0);
	get("cuBogus", 13000, 0);
	lookup = get("cuGetProcAddress", 13000, 0);
	if (lookup == NULL)
		return 2;
	CUresult (*mfree)(CUdeviceptr) = get("cuMemFree", 13000, 0);
	/* The legacy 4-argument look-up. */
	p = NULL;
	CUresult lr = cuGetProcAddress("cuMemAlloc", &p, 13000, 0);
	printf("legacy cuMemAlloc@13000 -> %d %s\n", (int)lr, sym_name(p));
	CUresult (*alloc)(CUdeviceptr *, size_t) = p;
	if (!alloc_pt || !alloc_leg || !free_pt || !ssync_pt || !sync13 || !sync12 || !mfree || !alloc)
		return 2;

	ROUTE_CHECK("cuMemAllocAsync_ptsz", alloc_pt(&x1, 1000, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocAsync", alloc_leg(&x2, 2000, NULL), CUDA_SUCCESS);
	route_name("x1", x1);
	route_name("x2", x2);
	ROUTE_CHECK("cuMemFreeAsync_ptsz", free_pt(x1, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync", cuMemFreeAsync(x2, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize_ptsz", ssync_pt(NULL), CUDA_SUCCESS);

	/* A pending free on device 1, completed by synchronising its context
	 * from a thread whose current context is device 0's. */
	ROUTE_CHECK("cuCtxSetCurrent ctx1", cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s1, 0), CUDA_SUCCESS);
	route_name("s1", (uintptr_t)s1);
	ROUTE_CHECK("cuMemAllocAsync dev1", cuMemAllocAsync(&y, 4096, s1), CUDA_SUCCESS);
	route_name("y", y);
	ROUTE_CHECK("cuMemFreeAsync dev1", cuMemFreeAsync(y, s1), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent ctx0", cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSynchronize_v2(ctx1)", sync13(ctx1), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent ctx1", cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemGetInfo dev1", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	ROUTE_CHECK("device 1 bytes held", total - fr, 0);
	ROUTE_CHECK("cuCtxSetCurrent ctx0", cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSynchronize()", sync12(), CUDA_SUCCESS);

	ROUTE_CHECK("cuMemAlloc_v2 (legacy look-up)", alloc(&z, 512), CUDA_SUCCESS);
	route_name("z", z);
	ROUTE_CHECK("cuMemFree_v2 (looked up through the looked-up look-up)", mfree(z), CUDA_SUCCESS);
	return 0;
}
