/* unit_json: the JSON writer (writers/gmt_json.h), byte for byte: layout,
 * escapes, numbers, newlines, every kind of call out of place (the output
 * still parses, close says -EINVAL) and a failing stream (-EIO). The random
 * round trip through Python's json is tests/cases/json_writer.sh. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "gmt_json.h"
#include "gmt_test.h"

static char *buf;
static size_t len;

static FILE *mem(void)
{
	free(buf);
	buf = NULL;
	len = 0;
	return open_memstream(&buf, &len);
}

/* Closes j and its memory stream; returns the close's result, buf holds
 * the output. */
static int done(gmt_json_t *j)
{
	int rc = gmt_json_close(j);
	fclose(j->f);
	return rc;
}

static void test_document(void)
{
	gmt_json_t j;
	gmt_json_init(&j, mem());
	gmt_json_obj_begin(&j);
	gmt_json_kv_str(&j, "tool", "gpumemtrace-analyze");
	gmt_json_kv_u64(&j, "n", 18446744073709551615ull);
	gmt_json_kv_i64(&j, "neg", INT64_MIN);
	gmt_json_kv_bool(&j, "t", 1);
	gmt_json_kv_bool(&j, "f", 0);
	gmt_json_kv_null(&j, "z");
	gmt_json_kv_str(&j, "nostr", NULL);
	gmt_json_kv_arr_begin(&j, "a");
	gmt_json_arr_end(&j);
	gmt_json_kv_obj_begin(&j, "o");
	gmt_json_obj_end(&j);
	gmt_json_kv_arr_begin(&j, "traces");
	for (int i = 0; i < 2; i++) {
		gmt_json_newline(&j);
		gmt_json_obj_begin(&j);
		gmt_json_kv_u64(&j, "i", (uint64_t)i);
		gmt_json_obj_end(&j);
	}
	gmt_json_arr_end(&j);
	gmt_json_obj_end(&j);
	CHECK_EQ_U64(0, done(&j));
	CHECK_EQ_STR("{\"tool\":\"gpumemtrace-analyze\",\"n\":18446744073709551615,"
		     "\"neg\":-9223372036854775808,\"t\":true,\"f\":false,\"z\":null,\"nostr\":null,"
		     "\"a\":[],\"o\":{},\"traces\":[\n{\"i\":0},\n{\"i\":1}]}\n", buf);
}

static void test_strings(void)
{
	gmt_json_t j;
	gmt_json_init(&j, mem());
	gmt_json_arr_begin(&j);
	gmt_json_str(&j, "q\"b\\s/\x01\n\x1f\x7f");
	/* valid 2-, 3- and 4-byte sequences stay; a lone continuation byte, a
	 * truncated sequence, an overlong form, a surrogate, a code point above
	 * U+10FFFF and 0xff each become one U+FFFD per byte */
	gmt_json_str(&j, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xff");
	gmt_json_strn(&j, "a\0b", 3);
	gmt_json_strn(&j, "\xe2\x82\xac", 2);   /* cut by the length */
	gmt_json_str(&j, "");
	gmt_json_key(&j, "k");                   /* a key in an array: refused */
	gmt_json_arr_end(&j);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("[\"q\\\"b\\\\s/\\u0001\\u000a\\u001f\\u007f\","
		     "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd|"
		     "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\","
		     "\"a\\u0000b\",\"\\ufffd\\ufffd\",\"\"]\n", buf);
	/* keys are escaped the same way */
	gmt_json_init(&j, mem());
	gmt_json_obj_begin(&j);
	gmt_json_kv_u64(&j, "a\"\xff", 1);
	gmt_json_obj_end(&j);
	CHECK_EQ_U64(0, done(&j));
	CHECK_EQ_STR("{\"a\\\"\\ufffd\":1}\n", buf);
}

static void test_numbers(void)
{
	gmt_json_t j;
	gmt_json_init(&j, mem());
	gmt_json_arr_begin(&j);
	gmt_json_double(&j, 4.0 / 9.0);
	gmt_json_double(&j, 0.1);
	gmt_json_double(&j, 1e300);
	gmt_json_double(&j, NAN);
	gmt_json_double(&j, INFINITY);
	gmt_json_fixed(&j, 2.0, 9);
	gmt_json_fixed(&j, -0.0000000016, 9);
	gmt_json_fixed(&j, 1.5, 0);
	gmt_json_fixed(&j, -INFINITY, 3);
	gmt_json_arr_end(&j);
	CHECK_EQ_U64(0, done(&j));
	CHECK_EQ_STR("[0.44444444444444442,0.10000000000000001,1.0000000000000001e+300,null,null,"
		     "2.000000000,-0.000000002,2,null]\n", buf);
}

/* gmt_json_scaled: printf's "%.*f" of v / 10^d, from the integer, for d
 * 0, 3 (microseconds), 9 (seconds) and 17; edges of sign, of a unit, of
 * 2^52 (printf beyond) and a spread of values. */
static void test_scaled(void)
{
	static const int64_t edge[] = { 0, 1, -1, 999, 1000, 999999999, 1000000000, -1000000000,
		1000000001, (1ll << 52) - 1, -(1ll << 52) + 1, 1ll << 52, -(1ll << 52), INT64_MAX,
		INT64_MIN + 1, 123456789012345ll };
	static const unsigned dec[] = { 0, 3, 9, 17 };
	const double pow10[] = { 1e0, 1e3, 1e9, 1e17 };
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 20000; i++) {
		int64_t v;
		if (i < (int)(sizeof(edge) / sizeof(edge[0]))) {
			v = edge[i];
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;   /* xorshift64 */
			v = (int64_t)(x >> (x % 40)) * (x & 1 ? 1 : -1);
		}
		unsigned k = (unsigned)i % 4;
		gmt_json_t j;
		gmt_json_init(&j, mem());
		gmt_json_scaled(&j, v, dec[k]);
		CHECK_EQ_U64(0, done(&j));
		char want[400];
		snprintf(want, sizeof(want), "%.*f\n", (int)dec[k], (double)v / pow10[k]);
		if (strcmp(want, buf)) {
			CHECK_EQ_STR(want, buf);
			break;
		}
	}
}

/* Integers: printf's digits at every power of ten and its neighbours,
 * the extremes and a spread of values, unsigned and signed. */
static void test_integers(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, p10 = 1;
	char want[128];
	for (int i = 0; i < 3000; i++) {
		uint64_t v;
		if (i < 60) {
			v = p10 + (uint64_t)(i % 3) - 1;   /* 10^k - 1, 10^k, 10^k + 1 */
			if (i % 3 == 2 && p10 <= UINT64_MAX / 10)
				p10 *= 10;
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = x >> (x % 64);
		}
		gmt_json_t j;
		gmt_json_init(&j, mem());
		gmt_json_arr_begin(&j);
		gmt_json_u64(&j, v);
		gmt_json_i64(&j, (int64_t)v);
		gmt_json_u64(&j, UINT64_MAX - v);
		gmt_json_arr_end(&j);
		CHECK_EQ_U64(0, done(&j));
		snprintf(want, sizeof(want), "[%" PRIu64 ",%" PRId64 ",%" PRIu64 "]\n", v, (int64_t)v, UINT64_MAX - v);
		if (strcmp(want, buf)) {
			CHECK_EQ_STR(want, buf);
			break;
		}
	}
}

static void test_misuse(void)
{
	gmt_json_t j;
	/* a value in an object without its key: refused, the rest too; close
	 * completes the object */
	gmt_json_init(&j, mem());
	gmt_json_obj_begin(&j);
	gmt_json_kv_u64(&j, "a", 1);
	gmt_json_u64(&j, 2);
	gmt_json_kv_u64(&j, "b", 3);
	gmt_json_obj_end(&j);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("{\"a\":1}\n", buf);
	/* a key left without its value, levels left open */
	gmt_json_init(&j, mem());
	gmt_json_arr_begin(&j);
	gmt_json_obj_begin(&j);
	gmt_json_key(&j, "k");
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("[{\"k\":null}]\n", buf);
	/* a key after a key */
	gmt_json_init(&j, mem());
	gmt_json_obj_begin(&j);
	gmt_json_key(&j, "k");
	gmt_json_key(&j, "l");
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("{\"k\":null}\n", buf);
	/* an end that matches no begin */
	gmt_json_init(&j, mem());
	gmt_json_arr_begin(&j);
	gmt_json_obj_end(&j);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("[]\n", buf);
	gmt_json_init(&j, mem());
	gmt_json_arr_end(&j);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("", buf);
	/* a second top-level value */
	gmt_json_init(&j, mem());
	gmt_json_u64(&j, 7);
	gmt_json_u64(&j, 8);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("7\n", buf);
	/* a key at the top level; a NULL key */
	gmt_json_init(&j, mem());
	gmt_json_key(&j, "k");
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("", buf);
	gmt_json_init(&j, mem());
	gmt_json_obj_begin(&j);
	gmt_json_kv_u64(&j, NULL, 1);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_STR("{}\n", buf);
	/* nesting deeper than GMT_JSON_MAX_DEPTH */
	gmt_json_init(&j, mem());
	for (int i = 0; i < GMT_JSON_MAX_DEPTH + 1; i++)
		gmt_json_arr_begin(&j);
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)done(&j));
	CHECK_EQ_U64(2 * GMT_JSON_MAX_DEPTH + 1, len);
	for (int i = 0; i < GMT_JSON_MAX_DEPTH; i++) {
		CHECK(buf[i] == '[');
		CHECK(buf[GMT_JSON_MAX_DEPTH + i] == ']');
	}
	/* nothing at all: nothing written, no error; a second close refused */
	gmt_json_init(&j, mem());
	CHECK_EQ_U64(0, gmt_json_close(&j));
	CHECK_EQ_U64((uint64_t)-EINVAL, (uint64_t)gmt_json_close(&j));
	fclose(j.f);
	CHECK_EQ_STR("", buf);
	/* after the close, nothing more */
	gmt_json_init(&j, mem());
	gmt_json_null(&j);
	CHECK_EQ_U64(0, gmt_json_close(&j));
	gmt_json_null(&j);
	fclose(j.f);
	CHECK_EQ_STR("null\n", buf);
}

static void test_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	CHECK(f != NULL);
	if (!f)
		return;
	gmt_json_t j;
	gmt_json_init(&j, f);
	gmt_json_arr_begin(&j);
	for (int i = 0; i < 100000; i++)
		gmt_json_u64(&j, (uint64_t)i);
	gmt_json_arr_end(&j);
	CHECK_EQ_U64((uint64_t)-EIO, (uint64_t)gmt_json_close(&j));
	fclose(f);
}

/* The writer's own buffer: nothing reaches the FILE before a flush (or
   the close); a flush gives exactly the text so far; strings and numbers
   across the buffer's end and a string longer than the buffer come out
   whole. */
static void test_buffer(void)
{
	gmt_json_t j;
	FILE *f = mem();
	gmt_json_init(&j, f);
	gmt_json_obj_begin(&j);
	gmt_json_kv_u64(&j, "a", 1);
	fflush(f);
	CHECK_EQ_U64(0, len);
	CHECK_EQ_U64(0, gmt_json_flush(&j));
	fflush(f);
	CHECK_EQ_U64(6, len);
	CHECK(len == 6 && !memcmp(buf, "{\"a\":1", 6));
	/* 3 * GMT_JSON_BUF / 7 strings of 5 bytes and numbers: crossing the
	   buffer's end at every offset; then one longer than the buffer */
	gmt_json_kv_arr_begin(&j, "x");
	const size_t n = 3 * GMT_JSON_BUF / 7;
	for (size_t i = 0; i < n; i++) {
		gmt_json_str(&j, "abcde");
		gmt_json_u64(&j, 12345678901ull);
	}
	gmt_json_arr_end(&j);
	char *big = malloc(2 * GMT_JSON_BUF + 1);
	CHECK(big != NULL);
	if (!big)
		return;
	memset(big, 'q', 2 * GMT_JSON_BUF);
	big[2 * GMT_JSON_BUF] = 0;
	/* a value formatted by the caller, among tokens */
	gmt_json_kv_arr_begin(&j, "r");
	gmt_json_u64(&j, 1);
	gmt_json_newline(&j);
	gmt_json_raw(&j, "[2,null]", 8);
	gmt_json_u64(&j, 3);
	gmt_json_arr_end(&j);
	gmt_json_kv_str(&j, "big", big);
	/* single characters up to the buffer's end: empty arrays */
	gmt_json_kv_arr_begin(&j, "e");
	for (size_t i = 0; i < GMT_JSON_BUF; i++) {
		gmt_json_arr_begin(&j);
		gmt_json_arr_end(&j);
	}
	gmt_json_arr_end(&j);
	gmt_json_obj_end(&j);
	CHECK_EQ_U64(0, done(&j));
	/* {"a":1,"x":["abcde",12345678901,...],"big":"qq..."}\n */
	size_t want = 6 + 6 + n * (7 + 1 + 11 + 1) - 1 + 1 + 20 + 7 + (2 * GMT_JSON_BUF + 2) +
		      6 + 3 * GMT_JSON_BUF - 1 + 1 + 1 + 1;
	CHECK_EQ_U64(want, len);
	if (len == want) {
		const char *p = buf + 12;
		size_t bad = 0;
		for (size_t i = 0; i < n; i++, p += 20)
			bad += memcmp(p, i + 1 < n ? "\"abcde\",12345678901," : "\"abcde\",12345678901]", 20) != 0;
		CHECK_EQ_U64(0, bad);
		CHECK(!memcmp(p, ",\"r\":[1,\n[2,null],3]", 20));
		p += 20;
		CHECK(!memcmp(p, ",\"big\":\"qqq", 10));
		p += 8 + 2 * GMT_JSON_BUF;
		CHECK(!memcmp(p, "\",\"e\":[[]", 9));
		p += 7;
		for (size_t i = 0; i < GMT_JSON_BUF; i++, p += 3)
			bad += memcmp(p, i + 1 < GMT_JSON_BUF ? "[]," : "[]]", 3) != 0;
		CHECK_EQ_U64(0, bad);
		CHECK(!memcmp(p, "}\n", 2));
	}
	free(big);
}

int main(void)
{
	test_buffer();
	test_document();
	test_strings();
	test_numbers();
	test_scaled();
	test_integers();
	test_misuse();
	test_write_error();
	free(buf);
	TEST_DONE();
}
