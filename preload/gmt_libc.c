/*
 * gmt_libc.c - the few C library functions the preload interposes, each so
 * that the tracer's own work never shows in the program.
 *
 * _exit() and _Exit() flush the trace first. exit() runs atexit handlers
 * and destructors, where the tracer writes what is buffered and its END
 * record; _exit() runs nothing. Forked workers end that way (Python's
 * os._exit in multiprocessing and DataLoader workers, C programs after
 * fork), and their last events, often the ones that matter, would be lost.
 * So the preload interposes both: write the trace, then end the process
 * exactly as glibc's _exit does (exit_group). A vfork()ed child shares the
 * parent's memory and leaves the tracer alone (gmt_tracer_exit_flush).
 * Calls inside glibc use its hidden alias and are not affected.
 *
 * pipe2() moves libunwind's pipe out of the program's way. libunwind
 * probes a stack address by writing a byte of it into a pipe of its own
 * and reading it back; the pipe is created with the lowest free numbers
 * and re-created when a read fails. A program that closes every
 * descriptor and opens its own would have its pipe read and written by
 * the probe. libunwind's call (by its PLT, so through our export) gets its
 * descriptors moved high, as the tracer's own are (tracer/gmt_fd.c);
 * everybody else's pipe2 is the system call, untouched.
 *
 * sigaction() and signal() answer with the program's own dispositions:
 * the tracer's flush handlers on fatal signals stand in for the default
 * and must look like it (tracer/gmt_signals.c says how). signal() has
 * glibc's semantics: BSD, SA_RESTART, the signal blocked in its handler.
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gmt_preload.h"

GMT_EXPORT void _exit(int status)
{
	gmt_tracer_exit_flush(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

GMT_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* The caller is libunwind (any of its libraries). */
static int from_unwinder(const void *ret)
{
	Dl_info di;
	if (!dladdr(ret, &di) || !di.dli_fname)
		return 0;
	const char *base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return strncmp(base, "libunwind", 9) == 0;
}

GMT_EXPORT int pipe2(int fds[2], int flags)
{
	int r = (int)syscall(SYS_pipe2, fds, flags);
	if (r == 0 && from_unwinder(__builtin_return_address(0))) {
		fds[0] = gmt_tracer_fd_high(fds[0]);
		fds[1] = gmt_tracer_fd_high(fds[1]);
	}
	return r;
}

GMT_EXPORT int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old)
{
	return gmt_tracer_sigaction(sig, act, old);
}

GMT_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (sigaddset(&act.sa_mask, sig) < 0)
		return SIG_ERR;   /* EINVAL, as glibc's */
	act.sa_flags = SA_RESTART;
	if (gmt_tracer_sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
