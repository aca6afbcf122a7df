/*
 * robust_wait - one traced allocation, "ready" on stdout, then waits:
 * ARGV[1] "pause" for a signal (at most 30 s, then exit 4: a launcher that
 * passes nothing on fails the test instead of hanging it), else until the
 * file ARGV[1] exists (then exit 0; 3 after 30 s). For the launcher's
 * tests (tests/cases/launcher_signals.sh).
 */
#include <cuda.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr p;

	if (argc != 2 || cuInit(0) != CUDA_SUCCESS || cuCtxCreate(&ctx, NULL, 0, 0) != CUDA_SUCCESS ||
	    cuMemAlloc(&p, 1 << 20) != CUDA_SUCCESS)
		return 1;
	printf("ready\n");
	fflush(stdout);
	struct timespec d = { 0, 20 * 1000 * 1000 };
	if (argv[1][0] == 'p' && argv[1][1] == 'a') {
		for (int i = 0; i < 1500; i++)
			nanosleep(&d, NULL);
		return 4;
	}
	for (int i = 0; i < 1500 && access(argv[1], F_OK) != 0; i++)
		nanosleep(&d, NULL);
	return access(argv[1], F_OK) == 0 ? 0 : 3;
}
