/*
 * gmt_diff.h - comparing two runs: rows matched by key (environment
 * variables and versions, phase occurrences, call sites by their
 * symbolised stacks), the change in bytes and in percent, and the
 * --fail-above decision, all exact. Pure functions; the diff command
 * (analyzer) builds the keys from each run's model.
 *
 * A call site's key is its frames as text, innermost first, joined by
 * '\n': "FILE NAME:FUNCTION" for a symbolised frame (the module's file name
 * without its directory, so a library moved or rebuilt still matches) and
 * "FILE NAME+0xOFFSET" for one that is not (its offset in the module, which
 * address-space randomisation leaves alone; the report labels those).
 * gmt_diff_frame_key() builds one frame's text.
 */
#ifndef GMT_DIFF_H
#define GMT_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* One frame's key text: "libfoo.so.1:fn" (function known) or
 * "libfoo.so.1+0x1a2b" (not), the module path's last component. */
void gmt_diff_frame_key(const char *module_path, const char *function, uint64_t offset,
			char *out, size_t len);

/* A row of one run: a key and its value(s). */
typedef struct gmt_diff_item {
	const char *key;
	uint64_t bytes;
	uint64_t count;
	const char *text;       /* a value as text (environment), or NULL */
} gmt_diff_item_t;

enum gmt_diff_side { GMT_DIFF_BOTH = 0, GMT_DIFF_ONLY_A = 1, GMT_DIFF_ONLY_B = 2 };

/* A matched row: a (index into A, or -1) and b (index into B, or -1). */
typedef struct gmt_diff_row {
	long a, b;
	int side;               /* enum gmt_diff_side                          */
	int differs;            /* text values differ, or only on one side      */
	int64_t delta;          /* bytes(B) - bytes(A), a missing side as 0      */
} gmt_diff_row_t;

/* Matches a[] and b[] by key (byte for byte; keys unique within a side:
 * a repeated key's values are added up into its first row). Rows in the
 * order asked: by key, or by growth (delta, largest first; then key). The
 * rows are malloc'ed (*rows; free them); returns their number, or -1 (out
 * of memory). */
enum gmt_diff_order { GMT_DIFF_BY_KEY = 0, GMT_DIFF_BY_GROWTH = 1 };
long gmt_diff_match(const gmt_diff_item_t *a, size_t na, const gmt_diff_item_t *b, size_t nb,
		    int order, gmt_diff_row_t **rows);

/* The change from a to b in percent, to one decimal, rounded half away
 * from zero ("+2.5", "-10.0", "0.0"); "new" when a is 0 and b is not,
 * "0.0" when both are 0. */
void gmt_diff_percent(uint64_t a, uint64_t b, char out[32]);

/* --fail-above PCT: pct is decimal text >= 0 ("5", "2.5"; at most 6
 * decimals and at most 10^12). Returns 1 when b grew from a by more than
 * pct percent ((b - a) x 100 > pct x a, exactly; any growth from 0 counts),
 * 0 when not, -1 when pct is not such a number. */
int gmt_diff_exceeds(uint64_t a, uint64_t b, const char *pct);

#endif /* GMT_DIFF_H */
