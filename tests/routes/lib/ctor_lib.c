/*
 * ctor_lib.c - libroute_ctor.so: CUDA called from a shared library's
 * constructor, which the dynamic loader runs before the preload's own
 * constructor (the preload was loaded first, so it is initialised last).
 * Three routes at once: the exported driver symbols, the runtime (its
 * dlopen + dlsym + cuGetProcAddress_v2 start-up) and dlsym on a dlopen'ed
 * handle. The pointers are left for route_ctor's main to free.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

CUdeviceptr route_ctor_plain, route_ctor_managed;
void *route_ctor_runtime;
int route_ctor_status = -1;

__attribute__((constructor)) static void route_ctor_init(void)
{
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned);
	CUcontext ctx;
	void *h;

	route_ctor_status = 1;
	if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return;
	if (cuMemAlloc(&route_ctor_plain, 123 * 4096) != CUDA_SUCCESS)
		return;
	if (cudaMalloc(&route_ctor_runtime, 65536) != cudaSuccess)
		return;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	managed = h ? (CUresult (*)(CUdeviceptr *, size_t, unsigned))dlsym(h, "cuMemAllocManaged") : NULL;
	if (managed == NULL || managed(&route_ctor_managed, 8192, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS)
		return;
	route_ctor_status = 0;
}
