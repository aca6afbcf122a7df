/*
 * gmt_hooks_mem.c - bodies of the memory hooks (see hooks.def).
 *
 * The shape every body keeps: set the re-entry guard; for an allocation,
 * call the real function and record only what it did (an ALLOC after
 * success, an ALLOC_FAIL with the result otherwise); for a free, record
 * BEFORE the real call (another thread may get the same address the moment
 * the real free returns, and its ALLOC must come after our FREE) and void it
 * with a FREE_FAIL if the real call then fails. The real result is returned
 * unchanged and out-parameters are only ever written by the driver.
 *
 * FREE_FAIL carries the voided event's addr, size, stream and aux (with the
 * result): it voids the most recent free-like event (FREE, VMM_RELEASE,
 * VMM_UNMAP, VMM_ADDR_FREE) of the same thread and address.
 *
 * A FREE has device -1: the memory's device is the allocation's, which the
 * analyzer knows by address; the caller's current context may be another
 * device's (any context may free any device's memory), and keeping an
 * address -> device map here would cost every allocation a lookup.
 *
 * cuMemAlloc_v2's and cuMemFree_v2's bodies, the hottest, are folded into
 * their wrappers: in gmt_hooks_mem.h, with the helpers the bodies share.
 */
#include <string.h>

#include "gmt_hooks_mem.h"

/* ---- plain, managed and pitched ------------------------------------------ */

CUresult gmt_do_cuMemAllocPitch_v2(__typeof__(cuMemAllocPitch_v2) *real, const gmt_call_t *call,
				   CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				   size_t Height, unsigned int ElementSizeBytes)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
	/* The bytes held are pitch * height; a failure reports what was asked. */
	if (r == CUDA_SUCCESS)
		alloc_done(r, call, GMT_KIND_PLAIN, GMT_CUR_DEVICE_AFTER(r), *dptr, (uint64_t)*pPitch * Height, 0);
	else
		alloc_done(r, call, GMT_KIND_PLAIN, GMT_CUR_DEVICE_AFTER(r), 0, (uint64_t)WidthInBytes * Height, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemAllocManaged(__typeof__(cuMemAllocManaged) *real, const gmt_call_t *call,
				  CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(dptr, bytesize, flags);
	alloc_done(r, call, GMT_KIND_MANAGED, GMT_CUR_DEVICE_AFTER(r), r == CUDA_SUCCESS ? *dptr : 0, bytesize, 0);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- stream-ordered ---------------------------------------------------------- */

/* The stream's device (not the current context's: a stream of another
 * device allocates from that device's current pool). After the record,
 * the pool's reserve is read again: the allocation may have grown it. */
CUresult gmt_do_cuMemAllocAsync(__typeof__(cuMemAllocAsync) *real, const gmt_call_t *call,
				CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	CUstream stream = (call->flags & GMT_FLAG_PTSZ) && hStream == NULL ? CU_STREAM_PER_THREAD : hStream;
	CUmemoryPool pool = NULL;
	uint64_t captured;
	CUresult r;
	int cur, dev;

	GMT_GUARD_ENTER();
	r = real(dptr, bytesize, hStream);
	/* The block is the current context's (what its destruction takes):
	 * written before the block if it changed (gmt_cur_device). A default
	 * stream's device is that context's: the same answer, not asked again. */
	cur = GMT_CUR_DEVICE_AFTER(r);
	dev = gmt_stream_is_default(stream) ? cur : gmt_stream_device(stream);
	/* A graph's memory node comes from no pool of ours (and costs nothing
	 * until the graph runs). */
	captured = r == CUDA_SUCCESS ? gmt_capture_flag(hStream, dev) : 0;
	if (r == CUDA_SUCCESS && !captured) {
		gmt_pool_current_served(dev);
		pool = gmt_pool_current(dev);
		gmt_pool_served(pool, dev);
	}
	alloc_done_x(r, call, GMT_KIND_ASYNC, dev, r == CUDA_SUCCESS ? *dptr : 0, bytesize, u64p(hStream),
		     captured);
	gmt_pool_after_alloc(pool, dev);
	GMT_GUARD_LEAVE();
	return r;
}

/* A stream-ordered allocation's kind by its pool: host memory (a pool
 * located on the host or a host NUMA node), managed memory, or device. */
static inline unsigned pool_kind(unsigned flags)
{
	return flags & GMT_POOL_MANAGED ? GMT_KIND_MANAGED : flags & GMT_POOL_HOST ? GMT_KIND_HOST : GMT_KIND_ASYNC;
}

CUresult gmt_do_cuMemAllocFromPoolAsync(__typeof__(cuMemAllocFromPoolAsync) *real,
					const gmt_call_t *call, CUdeviceptr *dptr, size_t bytesize,
					CUmemoryPool pool, CUstream hStream)
{
	uint64_t captured;
	unsigned flags, kind;
	CUresult r;
	int dev, known;

	GMT_GUARD_ENTER();
	r = real(dptr, bytesize, pool, hStream);
	(void)GMT_CUR_DEVICE_AFTER(r);	/* the current context, as cuMemAllocAsync */
	/* The pool's device, known from its creation or look-up; else (a host
	 * or managed pool with no device, a pool we never saw being made) the
	 * stream's. */
	dev = gmt_pool_info(pool, &flags, &known);
	kind = pool_kind(flags);
	if (dev < 0)
		dev = gmt_stream_device((call->flags & GMT_FLAG_PTSZ) && hStream == NULL ? CU_STREAM_PER_THREAD : hStream);
	captured = r == CUDA_SUCCESS ? gmt_capture_flag(hStream, dev) : 0;
	if (r == CUDA_SUCCESS && !captured && kind == GMT_KIND_ASYNC)
		gmt_pool_served(pool, dev);
	alloc_done_x(r, call, kind, dev, r == CUDA_SUCCESS ? *dptr : 0, bytesize, u64p(hStream),
		     captured);
	/* Only a device pool's reserve is device memory. */
	if (r == CUDA_SUCCESS && !captured && kind == GMT_KIND_ASYNC)
		gmt_pool_after_alloc(pool, dev);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemFreeAsync(__typeof__(cuMemFreeAsync) *real, const gmt_call_t *call,
			       CUdeviceptr dptr, CUstream hStream)
{
	uint64_t aux = gmt_aux(GMT_KIND_ASYNC, call);
	const int dev = -1;
	CUresult r;

	GMT_GUARD_ENTER();
	if (dptr != 0)
		gmt_rec(GMT_EV_FREE, dev, dptr, 0, u64p(hStream), aux, 1);
	r = real(dptr, hStream);
	if (dptr != 0)
		free_fail(r, dev, dptr, 0, u64p(hStream), aux);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- virtual memory management ------------------------------------------------ */

CUresult gmt_do_cuMemCreate(__typeof__(cuMemCreate) *real, const gmt_call_t *call,
			    CUmemGenericAllocationHandle *handle, size_t size,
			    const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUresult r;
	int dev = -1;

	GMT_GUARD_ENTER();
	r = real(handle, size, prop, flags);
	/* The device is the one the allocation asks for: worker threads that
	 * create physical memory often have no current context at all. */
	if (prop != NULL && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		dev = prop->location.id;
	if (r == CUDA_SUCCESS) {
		gmt_vmm_handle_created(*handle, dev);
		gmt_rec(GMT_EV_VMM_CREATE, dev, *handle, size, 0, gmt_aux(GMT_KIND_VMM, call), 1);
	} else {
		gmt_rec_alloc_fail(dev, size, 0, gmt_aux(GMT_KIND_VMM, call), (int)r, GMT_BODY_SKIP_FRAMES);
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* Every release is recorded (VMM_CREATE and each VMM_RETAIN are matched by
 * one VMM_RELEASE; the analyzer counts references): NCCL retains a handle
 * and releases it twice. */
CUresult gmt_do_cuMemRelease(__typeof__(cuMemRelease) *real, const gmt_call_t *call,
			     CUmemGenericAllocationHandle handle)
{
	uint64_t aux = gmt_aux(GMT_KIND_VMM, call);
	int dev;
	CUresult r;

	GMT_GUARD_ENTER();
	gmt_vmm_handle_release(handle, &dev);
	gmt_rec(GMT_EV_VMM_RELEASE, dev, handle, 0, 0, aux, 1);
	r = real(handle);
	if (r != CUDA_SUCCESS) {
		gmt_vmm_handle_unrelease(handle, dev);
		free_fail(r, dev, handle, 0, 0, aux);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemRetainAllocationHandle(__typeof__(cuMemRetainAllocationHandle) *real,
					    const gmt_call_t *call, CUmemGenericAllocationHandle *handle,
					    void *addr)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(handle, addr);
	if (r == CUDA_SUCCESS) {
		gmt_vmm_handle_retained(*handle);
		gmt_rec(GMT_EV_VMM_RETAIN, gmt_vmm_handle_device(*handle), *handle, 0,
			(uint64_t)(uintptr_t)addr, gmt_aux(GMT_KIND_VMM, call), 0);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemMap(__typeof__(cuMemMap) *real, const gmt_call_t *call, CUdeviceptr ptr,
			 size_t size, size_t offset, CUmemGenericAllocationHandle handle,
			 unsigned long long flags)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	r = real(ptr, size, offset, handle, flags);
	dev = gmt_vmm_handle_device(handle);
	if (r == CUDA_SUCCESS) {
		gmt_vmm_va_set_device(ptr, dev);
		gmt_rec(GMT_EV_VMM_MAP, dev, ptr, size, handle, offset, 1);
	} else {
		gmt_rec(GMT_EV_VMM_MAP_FAIL, dev, ptr, size, handle,
			GMT_AUX_WITH_RESULT(offset & 0xffffffffu, r), 1);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemUnmap(__typeof__(cuMemUnmap) *real, const gmt_call_t *call, CUdeviceptr ptr,
			   size_t size)
{
	int dev;
	CUresult r;

	GMT_GUARD_ENTER();
	dev = gmt_vmm_va_device(ptr, 0);
	gmt_rec(GMT_EV_VMM_UNMAP, dev, ptr, size, 0, 0, 1);
	r = real(ptr, size);
	if (r == CUDA_SUCCESS)
		gmt_vmm_va_device(ptr, 1);
	free_fail(r, dev, ptr, size, 0, GMT_AUX(GMT_KIND_VMM, gmt_tls.api, gmt_owner(call)));
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemAddressReserve(__typeof__(cuMemAddressReserve) *real, const gmt_call_t *call,
				    CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
				    unsigned long long flags)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(ptr, size, alignment, addr, flags);
	/* Address space only: never device bytes, so a failure is no ALLOC_FAIL. */
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_VMM_RESERVE, -1, *ptr, size, 0, 0, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemAddressFree(__typeof__(cuMemAddressFree) *real, const gmt_call_t *call,
				 CUdeviceptr ptr, size_t size)
{
	CUresult r;

	GMT_GUARD_ENTER();
	gmt_rec(GMT_EV_VMM_ADDR_FREE, -1, ptr, size, 0, 0, 0);
	r = real(ptr, size);
	free_fail(r, -1, ptr, size, 0, GMT_AUX(GMT_KIND_VMM, gmt_tls.api, gmt_owner(call)));
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- pools ----------------------------------------------------------------------- */

CUresult gmt_do_cuMemPoolCreate(__typeof__(cuMemPoolCreate) *real, const gmt_call_t *call,
				CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	CUresult r;
	int dev = -1;

	unsigned flags = 0;

	GMT_GUARD_ENTER();
	r = real(pool, poolProps);
	if (r == CUDA_SUCCESS) {
		if (poolProps != NULL)
			flags = gmt_pool_flags_of(&poolProps->location, poolProps->allocType, &dev);
		gmt_pool_set(*pool, dev, flags);
		/* aux: the pool's GMT_POOL_* flags (host or managed memory) */
		gmt_rec(GMT_EV_POOL_CREATE, dev, 0, 0, u64p(*pool), flags, 0);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemPoolDestroy(__typeof__(cuMemPoolDestroy) *real, const gmt_call_t *call,
				 CUmemoryPool pool)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	dev = gmt_pool_device(pool);
	r = real(pool);
	if (r == CUDA_SUCCESS) {
		gmt_pool_forget(pool);
		gmt_rec(GMT_EV_POOL_DESTROY, dev, 0, 0, u64p(pool), 0, 0);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemPoolTrimTo(__typeof__(cuMemPoolTrimTo) *real, const gmt_call_t *call,
				CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pool, minBytesToKeep);
	if (r == CUDA_SUCCESS) {
		const int dev = gmt_pool_device(pool);
		unsigned flags;
		int known;
		gmt_rec(GMT_EV_POOL_TRIM, dev, 0, minBytesToKeep, u64p(pool), 0, 0);
		/* What the trim gave back, at the trim: the pool's reserve now
		 * (a device pool's: only that is device memory). */
		gmt_pool_info(pool, &flags, &known);
		if (!(flags & (GMT_POOL_HOST | GMT_POOL_MANAGED)))
			gmt_pool_after_alloc(pool, dev);
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* Look-ups only: they tell which device a pool belongs to. */
CUresult gmt_do_cuDeviceGetDefaultMemPool(__typeof__(cuDeviceGetDefaultMemPool) *real,
					  const gmt_call_t *call, CUmemoryPool *pool_out, CUdevice dev)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pool_out, dev);
	if (r == CUDA_SUCCESS)
		gmt_pool_set_device(*pool_out, (int)dev);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuDeviceGetMemPool(__typeof__(cuDeviceGetMemPool) *real, const gmt_call_t *call,
				   CUmemoryPool *pool, CUdevice dev)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pool, dev);
	if (r == CUDA_SUCCESS)
		gmt_pool_current_set((int)dev, *pool);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuDeviceSetMemPool(__typeof__(cuDeviceSetMemPool) *real, const gmt_call_t *call,
				   CUdevice dev, CUmemoryPool pool)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(dev, pool);
	if (r == CUDA_SUCCESS)
		gmt_pool_current_set((int)dev, pool);
	GMT_GUARD_LEAVE();
	return r;
}

/* CUDA 13's pools by location: what the location says of the pool. */
static void pool_by_location(CUmemoryPool pool, const CUmemLocation *location, CUmemAllocationType type)
{
	int dev;
	unsigned flags = gmt_pool_flags_of(location, type, &dev);

	gmt_pool_set(pool, dev, flags);
}

CUresult gmt_do_cuMemGetDefaultMemPool(__typeof__(cuMemGetDefaultMemPool) *real, const gmt_call_t *call,
				       CUmemoryPool *pool_out, CUmemLocation *location,
				       CUmemAllocationType type)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pool_out, location, type);
	if (r == CUDA_SUCCESS)
		pool_by_location(*pool_out, location, type);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemGetMemPool(__typeof__(cuMemGetMemPool) *real, const gmt_call_t *call,
				CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	r = real(pool, location, type);
	if (r == CUDA_SUCCESS) {
		pool_by_location(*pool, location, type);
		if (gmt_pool_flags_of(location, type, &dev) == 0 && dev >= 0)
			gmt_pool_current_set(dev, *pool);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemSetMemPool(__typeof__(cuMemSetMemPool) *real, const gmt_call_t *call,
				CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	r = real(location, type, pool);
	if (r == CUDA_SUCCESS) {
		pool_by_location(pool, location, type);
		/* A device's pinned pool: what cuMemAllocAsync takes from. */
		if (gmt_pool_flags_of(location, type, &dev) == 0 && dev >= 0)
			gmt_pool_current_set(dev, pool);
	}
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- what the program reads of the device --------------------------------- */

/* The program's own cuMemGetInfo: what it saw of the device, as a MEMINFO
 * sample (aux GMT_MEMINFO_PROGRAM) of the current context's device. */
CUresult gmt_do_cuMemGetInfo_v2(__typeof__(cuMemGetInfo_v2) *real, const gmt_call_t *call,
				size_t *free, size_t *total)
{
	CUresult r;
	int dev;

	GMT_GUARD_ENTER();
	r = real(free, total);
	if (r == CUDA_SUCCESS && free != NULL && total != NULL && (dev = gmt_cur_device()) >= 0)
		gmt_rec(GMT_EV_MEMINFO, dev, *free, *total, 0, GMT_MEMINFO_PROGRAM, 0);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- pinned host memory ------------------------------------------------------------ */

CUresult gmt_do_cuMemAllocHost_v2(__typeof__(cuMemAllocHost_v2) *real, const gmt_call_t *call,
				  void **pp, size_t bytesize)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(pp, bytesize);
	alloc_done(r, call, GMT_KIND_HOST, GMT_CUR_DEVICE_AFTER(r), r == CUDA_SUCCESS ? u64p(*pp) : 0, bytesize, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemHostAlloc(__typeof__(cuMemHostAlloc) *real, const gmt_call_t *call,
			       void **pp, size_t bytesize, unsigned int Flags)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(pp, bytesize, Flags);
	alloc_done(r, call, GMT_KIND_HOST, GMT_CUR_DEVICE_AFTER(r), r == CUDA_SUCCESS ? u64p(*pp) : 0, bytesize, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemFreeHost(__typeof__(cuMemFreeHost) *real, const gmt_call_t *call, void *p)
{
	uint64_t aux = gmt_aux(GMT_KIND_HOST, call);
	const int dev = -1;
	CUresult r;

	GMT_GUARD_ENTER();
	if (p != NULL)
		gmt_rec(GMT_EV_FREE, dev, u64p(p), 0, 0, aux, 1);
	r = real(p);
	if (p != NULL)
		free_fail(r, dev, u64p(p), 0, 0, aux);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- CUDA arrays ---------------------------------------------------------------- */

/* Bits per element and channel of an array format (block-compressed: per
 * texel of a 4x4 block, all channels), 0 when not known here. */
static unsigned format_bits(CUarray_format f, int *block)
{
	*block = 0;
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
	case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 8;
	case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: return 8;
	case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: return 8;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
	case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1:
	case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2:
	case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 16;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 32;
	case CU_AD_FORMAT_BC1_UNORM: case CU_AD_FORMAT_BC1_UNORM_SRGB:
	case CU_AD_FORMAT_BC4_UNORM: case CU_AD_FORMAT_BC4_SNORM: *block = 1; return 4;
	case CU_AD_FORMAT_BC2_UNORM: case CU_AD_FORMAT_BC2_UNORM_SRGB: case CU_AD_FORMAT_BC3_UNORM:
	case CU_AD_FORMAT_BC3_UNORM_SRGB: case CU_AD_FORMAT_BC5_UNORM: case CU_AD_FORMAT_BC5_SNORM:
	case CU_AD_FORMAT_BC6H_UF16: case CU_AD_FORMAT_BC6H_SF16: case CU_AD_FORMAT_BC7_UNORM:
	case CU_AD_FORMAT_BC7_UNORM_SRGB: *block = 1; return 8;
	default: return 0;
	}
}

/* The bytes an array's descriptor describes (its texels times their size,
 * summed over mipmap levels: each halves width, height and, unless
 * layered, depth, down to 1), without whatever padding the driver adds:
 * an estimate, said with GMT_FLAG_ESTIMATED. 0 for a format not known. */
static uint64_t array_desc_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch,
				 unsigned flags, unsigned levels)
{
	int block;
	unsigned bits = format_bits(f, &block);
	uint64_t total = 0;

	for (unsigned l = 0; l < (levels ? levels : 1); l++) {
		uint64_t hh = h ? h : 1, dd = d ? d : 1;
		if (block)
			total += (uint64_t)((w + 3) / 4) * ((hh + 3) / 4) * dd * 16 * bits / 8;
		else
			total += (uint64_t)w * hh * dd * ch * bits / 8;
		w = w > 1 ? w / 2 : 1;
		h = h > 1 ? h / 2 : h;
		if (!(flags & CUDA_ARRAY3D_LAYERED))
			d = d > 1 ? d / 2 : d;
	}
	return total;
}

/* What an array holds: the driver's memory requirements where it gives
 * them (for deferred-mapping arrays, as documented), else the descriptor's
 * bytes; *flags says which (GMT_FLAG_ESTIMATED) and whether the memory is
 * mapped into it later (GMT_FLAG_DEFERRED: none is its own). */
static uint64_t array_size(CUarray a, CUmipmappedArray m, int dev, const CUDA_ARRAY3D_DESCRIPTOR *desc,
			   unsigned levels, uint64_t *flags)
{
	const gmt_drv_t *d = gmt_drv();
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;

	*flags = desc->Flags & CUDA_ARRAY3D_DEFERRED_MAPPING ? (uint64_t)GMT_FLAG_DEFERRED << 24 : 0;
	memset(&req, 0, sizeof req);
	if (a != NULL && d->array_mem_req != NULL)
		r = d->array_mem_req(&req, a, (CUdevice)dev);
	else if (m != NULL && d->mipmap_mem_req != NULL)
		r = d->mipmap_mem_req(&req, m, (CUdevice)dev);
	if (r == CUDA_SUCCESS && req.size > 0)
		return req.size;
	*flags |= (uint64_t)GMT_FLAG_ESTIMATED << 24;
	return array_desc_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels,
				desc->Flags, levels);
}

static void array_done(CUresult r, const gmt_call_t *call, CUarray a, CUmipmappedArray m,
		       const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels)
{
	int dev = gmt_cur_device();
	uint64_t flags = 0, size;

	if (desc == NULL)
		return;
	if (r == CUDA_SUCCESS) {
		size = array_size(a, m, dev, desc, levels, &flags);
		alloc_done_x(r, call, GMT_KIND_ARRAY, dev, a != NULL ? u64p(a) : u64p(m), size, 0, flags);
	} else {
		flags = (uint64_t)GMT_FLAG_ESTIMATED << 24;
		size = array_desc_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels,
					desc->Flags, levels);
		alloc_done_x(r, call, GMT_KIND_ARRAY, dev, 0, size, 0, flags);
	}
}

CUresult gmt_do_cuArrayCreate_v2(__typeof__(cuArrayCreate_v2) *real, const gmt_call_t *call,
				 CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pHandle, desc);
	if (desc != NULL) {
		memset(&d3, 0, sizeof d3);
		d3.Width = desc->Width;
		d3.Height = desc->Height;
		d3.Format = desc->Format;
		d3.NumChannels = desc->NumChannels;
		array_done(r, call, r == CUDA_SUCCESS ? *pHandle : NULL, NULL, &d3, 1);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuArray3DCreate_v2(__typeof__(cuArray3DCreate_v2) *real, const gmt_call_t *call,
				   CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pHandle, desc);
	array_done(r, call, r == CUDA_SUCCESS ? *pHandle : NULL, NULL, desc, 1);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMipmappedArrayCreate(__typeof__(cuMipmappedArrayCreate) *real, const gmt_call_t *call,
				       CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc,
				       unsigned int numMipmapLevels)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pHandle, desc, numMipmapLevels);
	array_done(r, call, NULL, r == CUDA_SUCCESS ? *pHandle : NULL, desc, numMipmapLevels);
	GMT_GUARD_LEAVE();
	return r;
}

/* A destroy is a free (before the real call, voided if it fails). */
static CUresult array_free(CUresult (*destroy)(void *), void *h, const gmt_call_t *call)
{
	uint64_t aux = gmt_aux(GMT_KIND_ARRAY, call);
	CUresult r;

	if (h != NULL)
		gmt_rec(GMT_EV_FREE, -1, u64p(h), 0, 0, aux, 1);
	r = destroy(h);
	if (h != NULL)
		free_fail(r, -1, u64p(h), 0, 0, aux);
	return r;
}

CUresult gmt_do_cuArrayDestroy(__typeof__(cuArrayDestroy) *real, const gmt_call_t *call, CUarray hArray)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = array_free((CUresult (*)(void *))(void *)real, hArray, call);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMipmappedArrayDestroy(__typeof__(cuMipmappedArrayDestroy) *real, const gmt_call_t *call,
					CUmipmappedArray hMipmappedArray)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = array_free((CUresult (*)(void *))(void *)real, hMipmappedArray, call);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- graph memory nodes added with the graph API ----------------------------- */

/* As a captured allocation (GMT_FLAG_CAPTURED: backed from the device's
 * graph memory pool when the graph runs), with GMT_FLAG_GRAPH_NODE: stream
 * is the graph. The device is the node's pool location's. */
static void graph_alloc_node(CUresult r, const gmt_call_t *call, CUgraph g, const CUmemPoolProps *props,
			     size_t bytesize, CUdeviceptr dptr)
{
	int dev = props->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? props->location.id : -1;
	uint64_t flags = (uint64_t)(GMT_FLAG_CAPTURED | GMT_FLAG_GRAPH_NODE) << 24;

	if (r == CUDA_SUCCESS)
		gmt_graph_seen(dev);
	alloc_done_x(r, call, GMT_KIND_ASYNC, dev, r == CUDA_SUCCESS ? dptr : 0, bytesize, u64p(g), flags);
}

static void graph_free_node(CUresult r, const gmt_call_t *call, CUgraph g, CUdeviceptr dptr)
{
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_FREE, -1, dptr, 0, u64p(g),
			gmt_aux(GMT_KIND_ASYNC, call) | (uint64_t)(GMT_FLAG_CAPTURED | GMT_FLAG_GRAPH_NODE) << 24, 1);
}

CUresult gmt_do_cuGraphAddMemAllocNode(__typeof__(cuGraphAddMemAllocNode) *real, const gmt_call_t *call,
				       CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
	if (nodeParams != NULL)
		graph_alloc_node(r, call, hGraph, &nodeParams->poolProps, nodeParams->bytesize, nodeParams->dptr);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuGraphAddMemFreeNode(__typeof__(cuGraphAddMemFreeNode) *real, const gmt_call_t *call,
				      CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, CUdeviceptr dptr)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(phGraphNode, hGraph, dependencies, numDependencies, dptr);
	graph_free_node(r, call, hGraph, dptr);
	GMT_GUARD_LEAVE();
	return r;
}

static void graph_node(CUresult r, const gmt_call_t *call, CUgraph g, const CUgraphNodeParams *p)
{
	if (p == NULL)
		return;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		graph_alloc_node(r, call, g, &p->alloc.poolProps, p->alloc.bytesize, p->alloc.dptr);
	else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
		graph_free_node(r, call, g, p->free.dptr);
}

CUresult gmt_do_cuGraphAddNode(__typeof__(cuGraphAddNode) *real, const gmt_call_t *call,
			       CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			       size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
	graph_node(r, call, hGraph, nodeParams);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuGraphAddNode_v2(__typeof__(cuGraphAddNode_v2) *real, const gmt_call_t *call,
				  CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				  const CUgraphEdgeData *dependencyData, size_t numDependencies,
				  CUgraphNodeParams *nodeParams)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams);
	graph_node(r, call, hGraph, nodeParams);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- memory another process or handle owns ------------------------------------- */

/* The bytes of an opened range (cuMemGetAddressRange), 0 if unknown. */
static uint64_t range_bytes(CUdeviceptr p)
{
	const gmt_drv_t *d = gmt_drv();
	CUdeviceptr base = 0;
	size_t size = 0;

	if (d->address_range == NULL || d->address_range(&base, &size, p) != CUDA_SUCCESS)
		return 0;
	return size;
}

/* An imported physical handle: VMM_CREATE of kind imported, size 0 (the
 * memory is the exporter's; its mappings say what this process sees), so
 * that its maps and release are matched. Its device from its properties. */
CUresult gmt_do_cuMemImportFromShareableHandle(__typeof__(cuMemImportFromShareableHandle) *real,
					       const gmt_call_t *call, CUmemGenericAllocationHandle *handle,
					       void *osHandle, CUmemAllocationHandleType shHandleType)
{
	const gmt_drv_t *d;
	CUmemAllocationProp prop;
	CUresult r;
	int dev = -1;

	GMT_GUARD_ENTER();
	r = real(handle, osHandle, shHandleType);
	if (r == CUDA_SUCCESS) {
		d = gmt_drv();
		memset(&prop, 0, sizeof prop);
		if (d->alloc_prop != NULL && d->alloc_prop(&prop, *handle) == CUDA_SUCCESS &&
		    prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE)
			dev = prop.location.id;
		gmt_vmm_handle_created(*handle, dev);
		gmt_rec(GMT_EV_VMM_CREATE, dev, *handle, 0, 0, gmt_aux(GMT_KIND_IMPORTED, call), 1);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMemPoolImportFromShareableHandle(__typeof__(cuMemPoolImportFromShareableHandle) *real,
						   const gmt_call_t *call, CUmemoryPool *pool_out, void *handle,
						   CUmemAllocationHandleType handleType, unsigned long long flags)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pool_out, handle, handleType, flags);
	/* Another process's pool: its pointers are opened here (below); its
	 * reserve is that process's. */
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_POOL_CREATE, -1, 0, 0, u64p(*pool_out), GMT_POOL_IMPORTED, 0);
	GMT_GUARD_LEAVE();
	return r;
}

/* A pointer of another process's pool, or of its IPC handle, opened here:
 * ALLOC of kind imported (the range's bytes), freed by cuMemFree(Async) or
 * cuIpcCloseMemHandle: never "unmatched". */
CUresult gmt_do_cuMemPoolImportPointer(__typeof__(cuMemPoolImportPointer) *real, const gmt_call_t *call,
				       CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(ptr_out, pool, shareData);
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_ALLOC, gmt_cur_device(), *ptr_out, range_bytes(*ptr_out), 0,
			gmt_aux(GMT_KIND_IMPORTED, call), 1);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuIpcOpenMemHandle(__typeof__(cuIpcOpenMemHandle) *real, const gmt_call_t *call,
				   CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(pdptr, handle, Flags);
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_ALLOC, gmt_cur_device(), *pdptr, range_bytes(*pdptr), 0,
			gmt_aux(GMT_KIND_IMPORTED, call), 1);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuIpcCloseMemHandle(__typeof__(cuIpcCloseMemHandle) *real, const gmt_call_t *call,
				    CUdeviceptr dptr)
{
	uint64_t aux = gmt_aux(GMT_KIND_IMPORTED, call);
	CUresult r;

	GMT_GUARD_ENTER();
	gmt_rec(GMT_EV_FREE, -1, dptr, 0, 0, aux, 1);
	r = real(dptr);
	free_fail(r, -1, dptr, 0, 0, aux);
	GMT_GUARD_LEAVE();
	return r;
}

/* ---- multicast objects --------------------------------------------------------- */

/* A multicast object is a handle (mapped and released as any): VMM_CREATE
 * of kind multicast, its size; the memory bound to it is counted where it
 * was allocated. */
CUresult gmt_do_cuMulticastCreate(__typeof__(cuMulticastCreate) *real, const gmt_call_t *call,
				  CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(mcHandle, prop);
	if (r == CUDA_SUCCESS) {
		gmt_vmm_handle_created(*mcHandle, -1);
		gmt_rec(GMT_EV_VMM_CREATE, -1, *mcHandle, prop != NULL ? prop->size : 0, 0,
			gmt_aux(GMT_KIND_MULTICAST, call), 1);
	}
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMulticastBindMem(__typeof__(cuMulticastBindMem) *real, const gmt_call_t *call,
				   CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
				   CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
				   unsigned long long flags)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(mcHandle, mcOffset, memHandle, memOffset, size, flags);
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_MULTICAST_BIND, gmt_vmm_handle_device(memHandle), mcHandle, size, memHandle, 1, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMulticastBindAddr(__typeof__(cuMulticastBindAddr) *real, const gmt_call_t *call,
				    CUmemGenericAllocationHandle mcHandle, size_t mcOffset, CUdeviceptr memptr,
				    size_t size, unsigned long long flags)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(mcHandle, mcOffset, memptr, size, flags);
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_MULTICAST_BIND, gmt_vmm_va_device(memptr, 0), mcHandle, size, memptr, 2, 0);
	GMT_GUARD_LEAVE();
	return r;
}

CUresult gmt_do_cuMulticastUnbind(__typeof__(cuMulticastUnbind) *real, const gmt_call_t *call,
				  CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset,
				  size_t size)
{
	CUresult r;

	GMT_GUARD_ENTER();
	r = real(mcHandle, dev, mcOffset, size);
	if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_MULTICAST_UNBIND, (int)dev, mcHandle, size, 0, 0, 0);
	GMT_GUARD_LEAVE();
	return r;
}
