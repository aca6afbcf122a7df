/* unit_liveset_onepass: each device's peak and the live set at it, found in
 * the same pass as the replay (gmt_liveset_new with maxima), on synthetic
 * events whose answers are known by construction, then on random event
 * streams against the engine's other way (GMT_AT_PEAK: the peak's bytes
 * known beforehand, the set taken right after the first event that reaches
 * them).
 *
 * The known stream (event numbers from 1; ts in brackets):
 *   device 0:  1 [10] A 100 s1          total 100
 *              2 [20] B  50 s2          150
 *              3 [30] free B            100
 *              4 [40] C  80 s3          180  (a peak)
 *              5 [50] free A            80   (A was live at the peak)
 *              6 [60] free C  \  realloc-like, one instant: 0, then
 *              7 [60] D 170 s4 /        170  (not a peak)
 *              8 [70] E  20 s1 (nccl)   190  (a peak)
 *              9 [80] free D  \  realloc-like at the peak instant:
 *             10 [80] F 175 s5 /        195  (THE peak: E 20 s1 + F 175 s5)
 *             11 [90] free E            175  (E was live at the peak) ...
 *             12 [90] FREE_FAIL E       195  ... undone: E live again (no rise)
 *             13 [95] free F            20
 *   device 1, between them:
 *             14 [100] G 1000 s7 (cublas)
 *             15 [110] VMM handle H 500 s8
 *             16 [120] G2 10 s7 (nccl)  1510 (THE peak: s7 1010 in 2, owner
 *                                       nccl = the lowest; s8 500)
 *             17 [130] free G           510
 *             18 [140] release H        10
 *   device 2:  19 [150] X 300 s9        300 (THE peak)
 *             20 [160] free X           0   (live at it: freed since)
 *             21 [170] Y 300 s10        300 (equal: the peak stays at 19)
 *   no device: 22 [180] 4096 B s12      (never a peak of its own)
 * The stream is fed in batches cut everywhere, one event each, and whole.
 */
#include "engines/gmt_liveset.h"
#include "engines/gmt_replay.h"
#include "gmt_test.h"

#define KP GMT_KIND_PLAIN

static gmt_devent_t mk(unsigned type, uint64_t ts, int dev, uint64_t addr, uint64_t size, uint32_t stack,
		       unsigned owner)
{
	gmt_devent_t e;
	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.ts = ts;
	e.device = (int16_t)dev;
	e.addr = addr;
	e.size = size;
	e.stack = stack;
	e.aux = GMT_AUX(type == GMT_EV_VMM_CREATE ? GMT_KIND_VMM : KP, 0, owner);
	return e;
}

/* Runs events ev[0..n) through a replay with the engine, batches of at
 * most `batch` events (0: all at once); at[] instants too. Returns the
 * maxima (caller frees). */
static gmt_instant_t *run(const gmt_devent_t *ev, size_t n, size_t batch, int maxima, gmt_instant_t *const *at,
			  size_t n_at, size_t *n_max)
{
	gmt_replay_t *rp = gmt_replay_new("synthetic.gmt");
	CHECK(rp != NULL);
	gmt_liveset_t *l = gmt_liveset_new(rp, at, n_at, maxima);
	CHECK(l != NULL);
	/* each batch in the same buffer, as the decoder hands them over */
	gmt_devent_t *buf = calloc(n ? n : 1, sizeof(*buf));
	CHECK(buf != NULL);
	for (size_t i = 0; buf && i < n;) {
		size_t k = batch && batch < n - i ? batch : n - i;
		memcpy(buf, &ev[i], k * sizeof(*buf));
		CHECK_EQ_U64(0, gmt_liveset_events(l, buf, k, 0));
		memset(buf, 0xff, k * sizeof(*buf));
		i += k;
	}
	free(buf);
	gmt_instant_t *mx = NULL;
	*n_max = 0;
	CHECK_EQ_U64(0, gmt_liveset_finish(l, &mx, n_max));
	gmt_liveset_free(l);
	gmt_replay_free(rp);
	return mx;
}

static void free_max(gmt_instant_t *mx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gmt_instant_clear(&mx[i]);
	free(mx);
}

static void check_group(const gmt_instant_t *at, size_t i, uint32_t stack, unsigned owner, uint64_t bytes,
			uint64_t count)
{
	CHECK(i < at->n_groups);
	if (i >= at->n_groups)
		return;
	CHECK_EQ_U64(stack, at->groups[i].stack);
	CHECK_EQ_U64(owner, at->groups[i].owner);
	CHECK_EQ_U64(bytes, at->groups[i].bytes);
	CHECK_EQ_U64(count, at->groups[i].count);
}

static void known(void)
{
	gmt_devent_t ev[22];
	size_t n = 0;
	ev[n++] = mk(GMT_EV_ALLOC, 10, 0, 0xa000, 100, 1, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 20, 0, 0xb000, 50, 2, 0);
	ev[n++] = mk(GMT_EV_FREE, 30, 0, 0xb000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 40, 0, 0xc000, 80, 3, 0);
	ev[n++] = mk(GMT_EV_FREE, 50, 0, 0xa000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_FREE, 60, 0, 0xc000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 60, 0, 0xd000, 170, 4, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 70, 0, 0xe000, 20, 1, GMT_OWNER_NCCL);
	ev[n++] = mk(GMT_EV_FREE, 80, 0, 0xd000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 80, 0, 0xf000, 175, 5, 0);
	ev[n++] = mk(GMT_EV_FREE, 90, 0, 0xe000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_FREE_FAIL, 90, 0, 0xe000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_FREE, 95, 0, 0xf000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 100, 1, 0x10000, 1000, 7, GMT_OWNER_CUBLAS);
	ev[n++] = mk(GMT_EV_VMM_CREATE, 110, 1, 0x77, 500, 8, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 120, 1, 0x20000, 10, 7, GMT_OWNER_NCCL);
	ev[n++] = mk(GMT_EV_FREE, 130, 1, 0x10000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_VMM_RELEASE, 140, 1, 0x77, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 150, 2, 0x30000, 300, 9, 0);
	ev[n++] = mk(GMT_EV_FREE, 160, 2, 0x30000, 0, 0, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 170, 2, 0x40000, 300, 10, 0);
	ev[n++] = mk(GMT_EV_ALLOC, 180, -1, 0x50000, 4096, 12, 0);
	size_t nm = 0;
	gmt_instant_t *mx = NULL;
	const size_t batches[] = { 1, 2, 3, 5, 0 };
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		/* with an instant by event number on the way: after the FREE_FAIL */
		gmt_instant_t after12 = { .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 12 };
		gmt_instant_t *ap = &after12;
		mx = run(ev, n, batches[b], 1, &ap, 1, &nm);
		CHECK_EQ_U64(3, nm);
		if (nm == 3) {
			CHECK_EQ_U64(0, mx[0].ordinal);
			CHECK_EQ_U64(195, mx[0].bytes);
			CHECK_EQ_U64(10, mx[0].at_seq);
			CHECK_EQ_U64(80, mx[0].at_ts);
			CHECK_EQ_U64(2, mx[0].n_groups);
			check_group(&mx[0], 0, 5, 0, 175, 1);
			check_group(&mx[0], 1, 1, GMT_OWNER_NCCL, 20, 1);
			CHECK_EQ_U64(1, mx[1].ordinal);
			CHECK_EQ_U64(1510, mx[1].bytes);
			CHECK_EQ_U64(16, mx[1].at_seq);
			CHECK_EQ_U64(120, mx[1].at_ts);
			CHECK_EQ_U64(2, mx[1].n_groups);
			check_group(&mx[1], 0, 7, GMT_OWNER_NCCL, 1010, 2);
			check_group(&mx[1], 1, 8, 0, 500, 1);
			CHECK_EQ_U64(2, mx[2].ordinal);
			CHECK_EQ_U64(300, mx[2].bytes);
			CHECK_EQ_U64(19, mx[2].at_seq);
			CHECK_EQ_U64(150, mx[2].at_ts);
			CHECK_EQ_U64(1, mx[2].n_groups);
			check_group(&mx[2], 0, 9, 0, 300, 1);
		}
		/* the instant by number: E (back, stack 1) and F */
		CHECK_EQ_U64(1, after12.taken);
		CHECK_EQ_U64(12, after12.at_seq);
		CHECK_EQ_U64(2, after12.n_groups);
		check_group(&after12, 0, 5, 0, 175, 1);
		check_group(&after12, 1, 1, GMT_OWNER_NCCL, 20, 1);
		gmt_instant_clear(&after12);
		free_max(mx, nm);
	}
	/* a device whose peak rises more often than followed is left out
	 * (the caller takes it by its bytes): devices 0 (5 rises) and 1 (3),
	 * not 2 (1) */
	gmt_liveset_max_rises = 2;
	nm = 0;
	mx = run(ev, n, 4, 1, NULL, 0, &nm);
	CHECK_EQ_U64(1, nm);
	if (nm == 1) {
		CHECK_EQ_U64(2, mx[0].ordinal);
		CHECK_EQ_U64(300, mx[0].bytes);
		check_group(&mx[0], 0, 9, 0, 300, 1);
	}
	free_max(mx, nm);
	gmt_liveset_max_rises = 3;   /* device 1 rises exactly 3 times */
	mx = run(ev, n, 0, 1, NULL, 0, &nm);
	CHECK_EQ_U64(2, nm);
	if (nm == 2) {
		CHECK_EQ_U64(1, mx[0].ordinal);
		CHECK_EQ_U64(1510, mx[0].bytes);
		CHECK_EQ_U64(2, mx[1].ordinal);
	}
	free_max(mx, nm);
	gmt_liveset_max_rises = UINT32_MAX - 1;
	/* without maxima: none */
	nm = 5;
	mx = run(ev, n, 0, 0, NULL, 0, &nm);
	CHECK_EQ_U64(0, nm);
	CHECK(mx == NULL);
}

/* A small deterministic generator. */
static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

/* Random streams on 3 devices (allocations, frees of live and unknown
 * addresses, an allocation over a live address, undone frees, handles,
 * several events at one instant): the maxima found in one pass against the
 * live set taken right after the first event that reaches each peak. */
static void random_streams(void)
{
	enum { N = 4000, ADDRS = 48 };
	static gmt_devent_t ev[N];
	for (int round = 0; round < 40; round++) {
		uint64_t ts = 1000;
		size_t n = 0;
		while (n < N) {
			if (rnd(4))
				ts += 1 + rnd(3);
			unsigned r = (unsigned)rnd(100);
			int dev = (int)rnd(3);
			uint64_t addr = 0x1000 * (1 + rnd(ADDRS)) + (uint64_t)dev * 0x1000000;
			uint32_t stack = (uint32_t)rnd(6);
			unsigned owner = (unsigned)rnd(3);
			if (r < 45) {
				ev[n++] = mk(GMT_EV_ALLOC, ts, dev, addr, 1 + rnd(1000), stack, owner);
			} else if (r < 85) {
				ev[n++] = mk(GMT_EV_FREE, ts, dev, addr, 0, 0, 0);
				if (rnd(8) == 0 && n < N)
					ev[n++] = mk(GMT_EV_FREE_FAIL, ts, dev, addr, 0, 0, 0);
			} else if (r < 93) {
				ev[n++] = mk(GMT_EV_VMM_CREATE, ts, dev, 0x100 + rnd(8), 1 + rnd(3000), stack, owner);
			} else {
				ev[n++] = mk(GMT_EV_VMM_RELEASE, ts, dev, 0x100 + rnd(8), 0, 0, 0);
			}
		}
		size_t nm = 0;
		gmt_instant_t *mx = run(ev, n, 1 + rnd(64), 1, NULL, 0, &nm);
		CHECK(nm >= 1 && nm <= 3);
		gmt_instant_t ref[3];
		gmt_instant_t *rp[3];
		for (size_t i = 0; i < nm; i++) {
			ref[i] = (gmt_instant_t){ .kind = GMT_AT_PEAK, .ordinal = mx[i].ordinal, .bytes = mx[i].bytes };
			rp[i] = &ref[i];
		}
		size_t none = 0;
		gmt_instant_t *z = run(ev, n, 1 + rnd(64), 0, rp, nm, &none);
		CHECK(z == NULL);
		for (size_t i = 0; i < nm; i++) {
			CHECK_EQ_U64(1, ref[i].taken);
			CHECK_EQ_U64(ref[i].at_seq, mx[i].at_seq);
			CHECK_EQ_U64(ref[i].at_ts, mx[i].at_ts);
			CHECK_EQ_U64(ref[i].n_groups, mx[i].n_groups);
			uint64_t sum = 0;
			for (size_t g = 0; g < ref[i].n_groups && g < mx[i].n_groups; g++) {
				check_group(&mx[i], g, ref[i].groups[g].stack, ref[i].groups[g].owner,
					    ref[i].groups[g].bytes, ref[i].groups[g].count);
				sum += mx[i].groups[g].bytes;
			}
			CHECK_EQ_U64(mx[i].bytes, sum);   /* the set at the peak is the peak */
			gmt_instant_clear(&ref[i]);
		}
		free_max(mx, nm);
		if (gmt_test_failures)
			break;
	}
}

int main(void)
{
	known();
	random_streams();
	TEST_DONE();
}
