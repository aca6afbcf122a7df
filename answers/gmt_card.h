/*
 * gmt_card.h - the computed part of the sizing card: exact arithmetic on
 * what the user says of the job (parameters, bits, an assumed reserve, the
 * KV cache's dimensions), and bytes shown in GB (10^9) and GiB (2^30) side
 * by side. Pure functions; no trace involved. Names follow the measurement
 * protocol's script (scripts/examples/gmt_example.py estimate): weights,
 * reserve, envelope, plus kv_cache.
 *
 * Numbers are typed as decimal text ("7e9", "16", "4.5", "0.5") and
 * computed exactly (128-bit integers on a decimal mantissa and exponent);
 * a result that is not a whole number of bytes, or that does not fit in 64
 * bits, is an error with a message, never a rounded value.
 */
#ifndef GMT_CARD_H
#define GMT_CARD_H

#include <stddef.h>
#include <stdint.h>

#define GMT_GB  1000000000ull
#define GMT_GIB 1073741824ull

/* weights = parameters x bits / 8 bytes. parameters: a whole number > 0;
 * bits > 0. 0, or -1 with err filled. */
int gmt_card_weights(const char *parameters, const char *bits, uint64_t *bytes,
		     char *err, size_t errlen);

/* reserve = R x 2^30 bytes (R >= 0, "4" or "0.5"). 0, or -1 with err. */
int gmt_card_reserve(const char *gib, uint64_t *bytes, char *err, size_t errlen);

/* The KV cache from "L,H,D,T,B,S": layers, KV heads, head dimension,
 * tokens, bytes per value, concurrent sequences; bytes = 2 (K and V) x L x
 * H x D x T x B x S. L, H, D, T, S whole numbers > 0; B > 0 (0.5 for 4-bit
 * values). factors[] gets the six values as typed, normalised (for the
 * card's text). 0, or -1 with err. */
int gmt_card_kv(const char *spec, uint64_t *bytes, char factors[6][96], char *err, size_t errlen);

/* bytes in unit (GMT_GB or GMT_GIB) with two decimals, rounded half to
 * even, into out ("14.00"); returns 1 when that is exact, 0 when rounding
 * lost something (the text then says "about"). */
int gmt_card_in_unit(uint64_t bytes, uint64_t unit, char out[32]);

/* "N B = [about ]x.xx GB = [about ]y.yy GiB", as the protocol's script
 * prints bytes. */
void gmt_card_units_text(uint64_t bytes, char *out, size_t len);

/* text as the card writes a number the user typed ("7e9" -> 7000000000,
 * "4.50" -> 4.5) into out; 0, or -1 when it is not a number (out then
 * holds text unchanged, cut to 95 bytes). */
int gmt_card_plain(const char *text, char out[96]);

/* 1 when a and b are the same number ("8192" and "8.192e3"), or, when
 * either is not a number, the same text; 0 otherwise. */
int gmt_card_same(const char *a, const char *b);

#endif /* GMT_CARD_H */
