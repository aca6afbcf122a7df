/*
 * fw_stacks - text stacks of a framework's events (gpumemtrace_stack with
 * gpumemtrace_fw_events), reached through dlsym(RTLD_DEFAULT)
 * (tests/cases/sites_framework.sh). Without the preload it prints
 * "preload no" and nothing else.
 *
 * Stacks: S1 = forward (/w/model.py:12) <- step (/w/train.py:40),
 * S2 = step (/w/train.py:41). Framework "pytorch", device 0, one batch of
 * past events (t0 = now - 10 ms, printed on stderr as "t0 N"):
 *   t0+0     ALLOC 0x1000 1024 S1
 *   t0+1000  ALLOC 0x2000 2048 S1
 *   t0+2000  ALLOC 0x3000 4096 S2
 *   t0+3000  ALLOC 0x4000  512 (no stack)      -> 7680 live: the peak
 *   t0+4000  FREE_REQUESTED 0x3000             -> 3584
 *   t0+5000  ALLOC 0x5000 1000 S2              -> 4584
 * then now: ALLOC d0 0x6000 100 S2 (4684, below the peak) and ALLOC d1
 * 0x7000 300 S1 (device 1's peak, at the time of the call).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "gpumemtrace.h"

#define LOOKUP(p, name) (*(void **)&(p) = dlsym(RTLD_DEFAULT, name))

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	int (*p_register)(const char *);
	int (*p_events)(int, const gpumemtrace_fw_event_t *, size_t);
	uint32_t (*p_stack)(const char *const *, size_t);
	int (*p_flush)(void);

	if (!LOOKUP(p_register, "gpumemtrace_fw_register") || !LOOKUP(p_events, "gpumemtrace_fw_events") ||
	    !LOOKUP(p_stack, "gpumemtrace_stack") || !LOOKUP(p_flush, "gpumemtrace_flush")) {
		printf("preload no\n");
		return 0;
	}
	printf("preload yes\n");
	int fw = p_register("pytorch");
	const char *f1[] = { "forward (/w/model.py:12)", "step (/w/train.py:40)" };
	const char *f1b[] = { "forward (/w/model.py:12)", "step (/w/train.py:40)" };
	const char *f2[] = { "step (/w/train.py:41)" };
	uint64_t s1 = p_stack(f1, 2), s2 = p_stack(f2, 1);
	printf("text ids: %s\n", s1 >= 0x80000000u && s2 >= 0x80000000u ? "yes" : "no");
	printf("same frames, same id: %s\n", p_stack(f1b, 2) == s1 ? "yes" : "no");
	printf("distinct: %s\n", s1 != s2 ? "yes" : "no");
	printf("null frames: %u\n", p_stack(NULL, 3));

	uint64_t t0 = mono_ns() - 10000000;
	fprintf(stderr, "t0 %llu\n", (unsigned long long)t0);
	gpumemtrace_fw_event_t past[6] = {
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x1000, 1024, 0, t0, s1 },
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x2000, 2048, 0, t0 + 1000, s1 },
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x3000, 4096, 0, t0 + 2000, s2 },
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x4000, 512, 0, t0 + 3000, 0 },
		{ GPUMEMTRACE_FW_FREE_REQUESTED, 0, 0x3000, 4096, 0, t0 + 4000, 0 },
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x5000, 1000, 0, t0 + 5000, s2 },
	};
	printf("past: %d\n", p_events(fw, past, 6));
	gpumemtrace_fw_event_t now[2] = {
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x6000, 100, 0, 0, s2 },
		{ GPUMEMTRACE_FW_ALLOC, 1, 0x7000, 300, 0, 0, s1 },
	};
	printf("now: %d\n", p_events(fw, now, 2));
	printf("flush: %d\n", p_flush());
	return 0;
}
