/*
 * gmt_curves_render.c - the curves' rows (engines/gmt_curves.h) as CSV or
 * as one JSON trace object (schemas/report.schema.json, "curves"). The CSV
 * of every row is made as the engine makes the rows (a sink): written
 * through to an output that can take it back (a regular file, truncated
 * when a second pass voids the rows) or keeps nothing (/dev/null), else
 * held until the trace has run, up to 4 MiB; the rows past that, and every
 * row otherwise, from gmt_curves_each_row after the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/gmt_curves.h"
#include "render/gmt_render.h"
#include "gmt_digits.h"


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
	size_t cap;                    /* buf's size                   */
	/* The previous row's texts that the next one likely repeats: the
	 * trace and device ("0,3,"), ts_ns above its last 8 digits, time_s's
	 * whole seconds and point (len 0: none yet). */
	int32_t pre_dev;
	char pre_text[32];
	size_t pre_len;
	uint64_t ts_hi;
	char ts_hi_text[24];
	size_t ts_hi_len;
	int64_t sec;
	char sec_text[24];
	size_t sec_len;
	/* JSON: the latest phase's name as a JSON string (escaped once) */
	int jphase_set;
	uint32_t jphase;
	char *jphase_text;
	size_t jphase_len;
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

/* Digits: writers/gmt_digits.h (gmt_put_dec, gmt_digits8, gmt_put8). */

static void csv_flush(rctx_t *x)
{
	if (x->len)
		fwrite(x->buf, 1, x->len, x->f);
	x->len = 0;
}

static int drain(rctx_t *x)
{
	csv_flush(x);
	return ferror(x->f) ? -EIO : 0;
}

/* s as a CSV field at p (room for 2 * strlen(s) + 2 bytes). */
static char *put_str(char *p, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		size_t n = strlen(s);
		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/* ns as seconds with 9 decimals, as printf's "%.9f" of ns / 1e9 gives them.
 * Below 2^52 ns (52 days) the double nearest ns / 1e9 is within half a
 * nanosecond of it, so its rounding to 9 decimals is the exact quotient;
 * beyond, printf itself. */
static char *put_seconds(char *p, int64_t ns)
{
	char *e = gmt_put_scaled(p, ns, 9);
	return e ? e : p + sprintf(p, "%.9f", (double)ns / 1e9);
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
	char *e = gmt_put_dec(p, v);
	x->last = v;
	x->last_len = (size_t)(e - p);
	memcpy(x->last_text, p, sizeof(x->last_text));
	return e;
}

/* ts_ns: above 10^8, the digits above the last 8 are the previous row's
 * most of the time. p has 32 bytes of room. */
static inline __attribute__((always_inline)) char *put_ts(rctx_t *x, char *p, uint64_t v)
{
	if (v < 100000000u)
		return gmt_put_dec(p, v);
	uint64_t hi = v / 100000000u;
	if (!x->ts_hi_len || hi != x->ts_hi) {
		char *e = gmt_put_dec(x->ts_hi_text, hi);
		x->ts_hi = hi;
		x->ts_hi_len = (size_t)(e - x->ts_hi_text);
	}
	memcpy(p, x->ts_hi_text, 16);
	p += x->ts_hi_len;
	gmt_put8(p, gmt_digits8((uint32_t)(v - hi * 100000000u)) | 0x3030303030303030ull);
	return p + 8;
}

/* time_s as put_seconds writes it, its whole seconds and point reused. */
static inline __attribute__((always_inline)) char *put_time(rctx_t *x, char *p, int64_t ns)
{
	if (ns < 0 || ns >= (1ll << 52))
		return put_seconds(p, ns);
	uint64_t a = (uint64_t)ns, sec = a / 1000000000u, frac = a - sec * 1000000000u;
	if (!x->sec_len || (int64_t)sec != x->sec) {
		char *e = gmt_put_dec(x->sec_text, sec);
		*e++ = '.';
		x->sec = (int64_t)sec;
		x->sec_len = (size_t)(e - x->sec_text);
	}
	memcpy(p, x->sec_text, 16);
	p += x->sec_len;
	*p = (char)('0' + frac / 100000000u);
	gmt_put8(p + 1, gmt_digits8((uint32_t)(frac % 100000000u)) | 0x3030303030303030ull);
	return p + 9;
}

/* A value that may be missing: nothing in the CSV, null in JSON. */
static inline __attribute__((always_inline)) char *put_opt(rctx_t *x, char *p, int has, uint64_t v, int json)
{
	if (has)
		return put_bytes(x, p, v);
	if (json) {
		memcpy(p, "null", 4);
		p += 4;
	}
	return p;
}

/* A row's six byte counts, comma-separated (p: 6 x 28 bytes of room). */
static inline __attribute__((always_inline)) char *put_values(rctx_t *x, char *p, const gmt_curve_row_t *r,
								 int json)
{
	p = put_opt(x, p, r->has_alloc, r->allocated, json);
	*p++ = ',';
	p = put_opt(x, p, r->has_res, r->reserved, json);
	*p++ = ',';
	p = put_bytes(x, p, r->outside);
	*p++ = ',';
	p = put_opt(x, p, r->has_used, r->used, json);
	*p++ = ',';
	p = put_bytes(x, p, r->held);
	*p++ = ',';
	return put_bytes(x, p, r->live);
}

static int csv_row(void *ctx, const gmt_curve_row_t *r)
{
	rctx_t *x = ctx;
	const char *name = NULL;
	size_t need = CSV_ROW_MAX;
	if (r->has_phase) {
		name = gmt_phases_string(x->ph, r->phase);
		name = name ? name : "(unnamed)";
		need += 2 * strlen(name) + 2;
	}
	if (x->len + need > x->cap && drain(x))
		return -EIO;
	char *p = x->buf + x->len, *b = p;
	if (x->pre_len && r->dev == x->pre_dev) {
		memcpy(p, x->pre_text, sizeof(x->pre_text));
		p += x->pre_len;
	} else {
		p = gmt_put_dec(p, x->trace);
		*p++ = ',';
		if (r->dev < 0)
			*p++ = '-';
		p = gmt_put_dec(p, (uint64_t)(r->dev < 0 ? -(int64_t)r->dev : r->dev));
		*p++ = ',';
		x->pre_len = (size_t)(p - b) <= sizeof(x->pre_text) ? (size_t)(p - b) : 0;
		x->pre_dev = r->dev;
		memcpy(x->pre_text, b, sizeof(x->pre_text));
	}
	p = put_ts(x, p, r->ts);
	*p++ = ',';
	p = put_time(x, p, (int64_t)(r->ts - x->first_ts));
	*p++ = ',';
	if (name && need <= x->cap) {
		p = put_str(p, name);
	} else if (name) {
		/* longer than the buffer holds */
		x->len = (size_t)(p - x->buf);
		if (drain(x))
			return -EIO;
		csv_str(x->f, name);
		p = x->buf;
	}
	*p++ = ',';
	p = put_values(x, p, r, 0);
	*p++ = '\n';
	x->len = (size_t)(p - x->buf);
	return 0;
}

/* ---- every row as CSV, written as the rows are made ----------------------- */

/* The text waits here until the trace has run (a second pass voids it),
 * up to TXT_MEM; the rows past it wait in the curves' own temporary file
 * (18 bytes a row, not 66: cheaper to write and read back than the text
 * itself) and are written after it. */
#define TXT_MEM (4u << 20)

struct gmt_curves_csv_stream {
	rctx_t x;                      /* x.buf: TXT_MEM bytes */
	int have_first;                /* x.first_ts is the one the rows used */
	int forced;                    /* ... given (gmt_curves_csv_stream_first) */
	int direct;                    /* the rows go to x.f as they are made */
	int keeps;                     /* ... which keeps them: taken back to
					  start by a second pass            */
	off_t start;
};

/* Takes a direct stream's file back to where its rows began. */
static int take_back(gmt_curves_csv_stream_t *w)
{
	if (!w->keeps)
		return 0;
	if (fflush(w->x.f) || ftruncate(fileno(w->x.f), w->start) || fseeko(w->x.f, w->start, SEEK_SET))
		return -EIO;
	return 0;
}

static int s_reset(void *ctx)
{
	gmt_curves_csv_stream_t *w = ctx;
	w->x.len = 0;
	w->have_first = w->forced;
	return w->direct ? take_back(w) : 0;
}

static int s_row(void *ctx, gmt_phases_t *ph, const gmt_curve_row_t *r)
{
	gmt_curves_csv_stream_t *w = ctx;
	size_t need = CSV_ROW_MAX;
	if (r->has_phase) {
		const char *name = gmt_phases_string(ph, r->phase);
		need += 2 * strlen(name ? name : "(unnamed)") + 2;
	}
	if (!w->direct && w->x.len + need > w->x.cap)
		return 1;              /* full: the rest go to the file */
	if (!w->have_first) {
		w->x.first_ts = gmt_phases_summary(ph)->first_ts;
		w->have_first = 1;
	}
	w->x.ph = ph;
	return csv_row(&w->x, r) ? -EIO : 0;
}

gmt_curves_csv_stream_t *gmt_curves_csv_stream_new(unsigned trace)
{
	gmt_curves_csv_stream_t *w = calloc(1, sizeof(*w));
	if (!w || !(w->x.buf = malloc(TXT_MEM))) {
		free(w);
		return NULL;
	}
	w->x.trace = trace;
	w->x.cap = TXT_MEM;
	return w;
}

void gmt_curves_csv_stream_sink(gmt_curves_csv_stream_t *w, gmt_curves_sink_t *sink)
{
	sink->ctx = w;
	sink->reset = s_reset;
	sink->row = s_row;
}

/* The rare case: the trace's first time moved back after rows were made
 * (an earlier LATE event): every row's time_s (its fourth field) again
 * from its ts_ns (the third), the rest as it is (a phase's quoted name
 * may hold a newline). */
static int refit(const char *in, size_t len, FILE *out, uint64_t first_ts)
{
	int field = 0, quoted = 0;
	uint64_t ts = 0;
	char num[48];
	for (size_t i = 0; i < len; i++) {
		char ch = in[i];
		if (field == 3) {             /* the old time_s: skipped */
			if (ch != ',')
				continue;
			char *e = put_seconds(num, (int64_t)(ts - first_ts));
			fwrite(num, 1, (size_t)(e - num), out);
			field++;
		} else if (ch == '"') {       /* ("" inside: out and in again) */
			quoted = !quoted;
		} else if (ch == ',' && !quoted) {
			field++;
		} else if (ch == '\n' && !quoted) {
			field = 0;
			ts = 0;
		} else if (field == 2 && ch >= '0' && ch <= '9') {
			ts = ts * 10 + (uint64_t)(ch - '0');
		}
		putc(ch, out);
	}
	return ferror(out) ? -EIO : 0;
}

int gmt_curves_csv_stream_direct(gmt_curves_csv_stream_t *w, FILE *f, int keeps)
{
	off_t at = 0;
	if (keeps) {
		/* where the rows begin: after what f holds (opened to append,
		 * its descriptor's offset may not say where that ends) */
		if (fflush(f))
			return -EIO;
		int fl = fcntl(fileno(f), F_GETFL);
		at = fl >= 0 && (fl & O_APPEND) ? lseek(fileno(f), 0, SEEK_END) : ftello(f);
		if (at < 0)
			return -errno;
	}
	w->direct = 1;
	w->keeps = keeps;
	w->start = at;
	w->x.f = f;
	return 0;
}

void gmt_curves_csv_stream_first(gmt_curves_csv_stream_t *w, uint64_t first_ts)
{
	w->x.first_ts = first_ts;
	w->have_first = w->forced = 1;
}

int gmt_curves_csv_stream_again(gmt_curves_csv_stream_t *w, gmt_phases_t *ph, uint64_t *first_ts)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	if (!w->direct || !w->keeps || !w->have_first || s->first_ts == w->x.first_ts)
		return 0;
	w->x.len = 0;
	if (take_back(w))
		return -EIO;
	*first_ts = s->first_ts;
	return 1;
}

int gmt_curves_csv_stream_write(gmt_curves_csv_stream_t *w, FILE *f, gmt_curves_t *c, gmt_phases_t *ph)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	int rc = 0;
	if (w->direct) {
		/* (a file that keeps nothing may have rows of a first time that
		 * moved: nobody reads them) */
		csv_flush(&w->x);
		return ferror(w->x.f) ? -EIO : 0;
	}
	if (w->have_first && s->first_ts != w->x.first_ts)
		rc = refit(w->x.buf, w->x.len, f, s->first_ts);
	else if (w->x.len && fwrite(w->x.buf, 1, w->x.len, f) != w->x.len)
		rc = -EIO;
	w->x.len = 0;
	/* the rows past the sink's, from the file */
	w->x.f = f;
	w->x.ph = ph;
	w->x.first_ts = s->first_ts;
	w->x.cap = CSV_BUF;
	int r = gmt_curves_each_row(c, csv_row, &w->x);
	csv_flush(&w->x);
	return rc ? rc : r;
}

void gmt_curves_csv_stream_free(gmt_curves_csv_stream_t *w)
{
	if (!w)
		return;
	free(w->x.buf);
	free(w);
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
	rctx_t x = { .f = f, .ph = ph, .first_ts = s->first_ts, .trace = trace, .buf = buf, .cap = CSV_BUF };
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

/* A row without a phase name: its array's text made here, as the CSV's
 * (the same digits as the writer's tokens: gmt_put_dec, gmt_put_scaled),
 * and given to the writer as one value: a token at a time was 40% of
 * curves --json. */
static int json_row_text(rctx_t *x, const gmt_curve_row_t *r)
{
	char b[CSV_ROW_MAX + 512], *p = b;
	const int64_t t = (int64_t)(r->ts - x->first_ts);
	if (t < 0 || t >= (1ll << 52))
		return 1;   /* (put_time's printf: the token way) */
	if (r->has_phase && (!x->jphase_set || x->jphase != r->phase)) {
		/* the name as the writer's tokens write it */
		const char *name = gmt_phases_string(x->ph, r->phase);
		free(x->jphase_text);
		x->jphase_text = NULL;
		x->jphase_len = 0;
		x->jphase_set = 0;
		FILE *f = open_memstream(&x->jphase_text, &x->jphase_len);
		if (!f)
			return 1;
		gmt_json_t j;
		gmt_json_init(&j, f);
		gmt_json_str(&j, name ? name : "(unnamed)");
		int bad = gmt_json_flush(&j);
		bad |= fclose(f);
		if (bad)
			return 1;
		x->jphase_set = 1;
		x->jphase = r->phase;
	}
	if (r->has_phase && x->jphase_len > sizeof(b) - CSV_ROW_MAX)
		return 1;
	*p++ = '[';
	if (r->dev < 0)
		*p++ = '-';
	p = gmt_put_dec(p, (uint64_t)(r->dev < 0 ? -(int64_t)r->dev : r->dev));
	*p++ = ',';
	p = put_ts(x, p, r->ts);
	*p++ = ',';
	p = put_time(x, p, t);
	*p++ = ',';
	if (r->has_phase) {
		memcpy(p, x->jphase_text, x->jphase_len);
		p += x->jphase_len;
	} else {
		memcpy(p, "null", 4);
		p += 4;
	}
	*p++ = ',';
	p = put_values(x, p, r, 1);
	*p++ = ']';
	gmt_json_newline(x->j);
	gmt_json_raw(x->j, b, (size_t)(p - b));
	return 0;
}

static int json_row(void *ctx, const gmt_curve_row_t *r)
{
	rctx_t *x = ctx;
	gmt_json_t *j = x->j;
	if (!json_row_text(x, r))
		return 0;
	gmt_json_newline(j);
	gmt_json_arr_begin(j);
	gmt_json_i64(j, r->dev);
	gmt_json_u64(j, r->ts);
	gmt_json_scaled(j, (int64_t)(r->ts - x->first_ts), 9);
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
	free(x.jphase_text);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	return rc;
}
