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
/* How far apart in time a side event and the driver event it is anchored
 * to may be (gmt_timeline.h, "Anchors"): the main events this much ahead are
 * held back in pass 2, at most MAIN_AHEAD_MAX of them. */
#define ANCHOR_NS 1000000ull
#define MAIN_AHEAD_MAX 65536

typedef struct tl {
	const gmt_timeline_sink_t *sink;
	int pass;
	int side_seen;
	FILE *spill;
	uint64_t spilled;            /* side events written to the spill */
	uint64_t side_left;          /* pass 2: not yet read back */
	gmt_devent_t buf[SPILL_BUF]; /* pass 2: read-back buffer (look-ahead) */
	size_t buf_n, buf_i;
	uint64_t side_seq;           /* pass 2: side events delivered */
	/* Pass 2: main events read but not yet delivered, a ring. */
	gmt_devent_t *q;
	size_t q_cap, q_head, q_n;
	uint64_t q_max_ts;           /* the latest ts among them */
	uint64_t main_seq;           /* main events delivered */
	uint64_t last_ts;            /* the last delivered ts */
	/* The side stream's next event is held until main_seq reaches hold
	 * (0: not held; hold_before: it then goes right before that main
	 * event, at its ts); worked out for side event hold_for - 1, final
	 * once hold_done. */
	uint64_t hold, hold_for;
	int hold_done, hold_before;
	/* Side events before side event pull are delivered before the next
	 * main event (worked out for main event pull_for - 1). */
	uint64_t pull, pull_for;
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
	if (t->sink->events)
		return t->sink->events(t->sink->ctx, ev, n);
	for (size_t i = 0; i < n; i++) {
		int rc = t->sink->event(t->sink->ctx, &ev[i], 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* Pending side event k (0: the next one), reading ahead in the spill as
 * needed; NULL past the end or past the read-back buffer. */
static const gmt_devent_t *side_at(tl_t *t, size_t k)
{
	if (t->buf_i + k < t->buf_n)
		return &t->buf[t->buf_i + k];
	if (!t->side_left || k >= SPILL_BUF)
		return NULL;
	size_t keep = t->buf_n - t->buf_i;
	memmove(t->buf, t->buf + t->buf_i, keep * sizeof(t->buf[0]));
	t->buf_i = 0;
	t->buf_n = keep;
	size_t room = SPILL_BUF - keep;
	size_t want = t->side_left < room ? (size_t)t->side_left : room;
	size_t got = fread(t->buf + keep, sizeof(t->buf[0]), want, t->spill);
	if (got != want) {
		t->err = EIO;
		t->side_left = 0;
	} else {
		t->side_left -= got;
	}
	t->buf_n += got;
	return k < t->buf_n ? &t->buf[k] : NULL;
}

static uint64_t plus_window(uint64_t ts)
{
	return ts > UINT64_MAX - ANCHOR_NS ? UINT64_MAX : ts + ANCHOR_NS;
}

static const gmt_devent_t *q_at(const tl_t *t, size_t i)
{
	return &t->q[(t->q_head + i) % t->q_cap];
}

static int is_dev_alloc(const gmt_devent_t *e)
{
	return e->type == GMT_EV_ALLOC && GMT_AUX_KIND(e->aux) != GMT_KIND_HOST;
}

static int is_dev_fail(const gmt_devent_t *e)
{
	return e->type == GMT_EV_ALLOC_FAIL && GMT_AUX_KIND(e->aux) != GMT_KIND_HOST;
}

/* A framework's answer to a failed allocation on its device: it releases
 * memory, takes a segment (the retry worked) or gives up. */
static int is_reaction(const gmt_devent_t *e)
{
	return e->type == GMT_EV_FW_SEGMENT_FREE || e->type == GMT_EV_FW_SEGMENT_UNMAP ||
	       e->type == GMT_EV_FW_SEGMENT_ALLOC || e->type == GMT_EV_FW_SEGMENT_MAP ||
	       e->type == GMT_EV_FW_OOM;
}

/* Works out whether the next side event s must wait for a main event not
 * yet delivered (gmt_timeline.h, "Anchors"): FW_SEGMENT_ALLOC until after
 * the ALLOC of its address; FW_SEGMENT_FREE until right before the FREE of
 * its address; FW_OOM until after the last failed allocation on its device
 * (the last of the failed attempts that no allocation on the device
 * ended). Only main events within ANCHOR_NS after s, and never past a main
 * event that ends the address's life first (a FREE before the ALLOC, an
 * ALLOC before the FREE: a later allocation at the same address). Final
 * once found, or once the look-ahead covers the window. */
static void side_hold(tl_t *t, const gmt_devent_t *s, int eof)
{
	if (t->hold_for == t->side_seq + 1 && t->hold_done)
		return;
	t->hold_for = t->side_seq + 1;
	t->hold = 0;
	t->hold_before = 0;
	t->hold_done = 1;
	if (s->type != GMT_EV_FW_SEGMENT_ALLOC && s->type != GMT_EV_FW_SEGMENT_FREE &&
	    s->type != GMT_EV_FW_OOM)
		return;
	uint64_t lim = plus_window(s->ts);
	for (size_t i = 0; i < t->q_n; i++) {
		const gmt_devent_t *m = q_at(t, i);
		if (m->ts > lim)
			break;
		int same = m->addr == s->addr;
		if (s->type == GMT_EV_FW_SEGMENT_ALLOC) {
			if (same && is_dev_alloc(m))
				t->hold = t->main_seq + i + 1;
			if (same && (is_dev_alloc(m) || m->type == GMT_EV_FREE))
				return;
		} else if (s->type == GMT_EV_FW_SEGMENT_FREE) {
			if (same && m->type == GMT_EV_FREE) {
				t->hold = t->main_seq + i;
				t->hold_before = 1;
			}
			if (same && (is_dev_alloc(m) || m->type == GMT_EV_FREE))
				return;
		} else if (is_dev_fail(m) && m->device == s->device) {
			t->hold = t->main_seq + i + 1;   /* FW_OOM: the last attempt */
		} else if (t->hold && is_dev_alloc(m) && m->device == s->device) {
			return;   /* an allocation worked: that failure was over */
		}
	}
	t->hold_done = eof || t->q_max_ts > lim || t->q_n >= MAIN_AHEAD_MAX;
	if (s->type != GMT_EV_FW_OOM)
		t->hold = 0;   /* not found (yet) */
}

/* Whether side event s answers a failed allocation now at the head of the
 * main events: a release or a segment whose FREE / ALLOC is still ahead
 * (one whose driver event was delivered already is an earlier entry stamped
 * late), or an OOM. */
static int answers(const tl_t *t, const gmt_devent_t *s)
{
	if (s->type == GMT_EV_FW_OOM || s->type == GMT_EV_FW_SEGMENT_MAP ||
	    s->type == GMT_EV_FW_SEGMENT_UNMAP)
		return 1;
	int want_alloc = s->type == GMT_EV_FW_SEGMENT_ALLOC;
	for (size_t i = 0; i < t->q_n; i++) {
		const gmt_devent_t *m = q_at(t, i);
		if (m->addr != s->addr)
			continue;
		if (is_dev_alloc(m))
			return want_alloc;
		if (m->type == GMT_EV_FREE)
			return !want_alloc;
	}
	return 0;
}

/* Works out which side events go before main event m although they are
 * stamped after it (at most ANCHOR_NS after): the history up to the
 * FW_SEGMENT_FREE of m's address when m is a FREE; the history before the
 * framework's answer (a release, a segment, an OOM on m's device: the
 * next such event, however late) when m is a failed allocation. */
static void main_pull(tl_t *t, const gmt_devent_t *m)
{
	if (t->pull_for == t->main_seq + 1)
		return;
	t->pull_for = t->main_seq + 1;
	t->pull = 0;
	int is_free = m->type == GMT_EV_FREE, is_fail = is_dev_fail(m);
	if (!is_free && !is_fail)
		return;
	uint64_t lim = plus_window(m->ts);
	const gmt_devent_t *s;
	for (size_t k = 0; (s = side_at(t, k)); k++) {
		if (is_free && s->type == GMT_EV_FW_SEGMENT_FREE && s->addr == m->addr &&
		    s->ts <= lim) {
			t->pull = t->side_seq + k + 1;
			return;
		}
		if (is_fail && s->device == m->device && is_reaction(s) && answers(t, s)) {
			t->pull = t->side_seq + k;
			return;
		}
		if (s->ts > lim)
			return;
	}
}

/* Delivers the next side event at its ts, at most cap (at cap when at_cap),
 * never before the last delivered ts. */
static int deliver_side(tl_t *t, const gmt_devent_t *s, uint64_t cap, int at_cap)
{
	gmt_devent_t e = *s;
	if (e.ts > cap || at_cap)
		e.ts = cap;
	if (e.ts < t->last_ts)
		e.ts = t->last_ts;
	t->last_ts = e.ts;
	t->buf_i++;
	t->side_seq++;
	return t->sink->event(t->sink->ctx, &e, 1);
}

/* Delivers the side events that go before main event m (m NULL: all that
 * are left). */
static int side_before(tl_t *t, const gmt_devent_t *m, int eof)
{
	const gmt_devent_t *s;
	if (m)
		main_pull(t, m);
	while ((s = side_at(t, 0))) {
		int at_m = 0;
		if (m) {
			if (s->ts > m->ts && t->side_seq >= t->pull)
				break;   /* stamped after m, not pulled */
			side_hold(t, s, eof);
			if (t->hold > t->main_seq)
				break;   /* waits for a main event not yet delivered */
			at_m = t->hold && t->hold_before;
		}
		int rc = deliver_side(t, s, m ? m->ts : UINT64_MAX, at_m);
		if (rc)
			return rc;
	}
	return t->err ? -t->err : 0;
}

/* After main event m, an ALLOC: the history up to the FW_SEGMENT_ALLOC of
 * its address, stamped after it (at most ANCHOR_NS), follows it at its ts. */
static int side_after(tl_t *t, const gmt_devent_t *m, int eof)
{
	if (!is_dev_alloc(m))
		return 0;
	uint64_t lim = plus_window(m->ts), upto = 0;
	const gmt_devent_t *s;
	for (size_t k = 0; (s = side_at(t, k)) && s->ts <= lim; k++) {
		if (s->type == GMT_EV_FW_SEGMENT_ALLOC && s->addr == m->addr) {
			upto = t->side_seq + k + 1;
			break;
		}
	}
	while (t->side_seq < upto && (s = side_at(t, 0))) {
		side_hold(t, s, eof);
		if (t->hold > t->main_seq)
			break;
		int rc = deliver_side(t, s, m->ts, 1);
		if (rc)
			return rc;
	}
	return t->err ? -t->err : 0;
}

/* Delivers the held main events whose look-ahead is complete (all at eof),
 * each after the side events that go before it. */
static int main_flush(tl_t *t, int eof)
{
	while (t->q_n) {
		const gmt_devent_t *m = q_at(t, 0);
		if (!eof && t->q_n < MAIN_AHEAD_MAX && t->q_max_ts <= plus_window(m->ts))
			break;
		int rc = side_before(t, m, eof);
		if (rc)
			return rc;
		gmt_devent_t e = *m;
		t->q_head = (t->q_head + 1) % t->q_cap;
		t->q_n--;
		t->main_seq++;
		if (e.ts > t->last_ts)
			t->last_ts = e.ts;
		if ((rc = t->sink->event(t->sink->ctx, &e, 0)) || (rc = side_after(t, &e, eof)))
			return rc;
	}
	return 0;
}

static int q_push(tl_t *t, const gmt_devent_t *e)
{
	if (t->q_n == t->q_cap) {
		size_t cap = t->q_cap ? t->q_cap * 2 : 1024;
		gmt_devent_t *q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		for (size_t i = 0; i < t->q_n; i++)
			q[i] = *q_at(t, i);
		free(t->q);
		t->q = q;
		t->q_cap = cap;
		t->q_head = 0;
	}
	t->q[(t->q_head + t->q_n) % t->q_cap] = *e;
	t->q_n++;
	if (e->ts > t->q_max_ts)
		t->q_max_ts = e->ts;
	return 0;
}

static int ev_pass2(void *c, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	tl_t *t = c;
	if (flags & GMT_EVENTS_SIDE)
		return 0;   /* delivered from the spill */
	for (size_t i = 0; i < n; i++) {
		int rc = q_push(t, &ev[i]);
		if (rc || (rc = main_flush(t, 0)))
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
			if (res->status != GMT_DECODE_STOPPED &&
			    (main_flush(t, 1) || side_before(t, NULL, 1)))
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
	free(t->q);
	free(t);
	return res->status;
}
