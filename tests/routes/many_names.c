/*
 * many_names N [alloc] - N distinct phase names through the phase API (weak
 * symbols: without the preload it does nothing): begin and end of "n%07d"
 * for each, one after the other (waiting for the writer every 10,000), then
 * one more begin/end of the last name and of the first. Prints the growth
 * of its peak resident size (VmHWM, KiB) on stdout:
 * tests/cases/robust_names.sh checks it against the buffer cap, the
 * tracer's own counters (its stderr line) and that the analyzer names
 * every phase.
 * With "alloc", device memory too (the driver double), so that the
 * analyzer's commands have peaks to place in phases: a context before the
 * names; 64 MiB allocated in occurrence 1 of n(N/2), then 1 PiB asked
 * for there (it fails), and the 64 MiB freed in n(N/2+1);
 * 128 MiB allocated and freed in the last phase, occurrence 2 of n0000000
 * (a name by value again: the same phase), the trace's peak.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void gpumemtrace_phase_begin(const char *name) __attribute__((weak));
extern void gpumemtrace_phase_end(const char *name) __attribute__((weak));
extern int gpumemtrace_flush(void) __attribute__((weak));

static long hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static CUdeviceptr held;

/* A phase; inside it, alloc > 0 allocates that many bytes and then
 * asks for 1 PiB, which fails; alloc < 0 frees what was allocated. */
static void phase_with(const char *name, long long alloc)
{
	CUdeviceptr none;
	if (gpumemtrace_phase_begin)
		gpumemtrace_phase_begin(name);
	if (alloc > 0 && (cuMemAlloc_v2(&held, (size_t)alloc) != CUDA_SUCCESS ||
			  cuMemAlloc_v2(&none, 1ull << 50) == CUDA_SUCCESS)) {
		fprintf(stderr, "many_names: cuMemAlloc did not do as expected\n");
		exit(1);
	}
	if (alloc < 0 && cuMemFree_v2(held) != CUDA_SUCCESS) {
		fprintf(stderr, "many_names: cuMemFree failed\n");
		exit(1);
	}
	if (gpumemtrace_phase_end)
		gpumemtrace_phase_end(name);
}

static void phase(const char *name)
{
	phase_with(name, 0);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	const int alloc = argc > 2 && !strcmp(argv[2], "alloc");
	char name[32];
	/* the tracer starts at the first call: the baseline after it */
	phase("start");
	long hwm0 = hwm_kib();
	if (alloc) {
		CUdevice dev;
		CUcontext ctx;
		if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
		    cuCtxSetCurrent(ctx)) {
			fprintf(stderr, "many_names: no device\n");
			return 1;
		}
	}
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%07ld", i);
		phase_with(name, !alloc ? 0 : i == n / 2 ? 64ll << 20 : i == n / 2 + 1 ? -1 : 0);
		/* a program faster than the writer fills the buffer, and names
		 * by value are then lost (counted): this one waits for the
		 * writer now and then, so that none is */
		if (i % 10000 == 9999 && gpumemtrace_flush)
			gpumemtrace_flush();
	}
	snprintf(name, sizeof(name), "n%07ld", n - 1);
	phase(name);
	if (gpumemtrace_phase_begin)
		gpumemtrace_phase_begin("n0000000");
	if (alloc && (cuMemAlloc_v2(&held, 128u << 20) != CUDA_SUCCESS || cuMemFree_v2(held) != CUDA_SUCCESS)) {
		fprintf(stderr, "many_names: the last phase's allocation failed\n");
		return 1;
	}
	if (gpumemtrace_phase_end)
		gpumemtrace_phase_end("n0000000");
	printf("hwm_grew_kib=%ld\n", hwm_kib() - hwm0);
	return 0;
}
