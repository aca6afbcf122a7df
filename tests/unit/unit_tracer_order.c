/* unit_tracer_order: a STRING record comes before every event that names
 * it, also for an event published while a writer round runs, after the
 * round took the metadata queue, with a time the round covers (an explicit
 * past time, as the framework API's events and the generators' have). A
 * round takes no event published after it fixed the threads' positions
 * (tracer/gmt_writer.c, fix_limits); before, it took the event and left
 * its STRING for the next frame, and the analyzer named the phase
 * "(unnamed)". The writer's round hook makes another, already registered
 * thread intern a name and emit such an event at exactly that point, once
 * per round, for several rounds. */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define ROUNDS 5

static sem_t go, done;
static _Atomic int armed;
static uint32_t ids[ROUNDS];

static void round_hook(void)
{
	if (!atomic_exchange(&armed, 0))
		return;
	sem_post(&go);
	sem_wait(&done);
}

static void *worker(void *arg)
{
	(void)arg;
	/* registered (THREAD record, in the writer's list) before any round
	 * it takes part in */
	gmt_event_t first = { .type = GMT_EV_SYNC, .device = -1, .aux = GMT_SYNC_CTX };
	gmt_emit(&first, 0, 0);
	for (int r = 0; r < ROUNDS; r++) {
		sem_wait(&go);
		char name[32];
		snprintf(name, sizeof(name), "phase-%d", r);
		ids[r] = gmt_tracer_string(name);
		gmt_event_t e = { .type = GMT_EV_RANGE_BEGIN, .ts = 1000u + (uint64_t)r, .device = -1,
				  .stream = GMT_RANGE_API, .aux = ids[r] };
		gmt_emit(&e, 0, 0);
		sem_post(&done);
	}
	return NULL;
}

/* The order of STRING records and events in the file. */
typedef struct order {
	uint64_t events;                 /* events seen so far */
	uint64_t string_at[ROUNDS + 8];  /* by id: events seen before its STRING + 1 */
	uint64_t event_at[ROUNDS + 8];   /* by id: the range's place + 1 */
} order_t;

static int o_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	order_t *o = ctx;
	(void)text;
	(void)len;
	if (id < ROUNDS + 8 && !o->string_at[id])
		o->string_at[id] = o->events + 1;
	return 0;
}

static int o_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	order_t *o = ctx;
	(void)flags;
	for (size_t i = 0; i < n; i++, o->events++)
		if (ev[i].type == GMT_EV_RANGE_BEGIN && (uint32_t)ev[i].aux < ROUNDS + 8)
			o->event_at[(uint32_t)ev[i].aux] = o->events + 1;
	return 0;
}

int main(void)
{
	const char *dir = test_dir("order");
	gmt_config_t cfg = test_config(dir);
	cfg.flush_ms = 2;
	CHECK(sem_init(&go, 0, 0) == 0);
	CHECK(sem_init(&done, 0, 0) == 0);
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	pthread_t th;
	CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
	/* the worker's first event written: it is in the rounds' lists */
	gmt_event_t mine = { .type = GMT_EV_SYNC, .device = -1, .aux = GMT_SYNC_CTX };
	gmt_emit(&mine, 0, 0);
	for (int i = 0; i < 200 && gmt_tracer_flush(1000); i++)
		;
	gmt_tracer_test_round_hook(round_hook);
	for (int r = 0; r < ROUNDS; r++) {
		atomic_store(&armed, 1);
		while (atomic_load(&armed)) {
			struct timespec d = { 0, 1000000 };
			nanosleep(&d, NULL);
		}
	}
	CHECK(pthread_join(th, NULL) == 0);
	gmt_tracer_test_round_hook(NULL);
	CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	char path[4200];
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	gmt_tracer_shutdown();

	order_t o;
	memset(&o, 0, sizeof(o));
	gmt_visitor_t v = { .ctx = &o, .string = o_string, .events = o_events };
	gmt_decode_result_t res;
	gmt_decode_file(path, &v, &res);
	CHECK_EQ_U64(GMT_DECODE_OK, res.status);
	for (int r = 0; r < ROUNDS; r++) {
		uint32_t id = ids[r];
		CHECK(id > 0 && id < ROUNDS + 8);
		CHECK(o.event_at[id] > 0);           /* the range is in the file */
		CHECK(o.string_at[id] > 0);          /* and its name */
		/* the STRING came before the event (seen when fewer events had
		 * been read than the range's place) */
		CHECK(o.string_at[id] <= o.event_at[id]);
	}
	TEST_DONE();
}
