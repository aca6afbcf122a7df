/*
 * json-random.c - random documents through the JSON writer, for the
 * property test tests/cases/json_writer.sh.
 *
 *   json-random SEED COUNT DIR
 *
 * Writes DIR/N.json (N = 0 .. COUNT-1), each a random nesting of objects and
 * arrays (depth up to 10) holding random strings of any bytes 0-255 (NUL
 * included; runs of valid UTF-8 of 1 to 4 bytes and nearly valid sequences
 * mixed in), u64, i64,
 * doubles of random bits (NaN and infinities too), booleans and nulls, and
 * DIR/N.spec: what was asked of the writer, one token per line
 *   { } [ ]         containers
 *   K hex / S hex   a key / a string, its bytes in hex
 *   U n / I n       an unsigned / signed integer
 *   D hex           a double, its 64 bits
 *   B 0|1, N        boolean, null
 *   R rc            last line: gmt_json_close's result
 * One document in eight is misused at a random point (a value without a
 * key, a key in an array, a wrong end, or levels left open): its spec ends
 * with "M" before R, and only parsing is checked then. Keys of one object
 * start with their index, so that no two are equal after U+FFFD replacement.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_json.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static FILE *spec;
static gmt_json_t j;
static int misuse_at = -1, tokens;

static void hex(const char *tag, const unsigned char *p, size_t n)
{
	fprintf(spec, "%s ", tag);
	for (size_t i = 0; i < n; i++)
		fprintf(spec, "%02x", p[i]);
	fputc('\n', spec);
}

/* A random byte string: random bytes, runs of ASCII, valid sequences. */
static size_t rand_bytes(unsigned char *b, size_t cap)
{
	size_t n = 0, want = below(4) ? below(24) : below(200);
	while (n < want && n + 4 < cap) {
		unsigned r = below(10);
		if (r < 2) {
			b[n++] = (unsigned char)below(256);
		} else if (r < 3) {
			/* nearly valid: an overlong form, a surrogate, above U+10FFFF,
			 * a lead byte whose sequence is cut */
			static const unsigned char bad[][4] = {
				{ 0xc0, 0xaf }, { 0xc1, 0xbf }, { 0xe0, 0x80, 0xaf }, { 0xf0, 0x8f, 0xbf, 0xbf },
				{ 0xed, 0xa0, 0x80 }, { 0xed, 0xbf, 0xbf }, { 0xf4, 0x90, 0x80, 0x80 },
				{ 0xf5, 0x80, 0x80, 0x80 }, { 0xe2, 0x82 }, { 0xf0, 0x9f, 0x98 }, { 0xc3 },
			};
			const unsigned char *x = bad[below(sizeof(bad) / sizeof(bad[0]))];
			for (int q = 0; q < 4 && x[q]; q++)
				b[n++] = x[q];
		} else if (r < 6) {
			b[n++] = (unsigned char)(0x20 + below(0x5f));
		} else {
			/* a valid code point of 1 to 4 bytes */
			uint32_t cp;
			do {
				unsigned w = below(4);
				cp = w == 0 ? below(0x80) : w == 1 ? 0x80 + below(0x780) :
				     w == 2 ? 0x800 + below(0xf800) : 0x10000 + below(0x100000);
			} while (cp >= 0xd800 && cp <= 0xdfff);
			if (cp < 0x80) {
				b[n++] = (unsigned char)cp;
			} else if (cp < 0x800) {
				b[n++] = (unsigned char)(0xc0 | cp >> 6);
				b[n++] = (unsigned char)(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				b[n++] = (unsigned char)(0xe0 | cp >> 12);
				b[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
				b[n++] = (unsigned char)(0x80 | (cp & 0x3f));
			} else {
				b[n++] = (unsigned char)(0xf0 | cp >> 18);
				b[n++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
				b[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
				b[n++] = (unsigned char)(0x80 | (cp & 0x3f));
			}
		}
	}
	return n;
}

/* Misuses the writer once, at the chosen token; returns 1 then. */
static int maybe_misuse(int in_object)
{
	if (tokens++ != misuse_at)
		return 0;
	switch (below(4)) {
	case 0: gmt_json_u64(&j, 1); if (!in_object) gmt_json_key(&j, "k"); break;
	case 1: gmt_json_key(&j, "k"); if (in_object) gmt_json_key(&j, "l"); break;
	case 2: if (in_object) gmt_json_arr_end(&j); else gmt_json_obj_end(&j); break;
	default: break;   /* levels left open: the document just stops */
	}
	fputs("M\n", spec);
	return 1;
}

static int value(unsigned depth);

static int container(unsigned depth, int obj)
{
	unsigned n = below(depth < 3 ? 7 : 4);
	fputs(obj ? "{\n" : "[\n", spec);
	if (obj)
		gmt_json_obj_begin(&j);
	else
		gmt_json_arr_begin(&j);
	for (unsigned i = 0; i < n; i++) {
		if (maybe_misuse(obj))
			return 1;
		if (below(5) == 0)
			gmt_json_newline(&j);
		if (obj) {
			unsigned char k[256];
			int p = snprintf((char *)k, sizeof(k), "%u:", i);
			size_t kn = (size_t)p + rand_bytes(k + p, sizeof(k) - (size_t)p);
			k[kn] = 0;
			/* keys are C strings: no NUL inside */
			for (size_t q = (size_t)p; q < kn; q++)
				if (!k[q])
					k[q] = 'z';
			hex("K", k, kn);
			gmt_json_key(&j, (const char *)k);
		}
		if (value(depth + 1))
			return 1;
	}
	fputs(obj ? "}\n" : "]\n", spec);
	if (obj)
		gmt_json_obj_end(&j);
	else
		gmt_json_arr_end(&j);
	return 0;
}

static int value(unsigned depth)
{
	unsigned r = below(depth >= 10 ? 7 : 10);
	unsigned char b[256];
	size_t n;
	uint64_t u;
	switch (r) {
	case 0:
		n = rand_bytes(b, sizeof(b));
		hex("S", b, n);
		gmt_json_strn(&j, (const char *)b, n);
		return 0;
	case 1:
		u = rnd() >> below(64);
		fprintf(spec, "U %" PRIu64 "\n", u);
		gmt_json_u64(&j, u);
		return 0;
	case 2:
		u = rnd() >> below(64);
		fprintf(spec, "I %" PRId64 "\n", (int64_t)u);
		gmt_json_i64(&j, (int64_t)u);
		return 0;
	case 3: {
		double d;
		u = rnd();
		if (below(4) == 0)   /* ordinary magnitudes too, not only bit soup */
			d = (double)(int64_t)u / (double)(1ull << below(63));
		else
			memcpy(&d, &u, sizeof(d));
		memcpy(&u, &d, sizeof(u));
		fprintf(spec, "D %016" PRIx64 "\n", u);
		gmt_json_double(&j, d);
		return 0;
	}
	case 4:
		u = below(2);
		fprintf(spec, "B %u\n", (unsigned)u);
		gmt_json_bool(&j, (int)u);
		return 0;
	case 5:
		fputs("N\n", spec);
		gmt_json_null(&j);
		return 0;
	case 6:
		n = rand_bytes(b, sizeof(b));
		hex("S", b, n);
		gmt_json_strn(&j, (const char *)b, n);
		return 0;
	default:
		return container(depth, r & 1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: json-random SEED COUNT DIR\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 10);
	unsigned count = (unsigned)strtoul(argv[2], NULL, 10);
	char path[4200];
	for (unsigned d = 0; d < count; d++) {
		rng = seed * 1000003ull + d;
		snprintf(path, sizeof(path), "%s/%u.json", argv[3], d);
		FILE *f = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/%u.spec", argv[3], d);
		spec = fopen(path, "w");
		if (!f || !spec) {
			perror(path);
			return 1;
		}
		tokens = 0;
		misuse_at = below(8) == 0 ? (int)below(20) : -1;
		gmt_json_init(&j, f);
		/* a document is a container most of the time, a scalar sometimes */
		if (below(6))
			container(0, (int)below(2));
		else
			value(9);
		fprintf(spec, "R %d\n", gmt_json_close(&j));
		fclose(f);
		fclose(spec);
	}
	return 0;
}
