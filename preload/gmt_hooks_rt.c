/*
 * gmt_hooks_rt.c - bodies of the runtime and NCCL hooks.
 *
 * Runtime wrappers record nothing: the driver-level hook under them records
 * the allocation once, and these only say, for its aux, which API the
 * program called. The OUTERMOST runtime call names it (a cudaMallocAsync
 * implemented with another runtime call stays cudaMallocAsync).
 *
 * They also note which library called (gmt_lib_note()): a cuBLAS or cuDNN
 * built against the dynamic runtime calls cudaMalloc from its own text, and
 * the driver-level allocation under it gets that library as its owner
 * (gmt_tls.rt_owner; the outermost runtime call decides, as for the API).
 *
 * NCCL wrappers emit NCCL_BEGIN/NCCL_END around the outermost NCCL call and
 * keep a per-thread depth, so the driver-level allocations NCCL makes inside
 * it carry owner "nccl". NCCL also allocates lazily from its own threads
 * (at the first collective), outside any wrapper: gmt_owner() recognises
 * those by their caller's address in libnccl's text (gmt_lib_note()).
 * Neither kind sets the re-entry guard: the driver calls made inside must
 * be recorded. Both tell gmt_versions_note() which library answered (its
 * version goes into the trace once).
 */
#include "gmt_preload.h"

static inline unsigned api_enter(unsigned api)
{
	unsigned saved = gmt_tls.api;
	if (saved == GMT_API_DRIVER)
		gmt_tls.api = api;
	return saved;
}

/* One runtime body: name the API and the owner, call, restore. The
 * runtime may change the current context inside (its private driver
 * interface): the thread is unsure of it on entry and exit, and nothing
 * inside trusts the cache (gmt_cur_device_ok). The
 * outermost runtime call's caller decides the owner (a cuDNN built against
 * the dynamic libcudart calls cudaMalloc from its own text; the driver call
 * under it comes from libcudart's). */
#define GMT_RT_BODY(name, api_id, params, args)                                           \
	cudaError_t gmt_do_##name(__typeof__(name) *real, const gmt_call_t *call GMT_TAIL params) \
	{                                                                               \
		unsigned saved = api_enter(api_id), saved_owner = gmt_tls.rt_owner;     \
		cudaError_t r;                                                          \
		if (saved == GMT_API_DRIVER)                                            \
			gmt_tls.rt_owner = gmt_lib_note(call->caller);                  \
		gmt_versions_note((const void *)real, GMT_LIB_RT);                      \
		gmt_ctx_unsure();                                                       \
		r = real args;                                                          \
		gmt_ctx_unsure();                                                       \
		gmt_tls.api = saved;                                                    \
		gmt_tls.rt_owner = saved_owner;                                         \
		return r;                                                               \
	}

GMT_RT_BODY(cudaMalloc, GMT_API_CUDA_MALLOC, (void **devPtr, size_t size), (devPtr, size))
GMT_RT_BODY(cudaFree, GMT_API_CUDA_FREE, (void *devPtr), (devPtr))
GMT_RT_BODY(cudaMallocAsync, GMT_API_CUDA_MALLOC_ASYNC,
	    (void **devPtr, size_t size, cudaStream_t hStream), (devPtr, size, hStream))
GMT_RT_BODY(cudaFreeAsync, GMT_API_CUDA_FREE_ASYNC, (void *devPtr, cudaStream_t hStream),
	    (devPtr, hStream))
GMT_RT_BODY(cudaMallocFromPoolAsync, GMT_API_CUDA_MALLOC_FROM_POOL_ASYNC,
	    (void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream),
	    (ptr, size, memPool, stream))
GMT_RT_BODY(cudaMallocManaged, GMT_API_CUDA_MALLOC_MANAGED,
	    (void **devPtr, size_t size, unsigned int flags), (devPtr, size, flags))
GMT_RT_BODY(cudaMallocHost, GMT_API_CUDA_MALLOC_HOST, (void **ptr, size_t size), (ptr, size))
GMT_RT_BODY(cudaHostAlloc, GMT_API_CUDA_HOST_ALLOC, (void **pHost, size_t size, unsigned int flags),
	    (pHost, size, flags))
GMT_RT_BODY(cudaFreeHost, GMT_API_CUDA_FREE_HOST, (void *ptr), (ptr))
GMT_RT_BODY(cudaMallocPitch, GMT_API_CUDA_MALLOC_PITCH,
	    (void **devPtr, size_t *pitch, size_t width, size_t height), (devPtr, pitch, width, height))

GMT_RT_BODY(cudaMallocArray, GMT_API_CUDA_MALLOC_ARRAY,
	    (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width, size_t height,
	     unsigned int flags), (array, desc, width, height, flags))
GMT_RT_BODY(cudaMalloc3DArray, GMT_API_CUDA_MALLOC_3D_ARRAY,
	    (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
	     unsigned int flags), (array, desc, extent, flags))
GMT_RT_BODY(cudaMallocMipmappedArray, GMT_API_CUDA_MALLOC_MIPMAPPED_ARRAY,
	    (cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
	     struct cudaExtent extent, unsigned int numLevels, unsigned int flags),
	    (mipmappedArray, desc, extent, numLevels, flags))
GMT_RT_BODY(cudaFreeArray, GMT_API_CUDA_FREE_ARRAY, (cudaArray_t array), (array))
GMT_RT_BODY(cudaFreeMipmappedArray, GMT_API_CUDA_FREE_MIPMAPPED_ARRAY, (cudaMipmappedArray_t mipmappedArray),
	    (mipmappedArray))

/* ---- NCCL ---------------------------------------------------------------- */

typedef struct nccl_scope {
	unsigned call;
	unsigned saved_api;
	int outer;
} nccl_scope_t;

static nccl_scope_t nccl_enter(unsigned ncall, unsigned api, uint64_t comm, uint64_t size, void *real)
{
	nccl_scope_t s = { ncall, api_enter(api), gmt_tls.nccl_depth++ == 0 };

	gmt_ctx_unsure(); /* as a runtime call (GMT_RT_BODY) */
	gmt_lib_note(real); /* the real function lies in libnccl's text */
	gmt_versions_note(real, GMT_LIB_NCCL);
	if (s.outer)
		gmt_rec(GMT_EV_NCCL_BEGIN, -1, comm, size, 0, ncall, 0);
	return s;
}

static void nccl_leave(const nccl_scope_t *s, uint64_t comm, uint64_t size, ncclResult_t r)
{
	gmt_ctx_unsure();
	gmt_tls.nccl_depth--;
	gmt_tls.api = s->saved_api;
	if (s->outer)
		gmt_rec(GMT_EV_NCCL_END, -1, comm, size, 0, (uint64_t)s->call | (uint64_t)(uint32_t)r << 32, 0);
}

static inline uint64_t u64p(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* ncclMemAlloc / ncclMemFree: addr is the memory, size the bytes asked for.
 * A failed ncclMemAlloc is a failed allocation: when no driver call inside
 * it failed (those record their own ALLOC_FAIL), it gets one of its own
 * (kind unknown, owner nccl, result the ncclResult_t). */
ncclResult_t gmt_do_ncclMemAlloc(__typeof__(ncclMemAlloc) *real, const gmt_call_t *call,
				 void **ptr, size_t size)
{
	unsigned fails = gmt_tls.fails;
	nccl_scope_t s = nccl_enter(GMT_NCCL_MEM_ALLOC, GMT_API_NCCL_MEM_ALLOC, 0, size, (void *)real);
	ncclResult_t r = real(ptr, size);
	if (r != ncclSuccess && gmt_tls.fails == fails)
		gmt_rec_alloc_fail(gmt_cur_device(), size, 0,
				   GMT_AUX(GMT_KIND_UNKNOWN, GMT_API_NCCL_MEM_ALLOC, GMT_OWNER_NCCL), (int)r,
				   GMT_BODY_SKIP_FRAMES);
	nccl_leave(&s, r == ncclSuccess && ptr != NULL ? u64p(*ptr) : 0, size, r);
	return r;
}

ncclResult_t gmt_do_ncclMemFree(__typeof__(ncclMemFree) *real, const gmt_call_t *call, void *ptr)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_MEM_FREE, GMT_API_NCCL_MEM_FREE, u64p(ptr), 0, (void *)real);
	ncclResult_t r = real(ptr);
	nccl_leave(&s, u64p(ptr), 0, r);
	return r;
}

static inline uint64_t comm_out(ncclResult_t r, const ncclComm_t *comm)
{
	return r == ncclSuccess && comm != NULL ? u64p(*comm) : 0;
}

ncclResult_t gmt_do_ncclCommInitRank(__typeof__(ncclCommInitRank) *real, const gmt_call_t *call,
				     ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_INIT_RANK, GMT_API_DRIVER, 0, 0, (void *)real);
	ncclResult_t r = real(comm, nranks, commId, rank);
	nccl_leave(&s, comm_out(r, comm), 0, r);
	return r;
}

/* One call makes ndev communicators: addr is the first. */
ncclResult_t gmt_do_ncclCommInitAll(__typeof__(ncclCommInitAll) *real, const gmt_call_t *call,
				    ncclComm_t *comm, int ndev, const int *devlist)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_INIT_ALL, GMT_API_DRIVER, 0, 0, (void *)real);
	ncclResult_t r = real(comm, ndev, devlist);
	nccl_leave(&s, ndev > 0 ? comm_out(r, comm) : 0, 0, r);
	return r;
}

ncclResult_t gmt_do_ncclCommInitRankConfig(__typeof__(ncclCommInitRankConfig) *real,
					   const gmt_call_t *call, ncclComm_t *comm, int nranks,
					   ncclUniqueId commId, int rank, ncclConfig_t *config)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_INIT_RANK_CONFIG, GMT_API_DRIVER, 0, 0, (void *)real);
	ncclResult_t r = real(comm, nranks, commId, rank, config);
	nccl_leave(&s, comm_out(r, comm), 0, r);
	return r;
}

/* BEGIN names the parent, END the new communicator. */
ncclResult_t gmt_do_ncclCommSplit(__typeof__(ncclCommSplit) *real, const gmt_call_t *call,
				  ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
				  ncclConfig_t *config)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_SPLIT, GMT_API_DRIVER, u64p(comm), 0, (void *)real);
	ncclResult_t r = real(comm, color, key, newcomm, config);
	nccl_leave(&s, comm_out(r, newcomm), 0, r);
	return r;
}

ncclResult_t gmt_do_ncclCommInitRankScalable(__typeof__(ncclCommInitRankScalable) *real,
					     const gmt_call_t *call, ncclComm_t *newcomm, int nranks,
					     int myrank, int nId, ncclUniqueId *commIds,
					     ncclConfig_t *config)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_INIT_RANK_SCALABLE, GMT_API_DRIVER, 0, 0, (void *)real);
	ncclResult_t r = real(newcomm, nranks, myrank, nId, commIds, config);
	nccl_leave(&s, comm_out(r, newcomm), 0, r);
	return r;
}

/* BEGIN names the parent, END the new communicator (as for a split). */
ncclResult_t gmt_do_ncclCommShrink(__typeof__(ncclCommShrink) *real, const gmt_call_t *call,
				   ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
				   ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_SHRINK, GMT_API_DRIVER, u64p(comm), 0, (void *)real);
	ncclResult_t r = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
	nccl_leave(&s, comm_out(r, newcomm), 0, r);
	return r;
}

ncclResult_t gmt_do_ncclCommDestroy(__typeof__(ncclCommDestroy) *real, const gmt_call_t *call,
				    ncclComm_t comm)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_DESTROY, GMT_API_DRIVER, u64p(comm), 0, (void *)real);
	ncclResult_t r = real(comm);
	nccl_leave(&s, u64p(comm), 0, r);
	return r;
}

ncclResult_t gmt_do_ncclCommAbort(__typeof__(ncclCommAbort) *real, const gmt_call_t *call,
				  ncclComm_t comm)
{
	nccl_scope_t s = nccl_enter(GMT_NCCL_COMM_ABORT, GMT_API_DRIVER, u64p(comm), 0, (void *)real);
	ncclResult_t r = real(comm);
	nccl_leave(&s, u64p(comm), 0, r);
	return r;
}
