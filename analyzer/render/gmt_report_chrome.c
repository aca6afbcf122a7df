/*
 * gmt_report_chrome.c - `export --format chrome`: the report model
 * (model/gmt_report_model.h) as Chrome trace event JSON through
 * export/gmt_chrome.c (docs/exports.md). Per physical device one track
 * (a "process" of the file, its pid above every traced pid) with the
 * counters held, allocated, reserved, outside the framework by owner and
 * device used, the model's merged instants within an event budget, and the
 * failed allocations as instants; per traced process its phase occurrences
 * as complete slices on the thread that began them (once each, even when
 * the occurrence touched several devices). Times are ns after the earliest
 * event of all the traces. Every number is the model's. With --json the
 * same keys go into the command's document, beside its own (tool,
 * command, format, traces): still a file the viewers open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_chrome.h"
#include "model/gmt_report_model.h"
#include "render/gmt_render.h"
#include "support/gmt_u64map.h"

/* The counters, in this order: held, allocated, reserved, outside by owner,
   device used. */
#define NC (3 + GMT_DOWNERS + 1)

typedef struct feed {
	gmt_chrome_counters_t *cc;
	uint64_t t0;
} feed_t;

static int feed_instant(void *ctx, const gmt_rm_instant_t *in)
{
	feed_t *x = ctx;
	uint64_t v[NC];
	uint8_t k[NC];
	v[0] = in->held;
	k[0] = 1;
	v[1] = in->allocated;
	k[1] = in->has_allocated;
	v[2] = in->reserved;
	k[2] = in->has_reserved;
	for (unsigned w = 0; w < GMT_DOWNERS; w++) {
		v[3 + w] = in->v[GMT_RM_OUTSIDE + w];
		k[3 + w] = 1;
	}
	v[NC - 1] = in->v[GMT_RM_USED];
	k[NC - 1] = in->known[GMT_RM_USED];
	return gmt_chrome_counters_add(x->cc, in->ts - x->t0, v, k);
}

uint64_t gmt_report_chrome_device_pid(const gmt_report_model_t *m, size_t dev)
{
	uint64_t max = 0;
	for (size_t i = 0; i < m->n_traces; i++)
		max = m->traces[i].s->pid > max ? m->traces[i].s->pid : max;
	return (max / 1000000 + 1) * 1000000 + dev;
}

static int device_track(gmt_chrome_t *c, const gmt_report_model_t *m, size_t di, uint64_t origin,
			size_t budget)
{
	const gmt_rm_device_t *d = &m->devices[di];
	uint64_t pid = gmt_report_chrome_device_pid(m, di);
	char label[700];
	int n = snprintf(label, sizeof(label), "device %d: %s on %s (", d->ordinal, *d->name ? d->name : "?",
			 *d->host ? d->host : "?");
	for (size_t k = 0; k < d->n_members && n > 0 && (size_t)n < sizeof(label); k++)
		n += snprintf(label + n, sizeof(label) - (size_t)n, "%spid %" PRIu64, k ? ", " : "",
			      m->traces[d->members[k].trace].s->pid);
	if (n > 0 && (size_t)n < sizeof(label))
		snprintf(label + n, sizeof(label) - (size_t)n, ")");
	gmt_chrome_process_name(c, pid, label);
	char names[NC][64];
	const char *np[NC];
	snprintf(names[0], 64, "taken (bytes)");
	snprintf(names[1], 64, "allocated (bytes)");
	snprintf(names[2], 64, "reserved (bytes)");
	for (unsigned w = 0; w < GMT_DOWNERS; w++)
		snprintf(names[3 + w], 64, "outside %s (bytes)", gmt_downer_key(w));
	snprintf(names[NC - 1], 64, "device used (bytes)");
	for (unsigned s = 0; s < NC; s++)
		np[s] = names[s];
	feed_t x = { NULL, d->t0 };
	if (d->instants) {
		x.cc = gmt_chrome_counters_begin(c, pid, np, NC, d->t0 - origin, d->t_end - d->t0, d->instants,
						 budget);
		if (!x.cc)
			return -ENOMEM;
		int rc = gmt_report_each_instant(m, di, feed_instant, &x);
		gmt_chrome_counters_end(x.cc);
		if (rc)
			return rc < 0 ? rc : -EINVAL;
	}
	for (size_t j = 0; j < d->n_fails; j++) {
		const gmt_rm_fail_t *fl = &d->fails[j];
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%" PRIu64, m->traces[d->members[fl->member].trace].s->pid);
		const char *kv[] = { "process", pidbuf, "kind", gmt_dkind_key(fl->f->kind),
				     "result", fl->result_name ? fl->result_name : "?" };
		gmt_chrome_instant(c, pid, 0, "failed allocation", fl->f->ts - origin, fl->f->size, kv, 3);
	}
	return 0;
}

int gmt_report_chrome(FILE *out, gmt_json_t *j, const gmt_report_model_t *m, size_t max_events)
{
	uint64_t origin = UINT64_MAX;
	for (size_t i = 0; i < m->n_devices; i++)
		origin = m->devices[i].t0 < origin ? m->devices[i].t0 : origin;
	for (size_t i = 0; i < m->n_traces; i++)
		if (m->traces[i].s->have_ts && m->traces[i].s->first_ts < origin)
			origin = m->traces[i].s->first_ts;
	if (origin == UINT64_MAX)
		origin = 0;
	gmt_chrome_t *c;
	if (j) {
		/* --json: the command's document, the trace event file's keys in it */
		gmt_json_kv_str(j, "format", "chrome");
		gmt_json_kv_arr_begin(j, "traces");
		for (size_t i = 0; i < m->n_traces; i++) {
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "file", m->traces[i].file);
			gmt_json_kv_str(j, "status", m->traces[i].status_key);
			gmt_report_gaps_json_read(j, &m->traces[i].s->gaps, &m->traces[i].res);
			gmt_missing_json_res(j, NULL, &m->traces[i].res);
			gmt_json_kv_u64(j, "pid", m->traces[i].s->pid);
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		c = gmt_chrome_open_in(j);
	} else {
		c = gmt_chrome_open(out);
	}
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_traces; i++) {
		const gmt_summary_t *s = m->traces[i].s;
		char name[600];
		snprintf(name, sizeof(name), "%s (pid %" PRIu64 ")", s->exe && *s->exe ? s->exe : m->traces[i].file,
			 s->pid);
		gmt_chrome_process_name(c, s->pid, name);
	}
	size_t budget = m->n_devices ? max_events / m->n_devices : max_events;
	int rc = 0;
	for (size_t i = 0; i < m->n_devices && !rc; i++)
		rc = device_track(c, m, i, origin, budget ? budget : 1);
	/* phase occurrences: once per (trace, name, occurrence) */
	gmt_u64map_t seen, threads;
	memset(&seen, 0, sizeof(seen));
	memset(&threads, 0, sizeof(threads));
	for (size_t i = 0; i < m->n_devices && !rc; i++) {
		const gmt_rm_device_t *d = &m->devices[i];
		for (size_t k = 0; k < d->n_phases && !rc; k++) {
			const gmt_rm_phase_t *p = &d->phases[k];
			size_t ti = d->members[p->member].trace;
			uint64_t key = ((uint64_t)ti << 48) ^ ((uint64_t)p->name_index << 32) ^ p->k;
			int existed;
			if (!gmt_u64map_put(&seen, key, &existed)) {
				rc = -ENOMEM;
				break;
			}
			if (existed)
				continue;
			const gmt_summary_t *s = m->traces[ti].s;
			char occ[64], thr[32];
			snprintf(occ, sizeof(occ), "%" PRIu64 " (%s)", p->k, p->k == 1 ? "cold" : "warm");
			snprintf(thr, sizeof(thr), "thread %" PRIu32, p->thread);
			const char *kv[] = { "occurrence", occ,
					     "status", p->failed ? "failed" : p->ended ? "ended" : "not ended" };
			if (!gmt_u64map_put(&threads, ((uint64_t)ti << 32) | p->thread, &existed)) {
				rc = -ENOMEM;
				break;
			}
			if (!existed)
				gmt_chrome_thread_name(c, s->pid, p->thread, thr);
			gmt_chrome_slice(c, s->pid, p->thread, p->name ? p->name : "?", p->begin_ts - origin,
					 p->end_ts - p->begin_ts, kv, 2);
		}
	}
	free(seen.s);
	free(threads.s);
	int r = gmt_chrome_close(c);
	return rc ? rc : r;
}
