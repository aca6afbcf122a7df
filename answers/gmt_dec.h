/*
 * gmt_dec.h - exact decimal numbers as a user types them ("7e9", "4.5",
 * "0.5"), for the card's arithmetic and the diff's thresholds (private to
 * answers/).
 */
#ifndef GMT_DEC_H
#define GMT_DEC_H

#include <stdint.h>

typedef unsigned __int128 u128;

/* value = mant x 10^exp, mant without trailing zeros (0 has exp 0). */
typedef struct gmt_dec {
	u128 mant;
	int exp;
} gmt_dec_t;

/* [+]digits[.digits][(e|E)[+-]digits], blanks around allowed; no sign -.
 * 0, or -1 when s is not such a number (or too long for 128 bits). */
int gmt_dec_parse(const char *s, gmt_dec_t *d);
/* *a *= *b; 0, or -1 when the mantissa would overflow. */
int gmt_dec_mul(gmt_dec_t *a, const gmt_dec_t *b);
int gmt_dec_is_whole(const gmt_dec_t *d);
/* The whole number d / div: 0 done, 1 not whole, 2 too large for 64 bits. */
int gmt_dec_to_u64(const gmt_dec_t *d, uint64_t div, uint64_t *out);
/* The value as the user would write it: 16, 4.5, 7000000000 (1e30 past
 * 24 digits of exponent either way). */
void gmt_dec_plain(const gmt_dec_t *d, char out[96]);

#endif /* GMT_DEC_H */
