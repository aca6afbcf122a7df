/*
 * gen-phases.c - writes a trace with phases, a framework's history and
 * memory outside it, whose `phases` and `curves` analyses are known by
 * construction, through the real tracer core (gmt_emit, gmt_emit_side,
 * gmt_tracer_string), for tests/cases/analyze_phases*.sh and
 * analyze_curves*.sh.
 *
 *   gen-phases         the scenario below; the trace goes where
 *                      GPUMEMTRACE_OUTPUT says
 *
 * Times are explicit: t = 1 s + the milliseconds written below. All ranges
 * and all main events are on the main thread. MiB = 2^20 bytes.
 *
 * A driver allocation on device 0 (which has framework events) waits for
 * the framework's segment (docs/analyzer.md, "New allocations wait"): one
 * that no segment claims, whose thread records nothing else within 1 ms,
 * counts as outside from 1 ms after it. That is why t30, t180 and t340
 * below show up at t31, t181 and t341 (in the figures and the curves); the
 * outside list keeps their own times.
 *
 * Device 0 behaves like PyTorch's native caching allocator. Its history
 * (FW_* events, framework "pytorch") goes through gmt_emit_side in four
 * batches, each handed over after the main events it interleaves with were
 * written (the side stream is then older than the main events around it).
 *   t1    NCCL: VMM handle 0x51, 64 MiB, mapped at 0x7e0000000000   outside
 *   t5    phase "load" begins (our API)
 *   t10   cudaMalloc 1 GiB at 0x7f0000000000 (main) and, at the same ts,
 *         FW_SEGMENT_ALLOC of it (side: side first on equal ts)      reserved 1024
 *   t20   FW_ALLOC 256 MiB at 0x7f0000000000, stream A (weights)     allocated 256
 *   t30   cudaMalloc 32 MiB at 0x7f1000000000: outside, application,
 *         from t31 (the next event of its thread is at t40)
 *   t40   "load" ends
 *   t50   NVTX push "train" (default domain, depth 0): a phase
 *   t60   NVTX push "io" in domain "mylib" (depth 1), t70 pop: a phase only
 *         with --domain mylib
 *   t100  "step" begins (occurrence 1, cold; depth 1)
 *   t105  NVTX push "aten::mm" (default domain, depth 2), t150 pop: never a
 *         phase unless --all-depths
 *   t110  FW_ALLOC 512 MiB at 0x7f0010000000 stream A                 768
 *   t120  FW_ALLOC 128 MiB at 0x7f0030000000 stream B                 896
 *   t130  FW_FREE_REQUESTED of the 512 (requested 384, held 896)
 *   t140  FW_FREE_REQUESTED of the 128 (requested 256, held 896)
 *   t160  FW_FREE_COMPLETED of the 128 (held 768)
 *   t170  FW_FREE_COMPLETED of the 512 (held 256)
 *   t180  NCCL handle 0x52, 128 MiB, mapped: outside 224 from t181
 *         (its map at t180 is a step of the same allocation)
 *   t185  unmapped and released: outside 96
 *   t190  cudaMalloc 512 MiB at 0x7f0040000000 + FW_SEGMENT_ALLOC   reserved 1536
 *   t200  "step" ends. Its coinciding peaks: allocated 896 at t120 (reserved
 *         1024, outside 96); reserved 1536 at t190 (allocated 256); held
 *         1632 at t190 (1536 + 96); gap 1280 at t190; outside 224 at t181.
 *         The independent maxima give 1536 + 224 = 1760 and 1536 - 896 =
 *         640: no moment.
 *   t250  NVTX start "prefetch" (default domain, id 7), t260 end: a phase
 *   t300  "step" occurrence 2 (warm): FW_ALLOC 640 MiB at t310, free
 *         requested t320, completed t330; cudaMalloc 16 MiB (outside) at
 *         t340 (counted from t341), freed t350; ends t400. Held peak
 *         1648 at t341.
 *   t450  "train" ends (NVTX pop)
 *   t460  NVTX push "sync_point" in domain "gpumemtrace", t470 pop: a phase
 *   t500  "step" occurrence 3: FW_ALLOC 768 MiB at t510 (allocated 1024),
 *         FW_OOM at t520 (request 2 GiB): FAILED; free requested t540,
 *         completed t545; ends t600.
 *   t700  "eval" begins and never ends: UNTERMINATED
 *   t710  MEMINFO: used 3000 MiB: untraced 3000 - 1632 = 1368 MiB
 *
 * Device 1 behaves like the cudaMallocAsync backend: no framework events.
 *   t0    MEMINFO used 300 MiB (device 0: used 500 MiB)
 *   t2    NCCL handle 0x71, 32 MiB, mapped at 0x7e1000000000       outside
 *   t3    cudaMalloc 8 MiB at 0x7f3000000000 (application)         outside
 *   t15   cudaMallocAsync 256 MiB at 0x7f2000000000 stream C       allocated 256
 *   t16   POOL_RESERVED pool 0x900: 512 MiB                         reserved 512
 *   t115  cudaMallocAsync 128 MiB at 0x7f2010000000 stream C      384
 *   t190  cudaFreeAsync of it on stream C: requested 256, held 384
 *   t250  stream sync of C: held 256
 *   t320  cudaMallocAsync 64 MiB stream D, t330 freed, t350 context sync
 *   t705  MEMINFO used 900 MiB: untraced 900 - (512 + 40) = 348 MiB
 *   t720  ALLOC_FAIL 4 GiB (stream-ordered, CUDA_ERROR_OUT_OF_MEMORY):
 *         "eval" failed as well
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_tracer.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define T(ms) (1000000000ull + (uint64_t)(ms) * 1000000ull)

#define GB_TOTAL (80ull * GiB)
#define STREAM_A 0xA1ull
#define STREAM_B 0xB2ull
#define STREAM_C 0xC3ull
#define STREAM_D 0xD4ull

static uint32_t s_fw, s_dom, s_mylib;

static void ev(unsigned type, unsigned ms, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_event_t e = { .ts = T(ms), .addr = addr, .size = size, .stream = stream,
			  .aux = aux, .type = (uint16_t)type, .device = (int16_t)dev };
	if (type == GMT_EV_ALLOC_FAIL)
		gmt_emit_urgent(&e, 0, 0);
	else
		gmt_emit(&e, 0, 0);
}

/* A range event: name and domain by text ("" domain: the default one). */
static void range(unsigned type, unsigned ms, unsigned source, uint64_t id, uint64_t depth,
		  const char *name, uint32_t domain)
{
	uint64_t n = name ? gmt_tracer_string(name) : 0;
	ev(type, ms, -1, id, depth, source, n | (uint64_t)domain << 32);
}

/* Framework history, handed over in one side-stream batch. */
static gmt_event_t side[16];
static size_t n_side;

static void fw(unsigned type, unsigned ms, uint64_t addr, uint64_t size, uint64_t stream)
{
	gmt_event_t e = { .ts = T(ms), .addr = addr, .size = size, .stream = stream,
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

static const uint64_t PLAIN = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, GMT_OWNER_APP);
static const uint64_t ASYNC = GMT_AUX(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, GMT_OWNER_APP);
static const uint64_t AFREE = GMT_AUX(GMT_KIND_ASYNC, GMT_API_CUDA_FREE_ASYNC, GMT_OWNER_APP);
static const uint64_t NCCL_VMM = GMT_AUX(GMT_KIND_VMM, GMT_API_NCCL_MEM_ALLOC, GMT_OWNER_NCCL);

static void scenario(void)
{
	gmt_device_info_t d0 = { .ordinal = 0, .name = "Fake GPU 0", .pci_bus_id = "0000:19:00.0",
				 .total_bytes = GB_TOTAL, .cc_major = 9, .cc_minor = 0,
				 .driver_version = 13000 };
	gmt_device_info_t d1 = d0;
	d1.ordinal = 1;
	snprintf(d1.name, sizeof(d1.name), "Fake GPU 1");
	snprintf(d1.pci_bus_id, sizeof(d1.pci_bus_id), "0000:1a:00.0");
	gmt_tracer_device(&d0);
	gmt_tracer_device(&d1);
	s_fw = gmt_tracer_string("pytorch");
	s_dom = gmt_tracer_string("gpumemtrace");
	s_mylib = gmt_tracer_string("mylib");

	ev(GMT_EV_MEMINFO, 0, 0, GB_TOTAL - 500 * MiB, GB_TOTAL, 0, 0);
	ev(GMT_EV_MEMINFO, 0, 1, GB_TOTAL - 300 * MiB, GB_TOTAL, 0, 0);
	ev(GMT_EV_VMM_CREATE, 1, 0, 0x51, 64 * MiB, 0, NCCL_VMM);
	ev(GMT_EV_VMM_RESERVE, 1, -1, 0x7e0000000000ull, 256 * MiB, 0, 0);
	ev(GMT_EV_VMM_MAP, 1, -1, 0x7e0000000000ull, 64 * MiB, 0x51, 0);
	ev(GMT_EV_VMM_CREATE, 2, 1, 0x71, 32 * MiB, 0, NCCL_VMM);
	ev(GMT_EV_VMM_RESERVE, 2, -1, 0x7e1000000000ull, 32 * MiB, 0, 0);
	ev(GMT_EV_VMM_MAP, 2, -1, 0x7e1000000000ull, 32 * MiB, 0x71, 0);
	ev(GMT_EV_ALLOC, 3, 1, 0x7f3000000000ull, 8 * MiB, 0, PLAIN);

	range(GMT_EV_RANGE_BEGIN, 5, GMT_RANGE_API, 0, 0, "load", s_dom);
	ev(GMT_EV_ALLOC, 10, 0, 0x7f0000000000ull, 1 * GiB, 0, PLAIN);
	fw(GMT_EV_FW_SEGMENT_ALLOC, 10, 0x7f0000000000ull, 1 * GiB, 0);
	ev(GMT_EV_ALLOC, 15, 1, 0x7f2000000000ull, 256 * MiB, STREAM_C, ASYNC);
	ev(GMT_EV_POOL_RESERVED, 16, 1, 512 * MiB, 512 * MiB, 0x900, 0);
	fw(GMT_EV_FW_ALLOC, 20, 0x7f0000000000ull, 256 * MiB, STREAM_A);
	ev(GMT_EV_ALLOC, 30, 0, 0x7f1000000000ull, 32 * MiB, 0, PLAIN);
	range(GMT_EV_RANGE_END, 40, GMT_RANGE_API, 0, 0, "load", s_dom);
	hand_over();

	range(GMT_EV_RANGE_BEGIN, 50, GMT_RANGE_NVTX_PUSHPOP, 0, 0, "train", 0);
	range(GMT_EV_RANGE_BEGIN, 60, GMT_RANGE_NVTX_PUSHPOP, 0, 1, "io", s_mylib);
	range(GMT_EV_RANGE_END, 70, GMT_RANGE_NVTX_PUSHPOP, 0, 1, NULL, s_mylib);

	/* step 1 (cold) */
	range(GMT_EV_RANGE_BEGIN, 100, GMT_RANGE_API, 0, 1, "step", s_dom);
	range(GMT_EV_RANGE_BEGIN, 105, GMT_RANGE_NVTX_PUSHPOP, 0, 2, "aten::mm", 0);
	fw(GMT_EV_FW_ALLOC, 110, 0x7f0010000000ull, 512 * MiB, STREAM_A);
	ev(GMT_EV_ALLOC, 115, 1, 0x7f2010000000ull, 128 * MiB, STREAM_C, ASYNC);
	fw(GMT_EV_FW_ALLOC, 120, 0x7f0030000000ull, 128 * MiB, STREAM_B);
	fw(GMT_EV_FW_FREE_REQUESTED, 130, 0x7f0010000000ull, 512 * MiB, STREAM_A);
	fw(GMT_EV_FW_FREE_REQUESTED, 140, 0x7f0030000000ull, 128 * MiB, STREAM_B);
	range(GMT_EV_RANGE_END, 150, GMT_RANGE_NVTX_PUSHPOP, 0, 2, NULL, 0);
	fw(GMT_EV_FW_FREE_COMPLETED, 160, 0x7f0030000000ull, 128 * MiB, STREAM_B);
	fw(GMT_EV_FW_FREE_COMPLETED, 170, 0x7f0010000000ull, 512 * MiB, STREAM_A);
	ev(GMT_EV_VMM_CREATE, 180, 0, 0x52, 128 * MiB, 0, NCCL_VMM);
	ev(GMT_EV_VMM_MAP, 180, -1, 0x7e0004000000ull, 128 * MiB, 0x52, 0);
	ev(GMT_EV_VMM_UNMAP, 185, -1, 0x7e0004000000ull, 128 * MiB, 0, 0);
	ev(GMT_EV_VMM_RELEASE, 185, 0, 0x52, 0, 0, NCCL_VMM);
	ev(GMT_EV_ALLOC, 190, 0, 0x7f0040000000ull, 512 * MiB, 0, PLAIN);
	fw(GMT_EV_FW_SEGMENT_ALLOC, 190, 0x7f0040000000ull, 512 * MiB, 0);
	ev(GMT_EV_FREE, 190, 1, 0x7f2010000000ull, 0, STREAM_C, AFREE);
	range(GMT_EV_RANGE_END, 200, GMT_RANGE_API, 0, 1, "step", s_dom);
	hand_over();

	range(GMT_EV_RANGE_BEGIN, 250, GMT_RANGE_NVTX_STARTEND, 7, 0, "prefetch", 0);
	ev(GMT_EV_SYNC, 250, 1, T(249), 0, STREAM_C, GMT_SYNC_STREAM);
	range(GMT_EV_RANGE_END, 260, GMT_RANGE_NVTX_STARTEND, 7, 0, NULL, 0);

	/* step 2 (warm) */
	range(GMT_EV_RANGE_BEGIN, 300, GMT_RANGE_API, 0, 1, "step", s_dom);
	fw(GMT_EV_FW_ALLOC, 310, 0x7f0010000000ull, 640 * MiB, STREAM_A);
	ev(GMT_EV_ALLOC, 320, 1, 0x7f2020000000ull, 64 * MiB, STREAM_D, ASYNC);
	fw(GMT_EV_FW_FREE_REQUESTED, 320, 0x7f0010000000ull, 640 * MiB, STREAM_A);
	fw(GMT_EV_FW_FREE_COMPLETED, 330, 0x7f0010000000ull, 640 * MiB, STREAM_A);
	ev(GMT_EV_FREE, 330, 1, 0x7f2020000000ull, 0, STREAM_D, AFREE);
	ev(GMT_EV_ALLOC, 340, 0, 0x7f1100000000ull, 16 * MiB, 0, PLAIN);
	ev(GMT_EV_FREE, 350, 0, 0x7f1100000000ull, 0, 0, PLAIN);
	ev(GMT_EV_SYNC, 350, 1, T(349), 0, 0, GMT_SYNC_CTX);
	range(GMT_EV_RANGE_END, 400, GMT_RANGE_API, 0, 1, "step", s_dom);
	hand_over();

	range(GMT_EV_RANGE_END, 450, GMT_RANGE_NVTX_PUSHPOP, 0, 0, NULL, 0);
	range(GMT_EV_RANGE_BEGIN, 460, GMT_RANGE_NVTX_PUSHPOP, 0, 0, "sync_point", s_dom);
	range(GMT_EV_RANGE_END, 470, GMT_RANGE_NVTX_PUSHPOP, 0, 0, NULL, s_dom);

	/* step 3 (warm, fails) */
	range(GMT_EV_RANGE_BEGIN, 500, GMT_RANGE_API, 0, 0, "step", s_dom);
	fw(GMT_EV_FW_ALLOC, 510, 0x7f0010000000ull, 768 * MiB, STREAM_A);
	{
		gmt_event_t oom = { .ts = T(520), .addr = 1 * GiB, .size = 2 * GiB,
				    .aux = s_fw | (uint64_t)GMT_FW_FLAG_PAST_TIME << 32,
				    .type = GMT_EV_FW_OOM, .device = 0 };
		side[n_side++] = oom;
	}
	fw(GMT_EV_FW_FREE_REQUESTED, 540, 0x7f0010000000ull, 768 * MiB, STREAM_A);
	fw(GMT_EV_FW_FREE_COMPLETED, 545, 0x7f0010000000ull, 768 * MiB, STREAM_A);
	range(GMT_EV_RANGE_END, 600, GMT_RANGE_API, 0, 0, "step", s_dom);
	hand_over();

	range(GMT_EV_RANGE_BEGIN, 700, GMT_RANGE_API, 0, 0, "eval", s_dom);
	ev(GMT_EV_MEMINFO, 705, 1, GB_TOTAL - 900 * MiB, GB_TOTAL, 0, 0);
	ev(GMT_EV_MEMINFO, 710, 0, GB_TOTAL - 3000 * MiB, GB_TOTAL, 0, 0);
	ev(GMT_EV_ALLOC_FAIL, 720, 1, 0, 4 * GiB, STREAM_C,
	   GMT_AUX_WITH_RESULT(ASYNC, 2));
	gmt_tracer_flush(2000);
}

int main(int argc, char **argv)
{
	gmt_config_t cfg;
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: gen-phases (writes into GPUMEMTRACE_OUTPUT)\n");
		return 2;
	}
	gmt_config_from_env(&cfg);
	cfg.stack_depth = 0;
	if (gmt_tracer_init(&cfg)) {
		fprintf(stderr, "gen-phases: tracer init failed\n");
		return 1;
	}
	scenario();
	gmt_tracer_shutdown();
	return 0;
}
