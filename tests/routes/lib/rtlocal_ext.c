/*
 * rtlocal_ext.c - an extension module as a repaired wheel ships it: linked
 * against its OWN copy of the runtime (or, with -DEXT_NCCL, of NCCL) under
 * a renamed soname (libcudart-<hash>.so.13, libnccl-<hash>.so.2), loaded
 * RTLD_LOCAL by route_rtlocal (rtlocal_main.c). Built several times by
 * tests/extra.mk: against renamed copies of the runtime and NCCL doubles,
 * and against renamed copies of the toolkit's REAL libcudart.so.13 and
 * libnccl.so.2 (tests/cases/route_rtlocal.sh).
 *
 * ext_run(tag) prints every result (the same with and without the preload:
 * the caller must reach its own library) and the addresses for the trace
 * on stderr. EXT_BYTES tells the copies apart in the trace; EXT_LIB is the
 * soname of the library it links, looked up once more with dlsym on its
 * own handle (the dlsym route of a runtime/NCCL name).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#ifdef EXT_NCCL
#include <nccl.h>
#else
#include <cuda_runtime_api.h>
#endif
#pragma GCC diagnostic pop

int ext_run(const char *tag);

static void named(const char *tag, const char *what, const void *p)
{
	fprintf(stderr, "addr %s_%s 0x%llx\n", tag, what, (unsigned long long)(uintptr_t)p);
}

#ifdef EXT_NCCL
int ext_run(const char *tag)
{
	ncclResult_t (*by_handle)(void **, size_t) = NULL;
	void *p = NULL, *q = NULL, *h;
	int v = 0;
	ncclResult_t r;

	r = ncclGetVersion(&v);
	printf("%s ncclGetVersion %d %d\n", tag, (int)r, v);
	r = ncclMemAlloc(&p, EXT_BYTES);
	printf("%s ncclMemAlloc %d %s\n", tag, (int)r, p ? "set" : "null");
	named(tag, "nccl", p);
	h = dlopen(EXT_LIB, RTLD_LAZY | RTLD_NOLOAD);
	if (h != NULL)
		by_handle = (ncclResult_t (*)(void **, size_t))dlsym(h, "ncclMemAlloc");
	printf("%s dlsym ncclMemAlloc %s\n", tag, by_handle ? "found" : "missing");
	if (by_handle != NULL) {
		r = by_handle(&q, 2 * EXT_BYTES);
		printf("%s ncclMemAlloc by handle %d %s\n", tag, (int)r, q ? "set" : "null");
		named(tag, "nccl_h", q);
		if (r == ncclSuccess)
			printf("%s ncclMemFree %d\n", tag, (int)ncclMemFree(q));
	}
	if (p != NULL)
		printf("%s ncclMemFree %d\n", tag, (int)ncclMemFree(p));
	if (h != NULL)
		dlclose(h);
	return (int)r;
}
#else
int ext_run(const char *tag)
{
	cudaError_t (*by_handle)(void **, size_t) = NULL;
	void *p = NULL, *q = NULL, *big = NULL, *h;
	cudaError_t e, first;
	int v = 0;

	e = cudaRuntimeGetVersion(&v);
	printf("%s cudaRuntimeGetVersion %d %d\n", tag, (int)e, v);
	first = e = cudaMalloc(&p, EXT_BYTES);
	printf("%s cudaMalloc %d %s\n", tag, (int)e, cudaGetErrorName(e));
	named(tag, "d", p);
	/* The error state is the runtime's own: only the library that failed
	 * the call reports it. */
	e = cudaMalloc(&big, (size_t)1 << 62);
	printf("%s cudaMalloc 2^62 %d\n", tag, (int)e);
	printf("%s cudaGetLastError %d\n", tag, (int)cudaGetLastError());
	h = dlopen(EXT_LIB, RTLD_LAZY | RTLD_NOLOAD);
	if (h != NULL)
		by_handle = (cudaError_t (*)(void **, size_t))dlsym(h, "cudaMalloc");
	printf("%s dlsym cudaMalloc %s\n", tag, by_handle ? "found" : "missing");
	if (by_handle != NULL) {
		e = by_handle(&q, 2 * EXT_BYTES);
		printf("%s cudaMalloc by handle %d\n", tag, (int)e);
		named(tag, "h", q);
		if (e == cudaSuccess)
			printf("%s cudaFree %d\n", tag, (int)cudaFree(q));
	}
	if (first == cudaSuccess)
		printf("%s cudaFree %d\n", tag, (int)cudaFree(p));
	if (h != NULL)
		dlclose(h);
	return (int)first;
}
#endif
