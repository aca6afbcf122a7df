/*
 * majors_lib.c - libmajors12.so: a library built against CUDA runtime 12
 * (the runtime double's libcudart.so.12 build, whose symbols carry the
 * version node libcudart.so.12), loaded at start beside a program that
 * uses runtime 13 (majors_main.c). Its calls must reach runtime 12.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>

int majors12_run(void);

int majors12_run(void)
{
	void *p = NULL, *big = NULL;
	cudaError_t e;
	int v = 0;

	e = cudaRuntimeGetVersion(&v);
	printf("rt12 cudaRuntimeGetVersion %d %d\n", (int)e, v);
	e = cudaMalloc(&p, 2u << 20);
	printf("rt12 cudaMalloc %d\n", (int)e);
	fprintf(stderr, "addr rt12_d 0x%llx\n", (unsigned long long)(uintptr_t)p);
	e = cudaMalloc(&big, (size_t)1 << 62);
	printf("rt12 cudaMalloc 2^62 %d\n", (int)e);
	printf("rt12 cudaGetLastError %d\n", (int)cudaGetLastError());
	return (int)cudaFree(p);
}
