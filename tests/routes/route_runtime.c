/*
 * route_runtime - route 2: the runtime API (the runtime double reaches the
 * driver like the real one: dlopen libcuda, dlsym cuGetProcAddress_v2,
 * versioned look-ups). The preload must record each allocation once, at
 * driver level, named with the runtime API the program called; the _ptsz
 * exports reach the driver's _ptsz variants (flags=1).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

/* The per-thread-default-stream exports, declared by the header only when
 * the whole program is compiled for the per-thread default stream. */
extern cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
extern cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);

int main(void)
{
	void *d, *p, *m, *h, *h2, *as, *as2, *pa, *z = (void *)1;
	size_t pitch, free0, free1, total;
	cudaStream_t s;
	cudaMemPool_t pool, defpool;
	CUcontext pctx;

	ROUTE_CHECK("cudaSetDevice", cudaSetDevice(0), cudaSuccess);
	ROUTE_CHECK("cudaMemGetInfo", cudaMemGetInfo(&free0, &total), cudaSuccess);
	ROUTE_CHECK("cuCtxGetCurrent", cuCtxGetCurrent(&pctx), CUDA_SUCCESS);
	route_name("pctx", (uintptr_t)pctx);

	ROUTE_CHECK("cudaMalloc", cudaMalloc(&d, MiB), cudaSuccess);
	ROUTE_CHECK("cudaMallocPitch", cudaMallocPitch(&p, &pitch, 1000, 10), cudaSuccess);
	ROUTE_CHECK("pitch", pitch, 1024);
	ROUTE_CHECK("cudaMallocManaged", cudaMallocManaged(&m, 4096, cudaMemAttachGlobal), cudaSuccess);
	ROUTE_CHECK("cudaMallocHost", cudaMallocHost(&h, 8192), cudaSuccess);
	ROUTE_CHECK("cudaHostAlloc", cudaHostAlloc(&h2, 4096, 0), cudaSuccess);
	ROUTE_CHECK("cudaMalloc 0", cudaMalloc(&z, 0), cudaSuccess);
	ROUTE_CHECK("cudaMalloc 0 gives NULL", z == NULL, 1);
	route_name("d", (uintptr_t)d);
	route_name("p", (uintptr_t)p);
	route_name("m", (uintptr_t)m);
	route_name("h", (uintptr_t)h);
	route_name("h2", (uintptr_t)h2);
	ROUTE_CHECK("cudaMemGetInfo", cudaMemGetInfo(&free1, &total), cudaSuccess);
	ROUTE_CHECK("device bytes held", free0 - free1, MiB + 10240 + 4096);

	ROUTE_CHECK("cudaStreamCreate", cudaStreamCreate(&s), cudaSuccess);
	route_name("s", (uintptr_t)s);
	ROUTE_CHECK("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&defpool, 0), cudaSuccess);
	route_name("defpool", (uintptr_t)defpool);
	ROUTE_CHECK("cudaMallocAsync", cudaMallocAsync(&as, 3000, s), cudaSuccess);
	route_name("as", (uintptr_t)as);
	ROUTE_CHECK("cudaFreeAsync", cudaFreeAsync(as, s), cudaSuccess);
	ROUTE_CHECK("cudaMallocAsync_ptsz", cudaMallocAsync_ptsz(&as2, 1000, 0), cudaSuccess);
	route_name("as2", (uintptr_t)as2);
	ROUTE_CHECK("cudaFreeAsync_ptsz", cudaFreeAsync_ptsz(as2, 0), cudaSuccess);
	ROUTE_CHECK("cudaStreamSynchronize", cudaStreamSynchronize(s), cudaSuccess);

	struct cudaMemPoolProps props = { 0 };
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	ROUTE_CHECK("cudaMemPoolCreate", cudaMemPoolCreate(&pool, &props), cudaSuccess);
	route_name("pool", (uintptr_t)pool);
	ROUTE_CHECK("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync(&pa, 5000, pool, s), cudaSuccess);
	route_name("pa", (uintptr_t)pa);
	ROUTE_CHECK("cudaFreeAsync", cudaFreeAsync(pa, s), cudaSuccess);
	ROUTE_CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize(), cudaSuccess);
	ROUTE_CHECK("cudaMemPoolDestroy", cudaMemPoolDestroy(pool), cudaSuccess);

	ROUTE_CHECK("cudaFree d", cudaFree(d), cudaSuccess);
	ROUTE_CHECK("cudaFree p", cudaFree(p), cudaSuccess);
	ROUTE_CHECK("cudaFree m", cudaFree(m), cudaSuccess);
	ROUTE_CHECK("cudaFree NULL", cudaFree(NULL), cudaSuccess);
	ROUTE_CHECK("cudaFreeHost h", cudaFreeHost(h), cudaSuccess);
	ROUTE_CHECK("cudaFreeHost h2", cudaFreeHost(h2), cudaSuccess);
	ROUTE_CHECK("cudaMemGetInfo", cudaMemGetInfo(&free1, &total), cudaSuccess);
	ROUTE_CHECK("device bytes held", free0 - free1, 0);
	return 0;
}
