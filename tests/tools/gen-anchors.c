/*
 * gen-anchors.c - writes a trace whose framework history is stamped on the
 * wrong side of the driver events it surrounds, as an error in the
 * history's times (PyTorch converts its TSC stamps to wall-clock
 * microseconds; the companion maps those to CLOCK_MONOTONIC) makes it, for
 * tests/cases/analyze_anchors.sh: the analyzer must put each history entry
 * where the driver events say it happened (gmt_timeline.h, "Anchors").
 * Through the real tracer core (gmt_emit, gmt_emit_side).
 *
 *   gen-anchors        the scenario below; the trace goes where
 *                      GPUMEMTRACE_OUTPUT says
 *
 * Times: t = 1 s + the microseconds written below; MiB = 2^20 bytes; one
 * device of 1 GiB, a caching allocator as PyTorch's native one (the true
 * order; the history's stamps follow in brackets).
 *   t0    MEMINFO: 1024 MiB free
 *   t100  cudaMalloc A 512 MiB; its FW_SEGMENT_ALLOC, FW_ALLOC    [+150: t251, t252]
 *   t200  cudaMalloc C 256 MiB; FW_SEGMENT_ALLOC, FW_ALLOC, then C's
 *         FW_FREE_REQUESTED and FW_FREE_COMPLETED: C's segment is the
 *         cache                                        [t351, t352, t360, t361]
 *   t250  cudaMalloc R1 384 MiB FAILS (MEMINFO t251: 256 MiB free). The
 *         framework's cache then is 256 MiB (reserved 768, allocated 512)
 *   t300  the framework releases C: FW_SEGMENT_FREE [t450], then cudaFree C
 *   t350  the retry works: cudaMalloc R1; FW_SEGMENT_ALLOC, FW_ALLOC [t501, t502]
 *   (that history handed over; the next move's stamps are 60 us EARLY)
 *   t600  cudaMalloc 256 MiB fails (128 MiB free); nothing to release;
 *   t700  the retry fails too (128 MiB free); then FW_OOM: 256 MiB asked,
 *         128 MiB free                                              [t642]
 *   t800  cudaMalloc D 64 MiB; its FW_SEGMENT_ALLOC, FW_ALLOC  [t741, t742]
 * Stamped as they are, a merge by time alone puts C's free after the
 * failure (no cache at it), C's release after the retry (not a release of
 * the failure), the OOM between the two attempts of the second failure
 * (two failures), and D's segment before its memory exists.
 */
#include <stdio.h>
#include <string.h>

#include "gmt_tracer.h"

#define MiB (1ull << 20)
#define T(us) (1000000000ull + (uint64_t)(us) * 1000ull)

#define A_ADDR 0x7f0000000000ull
#define C_ADDR 0x7f0020000000ull
#define R_ADDR 0x7f0040000000ull
#define D_ADDR 0x7f0060000000ull

static uint32_t s_fw;
static gmt_event_t side[16];
static size_t n_side;

static const uint64_t PLAIN = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, GMT_OWNER_APP);
static const uint64_t PFREE = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, GMT_OWNER_APP);

static void ev(unsigned type, unsigned us, uint64_t addr, uint64_t size, uint64_t aux)
{
	gmt_event_t e = { .ts = T(us), .addr = addr, .size = size, .aux = aux,
			  .type = (uint16_t)type, .device = type == GMT_EV_FREE ? -1 : 0 };
	if (type == GMT_EV_ALLOC_FAIL)
		gmt_emit_urgent(&e, 0, 0);
	else
		gmt_emit(&e, 0, 0);
}

/* One history entry, stamped at us. */
static void fw(unsigned type, unsigned us, uint64_t addr, uint64_t size)
{
	gmt_event_t e = { .ts = T(us), .addr = addr, .size = size,
			  .aux = s_fw | (uint64_t)(GMT_FW_FLAG_PAST_TIME | GMT_FW_FLAG_SNAPSHOT) << 32,
			  .type = (uint16_t)type, .device = 0 };
	side[n_side++] = e;
}

static void hand_over(void)
{
	/* The main events around the history are on disk first. */
	gmt_tracer_flush(2000);
	gmt_emit_side(side, n_side);
	n_side = 0;
	gmt_tracer_flush(2000);
}

static void scenario(void)
{
	gmt_device_info_t d0 = { .ordinal = 0, .name = "Fake GPU 0", .pci_bus_id = "0000:19:00.0",
				 .total_bytes = 1024 * MiB, .cc_major = 9, .cc_minor = 0,
				 .driver_version = 13000 };
	gmt_tracer_device(&d0);
	s_fw = gmt_tracer_string("pytorch");

	ev(GMT_EV_MEMINFO, 0, 1024 * MiB, 1024 * MiB, 0);
	ev(GMT_EV_ALLOC, 100, A_ADDR, 512 * MiB, PLAIN);
	ev(GMT_EV_ALLOC, 200, C_ADDR, 256 * MiB, PLAIN);
	ev(GMT_EV_ALLOC_FAIL, 250, 0, 384 * MiB, GMT_AUX_WITH_RESULT(PLAIN, 2));
	ev(GMT_EV_MEMINFO, 251, 256 * MiB, 1024 * MiB, 0);
	ev(GMT_EV_FREE, 300, C_ADDR, 0, PFREE);
	ev(GMT_EV_ALLOC, 350, R_ADDR, 384 * MiB, PLAIN);
	/* the first move: 150 us late */
	fw(GMT_EV_FW_SEGMENT_ALLOC, 251, A_ADDR, 512 * MiB);
	fw(GMT_EV_FW_ALLOC, 252, A_ADDR, 512 * MiB);
	fw(GMT_EV_FW_SEGMENT_ALLOC, 351, C_ADDR, 256 * MiB);
	fw(GMT_EV_FW_ALLOC, 352, C_ADDR, 256 * MiB);
	fw(GMT_EV_FW_FREE_REQUESTED, 360, C_ADDR, 256 * MiB);
	fw(GMT_EV_FW_FREE_COMPLETED, 361, C_ADDR, 256 * MiB);
	fw(GMT_EV_FW_SEGMENT_FREE, 450, C_ADDR, 256 * MiB);
	fw(GMT_EV_FW_SEGMENT_ALLOC, 501, R_ADDR, 384 * MiB);
	fw(GMT_EV_FW_ALLOC, 502, R_ADDR, 384 * MiB);
	hand_over();

	ev(GMT_EV_ALLOC_FAIL, 600, 0, 256 * MiB, GMT_AUX_WITH_RESULT(PLAIN, 2));
	ev(GMT_EV_MEMINFO, 601, 128 * MiB, 1024 * MiB, 0);
	ev(GMT_EV_ALLOC_FAIL, 700, 0, 256 * MiB, GMT_AUX_WITH_RESULT(PLAIN, 2));
	ev(GMT_EV_MEMINFO, 701, 128 * MiB, 1024 * MiB, 0);
	ev(GMT_EV_ALLOC, 800, D_ADDR, 64 * MiB, PLAIN);
	/* the second move: 60 us early */
	{
		gmt_event_t oom = { .ts = T(642), .addr = 128 * MiB, .size = 256 * MiB,
				    .aux = s_fw | (uint64_t)GMT_FW_FLAG_PAST_TIME << 32,
				    .type = GMT_EV_FW_OOM, .device = 0 };
		side[n_side++] = oom;
	}
	fw(GMT_EV_FW_SEGMENT_ALLOC, 741, D_ADDR, 64 * MiB);
	fw(GMT_EV_FW_ALLOC, 742, D_ADDR, 64 * MiB);
	hand_over();
}

int main(int argc, char **argv)
{
	gmt_config_t cfg;
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: gen-anchors (writes into GPUMEMTRACE_OUTPUT)\n");
		return 2;
	}
	gmt_config_from_env(&cfg);
	cfg.stack_depth = 0;
	if (gmt_tracer_init(&cfg)) {
		fprintf(stderr, "gen-anchors: tracer init failed\n");
		return 1;
	}
	scenario();
	gmt_tracer_shutdown();
	return 0;
}
