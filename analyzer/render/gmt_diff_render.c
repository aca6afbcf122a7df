/*
 * gmt_diff_render.c - the diff model (model/gmt_diff_model.h) as text and
 * as JSON (schemas/report.schema.json, "diff_report"). Formats only.
 */
#include <inttypes.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "model/gmt_diff_model.h"
#include "render/gmt_render.h"

/* ---- text -------------------------------------------------------------- */

static void t_num(FILE *o, const char *what, const gmt_dnum_t *x)
{
	char a[64], b[64];
	fprintf(o, "  %-34s %22s %22s %+16" PRId64 " B %7s%%%s\n", what,
		x->has_a ? gmt_fmt_bytes(a, sizeof(a), x->a) : "-",
		x->has_b ? gmt_fmt_bytes(b, sizeof(b), x->b) : "-", x->delta, x->percent,
		x->exceeds ? "  ABOVE --fail-above" : "");
}

static void t_site(FILE *o, const gmt_dsite_t *s)
{
	char a[64], b[64];
	fprintf(o, "  %+16" PRId64 " B  %7s%%  A %s  B %s%s\n", s->bytes.delta, s->bytes.percent,
		s->bytes.has_a ? gmt_fmt_bytes(a, sizeof(a), s->bytes.a) : "-",
		s->bytes.has_b ? gmt_fmt_bytes(b, sizeof(b), s->bytes.b) : "-",
		s->unsymbolised ? "  (frames without a function: module+offset)" : "");
	const char *k = s->key;
	while (*k) {
		const char *nl = strchr(k, '\n');
		size_t n = nl ? (size_t)(nl - k) : strlen(k);
		fprintf(o, "          %.*s\n", (int)n, k);
		k += n + (nl != NULL);
	}
}

void gmt_diff_text(FILE *o, const gmt_diff_model_t *m)
{
	char name[96];
	fputs("Comparison\n  A ", o);
	gmt_text_str(o, m->file_a);
	fputs("\n  B ", o);
	gmt_text_str(o, m->file_b);
	fprintf(o, "\n  columns: A, B, B - A, percent of A\n");

	fprintf(o, "\nEnvironment (%zu of %zu differ, marked *)\n", m->n_env_differ, m->n_env);
	for (size_t i = 0; i < m->n_env; i++) {
		const gmt_denv_t *e = &m->env[i];
		fprintf(o, "%s ", e->differs ? "*" : " ");
		gmt_text_esc(o, e->key);
		fputs(": ", o);
		gmt_text_esc(o, e->a ? e->a : "(absent)");
		if (e->differs) {
			fputs("  ->  ", o);
			gmt_text_esc(o, e->b ? e->b : "(absent)");
		}
		fputc('\n', o);
	}
	for (size_t i = 0; i < m->n_devs; i++) {
		const gmt_ddev_t *d = &m->devs[i];
		fprintf(o, "\nDevice %d\n", d->ordinal);
		t_num(o, "context (used before the first alloc)", &d->context);
		t_num(o, "device used at the end", &d->end_used);
		t_num(o, "peak held by live allocations", &d->peak);
	}
	if (m->n_phases)
		fputs("\nPhase occurrences: coinciding peaks (requested view), matched by name and number\n", o);
	for (size_t i = 0; i < m->n_phases; i++) {
		const gmt_dphase_t *p = &m->phases[i];
		fputs("  \"", o);
		gmt_text_str(o, p->name);
		fprintf(o, "\" #%" PRIu64 " (%s), device %d\n", p->k, p->k == 1 ? "cold" : "warm", p->device);
		t_num(o, "  taken (reserved + outside)", &p->held);
		t_num(o, "  allocated at that instant", &p->allocated);
		t_num(o, "  reserved at that instant", &p->reserved);
		t_num(o, "  outside at that instant", &p->outside);
		for (int w = 0; w < GMT_DOWNERS; w++) {
			if (!p->outside_owner[w].a && !p->outside_owner[w].b)
				continue;
			snprintf(name, sizeof(name), "    of it %s", gmt_downer_key((unsigned)w));
			t_num(o, name, &p->outside_owner[w]);
		}
	}
	for (size_t i = 0; i < m->n_at_peak; i++) {
		const gmt_dsites_t *s = &m->at_peak[i];
		fprintf(o, "\nCall sites at each run's peak, device %d, growth largest first\n", s->device);
		for (size_t k = 0; k < s->n; k++)
			t_site(o, &s->rows[k]);
	}
	for (size_t i = 0; i < m->n_allocated; i++) {
		const gmt_dsites_t *s = &m->allocated[i];
		fprintf(o, "\nCall sites by bytes allocated over the run, device %d, growth largest first\n", s->device);
		for (size_t k = 0; k < s->n; k++)
			t_site(o, &s->rows[k]);
	}
	if (m->fail_above)
		fprintf(o, "\n--fail-above %s%%: %zu peak%s grew by more than that%s\n", m->fail_above, m->n_exceeded,
			m->n_exceeded == 1 ? "" : "s", m->n_exceeded ? " (exit status 3)" : "");
}

/* ---- JSON -------------------------------------------------------------- */

static void j_num(gmt_json_t *j, const char *k, const gmt_dnum_t *x)
{
	gmt_json_kv_obj_begin(j, k);
	if (x->has_a)
		gmt_json_kv_u64(j, "a", x->a);
	else
		gmt_json_kv_null(j, "a");
	if (x->has_b)
		gmt_json_kv_u64(j, "b", x->b);
	else
		gmt_json_kv_null(j, "b");
	gmt_json_kv_i64(j, "delta", x->delta);
	gmt_json_kv_str(j, "percent", x->percent);
	if (x->checked)
		gmt_json_kv_bool(j, "above_fail_above", x->exceeds);
	gmt_json_obj_end(j);
}

static void j_sites(gmt_json_t *j, const char *k, const gmt_dsites_t *v, size_t n)
{
	gmt_json_kv_arr_begin(j, k);
	for (size_t i = 0; i < n; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "device", v[i].device);
		gmt_json_kv_arr_begin(j, "sites");
		for (size_t q = 0; q < v[i].n; q++) {
			const gmt_dsite_t *s = &v[i].rows[q];
			gmt_json_obj_begin(j);
			gmt_json_kv_arr_begin(j, "frames");
			const char *f = s->key;
			while (*f) {
				const char *nl = strchr(f, '\n');
				size_t len = nl ? (size_t)(nl - f) : strlen(f);
				gmt_json_strn(j, f, len);
				f += len + (nl != NULL);
			}
			gmt_json_arr_end(j);
			gmt_json_kv_bool(j, "unsymbolised", s->unsymbolised);
			j_num(j, "bytes", &s->bytes);
			j_num(j, "count", &s->count);
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

void gmt_diff_json(gmt_json_t *j, const gmt_diff_model_t *m)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "a", m->file_a);
	gmt_json_kv_str(j, "b", m->file_b);
	gmt_json_kv_obj_begin(j, "completeness");
	gmt_report_gaps_json_as(j, "a", &m->gaps_a);
	gmt_report_gaps_json_as(j, "b", &m->gaps_b);
	gmt_json_obj_end(j);
	gmt_missing_json_res(j, "missing_events_a", &m->res_a);
	gmt_missing_json_res(j, "missing_events_b", &m->res_b);
	gmt_json_kv_arr_begin(j, "environment");
	for (size_t i = 0; i < m->n_env; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "key", m->env[i].key);
		gmt_json_kv_str(j, "a", m->env[i].a);
		gmt_json_kv_str(j, "b", m->env[i].b);
		gmt_json_kv_bool(j, "differs", m->env[i].differs);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t i = 0; i < m->n_devs; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", m->devs[i].ordinal);
		j_num(j, "context_bytes", &m->devs[i].context);
		j_num(j, "end_used_bytes", &m->devs[i].end_used);
		j_num(j, "peak_bytes", &m->devs[i].peak);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "phases");
	for (size_t i = 0; i < m->n_phases; i++) {
		const gmt_dphase_t *p = &m->phases[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "name", p->name);
		gmt_json_kv_u64(j, "occurrence", p->k);
		gmt_json_kv_str(j, "temperature", p->k == 1 ? "cold" : "warm");
		gmt_json_kv_i64(j, "device", p->device);
		j_num(j, "taken_bytes", &p->held);
		j_num(j, "allocated_bytes", &p->allocated);
		j_num(j, "reserved_bytes", &p->reserved);
		j_num(j, "outside_bytes", &p->outside);
		gmt_json_kv_obj_begin(j, "outside_by_owner");
		for (int w = 0; w < GMT_DOWNERS; w++)
			j_num(j, gmt_downer_key((unsigned)w), &p->outside_owner[w]);
		gmt_json_obj_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	j_sites(j, "sites_at_peak", m->at_peak, m->n_at_peak);
	j_sites(j, "sites_allocated", m->allocated, m->n_allocated);
	gmt_json_kv_u64(j, "above_fail_above", m->n_exceeded);
	gmt_json_obj_end(j);
}
