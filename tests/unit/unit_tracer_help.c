/* unit_tracer_help: when the writer cannot keep up, the producing threads
 * do its work (tracer/gmt_writer.c, "Help from the producing threads"),
 * and the trace stays exact. The writer is held in a write (a stopped
 * disk: gmt_tracer_test_hold_writes) with the round lock released, as it
 * is whenever it writes, so that only the producers can encode:
 *   room    a 4 MiB buffer (about 87,000 events in chunks) and 200,000
 *           events emitted while the disk is stopped: without help the
 *           buffer would drop over half of them; the producer encodes
 *           them into the open frame instead (assists > 0, what they
 *           encoded is at least what the chunks could not hold), none is
 *           dropped, and once the disk works every event reads back, in
 *           order, each free with its allocation's address;
 *   drop    the same with GPUMEMTRACE_OVERLOAD=drop: no help, the buffer
 *           drops (counted exactly: written + dropped = emitted);
 *   lost    the same as room, and the stopped write then fails: the frame
 *           the producer built meanwhile was encoded assuming that one on
 *           disk (its frees name allocations by ids the lost frame
 *           assigned) and is lost with it: one run of missing events, at
 *           least all the producer encoded, counted once as write_error;
 *           the trace reads to its END;
 *   full    a disk stopped for good and 2,000,000 events: the open frame
 *           fills, the producer cannot help any more and drops (it does
 *           not wait for a writer that makes no progress); every event is
 *           written or counted as dropped.
 *   last    the same with a cap 32 KiB past a multiple of 64 KiB: the
 *           producer's own chunks are 64 KiB by then, and the 32 KiB left
 *           would never take one; it takes the smallest ones (4 KiB, then
 *           doubling) instead, so when it first drops less than the
 *           smallest chunk is left (busy threads race for room that comes
 *           back a chunk at a time: one asking for 64 KiB alone could lose
 *           every time).
 *   fork    four threads emitting as fast as they can into a 1 MiB buffer
 *           (helping all the time) while the main thread forks 20
 *           children, each of which traces 1,000 events of its own: no
 *           child hangs on a round a parent's thread was in at the fork,
 *           each child's trace holds exactly its events, and the parent's
 *           holds each thread's events in order, the rest counted as
 *           dropped.
 * Each case runs in its own child process. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define ROOM_EVENTS 200000u
#define FULL_EVENTS 2000000u

static char path[4200];

static int in_child(void (*fn)(void))
{
	return coll_in_child(fn, path, sizeof(path));
}

/* Event i: coll_pair_ev (a free names an allocation of an earlier frame
 * by its id; every block has its own address). */
static gmt_event_t ev(uint64_t i)
{
	return coll_pair_ev(i);
}

#define LAST_CAP ((4u << 20) + (32u << 10))

static size_t cap_bytes = 4u << 20;

static gmt_config_t config(const char *name, int overload)
{
	gmt_config_t cfg = test_config(test_dir(name));
	cfg.buffer_bytes = cap_bytes;
	cfg.buffer_ms = 0;   /* the limit is the cap */
	cfg.overload = overload;
	return cfg;
}

/* Writes are stopped after event 0 is on disk (write 1: the preamble, 2:
 * the header's frame, flushed before any event, 3: event 0's); events
 * 1..n-1 emitted. */
static void emit_held(uint64_t n)
{
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	gmt_event_t e0 = ev(0);
	gmt_emit(&e0, 0, 0);
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	gmt_tracer_test_hold_writes(1);
	for (uint64_t i = 1; i < n; i++) {
		gmt_event_t e = ev(i);
		gmt_emit(&e, 0, 0);
	}
}

static void save_counts(uint64_t a, uint64_t b, uint64_t c)
{
	char npath[4300];
	snprintf(npath, sizeof(npath), "%s.counts", path);
	FILE *f = fopen(npath, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%llu %llu %llu\n", (unsigned long long)a, (unsigned long long)b,
			(unsigned long long)c);
		fclose(f);
	}
}

static void load_counts(uint64_t *a, uint64_t *b, uint64_t *c)
{
	char npath[4300];
	snprintf(npath, sizeof(npath), "%s.counts", path);
	unsigned long long x = 0, y = 0, z = 0;
	FILE *f = fopen(npath, "r");
	CHECK(f != NULL && fscanf(f, "%llu %llu %llu", &x, &y, &z) == 3);
	if (f)
		fclose(f);
	*a = x;
	*b = y;
	*c = z;
}

/* A tracer for case name, and n events emitted while the disk is stopped
 * (emit_held); *st: the counters then. */
static void start_held(const char *name, int overload, uint64_t n, gmt_tracer_stats_t *st)
{
	gmt_config_t cfg = config(name, overload);
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	emit_held(n);
	gmt_tracer_get_stats(st);
}

/* The disk works again, the trace ends; every one of the n events is
 * written or counted as dropped, and the counts go to the parent. */
static void finish(const char *name, uint64_t n, gmt_tracer_stats_t *st)
{
	gmt_tracer_test_hold_writes(0);
	gmt_tracer_shutdown();
	gmt_tracer_get_stats(st);
	fprintf(stderr, "%s: %llu events, %llu assists encoded %llu, %llu written, %llu dropped\n", name,
		(unsigned long long)n, (unsigned long long)st->assists, (unsigned long long)st->assist_events,
		(unsigned long long)st->written, (unsigned long long)st->dropped);
	CHECK_EQ_U64(n, st->written + st->dropped);
	save_counts(n, st->written, st->dropped);
}

static void room(void)
{
	gmt_tracer_stats_t st;
	start_held("help_room", GMT_OVERLOAD_HELP, ROOM_EVENTS, &st);
	CHECK_EQ_U64(0, st.dropped);
	CHECK(st.assists > 0);
	/* what the chunks could not hold, the producer encoded */
	uint64_t chunk_events = (4u << 20) / st.chunk_bytes * st.chunk_events;
	CHECK(st.assist_events + chunk_events >= ROOM_EVENTS - 1);
	finish("room", ROOM_EVENTS, &st);
	CHECK_EQ_U64(0, st.dropped);
}

static void drop(void)
{
	gmt_tracer_stats_t st;
	start_held("help_drop", GMT_OVERLOAD_DROP, ROOM_EVENTS, &st);
	CHECK_EQ_U64(0, st.assists);
	CHECK(st.dropped > 0);
	finish("drop", ROOM_EVENTS, &st);
}

static void lost(void)
{
	gmt_tracer_stats_t st;
	start_held("help_lost", GMT_OVERLOAD_HELP, ROOM_EVENTS, &st);
	CHECK_EQ_U64(0, st.dropped);
	uint64_t helped = st.assist_events;
	CHECK(helped > 0);
	gmt_tracer_test_fail_writes(ENOSPC, 1);   /* the write that waits */
	finish("lost", ROOM_EVENTS, &st);
	/* the frame the producer built went with the failed one */
	CHECK(st.dropped >= helped);
}

static void full(void)
{
	gmt_tracer_stats_t st;
	start_held("help_full", GMT_OVERLOAD_HELP, FULL_EVENTS, &st);
	CHECK(st.assists > 0);
	CHECK(st.dropped > 0);
	finish("full", FULL_EVENTS, &st);
}

static void last(void)
{
	gmt_tracer_stats_t st;
	cap_bytes = LAST_CAP;
	start_held("help_last", GMT_OVERLOAD_HELP, FULL_EVENTS, &st);
	CHECK(st.dropped > 0);
	CHECK_EQ_U64(LAST_CAP, st.buffer_limit);
	/* the room left when the first event was dropped (nothing was written
	 * since, nor encoded: the frame is full) */
	CHECK(st.buffered <= st.buffer_limit);
	CHECK(st.buffer_limit - st.buffered < 4096);
	finish("last", FULL_EVENTS, &st);
}

/* The fork case: not under the sanitizers (main says why). */
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define FORK_THREADS 4
#define FORK_CHILDREN 20
#define FORK_CHILD_EVENTS 1000

static _Atomic int fork_stop;
static _Atomic uint64_t fork_emitted[FORK_THREADS];

/* Thread k's event i: an allocation at its own address (k, i). */
static void *fork_producer(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg, i = 0;
	while (!atomic_load_explicit(&fork_stop, memory_order_relaxed)) {
		gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = (k + 1) << 40 | i, .size = 64, .device = 0 };
		gmt_emit(&e, 0, 0);
		atomic_store_explicit(&fork_emitted[k], ++i, memory_order_relaxed);
	}
	return NULL;
}

/* A forked child's own trace: its events and nothing of the parent's. */
static void fork_child(void)
{
	for (uint64_t i = 0; i < FORK_CHILD_EVENTS; i++) {
		gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = 0xc0000000ull + i * 64, .size = 64, .device = 0 };
		gmt_emit(&e, 0, 0);
	}
	const char *p = gmt_tracer_path();
	char cpath[4200];
	snprintf(cpath, sizeof(cpath), "%s", p ? p : "");
	gmt_tracer_shutdown();
	gmt_decode_result_t r;
	coll_t *c = coll_decode(cpath, &r);
	int ok = r.status == GMT_DECODE_OK && c->n == FORK_CHILD_EVENTS && c->end.dropped == 0;
	for (size_t i = 0; ok && i < c->n; i++)
		ok = c->ev[i].addr == 0xc0000000ull + i * 64;
	if (!ok)
		fprintf(stderr, "fork child %d: %s: status %d, %zu events, %llu dropped\n", (int)getpid(),
			cpath, (int)r.status, c->n, (unsigned long long)c->end.dropped);
	coll_free(c);
	free(c);
	_exit(ok ? 0 : 1);
}

static void forks(void)
{
	gmt_config_t cfg = config("help_fork", GMT_OVERLOAD_HELP);
	cfg.buffer_bytes = 1u << 20;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	pthread_t th[FORK_THREADS];
	for (uintptr_t k = 0; k < FORK_THREADS; k++)
		CHECK(pthread_create(&th[k], NULL, fork_producer, (void *)k) == 0);
	int bad = 0;
	for (int i = 0; i < FORK_CHILDREN; i++) {
		struct timespec d = { 0, 5000000 };
		nanosleep(&d, NULL);
		pid_t pid = fork();
		if (pid == 0)
			fork_child();
		int st = 0;
		/* a child that hangs is killed after 20 s and counted */
		for (int w = 0; w < 2000 && waitpid(pid, &st, WNOHANG) == 0; w++)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
		if (waitpid(pid, &st, WNOHANG) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "fork child %d: %s %d\n", (int)pid,
				WIFEXITED(st) ? "exit status" : "killed by signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			bad++;
		}
	}
	CHECK_EQ_U64(0, bad);
	atomic_store(&fork_stop, 1);
	uint64_t n = 0;
	for (int k = 0; k < FORK_THREADS; k++) {
		pthread_join(th[k], NULL);
		n += atomic_load(&fork_emitted[k]);
	}
	gmt_tracer_stats_t st;
	gmt_tracer_shutdown();
	gmt_tracer_get_stats(&st);
	fprintf(stderr, "fork: %llu events, %llu written, %llu dropped, %llu assists\n",
		(unsigned long long)n, (unsigned long long)st.written, (unsigned long long)st.dropped,
		(unsigned long long)st.assists);
	CHECK(st.assists > 0);
	CHECK_EQ_U64(n, st.written + st.dropped);
	save_counts(n, st.written, st.dropped);
}

/* The parent's trace of the fork case: each thread's events in its own
 * order (runs of them, the rest dropped), the file in time order. */
static void check_fork(uint64_t written)
{
	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(written, c->n);
	uint64_t next[FORK_THREADS] = { 0 }, bad = 0;
	for (size_t i = 0; i < c->n; i++) {
		const gmt_devent_t *d = &c->ev[i];
		uint64_t k = (d->addr >> 40) - 1, j = d->addr & ((1ull << 40) - 1);
		if (k >= FORK_THREADS || j < next[k] || (i && d->ts < c->ev[i - 1].ts))
			bad++;
		else
			next[k] = j + 1;
	}
	CHECK_EQ_U64(0, bad);
	coll_free(c);
	free(c);
}

#endif

/* The trace holds runs of ev(0..n) in order, each with its own address,
 * size and (frees) its allocation's address; what lies between runs and
 * after the last was lost, adding up to what was counted as dropped (the
 * DROPS records' reason: write_error, else buffer_full); gaps_want runs of
 * lost events, between written ones or after the last (UINT64_MAX: any
 * number). */
static void check_trace(uint64_t n, uint64_t written, uint64_t dropped, int write_error,
			uint64_t gaps_want)
{
	coll_t *c = coll_decode_ended(path, written, dropped);
	CHECK_EQ_U64(dropped, write_error ? c->drops_write : c->drops_buffer);
	uint64_t gaps = 0, gap_events = 0;
	CHECK_EQ_U64(0, coll_runs(c, ev, n, &gaps, &gap_events));
	CHECK_EQ_U64(dropped, gap_events);
	if (gaps_want != UINT64_MAX)
		CHECK_EQ_U64(gaps_want, gaps);
	coll_free(c);
	free(c);
}

int main(void)
{
	uint64_t n, written, dropped;
	CHECK_EQ_U64(0, in_child(room));
	load_counts(&n, &written, &dropped);
	CHECK_EQ_U64(0, dropped);
	check_trace(n, written, dropped, 0, 0);
	CHECK_EQ_U64(0, in_child(drop));
	load_counts(&n, &written, &dropped);
	CHECK(dropped > 0);
	check_trace(n, written, dropped, 0, UINT64_MAX);
	CHECK_EQ_U64(0, in_child(lost));
	load_counts(&n, &written, &dropped);
	check_trace(n, written, dropped, 1, 1);
	CHECK_EQ_U64(0, in_child(full));
	load_counts(&n, &written, &dropped);
	check_trace(n, written, dropped, 0, UINT64_MAX);
	CHECK_EQ_U64(0, in_child(last));
	load_counts(&n, &written, &dropped);
	check_trace(n, written, dropped, 0, UINT64_MAX);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
	/* Not under the sanitizers: ThreadSanitizer cannot follow a child
	 * that starts threads after a multi-threaded fork (unit_tracer_fork),
	 * and AddressSanitizer's allocator (GCC 12) does not take its size
	 * classes' locks around a fork: a child whose parent had a thread in
	 * malloc at the fork waits in its first malloc for ever (seen: the
	 * child's writer_start, in __sanitizer::SizeClassAllocator64::
	 * GetFromAllocator). glibc's malloc takes its arenas' locks. */
	CHECK_EQ_U64(0, in_child(forks));
	load_counts(&n, &written, &dropped);
	check_fork(written);
#endif
	TEST_DONE();
}
