/*
 * gmt_card.c - exact arithmetic of the sizing card's computed part
 * (gmt_card.h), on the decimals of gmt_dec.h: a result in bytes must come
 * out whole (or it is an error).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gmt_card.h"
#include "gmt_dec.h"

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err && n) {
		va_start(ap, fmt);
		vsnprintf(err, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int gmt_card_weights(const char *parameters, const char *bits, uint64_t *bytes, char *err,
		     size_t errlen)
{
	gmt_dec_t n, b;
	int r;

	if (gmt_dec_parse(parameters, &n))
		return fail(err, errlen, "--parameters: not a number: '%s'", parameters ? parameters : "");
	if (!n.mant || !gmt_dec_is_whole(&n))
		return fail(err, errlen, "--parameters: must be a whole number above 0, got '%s'", parameters);
	if (gmt_dec_parse(bits, &b))
		return fail(err, errlen, "--bits: not a number: '%s'", bits ? bits : "");
	if (!b.mant)
		return fail(err, errlen, "--bits: must be above 0, got '%s'", bits);
	if (gmt_dec_mul(&n, &b))
		return fail(err, errlen, "%s parameters x %s bits is too large", parameters, bits);
	r = gmt_dec_to_u64(&n, 8, bytes);
	if (r == 1)
		return fail(err, errlen, "%s parameters x %s bits is not a whole number of bytes",
			    parameters, bits);
	if (r == 2)
		return fail(err, errlen, "%s parameters x %s bits is too large", parameters, bits);
	return 0;
}

int gmt_card_reserve(const char *gib, uint64_t *bytes, char *err, size_t errlen)
{
	gmt_dec_t r, g = { GMT_GIB, 0 };
	int st;

	if (gmt_dec_parse(gib, &r))
		return fail(err, errlen, "--reserve-gib: not a number (0 or more): '%s'", gib ? gib : "");
	if (gmt_dec_mul(&r, &g))
		return fail(err, errlen, "--reserve-gib %s is too large", gib);
	st = gmt_dec_to_u64(&r, 1, bytes);
	if (st == 1)
		return fail(err, errlen, "--reserve-gib %s is not a whole number of bytes", gib);
	if (st == 2)
		return fail(err, errlen, "--reserve-gib %s is too large", gib);
	return 0;
}

int gmt_card_kv(const char *spec, uint64_t *bytes, char factors[6][96], char *err, size_t errlen)
{
	static const char *const names[6] = { "layers", "KV heads", "head dimension", "tokens",
					      "bytes per value", "concurrent sequences" };
	gmt_dec_t total = { 2, 0 }, f;
	char part[64];
	const char *p = spec ? spec : "";
	int st;

	for (int i = 0; i < 6; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if ((i < 5 && !comma) || (i == 5 && comma))
			return fail(err, errlen, "--kv: expected six numbers L,H,D,T,B,S (layers, KV heads, "
				    "head dimension, tokens, bytes per value, concurrent sequences), got '%s'",
				    spec ? spec : "");
		if (len >= sizeof part)
			return fail(err, errlen, "--kv: %s: not a number", names[i]);
		memcpy(part, p, len);
		part[len] = 0;
		if (gmt_dec_parse(part, &f))
			return fail(err, errlen, "--kv: %s: not a number: '%s'", names[i], part);
		if (!f.mant || (i != 4 && !gmt_dec_is_whole(&f)))
			return fail(err, errlen, "--kv: %s must be %s above 0, got '%s'", names[i],
				    i == 4 ? "a number" : "a whole number", part);
		gmt_dec_plain(&f, factors[i]);
		if (gmt_dec_mul(&total, &f))
			return fail(err, errlen, "--kv %s is too large", spec);
		p = comma ? comma + 1 : p + len;
	}
	st = gmt_dec_to_u64(&total, 1, bytes);
	if (st == 1)
		return fail(err, errlen, "--kv %s is not a whole number of bytes", spec);
	if (st == 2)
		return fail(err, errlen, "--kv %s is too large", spec);
	return 0;
}

int gmt_card_in_unit(uint64_t bytes, uint64_t unit, char out[32])
{
	unsigned __int128 x = (unsigned __int128)bytes * 100;
	unsigned __int128 q = x / unit, rem = x % unit;

	/* half to even */
	if (rem * 2 > unit || (rem * 2 == unit && (q & 1)))
		q++;
	snprintf(out, 32, "%llu.%02u", (unsigned long long)(q / 100), (unsigned)(q % 100));
	return rem == 0;
}

void gmt_card_units_text(uint64_t bytes, char *out, size_t len)
{
	char gb[32], gib[32];
	int egb = gmt_card_in_unit(bytes, GMT_GB, gb), egib = gmt_card_in_unit(bytes, GMT_GIB, gib);

	snprintf(out, len, "%llu B = %s%s GB = %s%s GiB", (unsigned long long)bytes,
		 egb ? "" : "about ", gb, egib ? "" : "about ", gib);
}

int gmt_card_plain(const char *text, char out[96])
{
	gmt_dec_t d;
	if (!text || gmt_dec_parse(text, &d)) {
		snprintf(out, 96, "%s", text ? text : "");
		return -1;
	}
	gmt_dec_plain(&d, out);
	return 0;
}

int gmt_card_same(const char *a, const char *b)
{
	gmt_dec_t x, y;
	if (!gmt_dec_parse(a, &x) && !gmt_dec_parse(b, &y))
		return x.mant == y.mant && x.exp == y.exp;
	return !strcmp(a, b);
}
