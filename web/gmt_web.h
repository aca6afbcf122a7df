/*
 * gmt_web.h - the HTML report page's shell, with its assets built in.
 *
 * The page is one file: web/report.html with web/report.css and
 * web/report.js inlined (web/gmt_web_assets.S embeds them at build time),
 * the body (tables) and the chart's JSON written by the caller. The data
 * contract and the page's behaviour are in docs/report-page.md.
 */
#ifndef GMT_WEB_H
#define GMT_WEB_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes one part of the page to out; returns 0, or a negative errno. */
typedef int (*gmt_web_part_fn)(FILE *out, void *arg);

/*
 * Writes the whole page to out: the shell with the title (escaped), the
 * style, body(out, arg) where the tables go, data(out, arg) inside the
 * <script type="application/json" id="gmt-data"> element, and the script.
 * Every '<' the data part writes is written as the JSON escape \u003c, so
 * that no string in it can end the element (outside JSON strings '<' never
 * occurs). Either part may be NULL (an empty body; the data "{}").
 * Returns 0, a negative errno from a part, or -EIO when out failed.
 */
int gmt_web_page_write(FILE *out, const char *title, gmt_web_part_fn body,
		       gmt_web_part_fn data, void *arg);

/*
 * Writes s as HTML text (also valid inside a quoted attribute): & < > " '
 * escaped, invalid UTF-8 and control characters other than tab and newline
 * written as U+FFFD. Returns 0 or -EIO.
 */
int gmt_web_text(FILE *out, const char *s);

/* The embedded assets, NUL-terminated: "report.html", "report.css",
   "report.js"; NULL for another name. */
const char *gmt_web_asset(const char *name);

#ifdef __cplusplus
}
#endif

#endif
