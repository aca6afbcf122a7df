/*
 * gmt-memviz-fixture: a memory viewer snapshot written with
 * export/gmt_memviz.c from a run known by construction, for
 * tests/cases/memviz_writer.sh:
 *   gmt-memviz-fixture FORMAT OUT   (FORMAT: json, or the pickle protocol 2-4)
 * Device 0: the framework's segment S of 20 MiB at 0x7f0000000000; blocks
 * A (2 MiB at S), B (1 MiB at S + 4 MiB; 1000000 requested), A freed
 * (requested, completed), C (512 B at S + 8 MiB), a failed request of
 * 64 MiB (oom, 1 GiB free); outside the framework, nccl's 6 MiB at
 * 0x7f1000000000 (its own segment and block), live at the end. Device 1:
 * nothing. At the end: allocated 1049088 B (B + C), reserved 20 MiB,
 * outside 6 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_memviz.h"

#define MiB (1ull << 20)
#define S 0x7f0000000000ull
#define N 0x7f1000000000ull

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int format = strcmp(argv[1], "json") ? atoi(argv[1]) : GMT_MEMVIZ_JSON;
	FILE *f = fopen(argv[2], "wb");
	gmt_memviz_t *m = f ? gmt_memviz_open(f, format) : NULL;
	if (!m)
		return 1;
	static const gmt_memviz_frame_t py[] = { { "train.py", "forward", 42 }, { "train.py", "<module>", 7 } };
	static const gmt_memviz_frame_t nccl[] = { { "outside the framework: nccl", "ncclMemAlloc", 0 } };
	const uint64_t t0 = 1764581951000000ull;
	const gmt_memviz_entry_t e0[] = {
		{ "segment_alloc", S, 20 * MiB, 0, t0 + 1, py, 2, 0, NULL },
		{ "alloc", S, 2 * MiB, 0, t0 + 2, py, 2, 0, NULL },
		{ "alloc", S + 4 * MiB, 1 * MiB, 0, t0 + 3, py, 1, 0, NULL },
		{ "segment_alloc", N, 6 * MiB, 0, t0 + 4, nccl, 1, 0, NULL },
		{ "alloc", N, 6 * MiB, 0, t0 + 4, nccl, 1, 0, NULL },
		{ "free_requested", S, 2 * MiB, 0, t0 + 5, py, 2, 0, NULL },
		{ "free_completed", S, 2 * MiB, 0, t0 + 6, py, 2, 0, NULL },
		{ "alloc", S + 8 * MiB, 512, 0, t0 + 7, py, 2, 0, NULL },
		{ "oom", 0, 64 * MiB, 0, t0 + 8, py, 2, 1ull << 30, NULL },
	};
	gmt_memviz_device_begin(m);
	for (size_t i = 0; i < sizeof(e0) / sizeof(e0[0]); i++)
		gmt_memviz_entry(m, &e0[i]);
	gmt_memviz_device_end(m);
	gmt_memviz_device_begin(m);
	gmt_memviz_device_end(m);
	const gmt_memviz_block_t fw[] = {
		{ S + 4 * MiB, 1 * MiB, 1000000, "active_allocated", py, 1 },
		{ S + 8 * MiB, 512, 512, "active_allocated", py, 2 },
	};
	const gmt_memviz_block_t out[] = { { N, 6 * MiB, 6 * MiB, "active_allocated", nccl, 1 } };
	const gmt_memviz_segment_t segs[] = {
		{ 0, S, 20 * MiB, 0, "large", fw, 2, py, 2 },
		{ 0, N, 6 * MiB, 0, "large", out, 1, nccl, 1 },
	};
	const gmt_memviz_block_t bad[] = { { S + 30 * MiB, 1, 1, "active_allocated", NULL, 0 } };
	const gmt_memviz_segment_t bad_seg = { 0, S, 20 * MiB, 0, "large", bad, 1, NULL, 0 };
	if (gmt_memviz_segment(m, &bad_seg) != -22)  /* a block outside its segment */
		return 3;
	for (size_t i = 0; i < 2; i++)
		if (gmt_memviz_segment(m, &segs[i]))
			return 1;
	int rc = gmt_memviz_close(m);
	return fclose(f) || rc ? 1 : 0;
}
