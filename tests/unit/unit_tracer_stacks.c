/* unit_tracer_stacks: stack capture and deduplication. The same call site
 * gives the same id, another site another id; the depth is honoured; the
 * innermost frame is the caller of gmt_emit (skip_frames = 0) or its caller
 * (skip_frames = 1); frees carry no stack unless free_stacks; depth 0
 * records none. Each configuration runs in its own child process. */
#include <sys/wait.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static char dir[4096];

__attribute__((noinline)) static void site_a(int skip)
{
	gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = 0xa, .size = 1 };
	gmt_emit(&e, 1, skip);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(void)
{
	gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = 0xb, .size = 1 };
	gmt_emit(&e, 1, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_free(void)
{
	gmt_event_t e = { .type = GMT_EV_FREE, .addr = 0xf };
	gmt_emit(&e, 1, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(int skip)
{
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

/* Runs the workload in a child with this depth; returns the trace path. */
static void run(int depth, int free_stacks, char *path, size_t cap)
{
	pid_t pid = fork();
	if (pid == 0) {
		gmt_config_t cfg = test_config(dir);
		cfg.stack_depth = depth;
		cfg.free_stacks = free_stacks;
		if (gmt_tracer_init(&cfg))
			_exit(3);
		deep(10);
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	snprintf(path, cap, "%s/gpumemtrace.unit_tracer_stacks.%d.gmt", dir, (int)pid);
}

static int in_fn(uint64_t pc, void (*fn)(void))
{
	uint64_t f = (uint64_t)(uintptr_t)fn;
	return pc > f && pc < f + 256;
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
			CHECK(in_fn(sa->frames[0], (void (*)(void))site_a));
			CHECK(in_fn(sa->frames[1], (void (*)(void))outer));
			CHECK(in_fn(sb->frames[0], site_b));
			CHECK(in_fn(s1->frames[0], (void (*)(void))outer));
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
		CHECK(s && in_fn(s->frames[0], site_free));
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
