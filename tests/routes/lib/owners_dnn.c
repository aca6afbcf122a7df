/*
 * owners_dnn.c - a stand-in for a cuDNN built against the dynamic runtime,
 * built as libcudnn.so.9 (tests/extra.mk) and linked with the runtime
 * double: its workspaces come from cudaMalloc called from its own text, and
 * the driver allocation libcudart makes under it must carry owner cudnn
 * (tests/cases/route_owners.sh).
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "owners_libs.h"

static void *kept;

/* Through cudaMalloc and cudaFree, from this library's text. */
int fakednn_workspace(size_t bytes, int keep, uint64_t *addr)
{
	void *p = NULL;
	cudaError_t r = cudaMalloc(&p, bytes);

	if (r != cudaSuccess)
		return (int)r;
	*addr = (uint64_t)(uintptr_t)p;
	if (keep) {
		kept = p;
		return 0;
	}
	return (int)cudaFree(p);
}

int fakednn_destroy(void)
{
	cudaError_t r = kept != NULL ? cudaFree(kept) : cudaSuccess;

	kept = NULL;
	return (int)r;
}
