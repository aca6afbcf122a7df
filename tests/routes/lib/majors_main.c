/*
 * majors_main.c - route_majors: two CUDA runtime majors in one process.
 * The program uses runtime 13 (the runtime double, linked), libmajors12.so
 * uses runtime 12 (majors_lib.c; loaded RTLD_GLOBAL after start, argv[1]);
 * both runtimes are in the global scope and their symbols differ only by
 * version node. Each caller must reach its own runtime: a failed call sets
 * only that runtime's last error.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*majors12_run)(void);
	void *p = NULL, *h;
	cudaError_t e;
	int v = 0, r12;

	h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) : NULL;
	majors12_run = h ? (int (*)(void))dlsym(h, "majors12_run") : NULL;
	if (majors12_run == NULL)
		return 2;

	e = cudaRuntimeGetVersion(&v);
	printf("rt13 cudaRuntimeGetVersion %d %d\n", (int)e, v);
	e = cudaMalloc(&p, 1u << 20);
	printf("rt13 cudaMalloc %d\n", (int)e);
	fprintf(stderr, "addr rt13_d 0x%llx\n", (unsigned long long)(uintptr_t)p);
	r12 = majors12_run();
	printf("rt12 cudaFree %d\n", r12);
	printf("rt13 cudaGetLastError %d\n", (int)cudaGetLastError());
	e = cudaFree(p);
	printf("rt13 cudaFree %d\n", (int)e);
	return e == cudaSuccess && r12 == 0 ? 0 : 1;
}
