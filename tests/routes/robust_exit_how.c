/*
 * robust_exit_how - ends in the way ARGV[1] says, after one traced
 * allocation: "return N" (from main), "exit N", "_exit N", "_Exit N",
 * "kill SIG" (a signal whose disposition is the default), "handler N" (a
 * SIGUSR1 handler calls _exit(N)). tests/cases/robust_exit.sh checks the
 * END record says how, with the status or the signal.
 */
#include <cuda.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int code;

static void on_usr1(int sig)
{
	(void)sig;
	_exit(code);
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr p;

	if (argc != 3)
		return 2;
	code = atoi(argv[2]);
	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate(&ctx, NULL, 0, 0) != CUDA_SUCCESS ||
	    cuMemAlloc(&p, 1 << 20) != CUDA_SUCCESS)
		return 1;
	if (!strcmp(argv[1], "exit"))
		exit(code);
	if (!strcmp(argv[1], "_exit"))
		_exit(code);
	if (!strcmp(argv[1], "_Exit"))
		_Exit(code);
	if (!strcmp(argv[1], "kill"))
		raise(code);
	if (!strcmp(argv[1], "handler")) {
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
	}
	return code;
}
