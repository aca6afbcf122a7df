/*
 * gmt_exit.c - _exit() and _Exit() flush the trace first.
 *
 * exit() runs atexit handlers and destructors, where the tracer writes what
 * is buffered and its END record; _exit() runs nothing. Forked workers end
 * that way (Python's os._exit in multiprocessing and DataLoader workers, C
 * programs after fork), and their last events, often the ones that matter,
 * would be lost. So the preload interposes both: write the trace, then end
 * the process exactly as glibc's _exit does (exit_group). A vfork()ed child
 * shares the parent's memory and leaves the tracer alone
 * (gmt_tracer_exit_flush). Calls inside glibc use its hidden alias and are
 * not affected.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "gmt_preload.h"

GMT_EXPORT void _exit(int status)
{
	gmt_tracer_exit_flush();
	for (;;)
		syscall(SYS_exit_group, status);
}

GMT_EXPORT void _Exit(int status)
{
	_exit(status);
}
