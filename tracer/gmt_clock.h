/*
 * gmt_clock.h - PRIVATE to tracer/: the hot path's clock.
 *
 * Every timestamp is CLOCK_MONOTONIC in ns. Reading it through the vDSO
 * costs about 26 ns here, a third of a traced call; the TSC costs about 11.
 * Where the kernel itself keeps time with the TSC (clocksource "tsc": an
 * invariant TSC, synchronised across CPUs), a thread reads CLOCK_MONOTONIC
 * once, anchors it to the TSC, and for the next 100 us extends the anchor
 * with the TSC and a ticks-to-ns ratio that the writer measures against
 * CLOCK_MONOTONIC over the whole run (gmt_clock_calibrate). Every anchor
 * and calibration point is a (TSC, clock) pair read back to back and kept
 * only when it took at most three times the fastest pair seen at start-up:
 * a pair stretched by an interrupt or a hypervisor exit would shift a whole
 * window by microseconds (unit_clock caught one in fifty runs). The TSC path
 * opens only once that baseline is 10 ms long (ratio error about 5 ppm, so
 * at most 0.5 ns over a window); until then, and where the clocksource is
 * anything else, every read is clock_gettime. A thread's times never go
 * backwards (each read is at least the thread's last one).
 */
#ifndef GMT_CLOCK_H
#define GMT_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

typedef struct gmt_clock_anchor {
	uint64_t tsc;       /* TSC at the anchor (0: none yet)  */
	uint64_t ns;        /* CLOCK_MONOTONIC at the anchor    */
	uint64_t last;      /* the thread's last reading        */
} gmt_clock_anchor_t;

extern __thread gmt_clock_anchor_t gmt_tls_clock __attribute__((tls_model("initial-exec")));
/* Ticks a thread may extend its anchor by: 0 while the TSC path is closed. */
extern _Atomic uint64_t gmt_clock_window;
/* ns per tick, 32.32 fixed point. */
extern _Atomic uint64_t gmt_clock_mult;

/* Reads CLOCK_MONOTONIC and re-anchors the calling thread. */
uint64_t gmt_clock_slow(void);

/* Decides whether the TSC path may be used (once, at tracer start) and
 * takes the calibration's first point. */
void gmt_clock_setup(void);

/* The writer, every round: a new calibration point; opens the TSC path once
 * the baseline is long enough. */
void gmt_clock_calibrate(void);

/* The TSC path's reading, or 0 when the anchor's window is over (or the
 * path closed): then gmt_clock_slow() reads the clock. No call, so that a
 * caller's common path needs no saved registers (gmt_emit). */
static inline uint64_t gmt_clock_fast_ns(void)
{
	gmt_clock_anchor_t *a = &gmt_tls_clock;
	uint64_t d = __rdtsc() - a->tsc;
	if (__builtin_expect(d < atomic_load_explicit(&gmt_clock_window, memory_order_relaxed), 1)) {
		uint64_t ns = a->ns + (uint64_t)(((unsigned __int128)d *
			atomic_load_explicit(&gmt_clock_mult, memory_order_relaxed)) >> 32);
		if (ns < a->last)
			ns = a->last;
		a->last = ns;
		return ns;   /* never 0: the anchor's ns is a CLOCK_MONOTONIC reading */
	}
	return 0;
}

static inline uint64_t gmt_clock_ns(void)
{
	uint64_t ns = gmt_clock_fast_ns();
	return __builtin_expect(ns != 0, 1) ? ns : gmt_clock_slow();
}

#endif /* GMT_CLOCK_H */
