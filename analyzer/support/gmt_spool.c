/*
 * gmt_spool.c - the streams of gmt_spool.h. Each stream is a list of
 * chunks, each a (file offset, length on file, length) triple, written
 * with pwrite at the file's end and read back with pread, so several
 * readers share the one descriptor. The file's first raw_first bytes
 * (GMT_SPOOL_RAW_FIRST) are chunks as they are; later chunks are
 * compressed with zstd (level 1: the report model's rows shrink by about
 * 1.8). Compressing and decompressing were 14% of the report's
 * instructions on make bench's mixed trace, for a file of 6.4 MB instead
 * of 3.6 (docs/performance.md, session 8): a trace of fewer than about ten
 * million instants pays no zstd, a longer one only beyond.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "support/gmt_spool.h"

typedef struct chunk {
	uint64_t off;
	uint32_t clen;           /* on file (compressed; CLEN_RAW: as it is) */
	uint32_t len;            /* decompressed */
} chunk_t;
#define CLEN_RAW 0x80000000u

typedef struct stream {
	chunk_t *chunks;
	size_t n, cap;
	uint8_t *buf;            /* the chunk being filled (NULL once closed) */
	size_t len;
	uint64_t size;
	int closed;
} stream_t;

struct gmt_spool {
	FILE *f;
	int fd;
	uint64_t end;
	stream_t *s;
	size_t n, cap;
	ZSTD_CCtx *cctx;
	uint8_t *cbuf;           /* ZSTD_compressBound(GMT_SPOOL_CHUNK) */
	uint64_t raw;            /* bytes before compression */
	uint64_t raw_first;      /* the file's first bytes not compressed */
};

gmt_spool_t *gmt_spool_new(void)
{
	gmt_spool_t *sp = calloc(1, sizeof(*sp));
	if (sp) {
		sp->fd = -1;
		sp->raw_first = GMT_SPOOL_RAW_FIRST;
	}
	return sp;
}

void gmt_spool_set_raw_first(gmt_spool_t *sp, uint64_t bytes)
{
	sp->raw_first = bytes;
}

void gmt_spool_free(gmt_spool_t *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->n; i++) {
		free(sp->s[i].chunks);
		free(sp->s[i].buf);
	}
	free(sp->s);
	if (sp->f)
		fclose(sp->f);
	ZSTD_freeCCtx(sp->cctx);
	free(sp->cbuf);
	free(sp);
}

int gmt_spool_open(gmt_spool_t *sp, size_t *id)
{
	if (sp->n == sp->cap) {
		size_t c = sp->cap ? sp->cap * 2 : 16;
		stream_t *p = realloc(sp->s, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		sp->s = p;
		sp->cap = c;
	}
	stream_t *s = &sp->s[sp->n];
	memset(s, 0, sizeof(*s));
	if (!(s->buf = malloc(GMT_SPOOL_CHUNK)))
		return -ENOMEM;
	*id = sp->n++;
	return 0;
}

/* The stream's buffered bytes as its next chunk, at the file's end. */
static int put_chunk(gmt_spool_t *sp, stream_t *s)
{
	if (!s->len)
		return 0;
	if (!sp->f) {
		if (!(sp->f = tmpfile()))
			return -EIO;
		sp->fd = fileno(sp->f);
	}
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		chunk_t *p = realloc(s->chunks, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->chunks = p;
		s->cap = c;
	}
	const uint8_t *out = s->buf;
	size_t clen = s->len;
	uint32_t flag = CLEN_RAW;
	if (sp->end + s->len > sp->raw_first) {
		if (!sp->cctx && !(sp->cctx = ZSTD_createCCtx()))
			return -ENOMEM;
		if (!sp->cbuf && !(sp->cbuf = malloc(ZSTD_compressBound(GMT_SPOOL_CHUNK))))
			return -ENOMEM;
		clen = ZSTD_compressCCtx(sp->cctx, sp->cbuf, ZSTD_compressBound(GMT_SPOOL_CHUNK), s->buf, s->len, 1);
		if (ZSTD_isError(clen))
			return -EIO;
		out = sp->cbuf;
		flag = 0;
	}
	size_t done = 0;
	while (done < clen) {
		ssize_t w = pwrite(sp->fd, out + done, clen - done, (off_t)(sp->end + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		done += (size_t)w;
	}
	s->chunks[s->n++] = (chunk_t){ sp->end, (uint32_t)clen | flag, (uint32_t)s->len };
	sp->end += clen;
	sp->raw += s->len;
	s->len = 0;
	return 0;
}

int gmt_spool_write(gmt_spool_t *sp, size_t id, const void *p, size_t n)
{
	stream_t *s = &sp->s[id];
	const uint8_t *b = p;
	if (s->closed)
		return -EINVAL;
	while (n) {
		size_t k = GMT_SPOOL_CHUNK - s->len;
		k = k < n ? k : n;
		memcpy(s->buf + s->len, b, k);
		s->len += k;
		s->size += k;
		b += k;
		n -= k;
		int rc;
		if (s->len == GMT_SPOOL_CHUNK && (rc = put_chunk(sp, s)))
			return rc;
	}
	return 0;
}

void gmt_spool_truncate(gmt_spool_t *sp, size_t id)
{
	stream_t *s = &sp->s[id];
	s->n = 0;        /* the file keeps the bytes, unused */
	s->len = 0;
	s->size = 0;
}

int gmt_spool_close(gmt_spool_t *sp, size_t id)
{
	stream_t *s = &sp->s[id];
	if (s->closed)
		return 0;
	int rc = put_chunk(sp, s);
	free(s->buf);
	s->buf = NULL;
	s->closed = 1;
	return rc;
}

uint64_t gmt_spool_size(const gmt_spool_t *sp, size_t id)
{
	return sp->s[id].size;
}

uint64_t gmt_spool_file_bytes(const gmt_spool_t *sp)
{
	return sp->end;
}

uint64_t gmt_spool_raw_bytes(const gmt_spool_t *sp)
{
	return sp->raw;
}

int gmt_spool_reader_open(gmt_spool_reader_t *r, const gmt_spool_t *sp, size_t id)
{
	memset(r, 0, sizeof(*r));
	r->sp = sp;
	r->id = id;
	r->buf = malloc(GMT_SPOOL_CHUNK);
	r->cbuf = malloc(ZSTD_compressBound(GMT_SPOOL_CHUNK));
	if (!r->buf || !r->cbuf) {
		gmt_spool_reader_close(r);
		return -ENOMEM;
	}
	return 0;
}

int gmt_spool_reader_fill(gmt_spool_reader_t *r)
{
	if (r->pos < r->len)
		return 1;
	const stream_t *s = &r->sp->s[r->id];
	while (!r->err && r->chunk < s->n) {
		const chunk_t *c = &s->chunks[r->chunk++];
		const int raw = (c->clen & CLEN_RAW) != 0;
		const size_t clen = c->clen & ~CLEN_RAW;
		uint8_t *in = raw ? r->buf : r->cbuf;
		size_t done = 0;
		if (raw && clen != c->len) {
			r->err = -EIO;
			return 0;
		}
		while (done < clen) {
			ssize_t g = pread(r->sp->fd, in + done, clen - done, (off_t)(c->off + done));
			if (g < 0 && errno == EINTR)
				continue;
			if (g <= 0) {
				r->err = -EIO;
				return 0;
			}
			done += (size_t)g;
		}
		if (!raw) {
			size_t n = ZSTD_decompress(r->buf, GMT_SPOOL_CHUNK, r->cbuf, clen);
			if (ZSTD_isError(n) || n != c->len) {
				r->err = -EIO;
				return 0;
			}
		}
		r->pos = 0;
		r->len = c->len;
		if (r->len)
			return 1;
	}
	return 0;
}

void gmt_spool_reader_close(gmt_spool_reader_t *r)
{
	free(r->buf);
	free(r->cbuf);
	r->buf = r->cbuf = NULL;
}
