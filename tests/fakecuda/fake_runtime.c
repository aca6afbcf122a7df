/* fake_runtime.c - a test double of the CUDA runtime (libcudart.so.13).
 *
 * It reaches the driver only the way the real libcudart does: on first use
 * it dlopen()s "libcuda.so.1" (RTLD_NOW | RTLD_LOCAL), dlsym()s
 * "cuGetProcAddress_v2" on that handle, and then obtains every driver entry
 * point through cuGetProcAddress_v2(name, &fn, 13000, flags, &status): the
 * legacy-stream flag for the normal entry points, the per-thread-default-
 * stream flag for those behind the runtime's _ptsz/_ptds exports. It is never
 * linked to libcuda, so symbol interposition of cuMemAlloc_v2 does not see
 * its calls, exactly as with the real runtime.
 *
 * The current device is per thread (default 0). The first use of a device
 * retains its primary context and makes it current, like the real runtime.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda_internal.h"

/* The runtime version this build is (cudaRuntimeGetVersion, the driver it
 * needs): the headers' by default; the libcudart.so.12 build (two runtime
 * majors in one process, tests/cases/route_majors.sh) says 12080. */
#ifndef FK_RUNTIME_VERSION
#define FK_RUNTIME_VERSION CUDART_VERSION
#endif

/* GMT_FAKE_RUNTIME_VERSION (default FK_RUNTIME_VERSION): what this runtime
 * says it is, so that a test can run two "versions"; read at each call. */
static int runtime_version(void)
{
	const char *s = getenv("GMT_FAKE_RUNTIME_VERSION");
	char *end;
	long v;

	if (!s || !*s)
		return FK_RUNTIME_VERSION;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v <= 0 || v > INT_MAX ? FK_RUNTIME_VERSION : (int)v;
}

/* Driver entry points, resolved once (see drv_init). */
static struct {
	PFN_cuInit_v2000 Init;
	PFN_cuDriverGetVersion_v2020 DriverGetVersion;
	PFN_cuDeviceGetCount_v2000 DeviceGetCount;
	PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
	PFN_cuDevicePrimaryCtxReset_v11000 PrimaryCtxReset;
	PFN_cuDevicePrimaryCtxRelease_v11000 PrimaryCtxRelease;
	PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
	PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
	PFN_cuCtxSynchronize_v13000 CtxSynchronize;
	PFN_cuMemAlloc_v3020 MemAlloc;
	PFN_cuMemAllocPitch_v3020 MemAllocPitch;
	PFN_cuMemAllocManaged_v6000 MemAllocManaged;
	PFN_cuMemFree_v3020 MemFree;
	PFN_cuMemAllocHost_v3020 MemAllocHost;
	PFN_cuMemHostAlloc_v2020 MemHostAlloc;
	PFN_cuMemFreeHost_v2000 MemFreeHost;
	PFN_cuMemGetInfo_v3020 MemGetInfo;
	PFN_cuMemcpy_v4000 Memcpy, Memcpy_ptds;
	PFN_cuMemsetD8_v3020 MemsetD8, MemsetD8_ptds;
	PFN_cuMemAllocAsync_v11020 MemAllocAsync, MemAllocAsync_ptsz;
	PFN_cuMemAllocFromPoolAsync_v11020 MemAllocFromPoolAsync, MemAllocFromPoolAsync_ptsz;
	PFN_cuMemFreeAsync_v11020 MemFreeAsync, MemFreeAsync_ptsz;
	PFN_cuMemPoolCreate_v11020 MemPoolCreate;
	PFN_cuMemPoolDestroy_v11020 MemPoolDestroy;
	PFN_cuMemPoolTrimTo_v11020 MemPoolTrimTo;
	PFN_cuMemPoolGetAttribute_v11020 MemPoolGetAttribute;
	PFN_cuMemPoolSetAttribute_v11020 MemPoolSetAttribute;
	PFN_cuDeviceGetDefaultMemPool_v11020 DeviceGetDefaultMemPool;
	PFN_cuDeviceGetMemPool_v11020 DeviceGetMemPool;
	PFN_cuStreamCreate_v2000 StreamCreate;
	PFN_cuStreamDestroy_v4000 StreamDestroy;
	PFN_cuStreamSynchronize_v2000 StreamSynchronize, StreamSynchronize_ptsz;
	PFN_cuEventCreate_v2000 EventCreate;
	PFN_cuEventRecord_v2000 EventRecord, EventRecord_ptsz;
	PFN_cuEventSynchronize_v2000 EventSynchronize;
	PFN_cuEventDestroy_v4000 EventDestroy;
	PFN_cuArray3DCreate_v3020 Array3DCreate;
	PFN_cuArrayDestroy_v2000 ArrayDestroy;
	PFN_cuMipmappedArrayCreate_v5000 MipmappedArrayCreate;
	PFN_cuMipmappedArrayDestroy_v5000 MipmappedArrayDestroy;
} D;

static PFN_cuGetProcAddress_v12000 get_proc;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cudaError_t init_error = cudaSuccess;
static pthread_mutex_t prim_mu = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[64];
static int primary_held[64];
static __thread int tls_device;
static __thread cudaError_t tls_last_error;

static int lookup(const char *name, void **fn, unsigned long long flags)
{
	CUdriverProcAddressQueryResult st;

	return get_proc(name, fn, FK_CUDA_VERSION, flags, &st) == CUDA_SUCCESS &&
	       st == CU_GET_PROC_ADDRESS_SUCCESS ? 0 : -1;
}

static void drv_init(void)
{
	void *handle;
	int bad = 0, version = 0;

	get_proc = (PFN_cuGetProcAddress_v12000)fk_driver_open(&handle);
	if (!get_proc) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
#define L(field, name) bad |= lookup(name, (void **)&D.field, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
#define T(field, name) \
	bad |= lookup(name, (void **)&D.field, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	L(Init, "cuInit") L(DriverGetVersion, "cuDriverGetVersion")
	L(DeviceGetCount, "cuDeviceGetCount") L(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	L(PrimaryCtxReset, "cuDevicePrimaryCtxReset") L(CtxGetCurrent, "cuCtxGetCurrent")
	L(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease")
	L(CtxSetCurrent, "cuCtxSetCurrent") L(CtxSynchronize, "cuCtxSynchronize")
	L(MemAlloc, "cuMemAlloc") L(MemAllocPitch, "cuMemAllocPitch")
	L(MemAllocManaged, "cuMemAllocManaged") L(MemFree, "cuMemFree")
	L(MemAllocHost, "cuMemAllocHost") L(MemHostAlloc, "cuMemHostAlloc")
	L(MemFreeHost, "cuMemFreeHost") L(MemGetInfo, "cuMemGetInfo")
	L(Memcpy, "cuMemcpy") T(Memcpy_ptds, "cuMemcpy")
	L(MemsetD8, "cuMemsetD8") T(MemsetD8_ptds, "cuMemsetD8")
	L(MemAllocAsync, "cuMemAllocAsync") T(MemAllocAsync_ptsz, "cuMemAllocAsync")
	L(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")
	T(MemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync")
	L(MemFreeAsync, "cuMemFreeAsync") T(MemFreeAsync_ptsz, "cuMemFreeAsync")
	L(MemPoolCreate, "cuMemPoolCreate") L(MemPoolDestroy, "cuMemPoolDestroy")
	L(MemPoolTrimTo, "cuMemPoolTrimTo") L(MemPoolGetAttribute, "cuMemPoolGetAttribute")
	L(MemPoolSetAttribute, "cuMemPoolSetAttribute")
	L(DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool")
	L(DeviceGetMemPool, "cuDeviceGetMemPool")
	L(StreamCreate, "cuStreamCreate") L(StreamDestroy, "cuStreamDestroy")
	L(StreamSynchronize, "cuStreamSynchronize") T(StreamSynchronize_ptsz, "cuStreamSynchronize")
	L(EventCreate, "cuEventCreate")
	L(EventRecord, "cuEventRecord") T(EventRecord_ptsz, "cuEventRecord")
	L(EventSynchronize, "cuEventSynchronize") L(EventDestroy, "cuEventDestroy")
	L(Array3DCreate, "cuArray3DCreate") L(ArrayDestroy, "cuArrayDestroy")
	L(MipmappedArrayCreate, "cuMipmappedArrayCreate") L(MipmappedArrayDestroy, "cuMipmappedArrayDestroy")
#undef L
#undef T
	if (bad) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
	/* A runtime refuses a driver older than itself, as the real one does. */
	if (D.DriverGetVersion(&version) != CUDA_SUCCESS || version < runtime_version()) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
	if (D.Init(0) != CUDA_SUCCESS)
		init_error = cudaErrorInitializationError;
}

static cudaError_t map_error(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
	case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
	case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
	case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
	case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
	case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
	case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
	case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
	case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
	default: return cudaErrorUnknown;
	}
}

/* Records a failure as the thread's last error and returns it. */
static cudaError_t ret(cudaError_t e)
{
	if (e != cudaSuccess)
		tls_last_error = e;
	return e;
}

static cudaError_t ret_cu(CUresult r)
{
	return ret(map_error(r));
}

static cudaError_t retain_primary(int dev)
{
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&prim_mu);
	if (!primary_held[dev]) {
		r = D.PrimaryCtxRetain(&primary[dev], dev);
		primary_held[dev] = r == CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&prim_mu);
	return map_error(r);
}

/* Every runtime call that needs a device: driver found, a context current
 * (the thread's device's primary context unless the program made one
 * current through the driver). */
static cudaError_t ensure(void)
{
	CUcontext c = NULL;
	cudaError_t e;

	pthread_once(&init_once, drv_init);
	if (init_error != cudaSuccess)
		return init_error;
	if (D.CtxGetCurrent(&c) == CUDA_SUCCESS && c)
		return cudaSuccess;
	if ((e = retain_primary(tls_device)) != cudaSuccess)
		return e;
	return map_error(D.CtxSetCurrent(primary[tls_device]));
}

#define ENSURE() do { cudaError_t e_ = ensure(); if (e_ != cudaSuccess) return ret(e_); } while (0)

cudaError_t cudaGetDeviceCount(int *count)
{
	pthread_once(&init_once, drv_init);
	if (init_error != cudaSuccess)
		return ret(init_error);
	return ret_cu(D.DeviceGetCount(count));
}

cudaError_t cudaSetDevice(int device)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
		return e;
	if (device < 0 || device >= n || device >= 64)
		return ret(cudaErrorInvalidDevice);
	tls_device = device;
	if ((e = retain_primary(device)) != cudaSuccess)
		return ret(e);
	return ret_cu(D.CtxSetCurrent(primary[device]));
}

cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return ret(cudaErrorInvalidValue);
	*device = tls_device;
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	CUcontext c = NULL;

	ENSURE();
	D.CtxGetCurrent(&c);
	return ret_cu(D.CtxSynchronize(c));
}

cudaError_t cudaDeviceReset(void)
{
	CUcontext c = NULL;
	int dev = tls_device;
	CUresult r;

	ENSURE();
	pthread_mutex_lock(&prim_mu);
	/* The driver destroys the context's allocations and keeps it retained;
	 * the runtime lets go of it and retains it again when next used. */
	r = D.PrimaryCtxReset(dev);
	if (r == CUDA_SUCCESS && primary_held[dev])
		D.PrimaryCtxRelease(dev);
	primary_held[dev] = 0;
	pthread_mutex_unlock(&prim_mu);
	if (D.CtxGetCurrent(&c) == CUDA_SUCCESS && c == primary[dev])
		D.CtxSetCurrent(NULL);
	return ret_cu(r);
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr p;
	CUresult r;

	ENSURE();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	if ((r = D.MemAlloc(&p, size)) == CUDA_SUCCESS)
		*devPtr = (void *)(uintptr_t)p;
	return ret_cu(r);
}

cudaError_t cudaFree(void *devPtr)
{
	ENSURE();
	if (!devPtr)
		return cudaSuccess;
	return ret_cu(D.MemFree((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	CUdeviceptr p;
	CUresult r;

	ENSURE();
	if (!devPtr || !pitch)
		return ret(cudaErrorInvalidValue);
	if ((r = D.MemAllocPitch(&p, pitch, width, height, 4)) == CUDA_SUCCESS)
		*devPtr = (void *)(uintptr_t)p;
	return ret_cu(r);
}

/* ---- CUDA arrays: through cuArray3DCreate / cuMipmappedArrayCreate ------ */

/* A channel description as the driver's format and channel count (x, y, z,
 * w bits: the channels that are not 0, all of x's width). */
static int array_desc(CUDA_ARRAY3D_DESCRIPTOR *d, const struct cudaChannelFormatDesc *c, size_t w, size_t h,
		      size_t depth, unsigned int flags)
{
	int bits;

	if (!c)
		return -1;
	memset(d, 0, sizeof(*d));
	d->NumChannels = (c->x > 0) + (c->y > 0) + (c->z > 0) + (c->w > 0);
	bits = c->x;
	if (!d->NumChannels || (c->y && c->y != bits) || (c->z && c->z != bits) || (c->w && c->w != bits))
		return -1;
	if (c->f == cudaChannelFormatKindUnsigned)
		d->Format = bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
			  : bits == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : 0;
	else if (c->f == cudaChannelFormatKindSigned)
		d->Format = bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16
			  : bits == 32 ? CU_AD_FORMAT_SIGNED_INT32 : 0;
	else if (c->f == cudaChannelFormatKindFloat)
		d->Format = bits == 16 ? CU_AD_FORMAT_HALF : bits == 32 ? CU_AD_FORMAT_FLOAT : 0;
	if (!d->Format)
		return -1;
	d->Width = w;
	d->Height = h;
	d->Depth = depth;
	d->Flags = flags;	/* cudaArray* flags are the driver's CUDA_ARRAY3D_* values */
	return 0;
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
			    size_t height, unsigned int flags)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUarray a;
	CUresult r;

	ENSURE();
	if (!array || array_desc(&d, desc, width, height, 0, flags))
		return ret(cudaErrorInvalidValue);
	if ((r = D.Array3DCreate(&a, &d)) == CUDA_SUCCESS)
		*array = (cudaArray_t)a;
	return ret_cu(r);
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
			      struct cudaExtent extent, unsigned int flags)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUarray a;
	CUresult r;

	ENSURE();
	if (!array || array_desc(&d, desc, extent.width, extent.height, extent.depth, flags))
		return ret(cudaErrorInvalidValue);
	if ((r = D.Array3DCreate(&a, &d)) == CUDA_SUCCESS)
		*array = (cudaArray_t)a;
	return ret_cu(r);
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
				     struct cudaExtent extent, unsigned int numLevels, unsigned int flags)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUmipmappedArray m;
	CUresult r;

	ENSURE();
	if (!mipmappedArray || array_desc(&d, desc, extent.width, extent.height, extent.depth, flags))
		return ret(cudaErrorInvalidValue);
	if ((r = D.MipmappedArrayCreate(&m, &d, numLevels)) == CUDA_SUCCESS)
		*mipmappedArray = (cudaMipmappedArray_t)m;
	return ret_cu(r);
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
	ENSURE();
	return array ? ret_cu(D.ArrayDestroy((CUarray)array)) : cudaSuccess;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
	ENSURE();
	return mipmappedArray ? ret_cu(D.MipmappedArrayDestroy((CUmipmappedArray)mipmappedArray)) : cudaSuccess;
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr p;
	CUresult r;

	ENSURE();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if ((r = D.MemAllocManaged(&p, size, flags)) == CUDA_SUCCESS)
		*devPtr = (void *)(uintptr_t)p;
	return ret_cu(r);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	ENSURE();
	return ret_cu(D.MemAllocHost(ptr, size));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	ENSURE();
	return ret_cu(D.MemHostAlloc(pHost, size, flags));
}

cudaError_t cudaFreeHost(void *ptr)
{
	ENSURE();
	return ret_cu(D.MemFreeHost(ptr));
}

static cudaError_t malloc_async(void **devPtr, size_t size, cudaStream_t s, int ptds)
{
	CUdeviceptr p;
	CUresult r;

	ENSURE();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	r = (ptds ? D.MemAllocAsync_ptsz : D.MemAllocAsync)(&p, size, (CUstream)s);
	if (r == CUDA_SUCCESS)
		*devPtr = (void *)(uintptr_t)p;
	return ret_cu(r);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t s)
{
	return malloc_async(devPtr, size, s, 0);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t s)
{
	return malloc_async(devPtr, size, s, 1);
}

static cudaError_t malloc_from_pool(void **ptr, size_t size, cudaMemPool_t pool,
				    cudaStream_t s, int ptds)
{
	CUdeviceptr p;
	CUresult r;

	ENSURE();
	if (!ptr)
		return ret(cudaErrorInvalidValue);
	r = (ptds ? D.MemAllocFromPoolAsync_ptsz : D.MemAllocFromPoolAsync)(
		&p, size, (CUmemoryPool)pool, (CUstream)s);
	if (r == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)p;
	return ret_cu(r);
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
	return malloc_from_pool(ptr, size, pool, s, 0);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
					 cudaStream_t s)
{
	return malloc_from_pool(ptr, size, pool, s, 1);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.MemFreeAsync((CUdeviceptr)(uintptr_t)devPtr, (CUstream)s));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.MemFreeAsync_ptsz((CUdeviceptr)(uintptr_t)devPtr, (CUstream)s));
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *props)
{
	CUmemPoolProps p;

	ENSURE();
	if (!memPool || !props)
		return ret(cudaErrorInvalidValue);
	memset(&p, 0, sizeof(p));
	p.allocType = (CUmemAllocationType)props->allocType;
	p.handleTypes = (CUmemAllocationHandleType)props->handleTypes;
	p.location.type = (CUmemLocationType)props->location.type;
	p.location.id = props->location.id;
	p.maxSize = props->maxSize;
	return ret_cu(D.MemPoolCreate((CUmemoryPool *)memPool, &p));
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
	ENSURE();
	return ret_cu(D.MemPoolDestroy((CUmemoryPool)memPool));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	ENSURE();
	return ret_cu(D.MemPoolTrimTo((CUmemoryPool)memPool, minBytesToKeep));
}

/* cudaMemPoolAttr and CUmemPool_attribute share their numbers. */
_Static_assert((int)cudaMemPoolAttrUsedMemHigh == (int)CU_MEMPOOL_ATTR_USED_MEM_HIGH &&
	       (int)cudaMemPoolAttrReleaseThreshold == (int)CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
	       "pool attribute numbers");

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	ENSURE();
	return ret_cu(D.MemPoolGetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	ENSURE();
	return ret_cu(D.MemPoolSetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	ENSURE();
	return ret_cu(D.DeviceGetDefaultMemPool((CUmemoryPool *)memPool, device));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
	ENSURE();
	return ret_cu(D.DeviceGetMemPool((CUmemoryPool *)memPool, device));
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	ENSURE();
	return ret_cu(D.StreamCreate((CUstream *)pStream, CU_STREAM_DEFAULT));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	ENSURE();
	return ret_cu(D.StreamCreate((CUstream *)pStream, flags));
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.StreamDestroy((CUstream)s));
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.StreamSynchronize((CUstream)s));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.StreamSynchronize_ptsz((CUstream)s));
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	ENSURE();
	return ret_cu(D.EventCreate((CUevent *)event, CU_EVENT_DEFAULT));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.EventRecord((CUevent)event, (CUstream)s));
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t s)
{
	ENSURE();
	return ret_cu(D.EventRecord_ptsz((CUevent)event, (CUstream)s));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	ENSURE();
	return ret_cu(D.EventSynchronize((CUevent)event));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	ENSURE();
	return ret_cu(D.EventDestroy((CUevent)event));
}

cudaError_t cudaMemGetInfo(size_t *free_, size_t *total)
{
	ENSURE();
	return ret_cu(D.MemGetInfo(free_, total));
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	ENSURE();
	return ret_cu(D.Memcpy((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count));
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	ENSURE();
	return ret_cu(D.Memcpy_ptds((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
				    count));
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	ENSURE();
	return ret_cu(D.MemsetD8((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	ENSURE();
	return ret_cu(D.MemsetD8_ptds((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count));
}

/* Driver entry points for the program: straight through cuGetProcAddress_v2,
 * at the requested version (ByVersion) or the runtime's own (13000). Default
 * flags mean the legacy stream, or the per-thread one for the _ptsz exports,
 * which is what a program compiled for per-thread default streams calls. */
static cudaError_t entry_point(const char *symbol, void **funcPtr, int version,
			       unsigned long long flags,
			       enum cudaDriverEntryPointQueryResult *status, int ptds)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	unsigned long long cuflags;
	CUresult r;

	pthread_once(&init_once, drv_init);
	if (init_error != cudaSuccess)
		return ret(init_error);
	if (!symbol || !funcPtr)
		return ret(cudaErrorInvalidValue);
	switch (flags) {
	case cudaEnableDefault:
		cuflags = ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
			: CU_GET_PROC_ADDRESS_LEGACY_STREAM;
		break;
	case cudaEnableLegacyStream: cuflags = CU_GET_PROC_ADDRESS_LEGACY_STREAM; break;
	case cudaEnablePerThreadDefaultStream:
		cuflags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
		break;
	default: return ret(cudaErrorInvalidValue);
	}
	r = get_proc(symbol, funcPtr, version, cuflags, &st);
	if (status)
		*status = st == CU_GET_PROC_ADDRESS_SUCCESS ? cudaDriverEntryPointSuccess
			: st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
			? cudaDriverEntryPointVersionNotSufficent
			: cudaDriverEntryPointSymbolNotFound;
	/* The real runtime reports a missing symbol through status only. */
	if (r == CUDA_ERROR_NOT_FOUND)
		return status ? cudaSuccess : ret(cudaErrorSymbolNotFound);
	return ret_cu(r);
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
					 unsigned long long flags,
					 enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
						  unsigned int cudaVersion,
						  unsigned long long flags,
						  enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus, 1);
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return ret(cudaErrorInvalidValue);
	*runtimeVersion = runtime_version();
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return ret(cudaErrorInvalidValue);
	pthread_once(&init_once, drv_init);
	if (!D.DriverGetVersion) {	/* no driver: the real runtime says 0 */
		*driverVersion = 0;
		return cudaSuccess;
	}
	return ret_cu(D.DriverGetVersion(driverVersion));
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = tls_last_error;

	tls_last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return tls_last_error;
}

static const struct { cudaError_t code; const char *name, *text; } errors[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error" },
	{ cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized",
	  "invalid device context" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
	  "invalid resource handle" },
	{ cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found" },
	{ cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
	{ cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported" },
	{ cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

const char *cudaGetErrorName(cudaError_t error)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error)
			return errors[i].name;
	return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error)
			return errors[i].text;
	return "unrecognized error code";
}
