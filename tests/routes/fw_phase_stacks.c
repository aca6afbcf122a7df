/*
 * fw_phase_stacks - framework blocks with text stacks inside three
 * occurrences of the phase "step" (our API), for sites/flamegraph
 * --framework --phase (tests/cases/sites_framework_phase.sh). Without the
 * preload it prints "preload no" and nothing else.
 *
 * Stacks: S1 = fwd (/w/m.py:3) <- step (/w/t.py:9), S2 = bwd (/w/m.py:7).
 * Framework "pytorch", device 0, every event stamped at its call:
 *   A 1000 S1 (before any step: live 1000)
 *   step 1:  B 3000 S2 (4000: the occurrence's peak), free B (1000)
 *   step 2:  C 500 S2 (1500: its peak), D 200 S1 on device 1 (its only peak)
 *   step 3:  nothing: its peak is the 1500 held at its begin, at the begin
 * Whole run: device 0 peaks at 4000 (with B), device 1 at 200.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "gpumemtrace.h"

#define LOOKUP(p, name) (*(void **)&(p) = dlsym(RTLD_DEFAULT, name))

static int (*p_events)(int, const gpumemtrace_fw_event_t *, size_t);
static int fw;

static void ev(int action, int dev, uint64_t addr, uint64_t size, uint32_t stack)
{
	gpumemtrace_fw_event_t e = { action, dev, addr, size, 0, 0, stack };
	if (p_events(fw, &e, 1) != 0)
		printf("event refused\n");
}

int main(void)
{
	int (*p_register)(const char *);
	uint32_t (*p_stack)(const char *const *, size_t);
	void (*p_begin)(const char *), (*p_end)(const char *);

	if (!LOOKUP(p_register, "gpumemtrace_fw_register") || !LOOKUP(p_events, "gpumemtrace_fw_events") ||
	    !LOOKUP(p_stack, "gpumemtrace_stack") || !LOOKUP(p_begin, "gpumemtrace_phase_begin") ||
	    !LOOKUP(p_end, "gpumemtrace_phase_end")) {
		printf("preload no\n");
		return 0;
	}
	printf("preload yes\n");
	fw = p_register("pytorch");
	const char *f1[] = { "fwd (/w/m.py:3)", "step (/w/t.py:9)" };
	const char *f2[] = { "bwd (/w/m.py:7)" };
	uint32_t s1 = p_stack(f1, 2), s2 = p_stack(f2, 1);

	ev(GPUMEMTRACE_FW_ALLOC, 0, 0xa000, 1000, s1);
	p_begin("step");
	ev(GPUMEMTRACE_FW_ALLOC, 0, 0xb000, 3000, s2);
	ev(GPUMEMTRACE_FW_FREE_REQUESTED, 0, 0xb000, 3000, 0);
	p_end("step");
	p_begin("step");
	ev(GPUMEMTRACE_FW_ALLOC, 0, 0xc000, 500, s2);
	ev(GPUMEMTRACE_FW_ALLOC, 1, 0xd000, 200, s1);
	p_end("step");
	p_begin("step");
	p_end("step");
	return 0;
}
