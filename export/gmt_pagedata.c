/*
 * gmt_pagedata.c - the page data of gmt_pagedata.h: the levels come from
 * gmt_buckets.c (factor 4 down to at most 256 buckets), written as the
 * contract in docs/report-page.md says, through the one JSON writer
 * (writers/gmt_json.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_buckets.h"
#include "gmt_json.h"
#include "gmt_pagedata.h"

#define COARSEST_BUCKETS 256

struct phase {
	char *name, *href;
	unsigned occurrence;
	int cold, failed;
	uint64_t begin, end;
};

struct mark {
	char *label, *href;
	uint64_t t, bytes;
	gmt_page_part_t *parts;  /* labels owned */
	size_t n_parts;
};

struct gmt_page_dev {
	char *id, *label, *top_label;
	uint64_t total, t0, duration;
	int has_wall;
	uint64_t wall_s;
	uint32_t wall_ns;
	gmt_page_series_t *series;  /* key and label owned */
	unsigned n_series;
	gmt_buckets_t *buckets;
	int finished;
	struct phase *phases;
	size_t n_phases, cap_phases;
	struct mark *peaks, *fails;
	size_t n_peaks, cap_peaks, n_fails, cap_fails;
	struct sync {
		uint64_t b, n, w;  /* a bucket of w ns holding syncs, and how many */
	} *syncs;
	size_t n_syncs, cap_syncs;
};

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* Room for one more element of an array that grows by doubling. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

void gmt_page_dev_free(gmt_page_dev_t *d)
{
	if (!d)
		return;
	free(d->id);
	free(d->label);
	free(d->top_label);
	for (unsigned s = 0; d->series && s < d->n_series; s++) {
		free((char *)d->series[s].key);
		free((char *)d->series[s].label);
	}
	free(d->series);
	gmt_buckets_free(d->buckets);
	for (size_t i = 0; i < d->n_phases; i++) {
		free(d->phases[i].name);
		free(d->phases[i].href);
	}
	free(d->phases);
	struct mark *lists[] = { d->peaks, d->fails };
	size_t counts[] = { d->n_peaks, d->n_fails };
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			free(lists[l][i].label);
			free(lists[l][i].href);
			for (size_t k = 0; k < lists[l][i].n_parts; k++)
				free((char *)lists[l][i].parts[k].label);
			free(lists[l][i].parts);
		}
		free(lists[l]);
	}
	free(d->syncs);
	free(d);
}

gmt_page_dev_t *gmt_page_dev_new(const gmt_page_dev_info_t *in)
{
	if (!in->n_series || !in->max_buckets) {
		errno = EINVAL;
		return NULL;
	}
	gmt_page_dev_t *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->id = dup_or_empty(in->id);
	d->label = dup_or_empty(in->label);
	d->top_label = dup_or_empty(in->top_label);
	d->total = in->total_bytes;
	d->t0 = in->t0_ns;
	d->duration = in->duration_ns;
	d->has_wall = in->has_wall;
	d->wall_s = in->wall_s;
	d->wall_ns = in->wall_ns;
	d->n_series = in->n_series;
	d->series = calloc(in->n_series, sizeof(*d->series));
	d->buckets = gmt_buckets_new(in->n_series, in->duration_ns, in->max_buckets, 4, COARSEST_BUCKETS);
	if (!d->id || !d->label || !d->top_label || !d->series || !d->buckets)
		goto nomem;
	for (unsigned s = 0; s < in->n_series; s++) {
		d->series[s] = in->series[s];
		d->series[s].key = dup_or_empty(in->series[s].key);
		d->series[s].label = dup_or_empty(in->series[s].label);
		if (!d->series[s].key || !d->series[s].label)
			goto nomem;
	}
	return d;
nomem:
	gmt_page_dev_free(d);
	errno = ENOMEM;
	return NULL;
}

int gmt_page_dev_instant(gmt_page_dev_t *d, uint64_t t_ns, const uint64_t *value,
			 const uint8_t *known, uint64_t top)
{
	return gmt_buckets_add(d->buckets, t_ns, value, known, top);
}

int gmt_page_dev_phase(gmt_page_dev_t *d, const char *name, unsigned occurrence, int cold,
		       uint64_t begin_ns, uint64_t end_ns, int failed, const char *href)
{
	if (grow((void **)&d->phases, &d->cap_phases, d->n_phases, sizeof(*d->phases)))
		return -ENOMEM;
	struct phase *p = &d->phases[d->n_phases];
	*p = (struct phase){ dup_or_empty(name), dup_or_empty(href), occurrence, cold, failed,
			     begin_ns, end_ns };
	if (!p->name || !p->href) {
		free(p->name);
		free(p->href);
		return -ENOMEM;
	}
	d->n_phases++;
	return 0;
}

int gmt_page_dev_sync(gmt_page_dev_t *d, uint64_t t_ns)
{
	/* the finest level's width now (growing levels widen: the buckets are
	   counted again at the final width when written) */
	uint64_t w = gmt_buckets_level(d->buckets, 0)->bucket_ns, b = t_ns / w;
	struct sync *last = d->n_syncs ? &d->syncs[d->n_syncs - 1] : NULL;
	if (last && t_ns < last->b * last->w)
		return -EINVAL;
	if (last && last->w == w && b == last->b) {
		last->n++;
		return 0;
	}
	if (grow((void **)&d->syncs, &d->cap_syncs, d->n_syncs, sizeof(*d->syncs)))
		return -ENOMEM;
	d->syncs[d->n_syncs++] = (struct sync){ b, 1, w };
	return 0;
}

static int add_mark(struct mark **list, size_t *n, size_t *cap, const char *label, uint64_t t,
		    uint64_t bytes, const gmt_page_part_t *parts, size_t n_parts, const char *href)
{
	if (grow((void **)list, cap, *n, sizeof(**list)))
		return -ENOMEM;
	struct mark *m = &(*list)[*n];
	*m = (struct mark){ dup_or_empty(label), dup_or_empty(href), t, bytes, NULL, 0 };
	if (n_parts)
		m->parts = calloc(n_parts, sizeof(*m->parts));
	int bad = !m->label || !m->href || (n_parts && !m->parts);
	for (size_t k = 0; !bad && k < n_parts; k++) {
		m->parts[k].bytes = parts[k].bytes;
		m->parts[k].label = dup_or_empty(parts[k].label);
		bad = !m->parts[k].label;
		m->n_parts = k + 1;
	}
	(*n)++;  /* freed with the device even when incomplete */
	return bad ? -ENOMEM : 0;
}

int gmt_page_dev_peak(gmt_page_dev_t *d, const char *label, uint64_t t_ns, uint64_t bytes,
		      const gmt_page_part_t *parts, size_t n_parts, const char *href)
{
	return add_mark(&d->peaks, &d->n_peaks, &d->cap_peaks, label, t_ns, bytes, parts, n_parts, href);
}

int gmt_page_dev_failure(gmt_page_dev_t *d, const char *label, uint64_t t_ns, uint64_t bytes,
			 const char *href)
{
	return add_mark(&d->fails, &d->n_fails, &d->cap_fails, label, t_ns, bytes, NULL, 0, href);
}

/* ---- writing */

/* The elements of v at the listed buckets (keep NULL: all), delta-coded. */
static void delta_u64(gmt_json_t *j, const uint64_t *v, size_t n, const uint8_t *keep)
{
	uint64_t prev = 0;
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		if (keep && !keep[i])
			continue;
		gmt_json_i64(j, (int64_t)(v[i] - prev));
		prev = v[i];
	}
	gmt_json_arr_end(j);
}

/* Bucket i says what bucket i - 1 says, in every array written (where a
   series is known is "known_from", over all the buckets). */
static int same_as_before(const gmt_page_dev_t *d, const gmt_bucket_level_t *l, size_t i)
{
	if (l->at[i] != l->at[i - 1] || l->top[i] != l->top[i - 1] || l->low[i] != l->low[i - 1])
		return 0;
	for (unsigned s = 0; s < d->n_series; s++) {
		const gmt_bucket_series_t *x = &l->series[s];
		if (d->series[s].role == GMT_PAGE_STACK) {
			if (x->value[i] != x->value[i - 1])
				return 0;
		} else if (x->max[i] != x->max[i - 1] || x->min[i] != x->min[i - 1]) {
			return 0;
		}
	}
	return 1;
}

/* A level; runs of buckets that repeat the one before them (a stretch
   where nothing happened: each holds the state since before) are written
   once, with "b" listing the buckets written. Returns 0 or -ENOMEM. */
static int write_level(gmt_json_t *j, const gmt_page_dev_t *d, const gmt_bucket_level_t *l)
{
	uint8_t *keep = malloc(l->count ? l->count : 1);
	if (!keep)
		return -ENOMEM;
	size_t listed = 0;
	for (size_t i = 0; i < l->count; i++)
		listed += keep[i] = i == 0 || !same_as_before(d, l, i);
	/* sparse only where it saves: "b" costs about one number a bucket */
	const uint8_t *k = listed * 10 < l->count * 9 ? keep : NULL;
	gmt_json_obj_begin(j);
	gmt_json_key(j, "bucket_ns");
	gmt_json_u64(j, l->bucket_ns);
	gmt_json_key(j, "count");
	gmt_json_u64(j, l->count);
	if (k) {
		gmt_json_key(j, "b");
		gmt_json_arr_begin(j);
		size_t prev = 0;
		for (size_t i = 0; i < l->count; i++)
			if (k[i]) {
				gmt_json_u64(j, i - prev);
				prev = i;
			}
		gmt_json_arr_end(j);
	}
	gmt_json_key(j, "at");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < l->count; i++)
		if (!k || k[i])
			gmt_json_i64(j, l->at[i]);
	gmt_json_arr_end(j);
	gmt_json_key(j, "top");
	delta_u64(j, l->top, l->count, k);
	gmt_json_key(j, "low");
	delta_u64(j, l->low, l->count, k);
	static const char *const groups[] = { "stack", "line_max", "line_min" };
	for (int g = 0; g < 3; g++) {
		gmt_json_key(j, groups[g]);
		gmt_json_obj_begin(j);
		for (unsigned s = 0; s < d->n_series; s++) {
			if ((d->series[s].role == GMT_PAGE_STACK) != (g == 0))
				continue;
			const gmt_bucket_series_t *x = &l->series[s];
			gmt_json_key(j, d->series[s].key);
			delta_u64(j, g == 0 ? x->value : g == 1 ? x->max : x->min, l->count, k);
		}
		gmt_json_obj_end(j);
	}
	/* a stacked series is known where the top instant knew it; a line
	   where the bucket held a known value */
	gmt_json_key(j, "known_from");
	gmt_json_obj_begin(j);
	for (unsigned s = 0; s < d->n_series; s++) {
		const uint8_t *kn = d->series[s].role == GMT_PAGE_STACK ? l->series[s].known : l->series[s].has;
		size_t i = 0;
		while (i < l->count && !kn[i])
			i++;
		if (i == 0)
			continue;
		gmt_json_key(j, d->series[s].key);
		if (i == l->count)
			gmt_json_null(j);
		else
			gmt_json_u64(j, i);
	}
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
	free(keep);
	return 0;
}

static void write_marks(gmt_json_t *j, const struct mark *m, size_t n, int with_parts)
{
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		gmt_json_obj_begin(j);
		gmt_json_key(j, "label");
		gmt_json_str(j, m[i].label);
		gmt_json_key(j, "t_ns");
		gmt_json_u64(j, m[i].t);
		gmt_json_key(j, "bytes");
		gmt_json_u64(j, m[i].bytes);
		if (with_parts) {
			gmt_json_key(j, "parts");
			gmt_json_arr_begin(j);
			for (size_t k = 0; k < m[i].n_parts; k++) {
				gmt_json_obj_begin(j);
				gmt_json_key(j, "label");
				gmt_json_str(j, m[i].parts[k].label);
				gmt_json_key(j, "bytes");
				gmt_json_u64(j, m[i].parts[k].bytes);
				gmt_json_obj_end(j);
			}
			gmt_json_arr_end(j);
		}
		gmt_json_key(j, "href");
		gmt_json_str(j, m[i].href);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

static int write_device(gmt_json_t *j, gmt_page_dev_t *d)
{
	int rc = 0;
	if (!d->finished) {
		rc = gmt_buckets_finish(d->buckets);
		d->finished = 1;
	}
	uint64_t w = gmt_buckets_level(d->buckets, 0)->bucket_ns;
	gmt_json_obj_begin(j);
	gmt_json_key(j, "id");
	gmt_json_str(j, d->id);
	gmt_json_key(j, "label");
	gmt_json_str(j, d->label);
	gmt_json_key(j, "total_bytes");
	if (d->total)
		gmt_json_u64(j, d->total);
	else
		gmt_json_null(j);
	gmt_json_key(j, "t0_ns");
	gmt_json_u64(j, d->t0);
	gmt_json_key(j, "duration_ns");
	gmt_json_u64(j, gmt_buckets_duration(d->buckets));
	gmt_json_key(j, "wall_t0");
	if (d->has_wall) {
		gmt_json_obj_begin(j);
		gmt_json_key(j, "s");
		gmt_json_u64(j, d->wall_s);
		gmt_json_key(j, "ns");
		gmt_json_u64(j, d->wall_ns);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_key(j, "top_label");
	gmt_json_str(j, d->top_label);
	gmt_json_key(j, "series");
	gmt_json_arr_begin(j);
	for (unsigned s = 0; s < d->n_series; s++) {
		gmt_json_obj_begin(j);
		gmt_json_key(j, "key");
		gmt_json_str(j, d->series[s].key);
		gmt_json_key(j, "label");
		gmt_json_str(j, d->series[s].label);
		gmt_json_key(j, "role");
		gmt_json_str(j, d->series[s].role == GMT_PAGE_STACK ? "stack" : "line");
		gmt_json_key(j, "style");
		gmt_json_u64(j, (uint64_t)d->series[s].style);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "levels");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < gmt_buckets_levels(d->buckets); i++) {
		int r = write_level(j, d, gmt_buckets_level(d->buckets, i));
		rc = rc ? rc : r;
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "phases");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < d->n_phases; i++) {
		const struct phase *p = &d->phases[i];
		gmt_json_obj_begin(j);
		gmt_json_key(j, "name");
		gmt_json_str(j, p->name);
		gmt_json_key(j, "occurrence");
		gmt_json_u64(j, p->occurrence);
		gmt_json_key(j, "cold");
		gmt_json_bool(j, p->cold);
		gmt_json_key(j, "begin_ns");
		gmt_json_u64(j, p->begin);
		gmt_json_key(j, "end_ns");
		if (p->end == GMT_PAGE_NO_END)
			gmt_json_null(j);
		else
			gmt_json_u64(j, p->end);
		gmt_json_key(j, "failed");
		gmt_json_bool(j, p->failed);
		gmt_json_key(j, "href");
		gmt_json_str(j, p->href);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "syncs");
	gmt_json_obj_begin(j);
	gmt_json_key(j, "bucket_ns");
	gmt_json_u64(j, w);
	/* at the final width: runs that fall into one bucket are merged */
	size_t n = 0;
	for (size_t i = 0; i < d->n_syncs; i++) {
		uint64_t b = d->syncs[i].b * d->syncs[i].w / w;
		if (n && d->syncs[n - 1].b == b) {
			d->syncs[n - 1].n += d->syncs[i].n;
			continue;
		}
		d->syncs[n++] = (struct sync){ b, d->syncs[i].n, w };
	}
	d->n_syncs = n;
	gmt_json_key(j, "b");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < d->n_syncs; i++)
		gmt_json_u64(j, d->syncs[i].b - (i ? d->syncs[i - 1].b : 0));
	gmt_json_arr_end(j);
	gmt_json_key(j, "n");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < d->n_syncs; i++)
		gmt_json_u64(j, d->syncs[i].n);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	gmt_json_key(j, "peaks");
	write_marks(j, d->peaks, d->n_peaks, 1);
	gmt_json_key(j, "failures");
	write_marks(j, d->fails, d->n_fails, 0);
	gmt_json_obj_end(j);
	return rc;
}

int gmt_page_data_write(FILE *out, const char *title, gmt_page_dev_t *const *devs, size_t n)
{
	gmt_json_t j;
	gmt_json_init(&j, out);
	gmt_json_obj_begin(&j);
	gmt_json_key(&j, "format");
	gmt_json_str(&j, "gpumemtrace-report-page");
	gmt_json_key(&j, "version");
	gmt_json_u64(&j, 2);  /* 2: sparse levels ("b") */
	gmt_json_key(&j, "title");
	gmt_json_str(&j, title ? title : "");
	gmt_json_key(&j, "devices");
	gmt_json_arr_begin(&j);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		int r = write_device(&j, devs[i]);
		rc = rc ? rc : r;
	}
	gmt_json_arr_end(&j);
	gmt_json_obj_end(&j);
	int jr = gmt_json_close(&j);
	return rc ? rc : jr;
}
