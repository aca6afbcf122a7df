/*
 * route_entrypoint - route 5: cudaGetDriverEntryPoint and
 * cudaGetDriverEntryPointByVersion (how newer PyTorch reaches cuMemCreate &
 * co. for expandable segments). The runtime passes them to the
 * cuGetProcAddress_v2 it got through dlsym, which is our wrapper: no hook of
 * their own is needed, and the pointers the program gets are our wrappers
 * of the implementations the driver chose.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

static const char *sym_name(void *p)
{
	Dl_info info;
	if (p == NULL)
		return "(null)";
	if (!dladdr(p, &info) || info.dli_sname == NULL || info.dli_saddr != p)
		return "(unnamed)";
	return info.dli_sname;
}

static void *entry(const char *name, int version, unsigned long long flags)
{
	enum cudaDriverEntryPointQueryResult st = -1;
	void *p = NULL;
	cudaError_t r;
	/* Deprecated in CUDA 13, still used (and so traced): deliberately here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	r = version ? cudaGetDriverEntryPointByVersion(name, &p, (unsigned)version, flags, &st)
		    : cudaGetDriverEntryPoint(name, &p, flags, &st);
#pragma GCC diagnostic pop
	printf("%s@%d flags=%llu -> %d status=%d %s\n", name, version, flags, (int)r, (int)st, sym_name(p));
	return p;
}

int main(void)
{
	CUdeviceptr a, x, va;
	CUmemGenericAllocationHandle hdl;

	ROUTE_CHECK("cudaSetDevice", cudaSetDevice(0), cudaSuccess);
	CUresult (*alloc)(CUdeviceptr *, size_t) = entry("cuMemAlloc", 0, cudaEnableDefault);
	CUresult (*mfree)(CUdeviceptr) = entry("cuMemFree", 0, cudaEnableDefault);
	CUresult (*sync12)(void) = entry("cuCtxSynchronize", 12000, cudaEnableDefault);
	CUresult (*sync13)(CUcontext) = entry("cuCtxSynchronize", 13000, cudaEnableDefault);
	CUresult (*alloc_pt)(CUdeviceptr *, size_t, CUstream) =
		entry("cuMemAllocAsync", 13000, cudaEnablePerThreadDefaultStream);
	CUresult (*free_pt)(CUdeviceptr, CUstream) =
		entry("cuMemFreeAsync", 13000, cudaEnablePerThreadDefaultStream);
	__typeof__(cuMemCreate) *create = entry("cuMemCreate", 0, cudaEnableDefault);
	__typeof__(cuMemAddressReserve) *reserve = entry("cuMemAddressReserve", 12000, cudaEnableDefault);
	__typeof__(cuMemMap) *map = entry("cuMemMap", 12000, cudaEnableDefault);
	__typeof__(cuMemUnmap) *unmap = entry("cuMemUnmap", 12000, cudaEnableDefault);
	__typeof__(cuMemRelease) *release = entry("cuMemRelease", 12000, cudaEnableDefault);
	__typeof__(cuMemAddressFree) *addr_free = entry("cuMemAddressFree", 12000, cudaEnableDefault);
	entry("cuNotAThing", 0, cudaEnableDefault);
	if (!alloc || !mfree || !sync12 || !sync13 || !alloc_pt || !free_pt || !create || !reserve ||
	    !map || !unmap || !release || !addr_free)
		return 2;

	ROUTE_CHECK("cuMemAlloc_v2", alloc(&a, 3 * MiB), CUDA_SUCCESS);
	route_name("a", a);
	ROUTE_CHECK("cuMemAllocAsync_ptsz", alloc_pt(&x, 100, NULL), CUDA_SUCCESS);
	route_name("x", x);
	ROUTE_CHECK("cuMemFreeAsync_ptsz", free_pt(x, NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSynchronize_v2(NULL)", sync13(NULL), CUDA_SUCCESS);

	CUmemAllocationProp prop = { 0 };
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	ROUTE_CHECK("cuMemCreate", create(&hdl, 4 * MiB, &prop, 0), CUDA_SUCCESS);
	route_name("hdl", hdl);
	ROUTE_CHECK("cuMemAddressReserve", reserve(&va, 8 * MiB, 2 * MiB, 0, 0), CUDA_SUCCESS);
	route_name("va", va);
	ROUTE_CHECK("cuMemMap", map(va, 4 * MiB, 0, hdl, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemUnmap", unmap(va, 4 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemRelease", release(hdl), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAddressFree", addr_free(va, 8 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree_v2", mfree(a), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSynchronize()", sync12(), CUDA_SUCCESS);
	return 0;
}
