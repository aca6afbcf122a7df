/*
 * fw_api - the framework channel of gpumemtrace.h, reached through
 * dlsym(RTLD_DEFAULT) (tests/cases/fw_api.sh). Without the preload it
 * prints "preload no" and nothing else.
 *
 * Sequence (fw = "myalloc"):
 *   register checks; refused calls (unknown fw, a bad action in the middle
 *   of a batch: nothing of it recorded);
 *   now:  SEGMENT_ALLOC d0 0x100000 2 MiB | ALLOC d0 0x100000 512 s=0x77 |
 *         FREE_REQUESTED d0 0x100000 512 s=0x77 | FREE_COMPLETED (same)
 *   past (one batch, t0 = now - 5 ms): ALLOC d1 0x200000 1024 s=5 at t0 |
 *         FREE_REQUESTED at t0+1000 | FREE_COMPLETED at t0+2000 |
 *         SEGMENT_MAP d1 0x400000 20 MiB at t0+2000
 *   mixed: OOM d0 size 1 GiB addr(free)=4096 now | SEGMENT_UNMAP d1 0x400000
 *         20 MiB at t0+3000 (past)
 *   a past event in the future (clamped to the time of the call)
 *   counters d0 (100, 200, 300, 400); lost d0 7; lost d0 0 (nothing);
 *   meta torch_version=2.11.0
 *   after the tracer shut down (an atexit handler registered before the
 *   first call, so it runs after the tracer's): every call again, nothing
 *   recorded, no crash.
 * The past times go to stderr as "ts NAME VALUE" for the case script.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpumemtrace.h"

static int (*p_register)(const char *);
static int (*p_events)(int, const gpumemtrace_fw_event_t *, size_t);
static void (*p_counters)(int, int, uint64_t, uint64_t, uint64_t, uint64_t);
static void (*p_lost)(int, int, uint64_t);
static void (*p_meta)(const char *, const char *);
static int (*p_flush)(void);
static int fw;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void after_shutdown(void)
{
	gpumemtrace_fw_event_t e = { GPUMEMTRACE_FW_ALLOC, 0, 0x900000, 64, 0, 0, 0 };
	gpumemtrace_fw_event_t p = { GPUMEMTRACE_FW_ALLOC, 0, 0x900000, 64, 0, mono_ns(), 0 };
	int r1 = p_register("late");
	int r2 = p_events(fw, &e, 1);
	int r3 = p_events(fw, &p, 1);
	p_counters(fw, 0, 1, 2, 3, 4);
	p_lost(fw, 0, 1);
	p_meta("late", "yes");
	printf("after shutdown: register %d events %d %d\n", r1, r2, r3);
}

#define LOOKUP(p, name) (*(void **)&(p) = dlsym(RTLD_DEFAULT, name))

int main(void)
{
	LOOKUP(p_register, "gpumemtrace_fw_register");
	LOOKUP(p_events, "gpumemtrace_fw_events");
	LOOKUP(p_counters, "gpumemtrace_fw_counters");
	LOOKUP(p_lost, "gpumemtrace_fw_lost");
	LOOKUP(p_meta, "gpumemtrace_meta");
	LOOKUP(p_flush, "gpumemtrace_flush");
	if (!p_register || !p_events || !p_counters || !p_lost || !p_meta || !p_flush) {
		printf("preload no\n");
		return 0;
	}
	atexit(after_shutdown);
	printf("preload yes\n");

	fw = p_register("myalloc");
	printf("register: %s\n", fw > 0 ? "id" : "0");
	printf("register again: %s\n", p_register("myalloc") == fw ? "same" : "other");
	printf("register empty: %d null: %d\n", p_register(""), p_register(NULL));
	int other = p_register("otheralloc");
	printf("other: %s\n", other > 0 && other != fw ? "distinct" : "wrong");

	gpumemtrace_fw_event_t bad[3] = {
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x1000, 8, 0, 0, 0 },
		{ 9, 0, 0x1000, 8, 0, 0, 0 },
		{ GPUMEMTRACE_FW_FREE_REQUESTED, 0, 0x1000, 8, 0, 0, 0 },
	};
	printf("unknown fw: %d\n", p_events(fw + other + 1000, bad, 1));
	printf("fw 0: %d\n", p_events(0, bad, 1));
	printf("bad action: %d\n", p_events(fw, bad, 3));
	bad[1].action = 0;
	printf("action 0: %d\n", p_events(fw, bad, 3));
	bad[1].action = GPUMEMTRACE_FW_ALLOC | 0x200;  /* an unknown flag bit */
	printf("unknown flag: %d\n", p_events(fw, bad, 3));
	printf("empty: %d\n", p_events(fw, NULL, 0));

	gpumemtrace_fw_event_t now[4] = {
		{ GPUMEMTRACE_FW_SEGMENT_ALLOC, 0, 0x100000, 2u << 20, 0, 0, 0 },
		{ GPUMEMTRACE_FW_ALLOC, 0, 0x100000, 512, 0x77, 0, 0 },
		{ GPUMEMTRACE_FW_FREE_REQUESTED, 0, 0x100000, 512, 0x77, 0, 0 },
		{ GPUMEMTRACE_FW_FREE_COMPLETED, 0, 0x100000, 512, 0x77, 0, 0 },
	};
	printf("now: %d\n", p_events(fw, now, 4));

	const uint64_t t0 = mono_ns() - 5000000;
	gpumemtrace_fw_event_t past[4] = {
		{ GPUMEMTRACE_FW_ALLOC, 1, 0x200000, 1024, 5, t0, 0 },
		{ GPUMEMTRACE_FW_FREE_REQUESTED, 1, 0x200000, 1024, 5, t0 + 1000, 0 },
		{ GPUMEMTRACE_FW_FREE_COMPLETED, 1, 0x200000, 1024, 5, t0 + 2000, 0 },
		{ GPUMEMTRACE_FW_SEGMENT_MAP, 1, 0x400000, 20u << 20, 0, t0 + 2000, 0 },
	};
	printf("past: %d\n", p_events(fw, past, 4));
	fprintf(stderr, "ts t0 %llu\n", (unsigned long long)t0);

	gpumemtrace_fw_event_t mixed[2] = {
		{ GPUMEMTRACE_FW_OOM, 0, 4096, 1u << 30, 0, 0, 0 },
		{ GPUMEMTRACE_FW_SEGMENT_UNMAP | GPUMEMTRACE_FW_FROM_HISTORY, 1, 0x400000, 20u << 20, 0, t0 + 3000, 0 },
	};
	printf("mixed: %d\n", p_events(fw, mixed, 2));

	const uint64_t before = mono_ns();
	gpumemtrace_fw_event_t future = { GPUMEMTRACE_FW_ALLOC, 1, 0x500000, 8, 0, before + 3600000000000ull, 0 };
	printf("future: %d\n", p_events(fw, &future, 1));
	const uint64_t after = mono_ns();
	fprintf(stderr, "ts before %llu\nts after %llu\n", (unsigned long long)before,
		(unsigned long long)after);

	p_counters(fw, 0, 100, 200, 300, 400);
	p_counters(fw + other + 1000, 0, 1, 2, 3, 4);   /* unknown: nothing */
	p_lost(fw, 0, 7);
	p_lost(fw, 0, 0);
	p_meta("torch_version", "2.11.0");
	p_meta(NULL, "x");
	p_meta("k", NULL);
	printf("flush: %d\n", p_flush());
	return 0;
}
