/* stack_walk.c - the frame-pointer walk against libunwind, frame by frame.
 * Built twice (tests/extra.mk): unit_stack_walk_fp with frame pointers,
 * unit_stack_walk_nofp without; both call through libstack_nofp.so, which
 * has none. Every capture (gmt_stack_capture, method auto) is compared with
 * an unw_backtrace of the same instant taken right after it in the same
 * function: the frames outside that function must be the same, and as
 * many. Call paths:
 *   deep        30 calls deep (deeper than DEPTH): the walk can answer
 *   deep_alt    the same, through a function pointer, two call sites
 *   thread      as deep, in a second thread
 *   shallow     3 calls deep: the window reaches libc's start-up code
 *   nofp        deep, then through the library without frame pointers
 *   busy_rbp    the same, with %rbp holding an ordinary value
 *   signal      deep, then a signal handler on the same stack
 *   altstack    a signal handler on an alternate stack (never walked)
 * Each runs REPS times. With frame pointers, the walk answers every capture
 * of the first four paths but the first (the check); libunwind answers all
 * the others. Without frame pointers libunwind answers everything. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_internal.h"
#include "gmt_test.h"

#define DEPTH 16
#define REPS 3

typedef void (*stack_walk_cb)(int);
int stack_nofp_through(stack_walk_cb cb, int arg);
int stack_nofp_busy_rbp(stack_walk_cb cb, int arg);

static int (*unw_bt)(void **, int);
static unsigned captures, compared;
static const char *path_name = "";

/* One capture, compared with libunwind's frames of the same instant. */
__attribute__((noinline)) static void probe(void)
{
	uint32_t id = gmt_stack_capture(0);
	void *ub[DEPTH + 8];
	int un = unw_bt(ub, DEPTH);
	__asm__ volatile("" ::: "memory");
	captures++;
	uint32_t n = 0;
	const uint64_t *f = gmt_stack_frames(id, &n);
	CHECK(f != NULL);
	if (!f)
		return;
	/* f[0] and ub[0] are two return addresses inside probe itself. */
	CHECK_EQ_U64((uint64_t)un, n);
	int same = n == (uint32_t)un;
	for (uint32_t i = 1; same && i < n; i++)
		same = f[i] == (uint64_t)(uintptr_t)ub[i];
	if (!same) {
		fprintf(stderr, "path %s: the frames differ\n", path_name);
		for (uint32_t i = 0; i < n || i < (uint32_t)un; i++)
			fprintf(stderr, "  %2u  tracer %#llx  libunwind %#llx\n", i,
				i < n ? (unsigned long long)f[i] : 0ull,
				i < (uint32_t)un ? (unsigned long long)(uintptr_t)ub[i] : 0ull);
	}
	CHECK(same);
	compared += same;
}

static void probe_cb(int unused)
{
	(void)unused;
	probe();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_a(void)
{
	probe();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(void)
{
	probe();
	__asm__ volatile("" ::: "memory");
}

static void (*volatile alt_site)(void);
static void (*volatile leaf_fn)(void);

__attribute__((noinline)) static void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	else
		leaf_fn();
	__asm__ volatile("" ::: "memory");
}

static void leaf_probe(void) { probe(); }
static void leaf_alt(void) { alt_site(); }
static void leaf_nofp(void) { stack_nofp_through(probe_cb, 1); }
static void leaf_busy(void) { stack_nofp_busy_rbp(probe_cb, 2); }

static void on_signal(int sig)
{
	(void)sig;
	probe();
}

static void leaf_signal(void) { raise(SIGUSR1); }

/* Its own recursion: the thread's window holds none of deep's frames. */
__attribute__((noinline)) static void deep_thread(int n)
{
	if (n > 0)
		deep_thread(n - 1);
	else
		probe();
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < REPS; i++)
		deep_thread(30);
	return NULL;
}

static void run(const char *name, void (*leaf)(void), int n)
{
	path_name = name;
	leaf_fn = leaf;
	for (int i = 0; i < REPS; i++)
		deep(n);
}

int main(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h)
		*(void **)&unw_bt = dlsym(h, "unw_backtrace");
	if (!unw_bt) {
		fprintf(stderr, "no libunwind\n");
		return 1;
	}
	gmt_stack_init(DEPTH, GMT_STACK_AUTO);
	CHECK(gmt_stack_available());

	unsigned walkable = 0, other = 0;
	run("deep", leaf_probe, 30), walkable++;
	path_name = "deep_alt";
	leaf_fn = leaf_alt;
	for (int i = 0; i < REPS; i++) {
		alt_site = site_a;
		deep(30);
		alt_site = site_b;
		deep(30);
	}
	walkable += 2;
	path_name = "thread";
	pthread_t t;
	CHECK(pthread_create(&t, NULL, thread_main, NULL) == 0);
	pthread_join(t, NULL);
	walkable++;
	run("shallow", leaf_probe, 3), other++;
	run("nofp", leaf_nofp, 30), other++;
	run("busy_rbp", leaf_busy, 30), other++;

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	run("signal", leaf_signal, 30), other++;
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	CHECK(sigaltstack(&ss, NULL) == 0);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	run("altstack", leaf_signal, 30), other++;

	CHECK_EQ_U64((walkable + other) * REPS, captures);
	CHECK_EQ_U64(captures, compared);
	gmt_stack_stats_t st;
	gmt_stack_get_stats(&st);
#ifdef STACK_WALK_FP
	CHECK_EQ_U64(walkable + other * REPS, st.unwound);
#else
	CHECK_EQ_U64((walkable + other) * REPS, st.unwound);
#endif
	printf("%u captures, %llu by libunwind, %llu walks checked, %llu wrong\n", captures,
	       (unsigned long long)st.unwound, (unsigned long long)st.checked,
	       (unsigned long long)st.walk_wrong);
	TEST_DONE();
}
