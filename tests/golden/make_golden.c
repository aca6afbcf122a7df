/*
 * make_golden.c - writes tests/golden/v1_N_basic.gmt (N = the minor version
 * of the tracer it is built against) through the tracer's public API, for a
 * golden trace of each format version. Not built by the Makefile: it is
 * compiled against the tracer of the commit where that version was current
 * (tests/golden/README.md says which and how), and uses only what that
 * version's API and format had (#if GMT_FORMAT_MINOR).
 *
 *   make_golden DIR      writes DIR/v1_N_basic.gmt and prints its path
 *
 * Fixed times (1000 ns ...), one thread named "golden", one device. The
 * content grows with the version:
 *   1.0  allocations of every kind, a failure, VMM, pools, syncs, contexts,
 *        MEMINFO, NCCL calls, a native stack, a STRING, a META
 *   1.1  API and NVTX phases (two occurrences of "step", a MARK), framework
 *        events (segments, blocks, checkpoints, FW_OOM, FW_LOST) and a
 *        framework history in the side stream
 *   1.2  a TEXT_STACK on framework blocks
 *   1.3  FW_REGISTER, CTX_CURRENT, GRAPH_MEM, a captured allocation, and a
 *        primary context reset (CTX_DESTROY aux) that takes its blocks
 *   1.4  (EVENTS2 with allocation ids, MODULE soname/file and END's how
 *        come from the writer) FW_RETRIES before the failure, a graph
 *        memory node, CTX_LIMIT, MODULE_LOAD/UNLOAD, a CUDA array (size
 *        estimated), imported memory, a multicast object bound and
 *        unbound, PROC_UNIDENTIFIED, EXEC_FAILED
 *   1.5  (EVENTS3 from the writer) 300 allocations at odd multiples of 2 MiB
 *        with sizes at odd multiples of 512 B, each freed at once, one of
 *        1000 bytes and one at an address of no alignment among them
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "gmt_tracer.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define A(k, api, o) GMT_AUX(k, api, o)

static void ev(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size, uint64_t stream,
	       uint64_t aux, uint32_t stack, int want_stack)
{
	gmt_event_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			  .stack = stack, .type = (uint16_t)type, .device = (int16_t)dev };
	gmt_emit(&e, want_stack, 0);
}

#define E(type, ts, dev, addr, size, stream, aux) ev(type, ts, dev, addr, size, stream, aux, 0, 0)

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make_golden DIR\n");
		return 2;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/v1_%d_basic.gmt", argv[1], GMT_FORMAT_MINOR);
	gmt_config_t cfg;
	gmt_config_from_env(&cfg);
	cfg.output = path;
	cfg.stack_depth = 4;
	cfg.install_signal_handlers = 0;
	prctl(PR_SET_NAME, "golden", 0, 0, 0);
	if (gmt_tracer_init(&cfg))
		return 1;
	gmt_device_info_t dev;
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.name, sizeof(dev.name), "Golden GPU");
	snprintf(dev.pci_bus_id, sizeof(dev.pci_bus_id), "0000:19:00.0");
	for (int i = 0; i < 16; i++)
		dev.uuid[i] = (uint8_t)(0x10 + i);
	dev.total_bytes = 80ull * GiB;
	dev.cc_major = 9;
	dev.driver_version = 13000;
	gmt_tracer_device(&dev);
	const char *k[1] = { "purpose" }, *v[1] = { "golden" };
	gmt_tracer_meta(k, v, 1);
	uint64_t fw = gmt_tracer_string("fakefw");
	(void)fw;

	E(GMT_EV_MEMINFO, 1000, 0, 79 * GiB, 80 * GiB, 0, 0);
#if GMT_FORMAT_MINOR >= 3
	E(GMT_EV_CTX_CURRENT, 1010, 0, 0xc1, 0, 0, 0);
#endif
	E(GMT_EV_PRIMARY_RETAIN, 1020, 0, 0xc1, 0, 0, 0);
#if GMT_FORMAT_MINOR >= 3
	E(GMT_EV_FW_REGISTER, 1030, -1, 0, 0, 0, fw);
#endif
#if GMT_FORMAT_MINOR >= 1
	uint64_t s_load = gmt_tracer_string("load"), s_step = gmt_tracer_string("step");
	uint64_t s_dom = gmt_tracer_string("mylib"), s_inner = gmt_tracer_string("inner");
	uint64_t s_mark = gmt_tracer_string("checkpoint");
	uint64_t FW = fw, FWP = fw | (uint64_t)(GMT_FW_FLAG_PAST_TIME | GMT_FW_FLAG_SNAPSHOT) << 32;
	uint32_t tstack = 0;
#if GMT_FORMAT_MINOR >= 2
	const char *frames[2] = { "forward (model.py:42)", "<module> (train.py:7)" };
	tstack = gmt_tracer_text_stack(frames, 2);
#endif
	E(GMT_EV_RANGE_BEGIN, 1100, -1, 0, 0, GMT_RANGE_API, s_load);
#endif
	/* A 64 MiB segment of the framework, with the caller's native stack. */
	ev(GMT_EV_ALLOC, 1200, 0, 0x7f0000000000, 64 * MiB, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, 0), 0, 1);
#if GMT_FORMAT_MINOR >= 1
	E(GMT_EV_FW_SEGMENT_ALLOC, 1210, 0, 0x7f0000000000, 64 * MiB, 0, FW);
	ev(GMT_EV_FW_ALLOC, 1220, 0, 0x7f0000000000, 16 * MiB, 0, FW, tstack, 0);
#endif
	/* Outside the framework: 8 MiB of the application, NCCL's VMM 2 MiB. */
	ev(GMT_EV_ALLOC, 1300, 0, 0x7f1000000000, 8 * MiB, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, 0), 0, 1);
	E(GMT_EV_VMM_CREATE, 1310, 0, 0x11, 2 * MiB, 0, A(GMT_KIND_VMM, GMT_API_NCCL_MEM_ALLOC, GMT_OWNER_NCCL));
	E(GMT_EV_VMM_RESERVE, 1320, -1, 0x7e0000000000, 64 * MiB, 0, 0);
	E(GMT_EV_VMM_MAP, 1330, 0, 0x7e0000000000, 2 * MiB, 0x11, 0);
	E(GMT_EV_VMM_MAP_FAIL, 1340, 0, 0x7e0000200000, 2 * MiB, 0x11, GMT_AUX_WITH_RESULT(0, 1));
	E(GMT_EV_ALLOC, 1350, -1, 0x600000, 4 * MiB, 0, A(GMT_KIND_HOST, GMT_API_CUDA_MALLOC_HOST, 0));
	E(GMT_EV_ALLOC, 1360, 0, 0x7f2000000000, 1 * MiB, 0, A(GMT_KIND_MANAGED, GMT_API_CUDA_MALLOC_MANAGED, 0));
#if GMT_FORMAT_MINOR >= 1
	E(GMT_EV_FW_ALLOCATED, 1400, 0, 16 * MiB, 16 * MiB, 0, FW);
	E(GMT_EV_FW_RESERVED, 1401, 0, 64 * MiB, 64 * MiB, 0, FW);
	E(GMT_EV_RANGE_END, 1410, -1, 0, 0, GMT_RANGE_API, s_load);
	/* "step", first (cold) occurrence: NVTX push/pop, a nested range of
	 * domain "mylib", a stream-ordered block. */
	E(GMT_EV_RANGE_BEGIN, 1500, -1, 0, 0, GMT_RANGE_NVTX_PUSHPOP, s_step);
	E(GMT_EV_RANGE_BEGIN, 1510, -1, 0, 1, GMT_RANGE_NVTX_PUSHPOP, s_inner | s_dom << 32);
#endif
	E(GMT_EV_POOL_CREATE, 1520, 0, 0, 0, 0x900, 0);
	E(GMT_EV_ALLOC, 1530, 0, 0x7f3000000000, 32 * MiB, 0x10, A(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, 0));
	E(GMT_EV_POOL_RESERVED, 1540, 0, 32 * MiB, 32 * MiB, 0x900, 0);
	E(GMT_EV_POOL_USED, 1541, 0, 32 * MiB, 32 * MiB, 0x900, 0);
#if GMT_FORMAT_MINOR >= 1
	ev(GMT_EV_FW_ALLOC, 1550, 0, 0x7f0001000000, 32 * MiB, 0, FW, tstack, 0);
	E(GMT_EV_FW_FREE_REQUESTED, 1560, 0, 0x7f0001000000, 32 * MiB, 0, FW);
	E(GMT_EV_FW_FREE_COMPLETED, 1570, 0, 0x7f0001000000, 32 * MiB, 0, FW);
	E(GMT_EV_RANGE_END, 1580, -1, 0, 1, GMT_RANGE_NVTX_PUSHPOP, s_inner | s_dom << 32);
#endif
	E(GMT_EV_FREE, 1590, 0, 0x7f3000000000, 0, 0x10, A(GMT_KIND_ASYNC, GMT_API_CUDA_FREE_ASYNC, 0));
	E(GMT_EV_SYNC, 1600, 0, 1595, 0, 0x10, GMT_SYNC_STREAM);
	E(GMT_EV_POOL_TRIM, 1605, 0, 0, 0, 0x900, 0);
#if GMT_FORMAT_MINOR >= 1
	E(GMT_EV_RANGE_END, 1610, -1, 0, 0, GMT_RANGE_NVTX_PUSHPOP, 0);
	/* "step", second (warm) occurrence: the framework's out-of-memory. */
	E(GMT_EV_RANGE_BEGIN, 1700, -1, 0x77, 0, GMT_RANGE_NVTX_STARTEND, s_step);
	ev(GMT_EV_FW_ALLOC, 1710, 0, 0x7f0002000000, 40 * MiB, 0, FW, tstack, 0);
	E(GMT_EV_FW_OOM, 1720, 0, 70 * GiB, 1 * GiB, 0, FW);
#endif
#if GMT_FORMAT_MINOR >= 4
	/* the framework's own counts: 2 allocations retried, 1 gave up */
	E(GMT_EV_FW_RETRIES, 1725, 0, 2, 1, 0, FW);
#endif
	{
		gmt_event_t f = { .ts = 1730, .size = 1ull << 40, .stream = 0x10,
				  .aux = GMT_AUX_WITH_RESULT(A(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, 0), 2),
				  .type = GMT_EV_ALLOC_FAIL, .device = 0 };
		gmt_emit_urgent(&f, 1, 0);
	}
#if GMT_FORMAT_MINOR >= 1
	E(GMT_EV_FW_FREE_REQUESTED, 1740, 0, 0x7f0002000000, 40 * MiB, 0, FW);
	E(GMT_EV_FW_FREE_COMPLETED, 1741, 0, 0x7f0002000000, 40 * MiB, 0, FW);
	E(GMT_EV_FW_ALLOCATED, 1750, 0, 16 * MiB, 56 * MiB, 0, FW);
	E(GMT_EV_RANGE_END, 1760, -1, 0x77, 0, GMT_RANGE_NVTX_STARTEND, s_step);
	E(GMT_EV_MARK, 1800, -1, 0, 0, GMT_RANGE_API, s_mark);
	E(GMT_EV_FW_LOST, 1810, 0, 0, 3, 0, FW);
#endif
#if GMT_FORMAT_MINOR >= 3
	/* A stream-ordered allocation captured into a graph, the graph pool. */
	E(GMT_EV_ALLOC, 1900, 0, 0x7f4000000000, 2 * MiB, 0x20,
	  A(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, 0) | (uint64_t)GMT_FLAG_CAPTURED << 24);
	E(GMT_EV_GRAPH_MEM, 1910, 0, 4 * MiB, 4 * MiB, 2 * MiB, 2 * MiB);
#endif
#if GMT_FORMAT_MINOR >= 4
	/* A graph-API memory node (stream = the graph), left live. */
	E(GMT_EV_ALLOC, 1915, 0, 0x7f4000200000, 1 * MiB, 0x30,
	  A(GMT_KIND_ASYNC, GMT_API_DRIVER, 0) | (uint64_t)(GMT_FLAG_CAPTURED | GMT_FLAG_GRAPH_NODE) << 24);
	E(GMT_EV_CTX_LIMIT, 1920, 0, 0, 4096, 4096, 0);              /* CU_LIMIT_STACK_SIZE */
	E(GMT_EV_MODULE_LOAD, 1925, 0, 0xd0d, 0, 0, GMT_MODULE_LOAD);
	/* A CUDA array (its size estimated from the descriptor), imported
	 * memory (an IPC handle opened), a multicast object bound to NCCL's
	 * handle; each released again. */
	E(GMT_EV_ALLOC, 1930, 0, 0xa11, 3 * MiB, 0,
	  A(GMT_KIND_ARRAY, GMT_API_CUDA_MALLOC_ARRAY, 0) | (uint64_t)GMT_FLAG_ESTIMATED << 24);
	E(GMT_EV_ALLOC, 1935, 0, 0x7f6000000000, 16 * MiB, 0, A(GMT_KIND_IMPORTED, GMT_API_DRIVER, 0));
	E(GMT_EV_VMM_CREATE, 1940, 0, 0x21, 2 * MiB, 0, A(GMT_KIND_MULTICAST, GMT_API_DRIVER, 0));
	E(GMT_EV_MULTICAST_BIND, 1945, 0, 0x21, 2 * MiB, 0x11, 1);
	uint64_t s_alloc = gmt_tracer_string("cuMemAlloc");
	E(GMT_EV_PROC_UNIDENTIFIED, 1950, -1, s_alloc, 12000, 0, 0);
	E(GMT_EV_EXEC_FAILED, 1955, -1, 0, 0, 0, 2);                  /* ENOENT */
	E(GMT_EV_MULTICAST_UNBIND, 1960, 0, 0x21, 2 * MiB, 0, 0);
	E(GMT_EV_VMM_RELEASE, 1965, 0, 0x21, 0, 0, A(GMT_KIND_MULTICAST, GMT_API_DRIVER, 0));
	E(GMT_EV_FREE, 1970, 0, 0xa11, 0, 0, A(GMT_KIND_ARRAY, GMT_API_CUDA_FREE_ARRAY, 0));
	E(GMT_EV_FREE, 1975, 0, 0x7f6000000000, 0, 0, A(GMT_KIND_IMPORTED, GMT_API_DRIVER, 0));
	E(GMT_EV_MODULE_UNLOAD, 1980, 0, 0xd0d, 0, 0, GMT_MODULE_UNLOAD);
#endif
	E(GMT_EV_NCCL_BEGIN, 2000, 0, 0, 0, 0, GMT_NCCL_COMM_INIT_RANK);
	E(GMT_EV_NCCL_END, 2010, 0, 0xcc, 0, 0, GMT_NCCL_COMM_INIT_RANK);
	E(GMT_EV_MEMINFO, 2100, 0, 78 * GiB, 80 * GiB, 0, 0);
	E(GMT_EV_FREE, 2200, 0, 0x7f1000000000, 0, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, 0));
	E(GMT_EV_FREE, 2210, 0, 0x7f1000000000, 0, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, 0));
	E(GMT_EV_VMM_UNMAP, 2300, -1, 0x7e0000000000, 2 * MiB, 0, 0);
	E(GMT_EV_VMM_RELEASE, 2310, 0, 0x11, 0, 0, A(GMT_KIND_VMM, GMT_API_NCCL_MEM_FREE, GMT_OWNER_NCCL));
	E(GMT_EV_VMM_ADDR_FREE, 2320, -1, 0x7e0000000000, 64 * MiB, 0, 0);
	E(GMT_EV_PRIMARY_RELEASE, 2400, 0, 0xc1, 0, 0, 0);
#if GMT_FORMAT_MINOR >= 3
	E(GMT_EV_CTX_DESTROY, 2410, 0, 0xc1, 0, 0, GMT_CTX_PRIMARY | GMT_CTX_RESET);
#else
	E(GMT_EV_CTX_DESTROY, 2410, 0, 0xc1, 0, 0, 0);
#endif
#if GMT_FORMAT_MINOR >= 5
	/* Aligned allocations (EVENTS3 shifts 21 and 9), two that are not. */
	for (uint64_t i = 0; i < 300; i++) {
		uint64_t a = i == 250 ? 0x7f9000000001ull : 0x7f8000000000ull + ((2 * i + 1) << 21);
		uint64_t z = i == 200 ? 1000 : (2 * (i % 5) + 1) << 9;
		E(GMT_EV_ALLOC, 2420 + 2 * i, 0, a, z, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, 0));
		E(GMT_EV_FREE, 2421 + 2 * i, 0, a, 0, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, 0));
	}
#endif
#if GMT_FORMAT_MINOR >= 1
	/* The framework's history, handed over after the fact. */
	gmt_tracer_flush(2000);
	gmt_event_t side[2] = {
		{ .ts = 1221, .addr = 0x7f0000000000 + 16 * MiB, .size = 4 * MiB, .aux = FWP,
		  .stack = tstack, .type = GMT_EV_FW_ALLOC, .device = 0 },
		{ .ts = 1222, .addr = 0x7f0000000000 + 16 * MiB, .size = 4 * MiB, .aux = FWP,
		  .type = GMT_EV_FW_FREE_REQUESTED, .device = 0 },
	};
	gmt_emit_side(side, 2);
#endif
	gmt_tracer_flush(2000);
	/* One late event (older than what is on disk). */
	E(GMT_EV_ALLOC, 950, 0, 0x7f5000000000, 512, 0, A(GMT_KIND_MANAGED, GMT_API_CUDA_MALLOC_MANAGED, 0));
	gmt_tracer_shutdown();
	printf("%s\n", path);
	return 0;
}
