/*
 * gmt_pagedata.h - the report page's data (docs/report-page.md, "The data"):
 * per device, the series bucketed into zoom levels (export/gmt_buckets.h),
 * phase occurrences, synchronisations, peaks and failures, written as the
 * JSON the page's script reads.
 *
 * The caller (the report renderer) gives the model's values as they are:
 * each instant's series and stack top, each peak's composition. Nothing is
 * derived here but the buckets' extremes (gmt_buckets.c) and the encoding
 * (delta-coded arrays, `known_from`).
 */
#ifndef GMT_PAGEDATA_H
#define GMT_PAGEDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GMT_PAGE_STACK, GMT_PAGE_LINE };
#define GMT_PAGE_NO_END UINT64_MAX  /* a phase occurrence that did not end */

typedef struct gmt_page_series {
	const char *key, *label;
	int role;   /* GMT_PAGE_STACK (bottom first) or GMT_PAGE_LINE */
	int style;  /* docs/report-page.md, "Styles" */
} gmt_page_series_t;

typedef struct gmt_page_part {
	const char *label;
	uint64_t bytes;
} gmt_page_part_t;

typedef struct gmt_page_dev_info {
	const char *id, *label, *top_label;  /* id: the figure's data-device */
	uint64_t total_bytes;                /* 0: unknown */
	uint64_t t0_ns, duration_ns;         /* CLOCK_MONOTONIC of the axis' 0; its length, or
						GMT_BUCKETS_GROW: the last instant's time (a
						stream read once, export/gmt_buckets.h) */
	int has_wall;                        /* wall_s, wall_ns: CLOCK_REALTIME at t0_ns */
	uint64_t wall_s;
	uint32_t wall_ns;
	const gmt_page_series_t *series;
	unsigned n_series;
	size_t max_buckets;                  /* the finest level's, at most */
} gmt_page_dev_info_t;

typedef struct gmt_page_dev gmt_page_dev_t;

/* A device (the strings are copied). NULL when out of memory or the info is
   invalid (no series, max_buckets 0): errno ENOMEM or EINVAL. */
gmt_page_dev_t *gmt_page_dev_new(const gmt_page_dev_info_t *info);

/* One instant, t_ns after t0, in time order: each series' value and whether
   it is known, and the stack's top. Returns 0 or -EINVAL (out of order,
   beyond the duration). */
int gmt_page_dev_instant(gmt_page_dev_t *d, uint64_t t_ns, const uint64_t *value,
			 const uint8_t *known, uint64_t top);

/* Marks (times after t0; strings copied). Return 0 or -ENOMEM; syncs must
   come in time order (-EINVAL otherwise). */
int gmt_page_dev_phase(gmt_page_dev_t *d, const char *name, unsigned occurrence, int cold,
		       uint64_t begin_ns, uint64_t end_ns, int failed, const char *href);
int gmt_page_dev_sync(gmt_page_dev_t *d, uint64_t t_ns);
int gmt_page_dev_peak(gmt_page_dev_t *d, const char *label, uint64_t t_ns, uint64_t bytes,
		      const gmt_page_part_t *parts, size_t n_parts, const char *href);
int gmt_page_dev_failure(gmt_page_dev_t *d, const char *label, uint64_t t_ns, uint64_t bytes,
			 const char *href);

void gmt_page_dev_free(gmt_page_dev_t *d);

/* Writes {"format", "version", "title", "devices": [...]} to out (the
   devices' buckets are completed first). Returns 0, -ENOMEM, -EINVAL or
   -EIO. */
int gmt_page_data_write(FILE *out, const char *title, gmt_page_dev_t *const *devs, size_t n);

#ifdef __cplusplus
}
#endif

#endif
