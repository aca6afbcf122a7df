/* unit_clock: the TSC-extended clock reads CLOCK_MONOTONIC: never backwards
 * on a thread, and within 1 us of clock_gettime read just before and after
 * it, before and after the writer has opened the TSC path (which it does,
 * where the kernel's clocksource is the TSC, once the calibration baseline
 * is 10 ms long). */
#include <string.h>
#include <time.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"
#include "gmt_internal.h"

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int clocksource_is_tsc(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return !strcmp(buf, "tsc\n");
}

static void check_reads(int n)
{
	uint64_t prev = 0, bad_order = 0, bad_bracket = 0;
	for (int i = 0; i < n; i++) {
		uint64_t m1 = mono();
		uint64_t g = gmt_now_ns();
		uint64_t m2 = mono();
		if (g < prev)
			bad_order++;
		if (g + 1000 < m1 || g > m2 + 1000)
			bad_bracket++;
		prev = g;
	}
	CHECK_EQ_U64(0, bad_order);
	CHECK_EQ_U64(0, bad_bracket);
}

int main(void)
{
	const char *dir = test_dir("clock");
	gmt_config_t cfg = test_config(dir);
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	check_reads(200000);   /* before the TSC path may open */
	struct timespec d = { 0, 40 * 1000 * 1000 };
	nanosleep(&d, NULL);   /* several writer rounds, a 40 ms baseline */
	gmt_tracer_flush(1000);
	if (clocksource_is_tsc())
		CHECK(atomic_load(&gmt_clock_window) > 0);
	else
		CHECK_EQ_U64(0, atomic_load(&gmt_clock_window));
	check_reads(2000000);
	gmt_tracer_shutdown();
	TEST_DONE();
}
