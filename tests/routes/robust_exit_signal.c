/*
 * robust_exit_signal - _exit() from a signal handler, at a moment the
 * handler's thread may be anywhere in the tracer: 4 threads allocate,
 * free and open phases of new names (the hot path, a chunk taken from the
 * pool, the string table, a thread's registration) while the main thread,
 * after ARGV[1] microseconds, sends SIGUSR1 to one of them; its handler
 * calls _exit(7). The process must end with status 7 every time, at once,
 * and the trace must say how it ended. tests/cases/robust_exit_signal.sh
 * runs it many times with a short timeout.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4

static CUcontext ctx;
static void (*phase_begin)(const char *), (*phase_end)(const char *);

static void on_usr1(int sig)
{
	(void)sig;
	_exit(7);
}

static void *work(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	char name[32];
	cuCtxSetCurrent(ctx);
	for (unsigned i = 0;; i++) {
		CUdeviceptr p;
		if (cuMemAlloc(&p, 4096) == CUDA_SUCCESS)
			cuMemFree(p);
		if (phase_begin && (i & 63) == 0) {
			snprintf(name, sizeof name, "p%u.%u", k, i);
			phase_begin(name);
			phase_end(name);
		}
		if ((i & 1023) == 1023) {
			/* A short-lived thread: registration under the lock. */
			pthread_t t;
			if (pthread_create(&t, NULL, work, (void *)(uintptr_t)(k + 100)) == 0)
				pthread_detach(t);
			if (k >= 100)
				return NULL;
		}
	}
}

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 5000;
	pthread_t t[THREADS];
	struct sigaction sa = { 0 };

	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	phase_begin = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	phase_end = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate(&ctx, NULL, 0, 0) != CUDA_SUCCESS)
		return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i);
	struct timespec d = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&d, NULL);
	pthread_kill(t[us % THREADS], SIGUSR1);
	pause();
	return 1;
}
