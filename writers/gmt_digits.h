/*
 * gmt_digits.h - decimal digits without division loops or printf, for the
 * writers of large outputs (the JSON writer, the curves CSV): eight digits
 * at a time in parallel lanes of one word.
 */
#ifndef GMT_DIGITS_H
#define GMT_DIGITS_H

#include <stdint.h>
#include <string.h>

/* The 8 decimal digits of v (v < 10^8, leading zeros included) as the
 * bytes 0-9 of a word, the first digit in its lowest byte: the halves,
 * quarters and digits split in parallel lanes (multiplications by the
 * reciprocals of 100 and 10 that are exact in these ranges). */
static inline uint64_t gmt_digits8(uint32_t v)
{
	uint64_t y = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t z = (y * 10486 >> 20) & 0x0000007f0000007full;    /* / 100 */
	y = (y - z * 100) << 16 | z;
	z = (y * 103 >> 10) & 0x000f000f000f000full;              /* / 10  */
	return (y - z * 10) << 8 | z;
}

/* Stores the 8 bytes of w at p, its lowest byte first. */
static inline void gmt_put8(char *p, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	memcpy(p, &w, 8);
}

/* v in decimal at p (which has 8 bytes of room past the number: at most
 * 28 bytes are touched); returns the end. */
static inline char *gmt_put_dec(char *p, uint64_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100000000u) {
		uint64_t w = gmt_digits8((uint32_t)v);
		unsigned lead = (unsigned)__builtin_ctzll(w) / 8;   /* zero digits */
		gmt_put8(p, (w | 0x3030303030303030ull) >> 8 * lead);
		return p + 8 - lead;
	}
	p = gmt_put_dec(p, v / 100000000u);
	gmt_put8(p, gmt_digits8((uint32_t)(v % 100000000u)) | 0x3030303030303030ull);
	return p + 8;
}

/* v / 10^d with d decimals (d <= 17) at p (48 bytes of room), the same
 * text as printf's "%.*f" of (double)v / 10^d: below 2^52 in magnitude the
 * double nearest the quotient is within half a unit of its last decimal,
 * so its rounding is the exact quotient. Returns the end, or NULL beyond
 * that range (the caller uses printf). ns as seconds: d 9; as
 * microseconds: 3. */
static inline char *gmt_put_scaled(char *p, int64_t v, unsigned d)
{
	static const uint64_t p10[18] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull };
	if (v <= -(1ll << 52) || v >= (1ll << 52) || d > 17)
		return NULL;
	uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v, f = a % p10[d];
	if (v < 0)
		*p++ = '-';
	p = gmt_put_dec(p, a / p10[d]);
	if (d) {
		*p++ = '.';
		for (unsigned i = d; i-- > 0; f /= 10)
			p[i] = (char)('0' + f % 10);
		p += d;
	}
	return p;
}

#endif /* GMT_DIGITS_H */
