/*
 * unit_replay.c - the analyzer's replay engine fed synthetic events through
 * the decoder's visitor callbacks; every number is known by construction.
 */
#include "engines/gmt_replay.h"
#include "model/gmt_results.h"
#include "render/gmt_render.h"
#include "gmt_test.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static gmt_replay_t *R;
static gmt_visitor_t V;
static uint32_t cur_thread;

static void start(void)
{
	R = gmt_replay_new("synthetic.gmt");
	CHECK(R != NULL);
	gmt_replay_visitor(R, &V);
	cur_thread = 0;
}

static const gmt_summary_t *S(void)
{
	return gmt_replay_summary(R);
}

static const gmt_dev_summary_t *D(int ordinal)
{
	const gmt_dev_summary_t *d = gmt_summary_device(S(), ordinal);
	CHECK(d != NULL);
	static gmt_dev_summary_t zero;
	return d ? d : &zero;
}

static void ev(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size,
	       uint64_t stream, uint64_t aux)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .stream = stream, .aux = aux,
			   .thread = cur_thread, .type = (uint16_t)type, .device = (int16_t)dev };
	CHECK(V.events(V.ctx, &e, 1, 0) == 0);
}

static void alloc(uint64_t ts, int dev, uint64_t addr, uint64_t size, unsigned kind, unsigned owner)
{
	ev(GMT_EV_ALLOC, ts, dev, addr, size, 0, GMT_AUX(kind, 0, owner));
}

static void freeb(uint64_t ts, int dev, uint64_t addr)
{
	ev(GMT_EV_FREE, ts, dev, addr, 0, 0, GMT_AUX(GMT_KIND_PLAIN, 0, 0));
}

/* The true peak coincides with no per-kind maximum except by accident:
 * plain peaks at 100 (t=100), stream-ordered at 400 (t=600), managed at 250
 * (t=400); the total peaks at 650 at t=600 with plain 0. */
static void test_peak_vs_independent_maxima(void)
{
	start();
	alloc(100, 0, 0xA000, 100, GMT_KIND_PLAIN, GMT_OWNER_APP);
	alloc(200, 0, 0xB000, 300, GMT_KIND_ASYNC, GMT_OWNER_APP);
	freeb(300, 0, 0xB000);
	alloc(400, 0, 0xC000, 250, GMT_KIND_MANAGED, GMT_OWNER_NCCL);
	freeb(500, 0, 0xA000);
	alloc(600, 0, 0xD000, 400, GMT_KIND_ASYNC, GMT_OWNER_APP);
	freeb(700, 0, 0xC000);
	freeb(800, 0, 0xD000);
	alloc(900, 0, 0xE000, 650, GMT_KIND_PLAIN, GMT_OWNER_APP);  /* equals the peak: not a new one */

	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(650, d->peak.total);
	CHECK_EQ_U64(600, d->peak_ts);
	CHECK_EQ_U64(0, d->peak.kind[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(400, d->peak.kind[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(0, d->peak.kind[GMT_KIND_VMM]);
	CHECK_EQ_U64(250, d->peak.kind[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(400, d->peak.owner[GMT_OWNER_APP]);
	CHECK_EQ_U64(250, d->peak.owner[GMT_OWNER_NCCL]);

	CHECK_EQ_U64(650, d->kind_max[GMT_KIND_PLAIN]);   /* the last alloc */
	CHECK_EQ_U64(900, d->kind_max_ts[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(400, d->kind_max[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(600, d->kind_max_ts[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(250, d->kind_max[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(400, d->kind_max_ts[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(0, d->kind_max[GMT_KIND_VMM]);
	/* their sum, derived at finish: 650 + 400 + 250 = 1300, twice the
	 * peak and no moment of the run; first event 100, last 900 */
	const gmt_summary_t *fs = gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(1300, d->kind_max_sum);
	CHECK_EQ_U64(800, fs->duration_ns);

	CHECK_EQ_U64(650, d->live.total);
	CHECK_EQ_U64(650, d->live.kind[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(0, d->live.kind[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(650, d->live.owner[GMT_OWNER_APP]);
	CHECK_EQ_U64(0, d->live.owner[GMT_OWNER_NCCL]);

	CHECK_EQ_U64(2, d->n_alloc[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(1, d->n_free[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(2, d->n_alloc[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(2, d->n_free[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(1, d->n_alloc[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(1, d->n_free[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(9, S()->events);
	CHECK_EQ_U64(100, S()->first_ts);
	CHECK_EQ_U64(900, S()->last_ts);
	CHECK_EQ_U64(0, S()->anom.unmatched_frees);
	gmt_replay_free(R);
}

/* Each format owner has its own bucket; a number the analyzer does not
 * know (200) goes to "other", and its free takes the bytes back there. */
static void test_owner_buckets(void)
{
	start();
	alloc(10, 0, 0x1000, 1 * MiB, GMT_KIND_PLAIN, GMT_OWNER_APP);
	alloc(20, 0, 0x2000, 2 * MiB, GMT_KIND_PLAIN, GMT_OWNER_NCCL);
	alloc(30, 0, 0x3000, 8 * MiB, GMT_KIND_PLAIN, GMT_OWNER_CUBLAS);
	alloc(40, 0, 0x4000, 4 * MiB, GMT_KIND_PLAIN, GMT_OWNER_CUDNN);
	alloc(50, 0, 0x5000, 16 * MiB, GMT_KIND_PLAIN, 200);
	freeb(60, 0, 0x5000);
	freeb(70, 0, 0x3000);

	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(31 * MiB, d->peak.total);
	CHECK_EQ_U64(50, d->peak_ts);
	CHECK_EQ_U64(1 * MiB, d->peak.owner[GMT_OWNER_APP]);
	CHECK_EQ_U64(2 * MiB, d->peak.owner[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(8 * MiB, d->peak.owner[GMT_OWNER_CUBLAS]);
	CHECK_EQ_U64(4 * MiB, d->peak.owner[GMT_OWNER_CUDNN]);
	CHECK_EQ_U64(16 * MiB, d->peak.owner[GMT_DOWNER_OTHER]);
	CHECK_EQ_U64(7 * MiB, d->live.total);
	CHECK_EQ_U64(0, d->live.owner[GMT_OWNER_CUBLAS]);
	CHECK_EQ_U64(4 * MiB, d->live.owner[GMT_OWNER_CUDNN]);
	CHECK_EQ_U64(0, d->live.owner[GMT_DOWNER_OTHER]);
	CHECK_EQ_U64(5, GMT_DOWNERS);
	CHECK_EQ_U64(GMT_DOWNER_OTHER, gmt_downer(GMT_OWNER_MAX + 1));
	CHECK_EQ_U64(GMT_DOWNER_OTHER, gmt_downer(255));
	gmt_replay_free(R);
}

/* A handle released while mapped keeps its bytes until its last mapping
 * goes; a reservation never counts as device bytes. */
static void test_vmm(void)
{
	const uint64_t va = 0x7f0000000000ull, h1 = 0x11, h2 = 0x22;
	start();
	ev(GMT_EV_VMM_RESERVE, 10, -1, va, GiB, 0, 0);
	ev(GMT_EV_VMM_CREATE, 20, 0, h1, 2 * MiB, 0, GMT_AUX(GMT_KIND_VMM, 0, GMT_OWNER_NCCL));
	ev(GMT_EV_VMM_MAP, 30, -1, va, 2 * MiB, h1, 0);
	ev(GMT_EV_VMM_RELEASE, 40, -1, h1, 0, 0, 0);
	CHECK_EQ_U64(2 * MiB, D(0)->live.total);
	CHECK_EQ_U64(2 * MiB, D(0)->live.kind[GMT_KIND_VMM]);
	CHECK_EQ_U64(2 * MiB, D(0)->live.owner[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(1, S()->vmm_released_while_mapped);

	ev(GMT_EV_VMM_CREATE, 50, 0, h2, 4 * MiB, 0, GMT_AUX(GMT_KIND_VMM, 0, GMT_OWNER_APP));
	ev(GMT_EV_VMM_MAP, 60, -1, va + 2 * MiB, 4 * MiB, h2, 0);
	CHECK_EQ_U64(6 * MiB, D(0)->live.total);
	/* One unmap over both mappings: h1 (released) goes, h2 (not) stays. */
	ev(GMT_EV_VMM_UNMAP, 70, -1, va, 6 * MiB, 0, 0);
	CHECK_EQ_U64(4 * MiB, D(0)->live.total);
	CHECK_EQ_U64(0, D(0)->live.owner[GMT_OWNER_NCCL]);
	ev(GMT_EV_VMM_RELEASE, 80, -1, h2, 0, 0, 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	ev(GMT_EV_VMM_ADDR_FREE, 90, -1, va, GiB, 0, 0);

	/* anomalies: unknown handle released twice, unmap of nothing */
	ev(GMT_EV_VMM_RELEASE, 91, -1, h2, 0, 0, 0);
	ev(GMT_EV_VMM_UNMAP, 92, -1, va, MiB, 0, 0);
	ev(GMT_EV_VMM_ADDR_FREE, 93, -1, va, GiB, 0, 0);
	ev(GMT_EV_VMM_MAP_FAIL, 94, -1, va, MiB, h2, 0);

	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(6 * MiB, d->peak.total);
	CHECK_EQ_U64(50, d->peak_ts);  /* h2 created while h1 still counted */
	CHECK_EQ_U64(6 * MiB, d->peak.kind[GMT_KIND_VMM]);
	CHECK_EQ_U64(2 * MiB, d->peak.owner[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(4 * MiB, d->peak.owner[GMT_OWNER_APP]);
	CHECK_EQ_U64(2, d->n_alloc[GMT_KIND_VMM]);
	CHECK_EQ_U64(2, d->n_free[GMT_KIND_VMM]);
	CHECK_EQ_U64(GiB, S()->va_peak);
	CHECK_EQ_U64(10, S()->va_peak_ts);
	CHECK_EQ_U64(0, S()->va_live);
	CHECK_EQ_U64(1, S()->va_reserves);
	CHECK_EQ_U64(1, S()->va_frees);
	CHECK_EQ_U64(1, S()->anom.unmatched_vmm_releases);
	CHECK_EQ_U64(1, S()->anom.unmatched_unmaps);
	CHECK_EQ_U64(1, S()->anom.unmatched_addr_frees);
	CHECK_EQ_U64(2, S()->vmm_maps);
	CHECK_EQ_U64(2, S()->vmm_unmaps);
	CHECK_EQ_U64(1, S()->vmm_map_fails);
	/* the reservation never reached a device, not even "no device" */
	const gmt_dev_summary_t *none = gmt_summary_device(S(), -1);
	CHECK(!none || (none->peak.total == 0 && none->live.total == 0));
	const gmt_summary_t *s = gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(0, s->vmm_live_handles);
	CHECK_EQ_U64(0, s->vmm_live_mappings);
	CHECK_EQ_U64(84, s->duration_ns);   /* first event 10, last 94 */
	gmt_replay_free(R);
}

static void test_vmm_unmapped_before_release(void)
{
	start();
	ev(GMT_EV_VMM_CREATE, 1, 1, 0x5, 8 * MiB, 0, GMT_AUX(GMT_KIND_VMM, 0, 0));
	ev(GMT_EV_VMM_MAP, 2, -1, 0x100000, 8 * MiB, 0x5, 0);
	ev(GMT_EV_VMM_UNMAP, 3, -1, 0x100000, 8 * MiB, 0, 0);
	CHECK_EQ_U64(8 * MiB, D(1)->live.total);  /* not released yet */
	ev(GMT_EV_VMM_RELEASE, 4, -1, 0x5, 0, 0, 0);
	CHECK_EQ_U64(0, D(1)->live.total);
	CHECK_EQ_U64(0, S()->vmm_released_while_mapped);
	gmt_replay_free(R);
}

/* NCCL's free sequence: retain (2 references), release, unmap, release.
 * The bytes go only at the second release, after the unmap. */
static void test_vmm_retained_handle(void)
{
	start();
	ev(GMT_EV_VMM_CREATE, 1, 0, 0x7, 2 * MiB, 0, GMT_AUX(GMT_KIND_VMM, 0, GMT_OWNER_NCCL));
	ev(GMT_EV_VMM_MAP, 2, -1, 0x200000, 2 * MiB, 0x7, 0);
	ev(GMT_EV_VMM_RETAIN, 3, -1, 0x7, 0, 0x200000, 0);
	ev(GMT_EV_VMM_RELEASE, 4, -1, 0x7, 0, 0, 0);
	CHECK_EQ_U64(2 * MiB, D(0)->live.total);
	ev(GMT_EV_VMM_UNMAP, 5, -1, 0x200000, 2 * MiB, 0, 0);
	CHECK_EQ_U64(2 * MiB, D(0)->live.total);  /* one reference left */
	ev(GMT_EV_VMM_RELEASE, 6, -1, 0x7, 0, 0, 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(1, D(0)->n_free[GMT_KIND_VMM]);
	CHECK_EQ_U64(0, S()->anom.unmatched_vmm_releases);
	ev(GMT_EV_VMM_RETAIN, 7, -1, 0x7, 0, 0x200000, 0);  /* gone: anomaly */
	CHECK_EQ_U64(1, S()->anom.unmatched_vmm_retains);
	gmt_replay_free(R);
}

static void test_host_pinned_apart(void)
{
	start();
	alloc(1, 0, 0x1000, 1000, GMT_KIND_HOST, 0);
	alloc(2, 0, 0x9000, 10, GMT_KIND_PLAIN, 0);
	alloc(3, -1, 0x2000, 500, GMT_KIND_HOST, 0);
	freeb(4, -1, 0x1000);
	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(10, d->peak.total);
	CHECK_EQ_U64(10, d->live.total);
	CHECK_EQ_U64(1, d->n_alloc[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(0, d->n_alloc[0]);
	CHECK_EQ_U64(1500, S()->host_peak);
	CHECK_EQ_U64(3, S()->host_peak_ts);
	CHECK_EQ_U64(500, S()->host_live);
	CHECK_EQ_U64(2, S()->host_allocs);
	CHECK_EQ_U64(1, S()->host_frees);
	const gmt_dev_summary_t *none = gmt_summary_device(S(), -1);
	CHECK(!none || (none->peak.total == 0 && !none->used));
	gmt_replay_free(R);
}

static void test_free_fail_and_unmatched(void)
{
	start();
	alloc(1, 0, 0xA0, 100, GMT_KIND_PLAIN, 0);
	alloc(2, 0, 0xB0, 30, GMT_KIND_PLAIN, 0);
	cur_thread = 1;
	freeb(3, -1, 0xA0);
	cur_thread = 2;
	freeb(4, -1, 0xB0);               /* another thread's free in between */
	cur_thread = 1;
	ev(GMT_EV_FREE_FAIL, 5, -1, 0xA0, 0, 0, 0);
	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(100, d->live.total);  /* A is live again, B is gone */
	CHECK_EQ_U64(1, d->n_free[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(1, S()->anom.voided_frees);
	CHECK_EQ_U64(130, d->peak.total);
	freeb(6, -1, 0xA0);               /* the retry succeeds */
	CHECK_EQ_U64(0, d->live.total);
	CHECK_EQ_U64(2, d->n_free[GMT_KIND_PLAIN]);

	freeb(7, 0, 0xDEAD);               /* unknown address */
	freeb(8, 0, 0xBEEF);
	ev(GMT_EV_FREE_FAIL, 9, -1, 0xBEEF, 0, 0, 0);  /* voids an unmatched free */
	ev(GMT_EV_FREE_FAIL, 10, -1, 0x5555, 0, 0, 0); /* no free at all */
	ev(GMT_EV_FREE_FAIL, 11, -1, 0xA0, 0, 0, 0);   /* A's void already used... */
	freeb(12, -1, 0);                  /* cudaFree(NULL) */
	CHECK_EQ_U64(1, S()->anom.unmatched_frees);
	CHECK_EQ_U64(3, S()->anom.voided_frees);       /* ...but A's second free is voidable */
	CHECK_EQ_U64(1, S()->anom.unmatched_free_fails);
	CHECK_EQ_U64(1, S()->anom.null_frees);
	CHECK_EQ_U64(100, d->live.total);              /* A live again after its second free failed */
	CHECK_EQ_U64(1, d->n_free[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(130, d->peak.total);              /* nothing went negative or grew */
	gmt_replay_free(R);
}

static void test_overlapping_alloc(void)
{
	start();
	alloc(1, 0, 0x100, 100, GMT_KIND_PLAIN, 0);
	alloc(2, 0, 0x100, 50, GMT_KIND_ASYNC, GMT_OWNER_NCCL);
	const gmt_dev_summary_t *d = D(0);
	CHECK_EQ_U64(1, S()->anom.overlapping_allocations);
	CHECK_EQ_U64(50, d->live.total);
	CHECK_EQ_U64(0, d->live.kind[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(50, d->live.kind[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(0, d->live.owner[GMT_OWNER_APP]);
	CHECK_EQ_U64(50, d->live.owner[GMT_OWNER_NCCL]);
	CHECK_EQ_U64(100, d->peak.total);
	freeb(3, 0, 0x100);
	CHECK_EQ_U64(0, d->live.total);
	CHECK_EQ_U64(1, d->n_free[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(0, d->n_free[GMT_KIND_PLAIN]);
	gmt_replay_free(R);
}

static void test_two_devices(void)
{
	start();
	alloc(10, 0, 0x1000, 700, GMT_KIND_PLAIN, 0);
	alloc(20, 1, 0x2000, 300, GMT_KIND_PLAIN, 0);
	alloc(30, 1, 0x3000, 900, GMT_KIND_MANAGED, 0);
	freeb(40, -1, 0x2000);   /* device comes from the block */
	freeb(50, -1, 0x1000);
	alloc(60, 0, 0x4000, 200, GMT_KIND_ASYNC, 0);
	CHECK_EQ_U64(700, D(0)->peak.total);
	CHECK_EQ_U64(10, D(0)->peak_ts);
	CHECK_EQ_U64(200, D(0)->live.total);
	CHECK_EQ_U64(1, D(0)->n_free[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(1200, D(1)->peak.total);
	CHECK_EQ_U64(30, D(1)->peak_ts);
	CHECK_EQ_U64(300, D(1)->peak.kind[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(900, D(1)->peak.kind[GMT_KIND_MANAGED]);
	CHECK_EQ_U64(900, D(1)->live.total);
	CHECK_EQ_U64(1, D(1)->n_free[GMT_KIND_PLAIN]);
	const gmt_dev_summary_t *none = gmt_summary_device(S(), -1);
	CHECK(!none || !none->used);
	gmt_replay_free(R);
}

static void test_failed_allocation(void)
{
	start();
	ev(GMT_EV_MEMINFO, 5, 0, 1000, 5000, 0, 0);
	ev(GMT_EV_MEMINFO, 6, 1, 7, 8, 0, 0);   /* another device's sample */
	alloc(10, 0, 0x10, 300, GMT_KIND_PLAIN, 0);
	alloc(20, 0, 0x20, 200, GMT_KIND_ASYNC, 0);
	alloc(21, 1, 0x30, 999, GMT_KIND_PLAIN, 0);
	ev(GMT_EV_ALLOC_FAIL, 30, 0, 0, 4096, 0x77,
	   GMT_AUX_WITH_RESULT(GMT_AUX(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, 0), 2));
	ev(GMT_EV_MEMINFO, 31, 0, 900, 5000, 0, 0);
	ev(GMT_EV_ALLOC_FAIL, 40, 1, 0, 1, 0, GMT_AUX_WITH_RESULT(GMT_AUX(GMT_KIND_HOST, 6, 0), 1));
	const gmt_summary_t *s = S();
	CHECK_EQ_U64(2, s->fails_total);
	CHECK_EQ_U64(2, s->n_fails);
	gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(0, s->fails_not_listed);
	const gmt_fail_summary_t *f = &s->fails[0];
	CHECK_EQ_U64(30, f->ts);
	CHECK_EQ_U64(0, f->device);
	CHECK_EQ_U64(4096, f->size);
	CHECK_EQ_U64(0x77, f->stream);
	CHECK_EQ_U64(GMT_KIND_ASYNC, f->kind);
	CHECK_EQ_U64(GMT_API_CUDA_MALLOC_ASYNC, f->api);
	CHECK_EQ_U64(2, f->result);
	CHECK_EQ_STR("CUDA_ERROR_OUT_OF_MEMORY", gmt_curesult_name(f->result));
	CHECK_EQ_U64(500, f->live.total);
	CHECK_EQ_U64(300, f->live.kind[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(200, f->live.kind[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(1, f->has_meminfo);
	CHECK_EQ_U64(1000, f->meminfo_free);
	CHECK_EQ_U64(5, f->meminfo_ts);
	CHECK_EQ_U64(1, D(0)->n_fail[GMT_KIND_ASYNC]);
	CHECK_EQ_U64(1, D(0)->n_alloc[GMT_KIND_ASYNC]);
	f = &s->fails[1];
	CHECK_EQ_U64(1, f->device);
	CHECK_EQ_U64(999, f->live.total);
	CHECK_EQ_U64(7, f->meminfo_free);
	CHECK_EQ_U64(1, s->host_fails);
	CHECK_EQ_U64(0, D(1)->n_fail[GMT_KIND_PLAIN]);
	/* MEMINFO: latest and minimum */
	CHECK_EQ_U64(2, D(0)->meminfo_samples);
	CHECK_EQ_U64(900, D(0)->meminfo_free);
	CHECK_EQ_U64(31, D(0)->meminfo_ts);
	CHECK_EQ_U64(900, D(0)->meminfo_min_free);
	CHECK_EQ_U64(5000, D(0)->meminfo_total);
	CHECK(gmt_curesult_name(12345) == NULL);
	gmt_replay_free(R);
}

static void test_pools_drops_end_late(void)
{
	start();
	gmt_devent_t b[3] = {
		{ .ts = 100, .type = GMT_EV_POOL_RESERVED, .device = 0, .stream = 0x9001, .addr = 1000, .size = 2000 },
		{ .ts = 110, .type = GMT_EV_POOL_USED, .device = 0, .stream = 0x9001, .addr = 500, .size = 800 },
		{ .ts = 120, .type = 200, .device = -1 },  /* unknown type: counted, ignored */
	};
	CHECK(V.events(V.ctx, b, 3, 0) == 0);
	/* a number inside the table without a name (a gap): unknown too */
	unsigned gap = 1;
	while (gap <= GMT_EV_TYPE_MAX && gmt_ev_type_known(gap))
		gap++;
	gmt_devent_t g = { .ts = 120, .type = (uint16_t)gap, .device = -1 };
	if (gap <= GMT_EV_TYPE_MAX)
		CHECK(V.events(V.ctx, &g, 1, 0) == 0);
	gmt_devent_t late = { .ts = 50, .type = GMT_EV_POOL_TRIM, .device = -1, .stream = 0x9001 };
	CHECK(V.events(V.ctx, &late, 1, GMT_EVENTS_LATE) == 0);
	gmt_drops_t dr = { .count = 17, .first_ts = 60, .last_ts = 70, .reason = "buffer_full", .err = 0 };
	CHECK(V.drops(V.ctx, &dr) == 0);
	gmt_end_t end = { .ts = 130, .written = 4, .dropped = 17, .late = 1 };
	CHECK(V.end(V.ctx, &end) == 0);
	const gmt_summary_t *s = gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(1, s->n_pools);
	CHECK_EQ_U64(1000, s->pools[0].reserved_current);
	CHECK_EQ_U64(2000, s->pools[0].reserved_high);
	CHECK_EQ_U64(500, s->pools[0].used_current);
	CHECK_EQ_U64(800, s->pools[0].used_high);
	CHECK_EQ_U64(0, s->pools[0].device);
	CHECK_EQ_U64(2, s->pools[0].samples);
	CHECK_EQ_U64(1, s->pools[0].trims);
	unsigned gaps = gap <= GMT_EV_TYPE_MAX;
	CHECK_EQ_U64(4 + gaps, s->events);
	CHECK_EQ_U64(1, s->late_events);
	CHECK_EQ_U64(50, s->first_ts);
	CHECK_EQ_U64(120, s->last_ts);
	CHECK_EQ_U64(1, s->by_type[GMT_EV_TYPE_MAX + 1]);
	CHECK_EQ_U64(1 + gaps, s->by_type_unknown);
	/* times relative to the first event: the late one's is 0, before it -10 */
	CHECK_EQ_I64(70, gmt_summary_since_ns(s, 120));
	CHECK_EQ_I64(-10, gmt_summary_since_ns(s, 40));
	CHECK_EQ_U64(17, s->drops_total);
	CHECK_EQ_U64(1, s->n_drops);
	CHECK_EQ_STR("buffer_full", s->drops[0].reason);
	CHECK_EQ_U64(1, s->has_end);
	CHECK_EQ_U64(1, s->ended_cleanly);
	CHECK_EQ_U64(17, s->end.dropped);
	gmt_replay_free(R);
}

static void test_header_copied(void)
{
	char host[16] = "node7", a0[8] = "python", k[8] = "RANK", v[8] = "3";
	const char *argv[] = { a0, "x.py" };
	gmt_kv_t env[] = { { k, v } };
	gmt_header_t h = { .format_major = 1, .format_minor = 0, .tool_version = "0.1.0",
			   .pid = 42, .ppid = 1, .host = host, .exe = "/usr/bin/python3",
			   .cmdline = argv, .n_cmdline = 2, .env = env, .n_env = 1,
			   .clock_monotonic_ns = 1000, .clock_realtime_ns = 1700000000000000000ull };
	start();
	CHECK(V.header(V.ctx, &h) == 0);
	strcpy(host, "XXXX");  /* the decoder's buffers die after the callback */
	strcpy(a0, "YYYY");
	strcpy(k, "ZZ");
	gmt_device_rec_t dr = { .ordinal = 2, .name = "NVIDIA H200", .pci_bus_id = "0000:19:00.0",
				.total_bytes = 150000000000ull, .cc_major = 9, .cc_minor = 0,
				.driver_version = 13000 };
	CHECK(V.device(V.ctx, &dr) == 0);
	const gmt_summary_t *s = S();
	CHECK_EQ_STR("node7", s->host);
	CHECK_EQ_STR("python", s->cmdline[0]);
	CHECK_EQ_STR("x.py", s->cmdline[1]);
	CHECK_EQ_STR("RANK", s->env_keys[0]);
	CHECK_EQ_STR("3", s->env_values[0]);
	CHECK_EQ_U64(42, s->pid);
	CHECK_EQ_STR("NVIDIA H200", D(2)->name);
	CHECK_EQ_U64(150000000000ull, D(2)->total_bytes);
	char b[64];
	CHECK_EQ_STR("2023-11-14T22:13:20.000000000Z", gmt_fmt_utc(b, sizeof(b), s->clock_realtime_ns));
	/* monotonic 1000 read with realtime 1700000000000000000: 1500 is 500 ns after */
	CHECK_EQ_U64(1700000000000000500ull, gmt_summary_realtime_ns(s, 1500));
	CHECK_EQ_U64(1699999999999999900ull, gmt_summary_realtime_ns(s, 900));
	CHECK_EQ_STR("17179869184 B (16.00 GiB)", gmt_fmt_bytes(b, sizeof(b), 16 * GiB));
	CHECK_EQ_STR("1572864 B (1.50 MiB)", gmt_fmt_bytes(b, sizeof(b), 3 * MiB / 2));
	CHECK_EQ_STR("512 B (0.50 KiB)", gmt_fmt_bytes(b, sizeof(b), 512));
	gmt_replay_free(R);
}

/* Many live blocks, freed in an order unrelated to insertion: exercises the
 * map's growth and backward-shift deletion. */
static void test_many_blocks(void)
{
	enum { N = 200000 };
	start();
	gmt_devent_t *b = calloc(N, sizeof(*b));
	CHECK(b != NULL);
	if (!b)
		return;
	for (int i = 0; i < N; i++)
		b[i] = (gmt_devent_t){ .ts = (uint64_t)i, .type = GMT_EV_ALLOC, .device = 0,
				       .addr = 0x700000000000ull + (uint64_t)i * 512, .size = (uint64_t)(i % 7) + 1,
				       .aux = GMT_AUX(GMT_KIND_PLAIN, 0, 0) };
	CHECK(V.events(V.ctx, b, N, 0) == 0);
	uint64_t total = 0;
	for (int i = 0; i < N; i++)
		total += (uint64_t)(i % 7) + 1;
	CHECK_EQ_U64(total, D(0)->live.total);
	CHECK_EQ_U64(total, D(0)->peak.total);
	/* free every block, stepping by a number prime to N */
	for (int i = 0; i < N; i++) {
		uint64_t j = ((uint64_t)i * 7919) % N;
		b[i] = (gmt_devent_t){ .ts = (uint64_t)(N + i), .type = GMT_EV_FREE, .device = -1,
				       .addr = 0x700000000000ull + j * 512 };
	}
	CHECK(V.events(V.ctx, b, N, 0) == 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(N, D(0)->n_free[GMT_KIND_PLAIN]);
	CHECK_EQ_U64(0, S()->anom.unmatched_frees);
	free(b);
	gmt_replay_free(R);
}

static void check_sums(const gmt_composition_t *c, const char *what)
{
	uint64_t k = 0, o = 0;
	for (int i = 0; i < GMT_DKINDS; i++)
		k += c->kind[i];
	for (int i = 0; i < GMT_DOWNERS; i++)
		o += c->owner[i];
	if (k != c->total || o != c->total) {
		fprintf(stderr, "%s: total %" PRIu64 ", kinds %" PRIu64 ", owners %" PRIu64 "\n",
			what, c->total, k, o);
		gmt_test_failures++;
	}
}

/* Random events of every type over a small set of addresses, handles and
 * devices (so that they collide): never a crash, and every composition sums
 * to its total, every live value stays under its maximum. */
static void test_random_invariants(void)
{
	enum { N = 300000, B = 64 };
	uint64_t seed = 88172645463325252ull;
	gmt_devent_t b[B];
	start();
	for (int i = 0; i < N / B; i++) {
		for (int j = 0; j < B; j++) {
			seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
			uint64_t x = seed;
			b[j] = (gmt_devent_t){ .ts = (uint64_t)(i * B + j), .type = (uint16_t)(x % 27),
					       .device = (int16_t)((x >> 8) % 4) - 1,
					       .addr = ((x >> 12) % 64) * 4096, .size = (x >> 20) % 100000,
					       .stream = (x >> 40) % 64 * 4096,
					       .aux = GMT_AUX((x >> 50) % 7, 0, (x >> 54) % 3),
					       .thread = (uint32_t)(x >> 60) };
		}
		CHECK(V.events(V.ctx, b, B, (unsigned)(i & 1)) == 0);
		for (int dv = -1; dv < 3; dv++) {
			const gmt_dev_summary_t *d = gmt_summary_device(S(), dv);
			if (!d)
				continue;
			check_sums(&d->live, "live");
			check_sums(&d->peak, "peak");
			CHECK(d->live.total <= d->peak.total);
			for (int k = 0; k < GMT_DKINDS; k++)
				CHECK(d->live.kind[k] <= d->kind_max[k]);
		}
		CHECK(S()->host_live <= S()->host_peak);
		CHECK(S()->va_live <= S()->va_peak);
	}
	/* the sequence reached the paths it is meant to shake */
	CHECK(S()->anom.overlapping_allocations > 0);
	CHECK(S()->anom.voided_frees > 0);
	CHECK(S()->vmm_released_while_mapped > 0);
	CHECK(S()->fails_total > 0);
	CHECK_EQ_U64(N / B * B, S()->events);
	CHECK_EQ_U64(N / B / 2 * B, S()->late_events);
	gmt_replay_free(R);
}

/* Contexts take their blocks. Without CTX_CURRENT (a trace before 1.3)
 * the blocks' context is unknown: a destruction beside another live
 * context of the device releases nothing (ambiguous), the device's last
 * context releases them all. With CTX_CURRENT each block goes with its own
 * context; the primary context keeps its handle across a reset, and what
 * is allocated after the reset goes with the next destruction. */
static void test_contexts(void)
{
	start();
	ev(GMT_EV_PRIMARY_RETAIN, 10, 0, 0xF0, 0, 0, 0);
	ev(GMT_EV_CTX_CREATE, 11, 0, 0xC0, 0, 0, 0);
	alloc(20, 0, 0xA000, 100, GMT_KIND_PLAIN, GMT_OWNER_APP);
	ev(GMT_EV_CTX_DESTROY, 30, 0, 0xC0, 0, 0, 0);
	CHECK_EQ_U64(1, S()->anom.ambiguous_ctx_destroys);
	CHECK_EQ_U64(100, D(0)->live.total);
	CHECK_EQ_U64(0, D(0)->ctx_released_blocks);
	ev(GMT_EV_CTX_DESTROY, 40, 0, 0, 0, 0, GMT_CTX_PRIMARY);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(100, D(0)->ctx_released_bytes);
	CHECK_EQ_U64(2, D(0)->ctx_destroys);
	gmt_replay_free(R);

	start();
	ev(GMT_EV_PRIMARY_RETAIN, 10, 0, 0xF0, 0, 0, 0);
	ev(GMT_EV_CTX_CURRENT, 11, 0, 0xF0, 0, 0, 0);
	alloc(12, 0, 0xA000, 100, GMT_KIND_PLAIN, GMT_OWNER_APP);
	alloc(13, 0, 0xC000, 64, GMT_KIND_HOST, GMT_OWNER_APP);
	cur_thread = 1;
	ev(GMT_EV_CTX_CREATE, 20, 0, 0xC0, 0, 0, 0);
	ev(GMT_EV_CTX_CURRENT, 21, 0, 0xC0, 0, 0, 0);
	alloc(22, 0, 0xB000, 200, GMT_KIND_ASYNC, GMT_OWNER_APP);
	ev(GMT_EV_CTX_DESTROY, 30, 0, 0xC0, 0, 0, 0);
	CHECK_EQ_U64(0, S()->anom.ambiguous_ctx_destroys);
	CHECK_EQ_U64(100, D(0)->live.total);              /* B went, A stays */
	CHECK_EQ_U64(200, D(0)->ctx_released_bytes);
	CHECK_EQ_U64(30, D(0)->ctx_release_ts);
	cur_thread = 0;
	ev(GMT_EV_CTX_DESTROY, 40, 0, 0, 0, 0, GMT_CTX_PRIMARY | GMT_CTX_RESET);
	CHECK_EQ_U64(0, D(0)->live.total);                /* A and H went */
	CHECK_EQ_U64(300, D(0)->ctx_released_bytes);
	CHECK_EQ_U64(3, D(0)->ctx_released_blocks);
	CHECK_EQ_U64(64, S()->host_ctx_released);
	CHECK_EQ_U64(0, S()->host_live);
	ev(GMT_EV_PRIMARY_RETAIN, 50, 0, 0xF0, 0, 0, 0);
	alloc(51, 0, 0xD000, 50, GMT_KIND_PLAIN, GMT_OWNER_APP);   /* P, after the reset */
	alloc(52, 1, 0xE000, 70, GMT_KIND_PLAIN, GMT_OWNER_APP);   /* another device */
	ev(GMT_EV_CTX_DESTROY, 60, 0, 0, 0, 0, GMT_CTX_PRIMARY);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(350, D(0)->ctx_released_bytes);
	CHECK_EQ_U64(60, D(0)->ctx_release_ts);
	CHECK_EQ_U64(70, D(1)->live.total);
	CHECK_EQ_U64(3, D(0)->ctx_destroys);
	CHECK_EQ_U64(0, S()->anom.ambiguous_ctx_destroys);
	gmt_replay_free(R);

	/* The primary context's retain unseen (a runtime retaining it where
	 * no hook sees it): its reset still takes the blocks of the context
	 * that cuCtxCreate did not make, and only those. */
	start();
	ev(GMT_EV_CTX_CURRENT, 10, 0, 0xF0, 0, 0, 0);
	alloc(11, 0, 0xA000, 100, GMT_KIND_PLAIN, GMT_OWNER_APP);
	cur_thread = 1;
	ev(GMT_EV_CTX_CREATE, 20, 0, 0xC0, 0, 0, 0);
	ev(GMT_EV_CTX_CURRENT, 21, 0, 0xC0, 0, 0, 0);
	alloc(22, 0, 0xB000, 200, GMT_KIND_PLAIN, GMT_OWNER_APP);
	ev(GMT_EV_CTX_DESTROY, 30, 0, 0, 0, 0, GMT_CTX_PRIMARY | GMT_CTX_RESET);
	CHECK_EQ_U64(200, D(0)->live.total);              /* A went, B stays */
	CHECK_EQ_U64(100, D(0)->ctx_released_bytes);
	CHECK_EQ_U64(0, S()->anom.ambiguous_ctx_destroys);
	ev(GMT_EV_CTX_DESTROY, 40, 0, 0xC0, 0, 0, 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(300, D(0)->ctx_released_bytes);
	gmt_replay_free(R);
}


static void ev_id(unsigned type, uint64_t ts, uint64_t addr, uint64_t size, uint32_t id, unsigned flags)
{
	gmt_devent_t e = { .ts = ts, .addr = addr, .size = size, .type = (uint16_t)type,
			   .aux = GMT_AUX(GMT_KIND_PLAIN, 0, 0), .alloc_id = id };
	CHECK(V.events(V.ctx, &e, 1, flags) == 0);
}

/* Blocks by allocation id (1.4) beside blocks by address: a free by
 * address of a block that has an id (a LATE free) finds it, an ALLOC
 * without id at an id'd block's address replaces it, a reused id after
 * that, and IDS_RESET: the old ids' blocks stay live, found by address. */
static void test_ids(void)
{
	start();
	ev_id(GMT_EV_ALLOC, 1, 0xA000, 100, 1, 0);
	ev_id(GMT_EV_ALLOC, 2, 0xB000, 200, 2, 0);
	ev_id(GMT_EV_FREE, 3, 0xA000, 0, 0, GMT_EVENTS_LATE);     /* by address */
	CHECK_EQ_U64(200, D(0)->live.total);
	CHECK_EQ_U64(0, S()->anom.unmatched_frees);
	ev_id(GMT_EV_ALLOC, 4, 0xB000, 50, 0, 0);                  /* repeats id 2's address */
	CHECK_EQ_U64(1, S()->anom.overlapping_allocations);
	CHECK_EQ_U64(50, D(0)->live.total);
	ev_id(GMT_EV_ALLOC, 5, 0xC000, 300, 1, 0);                 /* id 1 again */
	CHECK_EQ_U64(350, D(0)->live.total);
	ev_id(GMT_EV_FREE, 6, 0xB000, 0, 0, 0);
	ev_id(GMT_EV_FREE, 7, 0xC000, 0, 1, 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	ev_id(GMT_EV_FREE, 8, 0xC000, 0, 0, 0);                    /* freed already */
	CHECK_EQ_U64(1, S()->anom.unmatched_frees);
	ev_id(GMT_EV_ALLOC, 9, 0xD000, 400, 1, 0);
	ev_id(GMT_EV_ALLOC, 10, 0xE000, 500, 1, GMT_EVENTS_IDS_RESET);
	CHECK_EQ_U64(900, D(0)->live.total);
	CHECK_EQ_U64(900, D(0)->peak.total);
	CHECK_EQ_U64(10, D(0)->peak_ts);
	ev_id(GMT_EV_FREE, 11, 0xD000, 0, 0, 0);                   /* before the reset: by address */
	CHECK_EQ_U64(500, D(0)->live.total);
	ev_id(GMT_EV_FREE, 12, 0xE000, 0, 1, 0);
	CHECK_EQ_U64(0, D(0)->live.total);
	CHECK_EQ_U64(1, S()->anom.unmatched_frees);
	CHECK_EQ_U64(1, S()->anom.overlapping_allocations);
	CHECK_EQ_U64(5, D(0)->n_free[GMT_KIND_PLAIN]);
	gmt_replay_free(R);
}

/* The writer's id rule (tracer/gmt_writer.c), for the test below: an ALLOC
 * takes the last freed id or the next new one, unless its address is live
 * (then none, and the address is forgotten); a FREE names the live id of
 * its address. */
typedef struct idsim {
	uint64_t addr[4096];
	uint32_t id[4096], n;
	uint32_t freed[4096], n_freed, next;
} idsim_t;

static uint32_t sim_find(idsim_t *m, uint64_t addr)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->addr[i] == addr)
			return i + 1;
	return 0;
}

static void sim_drop(idsim_t *m, uint32_t k)
{
	m->addr[k - 1] = m->addr[m->n - 1];
	m->id[k - 1] = m->id[m->n - 1];
	m->n--;
}

static uint32_t sim_ids(idsim_t *m, const gmt_devent_t *e)
{
	uint32_t k = e->addr ? sim_find(m, e->addr) : 0;
	if (e->type == GMT_EV_FREE) {
		if (!k)
			return 0;
		uint32_t id = m->id[k - 1];
		m->freed[m->n_freed++] = id;
		sim_drop(m, k);
		return id;
	}
	if (e->type != GMT_EV_ALLOC || !e->addr)
		return 0;
	if (k) {
		sim_drop(m, k);
		return 0;
	}
	uint32_t id = m->n_freed ? m->freed[--m->n_freed] : ++m->next;
	m->addr[m->n] = e->addr;
	m->id[m->n++] = id;
	return id;
}

static char *report_of(const gmt_devent_t *evs, size_t n, const uint8_t *resets, int with_ids,
		       size_t *len)
{
	start();
	for (size_t i = 0; i < n; i += 64) {
		gmt_devent_t b[64];
		size_t k = n - i < 64 ? n - i : 64;
		memcpy(b, evs + i, k * sizeof(*b));
		for (size_t j = 0; j < k && !with_ids; j++)
			b[j].alloc_id = 0;
		unsigned flags = with_ids && resets[i / 64] ? GMT_EVENTS_IDS_RESET : 0;
		CHECK(V.events(V.ctx, b, k, flags) == 0);
	}
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	gmt_report_text(f, gmt_replay_finish(R, NULL), NULL);
	fclose(f);
	gmt_replay_free(R);
	return buf;
}

/* Random streams with the writer's ids: the report is the same, byte for
 * byte, as that of the same events without ids (all by address), through
 * overlaps, frees of unknown addresses, FREE_FAILs, contexts and resets. */
static void test_ids_random(void)
{
	enum { N = 200000 };
	static gmt_devent_t evs[N];
	static uint8_t resets[N / 64 + 1];
	static const unsigned types[] = { GMT_EV_ALLOC, GMT_EV_ALLOC, GMT_EV_ALLOC, GMT_EV_FREE,
					  GMT_EV_FREE, GMT_EV_FREE, GMT_EV_FREE_FAIL, GMT_EV_CTX_DESTROY,
					  GMT_EV_CTX_CREATE, GMT_EV_CTX_CURRENT };
	uint64_t seed = 0x2545F4914F6CDD1Dull;
	static idsim_t m;
	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < N; i++) {
		seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
		uint64_t x = seed;
		if (i % 64 == 0 && (x >> 58) == 0) {
			/* a lost frame: the writer forgets its ids */
			memset(&m, 0, sizeof(m));
			resets[i / 64] = 1;
		}
		unsigned t = types[x % 10];
		if (t >= GMT_EV_CTX_CREATE && (x >> 4) % 64)
			t = GMT_EV_ALLOC;   /* contexts rarely */
		gmt_devent_t *e = &evs[i];
		*e = (gmt_devent_t){ .ts = i, .type = (uint16_t)t, .device = (int16_t)((x >> 10) % 3) - 1,
				     .addr = ((x >> 12) % 2000) * 4096, .size = (x >> 24) % 100000,
				     .aux = GMT_AUX(1 + (x >> 40) % 2, 0, (x >> 44) % 2),
				     .thread = (uint32_t)((x >> 48) % 3) };
		if (t == GMT_EV_CTX_CREATE || t == GMT_EV_CTX_DESTROY || t == GMT_EV_CTX_CURRENT)
			e->addr = 0x100 + (x >> 50) % 3;
		else if ((x >> 52) % 256)
			e->alloc_id = sim_ids(&m, e);
		/* else a LATE event: no id, the writer's map untouched */
	}
	size_t la, lb;
	char *a = report_of(evs, N, resets, 1, &la), *b = report_of(evs, N, resets, 0, &lb);
	CHECK(a && b);
	CHECK_EQ_U64(lb, la);
	CHECK(a && b && strcmp(a, b) == 0);
	CHECK(b && strstr(b, "overlapping") != NULL);
	free(a);
	free(b);
}

/* Taken from the device = live + the pools' reserve beyond the live
 * stream-ordered bytes. Device 0: a plain 100 MiB block, then a pool
 * reserving 400 MiB for 300 MiB of stream-ordered blocks (taken 500), a
 * free of 200 MiB of them (live 200, taken still 500: the pool keeps it),
 * the pool grown to 600 MiB (taken 700 at t=60), a second pool of device 0
 * in host memory (never counted) and one of device 1 (its own), the first
 * pool destroyed (taken = live again). */
static void test_taken_from_device(void)
{
	const uint64_t p0 = 0x9001, ph = 0x9002, p1 = 0x9003;
	start();
	alloc(10, 0, 0x1000, 100 * MiB, GMT_KIND_PLAIN, GMT_OWNER_APP);
	alloc(20, 0, 0x2000, 200 * MiB, GMT_KIND_ASYNC, GMT_OWNER_APP);
	alloc(21, 0, 0x3000, 100 * MiB, GMT_KIND_ASYNC, GMT_OWNER_APP);
	ev(GMT_EV_POOL_RESERVED, 22, 0, 400 * MiB, 400 * MiB, p0, 0);
	CHECK_EQ_U64(500 * MiB, D(0)->taken_peak);
	CHECK_EQ_U64(22, D(0)->taken_peak_ts);
	CHECK_EQ_U64(100 * MiB, D(0)->taken_peak_reserve);
	ev(GMT_EV_FREE, 30, 0, 0x2000, 0, 0, GMT_AUX(GMT_KIND_ASYNC, 0, 0));
	ev(GMT_EV_POOL_CREATE, 40, -1, 0, 0, ph, 1);            /* host memory */
	ev(GMT_EV_POOL_RESERVED, 41, 0, 64 * MiB, 64 * MiB, ph, 0);
	ev(GMT_EV_POOL_RESERVED, 50, 1, 32 * MiB, 32 * MiB, p1, 0);
	ev(GMT_EV_POOL_RESERVED, 60, 0, 600 * MiB, 600 * MiB, p0, 0);
	CHECK_EQ_U64(400 * MiB, D(0)->peak.total);               /* held by live allocations */
	CHECK_EQ_U64(21, D(0)->peak_ts);
	CHECK_EQ_U64(700 * MiB, D(0)->taken_peak);
	CHECK_EQ_U64(60, D(0)->taken_peak_ts);
	CHECK_EQ_U64(500 * MiB, D(0)->taken_peak_reserve);
	CHECK_EQ_U64(32 * MiB, D(1)->taken_peak);
	ev(GMT_EV_POOL_DESTROY, 70, 0, 0, 0, p0, 0);
	alloc(80, 0, 0x4000, 50 * MiB, GMT_KIND_PLAIN, GMT_OWNER_APP);
	gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(250 * MiB, D(0)->live.total);
	CHECK_EQ_U64(250 * MiB, D(0)->taken_final);
	CHECK_EQ_U64(0, D(0)->taken_final_reserve);
	CHECK_EQ_U64(700 * MiB, D(0)->taken_peak);
	CHECK_EQ_U64(32 * MiB, D(1)->taken_final);
	CHECK_EQ_U64(32 * MiB, D(1)->taken_final_reserve);
	gmt_replay_free(R);
}

/* What a trace may lack: two untraced look-ups of one name and one of
 * another (2 entry points, 3 look-ups; one traced through its prototype
 * does not count), NVTX only, the stub driver; CUDA activity without an
 * allocation, then with one. */
static void test_gaps(void)
{
	char b[512];
	start();
	ev(GMT_EV_PROC_UNIDENTIFIED, 10, -1, 7, 12000, 0, 0);
	ev(GMT_EV_PROC_UNIDENTIFIED, 11, -1, 7, 12000, 0, 0);
	ev(GMT_EV_PROC_UNIDENTIFIED, 12, -1, 8, 12000, 0, 0);
	ev(GMT_EV_PROC_UNIDENTIFIED, 13, -1, 9, 12000, 0, 5);
	ev(GMT_EV_CTX_CREATE, 20, 0, 0xc0, 0, 0, 0);
	ev(GMT_EV_SYNC, 30, 0, 25, 0, 0, 0);
	ev(GMT_EV_RANGE_BEGIN, 40, -1, 0, 0, 0, 0);
	const gmt_summary_t *s = gmt_replay_finish(R, NULL);
	CHECK_EQ_U64(2, s->gaps.untraced_entry_points);
	CHECK_EQ_U64(3, s->gaps.untraced_lookups);
	CHECK_EQ_U64(3, s->gaps.cuda_activity);
	CHECK(s->gaps.activity_without_allocations);
	CHECK(s->gaps.incomplete);
	CHECK(!s->gaps.nvtx_only && !s->gaps.driver_stub);
	CHECK(gmt_gap_line(&s->gaps, 0, b, sizeof(b)));
	CHECK_EQ_STR("trace incomplete: 2 untraced entry points (cuGetProcAddress returned a function the "
		     "preload could not identify, 3 look-ups): the calls made through them are not in the trace", b);
	CHECK(gmt_gap_line(&s->gaps, 1, b, sizeof(b)));
	CHECK_EQ_STR("no allocation: the trace holds CUDA activity (3 events: contexts, synchronisations, "
		     "ranges, samples) but no allocation of any route", b);
	CHECK(!gmt_gap_line(&s->gaps, 2, b, sizeof(b)));
	gmt_replay_free(R);

	start();
	ev(GMT_EV_NVTX_ONLY, 5, -1, 0, 0, 0, 0);
	ev(GMT_EV_DRIVER_STUB, 6, -1, 3, 0, 0, 0);
	ev(GMT_EV_MEMINFO, 7, 0, 1, 2, 0, 0);
	alloc(8, 0, 0x1000, 4096, GMT_KIND_PLAIN, GMT_OWNER_APP);
	s = gmt_replay_finish(R, NULL);
	CHECK(s->gaps.nvtx_only && s->gaps.driver_stub && s->gaps.incomplete);
	CHECK_EQ_U64(0, s->gaps.untraced_entry_points);
	CHECK(!s->gaps.activity_without_allocations);
	CHECK(gmt_gap_line(&s->gaps, 0, b, sizeof(b)));
	CHECK(!strncmp(b, "trace incomplete: the preload was loaded only as an NVTX injection", 66));
	CHECK(gmt_gap_line(&s->gaps, 1, b, sizeof(b)));
	CHECK(!strncmp(b, "no GPU: the process loaded NVIDIA's stub libcuda", 48));
	CHECK(!gmt_gap_line(&s->gaps, 2, b, sizeof(b)));
	gmt_replay_free(R);

	/* what this analyzer could not read: a newer minor's records and
	 * fields (from the decode result), events of an unknown type */
	start();
	alloc(8, 0, 0x1000, 4096, GMT_KIND_PLAIN, GMT_OWNER_APP);
	ev(200, 9, -1, 0, 0, 0, 0);
	gmt_decode_result_t res = { .status = GMT_DECODE_OK, .format_major = 1,
				    .format_minor = GMT_FORMAT_MINOR + 4, .newer_records = 2,
				    .newer_fields = 1, .newer_tags = { 100, 103 }, .n_newer_tags = 2 };
	s = gmt_replay_finish(R, &res);
	CHECK(s->gaps.incomplete);
	CHECK_EQ_U64(2, s->gaps.newer_records);
	CHECK_EQ_U64(1, s->gaps.newer_fields);
	CHECK_EQ_U64(1, s->gaps.unknown_events);
	char want[512];
	snprintf(want, sizeof(want), "trace incomplete: the trace is format 1.%d, this analyzer reads 1.%d: "
		 "2 records of kinds it does not know were skipped (tags 100, 103); 1 record had newer "
		 "fields it did not read; 1 event of a type it does not know was counted, not replayed: "
		 "the numbers below may miss what they held (a newer gpumemtrace-analyze reads them)",
		 GMT_FORMAT_MINOR + 4, GMT_FORMAT_MINOR);
	CHECK(gmt_gap_line(&s->gaps, 0, b, sizeof(b)));
	CHECK_EQ_STR(want, b);
	CHECK(!gmt_gap_line(&s->gaps, 1, b, sizeof(b)));
	gmt_replay_free(R);
}

/* Times and types counted over a batch (rp_events' count_events): the
 * earliest and latest time whatever their order, the latest time's type
 * the last of that time in file order (an EXEC last: the process ended
 * by exec), every type counted; a later batch whose last event ties the
 * latest time takes its type. */
static void test_batch_counts(void)
{
	start();
	gmt_devent_t b[5] = {
		{ .ts = 10, .type = GMT_EV_ALLOC, .addr = 0x1000, .size = 64, .aux = GMT_AUX(GMT_KIND_PLAIN, 0, 0) },
		{ .ts = 5, .type = GMT_EV_SYNC, .device = 0 },
		{ .ts = 20, .type = GMT_EV_SYNC, .device = 0 },
		{ .ts = 20, .type = GMT_EV_EXEC, .device = -1 },
		{ .ts = 7, .type = GMT_EV_SYNC, .device = 0 },
	};
	CHECK(V.events(V.ctx, b, 5, 0) == 0);
	CHECK_EQ_U64(5, S()->first_ts);
	CHECK_EQ_U64(20, S()->last_ts);
	CHECK_EQ_U64(GMT_EV_EXEC, S()->last_type);
	CHECK_EQ_U64(3, S()->by_type[GMT_EV_SYNC]);
	CHECK_EQ_U64(1, S()->by_type[GMT_EV_ALLOC]);
	CHECK_EQ_U64(1, S()->by_type[GMT_EV_EXEC]);
	CHECK_EQ_U64(64, D(0)->live.total);
	const gmt_summary_t *s = gmt_replay_finish(R, NULL);
	CHECK_EQ_STR("exec", s->process_end);
	gmt_replay_free(R);

	start();
	CHECK(V.events(V.ctx, b, 4, 0) == 0);
	gmt_devent_t tie = { .ts = 20, .type = GMT_EV_SYNC, .device = 0 };
	CHECK(V.events(V.ctx, &tie, 1, 0) == 0);
	CHECK_EQ_U64(GMT_EV_SYNC, S()->last_type);
	CHECK_EQ_U64(5, S()->first_ts);
	s = gmt_replay_finish(R, NULL);
	CHECK_EQ_STR("cut", s->process_end);
	gmt_replay_free(R);
}

int main(void)
{
	test_peak_vs_independent_maxima();
	test_owner_buckets();
	test_vmm();
	test_vmm_unmapped_before_release();
	test_vmm_retained_handle();
	test_host_pinned_apart();
	test_free_fail_and_unmatched();
	test_overlapping_alloc();
	test_two_devices();
	test_failed_allocation();
	test_pools_drops_end_late();
	test_header_copied();
	test_many_blocks();
	test_random_invariants();
	test_contexts();
	test_ids();
	test_ids_random();
	test_taken_from_device();
	test_gaps();
	test_batch_counts();
	TEST_DONE();
}
