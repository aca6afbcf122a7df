/*
 * gmt_strtab.c - a trace's STRING records (gmt_strtab.h): ids in a dense
 * array (a hash map for sparse ones), texts in an arena, each text found
 * again by an open-addressed index of 8-byte slots compared byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/gmt_strtab.h"

#define ALIAS (1ull << 63)          /* user addresses never have it */
#define BLOCK (256u << 10)
#define BIG   (BLOCK / 4)           /* a record this long gets a block of its own */

/* A text's record: value, length, the bytes, NUL; 8-byte aligned. */
typedef struct rec {
	uint64_t value;
	uint32_t len;
	char text[];
} rec_t;

static uint64_t hash_of(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The index position of a text from the 32 bits its slot keeps. */
static size_t pos_of(uint32_t h32, size_t mask)
{
	uint64_t x = (uint64_t)h32 * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 32 ^ x) & mask;
}

static uint64_t entry(const gmt_strtab_t *t, uint32_t id)
{
	if (id < t->n_dense && t->dense[id])
		return t->dense[id];
	const gmt_u64map_slot_t *x = t->sparse.n ? gmt_u64map_find(&t->sparse, id) : NULL;
	return x ? x->a : 0;
}

static rec_t *rec_of(const gmt_strtab_t *t, uint32_t id)
{
	uint64_t e = entry(t, id);
	if (e & ALIAS)
		e = entry(t, (uint32_t)(e & ~ALIAS));
	return (rec_t *)(uintptr_t)e;
}

static int set_entry(gmt_strtab_t *t, uint32_t id, uint64_t e)
{
	if (id >= t->n_dense && (uint64_t)id <= 2 * (uint64_t)t->n_ids + 65536) {
		size_t n = t->n_dense ? t->n_dense : 1024;
		while (n <= id)
			n *= 2;
		uint64_t *d = realloc(t->dense, n * sizeof(*d));
		if (!d)
			return -ENOMEM;
		memset(d + t->n_dense, 0, (n - t->n_dense) * sizeof(*d));
		t->dense = d;
		t->n_dense = n;
	}
	if (id < t->n_dense) {
		t->dense[id] = e;
	} else {
		int existed;
		gmt_u64map_slot_t *x = gmt_u64map_put(&t->sparse, id, &existed);
		if (!x)
			return -ENOMEM;
		x->a = e;
	}
	t->n_ids++;
	return 0;
}

static rec_t *rec_new(gmt_strtab_t *t, const char *text, size_t len)
{
	size_t need = (sizeof(rec_t) + len + 1 + 7) & ~(size_t)7;
	char *p;
	if (t->n_blocks == t->cap_blocks) {
		size_t nc = t->cap_blocks ? t->cap_blocks * 2 : 16;
		void **nb = realloc(t->blocks, nc * sizeof(*nb));
		if (!nb)
			return NULL;
		t->blocks = nb;
		t->cap_blocks = nc;
	}
	if (need > BIG) {
		if (!(p = malloc(need)))
			return NULL;
		t->blocks[t->n_blocks++] = p;
	} else {
		if (need > t->cur_left) {
			if (!(t->cur = malloc(BLOCK)))
				return NULL;
			t->blocks[t->n_blocks++] = t->cur;
			t->cur_left = BLOCK;
		}
		p = t->cur;
		t->cur += need;
		t->cur_left -= need;
	}
	rec_t *r = (rec_t *)(void *)p;
	r->value = 0;
	r->len = (uint32_t)len;
	memcpy(r->text, text, len);
	r->text[len] = 0;
	return r;
}

static int index_grow(gmt_strtab_t *t)
{
	size_t cap = t->index_cap ? t->index_cap * 2 : 1024;
	uint64_t *ni = calloc(cap, sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	for (size_t i = 0; i < t->index_cap; i++) {
		uint64_t s = t->index[i];
		if (!s)
			continue;
		size_t j = pos_of((uint32_t)s, cap - 1);
		while (ni[j])
			j = (j + 1) & (cap - 1);
		ni[j] = s;
	}
	free(t->index);
	t->index = ni;
	t->index_cap = cap;
	return 0;
}

int gmt_strtab_put(gmt_strtab_t *t, uint32_t id, const char *text, size_t len)
{
	if (!id)
		return -EINVAL;
	if (entry(t, id))
		return 0;   /* ids are never reused; a repeat changes nothing */
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	if ((t->n_texts + 1) * 4 > t->index_cap * 3 && index_grow(t))
		return -ENOMEM;
	const uint32_t h32 = (uint32_t)hash_of(text, len);
	const size_t mask = t->index_cap - 1;
	size_t j = pos_of(h32, mask);
	for (; t->index[j]; j = (j + 1) & mask) {
		uint64_t s = t->index[j];
		if ((uint32_t)s != h32)
			continue;
		const uint32_t first = (uint32_t)(s >> 32);
		const rec_t *r = rec_of(t, first);
		if (r && r->len == len && !memcmp(r->text, text, len))
			return set_entry(t, id, ALIAS | first);
	}
	rec_t *r = rec_new(t, text, len);
	if (!r)
		return -ENOMEM;
	int rc = set_entry(t, id, (uint64_t)(uintptr_t)r);
	if (rc)
		return rc;   /* the record stays in the arena, unreferenced */
	t->index[j] = (uint64_t)id << 32 | h32;
	t->n_texts++;
	return 0;
}

const char *gmt_strtab_text(const gmt_strtab_t *t, uint32_t id, size_t *len)
{
	const rec_t *r = id ? rec_of(t, id) : NULL;
	if (len)
		*len = r ? r->len : 0;
	return r ? r->text : NULL;
}

uint32_t gmt_strtab_canon(const gmt_strtab_t *t, uint32_t id)
{
	uint64_t e = id ? entry(t, id) : 0;
	return e & ALIAS ? (uint32_t)(e & ~ALIAS) : id;
}

uint64_t *gmt_strtab_value(gmt_strtab_t *t, uint32_t id)
{
	rec_t *r = id ? rec_of(t, id) : NULL;
	return r ? &r->value : NULL;
}

void gmt_strtab_clear(gmt_strtab_t *t)
{
	for (size_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->dense);
	free(t->index);
	gmt_u64map_clear(&t->sparse);
	memset(t, 0, sizeof(*t));
}
