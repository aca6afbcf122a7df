/* bench_malloc.c - the same shape as bench_cuda.c with malloc/free, for
 * heaptrack side by side.
 *   bench_malloc PAIRS DEPTH        the same few sizes, freed at once
 *   bench_malloc PAIRS DEPTH live   PAIRS blocks all live at once, then
 *                                   all freed (bench_cuda's "live") */
#include <string.h>

#include "bench_workload.h"

static void *volatile sink;

static int all_live;

static void body(long pairs)
{
	if (all_live) {
		void **p = malloc((size_t)pairs * sizeof(*p));
		if (!p)
			exit(1);
		for (long i = 0; i < pairs; i++)
			p[i] = malloc(512 + (size_t)(i & 7) * 64);
		for (long i = 0; i < pairs; i++)
			free(p[i]);
		free(p);
		return;
	}
	for (long i = 0; i < pairs; i++) {
		sink = malloc(4096 + (size_t)(i & 7) * 512);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	all_live = argc > 3 && !strcmp(argv[3], "live");
	return bench_main(argc, argv, NULL, body);
}
