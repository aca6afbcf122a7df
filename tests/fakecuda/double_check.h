/* double_check.h - assertions for the programs that test the CUDA doubles
 * themselves (tests/routes/double_*.c). Private to those programs. */
#ifndef FAKECUDA_DOUBLE_CHECK_H
#define FAKECUDA_DOUBLE_CHECK_H
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int dc_failures;

#define DC_EQ(exp, act) do { uint64_t e_ = (uint64_t)(exp), a_ = (uint64_t)(act); \
	if (e_ != a_) { fprintf(stderr, "%s:%d: %s: expected %" PRIu64 " (0x%" PRIx64 \
		"), got %" PRIu64 " (0x%" PRIx64 ")\n", __FILE__, __LINE__, #act, e_, e_, a_, a_); \
		dc_failures++; } } while (0)
#define DC_TRUE(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
	dc_failures++; } } while (0)
#define DC_DONE() do { if (dc_failures) { \
	fprintf(stderr, "%d check(s) failed\n", dc_failures); return 1; } \
	printf("ok\n"); return 0; } while (0)

#define MiB ((uint64_t)1 << 20)
#endif
