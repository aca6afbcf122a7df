/*
 * gmt-page-fixture: the report page's data for a device whose values are
 * known by construction, built with export/gmt_pagedata.c as the report
 * does, for tests/cases/web_page.sh (tests/tools/page_fixture.py writes the
 * body and the numbers the test expects).
 *   gmt-page-fixture [--grow] DATA.json
 * --grow: the levels learn their extent from the instants
 * (GMT_BUCKETS_GROW): the axis ends at the last instant, 0.7 s.
 * The run: 1 s on an 8 GiB device. Framework allocated 1 GiB, then 3 GiB at
 * 0.25 s with a spike to 5 GiB for 1000 ns at 0.3 s (its only instant of
 * 5.75 GiB, the peak), 2 GiB from 0.5 s; reserved-not-allocated 1 GiB (0 in
 * the spike, 3 GiB from 0.5 s); nccl 256 MiB until 0.7 s; the rest of
 * device used 512 MiB; pool reserved known from 0.1 s.
 */
#include <stdio.h>
#include <string.h>

#include "gmt_buckets.h"
#include "gmt_pagedata.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

int main(int argc, char **argv)
{
	static const gmt_page_series_t series[] = {
		{ "allocated", "framework allocated", GMT_PAGE_STACK, 0 },
		{ "cache", "reserved, not allocated (the framework's cache)", GMT_PAGE_STACK, 1 },
		{ "outside_nccl", "outside the framework: nccl", GMT_PAGE_STACK, 3 },
		{ "rest", "rest of device used (context, other processes; an estimate from samples)", GMT_PAGE_STACK, 8 },
		{ "device_used", "device used (cuMemGetInfo samples)", GMT_PAGE_LINE, 9 },
		{ "pool_reserved", "pool reserved (cuMemPool attributes)", GMT_PAGE_LINE, 10 },
	};
	static const struct {
		uint64_t t, alloc, cache, nccl, rest, pool;
		int pool_known;
	} in[] = {
		{ 0, 1 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 0, 0 },
		{ 100000000, 1 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB, 1 },
		{ 250000000, 3 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB, 1 },
		{ 300000000, 5 * GiB, 0, 256 * MiB, 512 * MiB, 1 * GiB, 1 },
		{ 300001000, 3 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB, 1 },
		{ 500000000, 2 * GiB, 3 * GiB, 256 * MiB, 512 * MiB, 1 * GiB + 512 * MiB, 1 },
		{ 700000000, 2 * GiB, 3 * GiB, 0, 512 * MiB, 1 * GiB + 512 * MiB, 1 },
	};
	int grow = argc == 3 && !strcmp(argv[1], "--grow");
	if (argc != 2 + grow) {
		fprintf(stderr, "usage: gmt-page-fixture [--grow] DATA.json\n");
		return 2;
	}
	const char *path = argv[1 + grow];
	gmt_page_dev_info_t info = {
		.id = "dev-0", .label = "device 0 (GPU-fixture) on host fixture",
		.top_label = "device used (the stack's top)", .total_bytes = 8 * GiB,
		.t0_ns = 5000000000ull, .duration_ns = grow ? GMT_BUCKETS_GROW : 1000000000ull,
		.has_wall = 1, .wall_s = 1764581951, .wall_ns = 123456789,
		.series = series, .n_series = 6, .max_buckets = 4096,
	};
	gmt_page_dev_t *d = gmt_page_dev_new(&info);
	if (!d)
		return 1;
	int rc = 0;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		uint64_t top = in[i].alloc + in[i].cache + in[i].nccl + in[i].rest;
		uint64_t v[6] = { in[i].alloc, in[i].cache, in[i].nccl, in[i].rest, top, in[i].pool };
		uint8_t k[6] = { 1, 1, 1, 1, 1, (uint8_t)in[i].pool_known };
		rc |= gmt_page_dev_instant(d, in[i].t, v, k, top);
		/* synchronisations as they come, between the instants (growing
		   levels are narrower then) */
		if (i == 1)
			rc |= gmt_page_dev_sync(d, 100000000);
		for (int j = 0; i == 5 && j < 3; j++)
			rc |= gmt_page_dev_sync(d, 600000000);
	}
	rc |= gmt_page_dev_phase(d, "load", 1, 1, 0, 250000000, 0, "#phase-load-1");
	rc |= gmt_page_dev_phase(d, "step", 1, 1, 250000000, 500000000, 0, "#phase-step-1");
	rc |= gmt_page_dev_phase(d, "step", 2, 0, 500000000, 900000000, 1, "#phase-step-2");
	const gmt_page_part_t parts[] = {
		{ "framework allocated", 5 * GiB }, { "reserved, not allocated", 0 },
		{ "outside the framework: nccl", 256 * MiB }, { "rest of device used (estimate)", 512 * MiB },
	};
	rc |= gmt_page_dev_peak(d, "coinciding peak", 300000000, 5 * GiB + 768 * MiB, parts, 4, "#peak-0");
	rc |= gmt_page_dev_failure(d, "failed allocation", 800000000, 4 * GiB + 1536, "#failure-1");
	FILE *f = fopen(path, "w");
	if (!f || rc) {
		perror(path);
		return 1;
	}
	gmt_page_dev_t *devs[] = { d };
	rc = gmt_page_data_write(f, "fixture </script> <b>", devs, 1);
	if (fclose(f) || rc) {
		fprintf(stderr, "gmt-page-fixture: write failed (%d)\n", rc);
		return 1;
	}
	gmt_page_dev_free(d);
	return 0;
}
