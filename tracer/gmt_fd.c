/*
 * gmt_fd.c - the tracer's descriptors stay out of the program's way.
 *
 * The numbers belong to the program: a daemon closes everything above 2, a
 * shell or a test harness dup2()s onto fixed numbers, and its next open()
 * gets the lowest free one. A descriptor the tracer keeps must therefore
 * never sit where the program will look, never survive an exec, and never
 * be used once the program has closed it, since by then the number may
 * name the program's own file or pipe.
 *
 * So the trace file is moved to a high number, close-on-exec
 * (gmt_fd_high), and before every write it is checked to be still the file
 * we created (same device and inode; one fstat per frame): if not, the
 * number is left alone for ever and the file is reopened by its absolute
 * path; if that fails too (the file was removed), every later frame is
 * lost and counted, and one warning says so. libunwind's probe pipe is
 * moved high the same way when it is created (preload/gmt_libc.c, pipe2).
 * The writer's wake-up needs no descriptor (a futex, gmt_writer.c).
 *
 * A new trace file announces itself: when GPUMEMTRACE_TRACE_LIST names a
 * file (the launcher's gpumemtrace-run creates one per job), its absolute
 * path is appended to it, one line, so the launcher names exactly its own
 * job's traces even when other jobs write into the same directory.
 *
 * What stays open to a race: a program that closes our number and gets
 * it back from open() between the fstat and the write of one frame. With
 * the number near the top of the table, only a program holding about a
 * thousand descriptors at once, or one that dup2()s onto that very number,
 * can do that.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gmt_internal.h"

/* Our descriptors go into the last GMT_FD_SPAN numbers below the soft limit
 * or 1024, whichever is lower: far from where programs allocate, and
 * without growing the kernel's descriptor table past its usual size. */
#define GMT_FD_TOP  1024
#define GMT_FD_SPAN 64

static _Atomic int warned_lost;

int gmt_fd_high(int fd)
{
	int saved = errno;
	struct rlimit rl;
	long top = GMT_FD_TOP;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	long base = top - GMT_FD_SPAN;
	int hi = -1;
	if (fd >= 0 && base > 2 && fd < base)
		hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	} else if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	errno = saved;
	return fd;
}

int gmt_tracer_fd_high(int fd)
{
	return gmt_fd_high(fd);
}

void gmt_fd_own_file(int fd, const char *path)
{
	struct stat st;
	char abs[PATH_MAX];
	if (fstat(fd, &st) == 0) {
		gmt_g.file_dev = (uint64_t)st.st_dev;
		gmt_g.file_ino = (uint64_t)st.st_ino;
	}
	free(gmt_g.abs_path);
	gmt_g.abs_path = realpath(path, abs) ? strdup(abs) : NULL;
}

static int is_trace_file(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == gmt_g.file_dev &&
	       (uint64_t)st.st_ino == gmt_g.file_ino;
}

int gmt_fd_trace_file(void)
{
	if (GMT_LIKELY(is_trace_file(gmt_g.fd)))
		return gmt_g.fd;
	if (gmt_g.fd < 0 && !gmt_g.abs_path)
		return -1;   /* lost before, and for good */
	int old = gmt_g.fd;
	gmt_g.fd = -1;   /* never touched again: it may be the program's now */
	int fd = gmt_g.abs_path ? open(gmt_g.abs_path, O_WRONLY | O_CLOEXEC) : -1;
	if (fd >= 0 && !is_trace_file(fd)) {
		close(fd);   /* another file now has that name */
		fd = -1;
		errno = ENOENT;
	}
	if (fd < 0) {
		gmt_warn_once(&warned_lost, "the program closed the trace file's descriptor %d "
			      "and %s cannot be reopened (%s): tracing stops here; what follows "
			      "is lost", old, gmt_g.path, strerror(errno));
		free(gmt_g.abs_path);
		gmt_g.abs_path = NULL;
		return -1;
	}
	gmt_g.fd = gmt_fd_high(fd);
	gmt_warn_once(&warned_lost, "the program closed the trace file's descriptor %d; "
		      "%s was reopened and tracing goes on", old, gmt_g.path);
	return gmt_g.fd;
}

void gmt_fd_close_trace_file(void)
{
	if (is_trace_file(gmt_g.fd))
		close(gmt_g.fd);
	gmt_g.fd = -1;
}

void gmt_fd_announce(void)
{
	const char *list = getenv("GPUMEMTRACE_TRACE_LIST");
	const char *p = gmt_g.abs_path ? gmt_g.abs_path : gmt_g.path;
	if (!list || !*list || !p)
		return;
	int saved = errno;
	int fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC);   /* never created here */
	if (fd >= 0) {
		size_t n = strlen(p);
		char line[PATH_MAX + 2];
		if (n + 1 < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\n';
			ssize_t w = write(fd, line, n + 1);   /* one write: lines never mix */
			(void)w;
		}
		close(fd);
	}
	errno = saved;
}
