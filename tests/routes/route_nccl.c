/*
 * route_nccl - route 6: NCCL. The NCCL double allocates like the real one
 * (its own dlopen + cuGetProcAddress_v2, then cuMemCreate + reserve + map;
 * freeing with a retained handle released twice): at communicator set-up
 * inside ncclCommInitRank, at the first collective (outside any NCCL entry
 * point we wrap, from another thread here: recognised by the caller's
 * address in libnccl), and in ncclMemAlloc. All of it must carry owner
 * nccl; the program's own cudaMalloc stays the application's.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "route_util.h"

#define MiB (1024ull * 1024)

static ncclComm_t comm;
static void *buf;

static size_t held(void)
{
	size_t fr = 0, total = 0;
	if (cudaMemGetInfo(&fr, &total) != cudaSuccess)
		return (size_t)-1;
	return total - fr;
}

static void *collective(void *arg)
{
	/* A fresh thread has the runtime's default device 0, like NCCL's
	 * proxy threads. */
	ncclResult_t r = ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, NULL);
	return (void *)(intptr_t)r;
}

int main(void)
{
	ncclUniqueId id;
	pthread_t t;
	void *tr, *nm;

	ROUTE_CHECK("cudaSetDevice", cudaSetDevice(0), cudaSuccess);
	ROUTE_CHECK("cudaMalloc", cudaMalloc(&buf, MiB), cudaSuccess);
	route_name("buf", (uintptr_t)buf);
	ROUTE_CHECK("held", held(), MiB);
	ROUTE_CHECK("ncclGetUniqueId", ncclGetUniqueId(&id), ncclSuccess);
	ROUTE_CHECK("ncclCommInitRank", ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
	route_name("comm", (uintptr_t)comm);
	ROUTE_CHECK("held after init", held(), 3 * MiB);
	ROUTE_CHECK("pthread_create", pthread_create(&t, NULL, collective, NULL), 0);
	ROUTE_CHECK("pthread_join", pthread_join(t, &tr), 0);
	ROUTE_CHECK("ncclAllReduce", (intptr_t)tr, ncclSuccess);
	ROUTE_CHECK("held after the first collective", held(), 7 * MiB);
	ROUTE_CHECK("ncclMemAlloc", ncclMemAlloc(&nm, 1000), ncclSuccess);
	route_name("nm", (uintptr_t)nm);
	ROUTE_CHECK("held after ncclMemAlloc", held(), 9 * MiB);
	ROUTE_CHECK("ncclMemFree", ncclMemFree(nm), ncclSuccess);
	ROUTE_CHECK("held after ncclMemFree", held(), 7 * MiB);
	ROUTE_CHECK("ncclCommDestroy", ncclCommDestroy(comm), ncclSuccess);
	ROUTE_CHECK("held after ncclCommDestroy", held(), MiB);
	ROUTE_CHECK("cudaFree", cudaFree(buf), cudaSuccess);
	return 0;
}
