/*
 * gmt_u64map.h - PRIVATE to analyzer/: a uint64 key -> two uint64 values
 * hash map, the gmt_hmap.h template with a reserved empty key (UINT64_MAX),
 * load at most 3/4, first capacity 64 (the symbol table, the stack
 * catalogue, the live set, the framework's peaks, oom's groups).
 * Tested in tests/unit/unit_map.c.
 */
#ifndef GMT_U64MAP_H
#define GMT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "support/gmt_hmap.h"

/* Key UINT64_MAX is reserved (it marks empty slots). */
typedef struct gmt_u64map_slot {
	uint64_t key, a, b;
} gmt_u64map_slot_t;

/* A 64-bit finaliser: keys here are ids and packed pairs as well as
 * addresses. */
static inline size_t gmt_u64map_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

#define GMT_U64MAP_HASH(m, key) (gmt_u64map_hash(key) & (m)->mask)
#define GMT_U64MAP_EMPTY(s) ((s)->key == UINT64_MAX)
#define GMT_U64MAP_SET_EMPTY(s) ((s)->key = UINT64_MAX)
#define GMT_U64MAP_SET_USED(s) ((void)(s))
GMT_HMAP_DEFINE(gmt_u64tab, gmt_u64map_slot_t, GMT_U64MAP_HASH, GMT_U64MAP_EMPTY, GMT_U64MAP_SET_EMPTY,
		GMT_U64MAP_SET_USED, 3, 4, 6)

/* s, cap, n as in gmt_hmap.h; { 0 } is an empty map. Iterate with
 * for (i < cap) if (s[i].key != UINT64_MAX). */
typedef gmt_u64tab_t gmt_u64map_t;

/* The slot of key, or NULL. */
static inline gmt_u64map_slot_t *gmt_u64map_find(const gmt_u64map_t *m, uint64_t key)
{
	return key == UINT64_MAX ? NULL : gmt_u64tab_find(m, key);
}

/* The slot of key, created zeroed (*existed = 0) if absent; NULL when out
 * of memory (or for the reserved key). Slot pointers are valid until the
 * next put or del. */
static inline gmt_u64map_slot_t *gmt_u64map_put(gmt_u64map_t *m, uint64_t key, int *existed)
{
	*existed = 0;
	return key == UINT64_MAX ? NULL : gmt_u64tab_put(m, key, existed);
}

/* Removes the slot (from find or put). */
static inline void gmt_u64map_del(gmt_u64map_t *m, gmt_u64map_slot_t *slot)
{
	gmt_u64tab_del(m, slot);
}

static inline void gmt_u64map_clear(gmt_u64map_t *m)
{
	gmt_u64tab_free(m);
}

#endif /* GMT_U64MAP_H */
