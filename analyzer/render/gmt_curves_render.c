/*
 * gmt_curves_render.c - the curves' rows (engines/gmt_curves.h) as CSV or
 * as one JSON trace object (schemas/report.schema.json, "curves").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_curves.h"
#include "render/gmt_render.h"


typedef struct rctx {
	FILE *f;
	gmt_json_t *j;
	gmt_phases_t *ph;
	uint64_t first_ts;
	unsigned trace;
	int n;
	char *buf;                     /* CSV rows not written yet */
	size_t len;
	uint64_t last;                 /* the last byte count written, */
	char last_text[24];            /* ... its text                 */
	size_t last_len;               /* (0: none yet)                */
} rctx_t;

#define CSV_BUF (64u << 10)
#define CSV_ROW_MAX 256u           /* a row's numbers; a phase name apart */

static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A row is made in a buffer by hand and written with one fwrite: printf's
 * parsing and its floating point were nine tenths of the command's time
 * (there is a row for nearly every event). */

/* The 8 decimal digits of v (v < 10^8, leading zeros included) as the
 * bytes 0-9 of a word, the first digit in its lowest byte: the halves,
 * quarters and digits split in parallel lanes (multiplications by the
 * reciprocals of 100 and 10 that are exact in these ranges). */
static inline uint64_t digits8(uint32_t v)
{
	uint64_t y = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t z = (y * 10486 >> 20) & 0x0000007f0000007full;    /* / 100 */
	y = (y - z * 100) << 16 | z;
	z = (y * 103 >> 10) & 0x000f000f000f000full;              /* / 10  */
	return (y - z * 10) << 8 | z;
}

/* Stores the 8 bytes of w at p, its lowest byte first. */
static inline void put8(char *p, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	memcpy(p, &w, 8);
}

/* v in decimal at p (which has 8 bytes of room past the number); returns
 * the end. */
static char *put_u64(char *p, uint64_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100000000u) {
		uint64_t w = digits8((uint32_t)v);
		unsigned lead = (unsigned)__builtin_ctzll(w) / 8;   /* zero digits */
		put8(p, (w | 0x3030303030303030ull) >> 8 * lead);
		return p + 8 - lead;
	}
	p = put_u64(p, v / 100000000u);
	put8(p, digits8((uint32_t)(v % 100000000u)) | 0x3030303030303030ull);
	return p + 8;
}

static void csv_flush(rctx_t *x)
{
	if (x->len)
		fwrite(x->buf, 1, x->len, x->f);
	x->len = 0;
}

/* ns as seconds with 9 decimals, as printf's "%.9f" of ns / 1e9 gives them.
 * Below 2^52 ns (52 days) the double nearest ns / 1e9 is within half a
 * nanosecond of it, so its rounding to 9 decimals is the exact quotient;
 * beyond, printf itself. */
static char *put_seconds(char *p, int64_t ns)
{
	if (ns > -(1ll << 52) && ns < (1ll << 52)) {
		uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns, frac = a % 1000000000u;
		if (ns < 0)
			*p++ = '-';
		p = put_u64(p, a / 1000000000u);
		*p++ = '.';
		*p = (char)('0' + frac / 100000000u);
		put8(p + 1, digits8((uint32_t)(frac % 100000000u)) | 0x3030303030303030ull);
		return p + 9;
	}
	return p + sprintf(p, "%.9f", (double)ns / 1e9);
}

/* A byte count: a row's often repeat each other (taken, live and outside
 * are one number without a framework), so the last one's text is kept.
 * p has 28 bytes of room. */
static char *put_bytes(rctx_t *x, char *p, uint64_t v)
{
	if (x->last_len && v == x->last) {
		memcpy(p, x->last_text, sizeof(x->last_text));
		return p + x->last_len;
	}
	char *e = put_u64(p, v);
	x->last = v;
	x->last_len = (size_t)(e - p);
	memcpy(x->last_text, p, sizeof(x->last_text));
	return e;
}

static char *put_opt(rctx_t *x, char *p, int has, uint64_t v)
{
	return has ? put_bytes(x, p, v) : p;
}

static int csv_row(void *ctx, const gmt_curve_row_t *r)
{
	rctx_t *x = ctx;
	if (x->len + CSV_ROW_MAX > CSV_BUF)
		csv_flush(x);
	char *p = x->buf + x->len;
	p = put_u64(p, x->trace);
	*p++ = ',';
	if (r->dev < 0)
		*p++ = '-';
	p = put_u64(p, (uint64_t)(r->dev < 0 ? -(int64_t)r->dev : r->dev));
	*p++ = ',';
	p = put_u64(p, r->ts);
	*p++ = ',';
	p = put_seconds(p, (int64_t)(r->ts - x->first_ts));
	*p++ = ',';
	if (r->has_phase) {
		const char *name = gmt_phases_string(x->ph, r->phase);
		x->len = (size_t)(p - x->buf);
		csv_flush(x);
		csv_str(x->f, name ? name : "(unnamed)");
		p = x->buf;
	}
	*p++ = ',';
	p = put_opt(x, p, r->has_alloc, r->allocated);
	*p++ = ',';
	p = put_opt(x, p, r->has_res, r->reserved);
	*p++ = ',';
	p = put_bytes(x, p, r->outside);
	*p++ = ',';
	p = put_opt(x, p, r->has_used, r->used);
	*p++ = ',';
	p = put_bytes(x, p, r->held);
	*p++ = ',';
	p = put_bytes(x, p, r->live);
	*p++ = '\n';
	x->len = (size_t)(p - x->buf);
	return 0;
}

void gmt_curves_csv_header(FILE *f)
{
	fputs("trace,device,ts_ns,time_s,phase,allocated_bytes,reserved_bytes,outside_bytes,"
	      "device_used_bytes,taken_bytes,live_bytes\n", f);
}

int gmt_curves_csv(FILE *f, gmt_curves_t *c, gmt_phases_t *ph, unsigned trace)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	char *buf = malloc(CSV_BUF);
	if (!buf)
		return -1;
	rctx_t x = { .f = f, .ph = ph, .first_ts = s->first_ts, .trace = trace, .buf = buf };
	int rc = gmt_curves_each_row(c, csv_row, &x);
	csv_flush(&x);
	free(buf);
	return rc;
}

static void j_opt_u64(gmt_json_t *j, int has, uint64_t v)
{
	if (has)
		gmt_json_u64(j, v);
	else
		gmt_json_null(j);
}

static int json_row(void *ctx, const gmt_curve_row_t *r)
{
	rctx_t *x = ctx;
	gmt_json_t *j = x->j;
	gmt_json_newline(j);
	gmt_json_arr_begin(j);
	gmt_json_i64(j, r->dev);
	gmt_json_u64(j, r->ts);
	gmt_json_fixed(j, (double)(int64_t)(r->ts - x->first_ts) / 1e9, 9);
	if (r->has_phase) {
		const char *name = gmt_phases_string(x->ph, r->phase);
		gmt_json_str(j, name ? name : "(unnamed)");
	} else {
		gmt_json_null(j);
	}
	j_opt_u64(j, r->has_alloc, r->allocated);
	j_opt_u64(j, r->has_res, r->reserved);
	gmt_json_u64(j, r->outside);
	j_opt_u64(j, r->has_used, r->used);
	gmt_json_u64(j, r->held);
	gmt_json_u64(j, r->live);
	gmt_json_arr_end(j);
	return 0;
}

int gmt_curves_json(gmt_json_t *j, gmt_curves_t *c, gmt_phases_t *ph)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	int ok = s->status == GMT_DECODE_OK || s->status == GMT_DECODE_DAMAGED;
	gmt_json_newline(j);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", s->file);
	gmt_json_kv_str(j, "status", gmt_status_key(s));
	gmt_missing_json(j, s->missing, s->missing_timed, s->missing_first_ts, s->missing_last_ts);
	gmt_json_kv_obj_begin(j, "decode");
	gmt_json_kv_u64(j, "bytes_ok", s->bytes_ok);
	gmt_json_kv_u64(j, "file_size", s->file_size);
	gmt_json_kv_bool(j, "ended_cleanly", s->ended_cleanly);
	gmt_json_kv_str(j, "message", s->status != GMT_DECODE_OK ? s->message : NULL);
	gmt_json_obj_end(j);
	if (!ok) {
		gmt_json_obj_end(j);
		return 0;
	}
	gmt_report_gaps_json(j, &s->gaps);
	gmt_json_key(j, "first_event_ts_ns");
	j_opt_u64(j, s->have_ts, s->first_ts);
	gmt_json_kv_arr_begin(j, "devices");
	int devs[256];
	size_t nd = gmt_phases_devices(ph, devs, 256);
	for (size_t i = 0; i < nd && i < 256; i++) {
		gmt_lv_vals_t v;
		gmt_levels_values(gmt_phases_levels(ph), devs[i], gmt_curves_view(c), &v);
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", devs[i]);
		gmt_json_kv_u64(j, "rows", gmt_curves_dev_rows(c, devs[i]));
		gmt_json_kv_obj_begin(j, "sources");
		gmt_json_kv_str(j, "allocated", gmt_asrc_name(v.asrc));
		gmt_json_kv_str(j, "reserved", gmt_rsrc_name(v.rsrc));
		gmt_json_kv_str(j, "device_used", v.has_used ? "cuMemGetInfo samples" : NULL);
		gmt_json_obj_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	uint64_t all;
	uint64_t kept = gmt_curves_rows(c, &all);
	gmt_json_kv_u64(j, "rows_total", all);
	gmt_json_kv_u64(j, "rows_kept", kept);
	gmt_json_kv_arr_begin(j, "rows");
	rctx_t x = { .j = j, .ph = ph, .first_ts = s->first_ts };
	int rc = gmt_curves_each_row(c, json_row, &x);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	return rc;
}
