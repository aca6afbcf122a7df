/* unit_tracer_threads: 8 threads x 100,000 events at once. Every event is
 * written exactly once, each thread's events keep their order, and the
 * file is in nondecreasing time order across threads (no LATE records). */
#include <pthread.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define THREADS 8
#define PER 100000

static pthread_barrier_t go;
static pid_t tids[THREADS];

static void *worker(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg;
	tids[k] = gettid();
	pthread_barrier_wait(&go);
	for (uint64_t i = 0; i < PER; i++) {
		/* addresses shared between threads, like a reused pool */
		gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
				  .addr = 0x7f0000000000ull + (i % 64) * 4096, .size = i,
				  .stream = k, .aux = k << 8, .device = (int16_t)(k % 2) };
		gmt_emit(&e, 0, 0);
	}
	return NULL;
}

int main(void)
{
	gmt_config_t cfg = test_config(test_dir("threads"));
	cfg.buffer_ms = 0;   /* a burst the writer may take over 100 ms to drain */
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	pthread_t th[THREADS];
	pthread_barrier_init(&go, NULL, THREADS);
	for (uintptr_t k = 0; k < THREADS; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	char path[4200];
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	gmt_tracer_shutdown();
	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(THREADS * PER, st.emitted);
	CHECK_EQ_U64(THREADS * PER, st.written);
	CHECK_EQ_U64(0, st.dropped);

	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(THREADS * PER, c->n);
	CHECK_EQ_U64(THREADS, c->n_threads);
	CHECK_EQ_U64(0, c->n_late);
	CHECK_EQ_U64(THREADS * PER, c->end.written);
	CHECK_EQ_U64(0, c->end.late);
	/* thread idx -> worker k (stream carries k) */
	uint64_t next[THREADS] = { 0 }, seen_thread_of[THREADS];
	for (int k = 0; k < THREADS; k++)
		seen_thread_of[k] = UINT64_MAX;
	int order_bad = 0, ts_bad = 0, field_bad = 0;
	for (size_t i = 0; i < c->n; i++) {
		const gmt_devent_t *e = &c->ev[i];
		uint64_t k = e->stream;
		if (k >= THREADS) {
			field_bad++;
			continue;
		}
		if (seen_thread_of[k] == UINT64_MAX)
			seen_thread_of[k] = e->thread;
		if (seen_thread_of[k] != e->thread)
			field_bad++;
		if (e->size != next[k])
			order_bad++;
		next[k] = e->size + 1;
		if (e->aux != k << 8 || e->device != (int16_t)(k % 2) ||
		    e->type != ((e->size & 1) ? GMT_EV_FREE : GMT_EV_ALLOC) ||
		    e->addr != 0x7f0000000000ull + (e->size % 64) * 4096)
			field_bad++;
		if (i && e->ts < c->ev[i - 1].ts)
			ts_bad++;
	}
	CHECK_EQ_U64(0, order_bad);
	CHECK_EQ_U64(0, ts_bad);
	CHECK_EQ_U64(0, field_bad);
	for (int k = 0; k < THREADS; k++) {
		CHECK_EQ_U64(PER, next[k]);
		/* the THREAD record of that index names the worker's tid */
		int ok = 0;
		for (size_t j = 0; j < c->n_threads; j++)
			if (c->thread_idx[j] == seen_thread_of[k] && c->thread_tid[j] == (uint64_t)tids[k])
				ok = 1;
		CHECK(ok);
	}
	coll_free(c);
	free(c);
	TEST_DONE();
}
