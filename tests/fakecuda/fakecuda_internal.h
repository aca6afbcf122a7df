/* fakecuda_internal.h - private to tests/fakecuda: constants shared by the
 * driver, runtime and NCCL doubles, and the one way the runtime and NCCL
 * doubles reach the driver (dlopen + dlsym of cuGetProcAddress_v2, as the
 * real libcudart does). Nothing outside tests/fakecuda includes this. */
#ifndef FAKECUDA_INTERNAL_H
#define FAKECUDA_INTERNAL_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* Placement granularity of plain, pitch, managed and pool allocations. */
#define FK_ALIGN ((size_t)512)
/* Virtual memory granularity (cuMemGetAllocationGranularity) and pool growth. */
#define FK_GRANULE ((size_t)2 << 20)
/* The CUDA version the runtime and NCCL doubles ask the driver for. */
#define FK_CUDA_VERSION 13000

static inline size_t fk_roundup(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* The driver's cuGetProcAddress_v2, found the way libcudart finds it:
 * dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) then dlsym on that handle.
 * Returns NULL (and leaves *handle NULL) when either step fails. */
static inline void *fk_driver_open(void **handle)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *fn;

	*handle = NULL;
	if (!h)
		return NULL;
	fn = dlsym(h, "cuGetProcAddress_v2");
	if (!fn) {
		dlclose(h);
		return NULL;
	}
	*handle = h;
	return fn;
}

#endif
