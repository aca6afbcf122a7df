/*
 * gmt_hooks_sync.c - bodies of the synchronisation and context hooks.
 *
 * A synchronisation point is where stream-ordered frees take effect and
 * where the program waits: it gets a SYNC event (begin time in addr, end time
 * as the event's time, whatever the result) and, at most every 10 ms per
 * device, a MEMINFO and pool sample (in between, the pools a release
 * threshold may have trimmed). A context creation gets its event, the
 * device record the first time a device is seen, and a MEMINFO sample.
 */
#include "gmt_preload.h"

static inline uint64_t u64p(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline __attribute__((always_inline)) void sync_done(CUresult r, unsigned kind, int dev,
							     uint64_t handle, uint64_t begin,
							     CUcontext ctx)
{
	gmt_rec(GMT_EV_SYNC, dev, begin, 0, handle, (uint64_t)kind | (uint64_t)(uint32_t)r << 32, 0);
	gmt_sample_sync(dev, ctx);
}

CUresult gmt_do_cuStreamSynchronize(__typeof__(cuStreamSynchronize) *real, const gmt_call_t *call,
				    CUstream hStream)
{
	uint64_t begin;
	CUresult r;

	GMT_GUARD_ENTER();
	begin = gmt_now_ns();
	r = real(hStream);
	/* The stream's device and context (a stream of another device than
	 * the current context's completes that device's frees). */
	sync_done(r, GMT_SYNC_STREAM,
		  gmt_stream_device((call->flags & GMT_FLAG_PTSZ) && hStream == NULL ? CU_STREAM_PER_THREAD : hStream),
		  u64p(hStream), begin, gmt_stream_ctx(hStream));
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuCtxSynchronize(__typeof__(cuCtxSynchronize) *real, const gmt_call_t *call)
{
	uint64_t begin;
	CUresult r;

	GMT_GUARD_ENTER();
	begin = gmt_now_ns();
	r = real();
	sync_done(r, GMT_SYNC_CTX, gmt_cur_device(), 0, begin, NULL);
	GMT_GUARD_LEAVE();
	return r;
}

/* The CUDA 13 form: synchronises ctx (NULL: the current context). */
CUresult gmt_do_cuCtxSynchronize_v2(__typeof__(cuCtxSynchronize_v2) *real, const gmt_call_t *call,
				    CUcontext ctx)
{
	uint64_t begin;
	CUresult r;

	GMT_GUARD_ENTER();
	begin = gmt_now_ns();
	r = real(ctx);
	sync_done(r, GMT_SYNC_CTX, gmt_ctx_device(ctx), 0, begin, ctx);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuEventSynchronize(__typeof__(cuEventSynchronize) *real, const gmt_call_t *call,
				   CUevent hEvent)
{
	uint64_t begin;
	CUresult r;

	GMT_GUARD_ENTER();
	begin = gmt_now_ns();
	r = real(hEvent);
	sync_done(r, GMT_SYNC_EVENT, gmt_cur_device(), u64p(hEvent), begin, NULL);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- contexts ------------------------------------------------------------- */

/* Hooked only because they change the current context: the wrapper makes
 * the thread unsure of it (GMT_FLAG_CTX); nothing is recorded (the next
 * traced call finds the context changed and writes CTX_CURRENT). */
CUresult gmt_do_cuCtxSetCurrent(__typeof__(cuCtxSetCurrent) *real, const gmt_call_t *call, CUcontext ctx)
{
	(void)call;
	return real(ctx);
}

CUresult gmt_do_cuCtxPushCurrent_v2(__typeof__(cuCtxPushCurrent_v2) *real, const gmt_call_t *call,
				    CUcontext ctx)
{
	(void)call;
	return real(ctx);
}

CUresult gmt_do_cuCtxPopCurrent_v2(__typeof__(cuCtxPopCurrent_v2) *real, const gmt_call_t *call,
				   CUcontext *pctx)
{
	(void)call;
	return real(pctx);
}

/* Whoever asks for the driver's private tables (every CUDA runtime does)
 * may change the current context by a route we cannot see: the cache of
 * it goes, for the process. Nothing else: no initialisation here. */
CUresult gmt_do_cuGetExportTable(__typeof__(cuGetExportTable) *real, const gmt_call_t *call,
				 const void **ppExportTable, const CUuuid *pExportTableId)
{
	(void)call;
	gmt_ctx_cache_off("cuGetExportTable");
	return real(ppExportTable, pExportTableId);
}

static inline __attribute__((always_inline)) void ctx_created(CUresult r, CUcontext *pctx, CUdevice dev)
{
	if (r != CUDA_SUCCESS)
		return;
	gmt_rec(GMT_EV_CTX_CREATE, (int)dev, u64p(*pctx), 0, 0, 0, 0);
	/* The new context is current: the sample needs no push. */
	gmt_device_seen((int)dev, NULL);
}

CUresult gmt_do_cuCtxCreate_v2(__typeof__(cuCtxCreate_v2) *real, const gmt_call_t *call,
			       CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(pctx, flags, dev);
	ctx_created(r, pctx, dev);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuCtxCreate_v3(__typeof__(cuCtxCreate_v3) *real, const gmt_call_t *call,
			       CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
			       unsigned int flags, CUdevice dev)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(pctx, paramsArray, numParams, flags, dev);
	ctx_created(r, pctx, dev);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuCtxCreate_v4(__typeof__(cuCtxCreate_v4) *real, const gmt_call_t *call,
			       CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
			       unsigned int flags, CUdevice dev)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(pctx, ctxCreateParams, flags, dev);
	ctx_created(r, pctx, dev);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuCtxDestroy_v2(__typeof__(cuCtxDestroy_v2) *real, const gmt_call_t *call, CUcontext ctx)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	dev = gmt_ctx_device(ctx);
	r = real(ctx);
	if (r == CUDA_SUCCESS) {
		gmt_ctx_forget();
		gmt_sample_after_destroy(dev);
		gmt_rec(GMT_EV_CTX_DESTROY, dev, u64p(ctx), 0, 0, 0, 0);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuDevicePrimaryCtxRetain(__typeof__(cuDevicePrimaryCtxRetain) *real,
					 const gmt_call_t *call, CUcontext *pctx, CUdevice dev)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pctx, dev);
	if (r == CUDA_SUCCESS) {
		gmt_rec(GMT_EV_PRIMARY_RETAIN, (int)dev, u64p(*pctx), 0, 0, 0, 0);
		/* Retain does not make the context current: sample it pushed. */
		gmt_device_seen((int)dev, *pctx);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuDevicePrimaryCtxRelease_v2(__typeof__(cuDevicePrimaryCtxRelease_v2) *real,
					     const gmt_call_t *call, CUdevice dev)
{
	const gmt_drv_t *d;
	unsigned int flags = 0;
	int before = 0, after = 1;
	CUresult r;

	GMT_GUARD_ENTER();
	d = gmt_drv();
	/* Whether this release is the last one only the driver knows: a
	 * context active before it and not after went, with its allocations
	 * (a release after a reset destroys nothing). */
	if (d->primary_get_state != NULL && d->primary_get_state(dev, &flags, &before) != CUDA_SUCCESS)
		before = 0;
	r = real(dev);
	if (r == CUDA_SUCCESS) {
		/* The last release destroys the context: forget cached ones. */
		gmt_ctx_forget();
		gmt_rec(GMT_EV_PRIMARY_RELEASE, (int)dev, 0, 0, 0, 0, 0);
		if (before && d->primary_get_state(dev, &flags, &after) == CUDA_SUCCESS && !after) {
			gmt_sample_after_destroy((int)dev);
			gmt_rec(GMT_EV_CTX_DESTROY, (int)dev, 0, 0, 0, GMT_CTX_PRIMARY, 0);
		}
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* cudaDeviceReset's driver call: every allocation of the primary context
 * is destroyed, the context stays retained (inactive until next used). */
CUresult gmt_do_cuDevicePrimaryCtxReset_v2(__typeof__(cuDevicePrimaryCtxReset_v2) *real,
					   const gmt_call_t *call, CUdevice dev)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(dev);
	if (r == CUDA_SUCCESS) {
		gmt_ctx_forget();
		gmt_sample_after_destroy((int)dev);
		gmt_rec(GMT_EV_CTX_DESTROY, (int)dev, 0, 0, 0, GMT_CTX_PRIMARY | GMT_CTX_RESET, 0);
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- what the driver takes for itself, placed in time --------------------- */

/* cuCtxSetLimit (the malloc heap, the printf FIFO, the stack: device memory
 * the driver reserves for kernels): the value asked for and the one the
 * driver then reports, then a sample of the device. */
CUresult gmt_do_cuCtxSetLimit(__typeof__(cuCtxSetLimit) *real, const gmt_call_t *call, CUlimit limit,
			      size_t value)
{
	const gmt_drv_t *d;
	size_t now = 0;
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	r = real(limit, value);
	if (r == CUDA_SUCCESS) {
		d = gmt_drv();
		dev = gmt_cur_device();
		if (d->ctx_get_limit == NULL || d->ctx_get_limit(&now, limit) != CUDA_SUCCESS)
			now = value;
		gmt_rec(GMT_EV_CTX_LIMIT, dev, (uint64_t)limit, value, now, 0, 1);
		gmt_sample_now(dev);
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* A module or library load (the driver places its code and data on the
 * device): MODULE_LOAD with the call, then a sample of the device. */
static void module_loaded(CUresult r, void *handle, unsigned how)
{
	int dev;

	if (r != CUDA_SUCCESS)
		return;
	dev = gmt_cur_device();
	gmt_rec(GMT_EV_MODULE_LOAD, dev, u64p(handle), 0, 0, how, 1);
	gmt_sample_now(dev);
}

static void module_unloaded(CUresult r, void *handle, unsigned how)
{
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_MODULE_UNLOAD, gmt_cur_device(), u64p(handle), 0, 0, how, 0);
}

CUresult gmt_do_cuModuleLoad(__typeof__(cuModuleLoad) *real, const gmt_call_t *call, CUmodule *module,
			     const char *fname)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(module, fname);
	module_loaded(r, r == CUDA_SUCCESS ? *module : NULL, GMT_MODULE_LOAD);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuModuleLoadData(__typeof__(cuModuleLoadData) *real, const gmt_call_t *call, CUmodule *module,
				 const void *image)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(module, image);
	module_loaded(r, r == CUDA_SUCCESS ? *module : NULL, GMT_MODULE_LOAD_DATA);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuModuleLoadDataEx(__typeof__(cuModuleLoadDataEx) *real, const gmt_call_t *call,
				   CUmodule *module, const void *image, unsigned int numOptions,
				   CUjit_option *options, void **optionValues)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(module, image, numOptions, options, optionValues);
	module_loaded(r, r == CUDA_SUCCESS ? *module : NULL, GMT_MODULE_LOAD_DATA_EX);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuModuleLoadFatBinary(__typeof__(cuModuleLoadFatBinary) *real, const gmt_call_t *call,
				      CUmodule *module, const void *fatCubin)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(module, fatCubin);
	module_loaded(r, r == CUDA_SUCCESS ? *module : NULL, GMT_MODULE_LOAD_FAT_BINARY);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuModuleUnload(__typeof__(cuModuleUnload) *real, const gmt_call_t *call, CUmodule hmod)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(hmod);
	module_unloaded(r, hmod, GMT_MODULE_UNLOAD);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuLibraryLoadData(__typeof__(cuLibraryLoadData) *real, const gmt_call_t *call,
				  CUlibrary *library, const void *code, CUjit_option *jitOptions,
				  void **jitOptionsValues, unsigned int numJitOptions,
				  CUlibraryOption *libraryOptions, void **libraryOptionValues,
				  unsigned int numLibraryOptions)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
		 libraryOptionValues, numLibraryOptions);
	module_loaded(r, r == CUDA_SUCCESS ? *library : NULL, GMT_LIBRARY_LOAD_DATA);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuLibraryLoadFromFile(__typeof__(cuLibraryLoadFromFile) *real, const gmt_call_t *call,
				      CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
				      void **jitOptionsValues, unsigned int numJitOptions,
				      CUlibraryOption *libraryOptions, void **libraryOptionValues,
				      unsigned int numLibraryOptions)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
		 libraryOptionValues, numLibraryOptions);
	module_loaded(r, r == CUDA_SUCCESS ? *library : NULL, GMT_LIBRARY_LOAD_FROM_FILE);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuLibraryUnload(__typeof__(cuLibraryUnload) *real, const gmt_call_t *call, CUlibrary library)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(library);
	module_unloaded(r, library, GMT_LIBRARY_UNLOAD);
	GMT_GUARD_LEAVE();
	return r;
}
