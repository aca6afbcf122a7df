/*
 * real_rt.c - route_real_rt: a program linked directly against the
 * toolkit's REAL libcudart.so.13 (copied beside it, RUNPATH $ORIGIN/real),
 * run on the driver double. Real cudart refuses to start on a driver that
 * lacks NVIDIA's private export tables, so every call fails; what matters
 * is that it fails identically with and without the preload
 * (tests/cases/route_rtlocal.sh): the runtime hooks must hand each call to
 * this runtime with its arguments and results untouched.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
	void *d = NULL, *h = NULL, *a = NULL;
	size_t pitch = 0;
	int n = -1, v = -1;
	cudaError_t e;

	e = cudaRuntimeGetVersion(&v);
	printf("cudaRuntimeGetVersion %d %d\n", (int)e, v);
	e = cudaGetDeviceCount(&n);
	printf("cudaGetDeviceCount %d %s n=%d\n", (int)e, cudaGetErrorName(e), n);
	e = cudaMalloc(&d, 1 << 20);
	printf("cudaMalloc %d %s %s\n", (int)e, cudaGetErrorName(e), d ? "set" : "null");
	e = cudaMallocPitch(&d, &pitch, 1000, 10);
	printf("cudaMallocPitch %d pitch=%zu\n", (int)e, pitch);
	e = cudaMallocManaged(&d, 4096, cudaMemAttachGlobal);
	printf("cudaMallocManaged %d\n", (int)e);
	e = cudaMallocHost(&h, 4096);
	printf("cudaMallocHost %d\n", (int)e);
	e = cudaHostAlloc(&h, 4096, 0);
	printf("cudaHostAlloc %d\n", (int)e);
	e = cudaMallocAsync(&a, 4096, 0);
	printf("cudaMallocAsync %d\n", (int)e);
	e = cudaFreeAsync(a, 0);
	printf("cudaFreeAsync %d\n", (int)e);
	e = cudaFreeHost(h);
	printf("cudaFreeHost %d\n", (int)e);
	e = cudaFree(d);
	printf("cudaFree %d\n", (int)e);
	printf("cudaGetLastError %d\n", (int)cudaGetLastError());
	return (int)e & 0x7f;
}
