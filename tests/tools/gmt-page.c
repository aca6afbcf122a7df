/*
 * gmt-page: wraps a body (HTML) and chart data (JSON) into the report page
 * with web/gmt_web.c, as the analyzer's report does; the browser tests
 * (tests/cases/web_*.sh) use it on fixtures whose values they know.
 *   gmt-page [--title T] [--body FILE] [--data FILE] [-o OUT]
 *   gmt-page --asset NAME      prints one embedded asset
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_web.h"

struct parts {
	const char *body, *data;
};

static int copy_file(FILE *out, const char *path)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;
	if (!f) {
		perror(path);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, out);
	fclose(f);
	return 0;
}

static int body_part(FILE *out, void *arg)
{
	const struct parts *p = arg;
	return p->body ? copy_file(out, p->body) : 0;
}

static int data_part(FILE *out, void *arg)
{
	return copy_file(out, ((const struct parts *)arg)->data);
}

int main(int argc, char **argv)
{
	struct parts p = { NULL, NULL };
	const char *title = NULL, *outpath = NULL;
	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--asset") && next) {
			const char *a = gmt_web_asset(next);
			if (!a)
				return 2;
			fputs(a, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--title") && next) {
			title = argv[++i];
		} else if (!strcmp(argv[i], "--body") && next) {
			p.body = argv[++i];
		} else if (!strcmp(argv[i], "--data") && next) {
			p.data = argv[++i];
		} else if (!strcmp(argv[i], "-o") && next) {
			outpath = argv[++i];
		} else {
			fprintf(stderr, "usage: gmt-page [--title T] [--body FILE] [--data FILE] [-o OUT] | --asset NAME\n");
			return 2;
		}
	}
	FILE *out = outpath ? fopen(outpath, "w") : stdout;
	if (!out) {
		perror(outpath);
		return 2;
	}
	int rc = gmt_web_page_write(out, title, body_part, p.data ? data_part : NULL, &p);
	if (fclose(out) != 0 && !rc)
		rc = -1;
	return rc ? 1 : 0;
}
