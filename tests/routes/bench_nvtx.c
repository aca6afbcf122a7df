/*
 * bench_nvtx - what a phase boundary costs (scripts/bench.sh): N outermost
 * NVTX ranges (nvtxRangePushA + nvtxRangePop, through the toolkit's NVTX3
 * headers) on a thread with a current context, timed; prints
 * "ns_per_event=X" per push+pop pair. Run plain, and traced with
 * NVTX_INJECTION64_PATH and each GPUMEMTRACE_BOUNDARY_SAMPLE_US setting.
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void *p = NULL;

	if (n <= 0 || cudaSetDevice(0) != cudaSuccess || cudaMalloc(&p, 1 << 20) != cudaSuccess) {
		fprintf(stderr, "bench_nvtx: set-up failed\n");
		return 1;
	}
	double t0 = now();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("step");
		nvtxRangePop();
	}
	double t1 = now();
	cudaFree(p);
	printf("pairs=%ld ns_per_event=%.1f\n", n, (t1 - t0) * 1e9 / (double)n);
	return 0;
}
