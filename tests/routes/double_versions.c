/* double_versions.c - prints what the doubles say they are: "runtime R
 * driver D nccl N init E" (E: cudaGetDeviceCount's error code, 0 when the
 * runtime accepted the driver), then "nccl.h H" (the code it was built with). tests/cases/doubles_runtime.sh runs it under
 * GMT_FAKE_RUNTIME_VERSION, GMT_FAKE_DRIVER_VERSION and GMT_FAKE_NCCL_VERSION. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

int main(void)
{
	int rt = -1, drv = -1, nccl = -1, n = 0;
	cudaError_t e;

	if (cudaRuntimeGetVersion(&rt) != cudaSuccess || cudaDriverGetVersion(&drv) != cudaSuccess ||
	    ncclGetVersion(&nccl) != ncclSuccess)
		return 1;
	e = cudaGetDeviceCount(&n);
	printf("runtime %d driver %d nccl %d init %d\nnccl.h %d\n", rt, drv, nccl, (int)e,
	       NCCL_VERSION_CODE);
	return 0;
}
