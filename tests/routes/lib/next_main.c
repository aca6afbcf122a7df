/*
 * next_main.c - route_next: route 8, RTLD_NEXT and RTLD_DEFAULT look-ups
 * through our dlsym keep glibc's caller-relative meaning.
 *  - libroute_next_a's dlsym(RTLD_NEXT, "route_probe") finds B's, the next
 *    after A (were our dlsym the caller, "next" would start after the
 *    preload and find A's own);
 *  - the program's dlsym(RTLD_NEXT, "cuMemAlloc_v2") is the next definition
 *    after the program: the preload's wrapper when it is loaded (so the
 *    allocation is traced), libcuda's otherwise;
 *  - dlsym(RTLD_DEFAULT, "cuMemFree_v2") likewise finds the first, the
 *    preload's when loaded.
 */
#include <cuda.h>
#include <dlfcn.h>

#include "route_util.h"

char route_probe(void);
char route_next(void);

int main(void)
{
	CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlsym(RTLD_NEXT, "cuMemAlloc_v2");
	CUresult (*mfree)(CUdeviceptr) = (CUresult (*)(CUdeviceptr))dlsym(RTLD_DEFAULT, "cuMemFree_v2");
	CUcontext ctx;
	CUdeviceptr a;

	printf("probe %c next %c\n", route_probe(), route_next());
	ROUTE_CHECK("RTLD_NEXT cuMemAlloc_v2", alloc != NULL, 1);
	ROUTE_CHECK("RTLD_DEFAULT cuMemFree_v2", mfree != NULL, 1);
	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("alloc", alloc(&a, 777), CUDA_SUCCESS);
	route_name("a", a);
	ROUTE_CHECK("free", mfree(a), CUDA_SUCCESS);
	return 0;
}
