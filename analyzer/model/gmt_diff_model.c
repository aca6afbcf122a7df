/*
 * gmt_diff_model.c - builds the diff model of two runs (gmt_diff_model.h).
 *
 * Each run is read three ways: the phase engine (its summary: devices,
 * header, peaks; its phase occurrences' coinciding peaks), the sites model
 * (the sites live at each device's peak and those that allocated most,
 * symbolised), and one pass of its own for what neither keeps: the
 * environment (model/gmt_env.h: module map, META records) and each
 * device's first MEMINFO sample before its first allocation (the context)
 * and its last.
 * Rows of the two runs are matched by key (answers/gmt_diff.h): the
 * environment by name, phases by name, occurrence and device, sites by
 * their frames as "file:function" (a rebuilt library still matches).
 */
#include "model/gmt_diff_model.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_phase_engine.h"
#include "engines/gmt_replay.h"
#include "gmt_diff.h"
#include "model/gmt_env.h"
#include "model/gmt_sites_model.h"
#include "support/gmt_strbuf.h"

#define MAX_DEV 64

typedef struct run {
	const char *file;
	gmt_decode_result_t res;
	gmt_phases_t *ph;
	gmt_sites_model_t *sites;
	gmt_env_t env;
	int ctx_has[MAX_DEV], end_has[MAX_DEV], alloc_seen[MAX_DEV];
	uint64_t ctx_used[MAX_DEV], end_used[MAX_DEV];
	int oom;
} run_t;

/* ---- the pass of our own ----------------------------------------------------- */

static int v_module(void *ctx, const gmt_module_t *m)
{
	run_t *r = ctx;
	return gmt_env_module(&r->env, m) ? 1 : 0;
}

static int v_meta(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	run_t *r = ctx;
	(void)ts;
	return gmt_env_meta(&r->env, kv, n) ? 1 : 0;
}

static int v_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	run_t *r = ctx;
	if (flags & GMT_EVENTS_SIDE)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const gmt_devent_t *e = &ev[i];
		if (e->device < 0 || e->device >= MAX_DEV)
			continue;
		if (e->type == GMT_EV_MEMINFO && e->size >= e->addr) {
			uint64_t used = e->size - e->addr;
			if (!r->alloc_seen[e->device] && !r->ctx_has[e->device]) {
				r->ctx_has[e->device] = 1;
				r->ctx_used[e->device] = used;
			}
			r->end_has[e->device] = 1;
			r->end_used[e->device] = used;
		} else if ((e->type == GMT_EV_ALLOC && GMT_AUX_KIND(e->aux) != GMT_KIND_HOST) ||
			   e->type == GMT_EV_VMM_CREATE) {
			r->alloc_seen[e->device] = 1;
		}
	}
	return 0;
}

static int run_read(run_t *r, const gmt_diff_model_opts_t *o)
{
	gmt_phase_opts_t po = { .max_listed = GMT_PHASES_DEFAULT_LISTED, .top_n = GMT_PHASES_DEFAULT_TOP,
				.domains = o->domains, .n_domains = o->n_domains,
				.patterns = o->patterns, .n_patterns = o->n_patterns,
				.all_depths = o->all_depths };
	gmt_phases_run(r->file, &po, NULL, &r->ph, &r->res);
	if (!r->ph || r->res.status == GMT_DECODE_STOPPED)
		return -ENOMEM;
	gmt_sites_model_opts_t so = { .what = GMT_SITES_REPORT, .top = 1000000, .symbols = o->symbols,
				      .debug_dirs = o->debug_dirs, .n_debug_dirs = o->n_debug_dirs };
	if (!(r->sites = gmt_sites_model_build(r->file, &so)))
		return -ENOMEM;
	gmt_visitor_t v = { .ctx = r, .module = v_module, .meta = v_meta, .events = v_events };
	gmt_decode_result_t res;
	gmt_decode_file(r->file, &v, &res);
	if (res.status == GMT_DECODE_STOPPED)
		return -ENOMEM;
	/* the header's and the devices' facts */
	return gmt_env_summary(&r->env, gmt_phases_summary(r->ph));
}

static void run_free(run_t *r)
{
	gmt_phases_free(r->ph);
	gmt_sites_model_free(r->sites);
	gmt_env_free(&r->env);
}

/* ---- matching ----------------------------------------------------------------- */

static void num(gmt_dnum_t *x, int has_a, uint64_t a, int has_b, uint64_t b)
{
	memset(x, 0, sizeof(*x));
	x->has_a = has_a;
	x->has_b = has_b;
	x->a = has_a ? a : 0;
	x->b = has_b ? b : 0;
	x->delta = (int64_t)(x->b - x->a);
	gmt_diff_percent(x->a, x->b, x->percent);
}

static void check(gmt_diff_model_t *m, gmt_dnum_t *x)
{
	if (!m->fail_above || !x->has_a || !x->has_b)
		return;
	x->checked = 1;
	x->exceeds = gmt_diff_exceeds(x->a, x->b, m->fail_above) == 1;
	m->n_exceeded += (size_t)x->exceeds;
}

typedef struct priv {
	run_t a, b;
} priv_t;

static int match_env(gmt_diff_model_t *m, run_t *a, run_t *b)
{
	gmt_diff_item_t *ia = calloc(a->env.n + 1, sizeof(*ia)), *ib = calloc(b->env.n + 1, sizeof(*ib));
	gmt_diff_row_t *rows = NULL;
	long n = -1;
	if (ia && ib) {
		for (size_t i = 0; i < a->env.n; i++)
			ia[i] = (gmt_diff_item_t){ .key = a->env.items[i].key, .text = a->env.items[i].value };
		for (size_t i = 0; i < b->env.n; i++)
			ib[i] = (gmt_diff_item_t){ .key = b->env.items[i].key, .text = b->env.items[i].value };
		n = gmt_diff_match(ia, a->env.n, ib, b->env.n, GMT_DIFF_BY_KEY, &rows);
	}
	if (n >= 0 && !(m->env = calloc((size_t)n + 1, sizeof(*m->env))))
		n = -1;
	for (long i = 0; i < n; i++) {
		gmt_denv_t *e = &m->env[m->n_env];
		const char *k = rows[i].a >= 0 ? ia[rows[i].a].key : ib[rows[i].b].key;
		if (!(e->key = strdup(k))) {
			n = -1;
			break;
		}
		m->n_env++;
		e->a = rows[i].a >= 0 ? ia[rows[i].a].text : NULL;
		e->b = rows[i].b >= 0 ? ib[rows[i].b].text : NULL;
		e->differs = rows[i].differs;
		m->n_env_differ += (size_t)e->differs;
	}
	free(rows);
	free(ia);
	free(ib);
	return n < 0 ? -ENOMEM : 0;
}

static const gmt_dev_summary_t *dev_of(const run_t *r, int ordinal)
{
	return gmt_summary_device(gmt_phases_summary(r->ph), ordinal);
}

static int match_devs(gmt_diff_model_t *m, run_t *a, run_t *b)
{
	m->devs = calloc(MAX_DEV, sizeof(*m->devs));
	if (!m->devs)
		return -ENOMEM;
	for (int d = 0; d < MAX_DEV; d++) {
		const gmt_dev_summary_t *da = dev_of(a, d), *db = dev_of(b, d);
		if (!(da && da->used) && !(db && db->used))
			continue;
		gmt_ddev_t *x = &m->devs[m->n_devs++];
		x->ordinal = d;
		num(&x->context, a->ctx_has[d], a->ctx_used[d], b->ctx_has[d], b->ctx_used[d]);
		num(&x->end_used, a->end_has[d], a->end_used[d], b->end_has[d], b->end_used[d]);
		num(&x->peak, da && da->used, da ? da->peak.total : 0, db && db->used, db ? db->peak.total : 0);
		check(m, &x->peak);
	}
	return 0;
}

/* The phase occurrences of a run as items keyed "name\x1fk\x1fdevice". */
typedef struct pitem {
	char key[600];
	const char *name;
	uint64_t k;
	int device;
	const gmt_pfig_t *fig;
} pitem_t;

static pitem_t *phase_items(const run_t *r, size_t *n)
{
	size_t nn = 0, cap = 16;
	pitem_t *v = malloc(cap * sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	const gmt_phase_name_t *names = gmt_phases_names(r->ph, &nn);
	for (size_t i = 0; i < nn; i++) {
		const char *nm = gmt_phases_string(r->ph, names[i].name_id);
		for (size_t k = 0; k < names[i].n_listed; k++) {
			const gmt_occ_t *o = names[i].listed[k];
			if (!o)
				continue;
			for (size_t d = 0; d < o->n_dev; d++) {
				if (o->dev[d].ordinal < 0)
					continue;
				if (*n == cap) {
					pitem_t *nv = realloc(v, (cap *= 2) * sizeof(*v));
					if (!nv) {
						free(v);
						return NULL;
					}
					v = nv;
				}
				pitem_t *p = &v[(*n)++];
				p->name = nm ? nm : "?";
				p->k = o->k;
				p->device = o->dev[d].ordinal;
				p->fig = &o->dev[d].fig[GMT_VIEW_REQUESTED];
				snprintf(p->key, sizeof(p->key), "%s\x1f%020" PRIu64 "\x1f%03d", p->name, p->k, p->device);
			}
		}
	}
	return v;
}

static int match_phases(gmt_diff_model_t *m, run_t *a, run_t *b)
{
	size_t na, nb;
	pitem_t *pa = phase_items(a, &na), *pb = phase_items(b, &nb);
	gmt_diff_item_t *ia = calloc(na + 1, sizeof(*ia)), *ib = calloc(nb + 1, sizeof(*ib));
	gmt_diff_row_t *rows = NULL;
	long n = -1;
	if (pa && pb && ia && ib) {
		for (size_t i = 0; i < na; i++)
			ia[i].key = pa[i].key;
		for (size_t i = 0; i < nb; i++)
			ib[i].key = pb[i].key;
		n = gmt_diff_match(ia, na, ib, nb, GMT_DIFF_BY_KEY, &rows);
	}
	if (n >= 0 && !(m->phases = calloc((size_t)n + 1, sizeof(*m->phases))))
		n = -1;
	for (long i = 0; i < n; i++) {
		const pitem_t *x = rows[i].a >= 0 ? &pa[rows[i].a] : NULL, *y = rows[i].b >= 0 ? &pb[rows[i].b] : NULL;
		const pitem_t *any = x ? x : y;
		gmt_dphase_t *p = &m->phases[m->n_phases];
		if (!(p->name = strdup(any->name))) {
			n = -1;
			break;
		}
		m->n_phases++;
		p->k = any->k;
		p->device = any->device;
		const gmt_moment_t *ma = x ? &x->fig->max_held : NULL, *mb = y ? &y->fig->max_held : NULL;
		int ha = ma && ma->valid, hb = mb && mb->valid;
		num(&p->held, ha, ha ? ma->v.held : 0, hb, hb ? mb->v.held : 0);
		check(m, &p->held);
		num(&p->allocated, ha && ma->v.has_allocated, ha ? ma->v.allocated : 0,
		    hb && mb->v.has_allocated, hb ? mb->v.allocated : 0);
		num(&p->reserved, ha && ma->v.has_reserved, ha ? ma->v.reserved : 0,
		    hb && mb->v.has_reserved, hb ? mb->v.reserved : 0);
		num(&p->outside, ha, ha ? ma->v.outside : 0, hb, hb ? mb->v.outside : 0);
		for (int o = 0; o < GMT_DOWNERS; o++)
			num(&p->outside_owner[o], ha, ha ? ma->v.outside_owner[o] : 0, hb,
			    hb ? mb->v.outside_owner[o] : 0);
	}
	free(rows);
	free(ia);
	free(ib);
	free(pa);
	free(pb);
	return n < 0 ? -ENOMEM : 0;
}

/* A site's key: its frames as "file:function" or "file+0xoffset". */
static char *site_key(const gmt_site_t *s, int *unsym)
{
	gmt_strbuf_t k = { 0 };
	char f[1024];
	*unsym = 0;
	if (!s->st || !s->st->n) {
		snprintf(f, sizeof(f), "[no stack]");
		gmt_strbuf_put(&k, f, strlen(f));
	}
	for (size_t i = 0; s->st && i < s->st->n; i++) {
		const gmt_frame_t *fr = &s->st->frames[i];
		if (fr->text)
			snprintf(f, sizeof(f), "%s", fr->text);
		else
			gmt_diff_frame_key(fr->module, fr->symbolised ? fr->function : NULL, fr->offset, f, sizeof(f));
		if (!fr->text && !(fr->symbolised && fr->function))
			*unsym = 1;
		if (i)
			gmt_strbuf_put(&k, "\n", 1);
		gmt_strbuf_put(&k, f, strlen(f));
	}
	if (k.oom) {
		free(k.b);
		return NULL;
	}
	return k.b;
}

static const gmt_sites_dev_t *sdev(const gmt_sites_model_t *s, int ordinal)
{
	for (size_t i = 0; s && i < s->n_devs; i++)
		if (s->devs[i].ordinal == ordinal)
			return &s->devs[i];
	return NULL;
}

static int match_sites(gmt_dsites_t *out, int device, const gmt_site_list_t *la, const gmt_site_list_t *lb,
		       unsigned top)
{
	size_t na = la ? la->n : 0, nb = lb ? lb->n : 0;
	gmt_diff_item_t *ia = calloc(na + 1, sizeof(*ia)), *ib = calloc(nb + 1, sizeof(*ib));
	char **ka = calloc(na + 1, sizeof(char *)), **kb = calloc(nb + 1, sizeof(char *));
	int *ua = calloc(na + 1, sizeof(int)), *ub = calloc(nb + 1, sizeof(int));
	gmt_diff_row_t *rows = NULL;
	long n = -1;
	int ok = ia && ib && ka && kb && ua && ub;
	for (size_t i = 0; ok && i < na; i++) {
		ok = (ka[i] = site_key(&la->sites[i], &ua[i])) != NULL;
		ia[i] = (gmt_diff_item_t){ .key = ka[i], .bytes = la->sites[i].bytes, .count = la->sites[i].count };
	}
	for (size_t i = 0; ok && i < nb; i++) {
		ok = (kb[i] = site_key(&lb->sites[i], &ub[i])) != NULL;
		ib[i] = (gmt_diff_item_t){ .key = kb[i], .bytes = lb->sites[i].bytes, .count = lb->sites[i].count };
	}
	if (ok)
		n = gmt_diff_match(ia, na, ib, nb, GMT_DIFF_BY_GROWTH, &rows);
	out->device = device;
	size_t keep = n < 0 ? 0 : (size_t)n < top ? (size_t)n : top;
	if (n >= 0 && !(out->rows = calloc(keep + 1, sizeof(*out->rows))))
		n = -1;
	for (size_t i = 0; n >= 0 && i < keep; i++) {
		gmt_dsite_t *r = &out->rows[out->n];
		long x = rows[i].a, y = rows[i].b;
		/* a key repeated on one side: gmt_diff_match added them up in the
		 * first row's index; the sums are recomputed here the same way */
		uint64_t ba = 0, bb = 0, ca = 0, cb = 0;
		const char *key = x >= 0 ? ka[x] : kb[y];
		for (size_t q = 0; q < na; q++)
			if (!strcmp(ka[q], key)) {
				ba += ia[q].bytes;
				ca += ia[q].count;
			}
		for (size_t q = 0; q < nb; q++)
			if (!strcmp(kb[q], key)) {
				bb += ib[q].bytes;
				cb += ib[q].count;
			}
		if (!(r->key = strdup(key))) {
			n = -1;
			break;
		}
		out->n++;
		r->unsymbolised = (x >= 0 && ua[x]) || (y >= 0 && ub[y]);
		num(&r->bytes, x >= 0, ba, y >= 0, bb);
		num(&r->count, x >= 0, ca, y >= 0, cb);
	}
	for (size_t i = 0; ka && i < na; i++)
		free(ka[i]);
	for (size_t i = 0; kb && i < nb; i++)
		free(kb[i]);
	free(ka);
	free(kb);
	free(ua);
	free(ub);
	free(ia);
	free(ib);
	free(rows);
	return n < 0 ? -ENOMEM : 0;
}

static int match_all_sites(gmt_diff_model_t *m, run_t *a, run_t *b, unsigned top)
{
	m->at_peak = calloc(m->n_devs + 1, sizeof(*m->at_peak));
	m->allocated = calloc(m->n_devs + 1, sizeof(*m->allocated));
	if (!m->at_peak || !m->allocated)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_devs; i++) {
		int d = m->devs[i].ordinal;
		const gmt_sites_dev_t *sa = sdev(a->sites, d), *sb = sdev(b->sites, d);
		if (match_sites(&m->at_peak[m->n_at_peak++], d, sa ? &sa->live : NULL, sb ? &sb->live : NULL, top) ||
		    match_sites(&m->allocated[m->n_allocated++], d, sa ? &sa->top : NULL, sb ? &sb->top : NULL, top))
			return -ENOMEM;
	}
	return 0;
}

gmt_diff_model_t *gmt_diff_model_build(const char *a, const char *b, const gmt_diff_model_opts_t *o)
{
	gmt_diff_model_t *m = calloc(1, sizeof(*m));
	priv_t *p = calloc(1, sizeof(*p));
	if (!m || !p) {
		free(m);
		free(p);
		return NULL;
	}
	m->priv = p;
	m->file_a = a;
	m->file_b = b;
	m->fail_above = o->fail_above;
	p->a.file = a;
	p->b.file = b;
	int rc = run_read(&p->a, o);
	if (!rc)
		rc = run_read(&p->b, o);
	m->res_a = p->a.res;
	m->res_b = p->b.res;
	if (!rc) {
		m->events = gmt_phases_summary(p->a.ph)->events + gmt_phases_summary(p->b.ph)->events;
		m->gaps_a = gmt_phases_summary(p->a.ph)->gaps;
		m->gaps_b = gmt_phases_summary(p->b.ph)->gaps;
		rc = match_env(m, &p->a, &p->b);
	}
	if (!rc)
		rc = match_devs(m, &p->a, &p->b);
	if (!rc)
		rc = match_phases(m, &p->a, &p->b);
	if (!rc)
		rc = match_all_sites(m, &p->a, &p->b, o->top ? o->top : 20);
	if (rc) {
		gmt_diff_model_free(m);
		return NULL;
	}
	return m;
}

void gmt_diff_model_free(gmt_diff_model_t *m)
{
	if (!m)
		return;
	priv_t *p = m->priv;
	for (size_t i = 0; i < m->n_env; i++)
		free(m->env[i].key);
	free(m->env);
	free(m->devs);
	for (size_t i = 0; i < m->n_phases; i++)
		free(m->phases[i].name);
	free(m->phases);
	for (size_t i = 0; i < m->n_at_peak; i++) {
		for (size_t k = 0; k < m->at_peak[i].n; k++)
			free(m->at_peak[i].rows[k].key);
		free(m->at_peak[i].rows);
	}
	free(m->at_peak);
	for (size_t i = 0; i < m->n_allocated; i++) {
		for (size_t k = 0; k < m->allocated[i].n; k++)
			free(m->allocated[i].rows[k].key);
		free(m->allocated[i].rows);
	}
	free(m->allocated);
	if (p) {
		run_free(&p->a);
		run_free(&p->b);
		free(p);
	}
	free(m);
}

/* ---- which traces --------------------------------------------------------------- */

typedef struct tfile {
	char *path;
	long rank;               /* -1: no RANK */
} tfile_t;

static int h_rank(void *ctx, const gmt_header_t *h)
{
	long *rank = ctx;
	for (size_t i = 0; i < h->n_env; i++)
		if (!strcmp(h->env[i].key, "RANK")) {
			char *end;
			long r = strtol(h->env[i].value, &end, 10);
			if (*h->env[i].value && !*end && r >= 0)
				*rank = r;
		}
	return 1;   /* the header is all we need */
}

static int cmp_tfile(const void *x, const void *y)
{
	return strcmp(((const tfile_t *)x)->path, ((const tfile_t *)y)->path);
}

/* The traces named by arg: itself, or a directory's *.gmt sorted. */
static tfile_t *traces_of(const char *arg, size_t *n, int *is_dir)
{
	struct stat sb;
	tfile_t *v = NULL;
	*n = 0;
	*is_dir = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode);
	if (!*is_dir) {
		if (!(v = calloc(1, sizeof(*v))) || !(v[0].path = strdup(arg))) {
			free(v);
			return NULL;
		}
		*n = 1;
	} else {
		DIR *d = opendir(arg);
		struct dirent *de;
		size_t cap = 0;
		if (!d)
			return calloc(1, sizeof(*v));
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l < 5 || strcmp(de->d_name + l - 4, ".gmt"))
				continue;
			if (*n == cap) {
				tfile_t *nv = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*v));
				if (!nv)
					break;
				v = nv;
			}
			size_t pl = strlen(arg) + l + 2;
			if (!(v[*n].path = malloc(pl)))
				break;
			snprintf(v[*n].path, pl, "%s/%s", arg, de->d_name);
			(*n)++;
		}
		closedir(d);
		if (*n)
			qsort(v, *n, sizeof(*v), cmp_tfile);
		else if (!v)
			v = calloc(1, sizeof(*v));
	}
	for (size_t i = 0; v && i < *n; i++) {
		gmt_visitor_t vis = { .ctx = &v[i].rank, .header = h_rank };
		gmt_decode_result_t res;
		v[i].rank = -1;
		gmt_decode_file(v[i].path, &vis, &res);
	}
	return v;
}

static void tfiles_free(tfile_t *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

long gmt_diff_pairs(const char *a, const char *b, char ***pa, char ***pb, char *err, size_t errlen)
{
	size_t na, nb;
	int da, db;
	tfile_t *ta = traces_of(a, &na, &da), *tb = traces_of(b, &nb, &db);
	long n = -1;
	*pa = *pb = NULL;
	if (!ta || !tb) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!na || !nb) {
		snprintf(err, errlen, "%s: no trace (*.gmt) in the directory", !na ? a : b);
		goto out;
	}
	*pa = calloc(na + nb, sizeof(char *));
	*pb = calloc(na + nb, sizeof(char *));
	if (!*pa || !*pb) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	int ranked = 1;
	for (size_t i = 0; i < na; i++)
		ranked &= ta[i].rank >= 0;
	for (size_t i = 0; i < nb; i++)
		ranked &= tb[i].rank >= 0;
	n = 0;
	if (na == 1 && nb == 1) {
		(*pa)[0] = ta[0].path;
		(*pb)[0] = tb[0].path;
		ta[0].path = tb[0].path = NULL;
		n = 1;
	} else if (ranked) {
		for (size_t i = 0; i < na; i++)
			for (size_t k = 0; k < nb; k++)
				if (ta[i].path && tb[k].path && ta[i].rank == tb[k].rank) {
					(*pa)[n] = ta[i].path;
					(*pb)[n++] = tb[k].path;
					ta[i].path = tb[k].path = NULL;
				}
		if (!n) {
			snprintf(err, errlen, "%s and %s: no RANK in common", a, b);
			n = -1;
		}
	} else if (na == nb) {
		for (size_t i = 0; i < na; i++) {
			(*pa)[n] = ta[i].path;
			(*pb)[n++] = tb[i].path;
			ta[i].path = tb[i].path = NULL;
		}
	} else {
		snprintf(err, errlen, "%s holds %zu traces and %s %zu, without a RANK in each to pair them",
			 a, na, b, nb);
		n = -1;
	}
out:
	tfiles_free(ta, na);
	tfiles_free(tb, nb);
	if (n < 0) {
		gmt_diff_pairs_free(*pa, *pb, 0);
		*pa = *pb = NULL;
	}
	return n;
}

void gmt_diff_pairs_free(char **pa, char **pb, long n)
{
	for (long i = 0; i < n; i++) {
		free(pa ? pa[i] : NULL);
		free(pb ? pb[i] : NULL);
	}
	free(pa);
	free(pb);
}
