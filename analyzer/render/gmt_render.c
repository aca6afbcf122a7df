/*
 * gmt_render.c - what every renderer shares: bytes and times as text, text
 * from a trace made safe for one line, the head of every JSON document
 * (gmt_render.h).
 */
#include "render/gmt_render.h"
#include "gmt_decode.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

const char *gmt_fmt_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	double v = (double)b / 1024.0;
	if (!b) {
		snprintf(buf, len, "0 B");
		return buf;
	}
	while (u < 3 && b >= (uint64_t)1 << (10 * (u + 2))) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " B (%.2f %s)", b, v, unit[u]);
	return buf;
}

const char *gmt_fmt_uuid(char buf[48], const uint8_t *u)
{
	static const char hx[] = "0123456789abcdef";
	char *p = buf + sprintf(buf, "GPU-");
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hx[u[i] >> 4];
		*p++ = hx[u[i] & 15];
	}
	*p = 0;
	return buf;
}

const char *gmt_fmt_utc(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[40];
	if (!gmtime_r(&sec, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(date, sizeof(date), "?");
	snprintf(buf, len, "%s.%09" PRIu64 "Z", date, ns % 1000000000u);
	return buf;
}

/* Length of the valid UTF-8 sequence at p (1 for ASCII), 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;  /* also stops at the NUL */
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Prints s with control characters and invalid UTF-8 replaced by '?': the
 * report stays one line per item whatever the trace holds. */
void gmt_text_str(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	while (*p) {
		size_t n = utf8_len(p);
		if (n && *p >= 0x20 && *p != 0x7f) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputc('?', f);
			p++;
		}
	}
}

void gmt_text_esc(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	while (*p) {
		size_t n = utf8_len(p);
		if (*p == '\n' || *p == '\r' || *p == '\t' || *p == '\\') {
			fputc('\\', f);
			fputc(*p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' : '\\', f);
			p++;
		} else if (n && *p >= 0x20 && *p != 0x7f) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fprintf(f, "\\x%02x", *p);
			p++;
		}
	}
}

/* The document around every command's traces: tool, version, command. */
void gmt_render_json_head(gmt_json_t *j, const char *command)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "tool", "gpumemtrace-analyze");
	gmt_json_kv_str(j, "tool_version", GMT_VERSION);
	gmt_json_kv_str(j, "command", command);
}

static void missing_json(gmt_json_t *j, const char *key, uint64_t count, uint64_t timed,
			 uint64_t first_ts, uint64_t last_ts)
{
	gmt_json_kv_obj_begin(j, key);
	gmt_json_kv_u64(j, "count", count);
	if (timed) {
		gmt_json_kv_u64(j, "first_ts_ns", first_ts);
		gmt_json_kv_u64(j, "last_ts_ns", last_ts);
	} else {
		gmt_json_kv_null(j, "first_ts_ns");
		gmt_json_kv_null(j, "last_ts_ns");
	}
	gmt_json_kv_u64(j, "without_time", count > timed ? count - timed : 0);
	gmt_json_obj_end(j);
}

void gmt_missing_json(gmt_json_t *j, uint64_t count, uint64_t timed, uint64_t first_ts,
		      uint64_t last_ts)
{
	missing_json(j, "missing_events", count, timed, first_ts, last_ts);
}

void gmt_missing_json_res(gmt_json_t *j, const char *key, const gmt_decode_result_t *res)
{
	uint64_t n = res->dropped > res->end_dropped ? res->dropped : res->end_dropped;
	missing_json(j, key ? key : "missing_events", n, res->dropped, res->drop_first_ts,
		     res->drop_last_ts);
}
