/*
 * robust_fds - a daemon-style program: after its first CUDA calls (the
 * tracer has opened its trace file and libunwind its probe pipe) it closes
 * every descriptor above 2, opens a pipe of its own and a file of its own,
 * which take the numbers just freed (libunwind's pipe had 3 and 4), and goes on calling CUDA. Its file
 * must hold exactly what it wrote, its pipe exactly what it sent, and the
 * tracer must not spin while the program sleeps. With the argument
 * "unlink" it also removes the trace file first (the tracer can then not
 * carry on and must say so). tests/cases/robust_fds.sh checks the trace.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "route_util.h"

#define BEFORE 3
#define AFTER 50

static CUcontext ctx;

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Through dlsym: the program links no gpumemtrace symbol. */
static void traced_flush(void)
{
	int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemtrace_flush");
	if (flush)
		flush();
}

static __attribute__((noinline)) CUresult alloc_one(CUdeviceptr *p, int i)
{
	return cuMemAlloc(p, (size_t)(i + 1) << 20);
}

static void *after(void *arg)
{
	CUdeviceptr *p = arg;
	for (int i = BEFORE; i < BEFORE + AFTER; i++)
		if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS || alloc_one(&p[i], i) != CUDA_SUCCESS)
			p[i] = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	CUdeviceptr p[BEFORE + AFTER];
	int fds[2];
	char buf[64];

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	for (int i = 0; i < BEFORE; i++)
		ROUTE_CHECK("cuMemAlloc before", alloc_one(&p[i], i), CUDA_SUCCESS);
	traced_flush();
	if (argc > 1 && strcmp(argv[1], "unlink") == 0) {
		const char *(*path)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "gpumemtrace_trace_path");
		if (path && path())
			unlink(path());
	}

	/* The daemon's descriptor hygiene. */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	for (int fd = 3; fd < (int)rl.rlim_cur && fd < 65536; fd++)
		close(fd);
	ROUTE_CHECK("pipe", pipe(fds), 0);
	ROUTE_CHECK("write 5 bytes to the pipe", write(fds[1], "hello", 5), 5);
	int own = open("own.txt", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ROUTE_CHECK("own file opened", own >= 0, 1);
	ROUTE_CHECK("write 13 bytes", write(own, "13 bytes here", 13), 13);

	/* On a new thread: new stacks, which libunwind probes anew. */
	pthread_t t;
	ROUTE_CHECK("pthread_create", pthread_create(&t, NULL, after, p), 0);
	ROUTE_CHECK("pthread_join", pthread_join(t, NULL), 0);
	for (int i = BEFORE; i < BEFORE + AFTER; i++)
		ROUTE_CHECK("cuMemAlloc after", p[i] != 0, 1);
	traced_flush();
	double c0 = cpu_s();
	struct timespec nap = { 0, 300 * 1000 * 1000 };
	nanosleep(&nap, NULL);
	double idle = cpu_s() - c0;
	printf("cpu while asleep: %s\n", idle < 0.1 ? "low" : "HIGH");
	if (idle >= 0.1)
		fprintf(stderr, "cpu while asleep: %.3f s\n", idle);

	struct stat st;
	ROUTE_CHECK("fstat own file", fstat(own, &st), 0);
	ROUTE_CHECK("own file size", st.st_size, 13);
	ROUTE_CHECK("read the pipe", read(fds[0], buf, sizeof buf), 5);
	buf[5] = 0;
	printf("pipe holds \"%s\"\n", buf);
	for (int i = 0; i < BEFORE + AFTER; i++)
		ROUTE_CHECK("cuMemFree", cuMemFree(p[i]), CUDA_SUCCESS);
	return 0;
}
