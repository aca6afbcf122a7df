/* unit_tracer_memory: the traced process's memory stays within the buffer
 * cap (GPUMEMTRACE_BUFFER_MB) whatever the number of threads or names:
 *   threads  1000 live threads recording 3 events each fit in 16 MiB
 *            without a drop (a thread's first chunk is 4 KiB);
 *   names    10,000 distinct names of 150 bytes with a 4 MiB cap: exactly
 *            as many as an eighth of the cap holds are kept (the same id
 *            each time), the rest are written by value (a STRING with a
 *            fresh id at each use, held in the events' buffer until
 *            written: they all fit in it, so none is lost), the tracer's
 *            counters say so, the trace holds a STRING for every use, and
 *            the process grows by at most the cap and the writer's own
 *            buffers;
 *   cap      a disk that stopped (gmt_tracer_test_hold_writes) and an
 *            8 MiB cap: events are emitted until the cap drops some, then
 *            100,000 more (with a merely slow disk, a sanitizer build's
 *            slower emission let the writer keep up 1 run in 3); the peak
 *            resident size grows by at most the cap and the writer's own
 *            buffers (5 MiB: since the producing threads help, a frame
 *            they build while another waits on the disk is among them;
 *            10.2-10.9 MiB seen before, 12.2-12.4 with help, which also
 *            keeps 580,000 events instead of 300,000), and every event is
 *            written or counted as dropped once the disk works again.
 * Each case runs in its own child process. (Sizes are checked in the
 * plain build only, not under a sanitizer.) */
#include <pthread.h>
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

/* A sanitizer's shadow memory is resident too: sizes are checked only in
 * the plain build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHECK_SIZE(cond) ((void)0)
#else
#define CHECK_SIZE(cond) CHECK(cond)
#endif

static char path[4200];

static int in_child(void (*fn)(void))
{
	return coll_in_child(fn, path, sizeof(path));
}

/* A line of /proc/self/status, in KiB. */
static long status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atol(line + kl + 1);
	if (f)
		fclose(f);
	return v;
}

#define NTHREADS 1000
static pthread_barrier_t emitted, leave;

static void *thread_main(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg;
	for (int i = 0; i < 3; i++) {
		gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = k * 16 + (uint64_t)i, .size = 1 };
		gmt_emit(&e, 0, 0);
	}
	pthread_barrier_wait(&emitted);
	pthread_barrier_wait(&leave);
	return NULL;
}

static void many_threads(void)
{
	gmt_config_t cfg = test_config(test_dir("threads"));
	cfg.buffer_bytes = 16u << 20;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	pthread_barrier_init(&emitted, NULL, NTHREADS + 1);
	pthread_barrier_init(&leave, NULL, NTHREADS + 1);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64u << 10);
	static pthread_t th[NTHREADS];
	for (uintptr_t k = 0; k < NTHREADS; k++)
		CHECK(pthread_create(&th[k], &a, thread_main, (void *)k) == 0);
	pthread_barrier_wait(&emitted);
	/* every thread alive and holding its chunk */
	gmt_tracer_stats_t st;
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(3 * NTHREADS, st.emitted);
	CHECK_EQ_U64(0, st.dropped);
	pthread_barrier_wait(&leave);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(th[k], NULL);
	gmt_tracer_shutdown();
}

#define NNAMES 10000
#define NAME_LEN 150

static void many_names(void)
{
	gmt_config_t cfg = test_config(test_dir("names"));
	cfg.buffer_bytes = 4u << 20;
	cfg.log_level = 0;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	char name[NAME_LEN + 1];
	memset(name, 'n', NAME_LEN);
	name[NAME_LEN] = 0;
	uint32_t first = 0, last = 0;
	long rss0 = status_kib("VmRSS");
	for (int i = 0; i < NNAMES; i++) {
		snprintf(name, 16, "%08d", i);
		name[8] = 'n';
		uint32_t id = gmt_tracer_string(name);
		if (i == 0)
			first = id;
		if (i == NNAMES - 1)
			last = id;
	}
	long grew = status_kib("VmRSS") - rss0;
	/* the budget: an eighth of the cap; a name costs three copies of its
	 * text, two table slots and 64 bytes (gmt_tracer.c, name_cost) */
	const uint64_t cost = 3 * (NAME_LEN + 1) + 2 * 24 + 64;
	const uint64_t kept = ((4u << 20) / 8) / cost;
	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(0, st.names_overflow);               /* none lost */
	CHECK_EQ_U64(NNAMES - kept, st.names_by_value);
	CHECK_EQ_U64((4u << 20) / 8, st.names_budget);
	CHECK_EQ_U64(kept * cost, st.names_kept_bytes);
	CHECK(st.names_inflight_max > 0 && st.names_inflight_max <= (4u << 20)); /* the cap */
	CHECK_EQ_U64(NNAMES, last);                       /* ids 1..NNAMES */
	snprintf(name, 16, "%08d", 0);
	name[8] = 'n';
	CHECK_EQ_U64(first, gmt_tracer_string(name));   /* a kept name keeps its id */
	snprintf(name, 16, "%08d", NNAMES - 1);
	name[8] = 'n';
	int k = 1;
	CHECK_EQ_U64(NNAMES + 1, gmt_tracer_name(name, &k)); /* by value: a new id */
	CHECK_EQ_U64(0, k);
	fprintf(stderr, "names: %llu kept, resident size grew by %ld KiB\n",
		(unsigned long long)kept, grew);
	/* the kept names (512 KiB) and the names by value not yet written,
	 * held within the cap (4 MiB), and the writer's own buffers (5 MiB,
	 * as in buffer_cap) */
	CHECK_SIZE(grew <= (4 + 5) * 1024);
	gmt_tracer_shutdown();
}

/* buffer_cap's child tells the parent how many events it emitted in a
 * file beside its trace: TRACE.emitted. */
#define CAP_MAX 10000000   /* no drop by then: the cap does not work */
#define CAP_MORE 100000

static void cap_emit(uint64_t i)
{
	gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
			  .addr = 0x7000000000ull + (i / 2) * 4096, .size = 4096 };
	gmt_emit(&e, 0, 0);
}

static void buffer_cap(void)
{
	gmt_config_t cfg = test_config(test_dir("cap"));
	cfg.buffer_bytes = 8u << 20;
	cfg.buffer_ms = 0;                /* the byte cap alone */
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(5000));
	long hwm0 = status_kib("VmHWM");
	gmt_tracer_test_hold_writes(1);
	gmt_tracer_stats_t st;
	uint64_t n = 0;
	do {
		for (int k = 0; k < 1000; k++)
			cap_emit(n++);
		gmt_tracer_get_stats(&st);
	} while (st.dropped == 0 && n < CAP_MAX);
	CHECK(st.dropped > 0);
	for (int k = 0; k < CAP_MORE; k++)
		cap_emit(n++);
	gmt_tracer_test_hold_writes(0);
	CHECK_EQ_U64(0, gmt_tracer_flush(60000));
	long grew = status_kib("VmHWM") - hwm0;
	gmt_tracer_get_stats(&st);
	fprintf(stderr, "cap: %llu emitted, %llu written, %llu dropped, peak resident size grew by %ld KiB\n",
		(unsigned long long)n, (unsigned long long)st.written,
		(unsigned long long)st.dropped, grew);
	CHECK_EQ_U64(st.emitted, st.written);   /* every accepted event written */
	CHECK_EQ_U64(n, st.written + st.dropped);
	CHECK_SIZE(grew <= (8 + 5) * 1024);
	gmt_tracer_shutdown();
	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s.emitted", path);
	FILE *f = fopen(cpath, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%llu\n", (unsigned long long)n);
		fclose(f);
	}
}

int main(void)
{
	gmt_decode_result_t r;
	coll_t *c;

	CHECK_EQ_U64(0, in_child(many_threads));
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(3 * NTHREADS, c->n);
	CHECK_EQ_U64(0, c->drops_total);
	coll_free(c);
	free(c);

	CHECK_EQ_U64(0, in_child(many_names));
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	/* a STRING per name, and one more for the by-value name used again */
	CHECK_EQ_U64(NNAMES + 1, c->n_strings);
	coll_free(c);
	free(c);

	CHECK_EQ_U64(0, in_child(buffer_cap));
	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s.emitted", path);
	unsigned long long n_emitted = 0;
	FILE *f = fopen(cpath, "r");
	CHECK(f != NULL && fscanf(f, "%llu", &n_emitted) == 1);
	if (f)
		fclose(f);
	CHECK(n_emitted > CAP_MORE);
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(n_emitted, c->n + c->drops_total);
	coll_free(c);
	free(c);
	TEST_DONE();
}
