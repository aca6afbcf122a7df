/*
 * robust_exec - what was traced before an exec is in the trace. 200
 * allocations (each held, so the trace's totals are known), an execl of a
 * file that does not exist (it fails with ENOENT, which the program must
 * still see, and tracing goes on), 100 more, then ARGV[1] picks the exec
 * function that replaces the process by itself with the argument "done"
 * (which only prints). tests/cases/robust_exec.sh checks the trace.
 */
#include <cuda.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "route_util.h"

extern char **environ;

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr p;

	if (argc > 1 && strcmp(argv[1], "done") == 0) {
		printf("the new image runs\n");
		return 0;
	}
	const char *how = argc > 1 ? argv[1] : "execl";
	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	int bad = 0;
	for (int i = 0; i < 200; i++)
		bad += cuMemAlloc(&p, 4096) != CUDA_SUCCESS;
	errno = 0;
	int r = execl("./no-such-program", "no-such-program", (char *)NULL);
	printf("execl of a missing file: %d, errno %s\n", r, errno == ENOENT ? "ENOENT" : strerror(errno));
	for (int i = 0; i < 100; i++)
		bad += cuMemAlloc(&p, 8192) != CUDA_SUCCESS;
	ROUTE_CHECK("failed allocations", bad, 0);
	fflush(stdout);
	char *args[] = { argv[0], (char *)"done", NULL };
	if (!strcmp(how, "execv"))
		execv(argv[0], args);
	else if (!strcmp(how, "execve"))
		execve(argv[0], args, environ);
	else if (!strcmp(how, "execvp"))
		execvp(argv[0], args);
	else if (!strcmp(how, "execlp"))
		execlp(argv[0], argv[0], "done", (char *)NULL);
	else if (!strcmp(how, "execle"))
		execle(argv[0], argv[0], "done", (char *)NULL, environ);
	else
		execl(argv[0], argv[0], "done", (char *)NULL);
	printf("exec failed: %s\n", strerror(errno));
	return 1;
}
