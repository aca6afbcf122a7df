/*
 * gmt_card_render.c - the sizing card (model/gmt_card_model.h) as text,
 * Markdown (to paste into a ticket) or JSON (schemas/report.schema.json,
 * card_report). The three parts keep their labels in every form:
 * COMPUTED (arithmetic on the options), OBSERVED (the trace, requested
 * view), ASSUMED (what neither covers). Bytes are exact; the computed part
 * shows GB (10^9) and GiB (2^30) side by side. docs/analyzer.md, "card".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "gmt_card.h"
#include "model/gmt_card_model.h"
#include "render/gmt_render.h"

static const char reserve_note[] = "a guess for activations, caches, workspaces and the CUDA context, "
				   "not a measurement";
static const char headroom_note[] = "only as good as the worst phase the run measured: inputs, batch, "
				    "context or concurrency beyond the tested dimensions need more";
static const char *const kv_names[6] = { "layers", "KV heads", "head dimension", "tokens",
					 "bytes per value", "concurrent sequences" };
static const char *const state_key[3] = { "tested", "differs", "not_recorded" };

static double since_s(const gmt_summary_t *s, uint64_t ts)
{
	return (double)gmt_summary_since_ns(s, ts) / 1e9;
}

/* A cell or a value of text: control characters as '?', and in Markdown
 * '|' escaped. */
static void put_str(FILE *f, const char *s, int md)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fputc('?', f);
		else if (md && (*p == '|' || *p == '\\' || *p == '`'))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
}

static const char *occ_status(const gmt_occ_t *o)
{
	return o->failed ? "failed" : o->ended ? "ok" : "unterminated";
}

/* "N B", "n/a" */
static const char *opt_bytes(char *b, size_t n, int has, uint64_t v)
{
	if (has)
		snprintf(b, n, "%" PRIu64 " B", v);
	else
		snprintf(b, n, "n/a");
	return b;
}

/* ---- text and Markdown ------------------------------------------------------ */

static void computed_lines(FILE *f, const gmt_card_estimate_t *e, int md)
{
	char u[160];
	const char *li = md ? "- " : "  ";
	if (md)
		fputs("## Computed (the estimate from the options: arithmetic, not a measurement)\n\n", f);
	else
		fputs("COMPUTED (the estimate from the options: arithmetic, not a measurement)\n", f);
	if (!e->has_weights && !e->has_kv) {
		fprintf(f, "%snone asked (--parameters N --bits B [--reserve-gib R], --kv L,H,D,T,B,S)\n", li);
	}
	if (e->has_weights) {
		gmt_card_units_text(e->weights, u, sizeof(u));
		fprintf(f, "%sweights: %s parameters x %s bits / 8 = %s\n", li, e->parameters, e->bits, u);
	}
	if (e->has_kv) {
		gmt_card_units_text(e->kv_cache, u, sizeof(u));
		fprintf(f, "%skv_cache: 2 (K and V)", li);
		for (int i = 0; i < 6; i++)
			fprintf(f, " x %s %s", e->kv[i], kv_names[i]);
		fprintf(f, " = %s\n", u);
	}
	if (e->has_reserve) {
		gmt_card_units_text(e->reserve, u, sizeof(u));
		fprintf(f, "%sreserve: %s GiB = %s (ASSUMPTION: %s)\n", li, e->reserve_gib, u, reserve_note);
	}
	if (e->has_envelope) {
		gmt_card_units_text(e->envelope, u, sizeof(u));
		fprintf(f, "%senvelope: weights%s + reserve = %s (ASSUMPTION: it adds the reserve)\n", li,
			e->has_kv ? " + kv_cache" : "", u);
	}
	fputc('\n', f);
}

void gmt_card_head_text(FILE *f, const gmt_card_estimate_t *e, int md)
{
	if (md)
		fputs("# Sizing card\n\nUnits: B = bytes, GB = 10^9 B, GiB = 2^30 B. Three parts, never mixed: "
		      "computed (arithmetic on the options), observed (measured from the trace), assumed "
		      "(what neither covers).\n\n", f);
	else
		fputs("Sizing card\n  units: B = bytes, GB = 10^9 B, GiB = 2^30 B\n  three parts, never mixed: "
		      "COMPUTED (arithmetic on the options), OBSERVED (measured from the trace), ASSUMED (what "
		      "neither covers)\n\n", f);
	computed_lines(f, e, md);
}

static void md_status(FILE *f, const gmt_summary_t *s)
{
	fputs("Trace: `", f);
	put_str(f, s->file, 1);
	fputs("`: ", f);
	switch (s->status) {
	case GMT_DECODE_OK:
		fputs(s->ended_cleanly ? "ended cleanly" : "cut (no END record: killed or still running)", f);
		break;
	case GMT_DECODE_DAMAGED:
		fprintf(f, "DAMAGED, read up to offset %" PRIu64 " of %" PRIu64 " bytes: ", s->bytes_ok, s->file_size);
		put_str(f, s->message, 1);
		break;
	default:
		fputs("not analysed: ", f);
		put_str(f, s->message, 1);
		break;
	}
	fputs("\n\n", f);
	if (s->missing)
		fprintf(f, "%" PRIu64 " events are missing (dropped): the observed numbers may be off either way (a lost allocation makes them low, a lost free high).\n\n",
			s->missing);
	char b[512];
	for (int i = 0; gmt_gap_line(&s->gaps, i, b, sizeof(b)); i++) {
		put_str(f, b, 1);
		fputs("\n\n", f);
	}
}

static void dev_head(FILE *f, const gmt_card_dev_t *cd, int md)
{
	char b[64], uu[48];
	fprintf(f, md ? "### Device %d: " : "  device %d: ", cd->ordinal);
	if (cd->d && cd->d->has_record) {
		gmt_fmt_uuid(uu, cd->d->uuid);
		put_str(f, cd->d->name, md);
		fprintf(f, ", total %s as the device reports it, uuid %s\n", gmt_fmt_bytes(b, sizeof(b), cd->d->total_bytes),
			uu);
	} else {
		fputs("no DEVICE record (name and total unknown)\n", f);
	}
	if (md)
		fputc('\n', f);
}

static void row_text(FILE *f, const gmt_summary_t *s, const gmt_card_row_t *r)
{
	const gmt_occ_t *o = r->occ;
	const gmt_pfig_t *x = r->fig;
	char a[3][48], b[64];
	fputs("    ", f);
	put_str(f, r->name, 0);
	fprintf(f, " #%" PRIu64 " (%s): %s", o->k, o->k == 1 ? "cold" : "warm", occ_status(o));
	if (o->failed)
		fprintf(f, " (out of memory: %" PRIu64 " B requested on device %d)", o->fail_size, o->fail_dev);
	fprintf(f, ", begin %+.9f s, %.9f s long\n", since_s(s, o->begin_ts), (double)o->duration_ns / 1e9);
	fprintf(f, "      allocated:   start %s, end %s, max %s\n",
		opt_bytes(a[0], 48, x->has_start && x->start.has_allocated, x->start.allocated),
		opt_bytes(a[1], 48, x->end.has_allocated, x->end.allocated),
		opt_bytes(a[2], 48, x->max_alloc.valid, x->max_alloc.v.allocated));
	fprintf(f, "      reserved:    start %s, end %s, max %s\n",
		opt_bytes(a[0], 48, x->has_start && x->start.has_reserved, x->start.reserved),
		opt_bytes(a[1], 48, x->end.has_reserved, x->end.reserved),
		opt_bytes(a[2], 48, x->max_res.valid, x->max_res.v.reserved));
	if (x->max_held.valid) {
		const gmt_lv_vals_t *v = &x->max_held.v;
		fprintf(f, "      taken peak:  %s at %+.9f s (one instant): reserved %s + outside %" PRIu64
			" B; allocated %s\n", gmt_fmt_bytes(b, sizeof(b), v->held), since_s(s, x->max_held.ts),
			opt_bytes(a[0], 48, v->has_reserved, v->reserved), v->outside,
			opt_bytes(a[1], 48, v->has_allocated, v->allocated));
	} else {
		fputs("      taken peak:  n/a\n", f);
	}
	fprintf(f, "      outside:     max %s (driver allocations outside the framework)\n",
		opt_bytes(a[0], 48, x->max_outside.valid, x->max_outside.v.outside));
	fprintf(f, "      device used: start %s, end %s (cuMemGetInfo samples)\n",
		opt_bytes(a[0], 48, x->has_start && x->start.has_used, x->start.used),
		opt_bytes(a[1], 48, x->end.has_used, x->end.used));
}

static void row_md(FILE *f, const gmt_card_row_t *r)
{
	const gmt_occ_t *o = r->occ;
	const gmt_pfig_t *x = r->fig;
	char c[11][48];
	fputs("| ", f);
	put_str(f, r->name, 1);
	fprintf(f, " | %" PRIu64 " | %s", o->k, occ_status(o));
	if (o->failed)
		fprintf(f, " (%" PRIu64 " B requested)", o->fail_size);
	const gmt_lv_vals_t *v = &x->max_held.v;
	fprintf(f, " | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		opt_bytes(c[0], 48, x->has_start && x->start.has_allocated, x->start.allocated),
		opt_bytes(c[1], 48, x->end.has_allocated, x->end.allocated),
		opt_bytes(c[2], 48, x->max_alloc.valid, x->max_alloc.v.allocated),
		opt_bytes(c[3], 48, x->has_start && x->start.has_reserved, x->start.reserved),
		opt_bytes(c[4], 48, x->end.has_reserved, x->end.reserved),
		opt_bytes(c[5], 48, x->max_res.valid, x->max_res.v.reserved),
		opt_bytes(c[6], 48, x->max_held.valid, v->held),
		opt_bytes(c[7], 48, x->max_held.valid, v->outside),
		opt_bytes(c[8], 48, x->max_outside.valid, x->max_outside.v.outside),
		opt_bytes(c[9], 48, x->has_start && x->start.has_used, x->start.used),
		opt_bytes(c[10], 48, x->end.has_used, x->end.used));
}

static void dims_lines(FILE *f, const gmt_card_trace_t *t, int md)
{
	const char *li = md ? "- " : "    ";
	fputs(md ? "Tested dimensions the job recorded:" : "  tested dimensions the job recorded:", f);
	if (!t->env.n_dims)
		fputs(" none (gpumemtrace.meta(batch=8), gpumemtrace_meta(), gpumemtrace --meta KEY=VALUE)", f);
	fputc('\n', f);
	if (md && t->env.n_dims)
		fputc('\n', f);
	for (size_t i = 0; i < t->env.n_dims; i++) {
		const gmt_env_item_t *d = &t->env.dims[i];
		fputs(li, f);
		put_str(f, d->key, md);
		fputs(" = ", f);
		put_str(f, d->value, md);
		fprintf(f, " (%s)\n", !strcmp(d->source, "launcher") ? "the launcher's --meta" : "recorded by the program");
	}
	fputc('\n', f);
}

static void observed_text(FILE *f, const gmt_card_trace_t *t, int md)
{
	const gmt_summary_t *s = gmt_phases_summary(t->ph);
	if (md)
		fputs("## Observed (measured from the trace; requested view; bytes)\n\n", f);
	else
		fputs("OBSERVED (measured from the trace; requested view; bytes)\n", f);
	dims_lines(f, t, md);
	if (!t->n_devs)
		fputs(md ? "No device values in the trace.\n\n" : "  no device values in the trace\n\n", f);
	for (size_t i = 0; i < t->n_devs; i++) {
		const gmt_card_dev_t *cd = &t->devs[i];
		dev_head(f, cd, md);
		if (!cd->n_rows)
			fputs(md ? "No phase occurrence on this device (mark phases: NVTX ranges or gpumemtrace.phase).\n"
				 : "    no phase occurrence on this device (mark phases: NVTX ranges or gpumemtrace.phase)\n", f);
		if (md && cd->n_rows)
			fputs("| phase | # | status | allocated start | allocated end | allocated max | reserved start "
			      "| reserved end | reserved max | taken peak | outside at taken peak | outside max "
			      "| device used start | device used end |\n"
			      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
		for (size_t k = 0; k < cd->n_rows; k++) {
			if (md)
				row_md(f, &cd->rows[k]);
			else
				row_text(f, s, &cd->rows[k]);
		}
		if (cd->not_listed)
			fprintf(f, md ? "\n%" PRIu64 " more occurrences not listed (phases --max-occurrences N).\n"
				      : "    (%" PRIu64 " more occurrences not listed; phases --max-occurrences N)\n",
				cd->not_listed);
		if (md) {
			fputs("\ntaken peak: reserved + outside at one instant (the coinciding peak of what the process took from the device); outside: driver "
			      "allocations outside the framework; device used: cuMemGetInfo samples (they count the "
			      "context and other processes too).\n", f);
		}
		fputc('\n', f);
	}
}

static void assumed_text(FILE *f, const gmt_card_trace_t *t, const gmt_card_estimate_t *e, int md)
{
	const char *li = md ? "- " : "  ";
	if (md)
		fputs("## Assumed (what neither the estimate nor the trace covers)\n\n", f);
	else
		fputs("ASSUMED (what neither the estimate nor the trace covers)\n", f);
	if (e->has_reserve)
		fprintf(f, "%sreserve: %s GiB = %" PRIu64 " B, %s\n", li, e->reserve_gib, e->reserve, reserve_note);
	for (size_t i = 0; i < t->n_inputs; i++) {
		const gmt_card_input_t *in = &t->inputs[i];
		fprintf(f, "%s%s %s: ", li, in->key, in->value);
		if (in->state == GMT_CARD_TESTED) {
			fputs("tested (the run recorded the same)\n", f);
		} else if (in->state == GMT_CARD_DIFFERS) {
			fputs("NOT TESTED: the run recorded ", f);
			put_str(f, in->dim->value, md);
			fputc('\n', f);
		} else {
			fputs("not tested (the run recorded no such dimension)\n", f);
		}
	}
	for (size_t i = 0; i < t->n_devs; i++) {
		const gmt_card_dev_t *cd = &t->devs[i];
		fprintf(f, "%sheadroom, device %d: ", li, cd->ordinal);
		if (!cd->worst) {
			fputs("unknown (no phase occurrence with a taken peak)\n", f);
			continue;
		}
		if (!cd->has_headroom) {
			fputs("unknown (the trace has no total for the device)\n", f);
			continue;
		}
		fputs("the worst observed phase, ", f);
		put_str(f, cd->worst->name, md);
		fprintf(f, " #%" PRIu64 ", took %" PRIu64 " B at its peak: %" PRIu64 " B - %" PRIu64 " B = %" PRId64
			" B", cd->worst->occ->k, cd->worst->fig->max_held.v.held, cd->d->total_bytes,
			cd->worst->fig->max_held.v.held, cd->headroom);
		if (cd->headroom >= 0)
			fprintf(f, " (%.2f GiB)", (double)cd->headroom / 1073741824.0);
		fputs(" left", f);
		if (cd->has_headroom_used)
			fprintf(f, "; against the largest device used sampled in that phase (it counts the context "
				"and other processes), %" PRIu64 " B: %" PRId64 " B left", cd->used, cd->headroom_used);
		fprintf(f, "; %s\n", headroom_note);
	}
	fputc('\n', f);
}

/* "meta KEY" of a dimension the program recorded (listed as such). */
static int program_dim(const gmt_card_trace_t *t, const char *key)
{
	if (strncmp(key, "meta ", 5))
		return 0;
	for (size_t i = 0; i < t->env.n_dims; i++)
		if (!strcmp(t->env.dims[i].source, "program") && !strcmp(t->env.dims[i].key, key + 5))
			return 1;
	return 0;
}

static void env_text(FILE *f, const gmt_card_trace_t *t, int md)
{
	size_t modules = 0;
	const gmt_summary_t *s = gmt_phases_summary(t->ph);
	if (md) {
		fputs("## Environment\n\n| key | value |\n|---|---|\n", f);
		fprintf(f, "| trace | `");
		put_str(f, t->file, 1);
		fprintf(f, "` |\n| pid | %" PRIu64 " |\n| program | ", s->pid);
		put_str(f, s->exe, 1);
		fputs(" |\n", f);
	} else {
		fputs("ENVIRONMENT\n  trace: ", f);
		put_str(f, t->file, 0);
		fprintf(f, "\n  pid: %" PRIu64 "\n  program: ", s->pid);
		put_str(f, s->exe, 0);
		fputc('\n', f);
	}
	for (size_t i = 0; i < t->env.n; i++) {
		const gmt_env_item_t *it = &t->env.items[i];
		if (!strncmp(it->key, "module ", 7)) {
			modules++;
			continue;
		}
		if (!strcmp(it->key, "env GPUMEMTRACE_META") || program_dim(t, it->key))
			continue;   /* the tested dimensions above */
		fputs(md ? "| " : "  ", f);
		put_str(f, it->key, md);
		fputs(md ? " | " : ": ", f);
		put_str(f, it->value, md);
		fputs(md ? " |\n" : "\n", f);
	}
	fprintf(f, md ? "| modules | %zu loaded (`diff` compares them; `--json` lists them) |\n"
		      : "  modules: %zu loaded (diff compares them; --json lists them)\n", modules);
}

void gmt_card_trace_text(FILE *f, const gmt_card_trace_t *t, const gmt_card_estimate_t *e, int md)
{
	const gmt_summary_t *s = gmt_phases_summary(t->ph);
	if (md)
		md_status(f, s);
	else if (!gmt_report_text_status(f, s))
		return;
	else
		fputc('\n', f);
	if (md && s->status != GMT_DECODE_OK && s->status != GMT_DECODE_DAMAGED)
		return;
	observed_text(f, t, md);
	assumed_text(f, t, e, md);
	env_text(f, t, md);
}

/* ---- JSON ----------------------------------------------------------------------- */

static void j_amount(gmt_json_t *j, const char *k, uint64_t bytes)
{
	gmt_json_kv_obj_begin(j, k);
	gmt_json_kv_u64(j, "bytes", bytes);
	gmt_json_kv_double(j, "GB", (double)bytes / 1e9);
	gmt_json_kv_double(j, "GiB", (double)bytes / 1073741824.0);
	gmt_json_obj_end(j);
}

void gmt_card_computed_json(gmt_json_t *j, const gmt_card_estimate_t *e)
{
	gmt_json_kv_obj_begin(j, "units");
	gmt_json_kv_u64(j, "GB", 1000000000ull);
	gmt_json_kv_u64(j, "GiB", 1073741824ull);
	gmt_json_obj_end(j);
	gmt_json_kv_obj_begin(j, "computed");
	if (e->has_weights) {
		gmt_json_kv_obj_begin(j, "weights");
		gmt_json_kv_str(j, "parameters", e->parameters);
		gmt_json_kv_str(j, "bits", e->bits);
		j_amount(j, "amount", e->weights);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "weights");
	}
	if (e->has_kv) {
		static const char *const keys[6] = { "layers", "kv_heads", "head_dim", "tokens", "bytes_per_value",
						     "sequences" };
		gmt_json_kv_obj_begin(j, "kv_cache");
		for (int i = 0; i < 6; i++)
			gmt_json_kv_str(j, keys[i], e->kv[i]);
		j_amount(j, "amount", e->kv_cache);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "kv_cache");
	}
	if (e->has_reserve) {
		gmt_json_kv_obj_begin(j, "reserve");
		gmt_json_kv_str(j, "gib", e->reserve_gib);
		j_amount(j, "amount", e->reserve);
		gmt_json_kv_bool(j, "assumption", 1);
		gmt_json_kv_str(j, "note", reserve_note);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "reserve");
	}
	if (e->has_envelope) {
		gmt_json_kv_obj_begin(j, "envelope");
		gmt_json_kv_arr_begin(j, "parts");
		gmt_json_str(j, "weights");
		if (e->has_kv)
			gmt_json_str(j, "kv_cache");
		gmt_json_str(j, "reserve");
		gmt_json_arr_end(j);
		j_amount(j, "amount", e->envelope);
		gmt_json_kv_bool(j, "assumption", 1);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "envelope");
	}
	gmt_json_obj_end(j);
}

static void j_opt(gmt_json_t *j, const char *k, int has, uint64_t v)
{
	if (has)
		gmt_json_kv_u64(j, k, v);
	else
		gmt_json_kv_null(j, k);
}

static void j_row(gmt_json_t *j, const gmt_summary_t *s, const gmt_card_row_t *r)
{
	const gmt_occ_t *o = r->occ;
	const gmt_pfig_t *x = r->fig;
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "name", r->name);
	gmt_json_kv_u64(j, "occurrence", o->k);
	gmt_json_kv_str(j, "temperature", o->k == 1 ? "cold" : "warm");
	gmt_json_kv_str(j, "status", occ_status(o));
	if (o->failed) {
		gmt_json_kv_obj_begin(j, "failure");
		gmt_json_kv_i64(j, "device", o->fail_dev);
		gmt_json_kv_u64(j, "requested_bytes", o->fail_size);
		gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, o->fail_ts), 9);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "failure");
	}
	gmt_json_kv_fixed(j, "begin_s", since_s(s, o->begin_ts), 9);
	gmt_json_kv_u64(j, "duration_ns", o->duration_ns);
	gmt_json_kv_obj_begin(j, "allocated");
	j_opt(j, "start_bytes", x->has_start && x->start.has_allocated, x->start.allocated);
	j_opt(j, "end_bytes", x->end.has_allocated, x->end.allocated);
	j_opt(j, "max_bytes", x->max_alloc.valid, x->max_alloc.v.allocated);
	gmt_json_obj_end(j);
	gmt_json_kv_obj_begin(j, "reserved");
	j_opt(j, "start_bytes", x->has_start && x->start.has_reserved, x->start.reserved);
	j_opt(j, "end_bytes", x->end.has_reserved, x->end.reserved);
	j_opt(j, "max_bytes", x->max_res.valid, x->max_res.v.reserved);
	gmt_json_obj_end(j);
	if (x->max_held.valid) {
		const gmt_lv_vals_t *v = &x->max_held.v;
		gmt_json_kv_obj_begin(j, "taken_peak");
		gmt_json_kv_u64(j, "bytes", v->held);
		gmt_json_kv_u64(j, "ts_ns", x->max_held.ts);
		gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, x->max_held.ts), 9);
		j_opt(j, "allocated_bytes", v->has_allocated, v->allocated);
		j_opt(j, "reserved_bytes", v->has_reserved, v->reserved);
		gmt_json_kv_u64(j, "outside_bytes", v->outside);
		j_opt(j, "device_used_bytes", v->has_used, v->used);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "taken_peak");
	}
	j_opt(j, "max_outside_bytes", x->max_outside.valid, x->max_outside.v.outside);
	gmt_json_kv_obj_begin(j, "device_used");
	j_opt(j, "start_bytes", x->has_start && x->start.has_used, x->start.used);
	j_opt(j, "end_bytes", x->end.has_used, x->end.used);
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
}

static void j_items(gmt_json_t *j, const char *k, const gmt_env_item_t *it, size_t n)
{
	gmt_json_kv_arr_begin(j, k);
	for (size_t i = 0; i < n; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "key", it[i].key);
		gmt_json_kv_str(j, "value", it[i].value);
		if (it[i].source)
			gmt_json_kv_str(j, "source", it[i].source);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

void gmt_card_trace_json(gmt_json_t *j, const gmt_card_trace_t *t, const gmt_card_estimate_t *e)
{
	const gmt_summary_t *s = gmt_phases_summary(t->ph);
	char uu[48];
	gmt_json_newline(j);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", s->file);
	gmt_json_kv_str(j, "status", gmt_status_key(s));
	if (s->status != GMT_DECODE_OK)
		gmt_json_kv_str(j, "message", s->message);
	else
		gmt_json_kv_null(j, "message");
	if (s->status != GMT_DECODE_OK && s->status != GMT_DECODE_DAMAGED) {
		gmt_json_obj_end(j);
		return;
	}
	gmt_missing_json(j, s->missing, s->missing_timed, s->missing_first_ts, s->missing_last_ts);
	gmt_report_gaps_json(j, &s->gaps);
	gmt_json_kv_obj_begin(j, "observed");
	gmt_json_kv_str(j, "view", "requested");
	j_items(j, "tested_dimensions", t->env.dims, t->env.n_dims);
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t i = 0; i < t->n_devs; i++) {
		const gmt_card_dev_t *cd = &t->devs[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", cd->ordinal);
		if (cd->d && cd->d->has_record) {
			gmt_fmt_uuid(uu, cd->d->uuid);
			gmt_json_kv_str(j, "name", cd->d->name);
			gmt_json_kv_str(j, "uuid", uu);
			gmt_json_kv_u64(j, "total_bytes", cd->d->total_bytes);
		} else {
			gmt_json_kv_null(j, "name");
			gmt_json_kv_null(j, "uuid");
			gmt_json_kv_null(j, "total_bytes");
		}
		gmt_json_kv_arr_begin(j, "phases");
		for (size_t k = 0; k < cd->n_rows; k++)
			j_row(j, s, &cd->rows[k]);
		gmt_json_arr_end(j);
		gmt_json_kv_u64(j, "occurrences_not_listed", cd->not_listed);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "assumed");
	if (e->has_reserve) {
		gmt_json_kv_obj_begin(j, "reserve");
		gmt_json_kv_u64(j, "bytes", e->reserve);
		gmt_json_kv_str(j, "note", reserve_note);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "reserve");
	}
	gmt_json_kv_arr_begin(j, "inputs");
	for (size_t i = 0; i < t->n_inputs; i++) {
		const gmt_card_input_t *in = &t->inputs[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "key", in->key);
		gmt_json_kv_str(j, "value", in->value);
		gmt_json_kv_str(j, "state", state_key[in->state]);
		gmt_json_kv_str(j, "recorded_value", in->dim ? in->dim->value : NULL);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "headroom");
	for (size_t i = 0; i < t->n_devs; i++) {
		const gmt_card_dev_t *cd = &t->devs[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", cd->ordinal);
		if (cd->worst) {
			gmt_json_kv_obj_begin(j, "worst_phase");
			gmt_json_kv_str(j, "name", cd->worst->name);
			gmt_json_kv_u64(j, "occurrence", cd->worst->occ->k);
			gmt_json_kv_u64(j, "taken_peak_bytes", cd->worst->fig->max_held.v.held);
			gmt_json_obj_end(j);
		} else {
			gmt_json_kv_null(j, "worst_phase");
		}
		if (cd->has_headroom) {
			gmt_json_kv_u64(j, "total_bytes", cd->d->total_bytes);
			gmt_json_kv_i64(j, "headroom_bytes", cd->headroom);
		} else {
			gmt_json_kv_null(j, "total_bytes");
			gmt_json_kv_null(j, "headroom_bytes");
		}
		if (cd->has_headroom_used) {
			gmt_json_kv_u64(j, "device_used_bytes", cd->used);
			gmt_json_kv_i64(j, "headroom_device_used_bytes", cd->headroom_used);
		} else {
			gmt_json_kv_null(j, "device_used_bytes");
			gmt_json_kv_null(j, "headroom_device_used_bytes");
		}
		gmt_json_kv_str(j, "note", headroom_note);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "environment");
	gmt_json_kv_u64(j, "pid", s->pid);
	gmt_json_kv_str(j, "program", s->exe);
	j_items(j, "items", t->env.items, t->env.n);
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
}
