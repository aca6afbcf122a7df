/*
 * gmt_curves_render.c - the curves' rows (engines/gmt_curves.h) as CSV or
 * as one JSON trace object (schemas/report.schema.json, "curves").
 */
#include <inttypes.h>
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
} rctx_t;

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

static void opt_u64(FILE *f, int has, uint64_t v, const char *none)
{
	if (has)
		fprintf(f, "%" PRIu64, v);
	else
		fputs(none, f);
}

static int csv_row(void *ctx, const gmt_curve_row_t *r)
{
	rctx_t *x = ctx;
	const char *name = r->has_phase ? gmt_phases_string(x->ph, r->phase) : NULL;
	fprintf(x->f, "%u,%d,%" PRIu64 ",%.9f,", x->trace, r->dev, r->ts,
		(double)(int64_t)(r->ts - x->first_ts) / 1e9);
	if (r->has_phase)
		csv_str(x->f, name ? name : "(unnamed)");
	fputc(',', x->f);
	opt_u64(x->f, r->has_alloc, r->allocated, "");
	fputc(',', x->f);
	opt_u64(x->f, r->has_res, r->reserved, "");
	fprintf(x->f, ",%" PRIu64 ",", r->outside);
	opt_u64(x->f, r->has_used, r->used, "");
	fprintf(x->f, ",%" PRIu64 "\n", r->held);
	return 0;
}

void gmt_curves_csv_header(FILE *f)
{
	fputs("trace,device,ts_ns,time_s,phase,allocated_bytes,reserved_bytes,outside_bytes,"
	      "device_used_bytes,held_bytes\n", f);
}

int gmt_curves_csv(FILE *f, gmt_curves_t *c, gmt_phases_t *ph, unsigned trace)
{
	const gmt_summary_t *s = gmt_phases_summary(ph);
	rctx_t x = { .f = f, .ph = ph, .first_ts = s->first_ts, .trace = trace };
	return gmt_curves_each_row(c, csv_row, &x);
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
