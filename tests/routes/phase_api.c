/*
 * phase_api - the phase API of gpumemtrace.h, reached the two documented ways:
 * dlsym(RTLD_DEFAULT) and weak declarations. Without the preload both find
 * nothing and the program does the same work (tests/cases/phase_api.sh
 * compares stdout of both runs and the trace's range events).
 *
 * Sequence (t0 = main thread, t1 = a second thread):
 *   t0: begin load (dlsym) | mark ckpt | begin step (weak) | end step |
 *       begin step | end NULL | begin "" (ignored) | mark NULL (ignored) |
 *       begin "phase é"
 *   t1: begin worker | mark "" (ignored) | end worker
 *   t0: end "phase é" | end load | end NULL (no phase open: depth 0)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "gpumemtrace.h"

/* Weak: NULL when the preload is not loaded. */
extern void gpumemtrace_phase_begin(const char *name) __attribute__((weak));
extern void gpumemtrace_phase_end(const char *name) __attribute__((weak));
extern void gpumemtrace_mark(const char *name) __attribute__((weak));

typedef void (*name_fn)(const char *);
static name_fn d_begin, d_end, d_mark;

static void begin(const char *n, int weak)
{
	if (weak ? gpumemtrace_phase_begin != NULL : d_begin != NULL)
		(weak ? gpumemtrace_phase_begin : d_begin)(n);
}

static void end(const char *n, int weak)
{
	if (weak ? gpumemtrace_phase_end != NULL : d_end != NULL)
		(weak ? gpumemtrace_phase_end : d_end)(n);
}

static void mark(const char *n)
{
	if (d_mark)
		d_mark(n);
}

static void *worker(void *arg)
{
	begin("worker", 1);
	mark("");
	end("worker", 0);
	return arg;
}

int main(void)
{
	pthread_t t;

	d_begin = (name_fn)dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	d_end = (name_fn)dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	d_mark = (name_fn)dlsym(RTLD_DEFAULT, "gpumemtrace_mark");
	const int dl = d_begin && d_end && d_mark;
	const int weak = gpumemtrace_phase_begin && gpumemtrace_phase_end && gpumemtrace_mark;
	if (dl != weak) {
		printf("dlsym and weak symbols disagree: %d %d\n", dl, weak);
		return 1;
	}
	/* Only what is the same with and without the preload goes to stdout. */
	fprintf(stderr, "preload %s\n", dl ? "yes" : "no");

	begin("load", 0);
	mark("ckpt");
	begin("step", 1);
	end("step", 1);
	begin("step", 0);
	end(NULL, 0);
	begin("", 0);
	mark(NULL);
	begin("phase \xc3\xa9", 1);
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
		printf("thread failed\n");
		return 1;
	}
	end("phase \xc3\xa9", 1);
	end("load", 0);
	end(NULL, 1);
	printf("done\n");
	return 0;
}
