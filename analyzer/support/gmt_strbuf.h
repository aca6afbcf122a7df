/*
 * gmt_strbuf.h - PRIVATE to analyzer/: a growing string, NUL-terminated
 * after every append; an allocation failure is sticky (oom) and later
 * appends do nothing. Free b when done.
 */
#ifndef GMT_STRBUF_H
#define GMT_STRBUF_H

#include <stdlib.h>
#include <string.h>

typedef struct gmt_strbuf {
	char *b;
	size_t len, cap;
	int oom;
} gmt_strbuf_t;

static inline void gmt_strbuf_put(gmt_strbuf_t *f, const char *s, size_t n)
{
	if (f->oom)
		return;
	if (f->len + n + 1 > f->cap) {
		size_t c = f->cap ? f->cap : 256;
		while (c < f->len + n + 1)
			c *= 2;
		char *nb = realloc(f->b, c);
		if (!nb) {
			f->oom = 1;
			return;
		}
		f->b = nb;
		f->cap = c;
	}
	memcpy(f->b + f->len, s, n);
	f->len += n;
	f->b[f->len] = 0;
}

#endif /* GMT_STRBUF_H */
