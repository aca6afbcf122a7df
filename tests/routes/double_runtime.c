/* double_runtime.c - tests the runtime double alone: primary contexts per
 * thread device, accounting seen through cudaMemGetInfo, error mapping and
 * the sticky last error, stream-ordered calls and their _ptsz exports,
 * pools, and cudaGetDriverEntryPoint(ByVersion) answering exactly as the
 * driver's cuGetProcAddress_v2. Expects GMT_FAKE_DEVICES=2,
 * GMT_FAKE_MEM_BYTES=1073741824, GMT_FAKE_CONTEXT_BYTES=3145728. */
#define CUDA_ENABLE_DEPRECATED 1 /* cudaGetDriverEntryPoint is deprecated in 13.0 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <string.h>

#include "../fakecuda/double_check.h"

#define TOTAL ((uint64_t)1 << 30)
#define CTXB ((uint64_t)3 << 20)

/* The per-thread-stream exports, as a program built with
 * --default-stream per-thread calls them. */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t s);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t s);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
					 unsigned long long flags,
					 enum cudaDriverEntryPointQueryResult *driverStatus);

static uint64_t free_now(void)
{
	size_t f = 0, t = 0;

	DC_EQ(cudaSuccess, cudaMemGetInfo(&f, &t));
	DC_EQ(TOTAL, t);
	return f;
}

static uint64_t pool_attr(cudaMemPool_t p, enum cudaMemPoolAttr a)
{
	cuuint64_t v = 0;

	DC_EQ(cudaSuccess, cudaMemPoolGetAttribute(p, a, &v));
	return v;
}

static void test_entry_points(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	enum cudaDriverEntryPointQueryResult st;
	void *fn = NULL;

	DC_TRUE(lib != NULL);	/* the runtime loaded it */
	if (!lib)
		return;
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &st));
	DC_EQ(cudaDriverEntryPointSuccess, st);
	DC_TRUE(fn == dlsym(lib, "cuMemAlloc_v2"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint("cuMemAllocAsync", &fn, cudaEnableDefault, &st));
	DC_TRUE(fn == dlsym(lib, "cuMemAllocAsync"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint_ptsz("cuMemAllocAsync", &fn, cudaEnableDefault, &st));
	DC_TRUE(fn == dlsym(lib, "cuMemAllocAsync_ptsz"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint("cuStreamSynchronize", &fn,
						   cudaEnablePerThreadDefaultStream, &st));
	DC_TRUE(fn == dlsym(lib, "cuStreamSynchronize_ptsz"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint("cuCtxSynchronize", &fn, cudaEnableDefault, &st));
	DC_TRUE(fn == dlsym(lib, "cuCtxSynchronize_v2"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPointByVersion("cuCtxSynchronize", &fn, 12000,
							    cudaEnableDefault, &st));
	DC_TRUE(fn == dlsym(lib, "cuCtxSynchronize"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000,
							    cudaEnableDefault, &st));
	DC_TRUE(fn == dlsym(lib, "cuMemCreate"));
	DC_EQ(cudaSuccess, cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 11000,
							    cudaEnableDefault, &st));
	DC_EQ(cudaDriverEntryPointVersionNotSufficent, st);
	DC_TRUE(fn == NULL);
	DC_EQ(cudaSuccess, cudaGetDriverEntryPoint("cuNoSuchThing", &fn, cudaEnableDefault, &st));
	DC_EQ(cudaDriverEntryPointSymbolNotFound, st);
	DC_TRUE(fn == NULL);
	dlclose(lib);
}

int main(void)
{
	void *a = NULL, *b = NULL, *m = NULL, *h = NULL, *keep = (void *)77, *x = NULL;
	size_t pitch = 0;
	int n = 0, v = 0, dev = -1;
	char src[16] = "fake runtime", dst[16] = "";
	cudaStream_t s;
	cudaEvent_t e;
	cudaMemPool_t P, Q;
	struct cudaMemPoolProps props;
	uint64_t f0;

	DC_EQ(cudaSuccess, cudaRuntimeGetVersion(&v));
	DC_EQ(13000, v);
	DC_EQ(cudaSuccess, cudaDriverGetVersion(&v));
	DC_EQ(13000, v);
	DC_EQ(cudaSuccess, cudaGetDeviceCount(&n));
	DC_EQ(2, n);
	DC_EQ(cudaSuccess, cudaGetDevice(&dev));
	DC_EQ(0, dev);

	/* First use retains device 0's primary context. */
	f0 = free_now();
	DC_EQ(TOTAL - CTXB, f0);
	DC_EQ(cudaSuccess, cudaMalloc(&a, 1000));
	DC_EQ(f0 - 1024, free_now());
	DC_EQ(cudaSuccess, cudaMallocPitch(&b, &pitch, 1000, 2));
	DC_EQ(1024, pitch);
	DC_EQ(cudaSuccess, cudaMallocManaged(&m, 100, cudaMemAttachGlobal));
	DC_EQ(f0 - 1024 - 2048 - 512, free_now());
	DC_EQ(cudaSuccess, cudaMallocHost(&h, 4096));	/* host memory */
	DC_EQ(f0 - 1024 - 2048 - 512, free_now());
	DC_EQ(cudaSuccess, cudaMemcpy(h, src, sizeof(src), cudaMemcpyHostToHost));
	DC_EQ(cudaSuccess, cudaMemcpy(dst, h, sizeof(src), cudaMemcpyDefault));
	DC_TRUE(strcmp(dst, "fake runtime") == 0);
	DC_EQ(cudaSuccess, cudaMemcpy(a, h, 16, cudaMemcpyHostToDevice));	/* no bytes */
	DC_EQ(cudaSuccess, cudaMemset(a, 0, 1000));
	DC_EQ(cudaSuccess, cudaFreeHost(h));
	DC_EQ(cudaSuccess, cudaFree(a));
	DC_EQ(cudaSuccess, cudaFree(b));
	DC_EQ(cudaSuccess, cudaFree(m));
	DC_EQ(cudaSuccess, cudaFree(NULL));
	DC_EQ(f0, free_now());

	/* Errors: driver OOM -> cudaErrorMemoryAllocation (2), sticky until
	 * cudaGetLastError. */
	DC_EQ(cudaErrorMemoryAllocation, cudaMalloc(&keep, f0 + 1));
	DC_EQ(2, cudaErrorMemoryAllocation);
	DC_TRUE(keep == (void *)77);
	DC_EQ(cudaErrorMemoryAllocation, cudaPeekAtLastError());
	DC_EQ(cudaErrorMemoryAllocation, cudaGetLastError());
	DC_EQ(cudaSuccess, cudaGetLastError());
	DC_TRUE(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
	DC_TRUE(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
	DC_EQ(cudaErrorInvalidDevice, cudaSetDevice(2));
	DC_EQ(cudaErrorInvalidDevice, cudaGetLastError());

	/* Device 1: its own primary context and accounting. */
	DC_EQ(cudaSuccess, cudaSetDevice(1));
	DC_EQ(cudaSuccess, cudaGetDevice(&dev));
	DC_EQ(1, dev);
	DC_EQ(TOTAL - CTXB, free_now());
	DC_EQ(cudaSuccess, cudaMalloc(&a, 7 * MiB));
	DC_EQ(TOTAL - CTXB - 7 * MiB, free_now());
	DC_EQ(cudaSuccess, cudaSetDevice(0));
	DC_EQ(f0, free_now());
	DC_EQ(cudaSuccess, cudaFree(a));
	DC_EQ(cudaSuccess, cudaSetDevice(1));
	DC_EQ(TOTAL - CTXB, free_now());
	DC_EQ(cudaSuccess, cudaSetDevice(0));

	/* Stream-ordered: the default pool, frees at synchronisation. */
	DC_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	DC_EQ(cudaSuccess, cudaEventCreate(&e));
	DC_EQ(cudaSuccess, cudaDeviceGetDefaultMemPool(&P, 0));
	DC_EQ(cudaSuccess, cudaMallocAsync(&a, 3 * MiB, s));
	DC_EQ(4 * MiB, pool_attr(P, cudaMemPoolAttrReservedMemCurrent));
	DC_EQ(3 * MiB, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(cudaSuccess, cudaFreeAsync(a, s));
	DC_EQ(3 * MiB, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(cudaSuccess, cudaEventRecord(e, s));
	DC_EQ(cudaSuccess, cudaEventSynchronize(e));
	DC_EQ(0, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(0, pool_attr(P, cudaMemPoolAttrReservedMemCurrent));
	DC_EQ(f0, free_now());
	/* _ptsz exports: stream 0 is the per-thread stream. */
	DC_EQ(cudaSuccess, cudaMallocAsync_ptsz(&a, 1 * MiB, NULL));
	DC_EQ(cudaSuccess, cudaFreeAsync_ptsz(a, NULL));
	DC_EQ(cudaSuccess, cudaStreamSynchronize(NULL));	/* legacy: not that one */
	DC_EQ(1 * MiB, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(cudaSuccess, cudaStreamSynchronize_ptsz(NULL));
	DC_EQ(0, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(cudaSuccess, cudaMallocAsync(&a, 1 * MiB, s));
	DC_EQ(cudaSuccess, cudaFreeAsync(a, s));
	DC_EQ(cudaSuccess, cudaDeviceSynchronize());
	DC_EQ(0, pool_attr(P, cudaMemPoolAttrUsedMemCurrent));
	DC_EQ(f0, free_now());

	/* A created pool. */
	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	DC_EQ(cudaSuccess, cudaMemPoolCreate(&Q, &props));
	DC_EQ(cudaSuccess, cudaMallocFromPoolAsync(&x, 5 * MiB, Q, s));
	DC_EQ(6 * MiB, pool_attr(Q, cudaMemPoolAttrReservedMemCurrent));
	DC_EQ(cudaSuccess, cudaFreeAsync(x, s));
	{
		cuuint64_t big = 64 * MiB;

		DC_EQ(cudaSuccess, cudaMemPoolSetAttribute(Q, cudaMemPoolAttrReleaseThreshold, &big));
	}
	DC_EQ(cudaSuccess, cudaStreamSynchronize(s));
	DC_EQ(6 * MiB, pool_attr(Q, cudaMemPoolAttrReservedMemCurrent));
	DC_EQ(cudaSuccess, cudaMemPoolTrimTo(Q, 0));
	DC_EQ(0, pool_attr(Q, cudaMemPoolAttrReservedMemCurrent));
	DC_EQ(cudaSuccess, cudaMemPoolDestroy(Q));
	DC_EQ(cudaSuccess, cudaStreamDestroy(s));
	DC_EQ(cudaSuccess, cudaEventDestroy(e));
	DC_EQ(f0, free_now());

	test_entry_points();

	/* Reset gives back the primary context; the next call retains it. */
	DC_EQ(cudaSuccess, cudaDeviceReset());
	DC_EQ(TOTAL - CTXB, free_now());
	DC_DONE();
}
