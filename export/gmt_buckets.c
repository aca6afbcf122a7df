/*
 * gmt_buckets.c - the buckets of gmt_buckets.h. Only the finest level sees
 * the instants; gmt_buckets_finish() makes each coarser level by merging
 * the buckets below, which is exact: a bucket's candidates are its
 * children's, and a child's state held from before is a candidate of the
 * child before it too (its last), so comparisons that keep the first of
 * equal tops choose the same instant as bucketing the instants again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_buckets.h"

#define MAX_LEVELS 40

struct gmt_buckets {
	unsigned n;
	uint64_t duration;
	int grow;              /* duration GMT_BUCKETS_GROW: the finest level widens */
	unsigned factor;
	size_t min_buckets;
	size_t n_levels;
	gmt_bucket_level_t lv[MAX_LEVELS];
	int started, finished;
	uint64_t last_t;
	size_t ci;             /* the finest level's current bucket */
	uint64_t *cur_value;   /* the state after the latest instant */
	uint8_t *cur_known;
	uint64_t cur_top;
};

static void level_free(gmt_bucket_level_t *l, unsigned n)
{
	free(l->state);
	free(l->at);
	free(l->top);
	free(l->low);
	for (unsigned s = 0; l->series && s < n; s++) {
		gmt_bucket_series_t *x = &l->series[s];
		free(x->value); free(x->known); free(x->min); free(x->max); free(x->last);
		free(x->min_at); free(x->max_at); free(x->last_at); free(x->has);
	}
	free(l->series);
}

static int level_alloc(gmt_bucket_level_t *l, unsigned n, uint64_t bucket_ns, size_t count)
{
	l->bucket_ns = bucket_ns;
	l->count = count;
	l->state = calloc(count, 1);
	l->at = malloc(count * sizeof(*l->at));
	l->top = calloc(count, sizeof(*l->top));
	l->low = calloc(count, sizeof(*l->low));
	l->series = calloc(n, sizeof(*l->series));
	if (!l->state || !l->at || !l->top || !l->low || !l->series)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		l->at[i] = GMT_BUCKET_BEFORE;
	for (unsigned s = 0; s < n; s++) {
		gmt_bucket_series_t *x = &l->series[s];
		x->value = calloc(count, sizeof(*x->value));
		x->known = calloc(count, 1);
		x->min = calloc(count, sizeof(*x->min));
		x->max = calloc(count, sizeof(*x->max));
		x->last = calloc(count, sizeof(*x->last));
		x->min_at = malloc(count * sizeof(*x->min_at));
		x->max_at = malloc(count * sizeof(*x->max_at));
		x->last_at = malloc(count * sizeof(*x->last_at));
		x->has = calloc(count, 1);
		if (!x->value || !x->known || !x->min || !x->max || !x->last || !x->min_at ||
		    !x->max_at || !x->last_at || !x->has)
			return -ENOMEM;
		for (size_t i = 0; i < count; i++)
			x->min_at[i] = x->max_at[i] = x->last_at[i] = GMT_BUCKET_BEFORE;
	}
	return 0;
}

void gmt_buckets_free(gmt_buckets_t *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_levels; i++)
		level_free(&b->lv[i], b->n);
	free(b->cur_value);
	free(b->cur_known);
	free(b);
}

gmt_buckets_t *gmt_buckets_new(unsigned n_series, uint64_t duration_ns, size_t max_buckets,
			       unsigned factor, size_t min_buckets)
{
	if (!n_series || !max_buckets || !min_buckets) {
		errno = EINVAL;
		return NULL;
	}
	gmt_buckets_t *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->n = n_series;
	b->duration = duration_ns;
	b->cur_value = calloc(n_series, sizeof(*b->cur_value));
	b->cur_known = calloc(n_series, 1);
	if (!b->cur_value || !b->cur_known)
		goto nomem;
	b->factor = factor;
	b->min_buckets = min_buckets;
	if (duration_ns == GMT_BUCKETS_GROW) {
		/* the finest level only, 1 ns wide, until the instants need more */
		b->grow = 1;
		if (level_alloc(&b->lv[b->n_levels++], n_series, 1, max_buckets))
			goto nomem;
		return b;
	}
	uint64_t bw = 1;
	if (factor < 2)  /* one level: the narrowest buckets that fit */
		bw = duration_ns / max_buckets + 1;
	else
		while (duration_ns / bw + 1 > max_buckets)
			bw *= 2;
	for (;;) {
		size_t count = (size_t)(duration_ns / bw + 1);
		if (level_alloc(&b->lv[b->n_levels++], n_series, bw, count))
			goto nomem;
		if (factor < 2 || count <= min_buckets || b->n_levels == MAX_LEVELS ||
		    bw > UINT64_MAX / factor)
			break;
		bw *= factor;
	}
	return b;
nomem:
	gmt_buckets_free(b);
	errno = ENOMEM;
	return NULL;
}

/* Bucket i starts with the state held since before it (none when !held). */
static void open_bucket(gmt_buckets_t *b, size_t i, int held)
{
	gmt_bucket_level_t *l = &b->lv[0];
	if (!held)
		return;
	l->state[i] = 1;
	l->at[i] = GMT_BUCKET_BEFORE;
	l->top[i] = l->low[i] = b->cur_top;
	for (unsigned s = 0; s < b->n; s++) {
		gmt_bucket_series_t *x = &l->series[s];
		uint64_t v = b->cur_known[s] ? b->cur_value[s] : 0;
		x->value[i] = v;
		x->known[i] = x->has[i] = b->cur_known[s];
		x->min[i] = x->max[i] = x->last[i] = v;
	}
}

static int halve(gmt_buckets_t *b);

int gmt_buckets_add(gmt_buckets_t *b, uint64_t t_ns, const uint64_t *value, const uint8_t *known,
		    uint64_t top)
{
	gmt_bucket_level_t *l = &b->lv[0];
	if (b->finished || (!b->grow && t_ns > b->duration) || (b->started && t_ns < b->last_t))
		return -EINVAL;
	while (b->grow && t_ns / l->bucket_ns >= l->count) {
		int rc = halve(b);
		if (rc)
			return rc;
	}
	size_t i = (size_t)(t_ns / l->bucket_ns);
	if (!b->started) {
		b->started = 1;
		b->ci = i;
	} else if (i > b->ci) {
		for (size_t j = b->ci + 1; j <= i; j++)
			open_bucket(b, j, 1);
		b->ci = i;
	}
	int64_t off = (int64_t)(t_ns - i * l->bucket_ns);
	int fresh = !l->state[i];
	if (fresh || top > l->top[i]) {
		l->at[i] = off;
		l->top[i] = top;
		for (unsigned s = 0; s < b->n; s++) {
			l->series[s].value[i] = known[s] ? value[s] : 0;
			l->series[s].known[i] = known[s] ? 1 : 0;
		}
	}
	if (fresh || top < l->low[i])
		l->low[i] = top;
	l->state[i] = 1;
	for (unsigned s = 0; s < b->n; s++) {
		gmt_bucket_series_t *x = &l->series[s];
		if (!known[s])
			continue;
		if (!x->has[i]) {
			x->min[i] = x->max[i] = value[s];
			x->min_at[i] = x->max_at[i] = off;
			x->has[i] = 1;
		} else if (value[s] < x->min[i]) {
			x->min[i] = value[s];
			x->min_at[i] = off;
		} else if (value[s] > x->max[i]) {
			x->max[i] = value[s];
			x->max_at[i] = off;
		}
		x->last[i] = value[s];
		x->last_at[i] = off;
		b->cur_value[s] = value[s];
		b->cur_known[s] = 1;
	}
	b->cur_top = top;
	b->last_t = t_ns;
	return 0;
}

/* An offset in a child, as an offset in its parent. */
static int64_t up(int64_t at, size_t child, size_t first, uint64_t child_ns)
{
	if (at == GMT_BUCKET_BEFORE && child == first)
		return GMT_BUCKET_BEFORE;
	return (int64_t)((child - first) * child_ns) + (at < 0 ? 0 : at);
}

static void merge(gmt_bucket_level_t *p, const gmt_bucket_level_t *c, unsigned n)
{
	size_t per = (size_t)(p->bucket_ns / c->bucket_ns);
	for (size_t i = 0; i < p->count; i++) {
		size_t first = i * per, end = first + per < c->count ? first + per : c->count;
		for (size_t k = first; k < end; k++) {
			if (!c->state[k])
				continue;
			int fresh = !p->state[i];
			if (fresh || c->top[k] > p->top[i]) {
				p->at[i] = up(c->at[k], k, first, c->bucket_ns);
				p->top[i] = c->top[k];
				for (unsigned s = 0; s < n; s++) {
					p->series[s].value[i] = c->series[s].value[k];
					p->series[s].known[i] = c->series[s].known[k];
				}
			}
			if (fresh || c->low[k] < p->low[i])
				p->low[i] = c->low[k];
			p->state[i] = 1;
			for (unsigned s = 0; s < n; s++) {
				gmt_bucket_series_t *x = &p->series[s];
				const gmt_bucket_series_t *y = &c->series[s];
				if (!y->has[k])
					continue;
				int had = x->has[i];
				if (!had || y->min[k] < x->min[i]) {
					x->min[i] = y->min[k];
					x->min_at[i] = up(y->min_at[k], k, first, c->bucket_ns);
				}
				if (!had || y->max[k] > x->max[i]) {
					x->max[i] = y->max[k];
					x->max_at[i] = up(y->max_at[k], k, first, c->bucket_ns);
				}
				x->has[i] = 1;
				x->last[i] = y->last[k];
				/* held from before the child: set in an earlier one */
				if (!had || y->last_at[k] != GMT_BUCKET_BEFORE)
					x->last_at[i] = up(y->last_at[k], k, first, c->bucket_ns);
			}
		}
	}
}

/* The finest level at twice its width, its buckets merged in pairs (as
   exact as any merge); the capacity stays. */
static int halve(gmt_buckets_t *b)
{
	gmt_bucket_level_t *l = &b->lv[0], wide;
	memset(&wide, 0, sizeof(wide));
	if (l->bucket_ns > UINT64_MAX / 2 || level_alloc(&wide, b->n, l->bucket_ns * 2, l->count)) {
		level_free(&wide, b->n);
		return -ENOMEM;
	}
	merge(&wide, l, b->n);
	level_free(l, b->n);
	*l = wide;
	b->ci /= 2;
	return 0;
}

int gmt_buckets_finish(gmt_buckets_t *b)
{
	if (b->finished)
		return 0;
	b->finished = 1;
	if (b->grow) {
		/* the levels' extent is now known: up to the last instant */
		b->duration = b->started ? b->last_t : 0;
		gmt_bucket_level_t *l = &b->lv[0];
		l->count = (size_t)(b->duration / l->bucket_ns + 1);
		uint64_t bw = l->bucket_ns;
		size_t count = l->count;
		while (b->factor >= 2 && count > b->min_buckets && b->n_levels < MAX_LEVELS &&
		       bw <= UINT64_MAX / b->factor) {
			bw *= b->factor;
			count = (size_t)(b->duration / bw + 1);
			if (level_alloc(&b->lv[b->n_levels++], b->n, bw, count))
				return -ENOMEM;
		}
	}
	if (b->started)
		for (size_t j = b->ci + 1; j < b->lv[0].count; j++)
			open_bucket(b, j, 1);
	for (size_t i = 1; i < b->n_levels; i++)
		merge(&b->lv[i], &b->lv[i - 1], b->n);
	return 0;
}

uint64_t gmt_buckets_duration(const gmt_buckets_t *b)
{
	return b->grow && !b->finished ? b->last_t : b->duration;
}

size_t gmt_buckets_levels(const gmt_buckets_t *b)
{
	return b->n_levels;
}

const gmt_bucket_level_t *gmt_buckets_level(const gmt_buckets_t *b, size_t i)
{
	return i < b->n_levels ? &b->lv[i] : NULL;
}
