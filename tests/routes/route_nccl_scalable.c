/* route_nccl_scalable - NCCL's newer set-up calls: ncclCommInitRankScalable
 * (2.23) and ncclCommShrink (2.27) are recorded as NCCL scopes, and the
 * communicator memory they allocate (2 MiB each on the double) is NCCL's. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

int main(void)
{
	ncclUniqueId id;
	ncclComm_t a, b;
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;

	if (cudaSetDevice(0) != cudaSuccess || ncclGetUniqueId(&id) != ncclSuccess)
		return 1;
	if (ncclCommInitRankScalable(&a, 1, 0, 1, &id, &cfg) != ncclSuccess)
		return 2;
	if (ncclCommShrink(a, NULL, 0, &b, &cfg, NCCL_SHRINK_DEFAULT) != ncclSuccess)
		return 3;
	if (ncclCommDestroy(b) != ncclSuccess || ncclCommDestroy(a) != ncclSuccess)
		return 4;
	printf("ok\n");
	return 0;
}
