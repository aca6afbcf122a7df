/*
 * unit_phases.c - the phase engine (analyzer/engines/gmt_phase_engine.c) and the levels
 * under it (analyzer/engines/gmt_levels.c) fed synthetic events directly; every
 * number is known by construction.
 */
#include "engines/gmt_phase_engine.h"
#include "render/gmt_render.h"
#include "gmt_test.h"

static gmt_phases_t *P;
static gmt_visitor_t V;
static uint32_t thread;

static void start(const gmt_phase_opts_t *o)
{
	P = gmt_phases_new("synthetic.gmt", o);
	CHECK(P != NULL);
	gmt_phases_visitor(P, &V);
	thread = 0;
}

static void str(uint32_t id, const char *text)
{
	CHECK(V.string(V.ctx, id, text, strlen(text)) == 0);
}

static void ev(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			   .thread = thread, .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(gmt_phases_event(P, &e) == 0);
}

/* The same, from the side stream. */
static void ev_side(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size,
		    uint64_t stream, uint64_t aux)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			   .thread = thread, .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(gmt_phases_event_from(P, &e, 1) == 0);
}

static void begin(uint64_t ts, unsigned source, uint64_t id, uint64_t depth, uint32_t name, uint32_t dom)
{
	ev(GMT_EV_RANGE_BEGIN, ts, -1, id, depth, source, name | (uint64_t)dom << 32);
}

static void end(uint64_t ts, unsigned source, uint64_t id, uint64_t depth, uint32_t name, uint32_t dom)
{
	ev(GMT_EV_RANGE_END, ts, -1, id, depth, source, name | (uint64_t)dom << 32);
}

static gmt_lv_vals_t val(int dev, enum gmt_view w)
{
	gmt_lv_vals_t v;
	gmt_levels_values(gmt_phases_levels(P), dev, w, &v);
	return v;
}

static const gmt_phase_name_t *name(const char *text)
{
	size_t n;
	const gmt_phase_name_t *names = gmt_phases_names(P, &n);
	for (size_t i = 0; i < n; i++) {
		const char *s = gmt_phases_string(P, names[i].name_id);
		if (s && !strcmp(s, text))
			return &names[i];
	}
	return NULL;
}

#define PLAIN GMT_AUX(GMT_KIND_PLAIN, 0, GMT_OWNER_APP)
#define ASYNC GMT_AUX(GMT_KIND_ASYNC, 0, GMT_OWNER_APP)
#define NCCLV GMT_AUX(GMT_KIND_VMM, 0, GMT_OWNER_NCCL)

/* Containment both ways: a driver allocation that comes before its
 * segment, one after, an expandable segment (VMM pages mapped inside
 * FW_SEGMENT_MAP ranges), a partial unmap that leaves one page outside. */
static void test_containment(void)
{
	start(NULL);
	ev(GMT_EV_ALLOC, 10, 0, 0x10000, 4096, 0, PLAIN);           /* cudaMalloc first */
	CHECK_EQ_U64(4096, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK(!val(0, GMT_VIEW_REQUESTED).has_reserved);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 20, 0, 0x10000, 4096, 0, 0);    /* then the segment */
	gmt_lv_vals_t v = val(0, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(0, v.outside);
	CHECK_EQ_U64(4096, v.reserved);
	CHECK_EQ_U64(GMT_RSRC_SEGMENTS, v.rsrc);
	CHECK_EQ_U64(GMT_ASRC_FRAMEWORK, v.asrc);
	CHECK_EQ_U64(0, v.allocated);
	CHECK_EQ_U64(4096, v.held);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 30, 0, 0x20000, 8192, 0, 0);    /* segment first */
	ev(GMT_EV_ALLOC, 31, 0, 0x20000, 8192, 0, PLAIN);
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(12288, val(0, GMT_VIEW_REQUESTED).reserved);
	ev(GMT_EV_ALLOC, 32, 0, 0x30000, 100, 0, PLAIN);            /* nowhere near */
	/* the device has framework events: the new block waits for a segment
	 * until its thread's next event (40) */
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).pending);
	CHECK_EQ_U64(12288, val(0, GMT_VIEW_REQUESTED).held);
	/* a segment freed before its cudaFree: outside for that moment */
	ev(GMT_EV_FW_SEGMENT_FREE, 40, 0, 0x20000, 8192, 0, 0);
	CHECK_EQ_U64(8292, val(0, GMT_VIEW_REQUESTED).outside);
	ev(GMT_EV_FREE, 41, 0, 0x20000, 0, 0, PLAIN);
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).outside);

	/* expandable segment: two 2 MiB pages mapped side by side, one
	 * SEGMENT_MAP covering both (the union is what contains them) */
	ev(GMT_EV_VMM_CREATE, 50, 0, 0xA1, 2 << 20, 0, GMT_AUX(GMT_KIND_VMM, 0, 0));
	ev(GMT_EV_VMM_CREATE, 50, 0, 0xA2, 2 << 20, 0, GMT_AUX(GMT_KIND_VMM, 0, 0));
	ev(GMT_EV_VMM_MAP, 51, -1, 0x7000000, 2 << 20, 0xA1, 0);
	ev(GMT_EV_VMM_MAP, 51, -1, 0x7200000, 2 << 20, 0xA2, 0);
	/* both handles wait (creating and mapping are steps of one VMM
	 * allocation, not the thread moving on) */
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(4 << 20, val(0, GMT_VIEW_REQUESTED).pending);
	ev(GMT_EV_FW_SEGMENT_MAP, 52, 0, 0x7000000, 2 << 20, 0, 0);
	/* the first page is claimed; the same thread's segment event ends the
	 * second page's wait: outside until its own SEGMENT_MAP */
	CHECK_EQ_U64(100 + (2 << 20), val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).pending);
	ev(GMT_EV_FW_SEGMENT_MAP, 53, 0, 0x7200000, 2 << 20, 0, 0);
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(4096 + (4 << 20), val(0, GMT_VIEW_REQUESTED).reserved);
	/* the framework unmaps the second page; the driver still has it */
	ev(GMT_EV_FW_SEGMENT_UNMAP, 60, 0, 0x7200000, 2 << 20, 0, 0);
	CHECK_EQ_U64(100 + (2 << 20), val(0, GMT_VIEW_REQUESTED).outside);
	ev(GMT_EV_VMM_UNMAP, 61, -1, 0x7200000, 2 << 20, 0, 0);
	ev(GMT_EV_VMM_RELEASE, 61, 0, 0xA2, 0, 0, 0);
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).outside);
	/* NCCL memory is outside, by owner, once its thread moves on (an
	 * event of another thread does not count) */
	ev(GMT_EV_VMM_CREATE, 70, 0, 0xB1, 1 << 20, 0, NCCLV);
	thread = 1;
	ev(GMT_EV_SYNC, 71, -1, 70, 0, 0x5, GMT_SYNC_STREAM);
	CHECK_EQ_U64(100, val(0, GMT_VIEW_REQUESTED).outside);
	thread = 0;
	ev(GMT_EV_SYNC, 72, -1, 70, 0, 0x5, GMT_SYNC_STREAM);
	v = val(0, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(100 + (1 << 20), v.outside);
	CHECK_EQ_U64(1 << 20, v.outside_owner[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(100, v.outside_owner[GMT_OWNER_APP]);
	CHECK(gmt_phases_finish(P, NULL) == 0);

	gmt_lv_dev_info_t info;
	CHECK(gmt_levels_dev_info(gmt_phases_levels(P), 0, &info) == 0);
	/* never inside: the 100-byte block and the NCCL handle; the freed
	 * 8192 block and the second page were inside for a while: not listed */
	CHECK_EQ_U64(1, info.outliers[GMT_OWNER_APP]);
	CHECK_EQ_U64(1, info.outliers[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(2, info.outliers_total);
	CHECK_EQ_U64(2, info.n_top);
	if (info.n_top == 2) {
		CHECK_EQ_U64(1 << 20, info.top[0].size);
		CHECK_EQ_U64(1, info.top[0].is_handle);
		CHECK_EQ_U64(70, info.top[0].ts);
		CHECK_EQ_U64(100, info.top[1].size);
		CHECK_EQ_U64(0x30000, info.top[1].addr);
		CHECK_EQ_U64(0, info.top[1].freed_ts);
	}
	gmt_phases_free(P);
}

/* Requested versus held: stream-ordered frees wait for a sync covering
 * their stream; the framework's frees for FREE_COMPLETED. */
static void test_views(void)
{
	start(NULL);
	ev(GMT_EV_ALLOC, 10, 1, 0x1000, 100, 0x51, ASYNC);
	ev(GMT_EV_ALLOC, 11, 1, 0x2000, 200, 0x52, ASYNC);
	ev(GMT_EV_ALLOC, 12, 1, 0x3000, 1000, 0, PLAIN);
	gmt_lv_vals_t r = val(1, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(GMT_ASRC_STREAM, r.asrc);
	CHECK_EQ_U64(300, r.allocated);
	CHECK_EQ_U64(1000, r.outside);      /* stream-ordered bytes are the allocator's */
	CHECK(!r.has_reserved);
	CHECK_EQ_U64(1300, r.held);         /* no reserved known: allocated stands in */
	ev(GMT_EV_POOL_RESERVED, 13, 1, 4096, 4096, 0x900, 0);
	CHECK_EQ_U64(4096, val(1, GMT_VIEW_REQUESTED).reserved);
	CHECK_EQ_U64(GMT_RSRC_POOL, val(1, GMT_VIEW_REQUESTED).rsrc);
	CHECK_EQ_U64(5096, val(1, GMT_VIEW_REQUESTED).held);
	ev(GMT_EV_FREE, 20, 1, 0x1000, 0, 0x51, ASYNC);
	ev(GMT_EV_FREE, 21, 1, 0x2000, 0, 0x52, ASYNC);
	CHECK_EQ_U64(0, val(1, GMT_VIEW_REQUESTED).allocated);
	CHECK_EQ_U64(300, val(1, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_SYNC, 30, 1, 25, 0, 0x77, GMT_SYNC_EVENT);         /* covers nothing */
	ev(GMT_EV_SYNC, 31, 1, 25, 0, 0x51, GMT_SYNC_STREAM | (1ull << 32)); /* failed */
	CHECK_EQ_U64(300, val(1, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_SYNC, 32, 1, 25, 0, 0x51, GMT_SYNC_STREAM);
	CHECK_EQ_U64(200, val(1, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_SYNC, 33, -1, 25, 0, 0, GMT_SYNC_CTX);
	CHECK_EQ_U64(0, val(1, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_ALLOC, 40, 1, 0x4000, 50, 0x53, ASYNC);
	ev(GMT_EV_FREE, 41, 1, 0x4000, 0, 0x53, ASYNC);
	CHECK_EQ_U64(50, val(1, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_POOL_TRIM, 42, 1, 0, 0, 0x900, 0);
	CHECK_EQ_U64(0, val(1, GMT_VIEW_HELD).allocated);

	/* the framework's own view on device 0 */
	ev(GMT_EV_FW_ALLOC, 50, 0, 0x9000, 512, 0x51, 0);
	ev(GMT_EV_FW_ALLOC, 51, 0, 0x9200, 256, 0x52, 0);
	ev(GMT_EV_FW_FREE_REQUESTED, 52, 0, 0x9000, 512, 0x51, 0);
	CHECK_EQ_U64(256, val(0, GMT_VIEW_REQUESTED).allocated);
	CHECK_EQ_U64(768, val(0, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_FW_FREE_COMPLETED, 53, 0, 0x9200, 256, 0x52, 0);   /* no request seen */
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).allocated);
	CHECK_EQ_U64(512, val(0, GMT_VIEW_HELD).allocated);
	ev(GMT_EV_FW_FREE_COMPLETED, 54, 0, 0x9000, 512, 0x51, 0);
	CHECK_EQ_U64(0, val(0, GMT_VIEW_HELD).allocated);
	CHECK(!val(0, GMT_VIEW_HELD).has_reserved);                  /* no segment events */
	ev(GMT_EV_FW_FREE_REQUESTED, 55, 0, 0x9999, 1, 0, 0);        /* unknown block */
	CHECK(gmt_phases_finish(P, NULL) == 0);
	gmt_lv_dev_info_t info;
	CHECK(gmt_levels_dev_info(gmt_phases_levels(P), 0, &info) == 0);
	CHECK_EQ_U64(1, info.fw_anomalies);
	/* device 1's outside list: the plain block only (stream-ordered blocks
	 * are the allocator's there) */
	CHECK(gmt_levels_dev_info(gmt_phases_levels(P), 1, &info) == 0);
	CHECK_EQ_U64(1, info.outliers[GMT_OWNER_APP]);
	gmt_phases_free(P);
}

/* Pairing and selection. Strings: 1 "gpumemtrace", 2 "phase", 3 "op",
 * 4 "mylib", 5 "io", 6 "x", 7 "y", 8 "other". */
static void strings(void)
{
	str(1, "gpumemtrace");
	str(2, "phase");
	str(3, "op");
	str(4, "mylib");
	str(5, "io");
	str(6, "x");
	str(7, "y");
	str(8, "other");
}

static void scenario_ranges(void)
{
	strings();
	begin(10, GMT_RANGE_API, 0, 0, 2, 1);                    /* phase */
	begin(11, GMT_RANGE_NVTX_PUSHPOP, 0, 1, 3, 0);           /* op: nested default */
	end(12, GMT_RANGE_NVTX_PUSHPOP, 0, 1, 0, 0);             /* closes op */
	begin(13, GMT_RANGE_NVTX_PUSHPOP, 0, 1, 5, 4);           /* io in mylib */
	end(14, GMT_RANGE_NVTX_PUSHPOP, 0, 1, 0, 4);
	begin(15, GMT_RANGE_NVTX_STARTEND, 1, 0, 6, 0);          /* x, id 1 */
	begin(16, GMT_RANGE_NVTX_STARTEND, 2, 0, 7, 0);          /* y, id 2 */
	end(17, GMT_RANGE_NVTX_STARTEND, 1, 0, 0, 0);            /* x ends first */
	end(18, GMT_RANGE_API, 0, 0, 8, 1);                      /* names "other": mismatch, closes phase */
	end(19, GMT_RANGE_NVTX_STARTEND, 2, 0, 0, 0);
	end(20, GMT_RANGE_NVTX_PUSHPOP, 0, 0, 0, 0);             /* nothing open */
	end(21, GMT_RANGE_NVTX_STARTEND, 9, 0, 0, 0);            /* unknown id */
	thread = 3;
	begin(22, GMT_RANGE_NVTX_PUSHPOP, 0, 0, 3, 0);           /* op at depth 0 on thread 3 */
	end(23, GMT_RANGE_NVTX_PUSHPOP, 0, 0, 0, 0);
	CHECK(gmt_phases_finish(P, NULL) == 0);
}

/* A name the tracer wrote by value comes under a new id at each use: ids
 * of the same text are one phase (and a text seen once is its own). */
static void test_names_by_value(void)
{
	start(NULL);
	str(1, "gpumemtrace");
	str(2, "dup");
	begin(10, GMT_RANGE_API, 0, 0, 2, 1);
	str(3, "dup");
	end(11, GMT_RANGE_API, 0, 0, 3, 1);      /* names it by its second id */
	str(4, "dup");
	begin(12, GMT_RANGE_API, 0, 0, 4, 1);
	str(5, "dupe");
	end(13, GMT_RANGE_API, 0, 0, 5, 1);      /* another text: a mismatch */
	str(6, "dupe");
	begin(14, GMT_RANGE_API, 0, 0, 6, 1);
	end(15, GMT_RANGE_API, 0, 0, 0, 1);
	CHECK(gmt_phases_finish(P, NULL) == 0);
	size_t n;
	gmt_phases_names(P, &n);
	CHECK_EQ_U64(2, n);
	CHECK(name("dup") && name("dup")->occurrences == 2);
	CHECK(name("dupe") && name("dupe")->occurrences == 1);
	CHECK_EQ_U64(1, gmt_phases_anomalies(P)->name_mismatches);
	gmt_phases_free(P);
}

static void test_pairing_selection(void)
{
	start(NULL);
	scenario_ranges();
	size_t n;
	gmt_phases_names(P, &n);
	CHECK_EQ_U64(4, n);                         /* phase, x, y, op (depth 0) */
	const gmt_phase_name_t *p = name("phase");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(1, p->n_listed);
		CHECK_EQ_U64(10, p->listed[0]->begin_ts);
		CHECK_EQ_U64(18, p->listed[0]->end_ts);
		CHECK_EQ_U64(1, p->listed[0]->ended);
	}
	CHECK(name("x") && name("x")->listed[0]->end_ts == 17);
	CHECK(name("y") && name("y")->listed[0]->end_ts == 19);
	CHECK(name("io") == NULL);
	const gmt_phase_name_t *op = name("op");
	CHECK(op && op->occurrences == 1 && op->listed[0]->thread == 3);
	const gmt_phase_anomalies_t *a = gmt_phases_anomalies(P);
	CHECK_EQ_U64(1, a->name_mismatches);
	CHECK_EQ_U64(2, a->unmatched_ends);
	gmt_phases_free(P);

	/* --domain selects: the default set named, plus mylib */
	const char *doms[] = { "mylib", "gpumemtrace", "default" };
	gmt_phase_opts_t o = { .domains = doms, .n_domains = 3, .all_depths = 1 };
	start(&o);
	scenario_ranges();
	CHECK(name("io") != NULL);
	CHECK(name("op") && name("op")->occurrences == 2);
	gmt_phases_names(P, &n);
	CHECK_EQ_U64(5, n);
	gmt_phases_free(P);

	/* mylib alone: only io */
	o.n_domains = 1;
	start(&o);
	scenario_ranges();
	gmt_phases_names(P, &n);
	CHECK_EQ_U64(1, n);
	CHECK(name("io") != NULL && name("phase") == NULL && name("op") == NULL);
	gmt_phases_free(P);

	const char *star[] = { "*" };
	const char *pat[] = { "[xi]*" };
	gmt_phase_opts_t o2 = { .domains = star, .n_domains = 1, .patterns = pat, .n_patterns = 1 };
	start(&o2);
	scenario_ranges();
	gmt_phases_names(P, &n);
	CHECK_EQ_U64(2, n);                         /* io (any named domain), x */
	CHECK(name("io") != NULL && name("x") != NULL);
	gmt_phases_free(P);
}

/* Coinciding values, same-ts collapse, failure, unterminated, warm
 * aggregate. */
static void test_figures(void)
{
	start(NULL);
	str(2, "step");
	str(1, "gpumemtrace");
	ev(GMT_EV_FW_SEGMENT_ALLOC, 1, 0, 0x100000, 1000, 0, 0);
	ev(GMT_EV_ALLOC, 1, 0, 0x100000, 1000, 0, PLAIN);

	/* occurrence 1 */
	begin(10, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_FW_ALLOC, 11, 0, 0x100000, 600, 0, 0);           /* allocated 600 */
	ev(GMT_EV_FW_FREE_REQUESTED, 12, 0, 0x100000, 600, 0, 0);
	ev(GMT_EV_FW_FREE_COMPLETED, 12, 0, 0x100000, 600, 0, 0);
	ev(GMT_EV_ALLOC, 13, 0, 0x900000, 300, 0, PLAIN);          /* outside 300 */
	/* at ts 14: a 5000-byte block comes and goes: no instant holds it */
	ev(GMT_EV_ALLOC, 14, 0, 0xA00000, 5000, 0, PLAIN);
	ev(GMT_EV_FREE, 14, 0, 0xA00000, 0, 0, PLAIN);
	ev(GMT_EV_FREE, 15, 0, 0x900000, 0, 0, PLAIN);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 16, 0, 0x200000, 500, 0, 0);   /* reserved 1500 */
	ev(GMT_EV_ALLOC, 16, 0, 0x200000, 500, 0, PLAIN);
	end(20, GMT_RANGE_API, 0, 0, 2, 1);

	/* occurrence 2: fails */
	begin(30, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_FW_ALLOC, 31, 0, 0x100000, 900, 0, 0);
	ev(GMT_EV_ALLOC_FAIL, 32, 0, 0, 1 << 30, 0, GMT_AUX_WITH_RESULT(PLAIN, 2));
	ev(GMT_EV_FW_FREE_REQUESTED, 33, 0, 0x100000, 900, 0, 0);
	end(40, GMT_RANGE_API, 0, 0, 2, 1);

	/* occurrence 3: never ends */
	begin(50, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_MEMINFO, 55, 0, 10000 - 4000, 10000, 0, 0);      /* used 4000 */
	ev(GMT_EV_FW_ALLOC, 60, 0, 0x100000, 100, 0, 0);
	CHECK(gmt_phases_finish(P, NULL) == 0);

	const gmt_phase_name_t *s = name("step");
	CHECK(s != NULL);
	if (!s || s->n_listed != 3)
		return;
	const gmt_pfig_t *f = &s->listed[0]->dev[0].fig[GMT_VIEW_REQUESTED];
	CHECK_EQ_U64(600, f->max_alloc.v.allocated);
	CHECK_EQ_U64(11, f->max_alloc.ts);
	CHECK_EQ_U64(1000, f->max_alloc.v.reserved);
	CHECK_EQ_U64(0, f->max_alloc.v.outside);
	CHECK_EQ_U64(1500, f->max_res.v.reserved);
	CHECK_EQ_U64(16, f->max_res.ts);
	CHECK_EQ_U64(1500, f->max_held.v.held);                    /* not 1000 + 5300 */
	CHECK_EQ_U64(16, f->max_held.ts);
	CHECK_EQ_U64(300, f->max_outside.v.outside);               /* not 5300 */
	/* the 300-byte block waited for a segment until its thread's next
	 * event (14); the 5000-byte one was gone by then */
	CHECK_EQ_U64(14, f->max_outside.ts);
	CHECK_EQ_U64(1500, f->max_gap.v.reserved - f->max_gap.v.allocated);
	CHECK_EQ_U64(1500, f->max_gap.v.gap);
	CHECK_EQ_U64(1000, f->start.reserved);
	CHECK_EQ_U64(1500, f->end.reserved);
	CHECK(!s->listed[0]->failed);
	/* the bounds, derived once in the model: 1500 + 300 = 1800 > 1500;
	 * 1500 - 600 = 900 < 1500 */
	CHECK_EQ_U64(1, f->has_bound_sum);
	CHECK_EQ_U64(1800, f->bound_sum);
	CHECK_EQ_U64(1, f->has_bound_diff);
	CHECK_EQ_U64(900, (uint64_t)f->bound_diff);
	CHECK_EQ_U64(s->listed[0]->end_ts - s->listed[0]->begin_ts, s->listed[0]->duration_ns);
	CHECK_EQ_U64(0, s->not_listed);

	const gmt_occ_t *o2 = s->listed[1];
	CHECK_EQ_U64(1, o2->failed);
	CHECK_EQ_U64(32, o2->fail_ts);
	CHECK_EQ_U64(1u << 30, o2->fail_size);
	CHECK_EQ_U64(GMT_EV_ALLOC_FAIL, o2->fail_type);
	CHECK_EQ_U64(900, o2->dev[0].fig[GMT_VIEW_REQUESTED].at_fail.allocated);
	CHECK_EQ_U64(0, o2->dev[0].fig[GMT_VIEW_REQUESTED].end.allocated);
	CHECK_EQ_U64(900, o2->dev[0].fig[GMT_VIEW_HELD].end.allocated);

	const gmt_occ_t *o3 = s->listed[2];
	CHECK_EQ_U64(0, o3->ended);
	CHECK_EQ_U64(60, o3->end_ts);
	/* the 900-byte block was never completed: handing its address out
	 * again replaces it (a framework anomaly) */
	CHECK_EQ_U64(100, o3->dev[0].fig[GMT_VIEW_REQUESTED].end.allocated);
	CHECK_EQ_U64(100, o3->dev[0].fig[GMT_VIEW_HELD].end.allocated);
	CHECK_EQ_U64(4000, o3->dev[0].fig[GMT_VIEW_REQUESTED].end.used);
	/* untraced at the sample (ts 55): used 4000 - held (1500 + 0) */
	CHECK_EQ_U64(2500, (uint64_t)o3->dev[0].fig[GMT_VIEW_REQUESTED].end.untraced);
	CHECK_EQ_U64(1, s->failed);
	CHECK_EQ_U64(1, s->unterminated);
	CHECK_EQ_U64(2, s->n_warm);
	const gmt_pfig_t *w = &s->warm->dev[0].fig[GMT_VIEW_REQUESTED];
	CHECK_EQ_U64(900, w->max_alloc.v.allocated);
	CHECK_EQ_U64(2, w->max_alloc.occ);
	CHECK_EQ_U64(100, w->end.allocated);                       /* per-field max */
	CHECK_EQ_U64(900, s->warm->dev[0].fig[GMT_VIEW_HELD].end.allocated);
	gmt_lv_dev_info_t info;
	CHECK(gmt_levels_dev_info(gmt_phases_levels(P), 0, &info) == 0);
	CHECK_EQ_U64(1, info.fw_anomalies);
	gmt_phases_free(P);
}

/* New driver allocations wait for their segment (docs/analyzer.md, "New
 * allocations wait"). Occurrences of "step": 1 a cudaMalloc claimed by the
 * segment reported after it; 2 one that nothing claims, outside at its
 * thread's next main-stream event; 3 outside when its 1 ms grace runs out;
 * 4 an expandable segment's pages; 5 still waiting at the end. */
static const gmt_pfig_t *occ_fig(const gmt_phase_name_t *s, size_t k)
{
	return &s->listed[k]->dev[0].fig[GMT_VIEW_REQUESTED];
}

static void test_new_allocations_wait(void)
{
	start(NULL);
	str(2, "step");
	str(1, "gpumemtrace");
	ev(GMT_EV_FW_SEGMENT_ALLOC, 1, 0, 0x100000, 1000, 0, 0);
	ev(GMT_EV_ALLOC, 1, 0, 0x100000, 1000, 0, PLAIN);

	/* 1: cudaMalloc, then the framework reports the segment: the bytes
	 * are never outside (before the rule: outside 4096 at 20) */
	begin(10, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_ALLOC, 20, 0, 0x200000, 4096, 0, PLAIN);
	gmt_lv_vals_t v = val(0, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(0, v.outside);
	CHECK_EQ_U64(4096, v.pending);
	CHECK_EQ_U64(1000, v.reserved);
	CHECK_EQ_U64(1000, v.held);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 21, 0, 0x200000, 4096, 0, 0);
	v = val(0, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(0, v.outside);
	CHECK_EQ_U64(0, v.pending);
	CHECK_EQ_U64(5096, v.held);
	end(30, GMT_RANGE_API, 0, 0, 2, 1);

	/* 2: nothing claims it; another thread's event and a side-stream
	 * event of its thread do not end the wait, its thread's next
	 * main-stream event does */
	begin(40, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_ALLOC, 50, 0, 0x300000, 500, 0, PLAIN);
	thread = 1;
	ev(GMT_EV_SYNC, 51, -1, 50, 0, 0x9, GMT_SYNC_STREAM);
	thread = 0;
	ev_side(GMT_EV_FW_ALLOC, 52, 0, 0x100000, 100, 0, 0);
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).outside);
	ev(GMT_EV_SYNC, 53, -1, 50, 0, 0x9, GMT_SYNC_STREAM);
	CHECK_EQ_U64(500, val(0, GMT_VIEW_REQUESTED).outside);
	end(60, GMT_RANGE_API, 0, 0, 2, 1);

	/* 3: its thread records nothing else: outside at 200 + 1 ms, an
	 * instant of its own (the next event is at 200 + 3 ms) */
	begin(100, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_ALLOC, 200, 0, 0x400000, 700, 0, PLAIN);
	thread = 1;
	ev(GMT_EV_SYNC, 200 + 500000, -1, 0, 0, 0x9, GMT_SYNC_STREAM);
	CHECK_EQ_U64(500, val(0, GMT_VIEW_REQUESTED).outside);
	ev(GMT_EV_SYNC, 200 + 3000000, -1, 0, 0, 0x9, GMT_SYNC_STREAM);
	CHECK_EQ_U64(1200, val(0, GMT_VIEW_REQUESTED).outside);
	thread = 0;
	end(200 + 4000000, GMT_RANGE_API, 0, 0, 2, 1);

	/* 4: expandable segment: create, create, map, map, then one
	 * FW_SEGMENT_MAP of both pages */
	begin(5000000, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_VMM_CREATE, 5000010, 0, 0xC1, 2 << 20, 0, GMT_AUX(GMT_KIND_VMM, 0, 0));
	ev(GMT_EV_VMM_CREATE, 5000010, 0, 0xC2, 2 << 20, 0, GMT_AUX(GMT_KIND_VMM, 0, 0));
	ev(GMT_EV_VMM_MAP, 5000011, -1, 0x7000000, 2 << 20, 0xC1, 0);
	ev(GMT_EV_VMM_MAP, 5000011, -1, 0x7200000, 2 << 20, 0xC2, 0);
	CHECK_EQ_U64(1200, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(4 << 20, val(0, GMT_VIEW_REQUESTED).pending);
	ev(GMT_EV_FW_SEGMENT_MAP, 5000012, 0, 0x7000000, 4 << 20, 0, 0);
	v = val(0, GMT_VIEW_REQUESTED);
	CHECK_EQ_U64(1200, v.outside);
	CHECK_EQ_U64(0, v.pending);
	CHECK_EQ_U64(5096 + (4 << 20), v.reserved);
	end(5000020, GMT_RANGE_API, 0, 0, 2, 1);

	/* 5: still waiting when the trace ends: outside at the last instant */
	begin(6000000, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_ALLOC, 6000010, 0, 0x500000, 300, 0, PLAIN);
	CHECK_EQ_U64(1200, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK(gmt_phases_finish(P, NULL) == 0);
	CHECK_EQ_U64(1500, val(0, GMT_VIEW_REQUESTED).outside);
	CHECK_EQ_U64(0, val(0, GMT_VIEW_REQUESTED).pending);

	const gmt_phase_name_t *s = name("step");
	CHECK(s != NULL);
	if (!s || s->n_listed != 5) {
		CHECK(0);
		gmt_phases_free(P);
		return;
	}
	const gmt_pfig_t *f = occ_fig(s, 0);
	CHECK_EQ_U64(0, f->max_outside.v.outside);
	CHECK_EQ_U64(5096, f->max_held.v.held);
	CHECK_EQ_U64(21, f->max_held.ts);
	CHECK_EQ_U64(5096, f->max_res.v.reserved + f->max_outside.v.outside); /* BOUND: no spike */
	f = occ_fig(s, 1);
	CHECK_EQ_U64(500, f->max_outside.v.outside);
	CHECK_EQ_U64(53, f->max_outside.ts);
	f = occ_fig(s, 2);
	CHECK_EQ_U64(1200, f->max_outside.v.outside);
	CHECK_EQ_U64(200 + 1000000, f->max_outside.ts);
	CHECK_EQ_U64(1200, f->end.outside);
	f = occ_fig(s, 3);
	CHECK_EQ_U64(1200, f->max_outside.v.outside);
	CHECK_EQ_U64(5096 + (4 << 20) + 1200, f->max_held.v.held);
	CHECK_EQ_U64(5000012, f->max_held.ts);
	f = occ_fig(s, 4);
	CHECK_EQ_U64(0, s->listed[4]->ended);
	CHECK_EQ_U64(6000010, s->listed[4]->end_ts);
	CHECK_EQ_U64(1500, f->end.outside);
	CHECK_EQ_U64(1500, f->max_outside.v.outside);
	CHECK_EQ_U64(6000010, f->max_outside.ts);

	/* the outside list keeps its meaning: the three blocks never inside,
	 * with their own times */
	gmt_lv_dev_info_t info;
	CHECK(gmt_levels_dev_info(gmt_phases_levels(P), 0, &info) == 0);
	CHECK_EQ_U64(3, info.outliers[GMT_OWNER_APP]);
	CHECK_EQ_U64(3, info.outliers_total);
	CHECK_EQ_U64(3, info.n_top);
	if (info.n_top == 3) {
		CHECK_EQ_U64(200, info.top[0].ts);
		CHECK_EQ_U64(50, info.top[1].ts);
		CHECK_EQ_U64(6000010, info.top[2].ts);
	}
	gmt_phases_free(P);
}

/* Checkpoints (docs/analyzer.md, "Checkpoints"): the framework's own
 * counters against the rebuilt values (requested view). Framework "toy" is
 * STRING 10, "other" 11; phase "step" is 2. Device 0:
 *   5   counters before any framework event: rebuilt unknown (both)
 *   10  segment 1000, 11 block 300; 12 counters 300 / 1000: agree
 *   20  begin step (1): pairs with the counters of 12
 *   21  block 200, 22 its free requested (requested view: 300 again)
 *   25  allocated 812: DISAGREE by +512 (nearest: the begin at 20)
 *   26  reserved 1000: agree; 30 free completed: withdraws both
 *   31  allocated 300: agree; 40 end step (1): pairs allocated only
 *   50  reserved 999: DISAGREE by -1, boundaries at 40 and 60: the tie
 *       goes to the one after (begin of step 2)
 *   60, 70 step (2): both pair (allocated of 31, reserved of 50)
 *   80  a block of "other"; 81 allocated of toy: not comparable
 * Device 1: 82 counters, no framework event there: unknown. */
static void test_checkpoints(void)
{
	const uint64_t toy = 10, other = 11;
	start(NULL);
	str(1, "gpumemtrace");
	str(2, "step");
	str(10, "toy");
	str(11, "other");
	ev(GMT_EV_FW_ALLOCATED, 5, 0, 0, 0, 0, toy);
	ev(GMT_EV_FW_RESERVED, 5, 0, 0, 0, 0, toy);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 10, 0, 0x1000, 1000, 0, toy);
	ev(GMT_EV_FW_ALLOC, 11, 0, 0x1000, 300, 0, toy);
	ev(GMT_EV_FW_ALLOCATED, 12, 0, 300, 300, 0, toy);
	ev(GMT_EV_FW_RESERVED, 12, 0, 1000, 5000, 0, toy);
	begin(20, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_FW_ALLOC, 21, 0, 0x1200, 200, 0, toy);
	ev(GMT_EV_FW_FREE_REQUESTED, 22, 0, 0x1200, 200, 0, toy);
	ev(GMT_EV_FW_ALLOCATED, 25, 0, 812, 900, 0, toy);
	ev(GMT_EV_FW_RESERVED, 26, 0, 1000, 5000, 0, toy);
	ev(GMT_EV_FW_FREE_COMPLETED, 30, 0, 0x1200, 200, 0, toy);
	ev(GMT_EV_FW_ALLOCATED, 31, 0, 300, 900, 0, toy);
	end(40, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_FW_RESERVED, 50, 0, 999, 5000, 0, toy);
	begin(60, GMT_RANGE_API, 0, 0, 2, 1);
	end(70, GMT_RANGE_API, 0, 0, 2, 1);
	ev(GMT_EV_FW_ALLOC, 80, 0, 0x5000, 64, 0, other);
	ev(GMT_EV_FW_ALLOCATED, 81, 0, 300, 900, 0, toy);
	ev(GMT_EV_FW_ALLOCATED, 82, 1, 7, 7, 0, toy);
	CHECK(gmt_phases_finish(P, NULL) == 0);

	const gmt_ck_dev_t *c = gmt_phases_checkpoints(P, 0);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ_U64(5, c->count[GMT_CK_ALLOCATED]);
	CHECK_EQ_U64(2, c->by_state[GMT_CK_ALLOCATED][GMT_CK_AGREE]);
	CHECK_EQ_U64(1, c->by_state[GMT_CK_ALLOCATED][GMT_CK_DISAGREE]);
	CHECK_EQ_U64(1, c->by_state[GMT_CK_ALLOCATED][GMT_CK_UNKNOWN]);
	CHECK_EQ_U64(1, c->by_state[GMT_CK_ALLOCATED][GMT_CK_OTHERS]);
	CHECK_EQ_U64(4, c->count[GMT_CK_RESERVED]);
	CHECK_EQ_U64(2, c->by_state[GMT_CK_RESERVED][GMT_CK_AGREE]);
	CHECK_EQ_U64(1, c->by_state[GMT_CK_RESERVED][GMT_CK_DISAGREE]);
	CHECK_EQ_U64(1, c->by_state[GMT_CK_RESERVED][GMT_CK_UNKNOWN]);
	CHECK_EQ_U64(0, c->by_state[GMT_CK_RESERVED][GMT_CK_OTHERS]);
	/* the latest, with the framework's own peak as given */
	CHECK_EQ_U64(81, c->latest[GMT_CK_ALLOCATED].ts);
	CHECK_EQ_U64(GMT_CK_OTHERS, c->latest[GMT_CK_ALLOCATED].state);
	CHECK_EQ_U64(5000, c->latest[GMT_CK_RESERVED].fw_peak);

	CHECK_EQ_U64(2, c->n_diffs);
	CHECK_EQ_U64(2, c->disagreements);
	CHECK_EQ_U64(0, c->not_listed);
	if (c->n_diffs == 2) {
		const gmt_ck_diff_t *d = &c->diffs[0];
		CHECK_EQ_U64(GMT_CK_ALLOCATED, d->kind);
		CHECK_EQ_U64(25, d->ck.ts);
		CHECK_EQ_U64(812, d->ck.fw_current);
		CHECK_EQ_U64(900, d->ck.fw_peak);
		CHECK_EQ_U64(300, d->ck.rebuilt);   /* the requested view */
		CHECK_EQ_U64(GMT_ASRC_FRAMEWORK, d->ck.src);
		CHECK_EQ_U64(512, d->ck.fw_current - d->ck.rebuilt);
		CHECK_EQ_U64(512, (uint64_t)d->ck.difference);
		const gmt_boundary_t *b = gmt_ck_nearest(d);
		CHECK(b == &d->prev);
		CHECK(d->nearest == &d->prev);
		CHECK_EQ_U64(5, (uint64_t)d->from_nearest_ns);   /* 25 - 20 */
		CHECK_EQ_U64(20, b->ts);
		CHECK_EQ_U64(0, b->is_end);
		CHECK_EQ_U64(1, b->k);
		CHECK_EQ_U64(40, d->next.ts);
		d = &c->diffs[1];
		CHECK_EQ_U64(GMT_CK_RESERVED, d->kind);
		CHECK_EQ_U64(50, d->ck.ts);
		CHECK_EQ_U64(1000, d->ck.rebuilt);
		CHECK_EQ_U64((uint64_t)-1, d->ck.fw_current - d->ck.rebuilt);
		CHECK_EQ_U64((uint64_t)-1, (uint64_t)d->ck.difference);
		b = gmt_ck_nearest(d);
		CHECK(b == &d->next);
		CHECK(d->nearest == &d->next);
		CHECK_EQ_U64((uint64_t)-10, (uint64_t)d->from_nearest_ns);   /* 50 - 60 */
		CHECK_EQ_U64(60, b->ts);
		CHECK_EQ_U64(2, b->k);
		CHECK_EQ_U64(0, b->is_end);
		CHECK_EQ_U64(40, d->prev.ts);
	}

	const gmt_phase_name_t *s = name("step");
	CHECK(s && s->n_listed == 2);
	if (s && s->n_listed == 2) {
		const gmt_pdev_t *p = &s->listed[0]->dev[0];
		CHECK_EQ_U64(12, p->ck_start[GMT_CK_ALLOCATED].ts);
		CHECK_EQ_U64(GMT_CK_AGREE, p->ck_start[GMT_CK_ALLOCATED].state);
		CHECK_EQ_U64(300, p->ck_start[GMT_CK_ALLOCATED].rebuilt);
		CHECK_EQ_U64(12, p->ck_start[GMT_CK_RESERVED].ts);
		CHECK_EQ_U64(5000, p->ck_start[GMT_CK_RESERVED].fw_peak);
		CHECK_EQ_U64(31, p->ck_end[GMT_CK_ALLOCATED].ts);
		CHECK_EQ_U64(GMT_CK_AGREE, p->ck_end[GMT_CK_ALLOCATED].state);
		CHECK_EQ_U64(0, p->ck_end[GMT_CK_RESERVED].valid);   /* withdrawn at 30 */
		p = &s->listed[1]->dev[0];
		CHECK_EQ_U64(31, p->ck_start[GMT_CK_ALLOCATED].ts);
		CHECK_EQ_U64(50, p->ck_start[GMT_CK_RESERVED].ts);
		CHECK_EQ_U64(GMT_CK_DISAGREE, p->ck_start[GMT_CK_RESERVED].state);
		CHECK_EQ_U64(31, p->ck_end[GMT_CK_ALLOCATED].ts);
		CHECK_EQ_U64(50, p->ck_end[GMT_CK_RESERVED].ts);
		/* the warm aggregate pairs nothing */
		CHECK_EQ_U64(0, s->warm->dev[0].ck_start[GMT_CK_ALLOCATED].valid);
	}
	c = gmt_phases_checkpoints(P, 1);
	CHECK(c && c->count[GMT_CK_ALLOCATED] == 1 && c->by_state[GMT_CK_ALLOCATED][GMT_CK_UNKNOWN] == 1);
	CHECK(gmt_phases_checkpoints(P, 2) == NULL);

	/* the renderers say it */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (f) {
		gmt_phases_report_text(f, P);
		gmt_json_t j;
		gmt_json_init(&j, f);
		gmt_render_json_head(&j, "phases");
		gmt_json_kv_arr_begin(&j, "traces");
		gmt_phases_report_json(&j, P);
		gmt_json_arr_end(&j);
		gmt_json_obj_end(&j);
		CHECK(gmt_json_close(&j) == 0);
		fclose(f);
		CHECK(strstr(buf, "allocated: 5 checkpoints, 2 agree to the byte, 1 DISAGREE, 1 with the "
				  "rebuilt value unknown") != NULL);
		CHECK(strstr(buf, "from framework events: DISAGREE by 512 B") != NULL);
		CHECK(strstr(buf, "checkpoint at end (+0.000000026 s): allocated: framework toy 300 B") != NULL);
		CHECK(strstr(buf, "\"difference_bytes\":512") != NULL);
		CHECK(strstr(buf, "\"difference_bytes\":-1") != NULL);
		CHECK(strstr(buf, "\"checkpoint_minus_boundary_ns\":-10") != NULL);
		free(buf);
	}
	gmt_phases_free(P);

	/* all counted, the first N listed */
	gmt_phase_opts_t o = { .max_ck_listed = 1, .top_n = 1 };
	start(&o);
	ev(GMT_EV_FW_SEGMENT_ALLOC, 10, 0, 0x1000, 1000, 0, toy);
	ev(GMT_EV_FW_RESERVED, 11, 0, 1001, 1001, 0, toy);
	ev(GMT_EV_FW_RESERVED, 12, 0, 1002, 1002, 0, toy);
	ev(GMT_EV_FW_RESERVED, 13, 0, 1000, 1002, 0, toy);
	CHECK(gmt_phases_finish(P, NULL) == 0);
	c = gmt_phases_checkpoints(P, 0);
	CHECK(c && c->n_diffs == 1 && c->by_state[GMT_CK_RESERVED][GMT_CK_DISAGREE] == 2 &&
	      c->by_state[GMT_CK_RESERVED][GMT_CK_AGREE] == 1);
	CHECK(c && c->n_diffs == 1 && gmt_ck_nearest(&c->diffs[0]) == NULL);
	if (c) {
		CHECK_EQ_U64(2, c->disagreements);
		CHECK_EQ_U64(1, c->not_listed);   /* 2 disagreements, 1 listed */
	}
	gmt_phases_free(P);
}

/* Occurrences beyond max_listed are counted, not listed: the model says how
 * many (not_listed), and the warm aggregate still covers them all. */
static void test_listed_and_counted(void)
{
	gmt_phase_opts_t o = { .max_listed = 2 };
	start(&o);
	str(1, "step");
	for (uint64_t k = 0; k < 5; k++) {
		begin(100 + 10 * k, GMT_RANGE_API, 0, 0, 1, 0);
		ev(GMT_EV_ALLOC, 101 + 10 * k, 0, 0x10000 + 0x1000 * k, 100 * (k + 1), 0, PLAIN);
		end(105 + 10 * k, GMT_RANGE_API, 0, 0, 1, 0);
	}
	CHECK(gmt_phases_finish(P, NULL) == 0);
	const gmt_phase_name_t *p = name("step");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(5, p->occurrences);
		CHECK_EQ_U64(2, p->n_listed);
		CHECK_EQ_U64(3, p->not_listed);
		CHECK_EQ_U64(4, p->n_warm);
		CHECK_EQ_U64(5, p->listed[0]->duration_ns);
		/* the warm aggregate's maximum is the last occurrence's, unlisted:
		 * 100 + 200 + 300 + 400 + 500 live then */
		CHECK(p->warm->n_dev >= 1);
		if (p->warm->n_dev >= 1)
			CHECK_EQ_U64(1500, p->warm->dev[0].fig[GMT_VIEW_REQUESTED].max_held.v.held);
		if (p->warm->n_dev >= 1)
			CHECK_EQ_U64(5, p->warm->dev[0].fig[GMT_VIEW_REQUESTED].max_held.occ);
	}
	gmt_phases_free(P);
}

/* A framework that registered (FW_REGISTER, before any of its events) makes
 * the very first segment wait too: its cudaMalloc comes before the
 * FW_SEGMENT_ALLOC that reports it and is never outside. Without the
 * registration the device has no framework event yet, and the segment is
 * outside from its cudaMalloc to its report. */
static void test_register(void)
{
	for (int reg = 0; reg <= 1; reg++) {
		start(NULL);
		if (reg)
			ev(GMT_EV_FW_REGISTER, 5, -1, 0, 0, 0, 7);
		ev(GMT_EV_ALLOC, 10, 0, 0x10000, 2 << 20, 0, PLAIN);
		CHECK_EQ_U64(reg ? 0 : 2 << 20, val(0, GMT_VIEW_REQUESTED).outside);
		CHECK_EQ_U64(reg ? 2 << 20 : 0, val(0, GMT_VIEW_REQUESTED).pending);
		ev(GMT_EV_FW_SEGMENT_ALLOC, 20, 0, 0x10000, 2 << 20, 0, 0);
		gmt_lv_vals_t v = val(0, GMT_VIEW_REQUESTED);
		CHECK_EQ_U64(0, v.outside);
		CHECK_EQ_U64(0, v.pending);
		CHECK_EQ_U64(2 << 20, v.reserved);
		/* an allocation on a device with no framework event at all waits
		 * as well once a framework registered, and is outside from its
		 * thread's next event */
		ev(GMT_EV_ALLOC, 30, 1, 0x90000, 4096, 0, PLAIN);
		CHECK_EQ_U64(reg ? 0 : 4096, val(1, GMT_VIEW_REQUESTED).outside);
		ev(GMT_EV_SYNC, 40, 1, 35, 0, GMT_SYNC_CTX, 0);
		CHECK_EQ_U64(4096, val(1, GMT_VIEW_REQUESTED).outside);
		CHECK(gmt_phases_finish(P, NULL) == 0);
		gmt_phases_free(P);
	}
}

int main(void)
{
	test_containment();
	test_views();
	test_pairing_selection();
	test_names_by_value();
	test_figures();
	test_new_allocations_wait();
	test_checkpoints();
	test_listed_and_counted();
	test_register();
	TEST_DONE();
}
