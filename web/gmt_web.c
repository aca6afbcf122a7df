/*
 * gmt_web.c - writes the report page: the shell web/report.html with its
 * markers replaced (see the comment at its top), the style and the script
 * inlined from the copies web/gmt_web_assets.S embedded. What the page holds
 * and how it draws: docs/report-page.md.
 */
#include <errno.h>
#include <string.h>

#include "gmt_web.h"

extern const char gmt_web_report_html[];
extern const char gmt_web_report_css[];
extern const char gmt_web_report_js[];

const char *gmt_web_asset(const char *name)
{
	if (!strcmp(name, "report.html"))
		return gmt_web_report_html;
	if (!strcmp(name, "report.css"))
		return gmt_web_report_css;
	if (!strcmp(name, "report.js"))
		return gmt_web_report_js;
	return NULL;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one
   (overlong forms, surrogates and values above U+10FFFF are not). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

int gmt_web_text(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		size_t n = utf8_len(s);
		const char *rep = NULL;
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		case '\t': case '\n': break;
		default:
			if (*s < 0x20 || *s == 0x7f)
				n = 0;
			break;
		}
		if (rep) {
			fputs(rep, out);
			s++;
		} else if (!n) {
			fputs("\xef\xbf\xbd", out);  /* U+FFFD */
			s++;
		} else {
			fwrite(s, 1, n, out);
			s += n;
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* The data part goes through this stream: '<' becomes \u003c. */
struct lt_escape {
	FILE *out;
};

static ssize_t lt_escape_write(void *cookie, const char *buf, size_t size)
{
	struct lt_escape *e = cookie;
	size_t start = 0;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != '<')
			continue;
		if (i > start && fwrite(buf + start, 1, i - start, e->out) != i - start)
			return -1;
		if (fputs("\\u003c", e->out) == EOF)
			return -1;
		start = i + 1;
	}
	if (size > start && fwrite(buf + start, 1, size - start, e->out) != size - start)
		return -1;
	return (ssize_t)size;
}

static int write_data(FILE *out, gmt_web_part_fn data, void *arg)
{
	if (!data)
		return fputs("{}", out) == EOF ? -EIO : 0;
	struct lt_escape e = { out };
	cookie_io_functions_t io = { .write = lt_escape_write };
	FILE *f = fopencookie(&e, "w", io);
	if (!f)
		return -errno;
	int rc = data(f, arg);
	if (fclose(f) != 0 && !rc)
		rc = -EIO;
	return rc;
}

static const char *const markers[] = { "TITLE", "STYLE", "BODY", "DATA", "SCRIPT" };

int gmt_web_page_write(FILE *out, const char *title, gmt_web_part_fn body,
		       gmt_web_part_fn data, void *arg)
{
	const char *p = gmt_web_report_html;
	int rc = 0;
	while (*p && !rc) {
		const char *at = strchr(p, '@');
		if (!at) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(at - p), out);
		size_t m = 0, len = 0;
		for (; m < sizeof(markers) / sizeof(markers[0]); m++) {
			len = strlen(markers[m]);
			if (!strncmp(at + 1, markers[m], len) && at[1 + len] == '@')
				break;
		}
		if (m == sizeof(markers) / sizeof(markers[0])) {
			fputc('@', out);
			p = at + 1;
			continue;
		}
		switch (m) {
		case 0: rc = gmt_web_text(out, title ? title : "gpumemtrace report"); break;
		case 1: fputs(gmt_web_report_css, out); break;
		case 2: rc = body ? body(out, arg) : 0; break;
		case 3: rc = write_data(out, data, arg); break;
		case 4: fputs(gmt_web_report_js, out); break;
		}
		p = at + 2 + len;
	}
	if (!rc && ferror(out))
		rc = -EIO;
	return rc;
}
