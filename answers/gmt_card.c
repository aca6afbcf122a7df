/*
 * gmt_card.c - exact arithmetic of the sizing card's computed part
 * (gmt_card.h). A number is mant x 10^exp with an unsigned 128-bit mantissa;
 * products multiply mantissas (checked) and add exponents; a result in bytes
 * must come out whole (or it is an error).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gmt_card.h"

typedef unsigned __int128 u128;

typedef struct dec {
	u128 mant;
	int exp;
} dec_t;

#define U128_MAX (~(u128)0)
#define POW10_MAX 38   /* 10^38 < 2^128 */

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

static u128 pow10u(int e)
{
	u128 p = 1;
	while (e-- > 0)
		p *= 10;
	return p;
}

/* Drops trailing zeros of the mantissa into the exponent. */
static void normalise(dec_t *d)
{
	if (d->mant == 0) {
		d->exp = 0;
		return;
	}
	while (d->mant % 10 == 0) {
		d->mant /= 10;
		d->exp++;
	}
}

/* [+]digits[.digits][(e|E)[+-]digits], surrounding blanks allowed. */
static int parse(const char *s, dec_t *d)
{
	u128 m = 0;
	int exp = 0, digits = 0, e = 0, esign = 1, edigits = 0;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+')
		s++;
	for (; isdigit((unsigned char)*s); s++, digits++) {
		if (m > (U128_MAX - 9) / 10)
			return -1;
		m = m * 10 + (u128)(*s - '0');
	}
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++, digits++) {
			if (m > (U128_MAX - 9) / 10)
				return -1;
			m = m * 10 + (u128)(*s - '0');
			exp--;
		}
	}
	if (!digits)
		return -1;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			esign = *s++ == '-' ? -1 : 1;
		for (; isdigit((unsigned char)*s); s++, edigits++)
			if ((e = e * 10 + (*s - '0')) > 1000)
				return -1;
		if (!edigits)
			return -1;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return -1;
	d->mant = m;
	d->exp = exp + esign * e;
	normalise(d);
	return 0;
}

static int mul(dec_t *a, const dec_t *b)
{
	if (a->mant && b->mant > U128_MAX / a->mant)
		return -1;
	a->mant *= b->mant;
	a->exp += b->exp;
	normalise(a);
	return 0;
}

static int is_whole(const dec_t *d)
{
	return d->exp >= 0;
}

/* The whole number d / div as a uint64: 0, 1 not whole, 2 too large. */
static int to_u64(const dec_t *d, uint64_t div, uint64_t *out)
{
	u128 v;

	if (d->mant == 0) {
		*out = 0;
		return 0;
	}
	if (d->exp > POW10_MAX)
		return 2;
	if (-d->exp > POW10_MAX)
		return 1;   /* mant < 10^39: below 1 */
	if (d->exp >= 0) {
		u128 p = pow10u(d->exp);
		if (d->mant && p > U128_MAX / d->mant)
			return 2;
		v = d->mant * p;
		if (v % div)
			return 1;
		v /= div;
	} else {
		u128 q = pow10u(-d->exp);
		if (q > U128_MAX / div || d->mant % (q * div))
			return 1;
		v = d->mant / (q * div);
	}
	if (v > UINT64_MAX)
		return 2;
	*out = (uint64_t)v;
	return 0;
}

/* The value as the user would write it: 16, 4.5, 7000000000. */
static void plain(const dec_t *d, char out[96])
{
	char s[48];
	u128 m = d->mant;
	int n = 0, frac = d->exp < 0 ? -d->exp : 0;

	do {
		s[n++] = (char)('0' + (int)(m % 10));
		m /= 10;
	} while (m && n < 40);
	for (int i = 0; i < n / 2; i++) {   /* most significant first */
		char t = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = t;
	}
	s[n] = 0;
	if (d->exp > 24 || frac > 24)
		snprintf(out, 96, "%se%d", s, d->exp);
	else if (d->exp >= 0)
		snprintf(out, 96, "%s%.*s", s, d->exp, "000000000000000000000000000000000000");
	else if (n <= frac)
		snprintf(out, 96, "0.%.*s%s", frac - n, "000000000000000000000000000000000000", s);
	else
		snprintf(out, 96, "%.*s.%s", n - frac, s, s + n - frac);
}

int gmt_card_weights(const char *parameters, const char *bits, uint64_t *bytes, char *err,
		     size_t errlen)
{
	dec_t n, b;
	int r;

	if (parse(parameters, &n))
		return fail(err, errlen, "--parameters: not a number: '%s'", parameters ? parameters : "");
	if (!n.mant || !is_whole(&n))
		return fail(err, errlen, "--parameters: must be a whole number above 0, got '%s'", parameters);
	if (parse(bits, &b))
		return fail(err, errlen, "--bits: not a number: '%s'", bits ? bits : "");
	if (!b.mant)
		return fail(err, errlen, "--bits: must be above 0, got '%s'", bits);
	if (mul(&n, &b))
		return fail(err, errlen, "%s parameters x %s bits is too large", parameters, bits);
	r = to_u64(&n, 8, bytes);
	if (r == 1)
		return fail(err, errlen, "%s parameters x %s bits is not a whole number of bytes",
			    parameters, bits);
	if (r == 2)
		return fail(err, errlen, "%s parameters x %s bits is too large", parameters, bits);
	return 0;
}

int gmt_card_reserve(const char *gib, uint64_t *bytes, char *err, size_t errlen)
{
	dec_t r, g = { GMT_GIB, 0 };
	int st;

	if (parse(gib, &r))
		return fail(err, errlen, "--reserve-gib: not a number (0 or more): '%s'", gib ? gib : "");
	if (mul(&r, &g))
		return fail(err, errlen, "--reserve-gib %s is too large", gib);
	st = to_u64(&r, 1, bytes);
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
	dec_t total = { 2, 0 }, f;
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
		if (parse(part, &f))
			return fail(err, errlen, "--kv: %s: not a number: '%s'", names[i], part);
		if (!f.mant || (i != 4 && !is_whole(&f)))
			return fail(err, errlen, "--kv: %s must be %s above 0, got '%s'", names[i],
				    i == 4 ? "a number" : "a whole number", part);
		plain(&f, factors[i]);
		if (mul(&total, &f))
			return fail(err, errlen, "--kv %s is too large", spec);
		p = comma ? comma + 1 : p + len;
	}
	st = to_u64(&total, 1, bytes);
	if (st == 1)
		return fail(err, errlen, "--kv %s is not a whole number of bytes", spec);
	if (st == 2)
		return fail(err, errlen, "--kv %s is too large", spec);
	return 0;
}

int gmt_card_in_unit(uint64_t bytes, uint64_t unit, char out[32])
{
	u128 x = (u128)bytes * 100;
	u128 q = x / unit, rem = x % unit;

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
