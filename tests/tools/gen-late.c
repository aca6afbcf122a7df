/*
 * gen-late.c - writes a trace whose earliest event comes in a LATE record,
 * after events that were written before it, through the real tracer core
 * (gmt_emit, gmt_tracer_flush), for tests/cases/analyze_curves_late.sh:
 * `curves` made rows before it knew the trace's first time, and each row's
 * time_s must still count from that first time, whether the CSV goes to a
 * file (written as the rows are made, then run again) or a pipe (held).
 *
 *   gen-late           the scenario below; the trace goes where
 *                      GPUMEMTRACE_OUTPUT says
 *
 * Times: t = 1 s + the milliseconds written below; device 0; MiB = 2^20.
 *   t10   cudaMalloc 1 MiB at 0x7f0000100000
 *   t20   cudaMalloc 2 MiB at 0x7f0000200000
 *         (both written)
 *   t5    cudaMalloc 4 MiB at 0x7f0000400000: older than what was
 *         written, so a LATE record, and the trace's first event
 *         (written)
 *   t30   cudaFree of the 1 MiB block
 * Every byte is outside a framework (there is none): outside, taken and
 * live are the bytes live after each event, in file order: 1, 3, 7, 6 MiB.
 */
#include <stdio.h>

#include "gmt_tracer.h"

#define MiB (1ull << 20)
#define T(ms) (1000000000ull + (uint64_t)(ms) * 1000000ull)

static void ev(unsigned type, unsigned ms, uint64_t addr, uint64_t size)
{
	gmt_event_t e = { .ts = T(ms), .addr = addr, .size = size, .type = (uint16_t)type, .device = 0,
			  .aux = GMT_AUX(GMT_KIND_PLAIN, GMT_API_DRIVER, GMT_OWNER_APP) };
	gmt_emit(&e, 0, 0);
}

int main(int argc, char **argv)
{
	gmt_config_t cfg;
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: gen-late (writes into GPUMEMTRACE_OUTPUT)\n");
		return 2;
	}
	gmt_config_from_env(&cfg);
	cfg.stack_depth = 0;
	if (gmt_tracer_init(&cfg)) {
		fprintf(stderr, "gen-late: tracer init failed\n");
		return 1;
	}
	ev(GMT_EV_ALLOC, 10, 0x7f0000100000ull, 1 * MiB);
	ev(GMT_EV_ALLOC, 20, 0x7f0000200000ull, 2 * MiB);
	gmt_tracer_flush(2000);
	ev(GMT_EV_ALLOC, 5, 0x7f0000400000ull, 4 * MiB);
	gmt_tracer_flush(2000);
	ev(GMT_EV_FREE, 30, 0x7f0000100000ull, 0);
	gmt_tracer_shutdown();
	return 0;
}
