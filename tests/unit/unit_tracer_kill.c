/* unit_tracer_kill: a traced child killed with SIGKILL leaves a trace that
 * decodes up to its last whole frame and says it was cut; one killed with
 * SIGTERM (default disposition) flushes what it buffered before dying and
 * says in END that SIGTERM ended it. */
#include <signal.h>
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static char dir[4096];

static pid_t child(int flush_ms, int batches_before_ready, int *ready_fd)
{
	int p[2];
	if (pipe(p))
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		gmt_config_t cfg = test_config(dir);
		cfg.install_signal_handlers = 1;
		cfg.flush_ms = flush_ms;
		if (gmt_tracer_init(&cfg))
			_exit(3);
		for (uint64_t i = 0;; i++) {
			if (i < (uint64_t)batches_before_ready || flush_ms < 50) {
				for (int k = 0; k < 100; k++) {
					gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = i * 100 + (uint64_t)k, .size = 1 };
					gmt_emit(&e, 0, 0);
				}
			}
			if (i == (uint64_t)batches_before_ready) {
				char one = 1;
				ssize_t w = write(p[1], &one, 1);
				(void)w;
			}
			if (flush_ms >= 50 && i >= (uint64_t)batches_before_ready)
				pause();
			else
				usleep(200);
		}
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", test_dir("kill"));
	int fd, st;
	char one, path[4300];
	gmt_decode_result_t r;

	/* SIGKILL while events stream in (frames every 2 ms). */
	pid_t pid = child(2, 50, &fd);
	CHECK_EQ_U64(1, read(fd, &one, 1));
	close(fd);
	usleep(20000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	snprintf(path, sizeof(path), "%s/gpumemtrace.unit_tracer_kill.%d.gmt", dir, (int)pid);
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(0, r.ended_cleanly);
	CHECK_EQ_U64(r.file_size, r.bytes_ok);
	CHECK(c->n >= 100);
	CHECK_EQ_U64(0, c->has_end);
	for (size_t i = 0; i < c->n; i++)
		if (c->ev[i].addr != i) {
			CHECK_EQ_U64(i, c->ev[i].addr);
			break;
		}
	coll_free(c);
	free(c);

	/* SIGTERM: 30 batches buffered (frames only every 100 ms), then the
	 * handler flushes them all before the default action. */
	pid = child(100, 30, &fd);
	CHECK_EQ_U64(1, read(fd, &one, 1));
	close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	snprintf(path, sizeof(path), "%s/gpumemtrace.unit_tracer_kill.%d.gmt", dir, (int)pid);
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(3000, c->n);
	CHECK_EQ_U64(1, c->has_end);
	CHECK(c->end.how != NULL && strcmp(c->end.how, GMT_END_SIGNAL) == 0);
	CHECK_EQ_U64(SIGTERM, c->end.value);
	coll_free(c);
	free(c);
	TEST_DONE();
}
