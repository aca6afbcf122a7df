/* gmt_log.c - the tracer's one logging sink: write(2) to stderr with the
 * prefix "gpumemtrace: ". The level is read once (GPUMEMTRACE_LOG, or the
 * config at init). Never called from the hot path. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gmt_internal.h"

static _Atomic int log_level = -1;

int gmt_log_level(void)
{
	int l = atomic_load_explicit(&log_level, memory_order_relaxed);
	if (l < 0) {
		const char *e = getenv("GPUMEMTRACE_LOG");
		l = e && *e ? atoi(e) : 1;
		if (l < 0)
			l = 0;
		if (l > 3)
			l = 3;
		atomic_store_explicit(&log_level, l, memory_order_relaxed);
	}
	return l;
}

void gmt_log_set_level(int level)
{
	atomic_store_explicit(&log_level, level < 0 ? 0 : level > 3 ? 3 : level,
			      memory_order_relaxed);
}

static __attribute__((format(printf, 1, 0))) void log_v(const char *fmt, va_list ap)
{
	char buf[1024];
	int saved = errno;
	size_t n = (size_t)snprintf(buf, sizeof(buf), "gpumemtrace: ");
	int m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += (size_t)m < sizeof(buf) - n - 1 ? (size_t)m : sizeof(buf) - n - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
	errno = saved;
}

void gmt_log(int level, const char *fmt, ...)
{
	if (level > gmt_log_level())
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v(fmt, ap);
	va_end(ap);
}

void gmt_warn_once(_Atomic int *flag, const char *fmt, ...)
{
	if (atomic_exchange(flag, 1) || gmt_log_level() < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v(fmt, ap);
	va_end(ap);
}
