/*
 * route_unidentified - what cuGetProcAddress returns may be no exported
 * symbol (tests/cases/route_unidentified.sh runs this on the driver double
 * with GMT_FAKE_PROC_INTERNAL=1, whose look-ups then answer internal entry
 * points, and GMT_FAKE_DRIVER_VERSION=14000). Look-ups at 13000 (a version
 * our headers know: the prototype follows from name and version) must be
 * traced; look-ups at 14000 (newer than our headers: the prototype is not
 * known) pass through untraced and are said. A 1 MiB block goes through
 * the 13000 pointers, a 2 MiB block through the 14000 ones. Prints
 * results only.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

static PFN_cuGetProcAddress_v12000 get_proc;

static void *lookup(const char *name, int version)
{
	CUdriverProcAddressQueryResult st;
	void *fn = NULL;

	ROUTE_CHECK(name, get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &st), CUDA_SUCCESS);
	return fn;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	PFN_cuMemAlloc_v3020 alloc13, alloc14;
	PFN_cuMemFree_v3020 free13, free14;
	CUdeviceptr a = 0, b = 0;
	CUcontext ctx;

	if (h == NULL || (get_proc = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2")) == NULL)
		return 2;
	ROUTE_CHECK("cuInit", ((PFN_cuInit_v2000)lookup("cuInit", 13000))(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", ((PFN_cuCtxCreate_v12050)lookup("cuCtxCreate", 13000))(&ctx, NULL, 0, 0),
		    CUDA_SUCCESS);
	/* At 14000 first: unknown prototype, untraced. The same pointer
	 * returned at 13000 afterwards is traced from then on. */
	alloc14 = (PFN_cuMemAlloc_v3020)lookup("cuMemAlloc", 14000);
	free14 = (PFN_cuMemFree_v3020)lookup("cuMemFree", 14000);
	alloc13 = (PFN_cuMemAlloc_v3020)lookup("cuMemAlloc", 13000);
	free13 = (PFN_cuMemFree_v3020)lookup("cuMemFree", 13000);
	ROUTE_CHECK("cuMemAlloc at 14000", alloc14(&b, 2 * MiB), CUDA_SUCCESS);
	route_name("b", b);
	ROUTE_CHECK("cuMemAlloc at 13000", alloc13(&a, MiB), CUDA_SUCCESS);
	route_name("a", a);
	ROUTE_CHECK("cuMemFree at 13000", free13(a), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree at 14000", free14(b), CUDA_SUCCESS);
	return 0;
}
