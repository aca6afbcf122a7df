/* fake_nccl.c - a test double of NCCL (libnccl.so.2).
 *
 * Like the real libnccl, it has no libcudart dependency: the real one carries
 * a static copy of the runtime, which finds the driver by dlopen("libcuda.so.1")
 * + dlsym("cuGetProcAddress_v2") and then resolves every driver call through
 * cuGetProcAddress_v2 at 13000. This double does the same by itself.
 *
 * Every allocation is virtual memory on the communicator's device, made and
 * freed with the exact call sequences of NCCL's ncclCuMemAlloc/ncclCuMemFree:
 *   alloc: cuMemGetAllocationGranularity, cuMemCreate(roundup(size, 2 MiB)),
 *          cuMemAddressReserve, cuMemMap, cuMemSetAccess
 *   free:  cuMemRetainAllocationHandle, cuMemRelease, cuMemGetAddressRange,
 *          cuMemUnmap, cuMemRelease, cuMemAddressFree
 * Sizes (documented in README.md): 2 MiB of device communicator structures at
 * init; at the first collective, transport buffers of NCCL_BUFFSIZE bytes
 * (default 4 MiB) rounded up to 2 MiB; ncclMemAlloc(size) roundup(size, 2 MiB).
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakecuda_internal.h"

#define COMM_MAGIC 0x4e43434c
#define COMM_STRUCT_BYTES ((size_t)2 << 20)
#define DEFAULT_BUFFSIZE ((size_t)4 << 20)

struct fk_block {
	uintptr_t va;
	struct fk_block *next;
};

struct ncclComm {
	uint32_t magic;
	int device, nranks, rank;
	int connected;	/* transport buffers allocated (first collective) */
	struct fk_block *blocks;
};

static struct {
	PFN_cuInit_v2000 Init;
	PFN_cuDeviceGetCount_v2000 DeviceGetCount;
	PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
	PFN_cuCtxGetDevice_v13000 CtxGetDevice;
	PFN_cuMemGetAllocationGranularity_v10020 MemGetAllocationGranularity;
	PFN_cuMemCreate_v10020 MemCreate;
	PFN_cuMemAddressReserve_v10020 MemAddressReserve;
	PFN_cuMemMap_v10020 MemMap;
	PFN_cuMemSetAccess_v10020 MemSetAccess;
	PFN_cuMemRetainAllocationHandle_v11000 MemRetainAllocationHandle;
	PFN_cuMemRelease_v10020 MemRelease;
	PFN_cuMemGetAddressRange_v3020 MemGetAddressRange;
	PFN_cuMemUnmap_v10020 MemUnmap;
	PFN_cuMemAddressFree_v10020 MemAddressFree;
} D;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ncclResult_t init_result = ncclSuccess;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fk_block *user_blocks;	/* ncclMemAlloc */
static __thread char last_error[256];

static void set_error(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
}

static void drv_init(void)
{
	PFN_cuGetProcAddress_v12000 get_proc;
	CUdriverProcAddressQueryResult st;
	void *handle;
	int bad = 0;

	get_proc = (PFN_cuGetProcAddress_v12000)fk_driver_open(&handle);
	if (!get_proc) {
		init_result = ncclSystemError;
		set_error("cannot load libcuda.so.1 or find cuGetProcAddress_v2");
		return;
	}
#define L(field, name) \
	bad |= get_proc(name, (void **)&D.field, FK_CUDA_VERSION, \
			CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) != CUDA_SUCCESS;
	L(Init, "cuInit") L(DeviceGetCount, "cuDeviceGetCount")
	L(CtxGetCurrent, "cuCtxGetCurrent") L(CtxGetDevice, "cuCtxGetDevice")
	L(MemGetAllocationGranularity, "cuMemGetAllocationGranularity")
	L(MemCreate, "cuMemCreate") L(MemAddressReserve, "cuMemAddressReserve")
	L(MemMap, "cuMemMap") L(MemSetAccess, "cuMemSetAccess")
	L(MemRetainAllocationHandle, "cuMemRetainAllocationHandle")
	L(MemRelease, "cuMemRelease") L(MemGetAddressRange, "cuMemGetAddressRange")
	L(MemUnmap, "cuMemUnmap") L(MemAddressFree, "cuMemAddressFree")
#undef L
	if (bad || D.Init(0) != CUDA_SUCCESS) {
		init_result = ncclSystemError;
		set_error("driver entry points missing or cuInit failed");
	}
}

static ncclResult_t ensure(void)
{
	pthread_once(&init_once, drv_init);
	return init_result;
}

/* The calling thread's device: its current context's, else 0 (what the
 * runtime's cudaGetDevice answers before any cudaSetDevice). */
static int current_device(void)
{
	CUcontext c = NULL;
	CUdevice d = 0;

	if (D.CtxGetCurrent(&c) == CUDA_SUCCESS && c && D.CtxGetDevice(&d, c) == CUDA_SUCCESS)
		return d;
	return 0;
}

/* ncclCuMemAlloc: physical memory on dev, mapped at a fresh reservation. */
static ncclResult_t cumem_alloc(uintptr_t *out, size_t size, int dev)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va = 0;
	size_t gran = 0;
	CUresult r;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	if ((r = D.MemGetAllocationGranularity(&gran, &prop,
					       CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) != CUDA_SUCCESS)
		goto fail;
	size = fk_roundup(size, gran);
	if ((r = D.MemCreate(&h, size, &prop, 0)) != CUDA_SUCCESS)
		goto fail;
	if ((r = D.MemAddressReserve(&va, size, gran, 0, 0)) != CUDA_SUCCESS)
		goto fail_release;
	if ((r = D.MemMap(va, size, 0, h, 0)) != CUDA_SUCCESS)
		goto fail_free;
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = D.MemSetAccess(va, size, &access, 1)) != CUDA_SUCCESS)
		goto fail_unmap;
	*out = va;
	return ncclSuccess;
fail_unmap:
	D.MemUnmap(va, size);
fail_free:
	D.MemAddressFree(va, size);
fail_release:
	D.MemRelease(h);
fail:
	set_error(r == CUDA_ERROR_OUT_OF_MEMORY ? "Cuda failure 'out of memory'"
		  : "Cuda failure in a cuMem call");
	return ncclUnhandledCudaError;
}

/* ncclCuMemFree, call for call. */
static ncclResult_t cumem_free(uintptr_t va)
{
	CUmemGenericAllocationHandle h;
	size_t size = 0;

	if (D.MemRetainAllocationHandle(&h, (void *)va) != CUDA_SUCCESS ||
	    D.MemRelease(h) != CUDA_SUCCESS ||
	    D.MemGetAddressRange(NULL, &size, va) != CUDA_SUCCESS ||
	    D.MemUnmap(va, size) != CUDA_SUCCESS || D.MemRelease(h) != CUDA_SUCCESS ||
	    D.MemAddressFree(va, size) != CUDA_SUCCESS) {
		set_error("Cuda failure in cuMem free");
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

static ncclResult_t comm_alloc(struct ncclComm *comm, size_t size)
{
	struct fk_block *b = malloc(sizeof(*b));
	ncclResult_t r;

	if (!b)
		return ncclSystemError;
	if ((r = cumem_alloc(&b->va, size, comm->device)) != ncclSuccess) {
		free(b);
		return r;
	}
	b->next = comm->blocks;
	comm->blocks = b;
	return ncclSuccess;
}

static int valid_comm(const struct ncclComm *c)
{
	return c && c->magic == COMM_MAGIC;
}

ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	/* GMT_FAKE_NCCL_VERSION (default: the installed nccl.h's code), so that
	 * a test can run two "versions". */
	const char *s = getenv("GMT_FAKE_NCCL_VERSION");
	char *end;
	long v;

	errno = 0;
	v = s && *s ? strtol(s, &end, 10) : 0;
	*version = s && *s && !errno && !*end && v > 0 && v <= INT_MAX ? (int)v : NCCL_VERSION_CODE;
	return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	static unsigned counter;
	ncclResult_t r = ensure();

	if (r != ncclSuccess)
		return r;
	if (!uniqueId)
		return ncclInvalidArgument;
	memset(uniqueId, 0, sizeof(*uniqueId));
	snprintf(uniqueId->internal, sizeof(uniqueId->internal), "fakenccl-%ld-%u",
		 (long)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	return ncclSuccess;
}

static ncclResult_t comm_free(ncclComm_t comm);

static ncclResult_t comm_new(ncclComm_t *out, int dev, int nranks, int rank)
{
	struct ncclComm *c = calloc(1, sizeof(*c));
	ncclResult_t r;

	if (!c)
		return ncclSystemError;
	c->magic = COMM_MAGIC;
	c->device = dev;
	c->nranks = nranks;
	c->rank = rank;
	if ((r = comm_alloc(c, COMM_STRUCT_BYTES)) != ncclSuccess) {
		free(c);
		return r;
	}
	*out = c;
	return ncclSuccess;
}

/* Single-process communicators only: nranks must be 1 (rank 0). */
static ncclResult_t init_rank(ncclComm_t *comm, int nranks, int rank)
{
	ncclResult_t r = ensure();

	if (r != ncclSuccess)
		return r;
	if (!comm)
		return ncclInvalidArgument;
	if (nranks != 1) {
		set_error("the NCCL double supports nranks == 1 only");
		return ncclInvalidUsage;
	}
	if (rank != 0) {
		set_error("rank out of range");
		return ncclInvalidArgument;
	}
	return comm_new(comm, current_device(), 1, 0);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
				    ncclConfig_t *config)
{
	return init_rank(comm, nranks, rank);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	return init_rank(comm, nranks, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	ncclResult_t r = ensure();
	int count = 0;

	if (r != ncclSuccess)
		return r;
	if (!comms || ndev < 1)
		return ncclInvalidArgument;
	D.DeviceGetCount(&count);
	for (int i = 0; i < ndev; i++)
		if ((devlist ? devlist[i] : i) >= count || (devlist ? devlist[i] : i) < 0) {
			set_error("invalid device in devlist");
			return ncclInvalidArgument;
		}
	for (int i = 0; i < ndev; i++) {
		if ((r = comm_new(&comms[i], devlist ? devlist[i] : i, ndev, i)) != ncclSuccess) {
			while (i--)
				comm_free(comms[i]);
			return r;
		}
	}
	return ncclSuccess;
}

/* nId unique ids of one communicator: one rank only, as above. */
ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
				      ncclUniqueId *commIds, ncclConfig_t *config)
{
	if (nId < 1 || !commIds)
		return ncclInvalidArgument;
	return init_rank(newcomm, nranks, myrank);
}

/* A shrink that excludes no rank of a one-rank communicator: a copy on the
 * same device (excluding rank 0 would leave nothing). */
ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
			    ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
	if (!valid_comm(comm) || !newcomm || excludeRanksCount < 0 ||
	    (excludeRanksCount > 0 && !excludeRanksList))
		return ncclInvalidArgument;
	if (excludeRanksCount > 0) {
		set_error("the NCCL double cannot exclude the only rank");
		return ncclInvalidUsage;
	}
	return comm_new(newcomm, comm->device, 1, 0);
}

/* A split keeps the parent's device; NCCL_SPLIT_NOCOLOR gives no comm. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
			   ncclConfig_t *config)
{
	if (!valid_comm(comm) || !newcomm)
		return ncclInvalidArgument;
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	return comm_new(newcomm, comm->device, 1, 0);
}

static ncclResult_t comm_free(ncclComm_t comm)
{
	ncclResult_t r = ncclSuccess;

	if (!comm)
		return ncclSuccess;
	if (!valid_comm(comm))
		return ncclInvalidArgument;
	while (comm->blocks) {
		struct fk_block *b = comm->blocks;

		if (cumem_free(b->va) != ncclSuccess)
			r = ncclUnhandledCudaError;
		comm->blocks = b->next;
		free(b);
	}
	comm->magic = 0;
	free(comm);
	return r;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) { return comm_free(comm); }
ncclResult_t ncclCommAbort(ncclComm_t comm) { return comm_free(comm); }

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!valid_comm(comm) || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!valid_comm(comm) || !device)
		return ncclInvalidArgument;
	*device = comm->device;
	return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!valid_comm(comm) || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
	struct fk_block *b;
	ncclResult_t r = ensure();

	if (r != ncclSuccess)
		return r;
	if (!ptr || !size)
		return ncclInvalidArgument;
	if (!(b = malloc(sizeof(*b))))
		return ncclSystemError;
	if ((r = cumem_alloc(&b->va, size, current_device())) != ncclSuccess) {
		free(b);
		return r;
	}
	pthread_mutex_lock(&mu);
	b->next = user_blocks;
	user_blocks = b;
	pthread_mutex_unlock(&mu);
	*ptr = (void *)b->va;
	return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr)
{
	struct fk_block **pp, *b = NULL;

	if (!ptr)
		return ncclSuccess;
	pthread_mutex_lock(&mu);
	for (pp = &user_blocks; *pp; pp = &(*pp)->next)
		if ((*pp)->va == (uintptr_t)ptr) {
			b = *pp;
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&mu);
	if (!b)
		return ncclInvalidArgument;
	free(b);
	return cumem_free((uintptr_t)ptr);
}

/* Transport buffers: NCCL_BUFFSIZE bytes (default 4 MiB), read when the
 * first collective connects them. */
static size_t buffsize(void)
{
	const char *s = getenv("NCCL_BUFFSIZE");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return DEFAULT_BUFFSIZE;
	errno = 0;
	v = strtoull(s, &end, 0);
	return errno || *end || !v ? DEFAULT_BUFFSIZE : (size_t)v;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			   cudaStream_t stream)
{
	ncclResult_t r;

	if (!valid_comm(comm)) {
		set_error("invalid communicator");
		return ncclInvalidArgument;
	}
	if ((int)datatype < 0 || datatype >= ncclNumTypes || (int)op < 0 || op >= ncclNumOps ||
	    (count && (!sendbuff || !recvbuff))) {
		set_error("invalid argument");
		return ncclInvalidArgument;
	}
	if (!comm->connected) {
		if ((r = comm_alloc(comm, buffsize())) != ncclSuccess)
			return r;
		comm->connected = 1;
	}
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

const char *ncclGetLastError(ncclComm_t comm)
{
	return last_error;
}
