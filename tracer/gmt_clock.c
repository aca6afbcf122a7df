/* gmt_clock.c - the TSC-extended CLOCK_MONOTONIC (see gmt_clock.h). */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "gmt_clock.h"

__thread gmt_clock_anchor_t gmt_tls_clock __attribute__((tls_model("initial-exec")));
_Atomic uint64_t gmt_clock_window;
_Atomic uint64_t gmt_clock_mult;

static int tsc_usable;
static uint64_t base_tsc, base_ns;       /* the calibration's first point */
static uint64_t pair_max_ticks;          /* a pair read slower than this is refused */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

#define WINDOW_NS      100000ull     /* a thread re-anchors every 100 us */
#define BASELINE_NS    10000000ull   /* the ratio is trusted after 10 ms  */
#define PAIR_PROBES    64            /* pairs read at setup to find the fastest */
#define PAIR_TRIES     4             /* tries for one accepted pair */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A (TSC, CLOCK_MONOTONIC) pair read back to back; the TSC is the middle of
 * the two reads around the clock, so the pair is off by at most half the
 * ticks it took. A pair that took longer than pair_max_ticks (an interrupt,
 * a preemption, a hypervisor exit in between) is refused: one such pair
 * taken as an anchor would shift a whole 100 us window by microseconds.
 * Tries PAIR_TRIES times; returns 0 when none was fast enough. */
static int read_pair(uint64_t *tsc, uint64_t *ns)
{
	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t t1 = __rdtsc();
		uint64_t m = mono_ns();
		uint64_t t2 = __rdtsc();
		if (t2 >= t1 && t2 - t1 <= pair_max_ticks) {
			*tsc = t1 + (t2 - t1) / 2;
			*ns = m;
			return 1;
		}
	}
	return 0;
}

/* The fastest of PAIR_PROBES pairs sets the bound: three times it, plus 64
 * ticks for the reads' own jitter. With the vDSO's clock_gettime at about
 * 26 ns (some 80 ticks) that bounds an anchor's error near 50 ns. */
static void measure_pair_cost(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < PAIR_PROBES; i++) {
		uint64_t t1 = __rdtsc();
		(void)mono_ns();
		uint64_t t2 = __rdtsc();
		if (t2 >= t1 && t2 - t1 < best)
			best = t2 - t1;
	}
	pair_max_ticks = best == UINT64_MAX ? 0 : 3 * best + 64;
}

uint64_t gmt_clock_slow(void)
{
	gmt_clock_anchor_t *a = &gmt_tls_clock;
	uint64_t tsc, ns;
	if (atomic_load_explicit(&gmt_clock_window, memory_order_relaxed) && read_pair(&tsc, &ns)) {
		a->tsc = tsc;
		a->ns = ns;
	} else {
		ns = mono_ns();
	}
	if (ns < a->last)
		ns = a->last;
	a->last = ns;
	return ns;
}

static void setup(void)
{
	char buf[64] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	/* The kernel keeps time with the TSC only when it found it invariant
	 * and synchronised across CPUs: then so may we. */
	tsc_usable = !strcmp(buf, "tsc\n") || !strcmp(buf, "tsc");
	if (tsc_usable) {
		measure_pair_cost();
		tsc_usable = pair_max_ticks && read_pair(&base_tsc, &base_ns);
	}
}

void gmt_clock_setup(void)
{
	pthread_once(&setup_once, setup);
}

void gmt_clock_calibrate(void)
{
	uint64_t tsc, ns;
	if (!tsc_usable || !read_pair(&tsc, &ns) || tsc <= base_tsc || ns <= base_ns)
		return;
	uint64_t dns = ns - base_ns, dtsc = tsc - base_tsc;
	if (dns < BASELINE_NS)
		return;
	uint64_t mult = (uint64_t)(((unsigned __int128)dns << 32) / dtsc);
	atomic_store_explicit(&gmt_clock_mult, mult, memory_order_relaxed);
	if (!atomic_load_explicit(&gmt_clock_window, memory_order_relaxed)) {
		uint64_t window = (uint64_t)(((unsigned __int128)WINDOW_NS << 32) / mult);
		atomic_store_explicit(&gmt_clock_window, window, memory_order_relaxed);
	}
}
