/* unit_side: events with past times go into the side stream (SIDE EVENTS
 * records), sorted, each once; the main stream keeps its own order; an
 * out-of-order side event is clamped and counted late. */
#include "gmt_test.h"
#include "unit_tracer_collect.h"

typedef struct seen {
	gmt_devent_t ev[64];
	unsigned side[64];
	size_t n;
} seen_t;

static int on_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	seen_t *s = ctx;
	for (size_t i = 0; i < n && s->n < 64; i++, s->n++) {
		s->ev[s->n] = ev[i];
		s->side[s->n] = flags & GMT_EVENTS_SIDE ? 1 : 0;
	}
	return 0;
}

int main(void)
{
	const char *dir = test_dir("side");
	gmt_config_t cfg = test_config(dir);
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));

	uint64_t t0 = gmt_now_ns();
	gmt_event_t a = { .type = GMT_EV_ALLOC, .addr = 0x1000, .size = 512, .device = 0 };
	gmt_emit(&a, 0, 0);
	gmt_tracer_flush(1000);   /* the main stream is written past t0 */

	/* A history from before t0, handed over in two calls. */
	gmt_event_t h1[2] = {
		{ .ts = t0 - 3000, .type = GMT_EV_FW_ALLOC, .addr = 0x1000, .size = 256, .device = 0, .aux = 7 },
		{ .ts = t0 - 2000, .type = GMT_EV_FW_FREE_REQUESTED, .addr = 0x1000, .size = 256, .device = 0, .aux = 7 },
	};
	gmt_event_t h2[2] = {
		{ .ts = t0 - 1000, .type = GMT_EV_FW_FREE_COMPLETED, .addr = 0x1000, .size = 256, .device = 0, .aux = 7 },
		{ .ts = t0 - 1500, .type = GMT_EV_FW_ALLOC, .addr = 0x1100, .size = 128, .device = 0, .aux = 7 },
	};
	gmt_emit_side(h1, 2);
	gmt_emit_side(h2, 2);   /* h2[1] goes back in time: clamped to t0 - 1000 */
	gmt_tracer_shutdown();

	seen_t s = { .n = 0 };
	gmt_visitor_t v = { .ctx = &s, .events = on_events };
	gmt_decode_result_t r;
	char path[4200];
	snprintf(path, sizeof(path), "%s/gpumemtrace.unit_side.%d.gmt", dir, (int)getpid());
	CHECK_EQ_U64(GMT_DECODE_OK, gmt_decode_file(path, &v, &r));
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(5, s.n);
	/* the main event first (written before the side events were handed over) */
	CHECK_EQ_U64(GMT_EV_ALLOC, s.ev[0].type);
	CHECK_EQ_U64(0, s.side[0]);
	const unsigned types[4] = { GMT_EV_FW_ALLOC, GMT_EV_FW_FREE_REQUESTED,
				    GMT_EV_FW_FREE_COMPLETED, GMT_EV_FW_ALLOC };
	const uint64_t ts[4] = { t0 - 3000, t0 - 2000, t0 - 1000, t0 - 1000 };
	const uint64_t addr[4] = { 0x1000, 0x1000, 0x1000, 0x1100 };
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_U64(1, s.side[i + 1]);
		CHECK_EQ_U64(types[i], s.ev[i + 1].type);
		CHECK_EQ_U64(ts[i], s.ev[i + 1].ts);
		CHECK_EQ_U64(addr[i], s.ev[i + 1].addr);
		CHECK_EQ_U64(7, s.ev[i + 1].aux);
		CHECK_EQ_U64(0, s.ev[i + 1].device);
	}
	CHECK_EQ_U64(s.ev[0].thread, s.ev[1].thread);
	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(1, st.late);
	TEST_DONE();
}
