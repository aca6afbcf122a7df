/*
 * gmt_buckets.h - time buckets that keep every extreme: the zoom levels of
 * the report page (docs/report-page.md, "Levels") and the counter budget of
 * the Chrome trace export (docs/exports.md).
 *
 * A device's instants go in, in time order, each with the value of every
 * series (known or not) and the stack's top as the model computed it. Time
 * from 0 to duration_ns is cut into buckets; for each bucket, the candidates
 * are the state held since before it (the state at its start) and every
 * instant in it. A bucket keeps the candidate with the highest top (the
 * first such) with all its values, so that what is drawn is one real
 * instant, and for each series its lowest, highest and last known value.
 * The finest level takes the instants; each coarser one is made from the
 * one below by merging `factor` buckets, which gives the same result as
 * bucketing the instants again. Memory: the levels' arrays, independent of
 * the number of instants.
 */
#ifndef GMT_BUCKETS_H
#define GMT_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Offsets are ns from the bucket's start; GMT_BUCKET_BEFORE: the state held
   since before the bucket began. */
#define GMT_BUCKET_BEFORE (-1)

typedef struct gmt_bucket_series {
	uint64_t *value;   /* at the top instant */
	uint8_t *known;    /* value known at the top instant */
	uint64_t *min, *max, *last;  /* over the known values; last: at the bucket's end */
	int64_t *min_at, *max_at;    /* offsets of the first min / max */
	int64_t *last_at;            /* offset of the instant that set last */
	uint8_t *has;      /* any known value in the bucket (else min, max, last are 0) */
} gmt_bucket_series_t;

typedef struct gmt_bucket_level {
	uint64_t bucket_ns;  /* bucket i is [i * bucket_ns, (i + 1) * bucket_ns) */
	size_t count;
	uint8_t *state;      /* the bucket has a candidate (false before the first instant) */
	int64_t *at;         /* offset of the top instant */
	uint64_t *top, *low; /* its top; the lowest top of the candidates */
	gmt_bucket_series_t *series;  /* n_series */
} gmt_bucket_level_t;

typedef struct gmt_buckets gmt_buckets_t;

/*
 * n_series series over [0, duration_ns]. The finest level's bucket is the
 * smallest power of two of ns that gives at most max_buckets buckets; each
 * coarser level's is factor times the one below, until a level has at most
 * min_buckets. factor 0 (or 1): that level only, its bucket the smallest
 * number of ns (any) that gives at most max_buckets. NULL when out of
 * memory or an argument is 0 (errno ENOMEM or EINVAL).
 */
gmt_buckets_t *gmt_buckets_new(unsigned n_series, uint64_t duration_ns, size_t max_buckets,
			       unsigned factor, size_t min_buckets);

/* duration_ns GMT_BUCKETS_GROW: the extent is not known in advance (a
 * stream read once). The finest level starts 1 ns wide and doubles its
 * width, merging its buckets in pairs, whenever an instant lies beyond its
 * max_buckets; at the end its width is the smallest power of two that holds
 * [0, last instant] in max_buckets, as if that extent had been given, and
 * the coarser levels are made by gmt_buckets_finish. */
#define GMT_BUCKETS_GROW UINT64_MAX

/* One instant at t_ns: each series' value and whether it is known, and the
   stack's top. Returns 0, or -EINVAL when t_ns is before the previous
   instant or after duration_ns (nothing is changed then). */
int gmt_buckets_add(gmt_buckets_t *b, uint64_t t_ns, const uint64_t *value, const uint8_t *known,
		    uint64_t top);

/* Completes the levels (the buckets after the last instant hold its state;
   the coarser levels are made). Call once, after the last add. Returns 0,
   or -ENOMEM (growing: a coarser level could not be made; the levels made
   are complete). */
int gmt_buckets_finish(gmt_buckets_t *b);

/* The levels' extent: duration_ns, or growing, the last instant's time. */
uint64_t gmt_buckets_duration(const gmt_buckets_t *b);

/* The levels, finest first (after gmt_buckets_finish). */
size_t gmt_buckets_levels(const gmt_buckets_t *b);
const gmt_bucket_level_t *gmt_buckets_level(const gmt_buckets_t *b, size_t i);

void gmt_buckets_free(gmt_buckets_t *b);

#ifdef __cplusplus
}
#endif

#endif
