/*
 * unit_report_model.c - the report model (analyzer/model/gmt_report_model.c)
 * from synthetic processes whose numbers are known by construction. MiB =
 * 2^20 B; times in ns.
 *
 * Host "h". Processes A (pid 100) and B (pid 200) use device 0 of UUID U:
 * one physical device. C (pid 300) uses device 0 of another UUID: another.
 *   A (a framework):  t10 segment 64 (reserved 64)   t11 an untraced entry point
 *                     t12 phase "step" begins          t20 alloc 16
 *                     t40 SYNC   t50 MEMINFO used 200   t60 alloc 32 (48)
 *                     t65 "step" ends   t90 free requested 16 (32)
 *                     t95 free requested 32 and segment freed (0)
 *   B (plain driver): t15 +100 (application)   t55 +10 (nccl)
 *                     t70 -100   t80 a failed 1 GiB allocation   t100 +150
 *   C:                t5 +1
 * Device d0, held together: 64 (t10), 164 (t15), 174 (t55: the coinciding
 * peak: A 64 = allocated 16 + cache 48, B 100 application + 10 nccl; device
 * used 200 from A's sample at t50, against 164 held then: rest 36), 74
 * (t70), 10 (t95), 160 (t100). Own peaks: A 64 at t10, B 160 at t100;
 * their sum 224 is a bound. The step's figures: max allocated 48, max
 * reserved 64, max held 64, max outside 0.
 *
 * Then processes that end (E, G), one after the other on a device; a
 * long process (D, its own device) whose rows span many chunks of
 * the temporary file, read back to the byte.
 */
#include "model/gmt_report_model.h"
#include "support/gmt_spool.h"
#include "gmt_test.h"

#define MiB (1ull << 20)
#define PLAIN GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, GMT_OWNER_APP)
#define NCCL GMT_AUX(GMT_KIND_PLAIN, GMT_API_DRIVER, GMT_OWNER_NCCL)

static gmt_report_model_t *M;
static gmt_visitor_t V;

static void process(const char *name, uint64_t pid, const char *uuid, int ordinal)
{
	gmt_phases_t *ph = gmt_report_model_begin(M, name);
	CHECK(ph != NULL);
	gmt_phases_visitor(ph, &V);
	gmt_header_t h = { .format_major = 1, .format_minor = 4, .tool_version = "test", .pid = pid,
			   .host = "h", .exe = name, .clock_monotonic_ns = 1000, .clock_realtime_ns = 5000 };
	CHECK(V.header(V.ctx, &h) == 0);
	gmt_device_rec_t d = { .ordinal = ordinal, .name = "GPU", .pci_bus_id = "0:0", .total_bytes = 1024 * MiB };
	memcpy(d.uuid, uuid, 16);
	CHECK(V.device(V.ctx, &d) == 0);
	CHECK(V.string(V.ctx, 1, "step", 4) == 0);
}

static void ev(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size, uint64_t stream,
	       uint64_t aux)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			   .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(gmt_report_model_event(M, &e, 0) == 0);
}

typedef struct seen {
	uint64_t n, ts[64], held[64], rest[64], syncs, last_held;
	int64_t untraced[64];
} seen_t;

static int keep(void *ctx, const gmt_rm_instant_t *in)
{
	seen_t *s = ctx;
	uint64_t sum = 0;
	for (unsigned k = 0; k < GMT_RM_REST; k++)
		sum += in->v[k];
	CHECK_EQ_U64(in->held, sum);               /* the stack adds up to held */
	CHECK_EQ_U64(in->held + in->v[GMT_RM_REST], in->top);
	if (s->n < 64) {
		s->ts[s->n] = in->ts;
		s->held[s->n] = in->held;
		s->rest[s->n] = in->v[GMT_RM_REST];
		s->untraced[s->n] = in->untraced;
	}
	s->n++;
	s->syncs += in->syncs;
	s->last_held = in->held;
	return 0;
}

static void known(void)
{
	const char U[16] = "uuid-of-gpu-0000", W[16] = "another-gpu-0000";
	M = gmt_report_model_new(NULL);
	CHECK(M != NULL);

	process("A", 100, U, 0);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 10, 0, 0x1000000, 64 * MiB, 0, 0);
	ev(GMT_EV_PROC_UNIDENTIFIED, 11, -1, 7, 13000, 0, 0);
	ev(GMT_EV_RANGE_BEGIN, 12, -1, 0, 0, GMT_RANGE_API, 1);
	ev(GMT_EV_FW_ALLOC, 20, 0, 0x1000000, 16 * MiB, 0, 0);
	ev(GMT_EV_SYNC, 40, 0, 35, 0, 0x51, 1);
	ev(GMT_EV_MEMINFO, 50, 0, 824 * MiB, 1024 * MiB, 0, 0);
	ev(GMT_EV_FW_ALLOC, 60, 0, 0x2000000, 32 * MiB, 0, 0);
	ev(GMT_EV_RANGE_END, 65, -1, 0, 0, GMT_RANGE_API, 1);
	ev(GMT_EV_FW_FREE_REQUESTED, 90, 0, 0x1000000, 16 * MiB, 0, 0);
	ev(GMT_EV_FW_FREE_REQUESTED, 95, 0, 0x2000000, 32 * MiB, 0, 0);
	ev(GMT_EV_FW_SEGMENT_FREE, 95, 0, 0x1000000, 64 * MiB, 0, 0);
	gmt_end_t end = { .ts = 96, .written = 11, .how = "exit" };
	CHECK(V.end(V.ctx, &end) == 0);
	CHECK(gmt_report_model_end(M, NULL) == 0);

	process("B", 200, U, 0);
	ev(GMT_EV_ALLOC, 15, 0, 0xa000000, 100 * MiB, 0, PLAIN);
	ev(GMT_EV_ALLOC, 55, 0, 0xb000000, 10 * MiB, 0, NCCL);
	ev(GMT_EV_FREE, 70, 0, 0xa000000, 0, 0, PLAIN);
	ev(GMT_EV_ALLOC_FAIL, 80, 0, 0, 1024 * MiB, 0, GMT_AUX_WITH_RESULT(PLAIN, 2));
	ev(GMT_EV_ALLOC, 100, 0, 0xc000000, 150 * MiB, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);

	process("C", 300, W, 0);
	ev(GMT_EV_ALLOC, 5, 0, 0xd000000, 1 * MiB, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);

	CHECK(gmt_report_model_finish(M) == 0);
	CHECK_EQ_U64(3, M->n_traces);
	CHECK_EQ_U64(1, M->traces[0].entry_points_untraced);
	CHECK_EQ_U64(0, M->traces[0].entry_points_identified);
	CHECK_EQ_U64(1, M->traces[0].syncs);
	CHECK_EQ_STR("clean", M->traces[0].status_key);
	CHECK_EQ_STR("cut", M->traces[1].status_key);
	CHECK_EQ_U64(2, M->n_devices);

	const gmt_rm_device_t *d = &M->devices[0];
	CHECK_EQ_STR("d0", d->id);
	CHECK_EQ_U64(2, d->n_members);
	CHECK_EQ_U64(0, d->members[0].trace);
	CHECK_EQ_U64(1, d->members[1].trace);
	CHECK_EQ_U64(1, d->uuid_known);
	CHECK_EQ_U64(1024 * MiB, d->total_bytes);
	CHECK_EQ_U64(10, d->t0);
	CHECK_EQ_U64(100, d->t_end);
	CHECK_EQ_U64(10 + 4000, d->wall_t0_ns);
	CHECK_EQ_U64(1, d->has_peak);
	CHECK_EQ_U64(55, d->peak.ts);
	CHECK_EQ_U64(174 * MiB, d->peak.held);
	CHECK_EQ_U64(16 * MiB, d->peak.v[GMT_RM_ALLOCATED]);
	CHECK_EQ_U64(48 * MiB, d->peak.v[GMT_RM_CACHE]);
	CHECK_EQ_U64(100 * MiB, d->peak.v[GMT_RM_OUTSIDE + GMT_OWNER_APP]);
	CHECK_EQ_U64(10 * MiB, d->peak.v[GMT_RM_OUTSIDE + GMT_OWNER_NCCL]);
	CHECK_EQ_U64(0, d->peak.v[GMT_RM_OUTSIDE + GMT_OWNER_CUBLAS]);
	CHECK_EQ_U64(200 * MiB, d->peak.v[GMT_RM_USED]);
	CHECK_EQ_U64(36 * MiB, d->peak.v[GMT_RM_REST]);
	CHECK_EQ_U64(36 * MiB, (uint64_t)d->peak.untraced);
	CHECK_EQ_U64(210 * MiB, d->peak.top);
	CHECK_EQ_U64(16 * MiB, d->peak.allocated);
	CHECK_EQ_U64(64 * MiB, d->peak.reserved);
	CHECK_EQ_U64(64 * MiB, d->members[0].at_peak);
	CHECK_EQ_U64(110 * MiB, d->members[1].at_peak);
	/* their states then: A's row at t50 (after its 6th event, the
	   MEMINFO), B's at t55 (after its 2nd) */
	CHECK_EQ_U64(6, d->members[0].at_peak_seq);
	CHECK_EQ_U64(2, d->members[1].at_peak_seq);
	CHECK_EQ_U64(64 * MiB, d->members[0].own_peak);
	CHECK_EQ_U64(10, d->members[0].own_peak_ts);
	CHECK_EQ_U64(160 * MiB, d->members[1].own_peak);
	CHECK_EQ_U64(100, d->members[1].own_peak_ts);
	CHECK_EQ_U64(224 * MiB, d->own_peak_sum);
	CHECK_EQ_U64(1, d->syncs);
	/* A: rows at 10, 20, 40 (the sync), 50, 60, 90, 95; B: 15, 55, 70, 100 */
	CHECK_EQ_U64(7, d->members[0].rows);
	CHECK_EQ_U64(4, d->members[1].rows);
	CHECK_EQ_U64(11, d->instants);
	CHECK_EQ_U64(1, d->series_used[GMT_RM_ALLOCATED]);
	CHECK_EQ_U64(1, d->series_used[GMT_RM_CACHE]);
	CHECK_EQ_U64(1, d->series_used[GMT_RM_OUTSIDE + GMT_OWNER_NCCL]);
	CHECK_EQ_U64(0, d->series_used[GMT_RM_OUTSIDE + GMT_OWNER_CUBLAS]);
	CHECK_EQ_U64(1, d->series_used[GMT_RM_REST]);
	CHECK_EQ_U64(1, d->series_used[GMT_RM_USED]);

	seen_t s;
	memset(&s, 0, sizeof(s));
	CHECK(gmt_report_each_instant(M, 0, keep, &s) == 0);
	CHECK_EQ_U64(11, s.n);
	const uint64_t ts[] = { 10, 15, 20, 40, 50, 55, 60, 70, 90, 95, 100 };
	const uint64_t held[] = { 64, 164, 164, 164, 164, 174, 174, 74, 74, 10, 160 };
	for (int i = 0; i < 11; i++) {
		CHECK_EQ_U64(ts[i], s.ts[i]);
		CHECK_EQ_U64(held[i] * MiB, s.held[i]);
	}
	/* the estimate is taken at the sample (t50: 200 - 164) and kept */
	CHECK_EQ_U64(0, s.rest[3]);
	CHECK_EQ_U64(36 * MiB, s.rest[4]);
	CHECK_EQ_U64(36 * MiB, s.rest[10]);
	CHECK_EQ_U64(1, s.syncs);

	CHECK_EQ_U64(1, d->n_phases);
	const gmt_rm_phase_t *p = &d->phases[0];
	CHECK_EQ_U64(0, p->member);
	CHECK_EQ_STR("step", p->name);
	CHECK_EQ_U64(1, p->k);
	CHECK_EQ_U64(12, p->begin_ts);
	CHECK_EQ_U64(65, p->end_ts);
	CHECK_EQ_U64(1, p->ended);
	CHECK_EQ_U64(1, p->has_allocated);
	CHECK_EQ_U64(48 * MiB, p->max_allocated);
	CHECK_EQ_U64(64 * MiB, p->max_reserved);
	CHECK_EQ_U64(64 * MiB, p->max_held);
	CHECK_EQ_U64(0, p->max_outside);

	CHECK_EQ_U64(1, d->n_fails);
	CHECK_EQ_U64(1, d->fails[0].member);
	CHECK_EQ_U64(80, d->fails[0].f->ts);
	CHECK_EQ_U64(1024 * MiB, d->fails[0].f->size);
	CHECK_EQ_U64(10 * MiB, d->fails[0].f->live.total);
	CHECK_EQ_STR("CUDA_ERROR_OUT_OF_MEMORY", d->fails[0].result_name);

	const gmt_rm_device_t *c = &M->devices[1];
	CHECK_EQ_U64(1, c->n_members);
	CHECK_EQ_U64(2, c->members[0].trace);
	CHECK_EQ_U64(1 * MiB, c->peak.held);
	CHECK_EQ_U64(5, c->peak.ts);
	CHECK_EQ_U64(1 * MiB, c->own_peak_sum);
	CHECK_EQ_U64(0, c->series_used[GMT_RM_USED]);
	gmt_report_model_free(M);
}

/* Two processes of one device, one after the other: E holds 100 MiB when
 * it exits (END at t20, nothing freed), F allocates 50 MiB at t30. The
 * driver released E's bytes at its end, so the coinciding peak is E's 100
 * at t10, not 150; E holds 0 at t20 and after. A cut trace (G, no END)
 * keeps its last values. */
static void ended(void)
{
	const char U[16] = "one-after-other0";
	M = gmt_report_model_new(NULL);
	process("E", 500, U, 0);
	ev(GMT_EV_ALLOC, 10, 0, 0xa000000, 100 * MiB, 0, PLAIN);
	gmt_end_t end = { .ts = 20, .written = 1, .how = "exit" };
	CHECK(V.end(V.ctx, &end) == 0);
	CHECK(gmt_report_model_end(M, NULL) == 0);
	process("F", 600, U, 0);
	ev(GMT_EV_ALLOC, 30, 0, 0xb000000, 50 * MiB, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);
	CHECK(gmt_report_model_finish(M) == 0);
	CHECK_EQ_U64(1, M->n_devices);
	const gmt_rm_device_t *d = &M->devices[0];
	CHECK_EQ_U64(100 * MiB, d->peak.held);
	CHECK_EQ_U64(10, d->peak.ts);
	CHECK_EQ_U64(100 * MiB, d->members[0].at_peak);
	CHECK_EQ_U64(0, d->members[1].at_peak);
	CHECK_EQ_U64(2, d->members[0].rows);
	CHECK_EQ_U64(20, d->members[0].last_ts);
	seen_t s;
	memset(&s, 0, sizeof(s));
	CHECK(gmt_report_each_instant(M, 0, keep, &s) == 0);
	CHECK_EQ_U64(3, s.n);
	const uint64_t ts[] = { 10, 20, 30 }, held[] = { 100, 0, 50 };
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_U64(ts[i], s.ts[i]);
		CHECK_EQ_U64(held[i] * MiB, s.held[i]);
	}
	gmt_report_model_free(M);

	/* the same without E's END: its 100 MiB stand, 150 at t30 */
	M = gmt_report_model_new(NULL);
	process("G", 700, U, 0);
	ev(GMT_EV_ALLOC, 10, 0, 0xa000000, 100 * MiB, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);
	process("F", 600, U, 0);
	ev(GMT_EV_ALLOC, 30, 0, 0xb000000, 50 * MiB, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);
	CHECK(gmt_report_model_finish(M) == 0);
	CHECK_EQ_U64(150 * MiB, M->devices[0].peak.held);
	CHECK_EQ_U64(30, M->devices[0].peak.ts);
	gmt_report_model_free(M);
}

/* 200,000 rows of one process: many chunks of the spool, read back. */
static void long_stream(void)
{
	const char U[16] = "a-long-stream-00";
	M = gmt_report_model_new(NULL);
	process("D", 400, U, 3);
	const uint64_t n = 200000;
	for (uint64_t i = 0; i < n; i++) {
		if (i % 2 == 0)
			ev(GMT_EV_ALLOC, 1000 + 10 * i, 3, 0x100000 + i * 4096, (i % 1000 + 1) * 4096, 0, PLAIN);
		else
			ev(GMT_EV_FREE, 1000 + 10 * i, 3, 0x100000 + (i - 1) * 4096, 0, 0, PLAIN);
	}
	ev(GMT_EV_ALLOC, 1000 + 10 * n, 3, 0x9000000000, 123456789, 0, PLAIN);
	CHECK(gmt_report_model_end(M, NULL) == 0);
	CHECK(gmt_report_model_finish(M) == 0);
	CHECK(M->spool_raw_bytes > 4 * GMT_SPOOL_CHUNK);
	/* below GMT_SPOOL_RAW_FIRST: written as it is (spool() below checks
	   the compressed chunks) */
	CHECK_EQ_U64(M->spool_raw_bytes, M->spool_bytes);
	const gmt_rm_device_t *d = &M->devices[0];
	CHECK_EQ_U64(3, d->ordinal);
	CHECK_EQ_U64(n + 1, d->instants);
	/* the highest: 1000 pages alive right before a free, never more */
	CHECK_EQ_U64(123456789, d->peak.held);
	CHECK_EQ_U64(1000 + 10 * n, d->peak.ts);
	seen_t s;
	memset(&s, 0, sizeof(s));
	CHECK(gmt_report_each_instant(M, 0, keep, &s) == 0);
	CHECK_EQ_U64(n + 1, s.n);
	CHECK_EQ_U64(123456789, s.last_held);
	CHECK_EQ_U64(4096, s.held[0]);
	CHECK_EQ_U64(0, s.held[1]);
	gmt_report_model_free(M);
}

/* The spool: the file's first raw_first bytes as they are, the chunks
   after compressed; two streams interleaved read back byte for byte. */
static void spool(void)
{
	gmt_spool_t *sp = gmt_spool_new();
	size_t a, b;
	CHECK(sp && gmt_spool_open(sp, &a) == 0 && gmt_spool_open(sp, &b) == 0);
	gmt_spool_set_raw_first(sp, 3 * GMT_SPOOL_CHUNK);
	/* 8 chunks of a (compressible: each 4-byte count 16 times), and 1.5
	   of b (its first 1.5 chunks written between a's) */
	for (uint32_t i = 0; i < 8 * GMT_SPOOL_CHUNK / 4; i++) {
		uint32_t v = i >> 4;
		CHECK(gmt_spool_write(sp, a, &v, 4) == 0);
		if (i < 3 * GMT_SPOOL_CHUNK / 8) {
			uint32_t x = ~v;
			CHECK(gmt_spool_write(sp, b, &x, 4) == 0);
		}
	}
	CHECK(gmt_spool_close(sp, a) == 0);
	CHECK(gmt_spool_close(sp, b) == 0);
	CHECK_EQ_U64(9.5 * GMT_SPOOL_CHUNK, gmt_spool_raw_bytes(sp));
	/* the file's first 3 chunks raw (a's first two and b's first), the
	   6.5 after compressed at least fourfold */
	uint64_t f = gmt_spool_file_bytes(sp);
	CHECK(f > 3 * GMT_SPOOL_CHUNK && f < 3 * GMT_SPOOL_CHUNK + 6.5 * GMT_SPOOL_CHUNK / 4);
	gmt_spool_reader_t r;
	for (int k = 0; k < 2; k++) {
		CHECK(gmt_spool_reader_open(&r, sp, k ? b : a) == 0);
		uint64_t n = 0, bad = 0;
		while (gmt_spool_reader_fill(&r)) {
			for (; r.pos + 4 <= r.len; r.pos += 4, n++) {
				uint32_t v;
				memcpy(&v, r.buf + r.pos, 4);
				bad += v != (k ? ~(uint32_t)(n >> 4) : (uint32_t)(n >> 4));
			}
			CHECK_EQ_U64(r.len, r.pos);
		}
		CHECK_EQ_U64(0, r.err);
		CHECK_EQ_U64(k ? 3 * GMT_SPOOL_CHUNK / 8 : 8 * GMT_SPOOL_CHUNK / 4, n);
		CHECK_EQ_U64(0, bad);
		gmt_spool_reader_close(&r);
	}
	/* every chunk compressed */
	gmt_spool_t *z = gmt_spool_new();
	CHECK(z && gmt_spool_open(z, &a) == 0);
	gmt_spool_set_raw_first(z, 0);
	for (uint32_t i = 0; i < GMT_SPOOL_CHUNK; i++) {
		uint32_t v = i >> 4;
		CHECK(gmt_spool_write(z, a, &v, 4) == 0);
	}
	CHECK(gmt_spool_close(z, a) == 0);
	CHECK_EQ_U64(4 * GMT_SPOOL_CHUNK, gmt_spool_raw_bytes(z));
	CHECK(gmt_spool_file_bytes(z) < GMT_SPOOL_CHUNK);
	gmt_spool_free(z);
	gmt_spool_free(sp);
}

int main(void)
{
	spool();
	known();
	ended();
	long_stream();
	TEST_DONE();
}
