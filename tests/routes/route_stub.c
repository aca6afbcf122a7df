/*
 * route_stub - a driver program run on NVIDIA's stub libcuda (the
 * toolkit's lib64/stubs/libcuda.so, which answers every call with
 * CUDA_ERROR_STUB_LIBRARY): it prints each call's result; the test
 * (tests/cases/route_stub.sh) runs it with the stub first on the library
 * path. A memory allocation and a cuMemCreate on device 0 fail as they
 * would without the preload, and device 0 gets no device record.
 */
#include <cuda.h>
#include <stdio.h>

int main(void)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr p = 0;
	CUdevice dev = 0;
	int v = -1;

	printf("cuDriverGetVersion %d %d\n", (int)cuDriverGetVersion(&v), v);
	printf("cuInit %d\n", (int)cuInit(0));
	printf("cuDeviceGet %d\n", (int)cuDeviceGet(&dev, 0));
	printf("cuMemAlloc %d\n", (int)cuMemAlloc(&p, 1 << 20));
	printf("cuMemCreate %d\n", (int)cuMemCreate(&h, 2 << 20, &prop, 0));
	return 0;
}
