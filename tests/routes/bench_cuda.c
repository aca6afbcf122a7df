/* bench_cuda.c - N cuMemAlloc_v2/cuMemFree_v2 pairs at call depth D on the
 * driver double (make bench runs it plain and traced).
 *   bench_cuda PAIRS DEPTH          the same few sizes, freed at once
 *   bench_cuda PAIRS DEPTH mixed    a live set of 1024 blocks, sizes from
 *                                   512 B to 4 MiB (log-uniform, fixed seed),
 *                                   each pair frees a random live block:
 *                                   addresses and sizes vary as in a real
 *                                   program, so the trace compresses less
 *   bench_cuda PAIRS DEPTH phases   mixed, in phases "step" of 1000 pairs
 *                                   (gpumemtrace_phase_begin/end, when the
 *                                   preload is there): the phase engine's
 *                                   cost with a phase open
 *   bench_cuda PAIRS DEPTH live     PAIRS blocks allocated, all live at
 *                                   once, then all freed (the analyzer
 *                                   with millions of live blocks)
 *   bench_cuda PAIRS DEPTH async    the same few sizes, stream-ordered
 *                                   (cuMemAllocAsync/cuMemFreeAsync on the
 *                                   legacy default stream, from the
 *                                   device's default pool: PyTorch's
 *                                   cudaMallocAsync backend's path) */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>
#include "bench_workload.h"

static CUcontext ctx;
static int mixed, phased, all_live, async;
static void (*phase_begin)(const char *), (*phase_end)(const char *);
#define LIVE 1024
static CUdeviceptr live[LIVE];
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void setup(void)
{
	CUdevice dev;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "bench_cuda: no device\n");
		exit(1);
	}
}

static void body(long pairs)
{
	if (all_live) {
		CUdeviceptr *p = malloc((size_t)pairs * sizeof(*p));
		if (!p)
			exit(1);
		for (long i = 0; i < pairs; i++)
			if (cuMemAlloc_v2(&p[i], 512 + (size_t)(i & 7) * 64) != CUDA_SUCCESS)
				exit(1);
		for (long i = 0; i < pairs; i++)
			cuMemFree_v2(p[i]);
		free(p);
		return;
	}
	for (long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		if (phased && i % 1000 == 0) {
			if (i)
				phase_end("step");
			phase_begin("step");
		}
		if (async) {
			if (cuMemAllocAsync(&p, 4096 + (size_t)(i & 7) * 512, NULL) != CUDA_SUCCESS)
				exit(1);
			cuMemFreeAsync(p, NULL);
			continue;
		}
		if (!mixed) {
			if (cuMemAlloc_v2(&p, 4096 + (size_t)(i & 7) * 512) != CUDA_SUCCESS)
				exit(1);
			cuMemFree_v2(p);
			continue;
		}
		uint64_t r = next_rand();
		size_t size = (size_t)512 << (r % 14);        /* 512 B .. 4 MiB */
		size += (size_t)((r >> 8) % 4096) * 512 % size;
		unsigned slot = (unsigned)(r >> 40) % LIVE;
		if (live[slot])
			cuMemFree_v2(live[slot]);
		if (cuMemAlloc_v2(&live[slot], size) != CUDA_SUCCESS)
			exit(1);
	}
	if (phased && pairs)
		phase_end("step");
}

int main(int argc, char **argv)
{
	all_live = argc > 3 && !strcmp(argv[3], "live");
	async = argc > 3 && !strcmp(argv[3], "async");
	mixed = argc > 3 && (!strcmp(argv[3], "mixed") || !strcmp(argv[3], "phases"));
	if (argc > 3 && !strcmp(argv[3], "phases")) {
		*(void **)&phase_begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
		*(void **)&phase_end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
		phased = phase_begin && phase_end;
	}
	return bench_main(argc, argv, setup, body);
}
