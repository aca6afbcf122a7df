/* double_nccl.c - tests the NCCL double alone: the exact device memory its
 * communicators and ncclMemAlloc take, measured as cuMemGetInfo deltas
 * (through the runtime double), on one and two devices. Expects
 * GMT_FAKE_DEVICES=2 and GMT_FAKE_MEM_BYTES=1073741824, NCCL_BUFFSIZE unset. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "../fakecuda/double_check.h"

static uint64_t free_on(int dev)
{
	size_t f = 0, t = 0;
	int prev = 0;

	cudaGetDevice(&prev);
	DC_EQ(cudaSuccess, cudaSetDevice(dev));
	DC_EQ(cudaSuccess, cudaMemGetInfo(&f, &t));
	DC_EQ(cudaSuccess, cudaSetDevice(prev));
	return f;
}

int main(void)
{
	ncclUniqueId id;
	ncclComm_t c = NULL, c2 = (ncclComm_t)1, c3 = NULL, none = (ncclComm_t)1, all[2];
	void *p = NULL, *keep = (void *)5, *send = NULL, *recv = NULL;
	int v = 0, n = 0, d = -1, r = -1, ord = -1;
	uint64_t f0, f1;

	DC_EQ(ncclSuccess, ncclGetVersion(&v));
	DC_EQ(NCCL_VERSION_CODE, v);
	DC_EQ(cudaSuccess, cudaSetDevice(0));
	DC_EQ(cudaSuccess, cudaMalloc(&send, 4096));
	DC_EQ(cudaSuccess, cudaMalloc(&recv, 4096));
	f0 = free_on(0);
	f1 = free_on(1);

	/* Init: one 2 MiB block of communicator structures, at once. */
	DC_EQ(ncclSuccess, ncclGetUniqueId(&id));
	DC_EQ(ncclInvalidUsage, ncclCommInitRank(&c2, 2, id, 0));
	DC_TRUE(c2 == (ncclComm_t)1);
	DC_TRUE(strlen(ncclGetLastError(NULL)) > 0);
	DC_EQ(ncclSuccess, ncclCommInitRank(&c, 1, id, 0));
	DC_EQ(f0 - 2 * MiB, free_on(0));
	DC_EQ(ncclSuccess, ncclCommCount(c, &n));
	DC_EQ(1, n);
	DC_EQ(ncclSuccess, ncclCommCuDevice(c, &d));
	DC_EQ(0, d);
	DC_EQ(ncclSuccess, ncclCommUserRank(c, &r));
	DC_EQ(0, r);

	/* First collective: 4 MiB of transport buffers; later ones nothing. */
	DC_EQ(ncclInvalidArgument, ncclAllReduce(send, recv, 10, ncclFloat, ncclSum, NULL, NULL));
	DC_EQ(ncclInvalidArgument, ncclAllReduce(send, recv, 10, ncclNumTypes, ncclSum, c, NULL));
	DC_EQ(f0 - 2 * MiB, free_on(0));
	DC_EQ(ncclSuccess, ncclAllReduce(send, recv, 10, ncclFloat, ncclSum, c, NULL));
	DC_EQ(f0 - 6 * MiB, free_on(0));
	DC_EQ(ncclSuccess, ncclAllReduce(send, recv, 10, ncclFloat, ncclSum, c, NULL));
	DC_EQ(f0 - 6 * MiB, free_on(0));

	/* ncclMemAlloc: roundup(size, 2 MiB) of device memory. */
	DC_EQ(ncclSuccess, ncclMemAlloc(&p, 3 * MiB));
	DC_EQ(f0 - 10 * MiB, free_on(0));
	DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
						  (CUdeviceptr)(uintptr_t)p));
	DC_EQ(0, ord);
	DC_EQ(ncclSuccess, ncclMemFree(p));
	DC_EQ(f0 - 6 * MiB, free_on(0));
	DC_EQ(ncclUnhandledCudaError, ncclMemAlloc(&keep, (size_t)2 << 30));
	DC_TRUE(keep == (void *)5);
	DC_EQ(f0 - 6 * MiB, free_on(0));

	/* Split: a new communicator on the parent's device. */
	DC_EQ(ncclSuccess, ncclCommSplit(c, NCCL_SPLIT_NOCOLOR, 0, &none, NULL));
	DC_TRUE(none == NULL);
	DC_EQ(ncclSuccess, ncclCommSplit(c, 0, 0, &c3, NULL));
	DC_EQ(f0 - 8 * MiB, free_on(0));
	/* NCCL_BUFFSIZE is read when the buffers are connected: 5000000 -> 6 MiB. */
	setenv("NCCL_BUFFSIZE", "5000000", 1);
	DC_EQ(ncclSuccess, ncclAllReduce(send, recv, 1, ncclInt8, ncclMax, c3, NULL));
	unsetenv("NCCL_BUFFSIZE");
	DC_EQ(f0 - 14 * MiB, free_on(0));
	DC_EQ(ncclSuccess, ncclCommDestroy(c));
	DC_EQ(f0 - 8 * MiB, free_on(0));
	DC_EQ(ncclSuccess, ncclCommAbort(c3));
	DC_EQ(f0, free_on(0));

	/* InitAll: communicators on devices 0..n-1, each on its own device;
	 * a comm initialised after cudaSetDevice(1) lives on device 1. */
	DC_EQ(ncclSuccess, ncclCommInitAll(all, 2, NULL));
	DC_EQ(f0 - 2 * MiB, free_on(0));
	DC_EQ(f1 - 2 * MiB, free_on(1));
	DC_EQ(ncclSuccess, ncclCommCuDevice(all[1], &d));
	DC_EQ(1, d);
	DC_EQ(ncclSuccess, ncclCommUserRank(all[1], &r));
	DC_EQ(1, r);
	DC_EQ(ncclSuccess, ncclCommCount(all[1], &n));
	DC_EQ(2, n);
	DC_EQ(ncclSuccess, ncclAllReduce(send, recv, 10, ncclFloat, ncclSum, all[1], NULL));
	DC_EQ(f0 - 2 * MiB, free_on(0));
	DC_EQ(f1 - 6 * MiB, free_on(1));
	DC_EQ(ncclSuccess, ncclCommDestroy(all[0]));
	DC_EQ(ncclSuccess, ncclCommDestroy(all[1]));
	DC_EQ(f0, free_on(0));
	DC_EQ(f1, free_on(1));
	DC_EQ(cudaSuccess, cudaSetDevice(1));
	DC_EQ(ncclSuccess, ncclCommInitRank(&c, 1, id, 0));
	DC_EQ(ncclSuccess, ncclMemAlloc(&p, 1));
	DC_EQ(f1 - 4 * MiB, free_on(1));
	DC_EQ(f0, free_on(0));
	DC_EQ(ncclSuccess, ncclMemFree(p));
	DC_EQ(ncclSuccess, ncclCommDestroy(c));
	DC_EQ(f1, free_on(1));
	DC_DONE();
}
