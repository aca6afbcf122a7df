/*
 * demo_workload.c - the bundled demo and end-to-end test workload.
 *
 * Runs on the CUDA/NCCL test doubles (or on a real GPU: it only uses public
 * APIs) and allocates through several routes at once, so that its peak and
 * the composition of the peak are known by construction (MiB = 2^20 bytes):
 *
 *   step 1  cudaMalloc 1024 MiB (plain)               [main thread]
 *           NCCL communicator: 2 MiB at init + 4 MiB at the first
 *           all-reduce (virtual-memory physical, owner nccl)
 *           cudaMallocAsync 512 MiB on a stream        [worker thread]
 *           cudaMallocHost 64 MiB (pinned host: never a device byte)
 *                                     device held: 1542 MiB
 *   step 2  cudaFreeAsync the 512 MiB, synchronise
 *           cuMemCreate 768 MiB + cuMemAddressReserve 4096 MiB + cuMemMap,
 *           reached through cudaGetDriverEntryPoint (like PyTorch's
 *           expandable segments)
 *                                     device held: 1798 MiB
 *   step 3  cudaFree the 1024 MiB
 *           cuMemAllocAsync 1280 MiB through cuGetProcAddress_v2 with the
 *           per-thread-default-stream flag (the driver hands out
 *           cuMemAllocAsync_ptsz)
 *                                     device held: 2054 MiB  <- the peak
 *   step 4  a 64 GiB cudaMalloc that fails (out of memory)
 *   step 5  everything freed, communicator destroyed
 *
 * Peak 2054 MiB = 1280 stream-ordered + 768 vmm (application) + 6 vmm (nccl).
 * The independent maxima per kind (plain 1024, stream-ordered 1280, vmm 774)
 * add up to 3078 MiB, a moment that never happened.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024ull * 1024ull)

#define CHECK_RT(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "demo: %s failed: %d\n", #x, (int)e_); exit(1); } } while (0)
#define CHECK_CU(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { \
	fprintf(stderr, "demo: %s failed: %d\n", #x, (int)e_); exit(1); } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t e_ = (x); if (e_ != ncclSuccess) { \
	fprintf(stderr, "demo: %s failed: %d\n", #x, (int)e_); exit(1); } } while (0)

static cudaStream_t stream;
static void *async_block;

static void *worker(void *arg)
{
	(void)arg;
	CHECK_RT(cudaSetDevice(0));
	CHECK_RT(cudaMallocAsync(&async_block, 512 * MiB, stream));
	CHECK_RT(cudaStreamSynchronize(stream));
	return NULL;
}

static void report(const char *step)
{
	size_t free_b = 0, total_b = 0;
	CHECK_RT(cudaMemGetInfo(&free_b, &total_b));
	printf("%-6s device used %llu MiB\n", step,
	       (unsigned long long)((total_b - free_b) / MiB));
}

int main(void)
{
	void *plain = NULL, *host = NULL;
	ncclComm_t comm;
	int dev = 0;
	float *nccl_buf = NULL;

	CHECK_RT(cudaSetDevice(0));
	CHECK_RT(cudaStreamCreate(&stream));

	/* step 1 */
	CHECK_RT(cudaMalloc(&plain, 1024 * MiB));
	CHECK_NCCL(ncclCommInitAll(&comm, 1, &dev));
	CHECK_NCCL(ncclAllReduce(nccl_buf, nccl_buf, 0, ncclFloat, ncclSum, comm, stream));
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	CHECK_RT(cudaMallocHost(&host, 64 * MiB));
	report("step1");

	/* step 2: virtual memory through the runtime's driver entry point */
	CHECK_RT(cudaFreeAsync(async_block, stream));
	CHECK_RT(cudaStreamSynchronize(stream));
	PFN_cuMemCreate_v10020 p_create;
	PFN_cuMemAddressReserve_v10020 p_reserve;
	PFN_cuMemMap_v10020 p_map;
	PFN_cuMemUnmap_v10020 p_unmap;
	PFN_cuMemRelease_v10020 p_release;
	PFN_cuMemAddressFree_v10020 p_addrfree;
	enum cudaDriverEntryPointQueryResult q;
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&p_create, 13000, cudaEnableDefault, &q));
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemAddressReserve", (void **)&p_reserve, 13000, cudaEnableDefault, &q));
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemMap", (void **)&p_map, 13000, cudaEnableDefault, &q));
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemUnmap", (void **)&p_unmap, 13000, cudaEnableDefault, &q));
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&p_release, 13000, cudaEnableDefault, &q));
	CHECK_RT(cudaGetDriverEntryPointByVersion("cuMemAddressFree", (void **)&p_addrfree, 13000, cudaEnableDefault, &q));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CHECK_CU(p_reserve(&va, 4096 * MiB, 0, 0, 0));
	CHECK_CU(p_create(&h, 768 * MiB, &prop, 0));
	CHECK_CU(p_map(va, 768 * MiB, 0, h, 0));
	report("step2");

	/* step 3: the driver directly, through cuGetProcAddress_v2 with the
	 * per-thread-default-stream flag (the _ptsz variant) */
	CHECK_RT(cudaFree(plain));
	PFN_cuMemAllocAsync_v11020 p_alloc_async;
	PFN_cuMemFreeAsync_v11020 p_free_async;
	CUdriverProcAddressQueryResult st;
	CHECK_CU(cuGetProcAddress_v2("cuMemAllocAsync", (void **)&p_alloc_async, 13000,
				     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CHECK_CU(cuGetProcAddress_v2("cuMemFreeAsync", (void **)&p_free_async, 13000,
				     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	CUdeviceptr big;
	CHECK_CU(p_alloc_async(&big, 1280 * MiB, (CUstream)stream));
	CHECK_RT(cudaStreamSynchronize(stream));
	report("step3");

	/* step 4: a request that cannot fit */
	void *huge = NULL;
	cudaError_t e = cudaMalloc(&huge, 64ull * 1024 * MiB);
	printf("step4  64 GiB cudaMalloc -> error %d\n", (int)e);

	/* step 5 */
	CHECK_CU(p_free_async(big, (CUstream)stream));
	CHECK_RT(cudaStreamSynchronize(stream));
	CHECK_CU(p_unmap(va, 768 * MiB));
	CHECK_CU(p_release(h));
	CHECK_CU(p_addrfree(va, 4096 * MiB));
	CHECK_RT(cudaFreeHost(host));
	CHECK_NCCL(ncclCommDestroy(comm));
	CHECK_RT(cudaStreamDestroy(stream));
	report("step5");
	return 0;
}
