/*
 * oom_main.c - oom_workload: out-of-memory failures whose numbers are known
 * by construction, for `gpumemtrace-analyze oom` (tests/cases/oom_*.sh).
 * Built like sites_workload (-g -O1, no sibling calls: every holder's
 * function is a frame of its stack). The gpumemtrace API is reached with
 * dlsym(RTLD_DEFAULT), so the program also runs untraced.
 *
 * Run with GMT_FAKE_MEM_BYTES=8589934592 (8 GiB) and
 * GMT_FAKE_CONTEXT_BYTES=268435456 (256 MiB). GiB = 2^30 B.
 *
 *   oom_workload oom    phase "load": load_weights 3 GiB (held);
 *                       phase "train": make_activations 2 GiB and
 *                       alloc_workspace 1 GiB (held), scratch 512 MiB
 *                       (freed: the peak before the failure, 6.5 GiB), then
 *                       grow_cache asks 2 GiB: fails with 1.75 GiB free
 *                       (8 - 0.25 context - 6 held): shortfall 256 MiB.
 *                       Ends "train" and exits 1.
 *   oom_workload fork   the parent allocates nothing; a forked child runs
 *                       "oom"; the parent exits with the child's status.
 *   oom_workload kill   as "oom", then SIGKILL right after the failure (no
 *                       exit handler runs; the trace has no END).
 *   oom_workload retry  a toy caching allocator, "toyalloc", reporting
 *                       through the framework channel (gpumemtrace_fw_*):
 *                       phase "load": segment W 3 GiB, block W 3 GiB;
 *                       phase "train": segment C 2 GiB with block C 2 GiB,
 *                       freed (C is cached: reserved, not allocated);
 *                       segment F 1 GiB with two 512 MiB blocks F1, F2,
 *                       F2 freed (512 MiB cached inside F); then
 *                       1. block R1 2 GiB: cudaMalloc fails (1.75 GiB
 *                          free); the allocator releases its wholly free
 *                          segment C (cudaFree, FW_SEGMENT_FREE) and
 *                          retries: success. Recovered (FW_RETRIES 1, 0).
 *                       2. block R2 2 GiB: cudaMalloc fails (1.75 GiB
 *                          free); nothing wholly free to release (F holds
 *                          F1; its free 512 MiB is smaller than the
 *                          request); the retry fails: FW_OOM (request
 *                          2 GiB, free 1.75 GiB), FW_RETRIES 1, 1. Ends
 *                          "train", exits 1.
 *
 * Exit status: 1 after the (last) failure as described; 2 bad usage; 3 an
 * allocation that should have worked failed.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpumemtrace.h"

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

static void (*p_begin)(const char *), (*p_end)(const char *);
static int (*p_register)(const char *);
static int (*p_events)(int, const gpumemtrace_fw_event_t *, size_t);
static void (*p_retries)(int, int, uint64_t, uint64_t);
static int fw;
static uint64_t n_retries, n_ooms;

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

/* One framework event happening now. */
static void fw_event(int action, uint64_t addr, uint64_t size)
{
	gpumemtrace_fw_event_t e;

	if (!p_events || fw <= 0)
		return;
	memset(&e, 0, sizeof e);
	e.action = action;
	e.addr = addr;
	e.size = size;
	p_events(fw, &e, 1);
}

void *device_alloc(size_t n) __attribute__((noinline));
void *load_weights(void) __attribute__((noinline));
void *make_activations(void) __attribute__((noinline));
void *alloc_workspace(void) __attribute__((noinline));
void *grow_cache(void) __attribute__((noinline));
void *scratch(void) __attribute__((noinline));

/* NULL when the device is out of memory; exits 3 on any other error. */
void *device_alloc(size_t n)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, n); /* SITE_ALLOC */

	if (e == cudaErrorMemoryAllocation)
		return NULL;
	if (e != cudaSuccess)
		exit(3);
	return p;
}

static void *must(void *p)
{
	if (!p)
		exit(3);
	return p;
}

void *load_weights(void)
{
	void *p = device_alloc(3 * GiB); /* SITE_WEIGHTS */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *make_activations(void)
{
	void *p = device_alloc(2 * GiB); /* SITE_ACTIVATIONS */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *alloc_workspace(void)
{
	void *p = device_alloc(1 * GiB); /* SITE_WORKSPACE */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *scratch(void)
{
	void *p = device_alloc(512 * MiB); /* SITE_SCRATCH */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *grow_cache(void)
{
	void *p = device_alloc(2 * GiB); /* SITE_GROW */
	__asm__ volatile("" ::: "memory");
	return p;
}

/* "oom" and "kill": returns after the failure. */
static void run_oom(int kill_after)
{
	begin("load");
	must(load_weights());
	end("load");
	begin("train");
	must(make_activations());
	must(alloc_workspace());
	cudaFree(must(scratch()));
	if (grow_cache() != NULL)
		exit(3);
	if (kill_after)
		raise(SIGKILL);
	end("train");
	printf("oom_workload: out of memory in grow_cache\n");
}

/* ---- "retry": the toy caching allocator --------------------------------- */

typedef struct seg {
	uintptr_t addr;
	size_t size, used;   /* used: bytes of live blocks inside it */
} seg_t;

static seg_t segs[8];
static int n_segs;

/* A new segment of n bytes from CUDA; on failure, releases every wholly
 * free segment and retries once (as PyTorch's caching allocator does). */
static seg_t *segment(size_t n, void *(*site)(void))
{
	void *p = site ? site() : NULL;

	if (!p) {
		int released = 0;
		for (int i = 0; i < n_segs; i++) {
			if (segs[i].used || !segs[i].addr)
				continue;
			fw_event(GPUMEMTRACE_FW_SEGMENT_FREE, segs[i].addr, segs[i].size);
			cudaFree((void *)segs[i].addr);
			segs[i].addr = 0;
			released++;
		}
		p = site ? site() : NULL;
		if (!p) {
			size_t fr = 0, tot = 0;
			cudaMemGetInfo(&fr, &tot);
			fw_event(GPUMEMTRACE_FW_OOM, fr, n);
			if (p_retries && fw > 0)
				p_retries(fw, 0, n_retries, ++n_ooms);
			return NULL;
		}
		if (p_retries && fw > 0)
			p_retries(fw, 0, ++n_retries, n_ooms);
		printf("oom_workload: recovered after releasing %d segment(s)\n", released);
	}
	segs[n_segs].addr = (uintptr_t)p;
	segs[n_segs].size = n;
	segs[n_segs].used = 0;
	fw_event(GPUMEMTRACE_FW_SEGMENT_ALLOC, (uintptr_t)p, n);
	return &segs[n_segs++];
}

static uintptr_t block(seg_t *s, size_t off, size_t n)
{
	s->used += n;
	fw_event(GPUMEMTRACE_FW_ALLOC, s->addr + off, n);
	return s->addr + off;
}

static void block_free(seg_t *s, uintptr_t b, size_t n)
{
	s->used -= n;
	fw_event(GPUMEMTRACE_FW_FREE_REQUESTED, b, n);
	fw_event(GPUMEMTRACE_FW_FREE_COMPLETED, b, n);
}

static void run_retry(void)
{
	seg_t *w, *c, *f, *r;
	uintptr_t cb, f2;

	fw = p_register ? p_register("toyalloc") : 0;
	begin("load");
	w = segment(3 * GiB, load_weights);
	if (!w)
		exit(3);
	block(w, 0, 3 * GiB);
	end("load");
	begin("train");
	c = segment(2 * GiB, make_activations);
	f = segment(1 * GiB, alloc_workspace);
	if (!c || !f)
		exit(3);
	cb = block(c, 0, 2 * GiB);
	block_free(c, cb, 2 * GiB);
	block(f, 0, 512 * MiB);
	f2 = block(f, 512 * MiB, 512 * MiB);
	block_free(f, f2, 512 * MiB);
	r = segment(2 * GiB, grow_cache);     /* recovered by the release of C */
	if (!r)
		exit(3);
	block(r, 0, 2 * GiB);
	if (segment(2 * GiB, grow_cache))     /* F's 512 MiB cannot help */
		exit(3);
	end("train");
	printf("oom_workload: out of memory in grow_cache\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	*(void **)&p_begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	*(void **)&p_end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	*(void **)&p_register = dlsym(RTLD_DEFAULT, "gpumemtrace_fw_register");
	*(void **)&p_events = dlsym(RTLD_DEFAULT, "gpumemtrace_fw_events");
	*(void **)&p_retries = dlsym(RTLD_DEFAULT, "gpumemtrace_fw_retries");
	if (!strcmp(mode, "oom") || !strcmp(mode, "kill")) {
		run_oom(!strcmp(mode, "kill"));
	} else if (!strcmp(mode, "retry")) {
		run_retry();
	} else if (!strcmp(mode, "fork")) {
		int st = 0;
		pid_t pid;
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 3;
		if (pid == 0) {
			run_oom(0);
			fflush(stdout);
			_exit(1);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return 3;
		return WEXITSTATUS(st);
	} else {
		fprintf(stderr, "usage: oom_workload oom|fork|kill|retry\n");
		return 2;
	}
	fflush(stdout);
	return 1;
}
