/*
 * gmt_stacks.c - the stack catalogue (gmt_stacks.h): the trace's STACK,
 * TEXT_STACK and MODULE records, stack views symbolised once per id, and
 * sites merged by symbolised stack.
 */
#include "model/gmt_stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/gmt_strbuf.h"
#include "support/gmt_u64map.h"

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

typedef struct stack_rec {
	uint64_t *frames;
	size_t n;
} stack_rec_t;

typedef struct text_stack_rec {
	char **frames;
	size_t n;
} text_stack_rec_t;


struct gmt_stacks {
	gmt_symtab_t *sym;
	gmt_u64map_t stack_ix;   /* stack id -> a: index in stacks           */
	stack_rec_t *stacks; size_t n_stacks, cap_stacks;
	gmt_u64map_t tstack_ix;  /* text stack id -> a: index in tstacks     */
	text_stack_rec_t *tstacks; size_t n_tstacks, cap_tstacks;
	/* stack views, made once per (id, text allowed) */
	gmt_u64map_t view_ix;    /* id << 1 | fw -> a: index in views        */
	gmt_stack_view_t **views; size_t n_views, cap_views;
};

gmt_stacks_t *gmt_stacks_new(const char *const *debug_dirs, size_t n_dirs, int symbols)
{
	gmt_stacks_t *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (!(p->sym = gmt_symtab_new(debug_dirs, n_dirs, symbols))) {
		free(p);
		return NULL;
	}
	return p;
}

gmt_symtab_t *gmt_stacks_symtab(gmt_stacks_t *p)
{
	return p->sym;
}

int gmt_stacks_text_stack(gmt_stacks_t *p, uint32_t id, const char *const *frames, size_t n)
{
	int existed;
	gmt_u64map_slot_t *s = gmt_u64map_put(&p->tstack_ix, id, &existed);
	if (!s)
		return 1;
	if (existed)
		return 0;  /* ids are unique; keep the first */
	if (p->n_tstacks == p->cap_tstacks) {
		size_t c = p->cap_tstacks ? p->cap_tstacks * 2 : 16;
		text_stack_rec_t *ns = realloc(p->tstacks, c * sizeof(*ns));
		if (!ns)
			return 1;
		p->tstacks = ns;
		p->cap_tstacks = c;
	}
	text_stack_rec_t *st = &p->tstacks[p->n_tstacks];
	st->n = 0;
	st->frames = calloc(n ? n : 1, sizeof(char *));
	if (!st->frames)
		return 1;
	s->a = p->n_tstacks++;
	for (size_t i = 0; i < n; i++) {
		if (!(st->frames[i] = strdup(frames[i])))
			return 1;
		st->n++;
	}
	return 0;
}

int gmt_stacks_module(gmt_stacks_t *p, const gmt_module_t *mod)
{
	return gmt_symtab_module(p->sym, mod) ? 1 : 0;
}

int gmt_stacks_stack(gmt_stacks_t *p, uint32_t id, const uint64_t *frames, size_t n)
{
	int existed;
	gmt_u64map_slot_t *s = gmt_u64map_put(&p->stack_ix, id, &existed);
	if (!s)
		return 1;
	if (existed)
		return 0;  /* ids are unique; keep the first */
	if (p->n_stacks == p->cap_stacks) {
		size_t c = p->cap_stacks ? p->cap_stacks * 2 : 64;
		stack_rec_t *ns = realloc(p->stacks, c * sizeof(*ns));
		if (!ns)
			return 1;
		p->stacks = ns;
		p->cap_stacks = c;
	}
	stack_rec_t *st = &p->stacks[p->n_stacks];
	st->n = n;
	st->frames = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!st->frames)
		return 1;
	memcpy(st->frames, frames, n * sizeof(uint64_t));
	s->a = p->n_stacks++;
	return 0;
}


static const stack_rec_t *stack_get(const gmt_stacks_t *p, uint32_t id)
{
	gmt_u64map_slot_t *s = gmt_u64map_find(&p->stack_ix, id);
	return s ? &p->stacks[s->a] : NULL;
}

static const text_stack_rec_t *text_stack_get(const gmt_stacks_t *p, uint32_t id)
{
	gmt_u64map_slot_t *s = gmt_u64map_find(&p->tstack_ix, id);
	return s ? &p->tstacks[s->a] : NULL;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path;
}

static const char *status_key(enum gmt_sym_status s)
{
	switch (s) {
	case GMT_SYM_OK: return "ok";
	case GMT_SYM_NO_MODULE: return "no_module";
	case GMT_SYM_MISSING: return "missing";
	case GMT_SYM_MISMATCH: return "build_id_mismatch";
	default: return "off";
	}
}

/* The preload's own frames (its hooks) are not shown: they are the same
 * in every stack and say nothing about the caller. */
static int own_frame(const gmt_sym_t *sym)
{
	const char *b = base_name(sym->module);
	return b && prefix(b, "libgpumemtrace");
}

/* The stack rule (docs/analyzer.md, "Owner from the stack"). */
static enum gmt_stack_owner owner_of_stack(gmt_stacks_t *p, const stack_rec_t *st)
{
	if (!st)
		return GMT_SOWNER_UNKNOWN;
	for (size_t i = 0; i < st->n; i++) {
		const char *path = gmt_symtab_module_of(p->sym, st->frames[i]);
		if (!path)
			continue;
		enum gmt_stack_owner o = gmt_module_owner(path);
		if (o != GMT_SOWNER_UNKNOWN)
			return o;
	}
	return GMT_SOWNER_UNKNOWN;
}

static void free_view(gmt_stack_view_t *v)
{
	if (v)
		free((void *)v->frames);
	free(v);
}

/* The view of stack id: a native stack symbolised; with text = 1 (a
 * framework's blocks) a TEXT_STACK id gives its text frames. NULL only
 * when out of memory. */
const gmt_stack_view_t *gmt_stacks_view(gmt_stacks_t *p, uint32_t id, int text)
{
	text = text && GMT_STACK_IS_TEXT(id);
	const uint64_t key = (uint64_t)id << 1 | (unsigned)text;
	gmt_u64map_slot_t *slot = gmt_u64map_find(&p->view_ix, key);
	if (slot)
		return p->views[slot->a];
	gmt_stack_view_t *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->id = id;
	v->kind = GMT_STACK_NONE;
	v->owner = GMT_SOWNER_UNKNOWN;
	gmt_frame_t *fr = NULL;
	size_t n = 0, cap = 0;
	if (text) {
		const text_stack_rec_t *ts = text_stack_get(p, id);
		if (ts) {
			v->kind = GMT_STACK_TEXT;
			fr = calloc(ts->n ? ts->n : 1, sizeof(*fr));
			if (!fr)
				goto oom;
			for (size_t i = 0; i < ts->n; i++)
				fr[n++] = (gmt_frame_t){ .text = ts->frames[i] ? ts->frames[i] : "",
							 .name = ts->frames[i] ? ts->frames[i] : "" };
		}
	} else {
		const stack_rec_t *st = stack_get(p, id);
		if (st) {
			v->kind = GMT_STACK_NATIVE;
			v->owner = owner_of_stack(p, st);
			for (size_t i = 0; i < st->n; i++) {
				const gmt_sym_t *sym = gmt_symtab_lookup(p->sym, st->frames[i], i > 0);
				if (!sym)
					goto oom;
				if (own_frame(sym))
					continue;
				for (size_t k = 0; k < sym->n; k++) {
					if (n == cap) {
						cap = cap ? cap * 2 : 16;
						gmt_frame_t *nf = realloc(fr, cap * sizeof(*nf));
						if (!nf)
							goto oom;
						fr = nf;
					}
					const gmt_symframe_t *f = &sym->frames[k];
					int ok = sym->status == GMT_SYM_OK;
					fr[n++] = (gmt_frame_t){
						.addr = sym->addr, .offset = sym->offset,
						.status = status_key(sym->status), .symbolised = ok,
						.module = sym->module, .module_base = base_name(sym->module),
						.function = f->function, .file = f->file,
						.file_base = base_name(f->file), .line = f->line,
						.inlined = f->inlined, .label = sym->label ? sym->label : "",
						.name = ok && f->function ? f->function : (sym->label ? sym->label : ""),
					};
				}
			}
			v->recorded = st->n > 0;
		}
	}
	if (v->kind == GMT_STACK_TEXT)
		v->recorded = n > 0;
	v->frames = fr;
	v->n = n;
	v->kind_key = v->kind == GMT_STACK_TEXT ? "text" : v->kind == GMT_STACK_NATIVE ? "native" : "none";
	v->owner_key = gmt_stack_owner_name(v->owner);
	if (p->n_views == p->cap_views) {
		size_t c = p->cap_views ? p->cap_views * 2 : 64;
		gmt_stack_view_t **nv = realloc(p->views, c * sizeof(*nv));
		if (!nv) {
			free_view(v);
			return NULL;
		}
		p->views = nv;
		p->cap_views = c;
	}
	int existed;
	slot = gmt_u64map_put(&p->view_ix, key, &existed);
	if (!slot) {
		free_view(v);
		return NULL;
	}
	slot->a = p->n_views;
	p->views[p->n_views++] = v;
	return v;
oom:
	free(fr);
	free(v);
	return NULL;
}

/* ---- grouping by symbolised stack ----------------------------------------- */

/* A frame's identity: function, file, line and inlined when symbolised
 * (either of the first two known), else module and offset, else the
 * address. Fields end in 0x1f, frames in 0x1e (neither is in a name). */
static void key_frame(gmt_strbuf_t *k, const gmt_frame_t *f)
{
	char b[64];
	if (f->symbolised && (f->function || f->file)) {
		gmt_strbuf_put(k, "F", 1);
		if (f->function)
			gmt_strbuf_put(k, f->function, strlen(f->function));
		gmt_strbuf_put(k, "\x1f", 1);
		if (f->file)
			gmt_strbuf_put(k, f->file, strlen(f->file));
		snprintf(b, sizeof(b), "\x1f%u\x1f%d\x1e", f->line, f->inlined);
	} else if (f->module) {
		gmt_strbuf_put(k, "M", 1);
		gmt_strbuf_put(k, f->module, strlen(f->module));
		snprintf(b, sizeof(b), "\x1f%" PRIx64 "\x1e", f->offset);
	} else {
		snprintf(b, sizeof(b), "A%" PRIx64 "\x1e", f->addr);
	}
	gmt_strbuf_put(k, b, strlen(b));
}

typedef struct keyed {
	char *key;
	gmt_site_t s;
} keyed_t;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed_t *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->s.stack < y->s.stack ? -1 : x->s.stack > y->s.stack;
}

static int cmp_site(const void *a, const void *b)
{
	const gmt_site_t *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Merges the sites (fresh: ids NULL) whose stacks symbolise to the same
 * frames (the preload's own frames left out, as shown) and whose recorded
 * owner is the same, then sorts them largest first. A stack id without a
 * STACK record merges with nothing. Returns 0 or -ENOMEM. */
int gmt_stacks_group(gmt_stacks_t *p, gmt_site_t *a, size_t *n)
{
	if (*n < 2)
		return 0;
	keyed_t *k = calloc(*n, sizeof(*k));
	if (!k)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < *n && !rc; i++) {
		gmt_strbuf_t f = { 0 };
		char b[64];
		snprintf(b, sizeof(b), "%u\x1e", a[i].owner);
		gmt_strbuf_put(&f, b, strlen(b));
		const gmt_stack_view_t *v = gmt_stacks_view(p, a[i].stack, 0);
		if (!v) {
			rc = -ENOMEM;
		} else if (v->kind == GMT_STACK_NONE) {
			snprintf(b, sizeof(b), "S%u", a[i].stack);
			gmt_strbuf_put(&f, b, strlen(b));
		} else {
			for (size_t q = 0; q < v->n; q++)
				key_frame(&f, &v->frames[q]);
		}
		if (f.oom || !f.b)
			rc = -ENOMEM;
		k[i].key = f.b;
		k[i].s = a[i];
	}
	size_t m = 0;
	if (!rc) {
		qsort(k, *n, sizeof(*k), cmp_keyed);
		for (size_t i = 0; i < *n;) {
			size_t j = i + 1;
			gmt_site_t g = k[i].s;
			while (j < *n && !strcmp(k[j].key, k[i].key)) {
				g.bytes += k[j].s.bytes;
				g.count += k[j].s.count;
				j++;
			}
			if (j - i > 1) {
				uint32_t *ids = malloc((j - i) * sizeof(uint32_t));
				if (!ids) {
					rc = -ENOMEM;
					break;
				}
				g.n_ids = j - i;
				for (size_t q = i; q < j; q++)
					ids[q - i] = k[q].s.stack;
				g.ids = ids;
			}
			a[m++] = g;
			i = j;
		}
	}
	for (size_t i = 0; i < *n; i++)
		free(k[i].key);
	free(k);
	if (rc) {
		/* the first m entries own their ids; the rest are plain */
		for (size_t i = m; i < *n; i++)
			a[i].ids = NULL;
		return rc;
	}
	*n = m;
	qsort(a, m, sizeof(*a), cmp_site);
	return 0;
}

/* Sites from the engines' groups (by stack id). */
int gmt_site_list_of(gmt_site_list_t *l, const gmt_live_group_t *g, size_t n)
{
	l->sites = calloc(n ? n : 1, sizeof(*l->sites));
	if (!l->sites)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		l->sites[i] = (gmt_site_t){ .stack = g[i].stack, .owner = g[i].owner, .bytes = g[i].bytes,
					    .count = g[i].count };
	l->n = n;
	return 0;
}

void gmt_site_list_free(gmt_site_list_t *l)
{
	for (size_t i = 0; l->sites && i < l->n; i++)
		free((void *)l->sites[i].ids);
	free(l->sites);
	l->sites = NULL;
	l->n = 0;
}

/* What a listed site shows: share of peak (peak 0: none), names, and the
 * view of its stack (text: a framework's, TEXT_STACK ids allowed). */
int gmt_stacks_list(gmt_stacks_t *p, gmt_site_list_t *l, uint64_t peak, size_t top, int text,
		    int views)
{
	l->n_listed = l->n < top ? l->n : top;
	l->more = l->n > top;
	l->not_listed = l->n - l->n_listed;
	for (size_t i = 0; i < l->n; i++) {
		gmt_site_t *s = &l->sites[i];
		s->owner_key = gmt_owner_name(s->owner);
		s->has_share = peak != 0;
		s->share = peak ? (double)s->bytes / (double)peak : 0.0;
		s->percent = peak ? 100.0 * (double)s->bytes / (double)peak : 0.0;
	}
	if (!views)
		return 0;
	for (size_t i = 0; i < l->n_listed; i++)
		if (!(l->sites[i].st = gmt_stacks_view(p, l->sites[i].stack, text)))
			return -ENOMEM;
	return 0;
}

void gmt_stacks_free(gmt_stacks_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_views; i++)
		free_view(p->views[i]);
	free(p->views);
	gmt_u64map_clear(&p->view_ix);
	for (size_t i = 0; i < p->n_stacks; i++)
		free(p->stacks[i].frames);
	free(p->stacks);
	gmt_u64map_clear(&p->stack_ix);
	for (size_t i = 0; i < p->n_tstacks; i++) {
		for (size_t k = 0; k < p->tstacks[i].n; k++)
			free(p->tstacks[i].frames[k]);
		free(p->tstacks[i].frames);
	}
	free(p->tstacks);
	gmt_u64map_clear(&p->tstack_ix);
	gmt_symtab_free(p->sym);
	free(p);
}
