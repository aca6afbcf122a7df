/*
 * owners_main.c - route_owners: who owns a driver allocation. One program
 * allocating through four owners at once, so that their bytes coincide:
 *   the application  cudaMalloc 1 MiB                 (api cudaMalloc)
 *   cuBLAS           an 8 MiB workspace, cuMemAlloc from libcublasLt's own
 *                    text after its own dlopen + cuGetProcAddress_v2
 *   cuDNN            a 4 MiB workspace, cudaMalloc called from libcudnn's
 *                    text (the driver call comes from libcudart's)
 *   NCCL             ncclMemAlloc 2 MiB
 * Each library also allocates and frees a small workspace first (the free
 * must carry its owner too); after cuDNN's cudaMalloc the application's own
 * cudaMalloc must be the application's again. Peak: 15 MiB, all four live,
 * at the end of the phase "owners" (the phase API, weak: nothing happens
 * without the preload).
 */
#include <cuda_runtime_api.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "owners_libs.h"
#include "route_util.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

extern void gpumemtrace_phase_begin(const char *name) __attribute__((weak));
extern void gpumemtrace_phase_end(const char *name) __attribute__((weak));

static size_t held(void)
{
	size_t fr = 0, total = 0;
	if (cudaMemGetInfo(&fr, &total) != cudaSuccess)
		return (size_t)-1;
	return total - fr;
}

int main(void)
{
	void *app, *small, *nm;
	uint64_t a;

	ROUTE_CHECK("cudaSetDevice", cudaSetDevice(0), cudaSuccess);
	if (gpumemtrace_phase_begin != NULL)
		gpumemtrace_phase_begin("owners");
	ROUTE_CHECK("cudaMalloc", cudaMalloc(&app, MiB), cudaSuccess);
	route_name("app", (uintptr_t)app);
	ROUTE_CHECK("fakeblas transient", fakeblas_workspace(64 * KiB, 0, &a), 0);
	route_name("blas_tmp", a);
	ROUTE_CHECK("fakednn transient", fakednn_workspace(32 * KiB, 0, &a), 0);
	route_name("dnn_tmp", a);
	ROUTE_CHECK("fakeblas workspace", fakeblas_workspace(8 * MiB, 1, &a), 0);
	route_name("blas_ws", a);
	ROUTE_CHECK("fakednn workspace", fakednn_workspace(4 * MiB, 1, &a), 0);
	route_name("dnn_ws", a);
	ROUTE_CHECK("ncclMemAlloc", ncclMemAlloc(&nm, 2 * MiB), ncclSuccess);
	route_name("nm", (uintptr_t)nm);
	ROUTE_CHECK("held at the peak", held(), 15 * MiB);
	if (gpumemtrace_phase_end != NULL)
		gpumemtrace_phase_end("owners");
	ROUTE_CHECK("fakeblas_destroy", fakeblas_destroy(), 0);
	ROUTE_CHECK("cudaMalloc after", cudaMalloc(&small, 4 * KiB), cudaSuccess);
	route_name("small", (uintptr_t)small);
	ROUTE_CHECK("cudaFree after", cudaFree(small), cudaSuccess);
	ROUTE_CHECK("fakednn_destroy", fakednn_destroy(), 0);
	ROUTE_CHECK("ncclMemFree", ncclMemFree(nm), ncclSuccess);
	ROUTE_CHECK("cudaFree", cudaFree(app), cudaSuccess);
	ROUTE_CHECK("held at the end", held(), 0);
	return 0;
}
