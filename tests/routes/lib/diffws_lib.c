/*
 * diffws_lib.c - libdiffws.so, dlopen()ed by diff_workload: a library's
 * workspace whose size depends on the driver's version, as cuBLAS's did
 * (4 MiB before, 32 MiB from driver 13010 on in this fixture). Built twice
 * (tests/extra.mk): DIFFWS_TAG changes the code and the build id of the
 * second build, the library "rebuilt between runs".
 */
#include <cuda_runtime_api.h>
#include <stddef.h>

#ifndef DIFFWS_TAG
#define DIFFWS_TAG 0
#endif

void *diffws_workspace(void) __attribute__((visibility("default"), noinline));

#if DIFFWS_TAG
/* Only in the rebuilt copy: moves diffws_workspace to another offset. */
int diffws_extra(int x) __attribute__((visibility("default"), noinline));
int diffws_extra(int x)
{
	volatile int k = x;
	return k * 3 + DIFFWS_TAG;
}
#endif

void *diffws_workspace(void)
{
	void *p = NULL;
	int v = 0;
	size_t n;

	if (cudaDriverGetVersion(&v) != cudaSuccess)
		return NULL;
	n = (v >= 13010 ? 32u : 4u) << 20;
	if (cudaMalloc(&p, n) != cudaSuccess) /* SITE_WS */
		return NULL;
	__asm__ volatile("" ::: "memory");
	return p;
}
