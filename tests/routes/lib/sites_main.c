/*
 * sites_main.c - sites_workload: call sites whose holders at the peak are
 * known by construction (tests/cases/sites_*.sh, flamegraph_*.sh). Built
 * with -g -O1 and no sibling calls, so that every frame is a real call with
 * a line; the marker comments name the lines the tests look up.
 *   site D  8 MiB allocated and freed first (the most allocated, not live)
 *   site A  3 x 1 MiB, one call site in a loop
 *   site B  2 MiB from a function forced inline into site_b
 *   site C  4 MiB from libsites_lib.so, dlopen()ed after start (argv[1])
 * Peak: 9 MiB, right after site C. Then everything is freed and one
 * allocation of 1 TiB fails (site E).
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define MiB (1024ull * 1024)

static void *held[8];
static int n_held;

static void keep(void *p)
{
	held[n_held++] = p;
}

void site_a(void) __attribute__((noinline));
void site_b(void) __attribute__((noinline));
void site_d(void) __attribute__((noinline));
void site_e(void) __attribute__((noinline));

void site_a(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = NULL;
		if (cudaMalloc(&p, MiB) != cudaSuccess) /* SITE_A */
			exit(3);
		keep(p);
	}
}

static inline __attribute__((always_inline)) void site_b_inner(void)
{
	void *p = NULL;
	if (cudaMalloc(&p, 2 * MiB) != cudaSuccess) /* SITE_B */
		exit(3);
	keep(p);
}

void site_b(void)
{
	site_b_inner(); /* SITE_B_CALL */
	__asm__ volatile("" ::: "memory");
}

void site_d(void)
{
	void *p = NULL;
	if (cudaMalloc(&p, 8 * MiB) != cudaSuccess) /* SITE_D */
		exit(3);
	cudaFree(p);
}

void site_e(void)
{
	void *p = NULL;
	if (cudaMalloc(&p, 1ull << 40) == cudaSuccess) /* SITE_E */
		exit(3);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sites_workload LIBRARY\n");
		return 2;
	}
	site_d(); /* MAIN_D */
	site_a(); /* MAIN_A */
	site_b(); /* MAIN_B */
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	void (*lib_alloc)(void **) = (void (*)(void **))dlsym(lib, "sites_lib_alloc");
	if (!lib_alloc)
		return 1;
	void *c = NULL;
	lib_alloc(&c); /* MAIN_C */
	keep(c);
	for (int i = 0; i < n_held; i++)
		cudaFree(held[i]);
	site_e(); /* MAIN_E */
	printf("sites_workload done\n");
	return 0;
}
