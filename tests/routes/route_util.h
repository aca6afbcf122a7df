/*
 * route_util.h - helpers of the route programs (tests/routes/route_*.c).
 *
 * A route program drives the CUDA doubles through one interception route and
 * prints only what is the same with and without the preload (results, sizes,
 * cuMemGetInfo deltas, addresses relative to a base) on stdout; the case
 * script compares both runs. Absolute addresses and handles, which differ
 * from run to run, go to stderr as "addr NAME 0xHEX" lines, which the case
 * script uses to name them in the trace (tests/routes/route_lib.sh).
 */
#ifndef ROUTE_UTIL_H
#define ROUTE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints "what = result" and stops the program (exit 1) when the result is not
 * the expected one; both runs must stop at the same place. */
#define ROUTE_CHECK(what, expr, expect)                                            \
	do {                                                                       \
		long long r_ = (long long)(expr);                                  \
		printf("%s = %lld\n", (what), r_);                                 \
		if (r_ != (long long)(expect)) {                                   \
			printf("unexpected: %s wanted %lld\n", (what), (long long)(expect)); \
			fflush(stdout);                                            \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

/* Names an address or handle for the case script. */
static inline void route_name(const char *name, uint64_t value)
{
	fprintf(stderr, "addr %s 0x%llx\n", name, (unsigned long long)value);
}

#endif
