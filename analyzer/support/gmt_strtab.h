/*
 * gmt_strtab.h - PRIVATE to analyzer/: a trace's STRING records, id -> text,
 * lean enough for millions of names (issue 11: the analyzer's memory).
 *
 * STRING ids are never reused, but a text may come again under a new id
 * (the tracer writes names beyond its budget by value, schemas/
 * trace-format.md): ids of one text are merged, the canonical id being
 * the text's first. Each distinct text carries one 64-bit value for the
 * caller (the phase engine: its name's index, or its occurrence count).
 *
 * Cost: 8 bytes per id (a dense array while ids are dense, as the
 * tracer's are: 1, 2, 3...; a sparse id goes to a hash map), and per
 * distinct text its bytes + 13 (value, length, NUL), rounded up to 8, in
 * an arena, plus an 8-byte slot of the text index (load at most 3/4).
 * That is the floor for a dictionary that may be asked any id at any
 * later point and that must merge texts exactly: every id keeps a
 * reference, every text its bytes and one entry to be found by.
 * Tested in tests/unit/unit_map.c.
 */
#ifndef GMT_STRTAB_H
#define GMT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "support/gmt_u64map.h"

typedef struct gmt_strtab {
	uint64_t *dense;         /* by id: 0 unknown; a record's address; or
				    ALIAS | the canonical id             */
	size_t n_dense;          /* ids below it are in dense */
	gmt_u64map_t sparse;     /* the other ids: a as dense's entries  */
	uint64_t *index;         /* by text hash: canonical id << 32 | the
				    hash's low 32 bits; 0 empty           */
	size_t index_cap, n_texts;
	size_t n_ids;
	void **blocks;           /* the arena */
	size_t n_blocks, cap_blocks;
	char *cur;
	size_t cur_left;
} gmt_strtab_t;

/* Adds STRING id (>= 1) with text[0..len) (may hold NULs); an id already
 * known changes nothing. 0 or -ENOMEM (-EINVAL for id 0). */
int gmt_strtab_put(gmt_strtab_t *t, uint32_t id, const char *text, size_t len);

/* The text of id (NUL-terminated; valid until gmt_strtab_clear), or NULL
 * when unknown; *len (may be NULL) gets its length. */
const char *gmt_strtab_text(const gmt_strtab_t *t, uint32_t id, size_t *len);

/* The first id of id's text; id itself when unknown. */
uint32_t gmt_strtab_canon(const gmt_strtab_t *t, uint32_t id);

/* The caller's value of id's text (0 at first), or NULL when unknown. */
uint64_t *gmt_strtab_value(gmt_strtab_t *t, uint32_t id);

/* Frees everything; the table is empty again ({ 0 } is empty too). */
void gmt_strtab_clear(gmt_strtab_t *t);

#endif /* GMT_STRTAB_H */
