/* bench_malloc.c - the same shape as bench_cuda.c with malloc/free, for
 * heaptrack side by side. */
#include "bench_workload.h"

static void *volatile sink;

static void body(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		sink = malloc(4096 + (size_t)(i & 7) * 512);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	return bench_main(argc, argv, NULL, body);
}
