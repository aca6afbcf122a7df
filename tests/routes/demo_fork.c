/* demo_fork.c - allocates, forks, and lets the child allocate on its own:
 * the parent's trace must hold only the parent's allocations, the child's
 * trace only the child's (no event of the parent repeated).
 *   parent: 3 x 1 MiB before the fork, 1 x 2 MiB after it
 *   child:  1 x 4 MiB (its first traced call creates its own file) */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024ull * 1024ull)

int main(void)
{
	void *p[3], *q, *c;
	for (int i = 0; i < 3; i++)
		if (cudaMalloc(&p[i], MiB) != cudaSuccess)
			return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int ok = cudaMalloc(&c, 4 * MiB) == cudaSuccess;
		_exit(ok ? 0 : 3);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (cudaMalloc(&q, 2 * MiB) != cudaSuccess)
		return 1;
	printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
