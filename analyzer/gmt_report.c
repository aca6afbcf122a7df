/*
 * gmt_report.c - renders a gmt_summary_t as a human report or as JSON
 * (schemas/report.schema.json). Bytes are exact integers everywhere; the
 * text adds one conversion with its binary unit named (KiB, MiB, GiB, TiB).
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "gmt_replay.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif


const char *gmt_curesult_name(unsigned code)
{
	static const struct { unsigned code; const char *name; } t[] = {
		{ 0, "CUDA_SUCCESS" },
		{ 1, "CUDA_ERROR_INVALID_VALUE" },
		{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ 3, "CUDA_ERROR_NOT_INITIALIZED" },
		{ 4, "CUDA_ERROR_DEINITIALIZED" },
		{ 34, "CUDA_ERROR_STUB_LIBRARY" },
		{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER" },
		{ 46, "CUDA_ERROR_DEVICE_UNAVAILABLE" },
		{ 100, "CUDA_ERROR_NO_DEVICE" },
		{ 101, "CUDA_ERROR_INVALID_DEVICE" },
		{ 201, "CUDA_ERROR_INVALID_CONTEXT" },
		{ 208, "CUDA_ERROR_ALREADY_MAPPED" },
		{ 211, "CUDA_ERROR_NOT_MAPPED" },
		{ 214, "CUDA_ERROR_ECC_UNCORRECTABLE" },
		{ 304, "CUDA_ERROR_OPERATING_SYSTEM" },
		{ 400, "CUDA_ERROR_INVALID_HANDLE" },
		{ 401, "CUDA_ERROR_ILLEGAL_STATE" },
		{ 500, "CUDA_ERROR_NOT_FOUND" },
		{ 600, "CUDA_ERROR_NOT_READY" },
		{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED" },
		{ 719, "CUDA_ERROR_LAUNCH_FAILED" },
		{ 800, "CUDA_ERROR_NOT_PERMITTED" },
		{ 801, "CUDA_ERROR_NOT_SUPPORTED" },
		{ 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" },
		{ 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" },
		{ 999, "CUDA_ERROR_UNKNOWN" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *gmt_fmt_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	double v = (double)b / 1024.0;
	if (!b) {
		snprintf(buf, len, "0 B");
		return buf;
	}
	while (u < 3 && b >= (uint64_t)1 << (10 * (u + 2))) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " B (%.2f %s)", b, v, unit[u]);
	return buf;
}

const char *gmt_fmt_utc(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[40];
	if (!gmtime_r(&sec, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(date, sizeof(date), "?");
	snprintf(buf, len, "%s.%09" PRIu64 "Z", date, ns % 1000000000u);
	return buf;
}

/* Seconds from the first event to ts (negative for a late event before it). */
static double since_s(const gmt_summary_t *s, uint64_t ts)
{
	return (double)(int64_t)(ts - s->first_ts) / 1e9;
}

static uint64_t realtime_of(const gmt_summary_t *s, uint64_t mono)
{
	return mono + (s->clock_realtime_ns - s->clock_monotonic_ns);
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

static void uuid_str(char *buf, const uint8_t *u)
{
	static const char hx[] = "0123456789abcdef";
	char *p = buf + sprintf(buf, "GPU-");
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hx[u[i] >> 4];
		*p++ = hx[u[i] & 15];
	}
	*p = 0;
}

/* ---- text -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1 for ASCII), 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;  /* also stops at the NUL */
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Prints s with control characters and invalid UTF-8 replaced by '?': the
 * report stays one line per item whatever the trace holds. */
static void tputs(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	while (*p) {
		size_t n = utf8_len(p);
		if (n && *p >= 0x20 && *p != 0x7f) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputc('?', f);
			p++;
		}
	}
}

static void t_when(FILE *f, const gmt_summary_t *s, uint64_t ts)
{
	char b[64];
	fprintf(f, "ts %" PRIu64 " ns, %+.9f s after the first event", ts, since_s(s, ts));
	if (s->has_header)
		fprintf(f, " (%s)", gmt_fmt_utc(b, sizeof(b), realtime_of(s, ts)));
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

static void t_device(FILE *f, const gmt_summary_t *s, const gmt_dev_summary_t *d)
{
	char b[64], u[48];
	if (d->ordinal < 0)
		fprintf(f, "\nEvents that named no device\n");
	else
		fprintf(f, "\nDevice %d", d->ordinal);
	if (d->ordinal >= 0 && d->has_record) {
		uuid_str(u, d->uuid);
		fprintf(f, ": ");
		tputs(f, d->name);
		fprintf(f, "\n  uuid %s, PCI bus id ", u);
		tputs(f, d->pci_bus_id);
		fprintf(f, ", compute capability %d.%d, driver %d.%d (%d)\n  total memory %s\n",
			d->cc_major, d->cc_minor, d->driver_version / 1000,
			(d->driver_version % 1000) / 10, d->driver_version,
			gmt_fmt_bytes(b, sizeof(b), d->total_bytes));
	} else if (d->ordinal >= 0) {
		fprintf(f, " (no device record in the trace)\n");
	}

	fprintf(f, "  Peak device bytes held: %s\n", gmt_fmt_bytes(b, sizeof(b), d->peak.total));
	if (d->peak.total) {
		fprintf(f, "    at ");
		t_when(f, s, d->peak_ts);
		fprintf(f, "\n    composition at that instant:\n");
		t_comp(f, "      ", &d->peak);
	}

	uint64_t sum = 0;
	fprintf(f, "  Independent maxima per kind (each at its own time; they describe no single moment):\n");
	for (int k = 0; k < GMT_DKINDS; k++) {
		sum += d->kind_max[k];
		if (k == 0 && !d->kind_max[0])
			continue;
		fprintf(f, "    %-15s %s", gmt_dkind_key(k), gmt_fmt_bytes(b, sizeof(b), d->kind_max[k]));
		if (d->kind_max[k])
			fprintf(f, " at %+.9f s", since_s(s, d->kind_max_ts[k]));
		fputc('\n', f);
	}
	fprintf(f, "    sum of the maxima: %s (a bound, not a moment)\n", gmt_fmt_bytes(b, sizeof(b), sum));

	fprintf(f, "  Live at the end of the trace: %s\n", gmt_fmt_bytes(b, sizeof(b), d->live.total));
	t_comp(f, "    ", &d->live);
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

int gmt_report_text_status(FILE *f, const gmt_summary_t *s)
{
	fprintf(f, "Trace ");
	tputs(f, s->file);
	fputc('\n', f);
	switch (s->status) {
	case GMT_DECODE_OK:
		if (s->ended_cleanly)
			fprintf(f, "  ended cleanly (END record)\n");
		else
			fprintf(f, "  cut: no end record; the process was killed or is still running\n");
		break;
	case GMT_DECODE_DAMAGED:
		fprintf(f, "  DAMAGED: ");
		tputs(f, s->message);
		fprintf(f, "\n  everything before offset %" PRIu64 " (of %" PRIu64 " bytes) is analysed below\n",
			s->bytes_ok, s->file_size);
		break;
	default:
		fprintf(f, "  not analysed: ");
		tputs(f, s->message);
		fputc('\n', f);
		return 0;
	}
	return 1;
}

void gmt_report_text(FILE *f, const gmt_summary_t *s)
{
	char b[64], b2[64];
	if (!gmt_report_text_status(f, s))
		return;

	if (s->has_header) {
		fprintf(f, "\nProcess\n  pid %" PRIu64 ", ppid %" PRIu64 ", host ", s->pid, s->ppid);
		tputs(f, s->host);
		fprintf(f, "\n  exe ");
		tputs(f, s->exe);
		fprintf(f, "\n  cmdline");
		for (size_t i = 0; i < s->n_cmdline; i++) {
			fputc(' ', f);
			tputs(f, s->cmdline[i]);
		}
		fprintf(f, "\n  gpumemtrace ");
		tputs(f, s->tool_version);
		fprintf(f, ", trace format %u.%u\n", s->format_major, s->format_minor);
		fprintf(f, "  started %s (CLOCK_REALTIME of the header)\n",
			gmt_fmt_utc(b, sizeof(b), s->clock_realtime_ns));
		if (s->n_env) {
			fprintf(f, "  environment (allow-listed):\n");
			for (size_t i = 0; i < s->n_env; i++) {
				fprintf(f, "    ");
				tputs(f, s->env_keys[i]);
				fputc('=', f);
				tputs(f, s->env_values[i]);
				fputc('\n', f);
			}
		}
	} else {
		fprintf(f, "\nProcess: no header record was read\n");
	}
	uint64_t dur = s->have_ts ? s->last_ts - s->first_ts : 0;
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
			t_device(f, s, d);
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
		fprintf(f, "\n    device %d: requested %s, %s via %s, owner %s, stream 0x%" PRIx64
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
	if (s->fails_total > s->n_fails)
		fprintf(f, "  ... %" PRIu64 " more not listed\n", s->fails_total - s->n_fails);

	if (s->drops_total || s->drop_records) {
		fprintf(f, "\nDropped events: %" PRIu64 " in %" PRIu64 " DROPS records\n",
			s->drops_total, s->drop_records);
		for (size_t i = 0; i < s->n_drops; i++) {
			const gmt_drop_summary_t *d = &s->drops[i];
			fprintf(f, "  %" PRIu64 " events (", d->count);
			tputs(f, d->reason);
			fprintf(f, ", errno %d) from %+.9f s to %+.9f s\n", d->err,
				since_s(s, d->first_ts), since_s(s, d->last_ts));
		}
	} else {
		fprintf(f, "\nDropped events: none\n");
	}
	if (s->has_end)
		fprintf(f, "End record: %" PRIu64 " events written, %" PRIu64 " dropped, %" PRIu64 " late\n",
			s->end.written, s->end.dropped, s->end.late);

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

void gmt_text_str(FILE *f, const char *str)
{
	tputs(f, str);
}

/* ---- JSON -------------------------------------------------------------- */

/* Writes s as a JSON string: control characters escaped, invalid UTF-8
 * replaced by U+FFFD so that the document always parses. */
static void jstr(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	fputc('"', f);
	while (*p) {
		unsigned c = *p;
		size_t n = utf8_len(p);
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (n) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		} else {
			fputs("\\ufffd", f);
		}
		p++;
	}
	fputc('"', f);
}

void gmt_json_str(FILE *f, const char *str)
{
	jstr(f, str);
}

const char *gmt_status_key(const gmt_summary_t *s)
{
	return status_key(s);
}

static void jkey(FILE *f, int *first, const char *k)
{
	fprintf(f, "%s\"%s\":", *first ? "" : ",", k);
	*first = 0;
}

static void ju64(FILE *f, int *first, const char *k, uint64_t v)
{
	jkey(f, first, k);
	fprintf(f, "%" PRIu64, v);
}

static void ji(FILE *f, int *first, const char *k, long long v)
{
	jkey(f, first, k);
	fprintf(f, "%lld", v);
}

static void jsec(FILE *f, int *first, const char *k, double v)
{
	jkey(f, first, k);
	fprintf(f, "%.9f", v);
}

static void jstrk(FILE *f, int *first, const char *k, const char *v)
{
	jkey(f, first, k);
	jstr(f, v);
}

static void jnull(FILE *f, int *first, const char *k)
{
	jkey(f, first, k);
	fputs("null", f);
}

static void jbool(FILE *f, int *first, const char *k, int v)
{
	jkey(f, first, k);
	fputs(v ? "true" : "false", f);
}

static void j_kinds(FILE *f, const uint64_t *k)
{
	fputc('{', f);
	for (int i = 0; i < GMT_DKINDS; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", gmt_dkind_key(i), k[i]);
	fputc('}', f);
}

static void j_comp(FILE *f, const gmt_composition_t *c)
{
	fprintf(f, "\"bytes\":%" PRIu64 ",\"by_kind\":", c->total);
	j_kinds(f, c->kind);
	fputs(",\"by_owner\":{", f);
	for (int i = 0; i < GMT_DOWNERS; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", gmt_downer_key(i), c->owner[i]);
	fputc('}', f);
}

/* "ts_ns", "since_first_event_s" and "utc" of a moment (or nulls). */
static void j_when(FILE *f, int *first, const gmt_summary_t *s, int valid, uint64_t ts)
{
	char b[64];
	if (!valid) {
		jnull(f, first, "ts_ns");
		jnull(f, first, "since_first_event_s");
		jnull(f, first, "utc");
		return;
	}
	ju64(f, first, "ts_ns", ts);
	jsec(f, first, "since_first_event_s", since_s(s, ts));
	if (s->has_header)
		jstrk(f, first, "utc", gmt_fmt_utc(b, sizeof(b), realtime_of(s, ts)));
	else
		jnull(f, first, "utc");
}

static void j_device(FILE *f, const gmt_summary_t *s, const gmt_dev_summary_t *d)
{
	int fi = 1;
	char b[64];
	fputc('{', f);
	ji(f, &fi, "ordinal", d->ordinal);
	jkey(f, &fi, "record");
	if (d->has_record) {
		int r = 1;
		fputc('{', f);
		jstrk(f, &r, "name", d->name);
		uuid_str(b, d->uuid);
		jstrk(f, &r, "uuid", b);
		jstrk(f, &r, "pci_bus_id", d->pci_bus_id);
		ju64(f, &r, "total_bytes", d->total_bytes);
		snprintf(b, sizeof(b), "%d.%d", d->cc_major, d->cc_minor);
		jstrk(f, &r, "compute_capability", b);
		ji(f, &r, "driver_version", d->driver_version);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	jkey(f, &fi, "peak");
	fputc('{', f);
	j_comp(f, &d->peak);
	int p = 0;
	j_when(f, &p, s, d->peak.total > 0, d->peak_ts);
	fputc('}', f);

	jkey(f, &fi, "independent_maxima");
	fputs("{\"note\":\"each kind's own maximum over the whole run, each at its own time; "
	      "together they describe no single moment\",\"by_kind\":{", f);
	uint64_t sum = 0;
	for (int k = 0; k < GMT_DKINDS; k++) {
		int m = 1;
		sum += d->kind_max[k];
		fprintf(f, "%s\"%s\":{", k ? "," : "", gmt_dkind_key(k));
		ju64(f, &m, "bytes", d->kind_max[k]);
		if (d->kind_max[k])
			ju64(f, &m, "ts_ns", d->kind_max_ts[k]);
		else
			jnull(f, &m, "ts_ns");
		fputc('}', f);
	}
	fprintf(f, "},\"sum_bytes\":%" PRIu64 ",\"sum_note\":\"an upper bound on the peak, not a moment\"}", sum);

	jkey(f, &fi, "final");
	fputc('{', f);
	j_comp(f, &d->live);
	fputc('}', f);

	jkey(f, &fi, "counts");
	fputc('{', f);
	for (int k = 0; k < GMT_DKINDS; k++)
		fprintf(f, "%s\"%s\":{\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"failed\":%" PRIu64 "}",
			k ? "," : "", gmt_dkind_key(k), d->n_alloc[k], d->n_free[k], d->n_fail[k]);
	fputc('}', f);

	jkey(f, &fi, "contexts");
	fprintf(f, "{\"destroyed\":%" PRIu64 ",\"released_blocks\":%" PRIu64 ",\"released_bytes\":%" PRIu64
		",\"last_release_ts_ns\":", d->ctx_destroys, d->ctx_released_blocks, d->ctx_released_bytes);
	if (d->ctx_released_blocks)
		fprintf(f, "%" PRIu64 "}", d->ctx_release_ts);
	else
		fputs("null}", f);

	jkey(f, &fi, "graph_memory");
	fprintf(f, "{\"captured_allocations\":%" PRIu64 ",\"captured_bytes\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"latest\":", d->graph_captured_allocs, d->graph_captured_bytes, d->graph_samples);
	if (d->graph_samples)
		fprintf(f, "{\"reserved_bytes\":%" PRIu64 ",\"reserved_high_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64
			",\"used_high_bytes\":%" PRIu64 ",\"ts_ns\":%" PRIu64 "}}", d->graph_reserved,
			d->graph_reserved_high, d->graph_used, d->graph_used_high, d->graph_ts);
	else
		fputs("null}", f);

	jkey(f, &fi, "meminfo");
	fprintf(f, "{\"samples\":%" PRIu64 ",\"latest\":", d->meminfo_samples);
	if (d->meminfo_samples)
		fprintf(f, "{\"free_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64 ",\"ts_ns\":%" PRIu64
			"},\"minimum_free\":{\"free_bytes\":%" PRIu64 ",\"ts_ns\":%" PRIu64 "}}",
			d->meminfo_free, d->meminfo_total, d->meminfo_ts, d->meminfo_min_free, d->meminfo_min_ts);
	else
		fputs("null,\"minimum_free\":null}", f);
	fputc('}', f);
}

void gmt_report_json_begin(FILE *f)
{
	fprintf(f, "{\"tool\":\"gpumemtrace-analyze\",\"tool_version\":");
	jstr(f, GMT_VERSION);
	fprintf(f, ",\"command\":\"summary\",\"traces\":[");
}

void gmt_report_json_end(FILE *f)
{
	fputs("]}\n", f);
}

void gmt_report_json(FILE *f, const gmt_summary_t *s, int first)
{
	char b[64];
	int fi = 1;
	int analysed = s->status == GMT_DECODE_OK || s->status == GMT_DECODE_DAMAGED;
	if (!first)
		fputc(',', f);
	fputs("\n{", f);
	jstrk(f, &fi, "file", s->file);
	jstrk(f, &fi, "status", status_key(s));
	jkey(f, &fi, "decode");
	{
		int d = 1;
		fputc('{', f);
		ju64(f, &d, "bytes_ok", s->bytes_ok);
		ju64(f, &d, "file_size", s->file_size);
		ju64(f, &d, "frames", s->frames);
		ju64(f, &d, "records", s->records);
		jbool(f, &d, "ended_cleanly", s->ended_cleanly);
		if (s->status != GMT_DECODE_OK)
			jstrk(f, &d, "message", s->message);
		else
			jnull(f, &d, "message");
		fputc('}', f);
	}
	if (!analysed) {
		fputc('}', f);
		return;
	}

	jkey(f, &fi, "process");
	if (s->has_header) {
		int p = 1;
		fputc('{', f);
		ju64(f, &p, "pid", s->pid);
		ju64(f, &p, "ppid", s->ppid);
		jstrk(f, &p, "host", s->host);
		jstrk(f, &p, "exe", s->exe);
		jkey(f, &p, "cmdline");
		fputc('[', f);
		for (size_t i = 0; i < s->n_cmdline; i++) {
			if (i)
				fputc(',', f);
			jstr(f, s->cmdline[i]);
		}
		fputc(']', f);
		jkey(f, &p, "env");
		fputc('{', f);
		for (size_t i = 0; i < s->n_env; i++) {
			if (i)
				fputc(',', f);
			jstr(f, s->env_keys[i]);
			fputc(':', f);
			jstr(f, s->env_values[i]);
		}
		fputc('}', f);
		jstrk(f, &p, "tool_version", s->tool_version);
		snprintf(b, sizeof(b), "%u.%u", s->format_major, s->format_minor);
		jstrk(f, &p, "format_version", b);
		ju64(f, &p, "clock_monotonic_ns", s->clock_monotonic_ns);
		ju64(f, &p, "clock_realtime_ns", s->clock_realtime_ns);
		jstrk(f, &p, "start_utc", gmt_fmt_utc(b, sizeof(b), s->clock_realtime_ns));
		fputc('}', f);
	} else {
		fputs("null", f);
	}

	jkey(f, &fi, "time");
	{
		int t = 1;
		uint64_t dur = s->have_ts ? s->last_ts - s->first_ts : 0;
		fputc('{', f);
		if (s->have_ts) {
			ju64(f, &t, "first_event_ts_ns", s->first_ts);
			ju64(f, &t, "last_event_ts_ns", s->last_ts);
		} else {
			jnull(f, &t, "first_event_ts_ns");
			jnull(f, &t, "last_event_ts_ns");
		}
		ju64(f, &t, "duration_ns", dur);
		jsec(f, &t, "duration_s", (double)dur / 1e9);
		fputc('}', f);
	}

	jkey(f, &fi, "events");
	{
		int e = 1;
		fputc('{', f);
		ju64(f, &e, "total", s->events);
		ju64(f, &e, "late", s->late_events);
		ju64(f, &e, "side", s->side_events);
		jkey(f, &e, "by_type");
		fputc('{', f);
		int t = 1;
		uint64_t unknown = s->by_type[GMT_EV_TYPE_MAX + 1];
		for (unsigned i = 0; i <= GMT_EV_TYPE_MAX; i++) {
			if (gmt_ev_type_known(i))
				ju64(f, &t, gmt_ev_type_name(i), s->by_type[i]);
			else
				unknown += s->by_type[i];
		}
		ju64(f, &t, "unknown", unknown);
		fputs("}}", f);
	}

	jkey(f, &fi, "devices");
	fputc('[', f);
	int dn = 0;
	for (size_t i = 1; i <= s->n_dev; i++) {
		const gmt_dev_summary_t *d = s->dev[i % s->n_dev];
		if (!dev_reported(d))
			continue;
		if (dn++)
			fputc(',', f);
		j_device(f, s, d);
	}
	fputc(']', f);

	jkey(f, &fi, "host_pinned");
	{
		int h = 1;
		fputc('{', f);
		ju64(f, &h, "peak_bytes", s->host_peak);
		if (s->host_peak)
			ju64(f, &h, "peak_ts_ns", s->host_peak_ts);
		else
			jnull(f, &h, "peak_ts_ns");
		ju64(f, &h, "final_bytes", s->host_live);
		ju64(f, &h, "allocations", s->host_allocs);
		ju64(f, &h, "frees", s->host_frees);
		ju64(f, &h, "failed", s->host_fails);
		ju64(f, &h, "released_with_contexts_bytes", s->host_ctx_released);
		fputc('}', f);
	}

	jkey(f, &fi, "address_space");
	{
		int a = 1;
		fputc('{', f);
		ju64(f, &a, "reserved_peak_bytes", s->va_peak);
		if (s->va_peak)
			ju64(f, &a, "reserved_peak_ts_ns", s->va_peak_ts);
		else
			jnull(f, &a, "reserved_peak_ts_ns");
		ju64(f, &a, "reserved_final_bytes", s->va_live);
		ju64(f, &a, "reservations", s->va_reserves);
		ju64(f, &a, "address_frees", s->va_frees);
		fputc('}', f);
	}

	jkey(f, &fi, "vmm");
	{
		int v = 1;
		fputc('{', f);
		ju64(f, &v, "maps", s->vmm_maps);
		ju64(f, &v, "unmaps", s->vmm_unmaps);
		ju64(f, &v, "map_failures", s->vmm_map_fails);
		ju64(f, &v, "released_while_mapped", s->vmm_released_while_mapped);
		ju64(f, &v, "live_handles_at_end", s->vmm_live_handles);
		ju64(f, &v, "live_mappings_at_end", s->vmm_live_mappings);
		fputc('}', f);
	}

	jkey(f, &fi, "pools");
	fputc('[', f);
	for (size_t i = 0; i < s->n_pools; i++) {
		const gmt_pool_summary_t *p = &s->pools[i];
		int q = 1;
		fputs(i ? ",{" : "{", f);
		ju64(f, &q, "pool", p->pool);
		ji(f, &q, "device", p->device);
		jbool(f, &q, "created", p->created);
		jbool(f, &q, "destroyed", p->destroyed);
		ju64(f, &q, "trims", p->trims);
		ju64(f, &q, "samples", p->samples);
		ju64(f, &q, "reserved_current_bytes", p->reserved_current);
		ju64(f, &q, "reserved_high_bytes", p->reserved_high);
		ju64(f, &q, "used_current_bytes", p->used_current);
		ju64(f, &q, "used_high_bytes", p->used_high);
		if (p->samples)
			ju64(f, &q, "last_sample_ts_ns", p->ts);
		else
			jnull(f, &q, "last_sample_ts_ns");
		fputc('}', f);
	}
	fputc(']', f);

	jkey(f, &fi, "failed_allocations");
	fprintf(f, "{\"total\":%" PRIu64 ",\"listed\":%zu,\"items\":[", s->fails_total, s->n_fails);
	for (size_t i = 0; i < s->n_fails; i++) {
		const gmt_fail_summary_t *x = &s->fails[i];
		const char *rn = gmt_curesult_name(x->result);
		int q = 1;
		fputs(i ? ",{" : "{", f);
		j_when(f, &q, s, 1, x->ts);
		ji(f, &q, "device", x->device);
		ju64(f, &q, "requested_bytes", x->size);
		jstrk(f, &q, "kind", gmt_kind_name(x->kind));
		jstrk(f, &q, "api", gmt_api_name(x->api));
		jstrk(f, &q, "owner", gmt_owner_name(x->owner));
		ju64(f, &q, "result", x->result);
		if (rn)
			jstrk(f, &q, "result_name", rn);
		else
			jnull(f, &q, "result_name");
		ju64(f, &q, "stream", x->stream);
		jkey(f, &q, "live_on_device");
		fputc('{', f);
		j_comp(f, &x->live);
		fputc('}', f);
		if (x->has_meminfo) {
			ju64(f, &q, "meminfo_free_bytes", x->meminfo_free);
			ju64(f, &q, "meminfo_ts_ns", x->meminfo_ts);
		} else {
			jnull(f, &q, "meminfo_free_bytes");
			jnull(f, &q, "meminfo_ts_ns");
		}
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &fi, "drops");
	fprintf(f, "{\"events\":%" PRIu64 ",\"records\":%" PRIu64 ",\"listed\":[", s->drops_total, s->drop_records);
	for (size_t i = 0; i < s->n_drops; i++) {
		const gmt_drop_summary_t *d = &s->drops[i];
		int q = 1;
		fputs(i ? ",{" : "{", f);
		ju64(f, &q, "count", d->count);
		jstrk(f, &q, "reason", d->reason);
		ji(f, &q, "errno", d->err);
		ju64(f, &q, "first_ts_ns", d->first_ts);
		ju64(f, &q, "last_ts_ns", d->last_ts);
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &fi, "end");
	if (s->has_end)
		fprintf(f, "{\"ts_ns\":%" PRIu64 ",\"written\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"late\":%" PRIu64 "}",
			s->end.ts, s->end.written, s->end.dropped, s->end.late);
	else
		fputs("null", f);

	jkey(f, &fi, "anomalies");
	{
		const gmt_anomalies_t *a = &s->anom;
		int q = 1;
		fputc('{', f);
		ju64(f, &q, "overlapping_allocations", a->overlapping_allocations);
		ju64(f, &q, "unmatched_frees", a->unmatched_frees);
		ju64(f, &q, "null_frees", a->null_frees);
		ju64(f, &q, "voided_frees", a->voided_frees);
		ju64(f, &q, "unmatched_free_fails", a->unmatched_free_fails);
		ju64(f, &q, "overlapping_vmm_handles", a->overlapping_vmm_handles);
		ju64(f, &q, "unmatched_vmm_releases", a->unmatched_vmm_releases);
		ju64(f, &q, "unmatched_vmm_retains", a->unmatched_vmm_retains);
		ju64(f, &q, "unmatched_maps", a->unmatched_maps);
		ju64(f, &q, "overlapping_maps", a->overlapping_maps);
		ju64(f, &q, "unmatched_unmaps", a->unmatched_unmaps);
		ju64(f, &q, "overlapping_reserves", a->overlapping_reserves);
		ju64(f, &q, "unmatched_addr_frees", a->unmatched_addr_frees);
		ju64(f, &q, "unknown_kinds", a->unknown_kinds);
		ju64(f, &q, "ambiguous_ctx_destroys", a->ambiguous_ctx_destroys);
		fputc('}', f);
	}
	fputc('}', f);
}
