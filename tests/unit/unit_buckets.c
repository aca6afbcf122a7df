/*
 * unit_buckets: export/gmt_buckets.c. A stream whose buckets are worked out
 * by hand in the comments, then random streams compared bucket by bucket
 * with a direct computation from the definition (every level, every field),
 * and the errors.
 */
#include <errno.h>

#include "gmt_buckets.h"
#include "gmt_test.h"

/* One series; top = the value (as a single-layer stack). */
static void add1(gmt_buckets_t *b, uint64_t t, uint64_t v)
{
	uint8_t k = 1;
	CHECK(gmt_buckets_add(b, t, &v, &k, v) == 0);
}

static void test_by_hand(void)
{
	/* 0..1000 ns in at most 8 buckets: 128 ns each (125 rounded up to a
	   power of two), 1000 / 128 + 1 = 8 buckets; then 512 ns (2), 2048 (1). */
	gmt_buckets_t *b = gmt_buckets_new(1, 1000, 8, 4, 1);
	CHECK(b != NULL);
	add1(b, 0, 10);
	add1(b, 100, 50);   /* bucket 0's top */
	add1(b, 101, 5);    /* bucket 0's low and last */
	add1(b, 300, 20);   /* bucket 2: held 5 from before, then 20 at +44 */
	add1(b, 999, 7);    /* bucket 7: held 20 (the top, from before), 7 at +103 */
	gmt_buckets_finish(b);
	CHECK_EQ_U64(3, gmt_buckets_levels(b));
	const gmt_bucket_level_t *l = gmt_buckets_level(b, 0);
	CHECK_EQ_U64(128, l->bucket_ns);
	CHECK_EQ_U64(8, l->count);
	const gmt_bucket_series_t *s = &l->series[0];
	CHECK_EQ_U64(100, l->at[0]); CHECK_EQ_U64(50, l->top[0]); CHECK_EQ_U64(5, l->low[0]);
	CHECK_EQ_U64(50, s->value[0]); CHECK_EQ_U64(5, s->min[0]); CHECK_EQ_U64(101, s->min_at[0]);
	CHECK_EQ_U64(50, s->max[0]); CHECK_EQ_U64(100, s->max_at[0]); CHECK_EQ_U64(5, s->last[0]);
	CHECK_EQ_U64(101, s->last_at[0]);
	CHECK(l->at[1] == GMT_BUCKET_BEFORE); CHECK_EQ_U64(5, l->top[1]); CHECK_EQ_U64(5, l->low[1]);
	CHECK_EQ_U64(44, l->at[2]); CHECK_EQ_U64(20, l->top[2]); CHECK_EQ_U64(5, l->low[2]);
	CHECK(s->min_at[2] == GMT_BUCKET_BEFORE); CHECK_EQ_U64(20, s->last[2]);
	for (int i = 3; i < 7; i++) {
		CHECK(l->at[i] == GMT_BUCKET_BEFORE);
		CHECK_EQ_U64(20, l->top[i]);
		CHECK_EQ_U64(20, l->low[i]);
	}
	CHECK(l->at[7] == GMT_BUCKET_BEFORE); CHECK_EQ_U64(20, l->top[7]); CHECK_EQ_U64(7, l->low[7]);
	CHECK_EQ_U64(7, s->min[7]); CHECK_EQ_U64(103, s->min_at[7]); CHECK_EQ_U64(7, s->last[7]);
	l = gmt_buckets_level(b, 1);
	s = &l->series[0];
	CHECK_EQ_U64(512, l->bucket_ns); CHECK_EQ_U64(2, l->count);
	CHECK_EQ_U64(100, l->at[0]); CHECK_EQ_U64(50, l->top[0]); CHECK_EQ_U64(5, l->low[0]);
	CHECK_EQ_U64(101, s->min_at[0]); CHECK_EQ_U64(20, s->last[0]);
	CHECK(l->at[1] == GMT_BUCKET_BEFORE); CHECK_EQ_U64(20, l->top[1]); CHECK_EQ_U64(7, l->low[1]);
	CHECK_EQ_U64(487, s->min_at[1]);  /* 3 * 128 + 103 */
	CHECK_EQ_U64(487, s->last_at[1]);
	CHECK_EQ_U64(44 + 256, s->last_at[0]);  /* bucket 2's last, set at +44 */
	l = gmt_buckets_level(b, 2);
	CHECK_EQ_U64(2048, l->bucket_ns); CHECK_EQ_U64(1, l->count);
	CHECK_EQ_U64(50, l->top[0]); CHECK_EQ_U64(100, l->at[0]); CHECK_EQ_U64(5, l->low[0]);
	CHECK_EQ_U64(7, l->series[0].last[0]);
	gmt_buckets_free(b);
}

struct inst {
	uint64_t t, top;
	uint64_t v[3];
	uint8_t k[3];
};

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

/* The definition: bucket j's candidates are the state held since before it
   (the last instant before its start) and its instants. */
static void check_level(const gmt_bucket_level_t *l, const struct inst *in, size_t n)
{
	size_t next = 0;
	const struct inst *held = NULL;
	for (size_t j = 0; j < l->count; j++) {
		uint64_t start = j * l->bucket_ns, end = start + l->bucket_ns;
		int have = 0;
		int64_t at = GMT_BUCKET_BEFORE;
		uint64_t top = 0, low = 0, val[3] = { 0 }, mn[3] = { 0 }, mx[3] = { 0 }, last[3] = { 0 };
		int64_t mn_at[3], mx_at[3], last_at[3];
		uint8_t kn[3] = { 0 }, has[3] = { 0 };
		size_t first = next;
		while (next < n && in[next].t < end)
			next++;
		for (size_t c = (held ? first - 1 : first); c < next; c++) {
			const struct inst *x = &in[c];
			int64_t off = c < first ? GMT_BUCKET_BEFORE : (int64_t)(x->t - start);
			if (!have || x->top > top) {
				at = off; top = x->top;
				for (int s = 0; s < 3; s++) { val[s] = x->k[s] ? x->v[s] : 0; kn[s] = x->k[s]; }
			}
			if (!have || x->top < low)
				low = x->top;
			have = 1;
			for (int s = 0; s < 3; s++) {
				if (!x->k[s])
					continue;
				if (!has[s] || x->v[s] < mn[s]) { mn[s] = x->v[s]; mn_at[s] = off; }
				if (!has[s] || x->v[s] > mx[s]) { mx[s] = x->v[s]; mx_at[s] = off; }
				has[s] = 1;
				last[s] = x->v[s];
				last_at[s] = off;
			}
		}
		if (next > 0)
			held = &in[next - 1];
		CHECK_EQ_U64(have, l->state[j]);
		if (!have)
			continue;
		CHECK_EQ_U64(at, l->at[j]);
		CHECK_EQ_U64(top, l->top[j]);
		CHECK_EQ_U64(low, l->low[j]);
		for (int s = 0; s < 3; s++) {
			const gmt_bucket_series_t *x = &l->series[s];
			CHECK_EQ_U64(val[s], x->value[j]);
			CHECK_EQ_U64(kn[s], x->known[j]);
			CHECK_EQ_U64(has[s], x->has[j]);
			if (!has[s])
				continue;
			CHECK_EQ_U64(mn[s], x->min[j]); CHECK_EQ_U64(mn_at[s], x->min_at[j]);
			CHECK_EQ_U64(mx[s], x->max[j]); CHECK_EQ_U64(mx_at[s], x->max_at[j]);
			CHECK_EQ_U64(last[s], x->last[j]); CHECK_EQ_U64(last_at[s], x->last_at[j]);
		}
		if (gmt_test_failures)
			return;
	}
}

/* A series stays known once it is (as the model's do). Values are small so
   that equal tops and equal extremes happen often (ties: the first). */
static void test_random(void)
{
	static struct inst in[4000];
	for (int round = 0; round < 40 && !gmt_test_failures; round++) {
		size_t n = 1 + rnd(4000);
		uint64_t t = rnd(5000), known_from[3] = { rnd(3000), 0, rnd(100000) };
		for (size_t i = 0; i < n; i++) {
			t += rnd(4) ? rnd(300) : rnd(50000);
			in[i].t = t;
			in[i].top = 0;
			for (int s = 0; s < 3; s++) {
				in[i].k[s] = t >= known_from[s];
				in[i].v[s] = rnd(8) << (10 * s);
				if (in[i].k[s])
					in[i].top += in[i].v[s];
			}
		}
		uint64_t duration = t + rnd(10000);
		unsigned factor = round % 4 == 0 ? 2 : round % 4 == 3 ? 0 : 4;
		gmt_buckets_t *b = gmt_buckets_new(3, duration, 50 + rnd(3000), factor, 1 + rnd(8));
		CHECK(b != NULL);
		for (size_t i = 0; i < n; i++)
			CHECK(gmt_buckets_add(b, in[i].t, in[i].v, in[i].k, in[i].top) == 0);
		gmt_buckets_finish(b);
		CHECK(factor ? gmt_buckets_levels(b) >= 2 : gmt_buckets_levels(b) == 1);
		for (size_t lv = 0; lv < gmt_buckets_levels(b); lv++)
			check_level(gmt_buckets_level(b, lv), in, n);
		gmt_buckets_free(b);
	}
}

/* Growing: the extent learnt from the stream gives the same levels as the
   extent given, and the finest width is the smallest power of two that
   holds it. */
static void test_grow(void)
{
	static struct inst in[3000];
	for (int round = 0; round < 30 && !gmt_test_failures; round++) {
		size_t n = 1 + rnd(3000), cap = 20 + rnd(500);
		uint64_t t = rnd(100);
		for (size_t i = 0; i < n; i++) {
			t += rnd(3) ? rnd(200) : rnd(90000);
			in[i].t = t;
			in[i].top = 0;
			for (int s = 0; s < 3; s++) {
				in[i].k[s] = s != 1 || t > 5000;
				in[i].v[s] = rnd(8) << (10 * s);
				in[i].top += in[i].k[s] ? in[i].v[s] : 0;
			}
		}
		gmt_buckets_t *g = gmt_buckets_new(3, GMT_BUCKETS_GROW, cap, 4, 1 + rnd(5));
		gmt_buckets_t *f = gmt_buckets_new(3, t, cap, 4, 1 + rnd(5));
		CHECK(g && f);
		for (size_t i = 0; i < n; i++) {
			CHECK(gmt_buckets_add(g, in[i].t, in[i].v, in[i].k, in[i].top) == 0);
			CHECK(gmt_buckets_add(f, in[i].t, in[i].v, in[i].k, in[i].top) == 0);
		}
		CHECK(gmt_buckets_finish(g) == 0);
		gmt_buckets_finish(f);
		CHECK_EQ_U64(t, gmt_buckets_duration(g));
		const gmt_bucket_level_t *l0 = gmt_buckets_level(g, 0);
		CHECK_EQ_U64(gmt_buckets_level(f, 0)->bucket_ns, l0->bucket_ns);
		CHECK(t / l0->bucket_ns + 1 <= cap);
		CHECK(l0->bucket_ns == 1 || t / (l0->bucket_ns / 2) + 1 > cap);
		for (size_t lv = 0; lv < gmt_buckets_levels(g); lv++)
			check_level(gmt_buckets_level(g, lv), in, n);
		gmt_buckets_free(g);
		gmt_buckets_free(f);
	}
	/* by hand: 3 buckets at most; instants at 0, 5 and 9 ns: 1 and 2 ns
	   are too narrow for 9, 4 ns holds it: [0,4) [4,8) [8,12) */
	gmt_buckets_t *b = gmt_buckets_new(1, GMT_BUCKETS_GROW, 3, 0, 1);
	add1(b, 0, 4);
	add1(b, 5, 9);
	add1(b, 9, 2);
	CHECK(gmt_buckets_finish(b) == 0);
	const gmt_bucket_level_t *l = gmt_buckets_level(b, 0);
	CHECK_EQ_U64(4, l->bucket_ns);
	CHECK_EQ_U64(3, l->count);
	CHECK_EQ_U64(4, l->top[0]); CHECK_EQ_U64(0, l->at[0]); CHECK_EQ_U64(4, l->low[0]);
	CHECK_EQ_U64(9, l->top[1]); CHECK_EQ_U64(1, l->at[1]); CHECK_EQ_U64(4, l->low[1]);
	CHECK_EQ_U64(9, l->top[2]); CHECK(l->at[2] == GMT_BUCKET_BEFORE); CHECK_EQ_U64(2, l->low[2]);
	CHECK_EQ_U64(1, l->series[0].last_at[2]);
	gmt_buckets_free(b);
}

static void test_errors(void)
{
	uint64_t v = 1;
	uint8_t k = 1;
	CHECK(gmt_buckets_new(0, 10, 4, 4, 1) == NULL && errno == EINVAL);
	CHECK(gmt_buckets_new(1, 10, 0, 4, 1) == NULL && errno == EINVAL);
	gmt_buckets_t *b = gmt_buckets_new(1, 100, 4, 0, 1);
	CHECK_EQ_U64(1, gmt_buckets_levels(b));
	CHECK_EQ_U64(26, gmt_buckets_level(b, 0)->bucket_ns);  /* 100 / 26 + 1 = 4; 25 gives 5 */
	CHECK_EQ_U64(4, gmt_buckets_level(b, 0)->count);
	CHECK(gmt_buckets_add(b, 50, &v, &k, 1) == 0);
	CHECK(gmt_buckets_add(b, 49, &v, &k, 1) == -EINVAL);   /* before the previous */
	CHECK(gmt_buckets_add(b, 101, &v, &k, 1) == -EINVAL);  /* after the duration */
	CHECK(gmt_buckets_add(b, 50, &v, &k, 9) == 0);          /* the same instant again */
	gmt_buckets_finish(b);
	CHECK(gmt_buckets_add(b, 60, &v, &k, 1) == -EINVAL);   /* after finish */
	const gmt_bucket_level_t *l = gmt_buckets_level(b, 0);
	CHECK(!l->state[0] && l->state[1] && l->state[3]);  /* 50 is in [26, 52) */
	CHECK_EQ_U64(9, l->top[1]); CHECK_EQ_U64(24, l->at[1]); CHECK_EQ_U64(1, l->low[1]);
	CHECK_EQ_U64(9, l->top[3]); CHECK(l->at[3] == GMT_BUCKET_BEFORE);
	gmt_buckets_free(b);
}

int main(void)
{
	test_by_hand();
	test_random();
	test_grow();
	test_errors();
	TEST_DONE();
}
