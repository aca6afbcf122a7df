/*
 * gmt_json.h - the one JSON writer of every JSON output (the analyzer's
 * reports, the page's data, the exports): streaming, output only.
 *
 * Values go straight to a FILE as they are given; the writer keeps only the
 * nesting (one byte per level) and places the commas and colons itself. It
 * cannot emit broken JSON:
 *   - every string is escaped: quote, backslash, control characters and DEL
 *     as \uXXXX (NUL too, with gmt_json_strn), valid UTF-8 as is, each byte
 *     of an invalid sequence as U+FFFD;
 *   - a non-finite number is written as null;
 *   - a call out of place (a value in an object without its key, a key in
 *     an array, an end that matches no begin, a second top-level value,
 *     nesting deeper than GMT_JSON_MAX_DEPTH) writes nothing and makes the
 *     writer refuse everything after it: gmt_json_close then completes what
 *     is open (a null for a key left without value, then the closing
 *     brackets), so the output still parses, and returns -EINVAL.
 * gmt_json_close also checks the stream (ferror, fflush): -EIO if a write
 * failed. The caller owns the FILE.
 *
 * A document:
 *   gmt_json_t j;
 *   gmt_json_init(&j, stdout);
 *   gmt_json_obj_begin(&j);
 *   gmt_json_kv_str(&j, "tool", "gpumemtrace-analyze");
 *   gmt_json_key(&j, "traces");
 *   gmt_json_arr_begin(&j);
 *   ...
 *   gmt_json_arr_end(&j);
 *   gmt_json_obj_end(&j);
 *   if (gmt_json_close(&j)) ...   (writes the final newline)
 */
#ifndef GMT_JSON_H
#define GMT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GMT_JSON_MAX_DEPTH 64

#define GMT_JSON_BUF 8192

typedef struct gmt_json {
	FILE *f;
	size_t len;              /* buf[0..len): written, not yet given to f */
	char buf[GMT_JSON_BUF];  /* (a call per token to stdio was a third of
				    a large export's time)                   */
	int err;                 /* 0, or -EINVAL once a call was out of place */
	unsigned depth;
	unsigned char open[GMT_JSON_MAX_DEPTH];   /* '{' or '[' per level      */
	unsigned char members[GMT_JSON_MAX_DEPTH]; /* the level has a member  */
	unsigned char key_due;   /* in an object: a key was written, its value
				    is due */
	unsigned char done;      /* the top-level value is complete */
	unsigned char nl;        /* write a newline before the next member */
	unsigned char closed;    /* gmt_json_close ran */
} gmt_json_t;

void gmt_json_init(gmt_json_t *j, FILE *f);
/* Gives the text written so far to the FILE (gmt_json_close does; call it
 * before writing to that FILE anything else mid-document). 0 or -EIO. */
int gmt_json_flush(gmt_json_t *j);

void gmt_json_obj_begin(gmt_json_t *j);
void gmt_json_obj_end(gmt_json_t *j);
void gmt_json_arr_begin(gmt_json_t *j);
void gmt_json_arr_end(gmt_json_t *j);

/* An object member's name (escaped like any string). */
void gmt_json_key(gmt_json_t *j, const char *key);

/* Values. gmt_json_str(j, NULL) writes null; gmt_json_strn takes n bytes,
 * NUL included. gmt_json_double: shortest-round-trip form (%.17g);
 * gmt_json_fixed: that many decimals (%.*f, decimals 0 to 17). */
void gmt_json_str(gmt_json_t *j, const char *s);
void gmt_json_strn(gmt_json_t *j, const char *s, size_t n);
void gmt_json_u64(gmt_json_t *j, uint64_t v);
void gmt_json_i64(gmt_json_t *j, int64_t v);
void gmt_json_double(gmt_json_t *j, double v);
void gmt_json_fixed(gmt_json_t *j, double v, int decimals);
/* v / 10^decimals with that many decimals (decimals 0 to 17): the same
 * text as gmt_json_fixed(j, (double)v / 10^decimals, decimals), made from
 * the integer (ns as seconds: 9; as microseconds: 3). Below 2^52 the
 * double nearest the quotient is within half a unit of its last decimal,
 * so its rounding is the exact quotient; beyond, printf. */
void gmt_json_scaled(gmt_json_t *j, int64_t v, unsigned decimals);
void gmt_json_bool(gmt_json_t *j, int v);
/* A value the caller formatted (valid JSON, e.g. a row of numbers as an
 * array), written as it is where the next value goes. */
void gmt_json_raw(gmt_json_t *j, const char *text, size_t n);
void gmt_json_null(gmt_json_t *j);

/* A newline (whitespace) before the next member, after its comma; or
 * before the closing bracket if none comes. For documents read by people
 * too: one trace, one row per line. */
void gmt_json_newline(gmt_json_t *j);

/* Member shorthands: key, then the value. */
void gmt_json_kv_str(gmt_json_t *j, const char *key, const char *v);
void gmt_json_kv_u64(gmt_json_t *j, const char *key, uint64_t v);
void gmt_json_kv_i64(gmt_json_t *j, const char *key, int64_t v);
void gmt_json_kv_double(gmt_json_t *j, const char *key, double v);
void gmt_json_kv_fixed(gmt_json_t *j, const char *key, double v, int decimals);
void gmt_json_kv_bool(gmt_json_t *j, const char *key, int v);
void gmt_json_kv_null(gmt_json_t *j, const char *key);
void gmt_json_kv_obj_begin(gmt_json_t *j, const char *key);
void gmt_json_kv_arr_begin(gmt_json_t *j, const char *key);

/* Ends the document: completes what is open (see above), writes a newline
 * after a complete top-level value, flushes. Returns 0, -EINVAL (a call was
 * out of place, or the document was not closed by its caller) or -EIO (a
 * write failed). Nothing written (no value at all): 0, and no newline. */
int gmt_json_close(gmt_json_t *j);

#endif /* GMT_JSON_H */
