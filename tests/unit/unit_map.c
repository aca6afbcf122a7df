/*
 * unit_map.c - the analyzer's containers (analyzer/support/): the hash map
 * template gmt_hmap.h, in both its empty-slot styles and with a hash that
 * clusters every key into a few home slots (long probe runs that wrap
 * around the table's end: what backward-shift deletion must get right),
 * and gmt_u64map built on it. Each is driven by the same random sequence
 * of puts, finds and deletes against a plain reference array; after every
 * step the map must hold exactly the reference's keys with their values.
 * The ordered map gmt_treap.h likewise: after every insert or unlink the
 * in-order walk is the reference's sorted keys, every node's priority is
 * at least its children's, and find, lower and pred answer as a scan of
 * the reference does for keys present, absent, below and above all.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gmt_test.h"
#include <string.h>

#include "support/gmt_hmap.h"
#include "support/gmt_strtab.h"
#include "support/gmt_treap.h"
#include "support/gmt_u64map.h"

/* A slot with a used byte, Fibonacci hashing (as the replay's). */
typedef struct fslot {
	uint64_t key, val;
	uint8_t used;
} fslot_t;
#define F_EMPTY(s) (!(s)->used)
#define F_SET_EMPTY(s) ((s)->used = 0)
#define F_SET_USED(s) ((s)->used = 1)
GMT_HMAP_DEFINE(fmap, fslot_t, GMT_HMAP_FIB, F_EMPTY, F_SET_EMPTY, F_SET_USED, 1, 2, 3)

/* A reserved empty key and a hash that sends every key to one of 5 home
 * slots at the table's end, so runs wrap around. */
typedef struct cslot {
	uint64_t key, val;
} cslot_t;
#define C_EMPTY(s) ((s)->key == UINT64_MAX)
#define C_SET_EMPTY(s) ((s)->key = UINT64_MAX)
#define C_SET_USED(s) ((void)(s))
#define C_HASH(m, key) ((size_t)(((m)->cap - 1 - (key) % 5) & (m)->mask))
GMT_HMAP_DEFINE(cmap, cslot_t, C_HASH, C_EMPTY, C_SET_EMPTY, C_SET_USED, 3, 4, 2)

#define KEYS 300    /* keys 0..KEYS-1 (times a stride for the address-like run) */

typedef struct ref {
	uint64_t val[KEYS];
	uint8_t in[KEYS];
	size_t n;
} ref_t;

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One map's operations, as function pointers over an opaque map. */
typedef struct ops {
	const char *name;
	uint64_t stride;                                         /* key = i * stride */
	uint64_t *(*find)(void *m, uint64_t key);                /* the value's place */
	uint64_t *(*put)(void *m, uint64_t key, int *existed);
	void (*del)(void *m, uint64_t key);                      /* key present */
	size_t (*count)(void *m);
	/* calls f for each member (key, value) */
	void (*each)(void *m, void (*f)(uint64_t, uint64_t, void *), void *arg);
} ops_t;

#define OPS(pfx, type)                                                                          \
	static uint64_t *pfx##_o_find(void *m, uint64_t key)                                    \
	{                                                                                       \
		type##_slot *s = pfx##_find(m, key);                                            \
		return s ? &s->val : NULL;                                                      \
	}                                                                                       \
	static uint64_t *pfx##_o_put(void *m, uint64_t key, int *existed)                       \
	{                                                                                       \
		type##_slot *s = pfx##_put(m, key, existed);                                    \
		return s ? &s->val : NULL;                                                      \
	}                                                                                       \
	static void pfx##_o_del(void *m, uint64_t key)                                          \
	{                                                                                       \
		pfx##_del(m, pfx##_find(m, key));                                               \
	}                                                                                       \
	static size_t pfx##_o_count(void *m)                                                    \
	{                                                                                       \
		return ((pfx##_t *)m)->n;                                                       \
	}

typedef fslot_t fmap_slot;
typedef cslot_t cmap_slot;
OPS(fmap, fmap)
OPS(cmap, cmap)

static void fmap_o_each(void *mp, void (*f)(uint64_t, uint64_t, void *), void *arg)
{
	fmap_t *m = mp;
	for (size_t i = 0; i < m->cap; i++)
		if (!F_EMPTY(&m->s[i]))
			f(m->s[i].key, m->s[i].val, arg);
}

static void cmap_o_each(void *mp, void (*f)(uint64_t, uint64_t, void *), void *arg)
{
	cmap_t *m = mp;
	for (size_t i = 0; i < m->cap; i++)
		if (!C_EMPTY(&m->s[i]))
			f(m->s[i].key, m->s[i].val, arg);
}

static uint64_t *u_find(void *m, uint64_t key)
{
	gmt_u64map_slot_t *s = gmt_u64map_find(m, key);
	return s ? &s->a : NULL;
}
static uint64_t *u_put(void *m, uint64_t key, int *existed)
{
	gmt_u64map_slot_t *s = gmt_u64map_put(m, key, existed);
	return s ? &s->a : NULL;
}
static void u_del(void *m, uint64_t key)
{
	gmt_u64map_del(m, gmt_u64map_find(m, key));
}
static size_t u_count(void *m)
{
	return ((gmt_u64map_t *)m)->n;
}
static void u_each(void *mp, void (*f)(uint64_t, uint64_t, void *), void *arg)
{
	gmt_u64map_t *m = mp;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].key != UINT64_MAX)
			f(m->s[i].key, m->s[i].a, arg);
}

typedef struct seen {
	const ops_t *o;
	const ref_t *r;
	size_t n, bad;
	uint8_t got[KEYS];
} seen_t;

static void see(uint64_t key, uint64_t val, void *arg)
{
	seen_t *s = arg;
	uint64_t i = key / s->o->stride;
	if (key % s->o->stride || i >= KEYS || !s->r->in[i] || s->r->val[i] != val || s->got[i])
		s->bad++;
	else
		s->got[i] = 1;
	s->n++;
}

/* The map holds exactly the reference's members: by find, by count and by
 * iteration. Returns nonzero on the first difference (reported). */
static int same(const ops_t *o, void *m, const ref_t *r, int step)
{
	if (o->count(m) != r->n) {
		fprintf(stderr, "%s: step %d: %zu members, expected %zu\n", o->name, step, o->count(m), r->n);
		return 1;
	}
	for (uint64_t i = 0; i < KEYS; i++) {
		uint64_t *v = o->find(m, i * o->stride);
		if (r->in[i] ? !v || *v != r->val[i] : v != NULL) {
			fprintf(stderr, "%s: step %d: key %" PRIu64 " %s\n", o->name, step, i * o->stride,
				r->in[i] ? "lost or wrong" : "present after delete");
			return 1;
		}
	}
	seen_t s = { .o = o, .r = r };
	o->each(m, see, &s);
	if (s.bad || s.n != r->n) {
		fprintf(stderr, "%s: step %d: iteration saw %zu members (%zu wrong)\n", o->name, step, s.n, s.bad);
		return 1;
	}
	return 0;
}

static void drive(const ops_t *o, void *m)
{
	ref_t r = { 0 };
	int failed = 0;
	for (int step = 0; step < 6000 && !failed; step++) {
		uint64_t i = next() % KEYS, key = i * o->stride;
		/* more puts than deletes early, then the other way: the table grows,
		 * then empties back to nothing */
		int put = (int)(next() % 100) < (step < 3000 ? 65 : 35);
		if (put) {
			int existed = -1;
			uint64_t *v = o->put(m, key, &existed);
			CHECK(v != NULL);
			if (!v)
				return;
			CHECK_EQ_U64(r.in[i], existed);
			if (!existed)
				CHECK_EQ_U64(0, *v);   /* a new member comes zeroed */
			*v = next();
			if (!r.in[i])
				r.n++;
			r.in[i] = 1;
			r.val[i] = *v;
		} else if (r.in[i]) {
			o->del(m, key);
			r.in[i] = 0;
			r.n--;
		} else {
			CHECK(o->find(m, key) == NULL);
		}
		failed = same(o, m, &r, step);
		CHECK(!failed);
	}
	/* the second half deletes more than it adds: delete the rest */
	for (uint64_t i = 0; i < KEYS && !failed; i++)
		if (r.in[i]) {
			o->del(m, i * o->stride);
			r.in[i] = 0;
			r.n--;
			failed = same(o, m, &r, -1);
			CHECK(!failed);
		}
	CHECK_EQ_U64(0, o->count(m));
}

static void test_hmap_first_capacity_and_growth(void)
{
	fmap_t m = { 0 };
	CHECK(fmap_find(&m, 1) == NULL);       /* an empty map has no table */
	int existed;
	CHECK(fmap_put(&m, 1, &existed) != NULL);
	CHECK_EQ_U64(8, m.cap);                /* LOG2_FIRST 3 */
	for (uint64_t k = 2; k <= 4; k++)
		CHECK(fmap_put(&m, k, &existed) != NULL);
	CHECK_EQ_U64(8, m.cap);                /* 4 of 8: at the 1/2 load */
	CHECK(fmap_put(&m, 5, &existed) != NULL);
	CHECK_EQ_U64(16, m.cap);               /* the 5th doubles it */
	CHECK(fmap_put(&m, 5, &existed) != NULL && existed);
	CHECK_EQ_U64(5, m.n);
	CHECK_EQ_U64(16, m.cap);               /* a key present never grows it */
	fmap_free(&m);
	CHECK_EQ_U64(0, m.cap);
	CHECK(fmap_find(&m, 1) == NULL);
	CHECK_EQ_U64(0, fmap_init(&m, 5));
	CHECK_EQ_U64(32, m.cap);
	CHECK_EQ_U64(59, m.shift);
	fmap_free(&m);
}

/* ---- the ordered map --------------------------------------------------- */

typedef struct tn {
	uint64_t key;
	uint32_t left, right, prio;
} tn_t;
GMT_TREAP_DEFINE(tt, tn_t)

#define TN 200    /* nodes 1..TN-1, node i has key 10 * i' for a shuffled i' */

/* In-order walk into out; returns the count, or -1 when the heap order of
 * priorities is broken. */
static int walk(const tn_t *N, uint32_t t, uint64_t *out, int n)
{
	if (!t)
		return n;
	if ((N[t].left && N[N[t].left].prio > N[t].prio) || (N[t].right && N[N[t].right].prio > N[t].prio))
		return -1;
	n = walk(N, N[t].left, out, n);
	if (n < 0)
		return -1;
	out[n++] = N[t].key;
	return walk(N, N[t].right, out, n);
}

static void test_treap(void)
{
	static tn_t N[TN];
	uint8_t in[TN] = { 0 };
	uint32_t root = 0;
	/* keys 10, 20, ... in a shuffled node order; priorities random, some
	 * equal (ties must keep the heap order too) */
	uint64_t keys[TN];
	for (uint32_t i = 1; i < TN; i++)
		keys[i] = 10ull * i;
	for (uint32_t i = TN - 1; i > 1; i--) {
		uint32_t j = 1 + (uint32_t)(next() % i);
		uint64_t t = keys[i];
		keys[i] = keys[j];
		keys[j] = t;
	}
	for (uint32_t i = 1; i < TN; i++) {
		N[i].key = keys[i];
		N[i].prio = (uint32_t)(next() % 64);
	}
	int bad = 0;
	for (int step = 0; step < 4000 && !bad; step++) {
		uint32_t x = 1 + (uint32_t)(next() % (TN - 1));
		if (!in[x]) {
			N[x].left = N[x].right = 7;   /* stale links: insert must set them */
			tt_insert(N, &root, x);
			in[x] = 1;
		} else {
			CHECK_EQ_U64(x, tt_unlink(N, &root, N[x].key));
			in[x] = 0;
		}
		CHECK_EQ_U64(0, tt_unlink(N, &root, 5));   /* absent: nothing */
		uint64_t got[TN], want[TN];
		int n = walk(N, root, got, 0), m = 0;
		for (uint64_t k = 10; k < 10ull * TN; k += 10)
			for (uint32_t i = 1; i < TN; i++)
				if (in[i] && N[i].key == k)
					want[m++] = k;
		if (n != m || memcmp(got, want, (size_t)m * sizeof(*got))) {
			fprintf(stderr, "treap: step %d: in-order walk of %d keys, expected %d sorted\n", step, n, m);
			bad = 1;
		}
		/* find, lower, pred for every key and the gaps around them */
		for (uint64_t q = 0; q <= 10ull * TN && !bad; q += 5) {
			uint64_t lo = 0, pr = 0, fd = 0;
			for (int i = 0; i < m; i++) {
				if (want[i] == q)
					fd = q;
				if (want[i] >= q && !lo)
					lo = want[i];
				if (want[i] < q)
					pr = want[i];
			}
			uint32_t f = tt_find(N, root, q), l = tt_lower(N, root, q), p = tt_pred(N, root, q);
			if ((f ? N[f].key : 0) != fd || (l ? N[l].key : 0) != lo || (p ? N[p].key : 0) != pr) {
				fprintf(stderr, "treap: step %d: key %" PRIu64 ": find/lower/pred wrong\n", step, q);
				bad = 1;
			}
		}
		CHECK(!bad);
	}
}

/* Text of reference entry i: ids i and i + 1 share a text when i % 3 == 1
 * (so every third id is an alias), texts are otherwise distinct. */
static int st_text(char *b, size_t cap, uint32_t id)
{
	uint32_t t = id % 3 == 2 ? id - 1 : id;
	return snprintf(b, cap, "name-%u-%x", t * 2654435761u, t);
}

static void test_strtab(void)
{
	gmt_strtab_t t = { 0 };
	char b[64];
	const uint32_t n = 300000;
	for (uint32_t id = 1; id <= n; id++) {
		int len = st_text(b, sizeof(b), id);
		CHECK_EQ_I64(0, gmt_strtab_put(&t, id, b, (size_t)len));
	}
	CHECK_EQ_U64(n / 3 * 2, t.n_texts);
	size_t bad = 0;
	for (uint32_t id = 1; id <= n; id++) {
		size_t len;
		int want = st_text(b, sizeof(b), id);
		const char *got = gmt_strtab_text(&t, id, &len);
		uint32_t first = id % 3 == 2 ? id - 1 : id;
		if (!got || len != (size_t)want || memcmp(got, b, len) || got[len] ||
		    gmt_strtab_canon(&t, id) != first || gmt_strtab_value(&t, id) != gmt_strtab_value(&t, first))
			bad++;
		(*gmt_strtab_value(&t, id))++;
	}
	CHECK_EQ_U64(0, bad);
	CHECK_EQ_U64(2, *gmt_strtab_value(&t, 1));    /* ids 1 and 2 */
	CHECK_EQ_U64(1, *gmt_strtab_value(&t, 3));
	/* a repeated id changes nothing; id 0 is no id; unknown ids */
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 3, "other", 5));
	st_text(b, sizeof(b), 3);
	CHECK_EQ_STR(b, gmt_strtab_text(&t, 3, NULL));
	CHECK_EQ_I64(-EINVAL, gmt_strtab_put(&t, 0, "x", 1));
	CHECK(!gmt_strtab_text(&t, n + 1, NULL));
	CHECK(!gmt_strtab_value(&t, n + 1));
	CHECK_EQ_U64(n + 1, gmt_strtab_canon(&t, n + 1));
	CHECK_EQ_U64(0, gmt_strtab_canon(&t, 0));
	/* texts with NULs are compared whole; far ids go to the sparse map
	 * and still merge with a dense one's text */
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 4000000000u, "a\0b", 3));
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 4000000001u, "a\0c", 3));
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 4000000002u, "a\0b", 3));
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 4000000003u, "a", 1));
	st_text(b, sizeof(b), 4);
	CHECK_EQ_I64(0, gmt_strtab_put(&t, 3999999999u, b, strlen(b)));
	CHECK(t.n_dense < 4000000000u && t.sparse.n == 5);
	CHECK_EQ_U64(4000000000u, gmt_strtab_canon(&t, 4000000002u));
	CHECK_EQ_U64(4000000001u, gmt_strtab_canon(&t, 4000000001u));
	CHECK_EQ_U64(4000000003u, gmt_strtab_canon(&t, 4000000003u));
	CHECK_EQ_U64(4, gmt_strtab_canon(&t, 3999999999u));
	size_t len;
	CHECK(!memcmp("a\0c", gmt_strtab_text(&t, 4000000001u, &len), 4) && len == 3);
	/* a long text gets a block of its own */
	char *big = malloc(200000);
	CHECK(big != NULL);
	if (big) {
		memset(big, 'x', 200000);
		CHECK_EQ_I64(0, gmt_strtab_put(&t, n + 1, big, 200000));
		CHECK_EQ_I64(0, gmt_strtab_put(&t, n + 2, big, 200000));
		CHECK_EQ_U64(n + 1, gmt_strtab_canon(&t, n + 2));
		CHECK(gmt_strtab_text(&t, n + 2, &len) && len == 200000);
		free(big);
	}
	gmt_strtab_clear(&t);
	CHECK(!gmt_strtab_text(&t, 1, NULL) && !t.n_texts);
}

int main(void)
{
	test_strtab();
	test_treap();
	test_hmap_first_capacity_and_growth();
	fmap_t f = { 0 };
	cmap_t c = { 0 };
	gmt_u64map_t u = { 0 };
	const ops_t of = { "hmap (used byte, Fibonacci)", 4096, fmap_o_find, fmap_o_put, fmap_o_del,
			   fmap_o_count, fmap_o_each };
	const ops_t oc = { "hmap (reserved key, clustering hash)", 1, cmap_o_find, cmap_o_put, cmap_o_del,
			   cmap_o_count, cmap_o_each };
	const ops_t ou = { "u64map", 4096, u_find, u_put, u_del, u_count, u_each };
	drive(&of, &f);
	drive(&oc, &c);
	drive(&ou, &u);
	fmap_free(&f);
	cmap_free(&c);
	gmt_u64map_clear(&u);
	TEST_DONE();
}
