/*
 * diff_main.c - diff_workload LIB: one program whose allocations depend on
 * settings, for `gpumemtrace-analyze diff` (tests/cases/diff_*.sh). LIB is
 * the path of libdiffws.so (dlopen()ed: a test runs two builds of it). Built
 * like sites_workload (-g -O1, no sibling calls). The gpumemtrace API is
 * reached with dlsym(RTLD_DEFAULT), so the program also runs untraced.
 *
 *   phase "load":  load_weights 1 GiB (held); an NCCL communicator of one
 *                  rank (the NCCL double: 2 MiB)
 *   phase "step" #1 (cold): forward 256 MiB (freed at the end of the step),
 *                  the library's workspace (held from here: 4 MiB, 32 MiB
 *                  with a driver >= 13010), autotune 64 MiB (freed inside
 *                  the step), a 4 KiB buffer (held), the first
 *                  ncclAllReduce: the NCCL double's transport buffers,
 *                  NCCL_BUFFSIZE rounded up to 2 MiB (held)
 *   phase "step" #2 (warm): forward 256 MiB (freed)
 *   then everything is freed and the communicator destroyed.
 *
 * Held at each step's peak, in MiB (W = workspace, B = NCCL buffers):
 *   step #1: 1024 + 2 + 256 + W + 64 + B, + 4 KiB (all live after the
 *            all-reduce)
 *   step #2: 1024 + 2 + W + B + 256, + 4 KiB
 * Exit status 0; 2 bad usage; 3 a CUDA, NCCL or loader call failed.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#define MiB (1024ull * 1024)

static void (*p_begin)(const char *), (*p_end)(const char *);

static void begin(const char *n)
{
	if (p_begin)
		p_begin(n);
}

static void end(const char *n)
{
	if (p_end)
		p_end(n);
}

void *device_alloc(size_t n) __attribute__((noinline));
void *load_weights(void) __attribute__((noinline));
void *forward(void) __attribute__((noinline));
void *autotune(void) __attribute__((noinline));

void *device_alloc(size_t n)
{
	void *p = NULL;
	if (cudaMalloc(&p, n) != cudaSuccess) /* SITE_ALLOC */
		exit(3);
	return p;
}

void *load_weights(void)
{
	void *p = device_alloc(1024 * MiB); /* SITE_WEIGHTS */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *forward(void)
{
	void *p = device_alloc(256 * MiB); /* SITE_FORWARD */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *autotune(void)
{
	void *p = device_alloc(64 * MiB); /* SITE_AUTOTUNE */
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	void *(*workspace)(void);
	void *lib, *w, *a, *t, *ws, *buf;
	ncclUniqueId id;
	ncclComm_t comm;

	if (argc != 2) {
		fprintf(stderr, "usage: diff_workload LIB\n");
		return 2;
	}
	*(void **)&p_begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	*(void **)&p_end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	if (!(lib = dlopen(argv[1], RTLD_NOW)) ||
	    !(*(void **)&workspace = dlsym(lib, "diffws_workspace")))
		return 3;
	begin("load");
	w = load_weights();
	if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess)
		return 3;
	end("load");
	begin("step");
	a = forward();
	if (!(ws = workspace()))
		return 3;
	t = autotune();
	buf = device_alloc(4096);
	if (ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, 0) != ncclSuccess)
		return 3;
	cudaFree(t);
	cudaFree(a);
	end("step");
	begin("step");
	a = forward();
	cudaFree(a);
	end("step");
	cudaFree(buf);
	cudaFree(ws);
	cudaFree(w);
	if (ncclCommDestroy(comm) != ncclSuccess)
		return 3;
	printf("diff_workload done\n");
	return 0;
}
