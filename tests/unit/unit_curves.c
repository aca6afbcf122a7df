/*
 * unit_curves.c - the curves of analyzer/engines/gmt_curves.c from synthetic
 * events: one row per instant a value changes (events at one ts collapse
 * to the last state), the phase column, --max-rows buckets; the CSV is
 * compared byte for byte.
 */
#include "engines/gmt_curves.h"
#include "render/gmt_render.h"
#include "gmt_test.h"

static gmt_phases_t *P;
static gmt_curves_t *C;
static uint32_t thread;

static void start(enum gmt_view view, uint64_t max_rows)
{
	gmt_phases_hook_t hook;
	gmt_visitor_t v;
	P = gmt_phases_new("synthetic.gmt", NULL);
	C = gmt_curves_new(view, max_rows);
	CHECK(P && C);
	gmt_curves_hook(C, &hook);
	CHECK(hook.reset(hook.ctx) == 0);
	gmt_phases_set_hook(P, &hook);
	gmt_phases_visitor(P, &v);
	CHECK(v.string(v.ctx, 1, "gpumemtrace", 11) == 0);
	CHECK(v.string(v.ctx, 2, "step", 4) == 0);
}

/* gmt_levels_curve gives a row, and gmt_levels_keys the phase figures'
 * maxima, what gmt_levels_values gives them, in both views, on every
 * device, after every event. */
static void same_values(void)
{
	int devs[8];
	size_t n = gmt_phases_devices(P, devs, 8);
	for (size_t i = 0; i < n && i < 8; i++) {
		gmt_lv_keys_t k[GMT_VIEWS];
		gmt_levels_keys(gmt_phases_levels(P), devs[i], k);
		for (int w = 0; w < GMT_VIEWS; w++) {
			gmt_lv_vals_t v;
			gmt_levels_values(gmt_phases_levels(P), devs[i], (enum gmt_view)w, &v);
			CHECK_EQ_U64(k[w].allocated, v.allocated);
			CHECK_EQ_U64(k[w].reserved, v.reserved);
			CHECK_EQ_U64(k[w].outside, v.outside);
			CHECK_EQ_U64(k[w].held, v.held);
			CHECK_EQ_U64((uint64_t)k[w].gap, (uint64_t)v.gap);
			CHECK_EQ_U64((uint64_t)k[w].untraced, (uint64_t)v.untraced);
			CHECK_EQ_U64(k[w].has_allocated, v.has_allocated);
			CHECK_EQ_U64(k[w].has_reserved, v.has_reserved);
			CHECK_EQ_U64(k[w].has_used, v.has_used);
		}
	}
	for (size_t i = 0; i < n && i < 8; i++)
		for (int w = 0; w < GMT_VIEWS; w++) {
			gmt_lv_vals_t v;
			gmt_lv_curve_t c;
			gmt_levels_values(gmt_phases_levels(P), devs[i], (enum gmt_view)w, &v);
			gmt_levels_curve(gmt_phases_levels(P), devs[i], (enum gmt_view)w, &c);
			CHECK_EQ_U64(c.allocated, v.allocated);
			CHECK_EQ_U64(c.reserved, v.reserved);
			CHECK_EQ_U64(c.outside, v.outside);
			CHECK_EQ_U64(c.used, v.used);
			CHECK_EQ_U64(c.held, v.held);
			CHECK_EQ_U64(c.live, v.live);
			CHECK_EQ_U64(c.has_allocated, v.has_allocated);
			CHECK_EQ_U64(c.has_reserved, v.has_reserved);
			CHECK_EQ_U64(c.has_used, v.has_used);
		}
}

static void ev(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			   .thread = thread, .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(gmt_phases_event(P, &e) == 0);
	same_values();
}

static char *csv(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(gmt_phases_finish(P, NULL) == 0);
	CHECK(gmt_curves_finish(C) == 0);
	gmt_curves_csv(f, C, P, 0);
	fclose(f);
	gmt_curves_free(C);
	gmt_phases_free(P);
	return buf;
}

/* The same rows through the sink (every row as CSV as it is made, no
 * temporary rows); reset_first: a first pass of other events that the
 * second pass voids. */
static gmt_curves_csv_stream_t *W;

static void start_stream(enum gmt_view view)
{
	gmt_curves_sink_t sink;
	start(view, 0);
	W = gmt_curves_csv_stream_new(0);
	CHECK(W != NULL);
	gmt_curves_csv_stream_sink(W, &sink);
	gmt_curves_set_sink(C, &sink);
	gmt_phases_hook_t hook;
	gmt_curves_hook(C, &hook);
	CHECK(hook.reset(hook.ctx) == 0);
}

static char *csv_stream(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(gmt_phases_finish(P, NULL) == 0);
	CHECK(gmt_curves_finish(C) == 0);
	CHECK(gmt_curves_csv_stream_write(W, f, C, P) == 0);
	fclose(f);
	gmt_curves_csv_stream_free(W);
	gmt_curves_free(C);
	gmt_phases_free(P);
	return buf;
}

#define ASYNC GMT_AUX(GMT_KIND_ASYNC, 0, 0)
#define PLAIN GMT_AUX(GMT_KIND_PLAIN, 0, 0)

static void scenario(void)
{
	ev(GMT_EV_ALLOC, 100, 0, 0x1000, 10, 7, ASYNC);
	ev(GMT_EV_ALLOC, 100, 0, 0x2000, 20, 7, ASYNC);        /* same ts: one row */
	ev(GMT_EV_RANGE_BEGIN, 150, -1, 0, 0, GMT_RANGE_API, 2 | 1ull << 32);
	ev(GMT_EV_ALLOC, 200, 0, 0x3000, 5, 0, PLAIN);
	ev(GMT_EV_FREE, 300, 0, 0x1000, 0, 7, ASYNC);
	ev(GMT_EV_SYNC, 350, -1, 340, 0, 9, GMT_SYNC_STREAM);  /* another stream */
	ev(GMT_EV_SYNC, 400, -1, 390, 0, 7, GMT_SYNC_STREAM);
	ev(GMT_EV_ALLOC, 500, 0, 0x4000, 1000, 0, PLAIN);
	ev(GMT_EV_FREE, 500, 0, 0x4000, 0, 0, PLAIN);          /* gone at the same ts */
	ev(GMT_EV_RANGE_END, 600, -1, 0, 0, GMT_RANGE_API, 2 | 1ull << 32);
}

/* New driver allocations on a device with framework events wait for
 * their segment (docs/analyzer.md): while they wait only the bytes held by
 * live allocations (the last column) count them; a row when the 1 ms grace
 * runs out (1000100: no event there), a block its segment claims
 * (4000000) never counts as outside, and the thread's next event (the range
 * end at 5000500) resolves before the boundary. */
static void scenario_wait(void)
{
	ev(GMT_EV_FW_SEGMENT_ALLOC, 10, 0, 0x100000, 1000, 0, 0);
	ev(GMT_EV_ALLOC, 10, 0, 0x100000, 1000, 0, PLAIN);
	ev(GMT_EV_RANGE_BEGIN, 20, -1, 0, 0, GMT_RANGE_API, 2 | 1ull << 32);
	ev(GMT_EV_ALLOC, 100, 0, 0x200000, 50, 0, PLAIN);
	thread = 1;
	ev(GMT_EV_SYNC, 3000100, -1, 0, 0, 9, GMT_SYNC_STREAM);
	thread = 0;
	ev(GMT_EV_ALLOC, 4000000, 0, 0x300000, 70, 0, PLAIN);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 4000001, 0, 0x300000, 70, 0, 0);
	ev(GMT_EV_ALLOC, 5000000, 0, 0x400000, 30, 0, PLAIN);
	ev(GMT_EV_RANGE_END, 5000500, -1, 0, 0, GMT_RANGE_API, 2 | 1ull << 32);
}

/* Every source of allocated and reserved, for same_values: a pool's
 * reserve (below its live allocations too), device used, the framework's
 * blocks (requested and completed apart), on two devices; memory of
 * other owners (NCCL, cuBLAS) outside the framework. */
#define NCCL GMT_AUX(GMT_KIND_PLAIN, 0, GMT_OWNER_NCCL)
static void scenario_sources(void)
{
	ev(GMT_EV_ALLOC, 5, 0, 0x800000, 2048, 0, NCCL);
	ev(GMT_EV_ALLOC, 6, 1, 0x900000, 1024, 0, GMT_AUX(GMT_KIND_PLAIN, 0, GMT_OWNER_CUBLAS));
	ev(GMT_EV_MEMINFO, 10, 1, 900, 1000, 0, 0);
	ev(GMT_EV_ALLOC, 20, 1, 0x1000, 64, 7, ASYNC);
	ev(GMT_EV_POOL_RESERVED, 30, 1, 32, 32, 5, 0);     /* less than live */
	ev(GMT_EV_POOL_RESERVED, 40, 1, 128, 128, 5, 0);
	ev(GMT_EV_FREE, 50, 1, 0x1000, 0, 7, ASYNC);
	ev(GMT_EV_ALLOC, 60, 0, 0x100000, 4096, 0, PLAIN);
	ev(GMT_EV_FW_ALLOC, 70, 0, 0x100000, 512, 3, 1);
	ev(GMT_EV_FW_FREE_REQUESTED, 80, 0, 0x100000, 512, 3, 1);
	ev(GMT_EV_MEMINFO, 85, 0, 100, 8192, 0, 0);
	ev(GMT_EV_FW_FREE_COMPLETED, 90, 0, 0x100000, 512, 3, 1);
	ev(GMT_EV_FREE, 92, 0, 0x800000, 0, 0, NCCL);
	ev(GMT_EV_SYNC, 95, -1, 0, 0, 7, GMT_SYNC_STREAM);
}

/* Rows of more text than the sink keeps in memory (4 MiB: the rest wait
 * in the curves' file), a name to quote, and an event earlier than the
 * first (a LATE one): every time_s moves. */
static void scenario_long(void)
{
	gmt_visitor_t v;
	gmt_phases_visitor(P, &v);
	CHECK(v.string(v.ctx, 3, "a \"b\",\nc", 9) == 0);
	ev(GMT_EV_RANGE_BEGIN, 1000, -1, 0, 0, GMT_RANGE_API, 3 | 1ull << 32);
	for (uint64_t i = 0; i < 100000; i++)
		ev(GMT_EV_ALLOC, 2000 + i, 0, 0x100000 + 0x1000 * i, 100 + i, 0, PLAIN);
	ev(GMT_EV_RANGE_END, 400000, -1, 0, 0, GMT_RANGE_API, 3 | 1ull << 32);
	ev(GMT_EV_ALLOC, 400001, 0, 0x10, 10, 0, PLAIN);
	ev(GMT_EV_FREE, 500, 0, 0x10, 0, 0, PLAIN);             /* late */
}

/* 100,000 rows on one device, taken bytes up and down. */
static void scenario_many(void)
{
	uint64_t x = 1;
	for (uint64_t i = 0; i < 50000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ev(GMT_EV_ALLOC, 10 + 2 * i, 0, 0x1000 * (i + 1), 1 + (x >> 54), 0, PLAIN);
		if (i % 2)
			ev(GMT_EV_FREE, 11 + 2 * i, 0, 0x1000 * (i / 2 + 1), 0, 0, PLAIN);
		else
			ev(GMT_EV_ALLOC, 11 + 2 * i, 0, 0x100000000 + i, 1 + (x >> 60), 0, PLAIN);
	}
}

/* --max-rows n by its definition, from every row's CSV: per device (the
 * second field, below 8), ceil(rows / n) rows a bucket, each bucket's first
 * row with the most taken bytes (the tenth field), in file order. No
 * quoted field. */
static char *buckets_of(const char *all, uint64_t n)
{
	size_t rows = 0, per_dev[8] = { 0 }, seen[8] = { 0 };
	for (const char *p = all; *p; p = strchr(p, '\n') + 1) {
		per_dev[strtoul(strchr(p, ',') + 1, NULL, 10) & 7]++;
		rows++;
	}
	const char **line = calloc(rows, sizeof(*line));
	uint64_t *held = calloc(rows, sizeof(*held));
	size_t *slot = calloc(rows, sizeof(*slot)), *best = malloc(8 * (rows + 1) * sizeof(*best));
	memset(best, 0xff, 8 * (rows + 1) * sizeof(*best));
	size_t r = 0;
	for (const char *p = all; *p; p = strchr(p, '\n') + 1, r++) {
		const char *q = p;
		size_t dev = strtoul(strchr(p, ',') + 1, NULL, 10) & 7;
		line[r] = p;
		for (int f = 0; f < 9; f++)
			q = strchr(q, ',') + 1;
		held[r] = strtoull(q, NULL, 10);
		uint64_t per = per_dev[dev] <= n ? 1 : (per_dev[dev] + n - 1) / n;
		slot[r] = dev * (rows + 1) + seen[dev]++ / per;
		if (best[slot[r]] == SIZE_MAX || held[r] > held[best[slot[r]]])
			best[slot[r]] = r;
	}
	char *out = calloc(1, strlen(all) + 1), *o = out;
	for (r = 0; r < rows; r++) {
		if (best[slot[r]] != r)
			continue;
		size_t len = (size_t)(strchr(line[r], '\n') + 1 - line[r]);
		memcpy(o, line[r], len);
		o += len;
	}
	free(line);
	free(held);
	free(slot);
	free(best);
	return out;
}

/* Taken bytes down for 40,000 rows (more than a device's candidates and
 * the rows that wait: 16,384 each), then up and down on two devices. */
static void scenario_down(void)
{
	uint64_t x = 7;
	for (uint64_t i = 0; i < 40000; i++)
		ev(GMT_EV_ALLOC, 10, 0, 0x1000 * (i + 1), 1 + i % 13, 0, PLAIN);
	for (uint64_t i = 0; i < 40000; i++)
		ev(GMT_EV_FREE, 20 + i, 0, 0x1000 * (i + 1), 0, 0, PLAIN);
	for (uint64_t i = 0; i < 30000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int dev = (int)(x >> 63);
		uint64_t addr = 0x100000000ull * (uint64_t)(dev + 1) + 0x1000 * (i / 2);
		if (i % 4 < 2)
			ev(GMT_EV_ALLOC, 100000 + i, dev, addr, 1 + (x >> 50), 0, PLAIN);
		else
			ev(GMT_EV_FREE, 100000 + i, dev, addr - 0x1000, 0, 0, PLAIN);
	}
}

/* A second pass of the time line (gmt_timeline.h): a new engine, the
 * curves' hook reset, what the first pass made void. */
static void second_pass(void)
{
	gmt_phases_hook_t hook;
	gmt_curves_hook(C, &hook);
	gmt_phases_free(P);
	P = gmt_phases_new("synthetic.gmt", NULL);
	CHECK(P != NULL);
	gmt_phases_set_hook(P, &hook);
	gmt_visitor_t v;
	gmt_phases_visitor(P, &v);
	CHECK(v.string(v.ctx, 1, "gpumemtrace", 11) == 0);
	CHECK(v.string(v.ctx, 2, "step", 4) == 0);
	CHECK(hook.reset(hook.ctx) == 0);
}

/* The file f's bytes. */
static char *file_text(FILE *f)
{
	CHECK(fflush(f) == 0);
	long n = ftell(f);
	CHECK(n >= 0);
	char *buf = calloc(1, (size_t)n + 1);
	CHECK(buf != NULL);
	rewind(f);
	CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
	return buf;
}

/* The sink written through to a regular file (what `curves` does when its
 * output is one): the text as the rows are made, a second pass taking the
 * file back to where the rows began, and a first time that moved (a LATE
 * event) running the scenario again with the first time known. */
static char *csv_direct(void (*scenario_fn)(void), enum gmt_view view, int reset_first)
{
	FILE *f = tmpfile();
	CHECK(f != NULL);
	fputs("before\n", f);   /* what the file held: kept */
	uint64_t first = 0;
	for (int again = 0; again < 2; again++) {
		start_stream(view);
		CHECK(gmt_curves_csv_stream_direct(W, f, 1) == 0);
		if (again)
			gmt_curves_csv_stream_first(W, first);
		if (reset_first) {
			scenario_fn();
			second_pass();
		}
		scenario_fn();
		CHECK(gmt_phases_finish(P, NULL) == 0);
		int a = gmt_curves_csv_stream_again(W, P, &first);
		CHECK(a == 0 || (a == 1 && !again));
		if (!a) {
			CHECK(gmt_curves_finish(C) == 0);
			CHECK(gmt_curves_csv_stream_write(W, f, C, P) == 0);
		}
		gmt_curves_csv_stream_free(W);
		gmt_curves_free(C);
		gmt_phases_free(P);
		if (!a)
			break;
	}
	char *all = file_text(f);
	fclose(f);
	CHECK(!strncmp(all, "before\n", 7));
	char *rows = strdup(all + 7);
	free(all);
	return rows;
}

/* Each scenario gives the same CSV every way. */
static void both_ways(void (*scenario_fn)(void), enum gmt_view view, int reset_first)
{
	start(view, 0);
	scenario_fn();
	char *a = csv();
	start_stream(view);
	if (reset_first) {
		scenario_fn();
		second_pass();
	}
	scenario_fn();
	char *b = csv_stream();
	CHECK(strlen(a) > 0);
	CHECK_EQ_STR(a, b);
	char *d = csv_direct(scenario_fn, view, reset_first);
	CHECK_EQ_STR(a, d);
	free(a);
	free(b);
	free(d);
}

int main(void)
{
	char *s;
	for (int w = 0; w < GMT_VIEWS; w++)
		for (int r = 0; r < 2; r++) {
			both_ways(scenario, (enum gmt_view)w, r);
			both_ways(scenario_wait, (enum gmt_view)w, r);
			both_ways(scenario_sources, (enum gmt_view)w, r);
		}
	/* --max-rows, its rows kept in memory (60000 slots) or read again
	 * (70000: more than 65536) */
	start(GMT_VIEW_REQUESTED, 0);
	scenario_many();
	char *all = csv();
	static const uint64_t ns[] = { 1000, 60000, 70000, 99999 };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		start(GMT_VIEW_REQUESTED, ns[i]);
		scenario_many();
		char *got = csv(), *want = buckets_of(all, ns[i]);
		CHECK_EQ_STR(want, got);
		free(got);
		free(want);
	}
	free(all);
	start(GMT_VIEW_REQUESTED, 0);
	scenario_down();
	all = csv();
	static const uint64_t nd[] = { 1, 7, 1000, 20000 };
	for (size_t i = 0; i < sizeof(nd) / sizeof(nd[0]); i++) {
		start(GMT_VIEW_REQUESTED, nd[i]);
		scenario_down();
		char *got = csv(), *want = buckets_of(all, nd[i]);
		CHECK_EQ_STR(want, got);
		free(got);
		free(want);
	}
	free(all);
	both_ways(scenario_long, GMT_VIEW_REQUESTED, 0);
	both_ways(scenario_long, GMT_VIEW_HELD, 1);
	start(GMT_VIEW_HELD, 0);
	scenario_sources();
	free(csv());
	start(GMT_VIEW_REQUESTED, 0);
	scenario();
	s = csv();
	CHECK_EQ_STR("0,0,100,0.000000000,,30,,0,,30,30\n"
		     "0,0,150,0.000000050,step,30,,0,,30,30\n"
		     "0,0,200,0.000000100,step,30,,5,,35,35\n"
		     "0,0,300,0.000000200,step,20,,5,,25,25\n"
		     "0,0,600,0.000000500,,20,,5,,25,25\n", s);
	free(s);

	start(GMT_VIEW_HELD, 0);
	scenario();
	s = csv();
	/* held by live allocations keeps the waiting free too (35 at 300) */
	CHECK_EQ_STR("0,0,100,0.000000000,,30,,0,,30,30\n"
		     "0,0,150,0.000000050,step,30,,0,,30,30\n"
		     "0,0,200,0.000000100,step,30,,5,,35,35\n"
		     "0,0,400,0.000000300,step,20,,5,,25,25\n"
		     "0,0,600,0.000000500,,20,,5,,25,25\n", s);
	free(s);

	/* 5 rows, 2 buckets of 3 and 2: the first row with the most held */
	start(GMT_VIEW_REQUESTED, 2);
	scenario();
	s = csv();
	CHECK_EQ_STR("0,0,200,0.000000100,step,30,,5,,35,35\n"
		     "0,0,300,0.000000200,step,20,,5,,25,25\n", s);
	free(s);

	start(GMT_VIEW_REQUESTED, 0);
	scenario_wait();
	s = csv();
	CHECK_EQ_STR("0,0,10,0.000000000,,0,1000,0,,1000,1000\n"
		     "0,0,20,0.000000010,step,0,1000,0,,1000,1000\n"
		     "0,0,100,0.000000090,step,0,1000,0,,1000,1050\n"
		     "0,0,1000100,0.001000090,step,0,1000,50,,1050,1050\n"
		     "0,0,4000000,0.003999990,step,0,1000,50,,1050,1120\n"
		     "0,0,4000001,0.003999991,step,0,1070,50,,1120,1120\n"
		     "0,0,5000000,0.004999990,step,0,1070,50,,1120,1150\n"
		     "0,0,5000500,0.005000490,,0,1070,80,,1150,1150\n", s);
	free(s);
	TEST_DONE();
}
