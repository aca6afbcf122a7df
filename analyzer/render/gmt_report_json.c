/*
 * gmt_report_json.c - `report --json`: the report model
 * (model/gmt_report_model.h) as members of the JSON document, "traces" and
 * "devices" (schemas/report.schema.json, the report of command "report").
 * The page's tables show these numbers; the tests compare them.
 */
#include <stdio.h>

#include "model/gmt_report_model.h"
#include "render/gmt_render.h"

static void kv_bytes_or_null(gmt_json_t *j, const char *key, int known, uint64_t v)
{
	if (known)
		gmt_json_kv_u64(j, key, v);
	else
		gmt_json_kv_null(j, key);
}

static void trace_json(gmt_json_t *j, const gmt_rm_trace_t *t)
{
	const gmt_summary_t *s = t->s;
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", t->file);
	gmt_json_kv_str(j, "status", t->status_key);
	gmt_missing_json_res(j, NULL, &t->res);
	if (t->res.status != GMT_DECODE_OK)
		gmt_json_kv_str(j, "message", t->res.message);
	gmt_report_gaps_json_read(j, &s->gaps, &t->res);
	gmt_json_kv_u64(j, "pid", s->pid);
	gmt_json_kv_str(j, "exe", s->exe ? s->exe : "");
	gmt_json_kv_str(j, "host", s->host ? s->host : "");
	gmt_json_kv_u64(j, "events", s->events);
	gmt_json_kv_u64(j, "side_events", s->side_events);
	gmt_json_kv_u64(j, "instants", t->instants);
	gmt_json_kv_u64(j, "syncs", t->syncs);
	gmt_json_kv_obj_begin(j, "unseen");
	gmt_json_kv_u64(j, "dropped_events", s->drops_total);
	gmt_json_kv_u64(j, "late_events", s->late_events);
	gmt_json_kv_u64(j, "entry_points_untraced", t->entry_points_untraced);
	gmt_json_kv_u64(j, "entry_points_identified", t->entry_points_identified);
	gmt_json_kv_u64(j, "unmatched_frees", s->anom.unmatched_frees);
	gmt_json_kv_u64(j, "devices_left_out", t->devices_left_out);
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
}

static void member_json(gmt_json_t *j, const gmt_rm_member_t *mb)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "trace", mb->trace);
	gmt_json_kv_i64(j, "ordinal", mb->ordinal);
	gmt_json_kv_u64(j, "instants", mb->rows);
	gmt_json_kv_u64(j, "own_peak_taken_bytes", mb->own_peak);
	if (mb->own_peak)
		gmt_json_kv_u64(j, "own_peak_ts_ns", mb->own_peak_ts);
	else
		gmt_json_kv_null(j, "own_peak_ts_ns");
	gmt_json_kv_u64(j, "taken_at_peak_bytes", mb->at_peak);
	gmt_json_kv_u64(j, "driver_peak_bytes", mb->dev ? mb->dev->peak.total : 0);
	gmt_json_kv_u64(j, "framework_events_lost", mb->fw_lost);
	gmt_json_kv_u64(j, "syncs", mb->syncs);
	gmt_json_obj_end(j);
}

static void peak_json(gmt_json_t *j, const gmt_rm_device_t *d)
{
	if (!d->has_peak) {
		gmt_json_kv_null(j, "peak");
		return;
	}
	const gmt_rm_instant_t *p = &d->peak;
	gmt_json_kv_obj_begin(j, "peak");
	gmt_json_kv_u64(j, "ts_ns", p->ts);
	gmt_json_kv_u64(j, "t_ns", p->ts - d->t0);
	gmt_json_kv_u64(j, "taken_bytes", p->held);
	gmt_json_kv_obj_begin(j, "parts");
	for (unsigned s = 0; s < GMT_RM_STACKED; s++)
		if (s != GMT_RM_REST)
			kv_bytes_or_null(j, gmt_rm_series_key(s), p->known[s], p->v[s]);
	gmt_json_obj_end(j);
	kv_bytes_or_null(j, "allocated_bytes", p->has_allocated, p->allocated);
	kv_bytes_or_null(j, "reserved_bytes", p->has_reserved, p->reserved);
	kv_bytes_or_null(j, "device_used_bytes", p->known[GMT_RM_USED], p->v[GMT_RM_USED]);
	if (p->known[GMT_RM_USED])
		gmt_json_kv_i64(j, "untraced_estimate_bytes", p->untraced);
	else
		gmt_json_kv_null(j, "untraced_estimate_bytes");
	gmt_json_obj_end(j);
}

static void device_json(gmt_json_t *j, const gmt_report_model_t *m, const gmt_rm_device_t *d)
{
	(void)m;
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "id", d->id);
	gmt_json_kv_str(j, "name", d->name);
	gmt_json_kv_str(j, "host", d->host);
	if (d->uuid_known) {
		char u[40];
		int n = 0;
		for (int i = 0; i < 16; i++)
			n += snprintf(u + n, sizeof(u) - (size_t)n, "%02x%s", d->uuid[i],
				      i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
		gmt_json_kv_str(j, "uuid", u);
	} else {
		gmt_json_kv_null(j, "uuid");
	}
	gmt_json_kv_i64(j, "ordinal", d->ordinal);
	kv_bytes_or_null(j, "total_bytes", d->total_bytes != 0, d->total_bytes);
	gmt_json_kv_u64(j, "t0_ns", d->t0);
	gmt_json_kv_u64(j, "t_end_ns", d->t_end);
	if (d->has_wall)
		gmt_json_kv_u64(j, "wall_t0_ns", d->wall_t0_ns);
	else
		gmt_json_kv_null(j, "wall_t0_ns");
	gmt_json_kv_u64(j, "instants", d->instants);
	gmt_json_kv_u64(j, "syncs", d->syncs);
	gmt_json_kv_arr_begin(j, "series");
	for (unsigned s = 0; s < GMT_RM_SERIES; s++)
		if (d->series_used[s])
			gmt_json_str(j, gmt_rm_series_key(s));
	gmt_json_arr_end(j);
	peak_json(j, d);
	if (d->has_peak)
		gmt_json_kv_u64(j, "own_peak_sum_bytes", d->own_peak_sum);
	else
		gmt_json_kv_null(j, "own_peak_sum_bytes");
	gmt_json_kv_arr_begin(j, "members");
	for (size_t k = 0; k < d->n_members; k++)
		member_json(j, &d->members[k]);
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "phases");
	for (size_t i = 0; i < d->n_phases; i++) {
		const gmt_rm_phase_t *p = &d->phases[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "member", p->member);
		if (p->name)
			gmt_json_kv_str(j, "name", p->name);
		else
			gmt_json_kv_null(j, "name");
		gmt_json_kv_u64(j, "name_index", p->name_index);
		gmt_json_kv_u64(j, "occurrence", p->k);
		gmt_json_kv_bool(j, "cold", p->k == 1);
		gmt_json_kv_u64(j, "begin_ts_ns", p->begin_ts);
		gmt_json_kv_u64(j, "end_ts_ns", p->end_ts);
		gmt_json_kv_bool(j, "ended", p->ended);
		gmt_json_kv_bool(j, "failed", p->failed);
		kv_bytes_or_null(j, "max_allocated_bytes", p->has_allocated, p->max_allocated);
		kv_bytes_or_null(j, "max_reserved_bytes", p->has_reserved, p->max_reserved);
		gmt_json_kv_u64(j, "max_taken_bytes", p->max_held);
		gmt_json_kv_u64(j, "max_outside_bytes", p->max_outside);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "failures");
	for (size_t i = 0; i < d->n_fails; i++) {
		const gmt_rm_fail_t *x = &d->fails[i];
		const gmt_fail_summary_t *f = x->f;
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "member", x->member);
		gmt_json_kv_u64(j, "index", x->index);
		gmt_json_kv_u64(j, "ts_ns", f->ts);
		gmt_json_kv_u64(j, "requested_bytes", f->size);
		gmt_json_kv_str(j, "kind", gmt_dkind_key(f->kind));
		gmt_json_kv_str(j, "api", gmt_api_name(f->api));
		gmt_json_kv_str(j, "owner", gmt_downer_key(gmt_downer(f->owner)));
		gmt_json_kv_u64(j, "result", f->result);
		if (x->result_name)
			gmt_json_kv_str(j, "result_name", x->result_name);
		else
			gmt_json_kv_null(j, "result_name");
		gmt_json_kv_u64(j, "live_bytes", f->live.total);
		kv_bytes_or_null(j, "meminfo_free_bytes", f->has_meminfo, f->meminfo_free);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

void gmt_report_model_json(gmt_json_t *j, const gmt_report_model_t *m)
{
	gmt_json_kv_arr_begin(j, "traces");
	for (size_t i = 0; i < m->n_traces; i++)
		trace_json(j, &m->traces[i]);
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t i = 0; i < m->n_devices; i++)
		device_json(j, m, &m->devices[i]);
	gmt_json_arr_end(j);
}
