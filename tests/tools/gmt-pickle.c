/*
 * gmt-pickle: writes a pickle with writers/gmt_pickle.c from tokens on stdin,
 * one a line, for tests/cases/pickle_writer.sh, which reads it back with
 * Python's own unpickler:
 *   d / l        begin a dict / a list        ed / el  end the dict / list
 *   s HEX        a str (its UTF-8 bytes in hex, "s" alone: empty)
 *   k N          the N-th of the literals below, as a constant
 *                (gmt_pickle_str_static)
 *   i N / u N    an int64 / a uint64          f HEX  a float (its 64 bits)
 *   t / F / n    True / False / None
 *   gmt-pickle PROTOCOL < TOKENS > OUT.pickle; exit 0, or 1 with the
 *   writer's error (its negative errno) on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_pickle.h"

static size_t unhex(const char *s, char *out)
{
	size_t n = 0;
	unsigned v;
	while (s[0] && s[1] && sscanf(s, "%2x", &v) == 1) {
		out[n++] = (char)v;
		s += 2;
	}
	return n;
}

static const char *const literals[] = { "action", "addr", "ab", "frames", "", "x" };

int main(int argc, char **argv)
{
	gmt_pickle_t *p = gmt_pickle_open(stdout, argc > 1 ? atoi(argv[1]) : 4);
	static char line[1 << 20], buf[1 << 19];
	if (!p) {
		fprintf(stderr, "gmt-pickle: open: %d\n", -errno);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		const char *arg = line[1] ? line + 2 : "";
		uint64_t bits;
		double d;
		switch (line[0]) {
		case 'd': gmt_pickle_dict_begin(p); break;
		case 'l': gmt_pickle_list_begin(p); break;
		case 'e':
			if (line[1] == 'd')
				gmt_pickle_dict_end(p);
			else
				gmt_pickle_list_end(p);
			break;
		case 's': gmt_pickle_str_n(p, buf, unhex(arg, buf)); break;
		case 'k': gmt_pickle_str_static(p, literals[(size_t)atoi(arg) % 6]); break;
		case 'i': gmt_pickle_int(p, strtoll(arg, NULL, 10)); break;
		case 'u': gmt_pickle_uint(p, strtoull(arg, NULL, 10)); break;
		case 'f':
			bits = strtoull(arg, NULL, 16);
			memcpy(&d, &bits, sizeof(d));
			gmt_pickle_float(p, d);
			break;
		case 't': gmt_pickle_bool(p, 1); break;
		case 'F': gmt_pickle_bool(p, 0); break;
		case 'n': gmt_pickle_none(p); break;
		default: break;
		}
	}
	int rc = gmt_pickle_close(p);
	if (rc) {
		fprintf(stderr, "gmt-pickle: %d\n", rc);
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
