/*
 * gmt_oom_render.c - the oom model (model/gmt_oom_model.h) as text and as
 * JSON (schemas/report.schema.json, "oom_report"). Formats only.
 */
#include <inttypes.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "model/gmt_oom_model.h"
#include "render/gmt_render.h"

/* ---- text -------------------------------------------------------------- */

static void t_site(FILE *o, const gmt_site_t *s, size_t rank, const char *of)
{
	char b[64];
	fprintf(o, "    #%zu  %s  %" PRIu64 " %s", rank, gmt_fmt_bytes(b, sizeof(b), s->bytes), s->count,
		s->count == 1 ? "block" : "blocks");
	if (s->has_share)
		fprintf(o, "  %.2f%% of %s", s->percent, of);
	if (s->owner_key && s->st && s->st->kind == GMT_STACK_NATIVE)
		fprintf(o, "  owner %s (stack: %s)", s->owner_key, s->st->owner_key);
	fputc('\n', o);
	if (!s->st || !s->st->recorded) {
		fprintf(o, "          (no stack recorded)\n");
		return;
	}
	for (size_t i = 0; i < s->st->n; i++)
		gmt_render_frame_text(o, &s->st->frames[i]);
}

static void t_sites(FILE *o, const gmt_site_list_t *l, const char *of)
{
	for (size_t i = 0; i < l->n_listed; i++)
		t_site(o, &l->sites[i], i + 1, of);
	if (l->more)
		fprintf(o, "    ... %zu more\n", l->not_listed);
}

static void t_split(FILE *o, const uint64_t *v, size_t n, const char *(*key)(unsigned))
{
	char b[64];
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		if (!v[i])
			continue;
		fprintf(o, "%s%s %s", first ? "" : ", ", key((unsigned)i), gmt_fmt_bytes(b, sizeof(b), v[i]));
		first = 0;
	}
	if (first)
		fputs("nothing", o);
}

static const char *kind_key(unsigned k)
{
	return gmt_dkind_key(k);
}

static const char *owner_key(unsigned o)
{
	return gmt_downer_key(o);
}

static void t_failure(FILE *o, const gmt_oom_model_t *m, const gmt_oom_failure_t *f, size_t k)
{
	char b[64], c[64], u[64];
	fprintf(o, "\nOut-of-memory failure %zu of %" PRIu64 ": %s, %s\n", k, m->failures_total,
		f->source[0] == 'd' ? "a driver allocation" : "the framework's (no driver failure)",
		f->recovered ? "RECOVERED: a later attempt succeeded" :
		f->gave_up ? "NOT recovered: the framework gave up" : "NOT recovered");
	fprintf(o, "  request      %s on device %d", gmt_fmt_bytes(b, sizeof(b), f->request), f->device);
	if (f->device_name && *f->device_name) {
		fputs(" (", o);
		gmt_text_str(o, f->device_name);
		fputc(')', o);
	}
	if (f->api_key)
		fprintf(o, ", %s, kind %s, owner %s, result %u (%s)", f->api_key, f->kind_key, f->owner_key,
			f->result, f->result_name ? f->result_name : "?");
	fprintf(o, ", stream 0x%" PRIx64 ", thread %u", f->stream, f->thread);
	if (f->thread_name) {
		fprintf(o, " (tid %" PRIu64 " ", f->tid);
		gmt_text_str(o, f->thread_name);
		fputc(')', o);
	}
	fputc('\n', o);
	if (f->has_fw_oom)
		fprintf(o, "  framework    gave up on %s with %s free as it saw them (FW_OOM)\n",
			gmt_fmt_bytes(b, sizeof(b), f->fw_request), gmt_fmt_bytes(c, sizeof(c), f->fw_free));
	fprintf(o, "  when         +%.9f s", f->since_start_s);
	if (f->has_utc)
		fprintf(o, " (%s)", gmt_fmt_utc(u, sizeof(u), f->utc_ns));
	if (f->in_phase) {
		fputs(", in phase \"", o);
		gmt_text_str(o, f->phase ? f->phase : "?");
		fprintf(o, "\" #%" PRIu64 " (%s)", f->phase_k, f->temperature);
	} else {
		fputs(", in no phase", o);
	}
	fputc('\n', o);
	if (f->st && f->st->recorded) {
		fputs("  stack\n", o);
		for (size_t i = 0; i < f->st->n; i++)
			gmt_render_frame_text(o, &f->st->frames[i]);
	}

	fputs("  device at that instant\n", o);
	if (f->has_total)
		fprintf(o, "    total          %s (as the device reports it)\n", gmt_fmt_bytes(b, sizeof(b), f->total));
	if (f->has_free)
		fprintf(o, "    free           %s (the sample taken at the failure)\n",
			gmt_fmt_bytes(b, sizeof(b), f->free));
	else
		fputs("    free           unknown: no sample was taken at the failure\n", o);
	if (f->has_shortfall)
		fprintf(o, "    shortfall      %" PRId64 " B (request - free)%s\n", f->shortfall,
			f->shortfall <= 0 ? ": the request fitted in what was free (fragmentation, or a limit)" : "");
	fprintf(o, "    held by us     %s: by kind ", gmt_fmt_bytes(b, sizeof(b), f->held));
	t_split(o, f->held_kind, GMT_DKINDS, kind_key);
	fputs("; by owner ", o);
	t_split(o, f->held_owner, GMT_DOWNERS, owner_key);
	fputc('\n', o);
	if (f->has_allocated || f->has_reserved) {
		fprintf(o, "    framework      allocated %s, reserved %s",
			f->has_allocated ? gmt_fmt_bytes(b, sizeof(b), f->allocated) : "unknown",
			f->has_reserved ? gmt_fmt_bytes(c, sizeof(c), f->reserved) : "unknown");
		if (f->has_cache)
			fprintf(o, ", reserved but unallocated (its cache) %s", gmt_fmt_bytes(u, sizeof(u), f->cache));
		fputc('\n', o);
		if (f->has_largest_free)
			fprintf(o, "    largest free   %s, the largest block free in the framework's segments%s\n",
				gmt_fmt_bytes(b, sizeof(b), f->largest_free),
				f->largest_below_request ? ", smaller than the request" : "");
	}
	fprintf(o, "    outside the framework %s: ", gmt_fmt_bytes(b, sizeof(b), f->outside));
	t_split(o, f->outside_owner, GMT_DOWNERS, owner_key);
	fputc('\n', o);
	if (f->has_graph_pool)
		fprintf(o, "    graph pool     %s reserved (latest sample)\n", gmt_fmt_bytes(b, sizeof(b), f->graph_pool));
	if (f->has_rest)
		fprintf(o, "    the rest       %" PRId64 " B = total - free - held: the context and other processes, an ESTIMATE from samples\n",
			f->rest);

	fprintf(o, "  who held it: driver-level blocks live then, by call site (%zu)\n", f->holders.n);
	t_sites(o, &f->holders, "held");
	if (f->fw_holders.n) {
		fprintf(o, "  the framework's own blocks then, by stack (%zu)\n", f->fw_holders.n);
		t_sites(o, &f->fw_holders, "allocated");
	}

	fputs("  what led to it\n", o);
	if (!f->n_attempts)
		fputs("    no driver-level attempt: the framework refused by itself (a limit of its own)\n", o);
	for (size_t i = 0; i < f->n_attempts; i++)
		fprintf(o, "    attempt %zu      +%.9f s  %s  %s\n", i + 1, f->attempts[i].since_start_s,
			gmt_fmt_bytes(b, sizeof(b), f->attempts[i].size), f->attempts[i].ok ? "succeeded" : "failed");
	for (size_t i = 0; i < f->n_releases; i++)
		fprintf(o, "    released       +%.9f s  %s (%s)\n", f->releases[i].since_start_s,
			gmt_fmt_bytes(b, sizeof(b), f->releases[i].bytes), f->releases[i].what);
	if (f->n_releases)
		fprintf(o, "    released in all %s between the attempts\n", gmt_fmt_bytes(b, sizeof(b), f->released_bytes));
	if (f->has_fw_retries)
		fprintf(o, "    the framework's own counts: %" PRIu64 " allocations retried after giving its cache back, %" PRIu64 " out-of-memory failures (FW_RETRIES)\n",
			f->fw_retries, f->fw_ooms);
	if (f->has_peak_before)
		fprintf(o, "    peak before    %s held: a partial peak before saturation, not the demand of a full run\n",
			gmt_fmt_bytes(b, sizeof(b), f->peak_before));
	if (f->lead_text) {
		fprintf(o, "  lead (phase \"");
		gmt_text_str(o, f->phase ? f->phase : "?");
		fprintf(o, "\", %s): %s", f->lead_key, f->lead_text);
		if (f->has_phase_start_held)
			fprintf(o, "; taken from the device %s at the phase's start, held by live allocations %s at the failure",
				gmt_fmt_bytes(b, sizeof(b), f->phase_start_held), gmt_fmt_bytes(c, sizeof(c), f->held));
		fputs(" (a lead, not a verdict)\n", o);
	}
}

static void t_end(FILE *o, const gmt_oom_model_t *m)
{
	if (!strcmp(m->end_how, "cut"))
		fputs("  the process ended: unknown, the trace has no END record (killed, e.g. by SIGKILL, or crashed); reported up to its last frame\n", o);
	else if (!strcmp(m->end_how, "exec"))
		fputs("  the process ended: it called exec (the new program writes its own trace)\n", o);
	else if (!strcmp(m->end_how, "signal"))
		fprintf(o, "  the process ended: killed by signal %d\n", m->end_value);
	else if (!*m->end_how)
		fputs("  the process ended: cleanly (the trace is older than format 1.4: how is not recorded)\n", o);
	else
		fprintf(o, "  the process ended: %s with status %d\n", m->end_how, m->end_value);
}

void gmt_oom_text(FILE *o, const gmt_oom_model_t *m)
{
	fprintf(o, "Trace ");
	gmt_text_str(o, m->file);
	fprintf(o, " (pid %" PRIu64 ", ppid %" PRIu64, m->pid, m->ppid);
	if (m->rank)
		fprintf(o, ", RANK %s", m->rank);
	if (m->local_rank)
		fprintf(o, ", LOCAL_RANK %s", m->local_rank);
	fputs(")\n", o);
	if (!m->failures_total) {
		fputs("  no out-of-memory failure\n", o);
		return;
	}
	fprintf(o, "  %" PRIu64 " out-of-memory failure%s, %" PRIu64 " recovered\n", m->failures_total,
		m->failures_total == 1 ? "" : "s", m->recovered_total);
	t_end(o, m);
	for (size_t i = 0; i < m->n_failures; i++)
		t_failure(o, m, &m->failures[i], i + 1);
	if (m->failures_more)
		fprintf(o, "\n... %" PRIu64 " more failures not listed\n", m->failures_not_listed);
}

/* ---- JSON -------------------------------------------------------------- */

static void j_split(gmt_json_t *j, const char *k, const uint64_t *v, size_t n, const char *(*key)(unsigned))
{
	gmt_json_kv_obj_begin(j, k);
	for (size_t i = 0; i < n; i++)
		gmt_json_kv_u64(j, key((unsigned)i), v[i]);
	gmt_json_obj_end(j);
}

static void j_stack(gmt_json_t *j, const gmt_stack_view_t *st)
{
	gmt_json_kv_str(j, "stack_kind", st->kind_key);
	gmt_json_kv_arr_begin(j, "frames");
	for (size_t i = 0; i < st->n; i++) {
		const gmt_frame_t *f = &st->frames[i];
		if (f->text) {
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "text", f->text);
			gmt_json_obj_end(j);
		} else {
			gmt_render_frame_json(j, f);
		}
	}
	gmt_json_arr_end(j);
}

static void j_sites(gmt_json_t *j, const char *k, const gmt_site_list_t *l)
{
	gmt_json_kv_u64(j, k[0] == 'h' ? "holders_total" : "framework_holders_total", l->n);
	gmt_json_kv_arr_begin(j, k);
	for (size_t i = 0; i < l->n_listed; i++) {
		const gmt_site_t *s = &l->sites[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "bytes", s->bytes);
		gmt_json_kv_u64(j, "count", s->count);
		if (s->has_share)
			gmt_json_kv_double(j, "share", s->share);
		else
			gmt_json_kv_null(j, "share");
		gmt_json_kv_u64(j, "stack_id", s->stack);
		gmt_json_kv_str(j, "owner", s->owner_key);
		gmt_json_kv_str(j, "stack_owner", s->st ? s->st->owner_key : NULL);
		if (s->st)
			j_stack(j, s->st);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
}

static void j_failure(gmt_json_t *j, const gmt_oom_failure_t *f)
{
	char u[64];
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "source", f->source);
	gmt_json_kv_bool(j, "recovered", f->recovered);
	if (f->recovered)
		gmt_json_kv_u64(j, "recovered_ts_ns", f->recovered_ts);
	else
		gmt_json_kv_null(j, "recovered_ts_ns");
	gmt_json_kv_bool(j, "gave_up", f->gave_up);
	if (f->has_fw_oom) {
		gmt_json_kv_obj_begin(j, "framework_oom");
		gmt_json_kv_u64(j, "request_bytes", f->fw_request);
		gmt_json_kv_u64(j, "free_bytes", f->fw_free);
		gmt_json_kv_u64(j, "ts_ns", f->fw_ts);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "framework_oom");
	}
	gmt_json_kv_u64(j, "ts_ns", f->ts);
	gmt_json_key(j, "since_first_event_s");
	gmt_json_fixed(j, f->since_start_s, 9);
	gmt_json_kv_str(j, "utc", f->has_utc ? gmt_fmt_utc(u, sizeof(u), f->utc_ns) : NULL);

	gmt_json_kv_obj_begin(j, "request");
	gmt_json_kv_u64(j, "bytes", f->request);
	gmt_json_kv_i64(j, "device", f->device);
	gmt_json_kv_u64(j, "stream", f->stream);
	gmt_json_kv_str(j, "kind", f->kind_key);
	gmt_json_kv_str(j, "api", f->api_key);
	gmt_json_kv_str(j, "owner", f->owner_key);
	if (f->api_key)
		gmt_json_kv_u64(j, "result", f->result);
	else
		gmt_json_kv_null(j, "result");
	gmt_json_kv_str(j, "result_name", f->result_name);
	gmt_json_kv_obj_begin(j, "thread");
	gmt_json_kv_u64(j, "index", f->thread);
	gmt_json_kv_u64(j, "tid", f->tid);
	gmt_json_kv_str(j, "name", f->thread_name);
	gmt_json_obj_end(j);
	gmt_json_kv_u64(j, "stack_id", f->stack);
	j_stack(j, f->st);
	gmt_json_obj_end(j);

	if (f->in_phase) {
		gmt_json_kv_obj_begin(j, "phase");
		gmt_json_kv_str(j, "name", f->phase);
		gmt_json_kv_u64(j, "occurrence", f->phase_k);
		gmt_json_kv_str(j, "temperature", f->temperature);
		gmt_json_kv_u64(j, "begin_ts_ns", f->phase_begin_ts);
		if (f->has_phase_start_held)
			gmt_json_kv_u64(j, "taken_at_start_bytes", f->phase_start_held);
		else
			gmt_json_kv_null(j, "taken_at_start_bytes");
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "phase");
	}

	gmt_json_kv_obj_begin(j, "device");
	gmt_json_kv_str(j, "name", f->device_name);
	if (f->has_total)
		gmt_json_kv_u64(j, "total_bytes", f->total);
	else
		gmt_json_kv_null(j, "total_bytes");
	if (f->has_free) {
		gmt_json_kv_u64(j, "free_bytes", f->free);
		gmt_json_kv_u64(j, "free_sample_ts_ns", f->free_ts);
	} else {
		gmt_json_kv_null(j, "free_bytes");
		gmt_json_kv_null(j, "free_sample_ts_ns");
	}
	gmt_json_kv_u64(j, "held_bytes", f->held);
	j_split(j, "held_by_kind", f->held_kind, GMT_DKINDS, kind_key);
	j_split(j, "held_by_owner", f->held_owner, GMT_DOWNERS, owner_key);
	gmt_json_kv_obj_begin(j, "framework");
#define OPT(k, has, v) do { if (has) gmt_json_kv_u64(j, k, v); else gmt_json_kv_null(j, k); } while (0)
	OPT("allocated_bytes", f->has_allocated, f->allocated);
	OPT("reserved_bytes", f->has_reserved, f->reserved);
	OPT("cache_bytes", f->has_cache, f->cache);
	OPT("largest_free_block_bytes", f->has_largest_free, f->largest_free);
	gmt_json_kv_bool(j, "largest_free_block_below_request", f->largest_below_request);
	gmt_json_obj_end(j);
	gmt_json_kv_u64(j, "outside_bytes", f->outside);
	j_split(j, "outside_by_owner", f->outside_owner, GMT_DOWNERS, owner_key);
	OPT("graph_pool_bytes", f->has_graph_pool, f->graph_pool);
	if (f->has_rest)
		gmt_json_kv_i64(j, "rest_estimate_bytes", f->rest);
	else
		gmt_json_kv_null(j, "rest_estimate_bytes");
	gmt_json_obj_end(j);
	if (f->has_shortfall)
		gmt_json_kv_i64(j, "shortfall_bytes", f->shortfall);
	else
		gmt_json_kv_null(j, "shortfall_bytes");

	j_sites(j, "holders", &f->holders);
	gmt_json_kv_u64(j, "framework_held_bytes", f->fw_held);
	j_sites(j, "framework_holders", &f->fw_holders);

	gmt_json_kv_arr_begin(j, "attempts");
	for (size_t i = 0; i < f->n_attempts; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "ts_ns", f->attempts[i].ts);
		gmt_json_kv_u64(j, "bytes", f->attempts[i].size);
		gmt_json_kv_bool(j, "ok", f->attempts[i].ok);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_arr_begin(j, "releases");
	for (size_t i = 0; i < f->n_releases; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "ts_ns", f->releases[i].ts);
		gmt_json_kv_u64(j, "bytes", f->releases[i].bytes);
		gmt_json_kv_str(j, "what", f->releases[i].what);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_kv_u64(j, "released_bytes", f->released_bytes);
	if (f->has_fw_retries) {
		gmt_json_kv_obj_begin(j, "framework_counts");
		gmt_json_kv_u64(j, "alloc_retries", f->fw_retries);
		gmt_json_kv_u64(j, "ooms", f->fw_ooms);
		gmt_json_kv_u64(j, "ts_ns", f->fw_retries_ts);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "framework_counts");
	}
	if (f->has_peak_before) {
		gmt_json_kv_obj_begin(j, "peak_before");
		gmt_json_kv_u64(j, "bytes", f->peak_before);
		gmt_json_kv_u64(j, "ts_ns", f->peak_before_ts);
		gmt_json_kv_str(j, "note", "a partial peak before saturation, not the demand of a full run");
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "peak_before");
	}
	if (f->lead_text) {
		gmt_json_kv_obj_begin(j, "lead");
		gmt_json_kv_str(j, "category", f->lead_key);
		gmt_json_kv_str(j, "text", f->lead_text);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "lead");
	}
#undef OPT
	gmt_json_obj_end(j);
}

void gmt_oom_json(gmt_json_t *j, const gmt_oom_model_t *m)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", m->file);
	gmt_json_kv_str(j, "status", m->status_key);
	gmt_report_gaps_json_read(j, &m->gaps, &m->res);
	gmt_missing_json_res(j, NULL, &m->res);
	gmt_json_kv_u64(j, "pid", m->pid);
	gmt_json_kv_u64(j, "ppid", m->ppid);
	gmt_json_kv_str(j, "rank", m->rank);
	gmt_json_kv_str(j, "local_rank", m->local_rank);
	gmt_json_kv_obj_begin(j, "process_end");
	gmt_json_kv_str(j, "how", m->end_how);
	gmt_json_kv_i64(j, "value", m->end_value);
	gmt_json_obj_end(j);
	gmt_json_kv_u64(j, "failures_total", m->failures_total);
	gmt_json_kv_u64(j, "recovered_total", m->recovered_total);
	gmt_json_kv_arr_begin(j, "failures");
	for (size_t i = 0; i < m->n_failures; i++)
		j_failure(j, &m->failures[i]);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}
