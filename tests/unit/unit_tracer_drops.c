/* unit_tracer_drops: a full buffer and a failing disk lose events, never
 * silently: the DROPS records and END count exactly what is missing, the
 * program goes on, and the file stays decodable. Each case runs in a child
 * process with its own tracer. */
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static char path[4200];

static int in_child(void (*fn)(void))
{
	return coll_in_child(fn, path, sizeof(path));
}

#define N_FULL 20000
static void buffer_full(void)
{
	gmt_config_t cfg = test_config(test_dir("full"));
	cfg.buffer_bytes = 1;   /* the minimum: two chunks */
	cfg.overload = GMT_OVERLOAD_DROP;   /* no help: the full buffer drops */
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	for (int i = 0; i < N_FULL; i++) {
		gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = (uint64_t)i, .size = 1 };
		gmt_emit(&e, 0, 0);
	}
	gmt_tracer_stats_t st;
	gmt_tracer_shutdown();
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(N_FULL, st.emitted + st.dropped);
	CHECK_EQ_U64(st.emitted, st.written);
	CHECK(st.dropped > 0);
}

#define BATCH 3000
static void write_error(void)
{
	gmt_config_t cfg = test_config(test_dir("enospc"));
	/* write 1 = preamble, 2 = header frame (flushed before any event), 3 =
	 * the thread record or the first events; 4 and 5 fail, and at least
	 * the first of them holds events. Each batch is at least one more
	 * write, so the last batch goes out after the failures. */
	cfg.test_fail_write_after = 4;
	cfg.test_fail_errno = ENOSPC;
	cfg.test_fail_count = 2;
	cfg.log_level = 0;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	for (int b = 0; b < 5; b++) {
		for (int i = 0; i < BATCH; i++) {
			gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = (uint64_t)(b * BATCH + i), .size = 1 };
			gmt_emit(&e, 0, 0);
		}
		CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	}
	gmt_tracer_stats_t st;
	gmt_tracer_shutdown();
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(5 * BATCH, st.emitted);
	CHECK_EQ_U64(5 * BATCH, st.written + st.dropped);
	CHECK(st.dropped > 0);
}

int main(void)
{
	CHECK_EQ_U64(0, in_child(buffer_full));
	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK(c->n > 0 && c->n < N_FULL);
	CHECK_EQ_U64(N_FULL - c->n, c->drops_buffer);
	CHECK_EQ_U64(N_FULL - c->n, c->drops_total);
	CHECK_EQ_U64(N_FULL - c->n, c->end.dropped);
	CHECK_EQ_U64(c->n, c->end.written);
	/* what was kept is a prefix of each chunk's run, in order */
	for (size_t i = 1; i < c->n; i++)
		CHECK(c->ev[i].addr > c->ev[i - 1].addr);
	coll_free(c);
	free(c);

	CHECK_EQ_U64(0, in_child(write_error));
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK(c->n > 0 && c->n < 5 * BATCH);
	CHECK_EQ_U64(5 * BATCH - c->n, c->drops_write);
	CHECK_EQ_U64(0, c->drops_buffer);
	CHECK_EQ_U64(ENOSPC, c->drops_errno);
	CHECK_EQ_U64(5 * BATCH - c->n, c->end.dropped);
	CHECK_EQ_U64(c->n, c->end.written);
	/* the last batch went out after the failures, in order */
	CHECK_EQ_U64(5 * BATCH - 1, c->ev[c->n - 1].addr);
	for (size_t i = 1; i < c->n; i++)
		CHECK(c->ev[i].addr > c->ev[i - 1].addr);
	coll_free(c);
	free(c);
	TEST_DONE();
}
