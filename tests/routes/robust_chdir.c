/*
 * robust_chdir - started with the runtime double found by a RELATIVE
 * LD_LIBRARY_PATH entry (the loader names it "fakecuda/libcudart.so.13"),
 * changes to the directory ARGV[1] before its first CUDA call, then
 * cudaMalloc 1 MiB, cudaFree. The tracer's module map must still name the
 * library's file (tests/cases/symbols_relative.sh).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *p = NULL;

	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	if (cudaMalloc(&p, 1 << 20) != cudaSuccess || cudaFree(p) != cudaSuccess)
		return 1;
	printf("ok\n");
	return 0;
}
