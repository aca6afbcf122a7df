/*
 * gmt_json.c - the streaming JSON writer (contract in gmt_json.h).
 *
 * Every token goes through item(): it decides, from the innermost open
 * level, whether the token may come here, and writes the comma (and the
 * requested newline) before it. Once a call was out of place, err is set and
 * item() refuses everything; gmt_json_close completes the open levels.
 */
#include "gmt_json.h"
#include "gmt_digits.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* The text goes to j->buf and from there to the FILE a buffer at a time
 * (gmt_json_flush, gmt_json_close): stdio's call per token, even
 * unlocked, was a fifth of the chrome export. A document is written by one
 * thread (stdio's unlocked call), and nothing else writes to its FILE
 * until it is flushed. */

void gmt_json_init(gmt_json_t *j, FILE *f)
{
	j->f = f;
	j->err = 0;
	j->len = 0;
	j->depth = 0;
	j->key_due = j->done = j->nl = j->closed = 0;
}

int gmt_json_flush(gmt_json_t *j)
{
	size_t n = j->len;
	j->len = 0;
	if (n && fwrite_unlocked(j->buf, 1, n, j->f) != n)
		return -EIO;
	return ferror(j->f) ? -EIO : 0;
}

static void put(gmt_json_t *j, const void *p, size_t n)
{
	if (j->len + n > GMT_JSON_BUF) {
		gmt_json_flush(j);
		if (n > GMT_JSON_BUF) {
			fwrite_unlocked(p, 1, n, j->f);
			return;
		}
	}
	memcpy(j->buf + j->len, p, n);
	j->len += n;
}

static inline void putch(gmt_json_t *j, char c)
{
	if (j->len == GMT_JSON_BUF)
		gmt_json_flush(j);
	j->buf[j->len++] = c;
}

static void puts_(gmt_json_t *j, const char *s)
{
	put(j, s, strlen(s));
}

static void misuse(gmt_json_t *j)
{
	j->err = -EINVAL;
}

/* May a key (is_key) or a value come now? Writes the separator and the
 * requested newline; returns 0 when the token must not be written. */
static int item(gmt_json_t *j, int is_key)
{
	if (j->err)
		return 0;
	if (!j->depth) {
		if (j->done || is_key) {
			misuse(j);
			return 0;
		}
	} else if (j->open[j->depth - 1] == '{') {
		if (is_key == j->key_due) {   /* a key after a key, or a value without one */
			misuse(j);
			return 0;
		}
		if (!is_key) {                /* the value of the key just written */
			j->key_due = 0;
			return 1;
		}
		j->key_due = 1;
	} else if (is_key) {
		misuse(j);
		return 0;
	}
	if (j->depth && j->members[j->depth - 1])
		putch(j, ',');
	if (j->depth)
		j->members[j->depth - 1] = 1;
	if (j->nl) {
		putch(j, '\n');
		j->nl = 0;
	}
	return 1;
}

/* A value just ended: at the top level, the document is complete. */
static void value_done(gmt_json_t *j)
{
	if (!j->depth)
		j->done = 1;
}

static void begin(gmt_json_t *j, unsigned char c)
{
	if (j->depth >= GMT_JSON_MAX_DEPTH) {
		if (!j->err)
			misuse(j);
		return;
	}
	if (!item(j, 0))
		return;
	putch(j, (char)c);
	j->open[j->depth] = c;
	j->members[j->depth] = 0;
	j->depth++;
}

static void end(gmt_json_t *j, unsigned char c)
{
	if (j->err)
		return;
	if (!j->depth || j->open[j->depth - 1] != c || j->key_due) {
		misuse(j);
		return;
	}
	if (j->nl) {
		putch(j, '\n');
		j->nl = 0;
	}
	putch(j, c == '{' ? '}' : ']');
	j->depth--;
	value_done(j);
}

void gmt_json_obj_begin(gmt_json_t *j)
{
	begin(j, '{');
}

void gmt_json_obj_end(gmt_json_t *j)
{
	end(j, '{');
}

void gmt_json_arr_begin(gmt_json_t *j)
{
	begin(j, '[');
}

void gmt_json_arr_end(gmt_json_t *j)
{
	end(j, '[');
}

/* Length of the valid UTF-8 sequence at p (at most n bytes there), 0 when
 * it is not one: overlong forms, surrogates and code points above U+10FFFF
 * are not. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}

/* The quoted, escaped string; plain runs are written in one call
 * (printable ASCII tested inline, utf8_len only for bytes above it). */
static void put_string(gmt_json_t *j, const unsigned char *p, size_t n)
{
	const unsigned char *run = p;   /* not yet written: run .. p */
	putch(j, '"');
	while (n) {
		if (n >= 8) {
			/* eight bytes at a time while none is a control byte, DEL,
			   quote, backslash or above ASCII (exact tests of any
			   byte: below 0x20, 0x80 set, equal to one of three) */
			uint64_t x;
			memcpy(&x, p, 8);
			const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
#define ZERO_BYTE(v) (((v) - ones) & ~(v) & high)
			if (!(((x - 0x20 * ones) & ~x & high) | (x & high) | ZERO_BYTE(x ^ (0x7f * ones)) |
			      ZERO_BYTE(x ^ ('"' * ones)) | ZERO_BYTE(x ^ ('\\' * ones)))) {
				p += 8;
				n -= 8;
				continue;
			}
#undef ZERO_BYTE
		}
		unsigned c = *p;
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			p++;
			n--;
			continue;
		}
		size_t len = c >= 0x80 ? utf8_len(p, n) : 0;
		if (len) {
			p += len;
			n -= len;
			continue;
		}
		if (p > run)
			put(j, run, (size_t)(p - run));
		if (c == '"' || c == '\\') {
			putch(j, '\\');
			putch(j, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char u[8];
			snprintf(u, sizeof(u), "\\u%04x", c);
			puts_(j, u);
		} else {
			puts_(j, "\\ufffd");
		}
		p++;
		n--;
		run = p;
	}
	if (p > run)
		put(j, run, (size_t)(p - run));
	putch(j, '"');
}

void gmt_json_key(gmt_json_t *j, const char *key)
{
	if (!key) {
		if (!j->err)
			misuse(j);
		return;
	}
	if (!item(j, 1))
		return;
	put_string(j, (const unsigned char *)key, strlen(key));
	putch(j, ':');
}

void gmt_json_strn(gmt_json_t *j, const char *s, size_t n)
{
	if (!item(j, 0))
		return;
	if (s)
		put_string(j, (const unsigned char *)s, n);
	else
		puts_(j, "null");
	value_done(j);
}

void gmt_json_str(gmt_json_t *j, const char *s)
{
	gmt_json_strn(j, s, s ? strlen(s) : 0);
}

/* v in decimal, in one write (printf's parsing was most of an integer's
 * cost, and curves writes millions of them): eight digits at a time. */
static void put_u64(gmt_json_t *j, uint64_t v, int neg)
{
	if (j->len + 40 > GMT_JSON_BUF)
		gmt_json_flush(j);
	char *b = j->buf + j->len, *p = b;
	if (neg)
		*p++ = '-';
	p = gmt_put_dec(p, v);
	j->len += (size_t)(p - b);
}

void gmt_json_u64(gmt_json_t *j, uint64_t v)
{
	if (!item(j, 0))
		return;
	put_u64(j, v, 0);
	value_done(j);
}

void gmt_json_i64(gmt_json_t *j, int64_t v)
{
	if (!item(j, 0))
		return;
	put_u64(j, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
	value_done(j);
}

void gmt_json_double(gmt_json_t *j, double v)
{
	if (!item(j, 0))
		return;
	if (isfinite(v)) {
		char b[40];
		snprintf(b, sizeof(b), "%.17g", v);
		puts_(j, b);
	} else
		puts_(j, "null");
	value_done(j);
}

void gmt_json_fixed(gmt_json_t *j, double v, int decimals)
{
	if (!item(j, 0))
		return;
	if (decimals < 0)
		decimals = 0;
	if (decimals > 17)
		decimals = 17;
	if (isfinite(v)) {
		char b[400];   /* %.17f of DBL_MAX: 309 digits and 18 more */
		snprintf(b, sizeof(b), "%.*f", decimals, v);
		puts_(j, b);
	} else
		puts_(j, "null");
	value_done(j);
}

void gmt_json_scaled(gmt_json_t *j, int64_t v, unsigned decimals)
{
	static const double pow10[18] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
					  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17 };
	char b[48], *e;
	if (decimals > 17)
		decimals = 17;
	if (!(e = gmt_put_scaled(b, v, decimals))) {
		gmt_json_fixed(j, (double)v / pow10[decimals], (int)decimals);
		return;
	}
	if (!item(j, 0))
		return;
	put(j, b, (size_t)(e - b));
	value_done(j);
}

void gmt_json_raw(gmt_json_t *j, const char *text, size_t n)
{
	if (!item(j, 0))
		return;
	put(j, text, n);
	value_done(j);
}

void gmt_json_bool(gmt_json_t *j, int v)
{
	if (!item(j, 0))
		return;
	puts_(j, v ? "true" : "false");
	value_done(j);
}

void gmt_json_null(gmt_json_t *j)
{
	if (!item(j, 0))
		return;
	puts_(j, "null");
	value_done(j);
}

void gmt_json_newline(gmt_json_t *j)
{
	if (!j->err)
		j->nl = 1;
}

void gmt_json_kv_str(gmt_json_t *j, const char *key, const char *v)
{
	gmt_json_key(j, key);
	gmt_json_str(j, v);
}

void gmt_json_kv_u64(gmt_json_t *j, const char *key, uint64_t v)
{
	gmt_json_key(j, key);
	gmt_json_u64(j, v);
}

void gmt_json_kv_i64(gmt_json_t *j, const char *key, int64_t v)
{
	gmt_json_key(j, key);
	gmt_json_i64(j, v);
}

void gmt_json_kv_double(gmt_json_t *j, const char *key, double v)
{
	gmt_json_key(j, key);
	gmt_json_double(j, v);
}

void gmt_json_kv_fixed(gmt_json_t *j, const char *key, double v, int decimals)
{
	gmt_json_key(j, key);
	gmt_json_fixed(j, v, decimals);
}

void gmt_json_kv_bool(gmt_json_t *j, const char *key, int v)
{
	gmt_json_key(j, key);
	gmt_json_bool(j, v);
}

void gmt_json_kv_null(gmt_json_t *j, const char *key)
{
	gmt_json_key(j, key);
	gmt_json_null(j);
}

void gmt_json_kv_obj_begin(gmt_json_t *j, const char *key)
{
	gmt_json_key(j, key);
	gmt_json_obj_begin(j);
}

void gmt_json_kv_arr_begin(gmt_json_t *j, const char *key)
{
	gmt_json_key(j, key);
	gmt_json_arr_begin(j);
}

int gmt_json_close(gmt_json_t *j)
{
	if (j->closed)
		return -EINVAL;
	j->closed = 1;
	int rc = j->err;
	if (j->depth) {
		rc = -EINVAL;
		if (j->key_due)
			puts_(j, "null");
		while (j->depth) {
			j->depth--;
			putch(j, j->open[j->depth] == '{' ? '}' : ']');
		}
		j->key_due = 0;
		j->done = 1;
	}
	if (j->done)
		putch(j, '\n');
	j->err = -EINVAL;   /* nothing more after the close */
	if (gmt_json_flush(j) || fflush(j->f) || ferror(j->f))
		return -EIO;
	return rc;
}
