/*
 * gmt_memviz_render.c - `export --format memory-viz`: the memory-viz model
 * (model/gmt_memviz_model.h) through export/gmt_memviz.c, as JSON or a
 * pickle (docs/exports.md). Each entry, block and segment gets the frames
 * of its stack: a framework's text frames ("name (file:line)") split into
 * the viewer's name, filename and line; native frames symbolised (function,
 * source file or module, line). A driver-level allocation outside the
 * framework gets a first frame of its own that says so and names its
 * owner, so the viewer shows whose it is. Every number is the model's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_memviz.h"
#include "model/gmt_memviz_model.h"
#include "render/gmt_render.h"
#include "support/gmt_u64map.h"

/* Frames converted once per stack id (and per owner label). */
typedef struct flist {
	gmt_memviz_frame_t *f;
	size_t n;
	char **owned;
	size_t n_owned;
} flist_t;

typedef struct fcache {
	gmt_memviz_model_t *m;
	gmt_u64map_t map;        /* key -> index + 1 in lists */
	flist_t *lists;
	size_t n, cap;
	int err;
} fcache_t;

static const char *const outside_labels[GMT_DOWNERS] = {
	"outside the framework: application (a driver allocation no framework segment holds)",
	"outside the framework: nccl (a driver allocation no framework segment holds)",
	"outside the framework: cublas (a driver allocation no framework segment holds)",
	"outside the framework: cudnn (a driver allocation no framework segment holds)",
	"outside the framework: other (a driver allocation no framework segment holds)",
};

static char *keep(flist_t *l, const char *s, size_t len)
{
	char *c = malloc(len + 1);
	char **o = realloc(l->owned, (l->n_owned + 1) * sizeof(*o));
	if (!c || !o) {
		free(c);
		if (o)
			l->owned = o;
		return NULL;
	}
	memcpy(c, s, len);
	c[len] = 0;
	l->owned = o;
	l->owned[l->n_owned++] = c;
	return c;
}

/* "name (file:line)" -> the three parts; else name = the text. */
static int text_frame(flist_t *l, const char *t, gmt_memviz_frame_t *out)
{
	size_t n = strlen(t);
	const char *open = n && t[n - 1] == ')' ? strstr(t, " (") : NULL;
	while (open && strstr(open + 2, " ("))
		open = strstr(open + 2, " (");
	const char *colon = NULL;
	for (const char *c = open ? open + 2 : NULL; c && c < t + n - 1; c++)
		if (*c == ':')
			colon = c;
	if (open && colon) {
		char *end;
		unsigned long long line = strtoull(colon + 1, &end, 10);
		if (end == t + n - 1 && end > colon + 1) {
			out->name = keep(l, t, (size_t)(open - t));
			out->filename = keep(l, open + 2, (size_t)(colon - open - 2));
			out->line = line;
			return out->name && out->filename ? 0 : -ENOMEM;
		}
	}
	out->name = t;
	out->filename = "";
	out->line = 0;
	return 0;
}

static const flist_t *frames_of(fcache_t *c, uint32_t stack, int outside, unsigned owner)
{
	uint64_t key = (uint64_t)stack | (outside ? (uint64_t)(owner + 1) << 32 : 0);
	int existed;
	gmt_u64map_slot_t *sl = gmt_u64map_put(&c->map, key, &existed);
	if (!sl) {
		c->err = -ENOMEM;
		return NULL;
	}
	if (existed)
		return &c->lists[sl->a];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		flist_t *p = realloc(c->lists, cap * sizeof(*p));
		if (!p) {
			c->err = -ENOMEM;
			gmt_u64map_del(&c->map, sl);
			return NULL;
		}
		c->lists = p;
		c->cap = cap;
	}
	sl->a = c->n;
	flist_t *l = &c->lists[c->n++];
	memset(l, 0, sizeof(*l));
	const gmt_stack_view_t *v = stack ? gmt_stacks_view(c->m->stacks, stack, 1) : NULL;
	size_t n = (v ? v->n : 0) + (outside ? 1 : 0);
	if (!n)
		return l;
	if (!(l->f = calloc(n, sizeof(*l->f)))) {
		c->err = -ENOMEM;
		return l;
	}
	if (outside)
		l->f[l->n++] = (gmt_memviz_frame_t){ "<gpumemtrace>",
						     outside_labels[owner < GMT_DOWNERS ? owner : GMT_DOWNER_OTHER], 0 };
	for (size_t i = 0; v && i < v->n; i++) {
		const gmt_frame_t *fr = &v->frames[i];
		gmt_memviz_frame_t *o = &l->f[l->n++];
		if (fr->text) {
			if (text_frame(l, fr->text, o))
				c->err = -ENOMEM;
			continue;
		}
		o->name = fr->name ? fr->name : "??";
		o->filename = fr->file ? fr->file : fr->module ? fr->module : "??";
		o->line = fr->line;
	}
	return l;
}

static void fcache_free(fcache_t *c)
{
	for (size_t i = 0; i < c->n; i++) {
		for (size_t k = 0; k < c->lists[i].n_owned; k++)
			free(c->lists[i].owned[k]);
		free(c->lists[i].owned);
		free(c->lists[i].f);
	}
	free(c->lists);
	free(c->map.s);
}

typedef struct wr {
	gmt_memviz_t *mv;
	fcache_t *fc;
	uint64_t wall;
} wr_t;

static int write_entry(void *ctx, const gmt_mv_entry_t *e)
{
	wr_t *w = ctx;
	const flist_t *l = frames_of(w->fc, e->stack, e->outside, e->owner);
	if (!l)
		return w->fc->err;
	gmt_memviz_entry_t x = { gmt_mv_action_key(e->action), e->addr, e->size, e->stream,
				 (e->ts + w->wall) / 1000, l->f, l->n, e->device_free, NULL };
	gmt_memviz_entry(w->mv, &x);
	return w->fc->err;
}

int gmt_memviz_model_write(FILE *out, gmt_memviz_model_t *m, int format)
{
	gmt_memviz_t *mv = gmt_memviz_open(out, format);
	if (!mv)
		return -errno;
	fcache_t fc = { .m = m };
	wr_t w = { mv, &fc, m->wall_offset_ns };
	int rc = 0;
	for (int d = 0; d < m->n_devices; d++) {
		gmt_memviz_device_begin(mv);
		if (!rc)
			rc = gmt_memviz_each_entry(m, d, write_entry, &w);
		gmt_memviz_device_end(mv);
	}
	gmt_memviz_block_t *b = NULL;
	size_t cap = 0;
	for (size_t i = 0; !rc && i < m->n_segments; i++) {
		const gmt_mv_segment_t *s = &m->segments[i];
		if (s->n_blocks > cap) {
			gmt_memviz_block_t *q = realloc(b, s->n_blocks * sizeof(*q));
			if (!q) {
				rc = -ENOMEM;
				break;
			}
			b = q;
			cap = s->n_blocks;
		}
		for (size_t k = 0; k < s->n_blocks; k++) {
			const gmt_mv_block_t *x = &s->blocks[k];
			const flist_t *l = frames_of(&fc, x->stack, s->outside, s->owner);
			if (!l)
				break;
			b[k] = (gmt_memviz_block_t){ x->addr, x->size, x->size,
						     x->pending_free ? "active_pending_free" : "active_allocated",
						     l->f, l->n };
		}
		const flist_t *sf = frames_of(&fc, s->stack, s->outside, s->owner);
		if ((rc = fc.err))
			break;
		gmt_memviz_segment_t seg = { (unsigned)s->device, s->addr, s->size, s->stream, "large",
					     b, s->n_blocks, sf->f, sf->n };
		rc = gmt_memviz_segment(mv, &seg);
	}
	free(b);
	int r = gmt_memviz_close(mv);
	fcache_free(&fc);
	return rc ? rc : r;
}
