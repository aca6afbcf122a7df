/*
 * gen-known.c - writes a trace whose analysis is known by construction,
 * through the real tracer core (gmt_emit), for tests/cases/analyze_*.sh.
 *
 *   gen-known known    the scenario below, flushed in several frames, exit
 *   gen-known cut      the same, then SIGKILL itself (no END record)
 *   gen-known many N   N/2 allocation/free pairs (benchmark input)
 *   gen-known shared a|b  two processes on one device at the same time
 *                      (run both: tests/cases/report_shared.sh)
 *
 * The trace goes where GPUMEMTRACE_OUTPUT says. Times are explicit (first
 * event at 1 s of CLOCK_MONOTONIC) so that the report is reproducible.
 *
 * Device 0, by construction: the peak is 3 GiB + 1 MiB at +2 s (plain
 * 2 GiB, stream_ordered 1 GiB, vmm_physical 1 MiB owned by nccl); the
 * stream-ordered maximum (2 GiB) comes at +4 s, after the plain block went,
 * so the sum of the independent maxima (4 GiB + 1 MiB) is no moment. One
 * out-of-memory at +5 s with 2 GiB + 1 MiB live. Host pinned 64 MiB and an
 * 8 GiB address reservation never reach the device totals.
 *
 * shared, on the same device 0 (plain cudaMalloc, application):
 *   a: +1 s 64 MiB (a1), +2 s 64 MiB (a2), +3 s frees a1, +6 s frees a2
 *   b: +2.5 s 32 MiB (b1), +4 s 256 MiB (b2), +5 s frees both
 * Held together: 64, 128, 160, 96, 352 (at +4 s: a2 and b1 + b2), 64, 0.
 * The coinciding peak is 352 MiB at +4 s: a holds 64 MiB in 1 block then
 * (its own peak, 128 MiB in 2 blocks at +2 s, is another instant), b
 * 288 MiB in 2 blocks.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_tracer.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define T0 1000000000ull

static void ev(unsigned type, uint64_t dt, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_event_t e = { .ts = T0 + dt, .addr = addr, .size = size, .stream = stream,
			  .aux = aux, .type = (uint16_t)type, .device = (int16_t)dev };
	if (type == GMT_EV_ALLOC_FAIL)
		gmt_emit_urgent(&e, 0, 0);
	else
		gmt_emit(&e, 0, 0);
}

static void known(void)
{
	gmt_device_info_t d0 = { .ordinal = 0, .name = "Fake GPU 0", .pci_bus_id = "0000:19:00.0",
				 .uuid = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
					   1, 2, 3, 4, 5, 6, 7, 8 },
				 .total_bytes = 150754820096ull, .cc_major = 9, .cc_minor = 0,
				 .driver_version = 13000 };
	gmt_tracer_device(&d0);
	ev(GMT_EV_MEMINFO, 0, 0, 140 * GiB, 150754820096ull, 0, 0);
	ev(GMT_EV_ALLOC, 1000000000ull, 0, 0x7f0000000000ull, 2 * GiB, 0, GMT_AUX(1, GMT_API_CUDA_MALLOC, 0));
	ev(GMT_EV_VMM_RESERVE, 1100000000ull, -1, 0x7e0000000000ull, 8 * GiB, 0, 0);
	ev(GMT_EV_VMM_CREATE, 1200000000ull, 0, 0x51, 1 * MiB, 0, GMT_AUX(3, GMT_API_NCCL_MEM_ALLOC, 1));
	ev(GMT_EV_VMM_MAP, 1300000000ull, -1, 0x7e0000000000ull, 1 * MiB, 0x51, 0);
	gmt_tracer_flush(2000);
	ev(GMT_EV_ALLOC, 2000000000ull, 0, 0x7f0100000000ull, 1 * GiB, 0xabc, GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0));
	ev(GMT_EV_ALLOC, 2500000000ull, -1, 0x600000, 64 * MiB, 0, GMT_AUX(5, GMT_API_CUDA_MALLOC_HOST, 0));
	ev(GMT_EV_FREE, 3000000000ull, -1, 0x7f0000000000ull, 0, 0, GMT_AUX(1, GMT_API_CUDA_FREE, 0));
	ev(GMT_EV_ALLOC, 4000000000ull, 0, 0x7f0200000000ull, 1 * GiB, 0xabc, GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0));
	ev(GMT_EV_POOL_RESERVED, 4100000000ull, 0, 3 * GiB, 3 * GiB, 0x900, 0);
	ev(GMT_EV_POOL_USED, 4100000000ull, 0, 2 * GiB, 2 * GiB, 0x900, 0);
	gmt_tracer_flush(2000);
	ev(GMT_EV_ALLOC_FAIL, 5000000000ull, 0, 0, 200 * GiB, 0xabc,
	   GMT_AUX_WITH_RESULT(GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0), 2));
	ev(GMT_EV_MEMINFO, 5000000100ull, 0, 137 * GiB, 150754820096ull, 0, 0);
	ev(GMT_EV_FREE, 6500000000ull, -1, 0x123, 0, 0, 0);
	gmt_tracer_flush(2000);
}

static void shared(int b)
{
	gmt_device_info_t d0 = { .ordinal = 0, .name = "Fake GPU 0", .pci_bus_id = "0000:19:00.0",
				 .uuid = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
					   1, 2, 3, 4, 5, 6, 7, 8 },
				 .total_bytes = 150754820096ull, .cc_major = 9, .cc_minor = 0,
				 .driver_version = 13000 };
	gmt_tracer_device(&d0);
	const uint64_t plain = GMT_AUX(1, GMT_API_CUDA_MALLOC, 0), fr = GMT_AUX(1, GMT_API_CUDA_FREE, 0);
	if (!b) {
		ev(GMT_EV_ALLOC, 1000000000ull, 0, 0x7f0000000000ull, 64 * MiB, 0, plain);
		ev(GMT_EV_ALLOC, 2000000000ull, 0, 0x7f0100000000ull, 64 * MiB, 0, plain);
		ev(GMT_EV_FREE, 3000000000ull, 0, 0x7f0000000000ull, 0, 0, fr);
		ev(GMT_EV_FREE, 6000000000ull, 0, 0x7f0100000000ull, 0, 0, fr);
	} else {
		ev(GMT_EV_ALLOC, 2500000000ull, 0, 0x7f0200000000ull, 32 * MiB, 0, plain);
		ev(GMT_EV_ALLOC, 4000000000ull, 0, 0x7f0300000000ull, 256 * MiB, 0, plain);
		ev(GMT_EV_FREE, 5000000000ull, 0, 0x7f0200000000ull, 0, 0, fr);
		ev(GMT_EV_FREE, 5000000000ull, 0, 0x7f0300000000ull, 0, 0, fr);
	}
	gmt_tracer_flush(2000);
}

static void many(long n)
{
	gmt_event_t a = { .type = GMT_EV_ALLOC, .device = 0, .size = 4096,
			  .aux = GMT_AUX(GMT_KIND_PLAIN, 0, 0) };
	gmt_event_t f = { .type = GMT_EV_FREE, .device = 0 };
	for (long i = 0; i < n / 2; i++) {
		a.addr = f.addr = 0x7f0000000000ull + (uint64_t)(i & 1023) * 4096;
		gmt_emit(&a, 0, 0);
		gmt_emit(&f, 0, 0);
	}
}

int main(int argc, char **argv)
{
	gmt_config_t cfg;
	gmt_config_from_env(&cfg);
	cfg.stack_depth = 0;
	if (gmt_tracer_init(&cfg)) {
		fprintf(stderr, "gen-known: tracer init failed\n");
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "known")) {
		known();
	} else if (argc >= 2 && !strcmp(argv[1], "cut")) {
		known();
		raise(SIGKILL);
	} else if (argc >= 3 && !strcmp(argv[1], "shared")) {
		shared(!strcmp(argv[2], "b"));
	} else if (argc >= 3 && !strcmp(argv[1], "many")) {
		many(atol(argv[2]));
	} else {
		fprintf(stderr, "usage: gen-known known|cut|shared a|b|many N\n");
		return 2;
	}
	gmt_tracer_shutdown();
	return 0;
}
