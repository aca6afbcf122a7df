/*
 * sites_phase.c - sites_phase_workload: phases whose holders at their own
 * peaks are known by construction (tests/cases/sites_phase.sh). Built like
 * sites_workload (-g -O1, no sibling calls). The phase API is reached with
 * dlsym(RTLD_DEFAULT), so the program also runs untraced.
 *   site K  2 MiB before any phase, held to the end
 *   phase "step" #1: site S called twice ON ONE LINE (4 MiB each: two
 *           stacks, the same symbolised frames), peak 2 + 8 = 10 MiB; freed
 *   site W  16 MiB between the phases, freed (the whole run's peak: 18 MiB)
 *   phase "step" #2: site U 1 MiB, then site V 3 MiB: peak 2 + 1 + 3 = 6 MiB;
 *           both freed before its end
 *   phase "other": site U 1 MiB, freed (a name not asked for)
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define MiB (1024ull * 1024)

typedef void (*name_fn)(const char *);
static name_fn p_begin, p_end;

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

void *site_alloc(size_t n) __attribute__((noinline));
void *site_s(void) __attribute__((noinline));

void *site_alloc(size_t n)
{
	void *p = NULL;
	if (cudaMalloc(&p, n) != cudaSuccess) /* SITE_ALLOC */
		exit(3);
	return p;
}

void *site_s(void)
{
	void *p = site_alloc(4 * MiB); /* SITE_S */
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	p_begin = (name_fn)dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	p_end = (name_fn)dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	void *k = site_alloc(2 * MiB); /* MAIN_K */
	begin("step");
	void *s1 = site_s(), *s2 = site_s(); /* MAIN_SS */
	cudaFree(s1);
	cudaFree(s2);
	end("step");
	void *w = site_alloc(16 * MiB); /* MAIN_W */
	cudaFree(w);
	begin("step");
	void *u = site_alloc(1 * MiB); /* MAIN_U */
	void *v = site_alloc(3 * MiB); /* MAIN_V */
	cudaFree(v);
	cudaFree(u);
	end("step");
	begin("other");
	u = site_alloc(1 * MiB); /* MAIN_O */
	cudaFree(u);
	end("other");
	cudaFree(k);
	printf("sites_phase_workload done (phases %s)\n", p_begin ? "on" : "off");
	return 0;
}
