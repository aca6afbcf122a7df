/*
 * gmt_timeline.c - merges a trace's main and side streams into one time
 * line (the mechanism is described in gmt_timeline.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_timeline.h"

#define SPILL_BUF 4096

typedef struct tl {
	const gmt_timeline_sink_t *sink;
	int pass;
	int side_seen;
	FILE *spill;
	uint64_t spilled;            /* side events written to the spill */
	uint64_t side_left;          /* pass 2: not yet read back */
	gmt_devent_t buf[SPILL_BUF]; /* pass 2: read-back buffer */
	size_t buf_n, buf_i;
	int err;                     /* errno of a spill failure */
	gmt_timeline_stats_t st;
} tl_t;

/* ---- metadata forwarding ------------------------------------------------ */

#define SINKV(c) (((tl_t *)(c))->sink->meta)

static int f_header(void *c, const gmt_header_t *h)
{
	return SINKV(c).header ? SINKV(c).header(SINKV(c).ctx, h) : 0;
}
static int f_thread(void *c, uint32_t idx, uint64_t tid, const char *name)
{
	return SINKV(c).thread ? SINKV(c).thread(SINKV(c).ctx, idx, tid, name) : 0;
}
static int f_module(void *c, const gmt_module_t *m)
{
	return SINKV(c).module ? SINKV(c).module(SINKV(c).ctx, m) : 0;
}
static int f_module_unload(void *c, uint32_t id, uint64_t ts)
{
	return SINKV(c).module_unload ? SINKV(c).module_unload(SINKV(c).ctx, id, ts) : 0;
}
static int f_stack(void *c, uint32_t id, const uint64_t *frames, size_t n)
{
	return SINKV(c).stack ? SINKV(c).stack(SINKV(c).ctx, id, frames, n) : 0;
}
static int f_device(void *c, const gmt_device_rec_t *d)
{
	return SINKV(c).device ? SINKV(c).device(SINKV(c).ctx, d) : 0;
}
static int f_drops(void *c, const gmt_drops_t *d)
{
	return SINKV(c).drops ? SINKV(c).drops(SINKV(c).ctx, d) : 0;
}
static int f_string(void *c, uint32_t id, const char *text, size_t len)
{
	return SINKV(c).string ? SINKV(c).string(SINKV(c).ctx, id, text, len) : 0;
}
static int f_end(void *c, const gmt_end_t *e)
{
	return SINKV(c).end ? SINKV(c).end(SINKV(c).ctx, e) : 0;
}
static int f_meta(void *c, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	return SINKV(c).meta ? SINKV(c).meta(SINKV(c).ctx, ts, kv, n) : 0;
}
static int f_text_stack(void *c, uint32_t id, const char *const *frames, size_t n)
{
	return SINKV(c).text_stack ? SINKV(c).text_stack(SINKV(c).ctx, id, frames, n) : 0;
}

/* ---- events ------------------------------------------------------------- */

static int spill(tl_t *t, const gmt_devent_t *ev, size_t n)
{
	if (t->err)
		return -t->err;
	if (!t->spill && !(t->spill = tmpfile())) {
		t->err = errno ? errno : EIO;
		return -t->err;
	}
	if (fwrite(ev, sizeof(*ev), n, t->spill) != n) {
		t->err = errno ? errno : EIO;
		return -t->err;
	}
	t->spilled += n;
	return 0;
}

static int ev_pass1(void *c, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	tl_t *t = c;
	if (flags & GMT_EVENTS_SIDE) {
		t->side_seen = 1;
		t->st.side_events += n;
		return spill(t, ev, n);
	}
	t->st.main_events += n;
	if (t->side_seen)
		return 0;   /* pass 2 will deliver these, merged */
	for (size_t i = 0; i < n; i++) {
		int rc = t->sink->event(t->sink->ctx, &ev[i], 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* The next spilled side event, or NULL when none is left. */
static const gmt_devent_t *side_peek(tl_t *t)
{
	if (t->buf_i < t->buf_n)
		return &t->buf[t->buf_i];
	if (!t->side_left)
		return NULL;
	size_t want = t->side_left < SPILL_BUF ? (size_t)t->side_left : SPILL_BUF;
	size_t got = fread(t->buf, sizeof(t->buf[0]), want, t->spill);
	if (got != want) {
		t->err = EIO;
		t->side_left = 0;
		if (!got)
			return NULL;
	} else {
		t->side_left -= got;
	}
	t->buf_n = got;
	t->buf_i = 0;
	return &t->buf[0];
}

/* Delivers the side events with ts <= limit (all when all is set). */
static int side_upto(tl_t *t, uint64_t limit, int all)
{
	const gmt_devent_t *s;
	while ((s = side_peek(t)) && (all || s->ts <= limit)) {
		t->buf_i++;
		int rc = t->sink->event(t->sink->ctx, s, 1);
		if (rc)
			return rc;
	}
	return t->err ? -t->err : 0;
}

static int ev_pass2(void *c, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	tl_t *t = c;
	if (flags & GMT_EVENTS_SIDE)
		return 0;   /* delivered from the spill */
	for (size_t i = 0; i < n; i++) {
		int rc = side_upto(t, ev[i].ts, 0);
		if (rc || (rc = t->sink->event(t->sink->ctx, &ev[i], 0)))
			return rc;
	}
	return 0;
}

int gmt_timeline_run(const char *path, const gmt_timeline_sink_t *sink,
		     gmt_decode_result_t *res, gmt_timeline_stats_t *st)
{
	static tl_t zero;
	tl_t *t = malloc(sizeof(*t));
	gmt_visitor_t v = {
		.header = f_header, .thread = f_thread, .module = f_module,
		.module_unload = f_module_unload, .stack = f_stack, .device = f_device,
		.drops = f_drops, .string = f_string, .end = f_end, .meta = f_meta,
		.text_stack = f_text_stack, .events = ev_pass1,
	};
	int rc;
	memset(res, 0, sizeof(*res));
	if (!t) {
		res->status = GMT_DECODE_STOPPED;
		snprintf(res->message, sizeof(res->message), "%s: out of memory", path);
		return res->status;
	}
	*t = zero;
	t->sink = sink;
	v.ctx = t;

	t->pass = 1;
	t->st.passes = 1;
	rc = sink->reset ? sink->reset(sink->ctx, 1) : 0;
	if (!rc)
		gmt_decode_file(path, &v, res);
	else
		res->status = GMT_DECODE_STOPPED;
	if (t->side_seen && !t->err && res->status != GMT_DECODE_STOPPED &&
	    res->status != GMT_DECODE_IO && res->status != GMT_DECODE_REFUSED) {
		/* Pass 2: the file again, merged with the spill. */
		t->pass = 2;
		t->st.passes = 2;
		t->side_left = t->spilled;
		t->buf_n = t->buf_i = 0;
		rewind(t->spill);
		v.events = ev_pass2;
		rc = sink->reset ? sink->reset(sink->ctx, 2) : 0;
		if (!rc) {
			gmt_decode_file(path, &v, res);
			if (res->status != GMT_DECODE_STOPPED && side_upto(t, 0, 1))
				res->status = GMT_DECODE_STOPPED;
		} else {
			res->status = GMT_DECODE_STOPPED;
		}
	}
	if (t->err) {
		res->status = GMT_DECODE_STOPPED;
		snprintf(res->message, sizeof(res->message),
			 "%s: offset %llu: temporary file for the side stream: %s", path,
			 (unsigned long long)res->bytes_ok, strerror(t->err));
	} else if (res->status == GMT_DECODE_STOPPED) {
		snprintf(res->message, sizeof(res->message),
			 "%s: offset %llu: out of memory while analysing", path,
			 (unsigned long long)res->bytes_ok);
	}
	if (st)
		*st = t->st;
	if (t->spill)
		fclose(t->spill);
	free(t);
	return res->status;
}
