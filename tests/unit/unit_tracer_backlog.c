/* unit_tracer_backlog: what a SIGKILL loses stays within about 100 ms of
 * the writer's own throughput, however far the program outruns it. A child
 * traces four threads recording as fast as they can onto a slow disk (100 ms
 * a write: the writer falls behind at once) with a 256 MiB buffer; a
 * monitor thread publishes the tracer's counters in shared memory every
 * millisecond. After 1.5 s, once the buffer has come within its limit (it
 * starts at the cap, before the writer has measured itself), the parent
 * reads the counters and kills the child. Events accepted but not in the
 * file are what the kill lost. The bound is checked in events, from the
 * tracer's own counters, so no scheduling enters it:
 *   lost <= what chunks of the largest limit hold + the most events the
 *           writer held at once (read from the buffer into the frame it
 *           encodes or writes; a frame is about 1 MiB encoded);
 *   that limit <= GPUMEMTRACE_BUFFER_MS (100) ms of the writer's largest
 *           measured throughput (events/s of its working time), or the
 *           floor (4 MiB).
 * The loss in ms of the file's average rate is printed, not checked (it
 * moves with the machine's load: 87-334 ms seen on a loaded 2-core VM).
 * BACKLOG_SHOW_UNBOUNDED=1 also runs without the limit (the byte cap
 * alone), for comparison. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

typedef struct shared {
	_Atomic uint64_t emitted, dropped, snapshots;
	_Atomic uint64_t limit_max, rate_max, frame_max, measured, drained;
	uint64_t floor, chunk_bytes, chunk_events;
	char path[4096];
} shared_t;

static shared_t *sh;

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *producer(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0;; i++) {
		gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
				  .addr = (k << 40) + (i / 2) * 4096, .size = 4096 };
		gmt_emit(&e, 0, 0);
	}
	return NULL;
}

static void *monitor(void *arg)
{
	(void)arg;
	for (;;) {
		gmt_tracer_stats_t st;
		gmt_tracer_get_stats(&st);
		atomic_store(&sh->emitted, st.emitted);
		atomic_store(&sh->dropped, st.dropped);
		atomic_store(&sh->limit_max, st.buffer_limit_max);
		atomic_store(&sh->rate_max, st.writer_rate_max);
		atomic_store(&sh->frame_max, st.writer_held_max);
		sh->floor = st.buffer_floor;
		sh->chunk_bytes = st.chunk_bytes;
		sh->chunk_events = st.chunk_events;
		/* within the limit: only a limit read after a measured one
		 * (a snapshot earlier) is known to come from a measurement */
		if (atomic_load(&sh->measured) && st.buffered <= st.buffer_limit)
			atomic_store(&sh->drained, 1);
		if (st.buffer_limit_max)
			atomic_store(&sh->measured, 1);
		atomic_fetch_add(&sh->snapshots, 1);
		struct timespec d = { 0, 1000000 };
		nanosleep(&d, NULL);
	}
	return NULL;
}

/* Runs the child with this backlog window; checks what the kill lost
 * against the bound (buffer_ms > 0). */
static void run(int buffer_ms)
{
	memset(sh, 0, sizeof(*sh));
	uint64_t t0 = mono_ns();
	pid_t pid = fork();
	if (pid == 0) {
		gmt_config_t cfg = test_config(test_dir("backlog"));
		cfg.buffer_bytes = 256u << 20;
		cfg.buffer_ms = buffer_ms;
		cfg.test_write_delay_ms = 100;
		if (gmt_tracer_init(&cfg))
			_exit(3);
		snprintf(sh->path, sizeof(sh->path), "%s", gmt_tracer_path());
		pthread_t th;
		pthread_create(&th, NULL, monitor, NULL);
		for (uintptr_t k = 1; k <= 4; k++)
			pthread_create(&th, NULL, producer, (void *)k);
		pause();
		_exit(0);
	}
	struct timespec d = { 1, 500000000 };
	nanosleep(&d, NULL);
	/* (at most 20 s more for the start's backlog to drain) */
	for (int i = 0; buffer_ms && !atomic_load(&sh->drained) && i < 20000; i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	int drained = (int)atomic_load(&sh->drained);
	uint64_t emitted = atomic_load(&sh->emitted);
	uint64_t limit_max = atomic_load(&sh->limit_max), rate_max = atomic_load(&sh->rate_max);
	uint64_t frame_max = atomic_load(&sh->frame_max);
	kill(pid, SIGKILL);
	uint64_t t1 = mono_ns();
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st));
	gmt_decode_result_t r;
	coll_t *c = coll_decode(sh->path, &r);
	CHECK(r.status == GMT_DECODE_OK);
	uint64_t in_file = c->n;
	coll_free(c);
	free(c);
	CHECK(emitted >= in_file);
	uint64_t lost = emitted - in_file;
	double rate = (double)in_file / ((double)(t1 - t0) * 1e-9);
	fprintf(stderr, "buffer_ms=%d: %llu accepted, %llu in the file (%.0f events/s written): "
		"the kill lost %llu events, %.0f ms of the file's average rate\n", buffer_ms,
		(unsigned long long)emitted, (unsigned long long)in_file, rate,
		(unsigned long long)lost, (double)lost / rate * 1e3);
	if (!buffer_ms)
		return;
	CHECK(drained);
	CHECK(limit_max > 0 && rate_max > 0 && frame_max > 0 && sh->chunk_bytes > 0);
	/* what chunks of limit_max bytes hold (a smaller chunk holds fewer
	 * events per byte than a full one) */
	double ce = (double)sh->chunk_events, cb = (double)sh->chunk_bytes;
	double limit_events = (double)limit_max * ce / cb;
	double allowed = (double)rate_max * buffer_ms * 1e-3;
	double floor_events = (double)sh->floor * ce / cb;
	fprintf(stderr, "  bound: largest limit %llu bytes = %.0f events; %d ms of the writer's "
		"largest measured rate (%llu events/s) = %.0f events; the floor %.0f events; "
		"the writer held at most %llu events\n", (unsigned long long)limit_max, limit_events,
		buffer_ms, (unsigned long long)rate_max, allowed, floor_events,
		(unsigned long long)frame_max);
	CHECK(limit_events <= (allowed > floor_events ? allowed : floor_events) + 1);
	CHECK((double)lost <= limit_events + (double)frame_max);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	run(100);
	if (getenv("BACKLOG_SHOW_UNBOUNDED"))
		run(0);
	TEST_DONE();
}
