/* unit_tracer_catchup: a writer that is behind compresses at a fast level
 * until it has caught up (tracer/gmt_writer.c, frame_level), and the trace
 * stays exact:
 *   calm    20 rounds of 1,000 events, each flushed: the buffer never
 *           holds half its limit, no frame is compressed at the fast
 *           level nor by the compressor thread;
 *   behind  a disk that stopped (gmt_tracer_test_hold_writes) while
 *           events are emitted into an 8 MiB buffer until it holds over
 *           half of it (the writer, blocked in its write, holds at most a
 *           frame's worth; no drop): once the disk works again, frames are
 *           compressed at
 *           the fast level; every event reads back in order with its address, size and
 *           allocation's address, none dropped;
 *   lost    the same backlog (64 MiB buffer: about ten frames to write,
 *           written by the final round at shutdown, all but its last
 *           compressed by the compressor thread while the writer encodes
 *           the next), and the disk fails once
 *           (the 5th write): a frame in flight that is lost takes the one
 *           encoded after it along (one run of lost events), and the
 *           frames after them say so once; the trace still reads to its END, every event in it is
 *           one of those emitted, in order, each lost one is counted
 *           once (written + dropped = emitted, the DROPS records' sum =
 *           END's dropped = the writer's count).
 * Each case runs in its own child process. */
#include <errno.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define CALM_ROUNDS 20
#define CALM_EVENTS 1000
#define BEHIND_MAX 2000000   /* never over half by then: the test is broken */

static char path[4200];

static int in_child(void (*fn)(void))
{
	return coll_in_child(fn, path, sizeof(path));
}

/* Event i: alternately an allocation and the free of the one before it,
 * sizes and addresses varying (a stream that compresses like a real one). */
static gmt_event_t ev_of(uint64_t i)
{
	uint64_t k = i / 2;
	gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
			  .addr = 0x7000000000ull + (k * 2654435761u % 65536) * 4096,
			  .size = (i & 1) ? 0 : 512 + (k * 40503u % 8192) * 64,
			  .device = (i & 1) ? -1 : 0 };
	return e;
}

/* Emits ev(0), ev(1), ... by thousands until the buffer holds over 5/8 of
 * its limit (writes held) or max events went; returns how many, *st the
 * stats after the last thousand. */
static uint64_t fill_past_five_eighths(gmt_event_t (*ev)(uint64_t), uint64_t max,
				       gmt_tracer_stats_t *st)
{
	uint64_t n = 0;
	do {
		for (int k = 0; k < 1000; k++) {
			gmt_event_t e = ev(n++);
			gmt_emit(&e, 0, 0);
		}
		gmt_tracer_get_stats(st);
	} while (st->buffered * 8 <= st->buffer_limit * 5 && n < max);
	return n;
}

static gmt_config_t config(const char *name)
{
	gmt_config_t cfg = test_config(test_dir(name));
	cfg.buffer_bytes = 8u << 20;
	cfg.buffer_ms = 0;   /* the limit is the cap: half of it is 4 MiB */
	cfg.zstd_level = 1;
	return cfg;
}

static void calm(void)
{
	gmt_config_t cfg = config("calm");
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	uint64_t n = 0;
	for (int r = 0; r < CALM_ROUNDS; r++) {
		for (int k = 0; k < CALM_EVENTS; k++) {
			gmt_event_t e = ev_of(n++);
			gmt_emit(&e, 0, 0);
		}
		CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	}
	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(0, st.frames_fast);
	CHECK_EQ_U64(0, st.frames_async);   /* no backlog: no compressor */
	CHECK_EQ_U64(n, st.written);
	gmt_tracer_shutdown();
}

static void behind(void)
{
	gmt_config_t cfg = config("behind");
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	gmt_tracer_test_hold_writes(1);
	/* The writer takes at most a frame's worth before it blocks in its
	 * write; the rest stays in the buffer. Emitted until the buffer holds
	 * over half its limit (5/8 of it: 3 MiB short of a drop). */
	gmt_tracer_stats_t st;
	uint64_t n = fill_past_five_eighths(ev_of, BEHIND_MAX, &st);
	CHECK(st.buffered * 2 > st.buffer_limit);   /* the premise: over half */
	CHECK_EQ_U64(0, st.dropped);
	gmt_tracer_test_hold_writes(0);
	CHECK_EQ_U64(0, gmt_tracer_flush(60000));
	gmt_tracer_get_stats(&st);
	fprintf(stderr, "behind: %llu events, %llu frames at the fast level\n", (unsigned long long)n,
		(unsigned long long)st.frames_fast);
	CHECK(st.frames_fast >= 1);
	CHECK_EQ_U64(n, st.written);
	CHECK_EQ_U64(0, st.dropped);
	gmt_tracer_shutdown();
	char npath[4300];
	snprintf(npath, sizeof(npath), "%s.emitted", path);
	FILE *f = fopen(npath, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%llu\n", (unsigned long long)n);
		fclose(f);
	}
}

/* The lost case's stream: coll_pair_ev (16 blocks live from the 16th
 * pair on, so that a frame's frees name allocations of the frames before
 * it by their ids; every block has its own address). */
static gmt_event_t lost_ev(uint64_t i)
{
	return coll_pair_ev(i);
}

/* A backlog of about ten frames, one write failing on the way. */

static void lost(void)
{
	gmt_config_t cfg = config("lost");
	cfg.buffer_bytes = 64u << 20;
	cfg.test_fail_write_after = 5;
	cfg.test_fail_errno = ENOSPC;
	cfg.test_fail_count = 1;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	gmt_tracer_test_hold_writes(1);
	gmt_tracer_stats_t st;
	uint64_t n = fill_past_five_eighths(lost_ev, 4 * BEHIND_MAX, &st);
	CHECK(st.buffered * 2 > st.buffer_limit);
	CHECK_EQ_U64(0, st.dropped);
	/* the backlog written by the final round: its frames beyond the first
	 * by the compressor */
	gmt_tracer_test_hold_writes(0);
	gmt_tracer_shutdown();
	gmt_tracer_get_stats(&st);
	fprintf(stderr, "lost: %llu events, %llu written, %llu dropped, %llu frames by the compressor\n",
		(unsigned long long)n, (unsigned long long)st.written, (unsigned long long)st.dropped,
		(unsigned long long)st.frames_async);
	CHECK(st.frames_async >= 2);
	CHECK(st.dropped > 0);
	CHECK_EQ_U64(n, st.written + st.dropped);
	char npath[4300];
	snprintf(npath, sizeof(npath), "%s.emitted", path);
	FILE *f = fopen(npath, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%llu %llu %llu\n", (unsigned long long)n, (unsigned long long)st.written,
			(unsigned long long)st.dropped);
		fclose(f);
	}
}

/* The lost case's trace: what it holds is what was written, each event one
 * of lost_ev(0..n), in order; the losses counted once. */
static void check_lost(uint64_t n, uint64_t written, uint64_t dropped)
{
	coll_t *c = coll_decode_ended(path, written, dropped);
	CHECK_EQ_U64(1, c->drops_records);   /* said once, after the loss */
	CHECK_EQ_U64(dropped, c->drops_write);
	CHECK_EQ_U64(ENOSPC, c->drops_errno);
	CHECK_EQ_U64(n, c->n + c->end.dropped);
	/* The events written are runs of lost_ev(0..n) in order; what lies
	 * between runs was lost: whole frames, one run of them per failed
	 * write, adding up to what was counted as dropped. */
	uint64_t gaps = 0, gap_events = 0;
	CHECK_EQ_U64(0, coll_runs(c, lost_ev, n, &gaps, &gap_events));
	CHECK_EQ_U64(1, gaps);
	CHECK_EQ_U64(dropped, gap_events);
	coll_free(c);
	free(c);
}

/* Every event of the trace is ev_of(0..n) in order. */
static void check_trace(uint64_t n)
{
	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(n, c->n);
	CHECK_EQ_U64(0, c->drops_total);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < c->n && i < n; i++) {
		gmt_event_t e = ev_of(i);
		const gmt_devent_t *d = &c->ev[i];
		if (d->type != e.type || d->addr != e.addr || d->size != e.size ||
		    (i && d->ts < c->ev[i - 1].ts))
			bad++;
	}
	CHECK_EQ_U64(0, bad);
	coll_free(c);
	free(c);
}

int main(void)
{
	CHECK_EQ_U64(0, in_child(calm));
	check_trace((uint64_t)CALM_ROUNDS * CALM_EVENTS);
	/* the child's count, from its file beside the trace */
	CHECK_EQ_U64(0, in_child(behind));
	char npath[4300];
	snprintf(npath, sizeof(npath), "%s.emitted", path);
	unsigned long long n = 0;
	FILE *f = fopen(npath, "r");
	CHECK(f != NULL && fscanf(f, "%llu", &n) == 1);
	if (f)
		fclose(f);
	CHECK(n >= 60000);
	check_trace(n);
	CHECK_EQ_U64(0, in_child(lost));
	unsigned long long ln = 0, lw = 0, ld = 0;
	snprintf(npath, sizeof(npath), "%s.emitted", path);
	f = fopen(npath, "r");
	CHECK(f != NULL && fscanf(f, "%llu %llu %llu", &ln, &lw, &ld) == 3);
	if (f)
		fclose(f);
	check_lost(ln, lw, ld);
	TEST_DONE();
}
