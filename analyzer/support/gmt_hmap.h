/*
 * gmt_hmap.h - PRIVATE to analyzer/: THE hash map of the analyzer, as a
 * macro that makes a typed map over the caller's own slot struct (so a hot
 * path keeps its fields in the slot, with no indirection and no generic
 * payload) while the code, and its test (tests/unit/unit_map.c), is one.
 * gmt_u64map.h is its instance for uint64 -> two values; the ordered map
 * is gmt_treap.h.
 *
 *   GMT_HMAP_DEFINE(name, slot_t, HASH, IS_EMPTY, SET_EMPTY, SET_USED, LOAD_NUM, LOAD_DEN,
 *                   LOG2_FIRST)
 *
 * slot_t    a struct with a uint64_t member `key` (any value but the one the
 *           empty test may reserve)
 * HASH(m, key)     the home slot index, in [0, cap): e.g. Fibonacci hashing
 *                  ((key * 0x9E3779B97F4A7C15) >> m->shift), whose top bits
 *                  mix every key bit (addresses share their low bits)
 * IS_EMPTY(s), SET_EMPTY(s), SET_USED(s)   how a free slot is told and
 *                  made, and a new one marked (a `used` byte; or a reserved
 *                  key, then SET_USED does nothing: the key marks it)
 * LOAD_NUM/LOAD_DEN   the largest load before the table doubles
 * LOG2_FIRST       log2 of the first capacity (a map starts empty, cap 0)
 *
 * makes name_t { slot_t *s; size_t cap, mask, n; unsigned shift; } and
 *   int     name_init(name_t *m, unsigned log2cap)   0 or -ENOMEM
 *   slot_t *name_find(const name_t *m, uint64_t key)  NULL: absent
 *   slot_t *name_put(name_t *m, uint64_t key, int *existed)
 *           the key's slot, a new one zeroed but for key (*existed = 0);
 *           NULL when out of memory. Slot pointers stay valid until the
 *           next put or del.
 *   void    name_del(name_t *m, slot_t *s)   removes a slot from find/put
 *           (backward shift: no tombstones, lookups stay short)
 *   void    name_free(name_t *m)             back to empty
 * Iterate with: for (size_t i = 0; i < m->cap; i++) if (!IS_EMPTY(&m->s[i])).
 * Open addressing, linear probing, power-of-two capacity.
 */
#ifndef GMT_HMAP_H
#define GMT_HMAP_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every instance defines all of its functions; one that a file does not use
 * must not warn (clang warns about unused static inline functions defined in a
 * .c file, and CI builds with -Werror). */
#define GMT_HMAP_FN static inline __attribute__((unused))

#define GMT_HMAP_FIB(m, key) ((size_t)(((uint64_t)(key) * 0x9E3779B97F4A7C15ull) >> (m)->shift))

#define GMT_HMAP_DEFINE(name, slot_t, HASH, IS_EMPTY, SET_EMPTY, SET_USED, LOAD_NUM, LOAD_DEN,   \
			LOG2_FIRST)                                                                     \
typedef struct name {                                                                           \
	slot_t *s;                                                                              \
	size_t cap, mask, n;                                                                    \
	unsigned shift;          /* 64 - log2(cap) */                                           \
} name##_t;                                                                                     \
                                                                                                \
GMT_HMAP_FN int name##_init(name##_t *m, unsigned log2cap)                                    \
{                                                                                               \
	size_t cap = (size_t)1 << log2cap;                                                      \
	slot_t *s = malloc(cap * sizeof(*s));                                                   \
	if (!s)                                                                                 \
		return -ENOMEM;                                                                 \
	memset(s, 0, cap * sizeof(*s));                                                         \
	for (size_t i = 0; i < cap; i++)                                                        \
		SET_EMPTY(&s[i]);                                                               \
	m->s = s;                                                                               \
	m->cap = cap;                                                                           \
	m->mask = cap - 1;                                                                      \
	m->n = 0;                                                                               \
	m->shift = 64 - log2cap;                                                                \
	return 0;                                                                               \
}                                                                                               \
                                                                                                \
GMT_HMAP_FN slot_t *name##_find(const name##_t *m, uint64_t key)                              \
{                                                                                               \
	if (!m->cap)                                                                            \
		return NULL;                                                                    \
	for (size_t i = HASH(m, key);; i = (i + 1) & m->mask) {                                 \
		slot_t *x = &m->s[i];                                                           \
		if (IS_EMPTY(x))                                                                \
			return NULL;                                                            \
		if (x->key == key)                                                              \
			return x;                                                               \
	}                                                                                       \
}                                                                                               \
                                                                                                \
GMT_HMAP_FN int name##_grow(name##_t *m)                                                      \
{                                                                                               \
	name##_t nm;                                                                            \
	unsigned log2cap = m->cap ? 64 - m->shift + 1 : (LOG2_FIRST);                           \
	if (log2cap > 40 || name##_init(&nm, log2cap))                                          \
		return -ENOMEM;                                                                 \
	for (size_t i = 0; i < m->cap; i++) {                                                   \
		if (IS_EMPTY(&m->s[i]))                                                         \
			continue;                                                               \
		size_t j = HASH(&nm, m->s[i].key);                                              \
		while (!IS_EMPTY(&nm.s[j]))                                                     \
			j = (j + 1) & nm.mask;                                                  \
		nm.s[j] = m->s[i];                                                              \
	}                                                                                       \
	nm.n = m->n;                                                                            \
	free(m->s);                                                                             \
	*m = nm;                                                                                \
	return 0;                                                                               \
}                                                                                               \
                                                                                                \
GMT_HMAP_FN slot_t *name##_put(name##_t *m, uint64_t key, int *existed)                       \
{                                                                                               \
	slot_t *x = NULL;                                                                       \
	if (m->cap) {                                                                           \
		/* one probe run: the key's slot, or the empty one ending it */                 \
		for (size_t i = HASH(m, key);; i = (i + 1) & m->mask) {                         \
			x = &m->s[i];                                                           \
			if (IS_EMPTY(x))                                                        \
				break;                                                          \
			if (x->key == key) {                                                    \
				*existed = 1;                                                   \
				return x;                                                       \
			}                                                                       \
		}                                                                               \
	}                                                                                       \
	if (!x || (m->n + 1) * (LOAD_DEN) > m->cap * (LOAD_NUM)) {                              \
		if (name##_grow(m))                                                             \
			return NULL;                                                            \
		size_t i = HASH(m, key);                                                        \
		while (!IS_EMPTY(&m->s[i]))                                                     \
			i = (i + 1) & m->mask;                                                  \
		x = &m->s[i];                                                                   \
	}                                                                                       \
	memset(x, 0, sizeof(*x));                                                               \
	x->key = key;                                                                           \
	SET_USED(x);                                                                            \
	m->n++;                                                                                 \
	*existed = 0;                                                                           \
	return x;                                                                               \
}                                                                                               \
                                                                                                \
GMT_HMAP_FN void name##_del(name##_t *m, slot_t *x)                                           \
{                                                                                               \
	size_t i = (size_t)(x - m->s), j = i;                                                   \
	for (;;) {                                                                              \
		j = (j + 1) & m->mask;                                                          \
		if (IS_EMPTY(&m->s[j]))                                                         \
			break;                                                                  \
		size_t home = HASH(m, m->s[j].key);                                             \
		/* Move j into the hole at i unless its home lies cyclically in (i, j]:        \
		 * then it is already reachable from its home. */                               \
		if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))               \
			continue;                                                               \
		m->s[i] = m->s[j];                                                              \
		i = j;                                                                          \
	}                                                                                       \
	SET_EMPTY(&m->s[i]);                                                                    \
	m->n--;                                                                                 \
}                                                                                               \
                                                                                                \
GMT_HMAP_FN void name##_free(name##_t *m)                                                     \
{                                                                                               \
	free(m->s);                                                                             \
	memset(m, 0, sizeof(*m));                                                               \
}

#endif /* GMT_HMAP_H */
