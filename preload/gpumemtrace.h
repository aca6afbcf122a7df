/*
 * gpumemtrace.h - the public API of the gpumemtrace preload (libgpumemtrace.so).
 *
 * A program needs none of this to be traced: LD_PRELOAD alone traces it.
 * These functions let a program that knows it may run under the tracer talk
 * to it. They exist only while the preload is loaded, so call them through
 * dlsym(RTLD_DEFAULT, "gpumemtrace_flush") (NULL: not traced), or declare
 * them weak and test the address.
 */
#ifndef GPUMEMTRACE_H
#define GPUMEMTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every event buffered so far, of every thread, to the trace file and
 * waits (up to about 2 s) until it is there. Returns 0 when done (also when
 * nothing was traced yet), -1 when it could not finish in time or the
 * trace cannot be written. Safe from any thread; never from a signal handler. */
int gpumemtrace_flush(void);

/* The preload's version, e.g. "0.1.0": a static string. */
const char *gpumemtrace_version(void);

/* Path of the trace file this process writes, or NULL before the first
 * traced call created it (and after tracing stopped). Owned by the tracer:
 * do not free; valid until the process exits or forks. */
const char *gpumemtrace_trace_path(void);

#ifdef __cplusplus
}
#endif
#endif /* GPUMEMTRACE_H */
