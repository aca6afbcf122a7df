/*
 * gmt_summary_render.c - renders the summary's model (gmt_summary_t, filled
 * by the replay) as a human report or as JSON (schemas/report.schema.json).
 * Bytes are exact integers everywhere; the text adds one conversion with
 * its binary unit named (gmt_fmt_bytes).
 */
#include <inttypes.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "model/gmt_phase_at.h"
#include "model/gmt_results.h"
#include "render/gmt_render.h"

/* Seconds from the first event to ts (negative for a late event before it). */
static double since_s(const gmt_summary_t *s, uint64_t ts)
{
	return (double)gmt_summary_since_ns(s, ts) / 1e9;
}

static const char *status_key(const gmt_summary_t *s)
{
	switch (s->status) {
	case GMT_DECODE_OK: return s->ended_cleanly ? "clean" : "cut";
	case GMT_DECODE_DAMAGED: return "damaged";
	case GMT_DECODE_REFUSED: return "refused";
	case GMT_DECODE_IO: return "unreadable";
	default: return "stopped";
	}
}

static int dev_reported(const gmt_dev_summary_t *d)
{
	return d && (d->has_record || d->used || d->meminfo_samples);
}

/* ---- text -------------------------------------------------------------- */

static void t_when(FILE *f, const gmt_summary_t *s, uint64_t ts)
{
	char b[64];
	fprintf(f, "ts %" PRIu64 " ns, %+.9f s after the first event", ts, since_s(s, ts));
	if (s->has_header)
		fprintf(f, " (%s)", gmt_fmt_utc(b, sizeof(b), gmt_summary_realtime_ns(s, ts)));
}

/* The phase occurrence of a peak or failure (nothing when the trace has no
 * phases). */
static void t_phase(FILE *f, const gmt_summary_t *s, const gmt_summary_phases_t *sp,
		    const gmt_phase_at_t *a)
{
	if (!sp || !sp->ran)
		return;
	if (!a->in_phase) {
		fprintf(f, "    in no phase occurrence\n");
		return;
	}
	fprintf(f, "    in phase \"");
	gmt_text_str(f, a->name);
	fprintf(f, "\" occurrence %" PRIu64 " (%s), begun at %+.9f s\n", a->k, a->k == 1 ? "cold" : "warm",
		since_s(s, a->begin_ts));
}

/* How the process ended (gmt_summary_t.process_end). */
static void t_process_end(FILE *f, const gmt_summary_t *s)
{
	const char *h = s->process_end ? s->process_end : "cut";
	if (!strcmp(h, "cut"))
		return;  /* the status line says it */
	fprintf(f, "Process end: ");
	if (!strcmp(h, "exec"))
		fprintf(f, "it called exec (no END record: the new program, same pid, writes its own trace)\n");
	else if (!strcmp(h, "signal"))
		fprintf(f, "killed by signal %d\n", s->process_end_value);
	else if (!strcmp(h, "shutdown"))
		fprintf(f, "the tracer was shut down (gpumemtrace_shutdown)\n");
	else if (!*h)
		fprintf(f, "not recorded (trace format older than 1.4)\n");
	else
		fprintf(f, "%s with status %d\n", h, s->process_end_value);
}

static void t_comp(FILE *f, const char *indent, const gmt_composition_t *c)
{
	char b[64];
	fprintf(f, "%sby kind: ", indent);
	int any = 0;
	for (int k = 1; k < GMT_DKINDS; k++)
		fprintf(f, "%s%s %s", any++ ? ", " : "", gmt_dkind_key(k), gmt_fmt_bytes(b, sizeof(b), c->kind[k]));
	if (c->kind[0])
		fprintf(f, ", unknown %s", gmt_fmt_bytes(b, sizeof(b), c->kind[0]));
	/* application and nccl always; the others only when they hold bytes. */
	fprintf(f, "\n%sby owner: application %s", indent, gmt_fmt_bytes(b, sizeof(b), c->owner[0]));
	fprintf(f, ", nccl %s", gmt_fmt_bytes(b, sizeof(b), c->owner[1]));
	for (int o = 2; o < GMT_DOWNERS; o++)
		if (c->owner[o])
			fprintf(f, ", %s %s", gmt_downer_key(o), gmt_fmt_bytes(b, sizeof(b), c->owner[o]));
	fputc('\n', f);
}

static void t_device(FILE *f, const gmt_summary_t *s, const gmt_dev_summary_t *d,
		     const gmt_summary_phases_t *sp, const gmt_phase_at_t *pa)
{
	char b[64], u[48];
	if (d->ordinal < 0)
		fprintf(f, "\nEvents that named no device\n");
	else
		fprintf(f, "\nDevice %d", d->ordinal);
	if (d->ordinal >= 0 && d->has_record) {
		gmt_fmt_uuid(u, d->uuid);
		fprintf(f, ": ");
		gmt_text_str(f, d->name);
		fprintf(f, "\n  uuid %s, PCI bus id ", u);
		gmt_text_str(f, d->pci_bus_id);
		fprintf(f, ", compute capability %d.%d, driver %d.%d (%d)\n  total memory %s\n",
			d->cc_major, d->cc_minor, d->driver_version / 1000,
			(d->driver_version % 1000) / 10, d->driver_version,
			gmt_fmt_bytes(b, sizeof(b), d->total_bytes));
	} else if (d->ordinal >= 0) {
		fprintf(f, " (no device record in the trace)\n");
	}

	fprintf(f, "  Peak device bytes held by live allocations: %s\n", gmt_fmt_bytes(b, sizeof(b), d->peak.total));
	if (d->peak.total) {
		fprintf(f, "    at ");
		t_when(f, s, d->peak_ts);
		fputc('\n', f);
		t_phase(f, s, sp, pa);
		fprintf(f, "    composition at that instant:\n");
		t_comp(f, "      ", &d->peak);
	}

	fprintf(f, "  Peak device bytes taken from the device, pools' reserve included: %s\n",
		gmt_fmt_bytes(b, sizeof(b), d->taken_peak));
	if (d->taken_peak) {
		fprintf(f, "    at ");
		t_when(f, s, d->taken_peak_ts);
		fprintf(f, "\n    live allocations %s", gmt_fmt_bytes(b, sizeof(b), d->taken_peak - d->taken_peak_reserve));
		fprintf(f, " + pools' reserve beyond them %s\n", gmt_fmt_bytes(b, sizeof(b), d->taken_peak_reserve));
	}
	fprintf(f, "  Independent maxima per kind (each at its own time; they describe no single moment):\n");
	for (int k = 0; k < GMT_DKINDS; k++) {
		if (k == 0 && !d->kind_max[0])
			continue;
		fprintf(f, "    %-15s %s", gmt_dkind_key(k), gmt_fmt_bytes(b, sizeof(b), d->kind_max[k]));
		if (d->kind_max[k])
			fprintf(f, " at %+.9f s", since_s(s, d->kind_max_ts[k]));
		fputc('\n', f);
	}
	fprintf(f, "    sum of the maxima: %s (a bound, not a moment)\n", gmt_fmt_bytes(b, sizeof(b), d->kind_max_sum));

	fprintf(f, "  Live at the end of the trace: %s\n", gmt_fmt_bytes(b, sizeof(b), d->live.total));
	t_comp(f, "    ", &d->live);
	fprintf(f, "  Taken from the device at the end, pools' reserve included: %s", gmt_fmt_bytes(b, sizeof(b), d->taken_final));
	fprintf(f, " (pools' reserve beyond live allocations %s)\n", gmt_fmt_bytes(b, sizeof(b), d->taken_final_reserve));
	if (d->ctx_destroys) {
		fprintf(f, "  Contexts destroyed: %" PRIu64 "; with them the driver released %s in %" PRIu64
			" block%s the program had not freed", d->ctx_destroys,
			gmt_fmt_bytes(b, sizeof(b), d->ctx_released_bytes), d->ctx_released_blocks,
			d->ctx_released_blocks == 1 ? "" : "s");
		if (d->ctx_released_blocks)
			fprintf(f, " (last at %+.9f s)", since_s(s, d->ctx_release_ts));
		fputc('\n', f);
	}
	if (d->graph_captured_allocs || d->graph_samples) {
		fprintf(f, "  CUDA graph memory: %" PRIu64 " allocation%s captured into graphs (%s), in none of "
			"the figures above: the driver backs them from the graph memory pool when a graph runs\n",
			d->graph_captured_allocs, d->graph_captured_allocs == 1 ? "" : "s",
			gmt_fmt_bytes(b, sizeof(b), d->graph_captured_bytes));
		if (d->graph_samples) {
			fprintf(f, "    graph memory pool (latest of %" PRIu64 " samples, at %+.9f s): reserved %s",
				d->graph_samples, since_s(s, d->graph_ts), gmt_fmt_bytes(b, sizeof(b), d->graph_reserved));
			fprintf(f, " (high %s)", gmt_fmt_bytes(b, sizeof(b), d->graph_reserved_high));
			fprintf(f, ", in use %s", gmt_fmt_bytes(b, sizeof(b), d->graph_used));
			fprintf(f, " (high %s)\n", gmt_fmt_bytes(b, sizeof(b), d->graph_used_high));
		} else {
			fprintf(f, "    graph memory pool: no samples\n");
		}
	}

	fprintf(f, "  Counts            allocations        frees       failed\n");
	for (int k = 0; k < GMT_DKINDS; k++) {
		if (k == 0 && !d->n_alloc[0] && !d->n_free[0] && !d->n_fail[0])
			continue;
		fprintf(f, "    %-15s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", gmt_dkind_key(k),
			d->n_alloc[k], d->n_free[k], d->n_fail[k]);
	}
	if (d->meminfo_samples) {
		fprintf(f, "  cuMemGetInfo (%" PRIu64 " samples): latest free %s of %s at %+.9f s\n",
			d->meminfo_samples, gmt_fmt_bytes(b, sizeof(b), d->meminfo_free),
			gmt_fmt_bytes(u, sizeof(u), d->meminfo_total), since_s(s, d->meminfo_ts));
		fprintf(f, "    minimum free %s at %+.9f s\n",
			gmt_fmt_bytes(b, sizeof(b), d->meminfo_min_free), since_s(s, d->meminfo_min_ts));
	} else {
		fprintf(f, "  cuMemGetInfo: no samples\n");
	}
}

/* ---- what a trace may lack (every command says it) ------------------------ */

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

int gmt_gap_line(const gmt_gaps_t *s, int i, char *buf, size_t len)
{
	int k = -1;
	if (s->untraced_entry_points && ++k == i) {
		snprintf(buf, len, "trace incomplete: %" PRIu64 " untraced entry point%s (cuGetProcAddress "
			 "returned a function the preload could not identify, %" PRIu64 " look-up%s): "
			 "the calls made through %s are not in the trace", s->untraced_entry_points,
			 plural(s->untraced_entry_points), s->untraced_lookups, plural(s->untraced_lookups),
			 s->untraced_entry_points == 1 ? "it" : "them");
		return 1;
	}
	if (s->nvtx_only && ++k == i) {
		snprintf(buf, len, "trace incomplete: the preload was loaded only as an NVTX injection "
			 "(NVTX_INJECTION64_PATH without LD_PRELOAD): phases are recorded, allocations "
			 "are not (run the program under the launcher, gpumemtrace COMMAND)");
		return 1;
	}
	if (s->driver_stub && ++k == i) {
		snprintf(buf, len, "no GPU: the process loaded NVIDIA's stub libcuda (the toolkit's link "
			 "stub, CUDA_ERROR_STUB_LIBRARY), not a CUDA driver: every driver call failed");
		return 1;
	}
	if ((s->newer_records || s->newer_fields || s->unknown_events) && ++k == i) {
		size_t o = 0;
		int first = 1;
		o += (size_t)snprintf(buf, len, "trace incomplete: the trace is format %u.%u, this analyzer "
				      "reads %d.%d:", s->trace_major, s->trace_minor, GMT_FORMAT_MAJOR,
				      GMT_FORMAT_MINOR);
		if (s->newer_records && o < len) {
			o += (size_t)snprintf(buf + o, len - o, " %" PRIu64 " record%s of %s it does not know "
					      "%s skipped (tag%s", s->newer_records, plural(s->newer_records),
					      s->newer_records == 1 ? "a kind" : "kinds",
					      s->newer_records == 1 ? "was" : "were", s->n_newer_tags == 1 ? "" : "s");
			for (unsigned t = 0; t < s->n_newer_tags && o < len; t++)
				o += (size_t)snprintf(buf + o, len - o, "%s %u", t ? "," : "", s->newer_tags[t]);
			if (o < len)
				o += (size_t)snprintf(buf + o, len - o, "%s)", s->n_newer_tags == 8 ? ", ..." : "");
			first = 0;
		}
		if (s->newer_fields && o < len) {
			o += (size_t)snprintf(buf + o, len - o, "%s %" PRIu64 " record%s had newer fields it did "
					      "not read", first ? "" : ";", s->newer_fields, plural(s->newer_fields));
			first = 0;
		}
		if (s->unknown_events && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s %" PRIu64 " event%s of %s it does not "
					      "know %s counted, not replayed", first ? "" : ";", s->unknown_events,
					      plural(s->unknown_events), s->unknown_events == 1 ? "a type" : "types",
					      s->unknown_events == 1 ? "was" : "were");
		if (o < len)
			snprintf(buf + o, len - o, ": the numbers below may miss what they held (a newer "
				 "gpumemtrace-analyze reads them)");
		return 1;
	}
	if (s->activity_without_allocations && ++k == i) {
		snprintf(buf, len, "no allocation: the trace holds CUDA activity (%" PRIu64 " event%s: "
			 "contexts, synchronisations, ranges, samples) but no allocation of any route",
			 s->cuda_activity, plural(s->cuda_activity));
		return 1;
	}
	return 0;
}

void gmt_report_gaps_json(gmt_json_t *j, const gmt_gaps_t *s)
{
	gmt_report_gaps_json_as(j, "completeness", s);
}

void gmt_report_gaps_json_read(gmt_json_t *j, const gmt_gaps_t *s, const gmt_decode_result_t *res)
{
	if (res->status == GMT_DECODE_OK || res->status == GMT_DECODE_DAMAGED)
		gmt_report_gaps_json_as(j, "completeness", s);
}

void gmt_report_gaps_json_as(gmt_json_t *j, const char *key, const gmt_gaps_t *s)
{
	char b[512];
	gmt_json_kv_obj_begin(j, key);
	gmt_json_kv_bool(j, "incomplete", s->incomplete);
	gmt_json_kv_u64(j, "untraced_entry_points", s->untraced_entry_points);
	gmt_json_kv_u64(j, "untraced_lookups", s->untraced_lookups);
	gmt_json_kv_bool(j, "nvtx_injection_only", s->nvtx_only);
	gmt_json_kv_bool(j, "driver_stub", s->driver_stub);
	gmt_json_kv_u64(j, "cuda_activity_events", s->cuda_activity);
	gmt_json_kv_bool(j, "cuda_activity_without_allocations", s->activity_without_allocations);
	if (s->newer_records || s->newer_fields || s->unknown_events) {
		char v[32];
		gmt_json_kv_obj_begin(j, "not_read");
		snprintf(v, sizeof(v), "%u.%u", s->trace_major, s->trace_minor);
		gmt_json_kv_str(j, "trace_format", v);
		snprintf(v, sizeof(v), "%d.%d", GMT_FORMAT_MAJOR, GMT_FORMAT_MINOR);
		gmt_json_kv_str(j, "reader_format", v);
		gmt_json_kv_u64(j, "records_skipped", s->newer_records);
		gmt_json_kv_arr_begin(j, "record_tags");
		for (unsigned t = 0; t < s->n_newer_tags; t++)
			gmt_json_u64(j, s->newer_tags[t]);
		gmt_json_arr_end(j);
		gmt_json_kv_u64(j, "records_with_fields_not_read", s->newer_fields);
		gmt_json_kv_u64(j, "events_of_unknown_types", s->unknown_events);
		gmt_json_obj_end(j);
	} else {
		gmt_json_kv_null(j, "not_read");
	}
	gmt_json_kv_arr_begin(j, "notes");
	for (int i = 0; gmt_gap_line(s, i, b, sizeof(b)); i++)
		gmt_json_str(j, b);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

int gmt_report_text_status(FILE *f, const gmt_summary_t *s)
{
	char b[512];
	fprintf(f, "Trace ");
	gmt_text_str(f, s->file);
	fputc('\n', f);
	switch (s->status) {
	case GMT_DECODE_OK:
		if (s->ended_cleanly && s->missing)
			fprintf(f, "  ended cleanly (END record), but");
		else if (s->ended_cleanly)
			fprintf(f, "  ended cleanly (END record)\n");
		else
			fprintf(f, "  cut: no end record; the process was killed or is still running\n");
		break;
	case GMT_DECODE_DAMAGED:
		fprintf(f, "  DAMAGED: ");
		gmt_text_str(f, s->message);
		fprintf(f, "\n  everything before offset %" PRIu64 " (of %" PRIu64 " bytes) is analysed below\n",
			s->bytes_ok, s->file_size);
		break;
	default:
		fprintf(f, "  not analysed: ");
		gmt_text_str(f, s->message);
		fputc('\n', f);
		return 0;
	}
	/* Drops qualify every number below. */
	if (s->missing) {
		if (!(s->status == GMT_DECODE_OK && s->ended_cleanly))
			fprintf(f, "  and");
		fprintf(f, " %" PRIu64 " events are missing (dropped)", s->missing);
		if (s->missing_first_ts)
			fprintf(f, " between ts %" PRIu64 " and %" PRIu64 " ns", s->missing_first_ts,
				s->missing_last_ts);
		fprintf(f, ": the numbers below may be off either way (a lost allocation makes them low, a lost free high)\n");
	}
	for (int i = 0; gmt_gap_line(&s->gaps, i, b, sizeof(b)); i++)
		fprintf(f, "  %s\n", b);
	return 1;
}

void gmt_report_text(FILE *f, const gmt_summary_t *s, const gmt_summary_phases_t *sp)
{
	char b[64], b2[64];
	if (!gmt_report_text_status(f, s))
		return;

	if (s->has_header) {
		fprintf(f, "\nProcess\n  pid %" PRIu64 ", ppid %" PRIu64 ", host ", s->pid, s->ppid);
		gmt_text_str(f, s->host);
		fprintf(f, "\n  exe ");
		gmt_text_str(f, s->exe);
		fprintf(f, "\n  cmdline");
		for (size_t i = 0; i < s->n_cmdline; i++) {
			fputc(' ', f);
			gmt_text_str(f, s->cmdline[i]);
		}
		fprintf(f, "\n  gpumemtrace ");
		gmt_text_str(f, s->tool_version);
		fprintf(f, ", trace format %u.%u\n", s->format_major, s->format_minor);
		fprintf(f, "  started %s (CLOCK_REALTIME of the header)\n",
			gmt_fmt_utc(b, sizeof(b), s->clock_realtime_ns));
		if (s->n_env) {
			fprintf(f, "  environment (allow-listed):\n");
			for (size_t i = 0; i < s->n_env; i++) {
				fprintf(f, "    ");
				gmt_text_esc(f, s->env_keys[i]);
				fputc('=', f);
				gmt_text_esc(f, s->env_values[i]);
				fputc('\n', f);
			}
		}
	} else {
		fprintf(f, "\nProcess: no header record was read\n");
	}
	uint64_t dur = s->duration_ns;
	fprintf(f, "  duration %" PRIu64 " ns (%.9f s), first to last event; %" PRIu64 " events",
		dur, (double)dur / 1e9, s->events);
	if (s->late_events)
		fprintf(f, ", %" PRIu64 " of them late", s->late_events);
	if (s->side_events)
		fprintf(f, ", %" PRIu64 " from the side stream (a framework's history: counted, not"
			" replayed here; see `phases`)", s->side_events);
	fputc('\n', f);

	for (size_t i = 1; i <= s->n_dev; i++) {
		/* Devices in ordinal order, the "no device" slot last. */
		const gmt_dev_summary_t *d = s->dev[i % s->n_dev];
		if (dev_reported(d))
			t_device(f, s, d, sp, sp && sp->ran ? &sp->peak[i % s->n_dev] : NULL);
	}

	fprintf(f, "\nHost pinned memory (host memory, never in device totals)\n");
	fprintf(f, "  peak %s", gmt_fmt_bytes(b, sizeof(b), s->host_peak));
	if (s->host_peak)
		fprintf(f, " at %+.9f s", since_s(s, s->host_peak_ts));
	fprintf(f, ", final %s\n  allocations %" PRIu64 ", frees %" PRIu64 ", failed %" PRIu64 "\n",
		gmt_fmt_bytes(b2, sizeof(b2), s->host_live), s->host_allocs, s->host_frees, s->host_fails);
	if (s->host_ctx_released)
		fprintf(f, "  released with destroyed contexts: %s\n",
			gmt_fmt_bytes(b, sizeof(b), s->host_ctx_released));
	if (s->imported_opens || s->imported_handles) {
		fprintf(f, "\nImported memory (another process's or handle's, opened here; never in device totals)\n");
		fprintf(f, "  peak %s", gmt_fmt_bytes(b, sizeof(b), s->imported_peak));
		if (s->imported_peak)
			fprintf(f, " at %+.9f s", since_s(s, s->imported_peak_ts));
		fprintf(f, ", final %s\n  opened %" PRIu64 ", closed %" PRIu64 ", imported handles %" PRIu64 "\n",
			gmt_fmt_bytes(b2, sizeof(b2), s->imported_live), s->imported_opens, s->imported_closes,
			s->imported_handles);
	}
	if (s->multicast_objects)
		fprintf(f, "\nMulticast objects: %" PRIu64 ", %" PRIu64 " bindings (the memory bound to them is"
			" counted where it was allocated)\n", s->multicast_objects, s->multicast_binds);

	fprintf(f, "\nReserved virtual address space (address space, not memory; never in device totals)\n");
	fprintf(f, "  peak %s, final %s\n  reservations %" PRIu64 ", address frees %" PRIu64 "\n",
		gmt_fmt_bytes(b, sizeof(b), s->va_peak), gmt_fmt_bytes(b2, sizeof(b2), s->va_live),
		s->va_reserves, s->va_frees);
	if (s->vmm_maps || s->by_type[GMT_EV_VMM_CREATE])
		fprintf(f, "  virtual memory: %" PRIu64 " maps, %" PRIu64 " unmaps, %" PRIu64
			" map failures, %" PRIu64 " handles released while still mapped;"
			" at the end %" PRIu64 " handles and %" PRIu64 " mappings live\n",
			s->vmm_maps, s->vmm_unmaps, s->vmm_map_fails, s->vmm_released_while_mapped,
			s->vmm_live_handles, s->vmm_live_mappings);

	if (s->n_pools) {
		fprintf(f, "\nMemory pools (last attribute sample)\n");
		for (size_t i = 0; i < s->n_pools; i++) {
			const gmt_pool_summary_t *p = &s->pools[i];
			fprintf(f, "  pool 0x%" PRIx64 " device %d: reserved %s", p->pool, p->device,
				gmt_fmt_bytes(b, sizeof(b), p->reserved_current));
			fprintf(f, " (high %s)", gmt_fmt_bytes(b, sizeof(b), p->reserved_high));
			fprintf(f, ", used %s", gmt_fmt_bytes(b, sizeof(b), p->used_current));
			fprintf(f, " (high %s)", gmt_fmt_bytes(b, sizeof(b), p->used_high));
			fprintf(f, ", %" PRIu64 " samples", p->samples);
			if (p->samples)
				fprintf(f, ", last at %+.9f s", since_s(s, p->ts));
			fprintf(f, "%s%s\n", p->created ? ", created" : "", p->destroyed ? ", destroyed" : "");
		}
	}

	fprintf(f, "\nFailed allocations: %" PRIu64 "\n", s->fails_total);
	for (size_t i = 0; i < s->n_fails; i++) {
		const gmt_fail_summary_t *x = &s->fails[i];
		const char *rn = gmt_curesult_name(x->result);
		fprintf(f, "  at ");
		t_when(f, s, x->ts);
		fputc('\n', f);
		t_phase(f, s, sp, sp && sp->ran ? &sp->fail[i] : NULL);
		fprintf(f, "    device %d: requested %s, %s via %s, owner %s, stream 0x%" PRIx64
			", result %u %s\n", x->device, gmt_fmt_bytes(b, sizeof(b), x->size),
			gmt_kind_name(x->kind), gmt_api_name(x->api), gmt_owner_name(x->owner),
			x->stream, x->result, rn ? rn : "(unknown CUresult)");
		fprintf(f, "    live on device %d at that instant: %s\n", x->device,
			gmt_fmt_bytes(b, sizeof(b), x->live.total));
		t_comp(f, "      ", &x->live);
		if (x->has_meminfo)
			fprintf(f, "    latest cuMemGetInfo before it: free %s at %+.9f s\n",
				gmt_fmt_bytes(b, sizeof(b), x->meminfo_free), since_s(s, x->meminfo_ts));
		else
			fprintf(f, "    no cuMemGetInfo sample of that device before it\n");
	}
	if (s->fails_not_listed)
		fprintf(f, "  ... %" PRIu64 " more not listed\n", s->fails_not_listed);

	if (s->drops_total || s->drop_records) {
		fprintf(f, "\nDropped events: %" PRIu64 " in %" PRIu64 " DROPS records\n",
			s->drops_total, s->drop_records);
		for (size_t i = 0; i < s->n_drops; i++) {
			const gmt_drop_summary_t *d = &s->drops[i];
			fprintf(f, "  %" PRIu64 " events (", d->count);
			gmt_text_str(f, d->reason);
			fprintf(f, ", errno %d) from %+.9f s to %+.9f s\n", d->err,
				since_s(s, d->first_ts), since_s(s, d->last_ts));
		}
	} else {
		fprintf(f, "\nDropped events: none\n");
	}
	if (s->has_end)
		fprintf(f, "End record: %" PRIu64 " events written, %" PRIu64 " dropped, %" PRIu64 " late\n",
			s->end.written, s->end.dropped, s->end.late);
	t_process_end(f, s);

	const gmt_anomalies_t *a = &s->anom;
	static const char *const an_name[] = {
		"overlapping allocations (alloc on a live address; old block replaced)",
		"unmatched frees (free of an address not live)",
		"frees of address 0 (no-ops)",
		"frees voided by FREE_FAIL",
		"FREE_FAIL without a matching free",
		"VMM handles created twice",
		"VMM releases of unknown handles",
		"VMM retains of unknown handles",
		"VMM maps of unknown handles",
		"VMM maps over a mapped address",
		"VMM unmaps of unmapped addresses",
		"reservations over a reserved address",
		"address frees of unknown ranges",
		"allocations of unknown kind",
		"contexts destroyed while another context of their device lived (nothing released)",
	};
	const uint64_t av[] = {
		a->overlapping_allocations, a->unmatched_frees, a->null_frees, a->voided_frees,
		a->unmatched_free_fails, a->overlapping_vmm_handles, a->unmatched_vmm_releases,
		a->unmatched_vmm_retains, a->unmatched_maps, a->overlapping_maps, a->unmatched_unmaps,
		a->overlapping_reserves, a->unmatched_addr_frees, a->unknown_kinds,
		a->ambiguous_ctx_destroys,
	};
	int any = 0;
	for (size_t i = 0; i < sizeof(av) / sizeof(av[0]); i++) {
		if (!av[i])
			continue;
		if (!any++)
			fprintf(f, "\nAnomalies\n");
		fprintf(f, "  %" PRIu64 " %s\n", av[i], an_name[i]);
	}
	if (!any)
		fprintf(f, "Anomalies: none\n");
}

/* ---- JSON (writers/gmt_json.h) ------------------------------------------- */

const char *gmt_status_key(const gmt_summary_t *s)
{
	return status_key(s);
}

static void j_kinds(gmt_json_t *j, const uint64_t *k)
{
	gmt_json_obj_begin(j);
	for (int i = 0; i < GMT_DKINDS; i++)
		gmt_json_kv_u64(j, gmt_dkind_key(i), k[i]);
	gmt_json_obj_end(j);
}

/* "bytes", "by_kind", "by_owner" of a composition (inside an object). */
static void j_comp(gmt_json_t *j, const gmt_composition_t *c)
{
	gmt_json_kv_u64(j, "bytes", c->total);
	gmt_json_key(j, "by_kind");
	j_kinds(j, c->kind);
	gmt_json_kv_obj_begin(j, "by_owner");
	for (int i = 0; i < GMT_DOWNERS; i++)
		gmt_json_kv_u64(j, gmt_downer_key(i), c->owner[i]);
	gmt_json_obj_end(j);
}

static void j_opt_u64(gmt_json_t *j, const char *k, int has, uint64_t v)
{
	if (has)
		gmt_json_kv_u64(j, k, v);
	else
		gmt_json_kv_null(j, k);
}

/* "ts_ns", "since_first_event_s" and "utc" of a moment (or nulls). */
static void j_when(gmt_json_t *j, const gmt_summary_t *s, int valid, uint64_t ts)
{
	char b[64];
	if (!valid) {
		gmt_json_kv_null(j, "ts_ns");
		gmt_json_kv_null(j, "since_first_event_s");
		gmt_json_kv_null(j, "utc");
		return;
	}
	gmt_json_kv_u64(j, "ts_ns", ts);
	gmt_json_kv_fixed(j, "since_first_event_s", since_s(s, ts), 9);
	gmt_json_kv_str(j, "utc", s->has_header ? gmt_fmt_utc(b, sizeof(b), gmt_summary_realtime_ns(s, ts)) : NULL);
}

static void j_phase(gmt_json_t *j, const gmt_summary_t *s, const gmt_phase_at_t *a)
{
	gmt_json_key(j, "phase");
	if (!a || !a->in_phase) {
		gmt_json_null(j);
		return;
	}
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "name", a->name);
	gmt_json_kv_u64(j, "occurrence", a->k);
	gmt_json_kv_u64(j, "begin_ts_ns", a->begin_ts);
	gmt_json_kv_fixed(j, "begin_since_first_event_s", since_s(s, a->begin_ts), 9);
	gmt_json_obj_end(j);
}

static void j_device(gmt_json_t *j, const gmt_summary_t *s, const gmt_dev_summary_t *d,
		     const gmt_phase_at_t *pa)
{
	char b[64];
	gmt_json_obj_begin(j);
	gmt_json_kv_i64(j, "ordinal", d->ordinal);
	gmt_json_key(j, "record");
	if (d->has_record) {
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "name", d->name);
		gmt_fmt_uuid(b, d->uuid);
		gmt_json_kv_str(j, "uuid", b);
		gmt_json_kv_str(j, "pci_bus_id", d->pci_bus_id);
		gmt_json_kv_u64(j, "total_bytes", d->total_bytes);
		snprintf(b, sizeof(b), "%d.%d", d->cc_major, d->cc_minor);
		gmt_json_kv_str(j, "compute_capability", b);
		gmt_json_kv_i64(j, "driver_version", d->driver_version);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_kv_obj_begin(j, "peak");
	j_comp(j, &d->peak);
	j_when(j, s, d->peak.total > 0, d->peak_ts);
	j_phase(j, s, d->peak.total > 0 ? pa : NULL);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "independent_maxima");
	gmt_json_kv_str(j, "note", "each kind's own maximum over the whole run, each at its own time; "
			"together they describe no single moment");
	gmt_json_kv_obj_begin(j, "by_kind");
	for (int k = 0; k < GMT_DKINDS; k++) {
		gmt_json_kv_obj_begin(j, gmt_dkind_key(k));
		gmt_json_kv_u64(j, "bytes", d->kind_max[k]);
		j_opt_u64(j, "ts_ns", d->kind_max[k] != 0, d->kind_max_ts[k]);
		gmt_json_obj_end(j);
	}
	gmt_json_obj_end(j);
	gmt_json_kv_u64(j, "sum_bytes", d->kind_max_sum);
	gmt_json_kv_str(j, "sum_note", "an upper bound on the peak, not a moment");
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "final");
	j_comp(j, &d->live);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "taken_from_device");
	gmt_json_kv_str(j, "note", "live allocations plus what the device's stream-ordered pools keep "
			"reserved beyond them (their latest attribute samples)");
	gmt_json_kv_obj_begin(j, "peak");
	gmt_json_kv_u64(j, "bytes", d->taken_peak);
	gmt_json_kv_u64(j, "live_bytes", d->taken_peak - d->taken_peak_reserve);
	gmt_json_kv_u64(j, "pool_reserve_bytes", d->taken_peak_reserve);
	j_when(j, s, d->taken_peak > 0, d->taken_peak_ts);
	gmt_json_obj_end(j);
	gmt_json_kv_obj_begin(j, "final");
	gmt_json_kv_u64(j, "bytes", d->taken_final);
	gmt_json_kv_u64(j, "pool_reserve_bytes", d->taken_final_reserve);
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "counts");
	for (int k = 0; k < GMT_DKINDS; k++) {
		gmt_json_kv_obj_begin(j, gmt_dkind_key(k));
		gmt_json_kv_u64(j, "allocations", d->n_alloc[k]);
		gmt_json_kv_u64(j, "frees", d->n_free[k]);
		gmt_json_kv_u64(j, "failed", d->n_fail[k]);
		gmt_json_obj_end(j);
	}
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "contexts");
	gmt_json_kv_u64(j, "destroyed", d->ctx_destroys);
	gmt_json_kv_u64(j, "released_blocks", d->ctx_released_blocks);
	gmt_json_kv_u64(j, "released_bytes", d->ctx_released_bytes);
	j_opt_u64(j, "last_release_ts_ns", d->ctx_released_blocks != 0, d->ctx_release_ts);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "graph_memory");
	gmt_json_kv_u64(j, "captured_allocations", d->graph_captured_allocs);
	gmt_json_kv_u64(j, "captured_bytes", d->graph_captured_bytes);
	gmt_json_kv_u64(j, "samples", d->graph_samples);
	gmt_json_key(j, "latest");
	if (d->graph_samples) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "reserved_bytes", d->graph_reserved);
		gmt_json_kv_u64(j, "reserved_high_bytes", d->graph_reserved_high);
		gmt_json_kv_u64(j, "used_bytes", d->graph_used);
		gmt_json_kv_u64(j, "used_high_bytes", d->graph_used_high);
		gmt_json_kv_u64(j, "ts_ns", d->graph_ts);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "meminfo");
	gmt_json_kv_u64(j, "samples", d->meminfo_samples);
	gmt_json_key(j, "latest");
	if (d->meminfo_samples) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "free_bytes", d->meminfo_free);
		gmt_json_kv_u64(j, "total_bytes", d->meminfo_total);
		gmt_json_kv_u64(j, "ts_ns", d->meminfo_ts);
		gmt_json_obj_end(j);
		gmt_json_kv_obj_begin(j, "minimum_free");
		gmt_json_kv_u64(j, "free_bytes", d->meminfo_min_free);
		gmt_json_kv_u64(j, "ts_ns", d->meminfo_min_ts);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
		gmt_json_kv_null(j, "minimum_free");
	}
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
}

void gmt_report_json(gmt_json_t *j, const gmt_summary_t *s, const gmt_summary_phases_t *sp)
{
	char b[64];
	int analysed = s->status == GMT_DECODE_OK || s->status == GMT_DECODE_DAMAGED;
	gmt_json_newline(j);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", s->file);
	gmt_json_kv_str(j, "status", status_key(s));
	gmt_missing_json(j, s->missing, s->missing_timed, s->missing_first_ts, s->missing_last_ts);
	gmt_json_kv_obj_begin(j, "decode");
	gmt_json_kv_u64(j, "bytes_ok", s->bytes_ok);
	gmt_json_kv_u64(j, "file_size", s->file_size);
	gmt_json_kv_u64(j, "frames", s->frames);
	gmt_json_kv_u64(j, "records", s->records);
	gmt_json_kv_bool(j, "ended_cleanly", s->ended_cleanly);
	gmt_json_kv_str(j, "message", s->status != GMT_DECODE_OK ? s->message : NULL);
	gmt_json_obj_end(j);
	if (!analysed) {
		gmt_json_obj_end(j);
		return;
	}
	gmt_report_gaps_json(j, &s->gaps);

	gmt_json_key(j, "process");
	if (s->has_header) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "pid", s->pid);
		gmt_json_kv_u64(j, "ppid", s->ppid);
		gmt_json_kv_str(j, "host", s->host ? s->host : "");
		gmt_json_kv_str(j, "exe", s->exe ? s->exe : "");
		gmt_json_kv_arr_begin(j, "cmdline");
		for (size_t i = 0; i < s->n_cmdline; i++)
			gmt_json_str(j, s->cmdline[i] ? s->cmdline[i] : "");
		gmt_json_arr_end(j);
		gmt_json_kv_obj_begin(j, "env");
		for (size_t i = 0; i < s->n_env; i++)
			gmt_json_kv_str(j, s->env_keys[i] ? s->env_keys[i] : "",
					s->env_values[i] ? s->env_values[i] : "");
		gmt_json_obj_end(j);
		gmt_json_kv_str(j, "tool_version", s->tool_version ? s->tool_version : "");
		snprintf(b, sizeof(b), "%u.%u", s->format_major, s->format_minor);
		gmt_json_kv_str(j, "format_version", b);
		gmt_json_kv_u64(j, "clock_monotonic_ns", s->clock_monotonic_ns);
		gmt_json_kv_u64(j, "clock_realtime_ns", s->clock_realtime_ns);
		gmt_json_kv_str(j, "start_utc", gmt_fmt_utc(b, sizeof(b), s->clock_realtime_ns));
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}

	gmt_json_kv_obj_begin(j, "time");
	{
		uint64_t dur = s->duration_ns;
		j_opt_u64(j, "first_event_ts_ns", s->have_ts, s->first_ts);
		j_opt_u64(j, "last_event_ts_ns", s->have_ts, s->last_ts);
		gmt_json_kv_u64(j, "duration_ns", dur);
		gmt_json_kv_fixed(j, "duration_s", (double)dur / 1e9, 9);
	}
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "events");
	gmt_json_kv_u64(j, "total", s->events);
	gmt_json_kv_u64(j, "late", s->late_events);
	gmt_json_kv_u64(j, "side", s->side_events);
	gmt_json_kv_obj_begin(j, "by_type");
	{
		for (unsigned i = 0; i <= GMT_EV_TYPE_MAX; i++)
			if (gmt_ev_type_known(i))
				gmt_json_kv_u64(j, gmt_ev_type_name(i), s->by_type[i]);
		gmt_json_kv_u64(j, "unknown", s->by_type_unknown);
	}
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);

	gmt_json_kv_arr_begin(j, "devices");
	for (size_t i = 1; i <= s->n_dev; i++) {
		const gmt_dev_summary_t *d = s->dev[i % s->n_dev];
		if (dev_reported(d))
			j_device(j, s, d, sp && sp->ran ? &sp->peak[i % s->n_dev] : NULL);
	}
	gmt_json_arr_end(j);

	gmt_json_kv_obj_begin(j, "host_pinned");
	gmt_json_kv_u64(j, "peak_bytes", s->host_peak);
	j_opt_u64(j, "peak_ts_ns", s->host_peak != 0, s->host_peak_ts);
	gmt_json_kv_u64(j, "final_bytes", s->host_live);
	gmt_json_kv_u64(j, "allocations", s->host_allocs);
	gmt_json_kv_u64(j, "frees", s->host_frees);
	gmt_json_kv_u64(j, "failed", s->host_fails);
	gmt_json_kv_u64(j, "released_with_contexts_bytes", s->host_ctx_released);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "imported");
	gmt_json_kv_u64(j, "peak_bytes", s->imported_peak);
	j_opt_u64(j, "peak_ts_ns", s->imported_peak != 0, s->imported_peak_ts);
	gmt_json_kv_u64(j, "final_bytes", s->imported_live);
	gmt_json_kv_u64(j, "opens", s->imported_opens);
	gmt_json_kv_u64(j, "closes", s->imported_closes);
	gmt_json_kv_u64(j, "handles", s->imported_handles);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "multicast");
	gmt_json_kv_u64(j, "objects", s->multicast_objects);
	gmt_json_kv_u64(j, "binds", s->multicast_binds);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "address_space");
	gmt_json_kv_u64(j, "reserved_peak_bytes", s->va_peak);
	j_opt_u64(j, "reserved_peak_ts_ns", s->va_peak != 0, s->va_peak_ts);
	gmt_json_kv_u64(j, "reserved_final_bytes", s->va_live);
	gmt_json_kv_u64(j, "reservations", s->va_reserves);
	gmt_json_kv_u64(j, "address_frees", s->va_frees);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "vmm");
	gmt_json_kv_u64(j, "maps", s->vmm_maps);
	gmt_json_kv_u64(j, "unmaps", s->vmm_unmaps);
	gmt_json_kv_u64(j, "map_failures", s->vmm_map_fails);
	gmt_json_kv_u64(j, "released_while_mapped", s->vmm_released_while_mapped);
	gmt_json_kv_u64(j, "live_handles_at_end", s->vmm_live_handles);
	gmt_json_kv_u64(j, "live_mappings_at_end", s->vmm_live_mappings);
	gmt_json_obj_end(j);

	gmt_json_kv_arr_begin(j, "pools");
	for (size_t i = 0; i < s->n_pools; i++) {
		const gmt_pool_summary_t *p = &s->pools[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "pool", p->pool);
		gmt_json_kv_i64(j, "device", p->device);
		gmt_json_kv_bool(j, "created", p->created);
		gmt_json_kv_bool(j, "destroyed", p->destroyed);
		gmt_json_kv_u64(j, "trims", p->trims);
		gmt_json_kv_u64(j, "samples", p->samples);
		gmt_json_kv_u64(j, "reserved_current_bytes", p->reserved_current);
		gmt_json_kv_u64(j, "reserved_high_bytes", p->reserved_high);
		gmt_json_kv_u64(j, "used_current_bytes", p->used_current);
		gmt_json_kv_u64(j, "used_high_bytes", p->used_high);
		j_opt_u64(j, "last_sample_ts_ns", p->samples != 0, p->ts);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);

	gmt_json_kv_obj_begin(j, "failed_allocations");
	gmt_json_kv_u64(j, "total", s->fails_total);
	gmt_json_kv_u64(j, "listed", s->n_fails);
	gmt_json_kv_arr_begin(j, "items");
	for (size_t i = 0; i < s->n_fails; i++) {
		const gmt_fail_summary_t *x = &s->fails[i];
		gmt_json_obj_begin(j);
		j_when(j, s, 1, x->ts);
		j_phase(j, s, sp && sp->ran ? &sp->fail[i] : NULL);
		gmt_json_kv_i64(j, "device", x->device);
		gmt_json_kv_u64(j, "requested_bytes", x->size);
		gmt_json_kv_str(j, "kind", gmt_kind_name(x->kind));
		gmt_json_kv_str(j, "api", gmt_api_name(x->api));
		gmt_json_kv_str(j, "owner", gmt_owner_name(x->owner));
		gmt_json_kv_u64(j, "result", x->result);
		gmt_json_kv_str(j, "result_name", gmt_curesult_name(x->result));
		gmt_json_kv_u64(j, "stream", x->stream);
		gmt_json_kv_obj_begin(j, "live_on_device");
		j_comp(j, &x->live);
		gmt_json_obj_end(j);
		j_opt_u64(j, "meminfo_free_bytes", x->has_meminfo, x->meminfo_free);
		j_opt_u64(j, "meminfo_ts_ns", x->has_meminfo, x->meminfo_ts);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);

	gmt_json_kv_obj_begin(j, "drops");
	gmt_json_kv_u64(j, "events", s->drops_total);
	gmt_json_kv_u64(j, "records", s->drop_records);
	gmt_json_kv_arr_begin(j, "listed");
	for (size_t i = 0; i < s->n_drops; i++) {
		const gmt_drop_summary_t *d = &s->drops[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "count", d->count);
		gmt_json_kv_str(j, "reason", d->reason);
		gmt_json_kv_i64(j, "errno", d->err);
		gmt_json_kv_u64(j, "first_ts_ns", d->first_ts);
		gmt_json_kv_u64(j, "last_ts_ns", d->last_ts);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);

	gmt_json_key(j, "end");
	if (s->has_end) {
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "ts_ns", s->end.ts);
		gmt_json_kv_u64(j, "written", s->end.written);
		gmt_json_kv_u64(j, "dropped", s->end.dropped);
		gmt_json_kv_u64(j, "late", s->end.late);
		gmt_json_obj_end(j);
	} else {
		gmt_json_null(j);
	}
	gmt_json_kv_obj_begin(j, "process_end");
	gmt_json_kv_str(j, "how", s->process_end ? s->process_end : "cut");
	gmt_json_kv_i64(j, "value", s->process_end_value);
	gmt_json_obj_end(j);
	gmt_json_kv_bool(j, "phases_looked_up", sp && sp->ran);

	gmt_json_kv_obj_begin(j, "anomalies");
	{
		const gmt_anomalies_t *a = &s->anom;
		gmt_json_kv_u64(j, "overlapping_allocations", a->overlapping_allocations);
		gmt_json_kv_u64(j, "unmatched_frees", a->unmatched_frees);
		gmt_json_kv_u64(j, "null_frees", a->null_frees);
		gmt_json_kv_u64(j, "voided_frees", a->voided_frees);
		gmt_json_kv_u64(j, "unmatched_free_fails", a->unmatched_free_fails);
		gmt_json_kv_u64(j, "overlapping_vmm_handles", a->overlapping_vmm_handles);
		gmt_json_kv_u64(j, "unmatched_vmm_releases", a->unmatched_vmm_releases);
		gmt_json_kv_u64(j, "unmatched_vmm_retains", a->unmatched_vmm_retains);
		gmt_json_kv_u64(j, "unmatched_maps", a->unmatched_maps);
		gmt_json_kv_u64(j, "overlapping_maps", a->overlapping_maps);
		gmt_json_kv_u64(j, "unmatched_unmaps", a->unmatched_unmaps);
		gmt_json_kv_u64(j, "overlapping_reserves", a->overlapping_reserves);
		gmt_json_kv_u64(j, "unmatched_addr_frees", a->unmatched_addr_frees);
		gmt_json_kv_u64(j, "unknown_kinds", a->unknown_kinds);
		gmt_json_kv_u64(j, "ambiguous_ctx_destroys", a->ambiguous_ctx_destroys);
	}
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
}

