/*
 * many_names N - N distinct phase names through the phase API (weak
 * symbols: without the preload it does nothing): begin and end of "n%07d"
 * for each, one after the other (waiting for the writer every 10,000), then
 * one more begin/end of the last name and of the first. Prints the growth of its peak resident size (VmHWM,
 * KiB) on stdout: tests/cases/robust_names.sh checks it against the
 * buffer cap, the tracer's own counters (its stderr line) and that the
 * analyzer names every phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void gpumemtrace_phase_begin(const char *name) __attribute__((weak));
extern void gpumemtrace_phase_end(const char *name) __attribute__((weak));
extern int gpumemtrace_flush(void) __attribute__((weak));

static long hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static void phase(const char *name)
{
	if (gpumemtrace_phase_begin)
		gpumemtrace_phase_begin(name);
	if (gpumemtrace_phase_end)
		gpumemtrace_phase_end(name);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	char name[32];
	/* the tracer starts at the first call: the baseline after it */
	phase("start");
	long hwm0 = hwm_kib();
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%07ld", i);
		phase(name);
		/* a program faster than the writer fills the buffer, and names
		 * by value are then lost (counted): this one waits for the
		 * writer now and then, so that none is */
		if (i % 10000 == 9999 && gpumemtrace_flush)
			gpumemtrace_flush();
	}
	snprintf(name, sizeof(name), "n%07ld", n - 1);
	phase(name);
	phase("n0000000");
	printf("hwm_grew_kib=%ld\n", hwm_kib() - hwm0);
	return 0;
}
