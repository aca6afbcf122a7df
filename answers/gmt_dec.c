/*
 * gmt_dec.c - exact decimals (gmt_dec.h): a number is mant x 10^exp with an
 * unsigned 128-bit mantissa; products multiply mantissas (checked) and add
 * exponents.
 */
#include <ctype.h>
#include <stdio.h>

#include "gmt_dec.h"

typedef unsigned __int128 u128;


#define U128_MAX (~(u128)0)
#define POW10_MAX 38   /* 10^38 < 2^128 */

static u128 pow10u(int e)
{
	u128 p = 1;
	while (e-- > 0)
		p *= 10;
	return p;
}

/* Drops trailing zeros of the mantissa into the exponent. */
static void normalise(gmt_dec_t *d)
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
int gmt_dec_parse(const char *s, gmt_dec_t *d)
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

int gmt_dec_mul(gmt_dec_t *a, const gmt_dec_t *b)
{
	if (a->mant && b->mant > U128_MAX / a->mant)
		return -1;
	a->mant *= b->mant;
	a->exp += b->exp;
	normalise(a);
	return 0;
}

int gmt_dec_is_whole(const gmt_dec_t *d)
{
	return d->exp >= 0;
}

/* The whole number d / div as a uint64: 0, 1 not whole, 2 too large. */
int gmt_dec_to_u64(const gmt_dec_t *d, uint64_t div, uint64_t *out)
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
void gmt_dec_plain(const gmt_dec_t *d, char out[96])
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

