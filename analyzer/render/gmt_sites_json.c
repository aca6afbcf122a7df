/*
 * gmt_sites_json.c - the sites model (model/gmt_sites_model.h) as JSON
 * (schemas/report.schema.json, "sites_report").
 */
#include <inttypes.h>

#include "model/gmt_sites_model.h"
#include "render/gmt_render.h"

void gmt_render_frame_json(gmt_json_t *j, const gmt_frame_t *f)
{
	char b[32];
	snprintf(b, sizeof(b), "0x%" PRIx64, f->addr);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "addr", b);
	gmt_json_kv_str(j, "status", f->status);
	gmt_json_kv_str(j, "module", f->module);
	gmt_json_kv_u64(j, "offset", f->offset);
	gmt_json_kv_str(j, "function", f->function);
	gmt_json_kv_str(j, "file", f->file);
	gmt_json_kv_u64(j, "line", f->line);
	gmt_json_kv_bool(j, "inlined", f->inlined);
	gmt_json_kv_str(j, "label", f->label);
	gmt_json_obj_end(j);
}

/* "stack_id", "owner", "stack_owner", "frames" of a site or failure. */
static void j_stack(gmt_json_t *j, uint32_t id, const char *owner_key, const gmt_stack_view_t *st)
{
	gmt_json_kv_u64(j, "stack_id", id);
	gmt_json_kv_str(j, "owner", owner_key);
	gmt_json_kv_str(j, "stack_owner", st->owner_key);
	gmt_json_kv_arr_begin(j, "frames");
	for (size_t i = 0; i < st->n; i++)
		gmt_render_frame_json(j, &st->frames[i]);
	gmt_json_arr_end(j);
}

static void j_site(gmt_json_t *j, const gmt_site_t *s)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "bytes", s->bytes);
	gmt_json_kv_u64(j, "count", s->count);
	if (s->has_share)
		gmt_json_kv_double(j, "share", s->share);
	gmt_json_kv_arr_begin(j, "stack_ids");
	if (!s->n_ids)
		gmt_json_u64(j, s->stack);
	for (size_t i = 0; i < s->n_ids; i++)
		gmt_json_u64(j, s->ids[i]);
	gmt_json_arr_end(j);
	j_stack(j, s->stack, s->owner_key, s->st);
	gmt_json_obj_end(j);
}

static void j_fw_site(gmt_json_t *j, const gmt_site_t *s)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "bytes", s->bytes);
	gmt_json_kv_u64(j, "count", s->count);
	gmt_json_kv_double(j, "share", s->share);
	gmt_json_kv_u64(j, "stack_id", s->stack);
	gmt_json_kv_str(j, "stack_kind", s->st->kind_key);
	gmt_json_kv_arr_begin(j, "frames");
	for (size_t i = 0; i < s->st->n; i++) {
		const gmt_frame_t *f = &s->st->frames[i];
		if (f->text) {
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "text", f->text);
			gmt_json_obj_end(j);
		} else {
			gmt_render_frame_json(j, f);
		}
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

/* "ordinal", "peak_bytes", "peak_ts_ns", "live_sites_total", "live_sites". */
/* "since_first_event_s", "utc", "phase" of w (keys with a prefix). */
static void j_when(gmt_json_t *j, const gmt_sites_when_t *w, int whole_run, const char *pfx)
{
	char k[64], b[64];
	snprintf(k, sizeof(k), "%ssince_first_event_s", pfx);
	gmt_json_kv_fixed(j, k, w->since_s, 9);
	snprintf(k, sizeof(k), "%sutc", pfx);
	gmt_json_kv_str(j, k, w->has_utc ? gmt_fmt_utc(b, sizeof(b), w->utc_ns) : NULL);
	if (!whole_run)
		return;
	snprintf(k, sizeof(k), "%sphase", pfx);
	gmt_json_key(j, k);
	if (!w->phase.in_phase) {
		gmt_json_null(j);
		return;
	}
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "name", w->phase.name);
	gmt_json_kv_u64(j, "occurrence", w->phase.k);
	gmt_json_kv_u64(j, "begin_ts_ns", w->phase.begin_ts);
	gmt_json_kv_fixed(j, "begin_since_first_event_s", w->phase_begin_s, 9);
	gmt_json_obj_end(j);
}

static void j_dev_head(gmt_json_t *j, const gmt_sites_dev_t *d, int fw, int whole_run)
{
	gmt_json_kv_i64(j, "ordinal", d->ordinal);
	gmt_json_kv_u64(j, "peak_bytes", d->peak);
	gmt_json_kv_u64(j, "peak_ts_ns", d->peak_ts);
	j_when(j, &d->when, whole_run, "peak_");
	gmt_json_kv_u64(j, "live_sites_total", d->live.n);
	gmt_json_kv_arr_begin(j, "live_sites");
	for (size_t i = 0; i < d->live.n_listed; i++) {
		if (fw)
			j_fw_site(j, &d->live.sites[i]);
		else
			j_site(j, &d->live.sites[i]);
	}
	gmt_json_arr_end(j);
}

/* A JSON array of framework devices (framework_sites, framework_devices). */
static void j_fw_devs(gmt_json_t *j, const gmt_sites_dev_t *devs, size_t n, int whole_run)
{
	gmt_json_arr_begin(j);
	for (size_t k = 0; k < n; k++) {
		gmt_json_obj_begin(j);
		j_dev_head(j, &devs[k], 1, whole_run);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

void gmt_sites_json(gmt_json_t *j, const gmt_sites_model_t *m)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", m->file);
	gmt_json_kv_str(j, "status", m->status_key);
	gmt_report_gaps_json_read(j, &m->gaps, &m->res);
	gmt_missing_json_res(j, NULL, &m->res);
	gmt_json_kv_bool(j, "phases_looked_up", m->phases_looked_up);
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t k = 0; k < m->n_devs; k++) {
		const gmt_sites_dev_t *d = &m->devs[k];
		gmt_json_obj_begin(j);
		j_dev_head(j, d, 0, 1);
		gmt_json_kv_arr_begin(j, "most_allocated");
		for (size_t i = 0; i < d->top.n_listed; i++)
			j_site(j, &d->top.sites[i]);
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	if (m->framework) {
		gmt_json_key(j, "framework_sites");
		j_fw_devs(j, m->fwdevs, m->n_fwdevs, 1);
	}
	if (m->phase) {
		gmt_json_kv_obj_begin(j, "phase");
		gmt_json_kv_str(j, "name", m->phase);
		gmt_json_kv_u64(j, "occurrences_total", m->occ_total);
		gmt_json_kv_arr_begin(j, "occurrences");
		for (size_t i = 0; i < m->n_occs; i++) {
			const gmt_sites_occ_t *oc = &m->occs[i];
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "occurrence", oc->k);
			gmt_json_kv_u64(j, "begin_ts_ns", oc->begin_ts);
			gmt_json_kv_u64(j, "end_ts_ns", oc->end_ts);
			gmt_json_kv_bool(j, "ended", oc->ended);
			gmt_json_kv_arr_begin(j, "devices");
			for (size_t k = 0; k < oc->n_devs; k++) {
				gmt_json_obj_begin(j);
				j_dev_head(j, &oc->devs[k], 0, 0);
				gmt_json_obj_end(j);
			}
			gmt_json_arr_end(j);
			if (m->framework) {
				gmt_json_key(j, "framework_devices");
				j_fw_devs(j, oc->fwdevs, oc->n_fwdevs, 0);
			}
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_kv_u64(j, "failed_allocations_total", m->fails_total);
	gmt_json_kv_arr_begin(j, "failed_allocations");
	for (size_t i = 0; i < m->n_fails; i++) {
		const gmt_sites_fail_t *f = &m->fails[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "ts_ns", f->ts);
		j_when(j, &f->when, 1, "");
		gmt_json_kv_i64(j, "device", f->device);
		gmt_json_kv_u64(j, "bytes", f->size);
		gmt_json_kv_str(j, "kind", f->kind_key);
		gmt_json_kv_str(j, "api", f->api_key);
		gmt_json_kv_u64(j, "result", f->result);
		gmt_json_kv_str(j, "result_name", f->result_name);
		j_stack(j, f->stack, f->owner_key, f->st);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

void gmt_sites_json_end(gmt_json_t *j, const gmt_sites_totals_t *t)
{
	gmt_json_kv_obj_begin(j, "symbolisation");
	gmt_json_kv_bool(j, "enabled", t->symbols);
	gmt_json_kv_u64(j, "addresses", t->addresses);
	gmt_json_kv_u64(j, "files", t->files);
	gmt_json_kv_fixed(j, "seconds", t->seconds, 6);
	gmt_json_obj_end(j);
}
