/* gmt_test.h - minimal assertions for unit tests (private to tests/unit). */
#ifndef GMT_TEST_H
#define GMT_TEST_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gmt_test_failures;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	gmt_test_failures++; } } while (0)
#define CHECK_EQ_U64(exp, act) do { uint64_t e_ = (uint64_t)(exp), a_ = (uint64_t)(act); \
	if (e_ != a_) { fprintf(stderr, "%s:%d: %s: expected %" PRIu64 ", got %" PRIu64 "\n", \
		__FILE__, __LINE__, #act, e_, a_); gmt_test_failures++; } } while (0)
#define CHECK_EQ_I64(exp, act) do { int64_t e_ = (int64_t)(exp), a_ = (int64_t)(act); \
	if (e_ != a_) { fprintf(stderr, "%s:%d: %s: expected %" PRId64 ", got %" PRId64 "\n", \
		__FILE__, __LINE__, #act, e_, a_); gmt_test_failures++; } } while (0)
#define CHECK_EQ_STR(exp, act) do { const char *e_ = (exp), *a_ = (act); \
	if (!a_ || strcmp(e_, a_)) { fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", \
		__FILE__, __LINE__, #act, e_, a_ ? a_ : "(null)"); gmt_test_failures++; } } while (0)
#define TEST_DONE() do { if (gmt_test_failures) { \
	fprintf(stderr, "%d check(s) failed\n", gmt_test_failures); return 1; } return 0; } while (0)
#endif
