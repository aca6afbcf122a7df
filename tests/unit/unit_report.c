/*
 * unit_report.c - the text and JSON renderings of a replay whose result is
 * known by construction, compared byte for byte with tests/expected/
 * (unit_report.txt, unit_report.json), plus field checks.
 *
 *   unit_report                 compare (expected files under $ROOT or .)
 *   unit_report --dump FILE     write the whole JSON document to FILE (the
 *                               case analyze_report_schema.sh validates it)
 *   GMT_UPDATE_EXPECTED=1       rewrite the expected files instead
 */
#include "engines/gmt_replay.h"
#include "model/gmt_results.h"
#include "render/gmt_render.h"
#include "gmt_test.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define T0 1000000000000ull   /* first event, CLOCK_MONOTONIC ns */

static gmt_visitor_t V;

static void ev(unsigned type, uint64_t dt, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_devent_t e = { .ts = T0 + dt, .addr = addr, .size = size, .stream = stream,
			   .aux = aux, .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(V.events(V.ctx, &e, 1, 0) == 0);
}

/* A small run on two devices: the peak of device 0 (3 GiB + 1 MiB) is at
 * +2 s; stream-ordered peaks alone at +4 s; one OOM; drops; a pool. Device
 * 1: a created context beside the primary one, a managed block of unknown
 * context (no CTX_CURRENT), the created context destroyed (ambiguous:
 * nothing released), then the primary one (the block goes with it). */
static gmt_replay_t *known_replay(void)
{
	gmt_replay_t *r = gmt_replay_new("traces/gpumemtrace.train.4242.gmt");
	gmt_replay_visitor(r, &V);
	const char *argv[] = { "python3", "train.py", "--bad\tname" };
	gmt_kv_t env[] = { { "CUDA_VISIBLE_DEVICES", "0,1" }, { "RANK", "0" } };
	gmt_header_t h = { .format_major = 1, .format_minor = 0, .tool_version = "0.1.0",
			   .pid = 4242, .ppid = 4200, .host = "node\xff" "7", .exe = "/usr/bin/python3",
			   .cmdline = argv, .n_cmdline = 3, .env = env, .n_env = 2,
			   .clock_monotonic_ns = T0 - 500000000ull,
			   .clock_realtime_ns = 1700000000000000000ull };
	CHECK(V.header(V.ctx, &h) == 0);
	gmt_device_rec_t d0 = { .ordinal = 0, .name = "NVIDIA H200", .pci_bus_id = "0000:19:00.0",
				.uuid = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
					  1, 2, 3, 4, 5, 6, 7, 8 },
				.total_bytes = 150754820096ull, .cc_major = 9, .cc_minor = 0,
				.driver_version = 13000 };
	CHECK(V.device(V.ctx, &d0) == 0);
	ev(GMT_EV_MEMINFO, 0, 0, 140 * GiB, 150754820096ull, 0, 0);
	ev(GMT_EV_ALLOC, 1000000000ull, 0, 0x7f0000000000ull, 2 * GiB, 0, GMT_AUX(1, GMT_API_CUDA_MALLOC, 0));
	ev(GMT_EV_VMM_RESERVE, 1100000000ull, -1, 0x7e0000000000ull, 8 * GiB, 0, 0);
	ev(GMT_EV_VMM_CREATE, 1200000000ull, 0, 0x51, 1 * MiB, 0, GMT_AUX(3, GMT_API_NCCL_MEM_ALLOC, 1));
	ev(GMT_EV_VMM_MAP, 1300000000ull, -1, 0x7e0000000000ull, 1 * MiB, 0x51, 0);
	ev(GMT_EV_ALLOC, 2000000000ull, 0, 0x7f0100000000ull, 1 * GiB, 0xabc, GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0));
	ev(GMT_EV_ALLOC, 2500000000ull, -1, 0x600000, 64 * MiB, 0, GMT_AUX(5, GMT_API_CUDA_MALLOC_HOST, 0));
	ev(GMT_EV_FREE, 3000000000ull, -1, 0x7f0000000000ull, 0, 0, GMT_AUX(1, GMT_API_CUDA_FREE, 0));
	ev(GMT_EV_ALLOC, 4000000000ull, 0, 0x7f0200000000ull, 1 * GiB, 0xabc, GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0));
	ev(GMT_EV_POOL_RESERVED, 4100000000ull, 0, 3 * GiB, 3 * GiB, 0x900, 0);
	ev(GMT_EV_POOL_USED, 4100000000ull, 0, 2 * GiB, 2 * GiB, 0x900, 0);
	ev(GMT_EV_ALLOC_FAIL, 5000000000ull, 0, 0, 200 * GiB, 0xabc,
	   GMT_AUX_WITH_RESULT(GMT_AUX(2, GMT_API_CUDA_MALLOC_ASYNC, 0), 2));
	ev(GMT_EV_MEMINFO, 5000000100ull, 0, 137 * GiB, 150754820096ull, 0, 0);
	ev(GMT_EV_PRIMARY_RETAIN, 5900000000ull, 1, 0xF1, 0, 0, 0);
	ev(GMT_EV_CTX_CREATE, 5950000000ull, 1, 0xC1, 0, 0, 0);
	ev(GMT_EV_ALLOC, 6000000000ull, 1, 0x7f0300000000ull, 4096, 0, GMT_AUX(4, GMT_API_CUDA_MALLOC_MANAGED, 0));
	ev(GMT_EV_CTX_DESTROY, 6100000000ull, 1, 0xC1, 0, 0, 0);
	ev(GMT_EV_CTX_DESTROY, 6200000000ull, 1, 0, 0, 0, GMT_CTX_PRIMARY);
	ev(GMT_EV_FREE, 6500000000ull, -1, 0x123, 0, 0, 0);
	gmt_drops_t dr = { .count = 12, .first_ts = T0 + 5500000000ull, .last_ts = T0 + 5600000000ull,
			   .reason = "buffer_full", .err = 0 };
	CHECK(V.drops(V.ctx, &dr) == 0);
	gmt_end_t end = { .ts = T0 + 7000000000ull, .written = 15, .dropped = 12, .late = 0 };
	CHECK(V.end(V.ctx, &end) == 0);
	gmt_decode_result_t res = { .status = GMT_DECODE_OK, .ended_cleanly = 1, .bytes_ok = 4321,
				    .file_size = 4321, .frames = 3, .records = 9, .events = 15,
				    /* the decoder's totals of the DROPS and END above */
				    .dropped = 12, .drop_first_ts = T0 + 5500000000ull,
				    .drop_last_ts = T0 + 5600000000ull, .end_dropped = 12 };
	gmt_replay_finish(r, &res);
	return r;
}

static char *render(const gmt_summary_t *s, int json, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	if (json) {
		gmt_json_t j;
		gmt_json_init(&j, f);
		gmt_report_json(&j, s, NULL);
		CHECK(gmt_json_close(&j) == 0);
	} else {
		gmt_report_text(f, s, NULL);
	}
	fclose(f);
	return buf;
}

static void compare_with(const char *name, const char *got, size_t len)
{
	const char *root = getenv("ROOT");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/expected/%s", root ? root : ".", name);
	if (getenv("GMT_UPDATE_EXPECTED")) {
		FILE *f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fwrite(got, 1, len, f);
			fclose(f);
		}
		return;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		gmt_test_failures++;
		return;
	}
	static char want[1 << 16];
	size_t n = fread(want, 1, sizeof(want), f);
	fclose(f);
	if (n != len || memcmp(want, got, len)) {
		size_t i = 0;
		while (i < n && i < len && want[i] == got[i])
			i++;
		fprintf(stderr, "%s differs at byte %zu (expected %zu bytes, got %zu); got:\n%s\n",
			path, i, n, len, got);
		gmt_test_failures++;
	}
}

int main(int argc, char **argv)
{
	gmt_replay_t *r = known_replay();
	const gmt_summary_t *s = gmt_replay_summary(r);

	if (argc == 3 && !strcmp(argv[1], "--dump")) {
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 2;
		gmt_json_t j;
		gmt_json_init(&j, f);
		gmt_render_json_head(&j, "summary");
		gmt_json_kv_arr_begin(&j, "traces");
		gmt_report_json(&j, s, NULL);
		gmt_report_json(&j, s, NULL);
		gmt_json_arr_end(&j);
		gmt_json_obj_end(&j);
		gmt_json_close(&j);
		fclose(f);
		gmt_replay_free(r);
		return 0;
	}

	/* the numbers the renderings must show */
	const gmt_dev_summary_t *d = gmt_summary_device(s, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(3 * GiB + MiB, d->peak.total);
		CHECK_EQ_U64(T0 + 2000000000ull, d->peak_ts);
		CHECK_EQ_U64(2 * GiB, d->kind_max[GMT_KIND_ASYNC]);
		CHECK_EQ_U64(2 * GiB, d->kind_max[GMT_KIND_PLAIN]);
	}
	const gmt_dev_summary_t *d1 = gmt_summary_device(s, 1);
	CHECK(d1 != NULL);
	if (d1) {
		CHECK_EQ_U64(2, d1->ctx_destroys);
		CHECK_EQ_U64(1, d1->ctx_released_blocks);
		CHECK_EQ_U64(4096, d1->ctx_released_bytes);
		CHECK_EQ_U64(T0 + 6200000000ull, d1->ctx_release_ts);
		CHECK_EQ_U64(0, d1->live.total);
		CHECK_EQ_U64(4096, d1->peak.total);
	}
	CHECK_EQ_U64(1, s->anom.ambiguous_ctx_destroys);

	size_t tl, jl;
	char *text = render(s, 0, &tl);
	char *json = render(s, 1, &jl);
	CHECK(text && json);
	if (text && json) {
		CHECK(strstr(text, "Peak device bytes held by live allocations: 3222274048 B (3.00 GiB)\n"
				   "    at ts 1002000000000 ns, +2.000000000 s after the first event") != NULL);
		CHECK(strstr(text, "sum of the maxima: 4296015872 B (4.00 GiB) (a bound, not a moment)") != NULL);
		CHECK(strstr(text, "result 2 CUDA_ERROR_OUT_OF_MEMORY") != NULL);
		CHECK(strstr(text, " GB") == NULL);
		CHECK(strstr(text, "  Contexts destroyed: 2; with them the driver released 4096 B (4.00 KiB) in 1 "
				   "block the program had not freed (last at +6.200000000 s)\n") != NULL);
		CHECK(strstr(text, "  1 contexts destroyed while another context of their device lived "
				   "(nothing released)\n") != NULL);
		CHECK(strstr(json, "\"contexts\":{\"destroyed\":2,\"released_blocks\":1,\"released_bytes\":4096,"
				   "\"last_release_ts_ns\":1006200000000}") != NULL);
		CHECK(strstr(json, "\"ambiguous_ctx_destroys\":1}") != NULL);
		CHECK(strstr(json, "\"peak\":{\"bytes\":3222274048,\"by_kind\":{\"unknown\":0,\"plain\":2147483648,"
				   "\"stream_ordered\":1073741824,\"vmm_physical\":1048576,\"managed\":0,\"array\":0}") != NULL);
		CHECK(strstr(json, "\"host\":\"node\\ufffd7\"") != NULL);
		CHECK(strstr(json, "\"--bad\\u0009name\"") != NULL);
		compare_with("unit_report.txt", text, tl);
		compare_with("unit_report.json", json, jl);
	}
	free(text);
	free(json);
	gmt_replay_free(r);
	TEST_DONE();
}
