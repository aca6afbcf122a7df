/*
 * gmt_curves.c - time series of allocated, reserved, outside, device used
 * and held per device.
 *
 * The phase engine calls back after every event that changed a device's
 * values or the innermost phase. The values after the last event of one
 * instant are the instant's row: rows wait as "pending" per device until
 * an event with a later time arrives, and a row equal to the device's
 * previous one is not written. Rows go to an anonymous temporary file (the
 * engine may restart for a second pass, and --max-rows needs the counts
 * first), so memory stays bounded by the number of devices.
 *
 * --max-rows N: a device's rows are cut into N consecutive buckets of equal
 * count (the last may be shorter) and each bucket keeps its row with the
 * highest held bytes (the first such row on ties). The device's peak of
 * held bytes is therefore always kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_curves.h"

typedef gmt_curve_row_t crow_t;

typedef struct cdev {
	int seen;                /* a row was written */
	int pending;
	crow_t last, next;
	uint64_t rows;           /* written */
	uint64_t *keep;          /* --max-rows: per bucket, the kept row (global index + 1) */
	uint64_t *keep_held;
	uint64_t bucket;         /* rows per bucket */
} cdev_t;

struct gmt_curves {
	enum gmt_view view;
	uint64_t max_rows;
	FILE *rows;
	uint64_t n_rows, n_kept;
	cdev_t *dev;             /* by ordinal */
	size_t n_dev;
	uint64_t cur_ts;
	int have_ts;
	int err;
};

static int c_reset(void *ctx)
{
	gmt_curves_t *c = ctx;
	if (c->rows)
		fclose(c->rows);
	if (!(c->rows = tmpfile()))
		return -(errno ? errno : EIO);
	for (size_t i = 0; i < c->n_dev; i++) {
		free(c->dev[i].keep);
		free(c->dev[i].keep_held);
	}
	free(c->dev);
	c->dev = NULL;
	c->n_dev = 0;
	c->n_rows = c->n_kept = 0;
	c->have_ts = 0;
	c->err = 0;
	return 0;
}

gmt_curves_t *gmt_curves_new(enum gmt_view view, uint64_t max_rows)
{
	gmt_curves_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->view = view;
	c->max_rows = max_rows;
	return c;
}

void gmt_curves_free(gmt_curves_t *c)
{
	if (!c)
		return;
	if (c->rows)
		fclose(c->rows);
	for (size_t i = 0; i < c->n_dev; i++) {
		free(c->dev[i].keep);
		free(c->dev[i].keep_held);
	}
	free(c->dev);
	free(c);
}

static cdev_t *cdev(gmt_curves_t *c, int ordinal)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= c->n_dev) {
		size_t n = c->n_dev ? c->n_dev : 2;
		while (n <= (size_t)ordinal)
			n *= 2;
		cdev_t *nd = realloc(c->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + c->n_dev, 0, (n - c->n_dev) * sizeof(*nd));
		c->dev = nd;
		c->n_dev = n;
	}
	return &c->dev[ordinal];
}

static int same(const crow_t *a, const crow_t *b)
{
	return a->allocated == b->allocated && a->reserved == b->reserved && a->outside == b->outside &&
	       a->used == b->used && a->held == b->held && a->phase == b->phase &&
	       a->has_alloc == b->has_alloc && a->has_res == b->has_res && a->has_used == b->has_used &&
	       a->has_phase == b->has_phase;
}

static int flush(gmt_curves_t *c)
{
	for (size_t i = 0; i < c->n_dev; i++) {
		cdev_t *d = &c->dev[i];
		if (!d->pending)
			continue;
		d->pending = 0;
		if (d->seen && same(&d->last, &d->next))
			continue;
		if (fwrite(&d->next, sizeof(d->next), 1, c->rows) != 1)
			return -(c->err = EIO);
		d->last = d->next;
		d->seen = 1;
		d->rows++;
		c->n_rows++;
	}
	return 0;
}

static int set_pending(gmt_curves_t *c, gmt_phases_t *ph, int ordinal, uint64_t ts)
{
	cdev_t *d = cdev(c, ordinal);
	if (!d)
		return -ENOMEM;
	gmt_lv_vals_t v;
	int open;
	gmt_levels_values(gmt_phases_levels(ph), ordinal, c->view, &v);
	crow_t *r = &d->next;
	memset(r, 0, sizeof(*r));
	r->ts = ts;
	r->dev = ordinal;
	r->allocated = v.allocated;
	r->has_alloc = v.has_allocated;
	r->reserved = v.reserved;
	r->has_res = v.has_reserved;
	r->outside = v.outside;
	r->used = v.used;
	r->has_used = v.has_used;
	r->held = v.held;
	r->phase = gmt_phases_current(ph, &open);
	r->has_phase = (uint8_t)open;
	d->pending = 1;
	return 0;
}

static int c_instant(void *ctx, gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n, int changed)
{
	gmt_curves_t *c = ctx;
	int rc;
	if (!c->rows)
		return -EIO;
	if (c->have_ts && ts != c->cur_ts && (rc = flush(c)))
		return rc;
	c->have_ts = 1;
	c->cur_ts = ts;
	for (size_t i = 0; i < n; i++)
		if (devs[i] >= 0 && (rc = set_pending(c, ph, devs[i], ts)))
			return rc;
	if (changed) {
		int all[256];
		size_t k = gmt_phases_devices(ph, all, 256);
		for (size_t i = 0; i < k && i < 256; i++)
			if ((rc = set_pending(c, ph, all[i], ts)))
				return rc;
	}
	return 0;
}

void gmt_curves_hook(gmt_curves_t *c, gmt_phases_hook_t *hook)
{
	memset(hook, 0, sizeof(*hook));
	hook->ctx = c;
	hook->reset = c_reset;
	hook->instant = c_instant;
}

int gmt_curves_finish(gmt_curves_t *c)
{
	int rc;
	if (!c->rows)
		return -EIO;
	if ((rc = flush(c)))
		return rc;
	if (fflush(c->rows))
		return -EIO;
	c->n_kept = c->n_rows;
	if (!c->max_rows)
		return 0;
	/* --max-rows: per device, the best row of each bucket. */
	for (size_t i = 0; i < c->n_dev; i++) {
		cdev_t *d = &c->dev[i];
		if (d->rows <= c->max_rows)
			continue;
		d->bucket = (d->rows + c->max_rows - 1) / c->max_rows;
		d->keep = calloc(c->max_rows, sizeof(*d->keep));
		d->keep_held = calloc(c->max_rows, sizeof(*d->keep_held));
		if (!d->keep || !d->keep_held)
			return -ENOMEM;
	}
	rewind(c->rows);
	uint64_t *seen = calloc(c->n_dev ? c->n_dev : 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	crow_t r;
	for (uint64_t g = 0; fread(&r, sizeof(r), 1, c->rows) == 1; g++) {
		cdev_t *d = cdev(c, r.dev);
		if (!d || !d->keep)
			continue;
		uint64_t b = seen[r.dev]++ / d->bucket;
		if (!d->keep[b] || r.held > d->keep_held[b]) {
			d->keep[b] = g + 1;
			d->keep_held[b] = r.held;
		}
	}
	free(seen);
	c->n_kept = 0;
	for (size_t i = 0; i < c->n_dev; i++) {
		cdev_t *d = &c->dev[i];
		if (!d->keep) {
			c->n_kept += d->rows;
			continue;
		}
		for (uint64_t b = 0; b < c->max_rows; b++)
			c->n_kept += d->keep[b] ? 1 : 0;
	}
	return 0;
}

uint64_t gmt_curves_rows(const gmt_curves_t *c, uint64_t *all)
{
	if (all)
		*all = c->n_rows;
	return c->n_kept;
}

int gmt_curves_each_row(gmt_curves_t *c, int (*out)(void *, const gmt_curve_row_t *), void *ctx)
{
	crow_t r;
	if (!c->rows)
		return 0;
	uint64_t *idx = c->n_dev ? calloc(c->n_dev, sizeof(*idx)) : NULL;   /* rows seen */
	int rc = 0;
	if (c->n_dev && !idx)
		return -ENOMEM;
	rewind(c->rows);
	for (uint64_t g = 0; !rc && fread(&r, sizeof(r), 1, c->rows) == 1; g++) {
		cdev_t *d = cdev(c, r.dev);
		if (!d)
			continue;
		if (d->keep) {
			/* a bucket's kept row is the only one of that bucket */
			uint64_t b = idx[r.dev]++ / d->bucket;
			if (d->keep[b] != g + 1)
				continue;
		}
		rc = out(ctx, &r);
	}
	free(idx);
	return rc;
}

enum gmt_view gmt_curves_view(const gmt_curves_t *c)
{
	return c->view;
}

uint64_t gmt_curves_dev_rows(gmt_curves_t *c, int ordinal)
{
	cdev_t *d = cdev(c, ordinal);
	return d ? d->rows : 0;
}
