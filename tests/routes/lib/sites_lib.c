/*
 * sites_lib.c - libsites_lib.so, dlopen()ed by sites_workload after start:
 * site C, 4 MiB. SITES_LIB_TAG changes the code (and the build id) of the
 * rebuilt copy in tests/cases/sites_buildid.sh.
 */
#include <cuda_runtime_api.h>

#ifndef SITES_LIB_TAG
#define SITES_LIB_TAG 0
#endif

void sites_lib_alloc(void **out) __attribute__((visibility("default"), noinline));

void sites_lib_alloc(void **out)
{
	if (cudaMalloc(out, (4u << 20) + SITES_LIB_TAG * 0u) != cudaSuccess) /* SITE_C */
		*out = 0;
	__asm__ volatile("" ::: "memory");
}
