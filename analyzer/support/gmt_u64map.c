/*
 * gmt_u64map.c - the analyzer's small uint64 hash map (gmt_u64map.h):
 * linear probing, load at most 3/4, deletion by backward shift.
 */
#include "support/gmt_u64map.h"

#include <errno.h>
#include <stdlib.h>

#define EMPTY_KEY UINT64_MAX

static inline size_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

gmt_u64map_slot_t *gmt_u64map_find(const gmt_u64map_t *m, uint64_t key)
{
	if (!m->cap || key == EMPTY_KEY)
		return NULL;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].key == key)
			return &m->s[i];
		if (m->s[i].key == EMPTY_KEY)
			return NULL;
	}
}

static int map_grow(gmt_u64map_t *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	gmt_u64map_slot_t *ns = malloc(ncap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		ns[i].key = EMPTY_KEY;
	for (size_t j = 0; j < m->cap; j++) {
		if (m->s[j].key == EMPTY_KEY)
			continue;
		size_t i = hash64(m->s[j].key) & (ncap - 1);
		while (ns[i].key != EMPTY_KEY)
			i = (i + 1) & (ncap - 1);
		ns[i] = m->s[j];
	}
	free(m->s);
	m->s = ns;
	m->cap = ncap;
	return 0;
}

gmt_u64map_slot_t *gmt_u64map_put(gmt_u64map_t *m, uint64_t key, int *existed)
{
	*existed = 0;
	if (key == EMPTY_KEY)
		return NULL;
	gmt_u64map_slot_t *s = gmt_u64map_find(m, key);
	if (s) {
		*existed = 1;
		return s;
	}
	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m))
		return NULL;
	size_t i = hash64(key) & (m->cap - 1);
	while (m->s[i].key != EMPTY_KEY)
		i = (i + 1) & (m->cap - 1);
	m->s[i].key = key;
	m->s[i].a = m->s[i].b = 0;
	m->n++;
	return &m->s[i];
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void gmt_u64map_del(gmt_u64map_t *m, gmt_u64map_slot_t *slot)
{
	size_t mask = m->cap - 1, i = (size_t)(slot - m->s), j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (m->s[j].key == EMPTY_KEY)
			break;
		size_t h = hash64(m->s[j].key) & mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		m->s[i] = m->s[j];
		i = j;
	}
	m->s[i].key = EMPTY_KEY;
	m->n--;
}

void gmt_u64map_clear(gmt_u64map_t *m)
{
	free(m->s);
	m->s = NULL;
	m->cap = m->n = 0;
}

