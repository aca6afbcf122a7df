/*
 * owners_blas.c - a stand-in for cuBLAS(Lt) 13, built as libcublasLt.so.13
 * (tests/extra.mk): the preload knows a library by its file name.
 *
 * Like the real one it needs no libcudart: it carries what a static copy of
 * the runtime does to reach the driver, dlopen("libcuda.so.1") +
 * dlsym(handle, "cuGetProcAddress_v2"), then every entry point through
 * cuGetProcAddress_v2, and calls them from its own text. Its workspaces must
 * carry owner cublas (tests/cases/route_owners.sh).
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "owners_libs.h"

static PFN_cuMemAlloc_v3020 mem_alloc;
static PFN_cuMemFree_v3020 mem_free;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static CUdeviceptr kept;

static void init(void)
{
	CUdriverProcAddressQueryResult st;
	PFN_cuGetProcAddress_v12000 get_proc;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h == NULL)
		return;
	get_proc = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	if (get_proc == NULL ||
	    get_proc("cuMemAlloc", (void **)&mem_alloc, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS ||
	    get_proc("cuMemFree", (void **)&mem_free, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS)
		mem_alloc = NULL;
}

int fakeblas_workspace(size_t bytes, int keep, uint64_t *addr)
{
	CUdeviceptr p = 0;
	CUresult r;

	pthread_once(&once, init);
	if (mem_alloc == NULL)
		return -1;
	r = mem_alloc(&p, bytes);
	if (r != CUDA_SUCCESS)
		return (int)r;
	*addr = (uint64_t)p;
	if (keep) {
		kept = p;
		return 0;
	}
	return (int)mem_free(p);
}

int fakeblas_destroy(void)
{
	CUresult r = kept != 0 && mem_free != NULL ? mem_free(kept) : CUDA_SUCCESS;

	kept = 0;
	return (int)r;
}
