/*
 * gmt_spool.h - PRIVATE to analyzer/: append-only byte streams kept in one
 * anonymous temporary file (the report model's per-process values at every
 * instant, read back in time order to merge processes that share a device).
 *
 * A stream buffers one chunk in memory; a full chunk goes to the end of the
 * file (as it is while the file is below GMT_SPOOL_RAW_FIRST bytes, then
 * compressed with zstd) and the stream remembers where. Closing a stream writes its last
 * chunk and frees its buffer, so memory is one chunk per open stream and
 * per reader (and its compressed form), whatever the length of the streams. The file (tmpfile(3):
 * in $TMPDIR or /tmp, unlinked) is made when the first chunk is written and
 * goes away with the spool.
 */
#ifndef GMT_SPOOL_H
#define GMT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define GMT_SPOOL_CHUNK 65536
/* The file's first bytes are chunks as they are (no zstd either way). */
#define GMT_SPOOL_RAW_FIRST (64ull << 20)

typedef struct gmt_spool gmt_spool_t;

/* NULL when out of memory. */
gmt_spool_t *gmt_spool_new(void);
void gmt_spool_free(gmt_spool_t *sp);
/* The file's first bytes written as they are (default GMT_SPOOL_RAW_FIRST;
 * 0: every chunk compressed). Affects the chunks written after the call. */
void gmt_spool_set_raw_first(gmt_spool_t *sp, uint64_t bytes);

/* A new empty stream; *id gets its number. 0 or -ENOMEM. */
int gmt_spool_open(gmt_spool_t *sp, size_t *id);
/* Appends n bytes (an open stream). 0, -EIO (the file) or -ENOMEM. */
int gmt_spool_write(gmt_spool_t *sp, size_t id, const void *p, size_t n);
/* Forgets what the stream holds (it stays open, empty). */
void gmt_spool_truncate(gmt_spool_t *sp, size_t id);
/* Writes the stream's last chunk and frees its buffer; no more writes.
 * 0, -EIO or -ENOMEM. */
int gmt_spool_close(gmt_spool_t *sp, size_t id);
/* Bytes a stream holds; bytes in the file. */
uint64_t gmt_spool_size(const gmt_spool_t *sp, size_t id);
uint64_t gmt_spool_file_bytes(const gmt_spool_t *sp);
/* Bytes written to the file, before compression. */
uint64_t gmt_spool_raw_bytes(const gmt_spool_t *sp);

/* A sequential reader of a closed stream (one chunk of buffer). */
typedef struct gmt_spool_reader {
	const gmt_spool_t *sp;
	size_t id, chunk;        /* the next chunk to read */
	uint8_t *buf;
	uint8_t *cbuf;           /* a chunk as read, compressed */
	size_t pos, len;         /* buf[pos..len) not yet consumed */
	int err;                 /* -EIO once a read failed */
} gmt_spool_reader_t;

/* 0 or -ENOMEM. */
int gmt_spool_reader_open(gmt_spool_reader_t *r, const gmt_spool_t *sp, size_t id);
/* Makes at least one byte available in buf[pos..len): 1, or 0 at the end
 * of the stream (or after a read error: r->err). */
int gmt_spool_reader_fill(gmt_spool_reader_t *r);
void gmt_spool_reader_close(gmt_spool_reader_t *r);

#endif /* GMT_SPOOL_H */
