/*
 * gmt_u64map.h - a small open-addressing hash map, uint64 key -> two uint64
 * values (private to analyzer/: the symbol table and the sites report).
 */
#ifndef GMT_U64MAP_H
#define GMT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

/* Key UINT64_MAX is reserved (it marks empty slots). */
typedef struct gmt_u64map_slot {
	uint64_t key, a, b;
} gmt_u64map_slot_t;

typedef struct gmt_u64map {
	gmt_u64map_slot_t *s;
	size_t cap, n;          /* cap: a power of two (0: empty map) */
} gmt_u64map_t;

/* The slot of key, or NULL. */
gmt_u64map_slot_t *gmt_u64map_find(const gmt_u64map_t *m, uint64_t key);
/* The slot of key, created zeroed (*existed = 0) if absent; NULL when out
 * of memory. Slot pointers are valid until the next put or del. */
gmt_u64map_slot_t *gmt_u64map_put(gmt_u64map_t *m, uint64_t key, int *existed);
/* Removes the slot (from find or put). */
void gmt_u64map_del(gmt_u64map_t *m, gmt_u64map_slot_t *slot);
void gmt_u64map_clear(gmt_u64map_t *m);

#endif /* GMT_U64MAP_H */
