/* unit_tracer_fork: a forked child writes its own events into its own file
 * (header ppid = the parent) and never the parent's; the parent's file has
 * no child event and no duplicate. Strings interned before the fork keep
 * their ids in the child's file.*/
#include <signal.h>
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define P1 1000
#define P2 500
#define C1 700

static void emit_n(uint64_t tag, int n)
{
	for (int i = 0; i < n; i++) {
		gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = tag << 40 | (uint64_t)i, .size = 8 };
		gmt_emit(&e, 0, 0);
	}
}

static size_t count_tag(const coll_t *c, uint64_t tag)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += (c->ev[i].addr >> 40) == tag;
	return n;
}

int main(int argc, char **argv)
{
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer cannot follow a child that starts threads after a
	 * multi-threaded fork ("dup thread with used id"); the plain and
	 * AddressSanitizer builds run this test. */
	fprintf(stderr, "skipped under ThreadSanitizer\n");
	return 0;
#endif
	(void)argc;
	(void)argv;
	const char *dir = test_dir("fork");
	char d[4096];
	snprintf(d, sizeof(d), "%s", dir);
	gmt_config_t cfg = test_config(d);
#ifdef __SANITIZE_ADDRESS__
	cfg.flush_ms = 100;
#endif
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	CHECK_EQ_U64(1, gmt_tracer_string("before-fork"));
	emit_n(0xA, P1);   /* buffered, maybe not yet written, at fork time */
#ifdef __SANITIZE_ADDRESS__
	/* GCC's AddressSanitizer allocator has no fork handlers: if the
	 * writer thread is inside malloc at the fork, the child's leak check
	 * at exit waits forever on that lock. Fork while the writer sleeps. */
	gmt_tracer_flush(1000);
	usleep(2000);
#endif
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* no file until the first traced call */
		if (gmt_tracer_path() != NULL || gmt_tracer_active())
			_exit(3);
		CHECK_EQ_U64(1, gmt_tracer_string("before-fork"));
		emit_n(0xC, C1);
		CHECK_EQ_U64(2, gmt_tracer_string("in-child"));
		exit(gmt_test_failures ? 1 : 0);   /* atexit writes END */
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	emit_n(0xA, P2);
	char ppath[4200];
	snprintf(ppath, sizeof(ppath), "%s", gmt_tracer_path());
	gmt_tracer_shutdown();

	gmt_decode_result_t r;
	coll_t *c = coll_decode(ppath, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(P1 + P2, c->n);
	CHECK_EQ_U64(P1 + P2, count_tag(c, 0xA));
	CHECK_EQ_U64(0, count_tag(c, 0xC));
	for (size_t i = 1; i < P1 && i < c->n; i++)
		CHECK_EQ_U64(c->ev[i - 1].addr + 1, c->ev[i].addr);
	CHECK_EQ_U64(1, c->n_strings);
	coll_free(c);
	free(c);

	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s/gpumemtrace.unit_tracer_fork.%d.gmt", d, (int)pid);
	c = coll_decode(cpath, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(pid, c->pid);
	CHECK_EQ_U64(parent, c->ppid);
	CHECK_EQ_U64(C1, c->n);
	CHECK_EQ_U64(C1, count_tag(c, 0xC));
	CHECK_EQ_U64(1, c->n_threads);
	CHECK_EQ_U64(0, c->thread_idx[0]);
	CHECK_EQ_U64(pid, c->thread_tid[0]);
	CHECK_EQ_U64(2, c->n_strings);
	CHECK_EQ_STR("before-fork", c->string_text[0]);
	CHECK_EQ_U64(1, c->string_id[0]);
	CHECK_EQ_STR("in-child", c->string_text[1]);
	CHECK_EQ_U64(2, c->string_id[1]);
	CHECK(c->n_modules > 0);
	coll_free(c);
	free(c);

	/* After shutdown the state is DOWN; a child inherits that and traces
	 * nothing (no file). */
	pid = fork();
	if (pid == 0) {
		emit_n(0xD, 10);
		_exit(gmt_tracer_active() || gmt_tracer_init(NULL) != -ESHUTDOWN ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(cpath, sizeof(cpath), "%s/gpumemtrace.unit_tracer_fork.%d.gmt", d, (int)pid);
	CHECK(access(cpath, F_OK) != 0);
	TEST_DONE();
}
