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
 * libunwind's pipe2 moves its pipe out of the program's way. libunwind
 * probes a stack address by writing a byte of it into a pipe of its own
 * and reading it back; the pipe is created with the lowest free numbers
 * and re-created when a read fails. A program that closes every
 * descriptor and opens its own would have its pipe read and written by
 * the probe. pipe2 is not exported (an export would answer every pipe2
 * call of the program): when the stack capture has loaded libunwind, the
 * pipe2 entries of libunwind's own GOT are bound to unwinder_pipe2
 * (gmt_bind_symbol), which moves the descriptors high, as the tracer's own
 * are (tracer/gmt_fd.c). Everybody else's pipe2 is glibc's.
 *
 * The exec family (execve, execv, execvp, execvpe, execl, execle, execlp,
 * fexecve, execveat) writes what is buffered first: an exec replaces the
 * process image and with it every buffer (4 to 19% of a program's last
 * allocations were lost, silently). gmt_tracer_exec records EXEC and
 * waits, bounded, for the writer; an exec that returns (it failed) records
 * EXEC_FAILED with its errno and tracing goes on. Each is glibc's own
 * function, found after ours (execl and friends build the argument vector
 * as glibc's do, then call glibc's execve, execvp or execve). In a vfork()ed
 * child the tracer is left alone (gmt_tracer_exec checks the pid).
 *
 * sigaction() and signal() answer with the program's own dispositions:
 * the tracer's flush handlers on fatal signals stand in for the default
 * and must look like it (tracer/gmt_signals.c says how). signal() has
 * glibc's semantics: BSD, SA_RESTART, the signal blocked in its handler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
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

/* libunwind's pipe2 (only its GOT names this): the pipe, then moved high. */
static int unwinder_pipe2(int fds[2], int flags)
{
	int r = (int)syscall(SYS_pipe2, fds, flags);
	if (r == 0) {
		fds[0] = gmt_tracer_fd_high(fds[0]);
		fds[1] = gmt_tracer_fd_high(fds[1]);
	}
	return r;
}

static void unwinder_loaded(void *handle)
{
	if (gmt_bind_symbol(handle, "pipe2", (void *)unwinder_pipe2) == 0)
		gmt_pl_log(2, "libunwind's pipe2 was not found: its probe pipe takes the lowest free descriptors");
}

void gmt_libc_init(void)
{
	gmt_tracer_on_unwinder(unwinder_loaded);
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

/* ---- the exec family ----------------------------------------------------- */

extern char **environ;

/* glibc's function name, after ours (cached; NULL if it does not exist). */
static void *libc_fn(_Atomic(void *) *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);
	if (GMT_LIKELY(f != NULL))
		return f;
	gmt_preload_ensure_init();
	void *(*sym)(void *, const char *) = atomic_load(&gmt_real_dlsym);
	f = sym ? sym(RTLD_NEXT, name) : NULL;
	atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

#define LIBC(type, name)                                                        \
	static _Atomic(void *) slot_##name;                                     \
	type real_##name = (type)libc_fn(&slot_##name, #name);                 \
	if (real_##name == NULL) {                                              \
		errno = ENOSYS;                                                 \
		return -1;                                                      \
	}

/* An exec returns only when it failed. */
static int exec_returned(int r)
{
	gmt_tracer_exec_failed(errno);
	return r;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

GMT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	LIBC(execve_fn, execve);
	gmt_tracer_exec();
	return exec_returned(real_execve(path, argv, envp));
}

GMT_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

GMT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	LIBC(execvpe_fn, execvpe);
	gmt_tracer_exec();
	return exec_returned(real_execvpe(file, argv, envp));
}

GMT_EXPORT int execvp(const char *file, char *const argv[])
{
	LIBC(execvp_fn, execvp);
	gmt_tracer_exec();
	return exec_returned(real_execvp(file, argv));
}

GMT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	LIBC(fexecve_fn, fexecve);
	gmt_tracer_exec();
	return exec_returned(real_fexecve(fd, argv, envp));
}

GMT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	LIBC(execveat_fn, execveat);
	gmt_tracer_exec();
	return exec_returned(real_execveat(dirfd, path, argv, envp, flags));
}

/* The argument list of execl, execle and execlp as a vector (on the stack,
 * as glibc builds it); *envp gets what follows the NULL (execle). */
#define ARGV_FROM_LIST(arg, ap, argv, n, envp_out)                              \
	size_t n = 1;                                                           \
	va_start(ap, arg);                                                      \
	while (va_arg(ap, const char *) != NULL)                               \
		n++;                                                            \
	va_end(ap);                                                             \
	char *argv[n + 1];                                                      \
	argv[0] = (char *)arg;                                                  \
	va_start(ap, arg);                                                      \
	for (size_t i_ = 1; i_ <= n; i_++)                                      \
		argv[i_] = va_arg(ap, char *);                                  \
	envp_out;                                                               \
	va_end(ap)

GMT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	ARGV_FROM_LIST(arg, ap, argv, n, (void)0);
	return execve(path, argv, environ);
}

GMT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	ARGV_FROM_LIST(arg, ap, argv, n, envp = va_arg(ap, char *const *));
	return execve(path, argv, envp);
}

GMT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	ARGV_FROM_LIST(arg, ap, argv, n, (void)0);
	return execvp(file, argv);
}
