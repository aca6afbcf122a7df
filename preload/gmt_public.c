/* gmt_public.c - the public API declared in gpumemtrace.h. */
#include "gmt_preload.h"
#include "gpumemtrace.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

GMT_EXPORT int gpumemtrace_flush(void)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!gmt_tracer_active())
		return gmt_tracer_path() == NULL ? 0 : -1;
	return gmt_tracer_flush(2000) == 0 ? 0 : -1;
}

GMT_EXPORT const char *gpumemtrace_version(void)
{
	return GMT_VERSION;
}

GMT_EXPORT const char *gpumemtrace_trace_path(void)
{
	GMT_KEEP_ERRNO;
	return gmt_tracer_path();
}
