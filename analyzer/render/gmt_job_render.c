/*
 * gmt_job_render.c - several processes of one job (model/gmt_job_model.h)
 * as the last section of `summary`, `phases` and `oom` (text) and their
 * "job" member (JSON); phases and oom add the matched phase occurrences
 * and the failures on shared devices.
 * Only formats; docs/analyzer.md "Several processes".
 */
#include <inttypes.h>
#include <stdio.h>

#include "model/gmt_job_model.h"
#include "render/gmt_render.h"

static void uuid_of(char *u, size_t len, const gmt_rm_device_t *d)
{
	int n = 0;
	for (int i = 0; i < 16; i++)
		n += snprintf(u + n, len - (size_t)n, "%02x%s", d->uuid[i],
			      i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
}

static double since_t0(const gmt_rm_device_t *d, uint64_t ts)
{
	return (double)(int64_t)(ts - d->t0) / 1e9;
}

static void t_who(FILE *f, const gmt_job_proc_t *p)
{
	fprintf(f, "pid %" PRIu64, p->pid);
	if (p->rank || p->local_rank) {
		fprintf(f, " (rank ");
		gmt_text_str(f, p->rank ? p->rank : "unset");
		fprintf(f, ", local rank ");
		gmt_text_str(f, p->local_rank ? p->local_rank : "unset");
		fputc(')', f);
	}
}

static const char *opt_name(const char *n)
{
	return n ? n : "";
}

/* "pid P (rank R, local rank L)" of a device's member k */
static void t_member(FILE *f, const gmt_job_model_t *m, const gmt_rm_device_t *dv, size_t k)
{
	t_who(f, &m->procs[dv->members[k].trace]);
}

static void t_phases(FILE *f, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	char b[64], c[64];
	fprintf(f, "\nPhase occurrences across the processes of each shared physical device (matched by\n"
		"name and number; window: the earliest begin to the latest end of theirs): %zu\n", m->n_phases);
	for (size_t i = 0; i < m->n_phases; i++) {
		const gmt_job_phase_t *g = &m->phases[i];
		const gmt_rm_device_t *dv = &rm->devices[g->dev];
		fprintf(f, "  %s \"", dv->id);
		gmt_text_str(f, opt_name(g->name));
		fprintf(f, "\" #%" PRIu64 " (%s): %+.9f s to %+.9f s after the device's first event, %zu of %zu "
			"processes\n", g->k, g->k == 1 ? "cold" : "warm", since_t0(dv, g->from), since_t0(dv, g->to),
			g->n_present, dv->n_members);
		if (g->peak.found)
			fprintf(f, "    coinciding peak of what they took from it together: %s at %+.9f s\n",
				gmt_fmt_bytes(b, sizeof(b), g->peak.held), since_t0(dv, g->peak.ts));
		else
			fprintf(f, "    no process took a byte from it in the window\n");
		for (size_t k = 0; k < dv->n_members; k++) {
			fprintf(f, "      ");
			t_member(f, m, dv, k);
			fprintf(f, ": %s then", gmt_fmt_bytes(b, sizeof(b), g->at[k]));
			if (g->present[k])
				fprintf(f, "; the most it took in its own occurrence %s\n", gmt_fmt_bytes(c, sizeof(c), g->own[k]));
			else
				fprintf(f, "; no such occurrence\n");
		}
		fprintf(f, "    sum of the own maxima: %s (a BOUND: reached at no instant unless they coincide)\n",
			gmt_fmt_bytes(b, sizeof(b), g->own_sum));
	}
}

static void t_fails(FILE *f, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	char b[64];
	fprintf(f, "\nFailures on shared physical devices: what every process had taken from the device at\n"
		"the failure's instant: %zu\n", m->n_fails);
	for (size_t i = 0; i < m->n_fails; i++) {
		const gmt_job_fail_t *x = &m->fails[i];
		fprintf(f, "  failure %zu of ", x->in.index + 1);
		t_who(f, &m->procs[x->in.trace]);
		fprintf(f, " (%s, %" PRIu64 " B requested%s)", x->in.source, x->in.request,
			x->in.recovered ? ", recovered" : "");
		if (!x->found) {
			fprintf(f, ": its device %d is not among the grouped devices\n", x->in.ordinal);
			continue;
		}
		const gmt_rm_device_t *dv = &rm->devices[x->dev];
		fprintf(f, " on %s at %+.9f s after the device's first event\n", dv->id, since_t0(dv, x->in.ts));
		fprintf(f, "    all %zu processes together had taken %s\n", dv->n_members,
			gmt_fmt_bytes(b, sizeof(b), x->held_all));
		for (size_t k = 0; k < dv->n_members; k++) {
			fprintf(f, "      ");
			t_member(f, m, dv, k);
			fprintf(f, ": %s%s\n", gmt_fmt_bytes(b, sizeof(b), x->at[k]),
				k == x->member ? " (the failing process)" : "");
		}
	}
}

void gmt_job_text(FILE *f, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	char b[64], c[64], u[48];
	size_t same = 0;
	for (size_t i = 0; i < rm->n_traces; i++)
		same += rm->traces[i].same_as != 0;
	fprintf(f, "Processes of one job: %zu traces, grouped by host and physical device (UUID), their\n"
		"times merged on CLOCK_MONOTONIC (which one host shares)\n", rm->n_traces);
	if (same)
		fprintf(f, "  %zu of them record%s the same process as an earlier one (the same header): "
			"counted once\n", same, same == 1 ? "s" : "");
	for (size_t d = 0; d < rm->n_devices; d++) {
		const gmt_rm_device_t *dv = &rm->devices[d];
		fprintf(f, "\nPhysical device %s: ", dv->id);
		gmt_text_str(f, *dv->name ? dv->name : "(no device record)");
		fprintf(f, ", host ");
		gmt_text_str(f, dv->host);
		if (dv->uuid_known) {
			uuid_of(u, sizeof(u), dv);
			fprintf(f, ", uuid %s", u);
		} else {
			fprintf(f, ", no uuid (grouped by host, ordinal %d and name)", dv->ordinal);
		}
		fprintf(f, "; %zu process%s\n", dv->n_members, dv->n_members == 1 ? "" : "es");
		if (!dv->has_peak) {
			fprintf(f, "  no process took a byte from it\n");
		} else {
			fprintf(f, "  coinciding peak of what the processes took from it together: %s\n",
				gmt_fmt_bytes(b, sizeof(b), dv->peak.held));
			fprintf(f, "    at ts %" PRIu64 " ns, %+.9f s after the device's first event", dv->peak.ts,
				since_t0(dv, dv->peak.ts));
			if (dv->has_wall)
				fprintf(f, " (%s)", gmt_fmt_utc(c, sizeof(c), dv->wall_t0_ns + (dv->peak.ts - dv->t0)));
			fputc('\n', f);
		}
		for (size_t k = 0; k < dv->n_members; k++) {
			const gmt_rm_member_t *mb = &dv->members[k];
			fprintf(f, "    ");
			t_who(f, &m->procs[mb->trace]);
			if (dv->has_peak)
				fprintf(f, ": %s at that instant, %.2f%% of it;", gmt_fmt_bytes(b, sizeof(b), mb->at_peak),
					100.0 * m->share[d][k]);
			else
				fputc(':', f);
			fprintf(f, " its own peak %s\n", gmt_fmt_bytes(c, sizeof(c), mb->own_peak));
		}
		if (dv->n_members > 1)
			fprintf(f, "  sum of the processes' own peaks: %s (a BOUND: reached at no instant unless\n"
				"    the own peaks coincide)\n", gmt_fmt_bytes(b, sizeof(b), dv->own_peak_sum));
	}
	fprintf(f, "\nPer process (the skew across ranks): own peak = the most it took from one device\n");
	for (size_t i = 0; i < m->n_procs; i++) {
		const gmt_job_proc_t *p = &m->procs[i];
		fprintf(f, "  ");
		t_who(f, p);
		fprintf(f, ", devices");
		for (size_t k = 0; k < p->n_devs; k++)
			fprintf(f, " %s", rm->devices[p->devs[k]].id);
		if (!p->n_devs)
			fprintf(f, " none");
		if (rm->traces[p->trace].same_as) {
			fprintf(f, ": the same process as trace %zu, counted there\n", rm->traces[p->trace].same_as);
			continue;
		}
		if (!p->has_peak) {
			fprintf(f, ": took nothing\n");
			continue;
		}
		fprintf(f, ": own peak %s on %s at %+.9f s of its trace", gmt_fmt_bytes(b, sizeof(b), p->own_peak),
			rm->devices[p->peak_dev].id, p->own_peak_s);
		if (p->in_phase) {
			fprintf(f, ", in phase \"");
			gmt_text_str(f, p->phase ? p->phase : "");
			fprintf(f, "\" #%" PRIu64 "\n", p->phase_k);
		} else {
			fprintf(f, ", in no phase occurrence\n");
		}
	}
	if (m->has_skew) {
		const gmt_job_proc_t *hi = &m->procs[m->skew_max], *lo = &m->procs[m->skew_min];
		fprintf(f, "  largest own peak %s (", gmt_fmt_bytes(b, sizeof(b), hi->own_peak));
		t_who(f, hi);
		fprintf(f, "), smallest %s (", gmt_fmt_bytes(c, sizeof(c), lo->own_peak));
		t_who(f, lo);
		fprintf(f, "): spread %s\n", gmt_fmt_bytes(b, sizeof(b), m->skew_spread));
	}
	fprintf(f, "\nStray contexts (a process on a device it never took a byte from): %zu\n", m->n_strays);
	for (size_t i = 0; i < m->n_strays; i++) {
		const gmt_job_stray_t *s = &m->strays[i];
		fprintf(f, "  ");
		t_who(f, &m->procs[s->proc]);
		fprintf(f, " on %s (its device %d): a context, no allocation\n", rm->devices[s->dev].id,
			s->ordinal);
	}

	if (m->phases_built)
		t_phases(f, m);
	if (m->fails_built)
		t_fails(f, m);
}

static void j_who(gmt_json_t *j, const gmt_job_model_t *m, size_t proc)
{
	const gmt_job_proc_t *p = &m->procs[proc];
	gmt_json_kv_u64(j, "trace", p->trace);
	gmt_json_kv_u64(j, "pid", p->pid);
	gmt_json_kv_str(j, "rank", p->rank);
	gmt_json_kv_str(j, "local_rank", p->local_rank);
}

static void j_phases(gmt_json_t *j, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	gmt_json_kv_arr_begin(j, "phases");
	for (size_t i = 0; i < m->n_phases; i++) {
		const gmt_job_phase_t *g = &m->phases[i];
		const gmt_rm_device_t *dv = &rm->devices[g->dev];
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "device", dv->id);
		gmt_json_kv_str(j, "name", g->name);
		gmt_json_kv_u64(j, "occurrence", g->k);
		gmt_json_kv_u64(j, "from_ts_ns", g->from);
		gmt_json_kv_u64(j, "to_ts_ns", g->to);
		gmt_json_key(j, "coinciding_peak");
		if (g->peak.found) {
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "taken_bytes", g->peak.held);
			gmt_json_kv_u64(j, "ts_ns", g->peak.ts);
			gmt_json_kv_fixed(j, "since_device_first_event_s", since_t0(dv, g->peak.ts), 9);
			gmt_json_obj_end(j);
		} else {
			gmt_json_null(j);
		}
		gmt_json_kv_arr_begin(j, "members");
		for (size_t k = 0; k < dv->n_members; k++) {
			gmt_json_obj_begin(j);
			j_who(j, m, dv->members[k].trace);
			gmt_json_kv_u64(j, "taken_at_peak_bytes", g->at[k]);
			if (g->present[k])
				gmt_json_kv_u64(j, "own_max_taken_bytes", g->own[k]);
			else
				gmt_json_kv_null(j, "own_max_taken_bytes");
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_kv_u64(j, "own_max_sum_bytes", g->own_sum);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

static void j_fails(gmt_json_t *j, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	gmt_json_kv_arr_begin(j, "failures");
	for (size_t i = 0; i < m->n_fails; i++) {
		const gmt_job_fail_t *x = &m->fails[i];
		gmt_json_obj_begin(j);
		j_who(j, m, x->in.trace);
		gmt_json_kv_u64(j, "failure", x->in.index + 1);
		gmt_json_kv_str(j, "source", x->in.source);
		gmt_json_kv_u64(j, "requested_bytes", x->in.request);
		gmt_json_kv_bool(j, "recovered", x->in.recovered);
		gmt_json_kv_u64(j, "ts_ns", x->in.ts);
		gmt_json_kv_i64(j, "ordinal", x->in.ordinal);
		if (!x->found) {
			gmt_json_kv_null(j, "device");
			gmt_json_kv_null(j, "taken_by_all_bytes");
			gmt_json_kv_arr_begin(j, "members");
			gmt_json_arr_end(j);
			gmt_json_obj_end(j);
			continue;
		}
		const gmt_rm_device_t *dv = &rm->devices[x->dev];
		gmt_json_kv_str(j, "device", dv->id);
		gmt_json_kv_u64(j, "taken_by_all_bytes", x->held_all);
		gmt_json_kv_arr_begin(j, "members");
		for (size_t k = 0; k < dv->n_members; k++) {
			gmt_json_obj_begin(j);
			j_who(j, m, dv->members[k].trace);
			gmt_json_kv_u64(j, "taken_bytes", x->at[k]);
			gmt_json_kv_bool(j, "failing", k == x->member);
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

void gmt_job_json(gmt_json_t *j, const gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	char u[48], c[64];
	gmt_json_kv_obj_begin(j, "job");
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t d = 0; d < rm->n_devices; d++) {
		const gmt_rm_device_t *dv = &rm->devices[d];
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "id", dv->id);
		gmt_json_kv_str(j, "name", dv->name);
		gmt_json_kv_str(j, "host", dv->host);
		uuid_of(u, sizeof(u), dv);
		gmt_json_kv_str(j, "uuid", dv->uuid_known ? u : NULL);
		gmt_json_kv_i64(j, "ordinal", dv->ordinal);
		gmt_json_key(j, "peak");
		if (dv->has_peak) {
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "taken_bytes", dv->peak.held);
			gmt_json_kv_u64(j, "ts_ns", dv->peak.ts);
			gmt_json_kv_fixed(j, "since_device_first_event_s", since_t0(dv, dv->peak.ts), 9);
			gmt_json_kv_str(j, "utc", dv->has_wall ?
					gmt_fmt_utc(c, sizeof(c), dv->wall_t0_ns + (dv->peak.ts - dv->t0)) : NULL);
			gmt_json_obj_end(j);
		} else {
			gmt_json_null(j);
		}
		gmt_json_kv_u64(j, "own_peak_sum_bytes", dv->own_peak_sum);
		gmt_json_kv_arr_begin(j, "members");
		for (size_t k = 0; k < dv->n_members; k++) {
			const gmt_rm_member_t *mb = &dv->members[k];
			gmt_json_obj_begin(j);
			j_who(j, m, mb->trace);
			gmt_json_kv_i64(j, "ordinal", mb->ordinal);
			gmt_json_kv_u64(j, "taken_at_peak_bytes", mb->at_peak);
			gmt_json_kv_fixed(j, "share_of_peak", m->share[d][k], 6);
			gmt_json_kv_u64(j, "own_peak_bytes", mb->own_peak);
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "processes");
	for (size_t i = 0; i < m->n_procs; i++) {
		const gmt_job_proc_t *p = &m->procs[i];
		gmt_json_obj_begin(j);
		j_who(j, m, i);
		gmt_json_kv_str(j, "file", rm->traces[i].file);
		if (rm->traces[i].same_as)
			gmt_json_kv_u64(j, "same_process_as", rm->traces[i].same_as - 1);
		else
			gmt_json_kv_null(j, "same_process_as");
		gmt_json_kv_arr_begin(j, "devices");
		for (size_t k = 0; k < p->n_devs; k++)
			gmt_json_str(j, rm->devices[p->devs[k]].id);
		gmt_json_arr_end(j);
		gmt_json_key(j, "own_peak");
		if (p->has_peak) {
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "bytes", p->own_peak);
			gmt_json_kv_str(j, "device", rm->devices[p->peak_dev].id);
			gmt_json_kv_u64(j, "ts_ns", p->own_peak_ts);
			gmt_json_kv_fixed(j, "since_first_event_s", p->own_peak_s, 9);
			gmt_json_key(j, "phase");
			if (p->in_phase) {
				gmt_json_obj_begin(j);
				gmt_json_kv_str(j, "name", p->phase ? p->phase : "");
				gmt_json_kv_u64(j, "occurrence", p->phase_k);
				gmt_json_obj_end(j);
			} else {
				gmt_json_null(j);
			}
			gmt_json_obj_end(j);
		} else {
			gmt_json_null(j);
		}
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "skew");
	if (m->has_skew) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "largest_trace", m->skew_max);
		gmt_json_kv_u64(j, "smallest_trace", m->skew_min);
		gmt_json_kv_u64(j, "spread_bytes", m->skew_spread);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_kv_arr_begin(j, "stray_contexts");
	for (size_t i = 0; i < m->n_strays; i++) {
		const gmt_job_stray_t *s = &m->strays[i];
		gmt_json_obj_begin(j);
		j_who(j, m, s->proc);
		gmt_json_kv_str(j, "device", rm->devices[s->dev].id);
		gmt_json_kv_i64(j, "ordinal", s->ordinal);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	if (m->phases_built)
		j_phases(j, m);
	if (m->fails_built)
		j_fails(j, m);
	gmt_json_obj_end(j);
}
