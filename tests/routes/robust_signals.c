/*
 * robust_signals - the program's view of its signal dispositions is its
 * own. After the first CUDA call (the tracer has set its flush handlers for
 * the signals whose disposition was the default): every query answers as
 * without the tracer; a library that chains to the previous handler finds
 * none and the process goes on; signal() returns what was set before; a
 * disposition set back to the default is the default again (the tracer's
 * flush on the way out included: with ARGV[1] "die" the process then dies
 * of SIGTERM, and the trace says so). tests/cases/robust_signals.sh.
 */
#include <cuda.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "route_util.h"

static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction lib_prev;
static volatile sig_atomic_t lib_seen, lib_chained;

/* What a library does: handle, then chain to whoever was there before. */
static void lib_on_int(int sig, siginfo_t *si, void *uc)
{
	lib_seen++;
	if (lib_prev.sa_flags & SA_SIGINFO) {
		if (lib_prev.sa_sigaction) {
			lib_chained++;
			lib_prev.sa_sigaction(sig, si, uc);
		}
	} else if (lib_prev.sa_handler != SIG_DFL && lib_prev.sa_handler != SIG_IGN) {
		lib_chained++;
		lib_prev.sa_handler(sig);
	}
}

static void on_term(int sig)
{
	(void)sig;
}

static const char *what(const struct sigaction *sa)
{
	return sa->sa_handler == SIG_DFL ? "default" : sa->sa_handler == SIG_IGN ? "ignored" : "a handler";
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr p;
	struct sigaction sa, prev;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAlloc", cuMemAlloc(&p, 1 << 20), CUDA_SUCCESS);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		memset(&sa, 0x55, sizeof sa);
		ROUTE_CHECK("sigaction query", sigaction(sigs[i], NULL, &sa), 0);
		int empty = 1;
		for (int s = 1; s < 32; s++)
			empty &= !sigismember(&sa.sa_mask, s);
		printf("%s: %s, flags %#x, mask %s\n", strsignal(sigs[i]), what(&sa), (unsigned)sa.sa_flags,
		       empty ? "empty" : "set");
	}
	printf("signal(SIGQUIT, SIG_DFL) returned %s\n",
	       signal(SIGQUIT, SIG_DFL) == SIG_DFL ? "SIG_DFL" : "something else");

	/* A library's handler on SIGINT, chaining to the previous one. */
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = lib_on_int;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ROUTE_CHECK("library's sigaction", sigaction(SIGINT, &sa, &lib_prev), 0);
	printf("the library found %s before it\n", what(&lib_prev));
	raise(SIGINT);
	printf("SIGINT: seen %d, chained %d\n", (int)lib_seen, (int)lib_chained);
	ROUTE_CHECK("query after", sigaction(SIGINT, NULL, &prev), 0);
	printf("SIGINT now has %s (the library's: %d)\n", what(&prev), prev.sa_sigaction == lib_on_int);

	/* A handler of its own, then the default again. */
	ROUTE_CHECK("signal(SIGTERM, on_term) is SIG_DFL", signal(SIGTERM, on_term) == SIG_DFL, 1);
	ROUTE_CHECK("signal(SIGTERM, SIG_DFL) is on_term", signal(SIGTERM, SIG_DFL) == on_term, 1);
	ROUTE_CHECK("query", sigaction(SIGTERM, NULL, &prev), 0);
	printf("SIGTERM now has %s\n", what(&prev));
	ROUTE_CHECK("cuMemFree", cuMemFree(p), CUDA_SUCCESS);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "die") == 0)
		raise(SIGTERM);
	return 0;
}
