/* unit_tracer_stacks: stack capture and deduplication. The same call site
 * gives the same id, another site another id; the depth is honoured; the
 * innermost frame is the caller of gmt_emit (skip_frames = 0) or its caller
 * (skip_frames = 1); frees carry no stack unless free_stacks; depth 0
 * records none. Each configuration runs in its own child process. */
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static char dir[4096];
static uint64_t at_a, at_b, at_free, at_outer;

/* The return address of its call: the call right after it in the caller
 * returns a few bytes further on. */
__attribute__((noinline)) static uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline)) static void site_a(int skip)
{
	gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = 0xa, .size = 1 };
	at_a = here();
	gmt_emit(&e, 1, skip);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(void)
{
	gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = 0xb, .size = 1 };
	at_b = here();
	gmt_emit(&e, 1, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_free(void)
{
	gmt_event_t e = { .type = GMT_EV_FREE, .addr = 0xf };
	at_free = here();
	gmt_emit(&e, 1, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(int skip)
{
	at_outer = here();
	site_a(skip);
	__asm__ volatile("" ::: "memory");
}

static void workload(void)
{
	for (volatile int i = 0; i < 3; i++)
		outer(0);          /* events 0..2: one site, one id */
	site_b();                  /* event 3 */
	outer(1);                  /* event 4: innermost frame is outer */
	site_free();               /* event 5 */
}

/* Deepens the stack beyond the configured depth. */
__attribute__((noinline)) static void deep(volatile int n)
{
	if (n > 0)
		deep(n - 1);
	else
		workload();
	__asm__ volatile("" ::: "memory");
}

/* Runs the workload in a child with this depth; returns the trace path.
 * The child sends back the call addresses it saw (at_*). */
static void run(int depth, int free_stacks, char *path, size_t cap)
{
	int p[2];
	if (pipe(p))
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		gmt_config_t cfg = test_config(dir);
		cfg.stack_depth = depth;
		cfg.free_stacks = free_stacks;
		if (gmt_tracer_init(&cfg))
			_exit(3);
		deep(10);
		uint64_t at[4] = { at_a, at_b, at_free, at_outer };
		ssize_t w = write(p[1], at, sizeof(at));
		(void)w;
		exit(0);
	}
	close(p[1]);
	uint64_t at[4] = { 0 };
	CHECK_EQ_U64(sizeof(at), read(p[0], at, sizeof(at)));
	close(p[0]);
	at_a = at[0];
	at_b = at[1];
	at_free = at[2];
	at_outer = at[3];
	int st;
	waitpid(pid, &st, 0);
	snprintf(path, cap, "%s/gpumemtrace.unit_tracer_stacks.%d.gmt", dir, (int)pid);
}

/* pc is the return address of the call just after the one at `at`. The
 * child sent the at_* values back. */
static int after(uint64_t pc, uint64_t at)
{
	return pc > at && pc < at + 160;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", test_dir("stacks"));
	char path[4300];
	gmt_decode_result_t r;

	run(8, 0, path, sizeof(path));
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(8, c->stack_depth);
	CHECK_EQ_U64(6, c->n);
	if (c->n == 6) {
		uint32_t a = c->ev[0].stack;
		CHECK(a >= 1);
		CHECK_EQ_U64(a, c->ev[1].stack);
		CHECK_EQ_U64(a, c->ev[2].stack);
		CHECK(c->ev[3].stack >= 1 && c->ev[3].stack != a);
		CHECK(c->ev[4].stack >= 1 && c->ev[4].stack != a && c->ev[4].stack != c->ev[3].stack);
		CHECK_EQ_U64(0, c->ev[5].stack);   /* free_stacks off */
		CHECK_EQ_U64(3, c->n_stacks);      /* each written once */
		const coll_stack_t *sa = coll_find_stack(c, a), *sb = coll_find_stack(c, c->ev[3].stack),
				   *s1 = coll_find_stack(c, c->ev[4].stack);
		CHECK(sa && sb && s1);
		if (sa && sb && s1) {
			CHECK_EQ_U64(8, sa->n);
			CHECK(after(sa->frames[0], at_a));
			CHECK(after(sa->frames[1], at_outer));
			CHECK(after(sb->frames[0], at_b));
			CHECK(after(s1->frames[0], at_outer));
			CHECK_EQ_U64(8, s1->n);
			CHECK_EQ_U64(sa->frames[3], s1->frames[2]);   /* both return into deep() */
		}
	}
	coll_free(c);
	free(c);

	run(3, 1, path, sizeof(path));
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(3, c->stack_depth);
	CHECK_EQ_U64(6, c->n);
	if (c->n == 6) {
		const coll_stack_t *s = coll_find_stack(c, c->ev[0].stack);
		CHECK(s && s->n == 3);
		CHECK(c->ev[5].stack >= 1);   /* free_stacks on */
		s = coll_find_stack(c, c->ev[5].stack);
		CHECK(s && after(s->frames[0], at_free));
	}
	coll_free(c);
	free(c);

	run(0, 1, path, sizeof(path));
	c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(0, c->stack_depth);
	CHECK_EQ_U64(6, c->n);
	for (size_t i = 0; i < c->n; i++)
		CHECK_EQ_U64(0, c->ev[i].stack);
	CHECK_EQ_U64(0, c->n_stacks);
	coll_free(c);
	free(c);
	TEST_DONE();
}
