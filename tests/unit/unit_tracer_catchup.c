/* unit_tracer_catchup: a writer that is behind compresses at a fast level
 * until it has caught up (tracer/gmt_writer.c, frame_level), and the trace
 * stays exact:
 *   calm    20 rounds of 1,000 events, each flushed: the buffer never
 *           holds half its limit, no frame is compressed at the fast
 *           level;
 *   behind  a disk that stopped (gmt_tracer_test_hold_writes) while
 *           events are emitted into an 8 MiB buffer until it holds over
 *           half of it (the writer, blocked in its write, holds at most a
 *           frame's worth; no drop): once the disk works again, frames are
 *           compressed at
 *           the fast level; every event reads back in order with its
 *           address, size and allocation's address, none dropped.
 * Each case runs in its own child process. */
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
	uint64_t n = 0;
	do {
		for (int k = 0; k < 1000; k++) {
			gmt_event_t e = ev_of(n++);
			gmt_emit(&e, 0, 0);
		}
		gmt_tracer_get_stats(&st);
	} while (st.buffered * 8 <= st.buffer_limit * 5 && n < BEHIND_MAX);
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
	TEST_DONE();
}
