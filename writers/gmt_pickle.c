/*
 * gmt_pickle.c - the pickle writer of gmt_pickle.h. The opcodes and their
 * encodings are those of Python's pickle protocol (Lib/pickletools.py
 * documents each); only the plain-value subset the header lists is written.
 *
 * A container's items are pushed after a MARK and collected by one APPENDS
 * (list) or SETITEMS (dict) per batch: the writer opens a batch with MARK at
 * the first item and closes it after GMT_PICKLE_BATCH items (pairs, in a
 * dict) or at the container's end.
 *
 * Strings are memoized, as Python's pickler does: the first occurrence of a
 * text is written and put in the memo (MEMOIZE at protocol 4, BINPUT or
 * LONG_BINPUT with the next index below it), each later one is a BINGET
 * (index below 256) or LONG_BINGET of it, unless the text is shorter than
 * that reference. A memo entry is a string, which neither reader can
 * change, so sharing one object among many places is what the value means.
 * The memo keeps at most MEMO_MAX texts of at most MEMO_LEN bytes each,
 * MEMO_BYTES in all; texts beyond are written in full every time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_pickle.h"

enum {
	OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M',
	OP_NONE = 'N', OP_BINUNICODE = 'X', OP_APPENDS = 'e', OP_BINFLOAT = 'G',
	OP_EMPTY_LIST = ']', OP_EMPTY_DICT = '}', OP_SETITEMS = 'u', OP_PROTO = 0x80,
	OP_LONG1 = 0x8a, OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_SHORT_BINUNICODE = 0x8c,
	OP_MEMOIZE = 0x94, OP_BINPUT = 'q', OP_LONG_BINPUT = 'r', OP_BINGET = 'h', OP_LONG_BINGET = 'j',
};

struct level {
	char kind;        /* 'd' or 'l' */
	uint32_t in_batch;  /* values pushed since the batch's MARK */
	uint32_t full;    /* ... when the batch is full: GMT_PICKLE_BATCH
			     items (a dict's are pairs) */
};

/* Bytes gathered before one fwrite: a value is a few bytes, and stdio's
 * per-call cost was most of the export's time. */
#define BUF_CAP 65536

#define MEMO_MAX   65536         /* texts in the memo                   */
#define MEMO_LEN   1024          /* the longest text memoized           */
#define MEMO_BYTES (4u << 20)    /* their bytes together                */
#define MEMO_SLOTS (2 * MEMO_MAX) /* the hash table: a power of two    */

typedef struct memo_slot {
	uint64_t hash;
	uint32_t off, len;       /* the text in memo_text                  */
	uint32_t idx;            /* memo index + 1; 0: empty slot          */
} memo_slot_t;

struct gmt_pickle {
	FILE *out;
	int protocol;
	int err;
	unsigned depth;
	size_t top_values;
	struct level lv[GMT_PICKLE_MAX_DEPTH];
	struct level *top;       /* &lv[depth - 1] (NULL at the top level)  */
	memo_slot_t *slots;      /* NULL: no memo (out of memory)          */
	struct pcache {          /* gmt_pickle_str_static: by address       */
		const char *s;
		uint32_t idx, n;     /* memo index + 1 (0: empty), length   */
	} pc[256];
	char *memo_text;
	uint32_t n_memo, memo_used;
	size_t len;
	unsigned char buf[BUF_CAP + 16];   /* 16: room()'s whole-word stores */
};

static void flush(gmt_pickle_t *p)
{
	if (p->len && !p->err && fwrite(p->buf, 1, p->len, p->out) != p->len)
		p->err = -EIO;
	p->len = 0;
}

gmt_pickle_t *gmt_pickle_open(FILE *out, int protocol)
{
	if (protocol < 2 || protocol > 4) {
		errno = EINVAL;
		return NULL;
	}
	gmt_pickle_t *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->out = out;
	p->protocol = protocol;
	p->slots = calloc(MEMO_SLOTS, sizeof(*p->slots));
	p->memo_text = malloc(MEMO_BYTES);
	if (!p->slots || !p->memo_text) {   /* a pickle without memo is as good */
		free(p->slots);
		free(p->memo_text);
		p->slots = NULL;
		p->memo_text = NULL;
	}
	p->buf[0] = OP_PROTO;
	p->buf[1] = (unsigned char)protocol;
	p->len = 2;
	return p;
}

static inline void put(gmt_pickle_t *p, const void *b, size_t n)
{
	if (p->len + n > BUF_CAP) {
		flush(p);
		if (n > BUF_CAP) {
			if (!p->err && fwrite(b, 1, n, p->out) != n)
				p->err = -EIO;
			return;
		}
	}
	memcpy(p->buf + p->len, b, n);
	p->len += n;
}

static inline void op(gmt_pickle_t *p, unsigned char c)
{
	if (p->len == BUF_CAP)
		flush(p);
	p->buf[p->len++] = c;
}

/* At least 16 bytes free at the returned position (a value's opcode and
 * up to 9 bytes are stored with whole words there; the caller advances
 * p->len by what it wrote). */
static inline unsigned char *room(gmt_pickle_t *p)
{
	if (p->len + 16 > BUF_CAP)
		flush(p);
	return p->buf + p->len;
}

/* v's eight bytes little-endian at o (of which the caller keeps some). */
static inline void st_le64(unsigned char *o, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(o, &v, 8);
}

/* v's n (<= 8) low bytes, little-endian. */
static inline void le(gmt_pickle_t *p, uint64_t v, unsigned n)
{
	st_le64(room(p), v);
	p->len += n;
}

/* Before a value: a container's batch starts with a MARK. */
static inline int value_begin(gmt_pickle_t *p)
{
	if (p->err)
		return -1;
	if (!p->depth) {
		if (p->top_values) {
			p->err = -EINVAL;
			return -1;
		}
		return 0;
	}
	struct level *l = &p->lv[p->depth - 1];
	if (!l->in_batch)
		op(p, OP_MARK);
	return 0;
}

/* After a value: a full batch is collected. */
static inline void value_end(gmt_pickle_t *p)
{
	if (!p->depth) {
		p->top_values++;
		return;
	}
	struct level *l = &p->lv[p->depth - 1];
	if (++l->in_batch == l->full) {
		op(p, l->kind == 'd' ? OP_SETITEMS : OP_APPENDS);
		l->in_batch = 0;
	}
}

static void begin(gmt_pickle_t *p, char kind)
{
	if (value_begin(p))
		return;
	if (p->depth == GMT_PICKLE_MAX_DEPTH) {
		p->err = -EINVAL;
		return;
	}
	op(p, kind == 'd' ? OP_EMPTY_DICT : OP_EMPTY_LIST);
	p->lv[p->depth++] = (struct level){ kind, 0, kind == 'd' ? 2 * GMT_PICKLE_BATCH : GMT_PICKLE_BATCH };
	p->top = &p->lv[p->depth - 1];
}

static void end(gmt_pickle_t *p, char kind)
{
	if (p->err)
		return;
	if (!p->depth || p->lv[p->depth - 1].kind != kind) {
		p->err = -EINVAL;
		return;
	}
	struct level *l = &p->lv[p->depth - 1];
	if (kind == 'd' && l->in_batch % 2) {
		p->err = -EINVAL;
		return;
	}
	if (l->in_batch)
		op(p, kind == 'd' ? OP_SETITEMS : OP_APPENDS);
	p->depth--;
	p->top = p->depth ? &p->lv[p->depth - 1] : NULL;
	value_end(p);
}

void gmt_pickle_dict_begin(gmt_pickle_t *p) { begin(p, 'd'); }
void gmt_pickle_dict_end(gmt_pickle_t *p) { end(p, 'd'); }
void gmt_pickle_list_begin(gmt_pickle_t *p) { begin(p, 'l'); }
void gmt_pickle_list_end(gmt_pickle_t *p) { end(p, 'l'); }

/* A hash of the text: eight bytes at a time, the last up to seven in one
 * word read as two overlapping halves (any hash would do: a hit is
 * compared byte for byte). */
static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		w = a | (uint64_t)b << 32;
	} else if (n) {
		w = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
		    (uint64_t)(unsigned char)s[n - 1] << 16;
	} else {
		return h ^ (h >> 32);
	}
	h = (h ^ w) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

/* A reference to memo entry idx, or the text itself when that is
 * shorter; returns 1 when written. */
static inline int memo_get(gmt_pickle_t *p, uint32_t idx, size_t n)
{
	if (idx >= 256 && n <= 3)
		return 0;
	unsigned char *o = room(p);
	if (idx < 256) {
		o[0] = OP_BINGET;
		o[1] = (unsigned char)idx;
		p->len += 2;
	} else {
		o[0] = OP_LONG_BINGET;
		st_le64(o + 1, idx);
		p->len += 5;
	}
	return 1;
}

/* Puts the string just written (on the stack) in the memo as entry idx. */
static void memo_put(gmt_pickle_t *p, uint32_t idx)
{
	if (p->protocol >= 4) {
		op(p, OP_MEMOIZE);
	} else if (idx < 256) {
		op(p, OP_BINPUT);
		op(p, (unsigned char)idx);
	} else {
		op(p, OP_LONG_BINPUT);
		le(p, idx, 4);
	}
}

/* Writes the string; returns its memo index + 1, 0 when it is not in the
 * memo. */
static uint32_t str_write(gmt_pickle_t *p, const char *s, size_t n)
{
	if (value_begin(p))
		return 0;
	memo_slot_t *slot = NULL;
	if (p->slots && n && n <= MEMO_LEN) {
		uint64_t h = text_hash(s, n);
		for (size_t i = (size_t)h & (MEMO_SLOTS - 1);; i = (i + 1) & (MEMO_SLOTS - 1)) {
			memo_slot_t *e = &p->slots[i];
			if (!e->idx) {
				if (p->n_memo < MEMO_MAX && p->memo_used + n <= MEMO_BYTES)
					slot = e;
				break;
			}
			if (e->hash == h && e->len == n && !memcmp(p->memo_text + e->off, s, n)) {
				if (memo_get(p, e->idx - 1, n)) {
					value_end(p);
					return e->idx;
				}
				break;
			}
		}
		if (slot) {
			memcpy(p->memo_text + p->memo_used, s, n);
			*slot = (memo_slot_t){ h, p->memo_used, (uint32_t)n, ++p->n_memo };
			p->memo_used += (uint32_t)n;
		}
	}
	if (n < 256 && p->protocol >= 4) {
		op(p, OP_SHORT_BINUNICODE);
		op(p, (unsigned char)n);
	} else if (n <= UINT32_MAX) {
		op(p, OP_BINUNICODE);
		le(p, n, 4);
	} else {
		p->err = -EINVAL;
		return 0;
	}
	put(p, s, n);
	if (slot)
		memo_put(p, slot->idx - 1);
	value_end(p);
	return slot ? slot->idx : 0;
}

void gmt_pickle_str_n(gmt_pickle_t *p, const char *s, size_t n)
{
	str_write(p, s, n);
}

void gmt_pickle_str(gmt_pickle_t *p, const char *s)
{
	str_write(p, s, strlen(s));
}

/* The common case, with no call: inside a container, in a batch already
   begun that this value does not fill, no error, and 32 bytes free. The
   caller writes at most 10 bytes and counts the value. */
static inline struct level *fast(gmt_pickle_t *p)
{
	struct level *l = p->top;
	if (__builtin_expect(l && !p->err && p->len + 32 <= BUF_CAP && l->in_batch && l->in_batch + 1 < l->full, 1))
		return l;
	return NULL;
}

/* A string not found by its address: written (or found in the memo by
   its text), and its address kept (out of line: the caller's fast way
   saves no registers). */
static __attribute__((noinline)) void str_static_slow(gmt_pickle_t *p, const char *s, struct pcache *c)
{
	if (c->s == s && c->idx && (c->idx <= 256 || c->n > 3)) {
		if (value_begin(p))
			return;
		memo_get(p, c->idx - 1, c->n);
		value_end(p);
		return;
	}
	size_t n = strlen(s);
	uint32_t idx = str_write(p, s, n);
	if (idx)
		*c = (struct pcache){ s, idx, (uint32_t)n };
}

void gmt_pickle_str_static(gmt_pickle_t *p, const char *s)
{
	struct pcache *c = &p->pc[((uintptr_t)s >> 3) & 255];
	struct level *l;
	if (c->s == s && c->idx && c->idx <= 256 && (l = fast(p))) {
		unsigned char *o = p->buf + p->len;
		o[0] = OP_BINGET;
		o[1] = (unsigned char)(c->idx - 1);
		p->len += 2;
		l->in_batch++;
		return;
	}
	str_static_slow(p, s, c);
}

/* v's opcode and bytes at o (16 bytes of room); returns their length:
   BININT1, BININT2 or BININT where they hold it, else LONG1 with the
   fewest little-endian two's complement bytes that hold v (its
   significant bits and a sign bit; v is not 0 or -1 there). */
static inline __attribute__((always_inline)) size_t int_op(unsigned char *o, int64_t v)
{
	if (v >= 0 && v < 256) {
		o[0] = OP_BININT1;
		o[1] = (unsigned char)v;
		return 2;
	}
	st_le64(o + 1, (uint64_t)v);
	if (v >= 0 && v < 65536) {
		o[0] = OP_BININT2;
		return 3;
	}
	if (v >= INT32_MIN && v <= INT32_MAX) {
		o[0] = OP_BININT;
		return 5;
	}
	uint64_t mag = v < 0 ? ~(uint64_t)v : (uint64_t)v;
	unsigned n = (unsigned)(64 - __builtin_clzll(mag) + 1 + 7) / 8;
	o[0] = OP_LONG1;
	o[1] = (unsigned char)n;
	st_le64(o + 2, (uint64_t)v);
	return 2 + n;
}

static void int_slow(gmt_pickle_t *p, int64_t v);

void gmt_pickle_int(gmt_pickle_t *p, int64_t v)
{
	struct level *l;
	if ((l = fast(p))) {
		p->len += int_op(p->buf + p->len, v);
		l->in_batch++;
		return;
	}
	int_slow(p, v);
}

/* gmt_pickle_int's general way (out of line, as str_static_slow). */
static __attribute__((noinline)) void int_slow(gmt_pickle_t *p, int64_t v)
{
	if (value_begin(p))
		return;
	unsigned char *o = room(p);
	p->len += int_op(o, v);
	value_end(p);
}

void gmt_pickle_uint(gmt_pickle_t *p, uint64_t v)
{
	if (v <= INT64_MAX) {
		gmt_pickle_int(p, (int64_t)v);
		return;
	}
	if (value_begin(p))
		return;
	op(p, OP_LONG1);
	op(p, 9);  /* eight bytes and a zero sign byte */
	le(p, v, 8);
	op(p, 0);
	value_end(p);
}

void gmt_pickle_float(gmt_pickle_t *p, double v)
{
	uint64_t bits;
	unsigned char b[8];
	if (value_begin(p))
		return;
	memcpy(&bits, &v, sizeof(bits));
	for (unsigned i = 0; i < 8; i++)
		b[i] = (unsigned char)(bits >> (56 - 8 * i));  /* big-endian */
	op(p, OP_BINFLOAT);
	put(p, b, 8);
	value_end(p);
}

void gmt_pickle_bool(gmt_pickle_t *p, int v)
{
	if (value_begin(p))
		return;
	op(p, v ? OP_NEWTRUE : OP_NEWFALSE);
	value_end(p);
}

void gmt_pickle_none(gmt_pickle_t *p)
{
	if (value_begin(p))
		return;
	op(p, OP_NONE);
	value_end(p);
}

int gmt_pickle_close(gmt_pickle_t *p)
{
	int rc = p->err;
	if (!rc && (p->depth || p->top_values != 1))
		rc = -EINVAL;
	if (!rc) {
		op(p, OP_STOP);
		flush(p);
		rc = p->err;
	}
	if (!rc && ferror(p->out))
		rc = -EIO;
	free(p->slots);
	free(p->memo_text);
	free(p);
	return rc;
}
