/*
 * gmt_diff.c - two runs' rows matched by key, growth and thresholds
 * (gmt_diff.h). Matching sorts an index of each side by key and merges
 * them: O((na + nb) log) and no hash table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_dec.h"
#include "gmt_diff.h"

void gmt_diff_frame_key(const char *module_path, const char *function, uint64_t offset,
			char *out, size_t len)
{
	const char *base = module_path ? strrchr(module_path, '/') : NULL;

	base = base ? base + 1 : module_path ? module_path : "?";
	if (function && *function)
		snprintf(out, len, "%s:%s", base, function);
	else
		snprintf(out, len, "%s+0x%llx", base, (unsigned long long)offset);
}

static const gmt_diff_item_t *sort_items;

static int by_key(const void *x, const void *y)
{
	const gmt_diff_item_t *a = &sort_items[*(const size_t *)x], *b = &sort_items[*(const size_t *)y];
	int c = strcmp(a->key, b->key);
	if (c)
		return c;
	return *(const size_t *)x < *(const size_t *)y ? -1 : *(const size_t *)x > *(const size_t *)y;
}

static size_t *sorted(const gmt_diff_item_t *v, size_t n)
{
	size_t *ix = malloc((n ? n : 1) * sizeof(*ix));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	sort_items = v;
	qsort(ix, n, sizeof(*ix), by_key);
	return ix;
}

typedef struct ctx {
	const gmt_diff_item_t *a, *b;
} ctx_t;

static const ctx_t *sort_ctx;

static const char *row_key(const gmt_diff_row_t *r)
{
	return r->a >= 0 ? sort_ctx->a[r->a].key : sort_ctx->b[r->b].key;
}

static int by_growth(const void *x, const void *y)
{
	const gmt_diff_row_t *a = x, *b = y;
	if (a->delta != b->delta)
		return a->delta > b->delta ? -1 : 1;
	return strcmp(row_key(a), row_key(b));
}

/* Sums of a key's rows in one side: its first index and the totals. */
static size_t run(const gmt_diff_item_t *v, const size_t *ix, size_t n, size_t i, uint64_t *bytes)
{
	size_t j = i;
	*bytes = 0;
	while (j < n && !strcmp(v[ix[j]].key, v[ix[i]].key))
		*bytes += v[ix[j++]].bytes;
	return j;
}

long gmt_diff_match(const gmt_diff_item_t *a, size_t na, const gmt_diff_item_t *b, size_t nb,
		    int order, gmt_diff_row_t **rows)
{
	size_t *ia = sorted(a, na), *ib = sorted(b, nb), i = 0, j = 0, n = 0;
	gmt_diff_row_t *out = malloc((na + nb ? na + nb : 1) * sizeof(*out));

	*rows = NULL;
	if (!ia || !ib || !out) {
		free(ia);
		free(ib);
		free(out);
		return -1;
	}
	while (i < na || j < nb) {
		int c = i >= na ? 1 : j >= nb ? -1 : strcmp(a[ia[i]].key, b[ib[j]].key);
		gmt_diff_row_t *r = &out[n++];
		uint64_t ba = 0, bb = 0;
		r->a = c <= 0 ? (long)ia[i] : -1;
		r->b = c >= 0 ? (long)ib[j] : -1;
		if (c <= 0)
			i = run(a, ia, na, i, &ba);
		if (c >= 0)
			j = run(b, ib, nb, j, &bb);
		r->side = c == 0 ? GMT_DIFF_BOTH : c < 0 ? GMT_DIFF_ONLY_A : GMT_DIFF_ONLY_B;
		r->delta = (int64_t)(bb - ba);
		r->differs = c != 0;
		if (c == 0) {
			const char *ta = a[r->a].text, *tb = b[r->b].text;
			r->differs = (ta || tb) && (!ta || !tb || strcmp(ta, tb));
		}
	}
	free(ia);
	free(ib);
	if (order == GMT_DIFF_BY_GROWTH) {
		ctx_t c = { a, b };
		sort_ctx = &c;
		qsort(out, n, sizeof(*out), by_growth);
		sort_ctx = NULL;
	}
	*rows = out;
	return (long)n;
}

void gmt_diff_percent(uint64_t a, uint64_t b, char out[32])
{
	if (a == 0) {
		snprintf(out, 32, "%s", b ? "new" : "0.0");
		return;
	}
	u128 d = b >= a ? (u128)(b - a) : (u128)(a - b);
	u128 tenths = (d * 2000 / a + 1) / 2;   /* half away from zero */
	snprintf(out, 32, "%s%llu.%u", b > a ? "+" : b < a ? "-" : "",
		 (unsigned long long)(tenths / 10), (unsigned)(tenths % 10));
	if (tenths == 0)
		snprintf(out, 32, "0.0");
}

int gmt_diff_exceeds(uint64_t a, uint64_t b, const char *pct)
{
	gmt_dec_t p;
	uint64_t whole;

	/* At most 6 decimals and at most 10^12: both sides then fit in 128
	 * bits ((b - a) x 100 x 10^6 < 2^64 x 10^8; pct x 10^6 x a < 10^18 x 2^64). */
	if (gmt_dec_parse(pct, &p) || p.exp < -6)
		return -1;
	gmt_dec_t scaled = p;
	scaled.exp += 6;
	if (gmt_dec_to_u64(&scaled, 1, &whole) || whole > 1000000000000000000ull)
		return -1;
	if (b <= a)
		return 0;
	if (a == 0)
		return 1;
	/* (b - a) x 100 > pct x a  <=>  (b - a) x 100 x 10^6 > whole x a */
	return (u128)(b - a) * 100 * 1000000 > (u128)whole * a;
}
