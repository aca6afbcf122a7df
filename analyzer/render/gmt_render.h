/*
 * gmt_render.h - PRIVATE to analyzer/: the renderers, which only format a
 * model (they compute nothing), and what they share.
 *
 * A renderer takes a model (engines/gmt_replay.h's gmt_summary_t for
 * summary, the phase engine's results for phases, model/gmt_sites_model.h
 * for sites and flamegraph) and writes text, or one JSON trace object
 * through writers/gmt_json.h inside the document that gmt_render_json_head
 * begins ({"tool", "tool_version", "command"; the command adds its members,
 * then "traces": [...]; the command line, cli/gmt_cli.c, ends it).
 */
#ifndef GMT_RENDER_H
#define GMT_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmt_json.h"

struct gmt_summary;
struct gmt_gaps;

/* ---- shared (gmt_render.c) ---- */

/* Formats bytes as "N B (x.xx GiB)" (binary unit named) into buf. */
const char *gmt_fmt_bytes(char *buf, size_t len, uint64_t bytes);

/* A device UUID as NVIDIA writes it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
const char *gmt_fmt_uuid(char buf[48], const uint8_t *u);

/* Formats a CLOCK_REALTIME ns value as ISO 8601 UTC with ns. */
const char *gmt_fmt_utc(char *buf, size_t len, uint64_t realtime_ns);

/* Writes str as one line of text (control characters and invalid UTF-8 as
 * '?'). */
void gmt_text_str(FILE *f, const char *str);

/* Writes str as one line of text with what it cannot show escaped
 * visibly, C style: \n, \r, \t, \\ for a backslash, \xNN for another
 * control byte or invalid UTF-8: a value of several lines (GPUMEMTRACE_META's
 * KEY=VALUE lines) stays readable and unambiguous. */
void gmt_text_esc(FILE *f, const char *str);

/* The drops caveat of a trace object, in every command's JSON (the same
 * numbers as the stderr line of cli/gmt_cli.c, gmt_cli_outcome):
 * "missing_events": {count (the larger of the DROPS records' sum, timed,
 * and END's total), first_ts_ns, last_ts_ns (the DROPS records' range;
 * null when none), without_time (count - timed: counted by END alone)}. */
void gmt_missing_json(gmt_json_t *j, uint64_t count, uint64_t timed, uint64_t first_ts,
		      uint64_t last_ts);
struct gmt_decode_result;
/* The same from a decode result, under key (NULL: "missing_events"). */
void gmt_missing_json_res(gmt_json_t *j, const char *key, const struct gmt_decode_result *res);

/* One frame of a stack view (model/gmt_stacks.h): JSON, an object of its
 * address, status, module, offset, function, file, line, inlined, label
 * (gmt_sites_json.c); text, one line "          function at file:line
 * (inlined) in module" (gmt_sites_text.c). */
struct gmt_frame;
void gmt_render_frame_json(gmt_json_t *j, const struct gmt_frame *f);
void gmt_render_frame_text(FILE *f, const struct gmt_frame *fr);

/* Begins a document: {"tool", "tool_version", "command", left open. */
void gmt_render_json_head(gmt_json_t *j, const char *command);

/* ---- summary (gmt_summary_render.c) ---- */

struct gmt_summary_phases;   /* model/gmt_phase_at.h; NULL: no phases named */
void gmt_report_text(FILE *f, const struct gmt_summary *s, const struct gmt_summary_phases *sp);
void gmt_report_json(gmt_json_t *j, const struct gmt_summary *s, const struct gmt_summary_phases *sp);

/* Prints "Trace FILE" and how it was read (ended cleanly, cut, damaged at
 * an offset, not analysed) as the text reports begin. Returns nonzero when
 * the trace was analysed (fully or up to the damage). */
int gmt_report_text_status(FILE *f, const struct gmt_summary *s);

/* What a trace may lack (docs/analyzer.md, "Incomplete traces"): the i-th
 * note (0, 1, ...) into buf, one line without a newline ("trace
 * incomplete: N untraced entry points ...", "no allocation: ..."); 0 when
 * there are no more. The text status above prints them, every command
 * says them on stderr (gmt_cli_gaps), JSON reports carry them. */
int gmt_gap_line(const struct gmt_gaps *g, int i, char *buf, size_t len);
/* "completeness": {incomplete, untraced_entry_points, untraced_lookups,
 * nvtx_injection_only, driver_stub, cuda_activity_events,
 * cuda_activity_without_allocations, notes: [...]} in a trace object. */
void gmt_report_gaps_json(gmt_json_t *j, const struct gmt_gaps *g);
/* The same object under another key (diff: one per run). */
void gmt_report_gaps_json_as(gmt_json_t *j, const char *key, const struct gmt_gaps *g);
/* "completeness" as above when res says the trace was analysed (read whole
 * or up to the damage), as summary writes it; nothing otherwise. */
struct gmt_decode_result;
void gmt_report_gaps_json_read(gmt_json_t *j, const struct gmt_gaps *g, const struct gmt_decode_result *res);

/* "clean", "cut", "damaged", "refused", "unreadable" or "stopped". */
const char *gmt_status_key(const struct gmt_summary *s);

/* ---- phases (gmt_phases_render.c) ---- */

struct gmt_phases;
void gmt_phases_report_text(FILE *f, struct gmt_phases *ph);
void gmt_phases_report_json(gmt_json_t *j, struct gmt_phases *ph);

/* ---- curves (gmt_curves_render.c) ---- */

struct gmt_curves;
/* CSV: the header line once, then each trace's rows (trace = its index). */
void gmt_curves_csv_header(FILE *f);
int gmt_curves_csv(FILE *f, struct gmt_curves *c, struct gmt_phases *ph, unsigned trace);
/* CSV of every row as the engine makes them (gmt_curves_set_sink: no
 * temporary rows while its text fits in 4 MiB; the rows past that from the
 * curves' file; or written through, below), for a curves without max_rows:
 * new, its sink given to the curves before the run, write once after
 * gmt_curves_finish (the text then goes to f), free. NULL when out of
 * memory. */
typedef struct gmt_curves_csv_stream gmt_curves_csv_stream_t;
struct gmt_curves_sink;
gmt_curves_csv_stream_t *gmt_curves_csv_stream_new(unsigned trace);
void gmt_curves_csv_stream_sink(gmt_curves_csv_stream_t *w, struct gmt_curves_sink *sink);
int gmt_curves_csv_stream_write(gmt_curves_csv_stream_t *w, FILE *f, struct gmt_curves *c,
				 struct gmt_phases *ph);
/* Written through instead (call before the run): the text goes to f from
 * its position now as the rows are made, with no text or rows waiting, for
 * an f that a second pass of the time line can take back to that position
 * (keeps 1: a regular file, truncated there) or that keeps nothing (keeps
 * 0: /dev/null); write then only flushes. 0, or a negative errno (f has no
 * position: use the buffered way). */
int gmt_curves_csv_stream_direct(gmt_curves_csv_stream_t *w, FILE *f, int keeps);
/* After a written-through run to a file that keeps its rows: 1 when the
 * trace's first time moved back after rows were written (an earlier LATE
 * event: their time_s are wrong): f is taken back to where they began and
 * *first_ts gets the trace's first time, for a run again with a new stream
 * given it by gmt_curves_csv_stream_first. 0 when the rows stand; -EIO. */
int gmt_curves_csv_stream_again(gmt_curves_csv_stream_t *w, struct gmt_phases *ph, uint64_t *first_ts);
void gmt_curves_csv_stream_first(gmt_curves_csv_stream_t *w, uint64_t first_ts);
void gmt_curves_csv_stream_free(gmt_curves_csv_stream_t *w);
/* JSON: one trace object. */
int gmt_curves_json(gmt_json_t *j, struct gmt_curves *c, struct gmt_phases *ph);

/* ---- sites and flamegraph (gmt_sites_text.c, gmt_sites_json.c,
 * gmt_sites_folded.c) ---- */

struct gmt_sites_model;

/* What the end of a sites or flamegraph report says of symbolisation, all
 * traces together. */
typedef struct gmt_sites_totals {
	int symbols;
	uint64_t addresses, files;
	double seconds;
} gmt_sites_totals_t;

void gmt_sites_text(FILE *f, const struct gmt_sites_model *m);
void gmt_sites_text_end(FILE *f, const gmt_sites_totals_t *t);
void gmt_sites_json(gmt_json_t *j, const struct gmt_sites_model *m);
void gmt_sites_json_end(gmt_json_t *j, const gmt_sites_totals_t *t);
void gmt_sites_folded(FILE *f, const struct gmt_sites_model *m);
void gmt_sites_folded_json(gmt_json_t *j, const struct gmt_sites_model *m);
/* flamegraph's text says it on stderr (stdout is the folded lines) */
void gmt_sites_folded_end(const gmt_sites_totals_t *t);

/* ---- oom (gmt_oom_render.c) ---- */

struct gmt_oom_model;
void gmt_oom_text(FILE *f, const struct gmt_oom_model *m);
void gmt_oom_json(gmt_json_t *j, const struct gmt_oom_model *m);

/* ---- report (gmt_report_html.c, gmt_report_json.c) ---- */

struct gmt_report_model;

/* The page's finest zoom level: GMT_REPORT_BUCKETS_ALL buckets shared by
 * the devices, each device's between _MIN and _MAX. */
#define GMT_REPORT_BUCKETS_ALL 65536
#define GMT_REPORT_BUCKETS_MIN 4096
#define GMT_REPORT_BUCKETS_MAX 32768

/* The HTML page (docs/report-page.md); buckets: the finest level's per
 * device, 0 for the default above. Returns 0 or a negative errno. */
int gmt_report_html(FILE *out, const struct gmt_report_model *m, size_t buckets);
/* The same report as members of the JSON document: "traces", "devices". */
void gmt_report_model_json(gmt_json_t *j, const struct gmt_report_model *m);

/* ---- export (gmt_report_chrome.c, gmt_memviz_render.c) ---- */

/* Chrome trace event JSON (docs/exports.md) within max_events counter
 * events in all, on out, or (j not NULL: --json) as members of the open
 * document j. Returns 0 or a negative errno. */
int gmt_report_chrome(FILE *out, gmt_json_t *j, const struct gmt_report_model *m, size_t max_events);
/* The pid of device dev's track: above every traced pid. */
uint64_t gmt_report_chrome_device_pid(const struct gmt_report_model *m, size_t dev);

struct gmt_memviz_model;
/* The memory viewer's snapshot; format GMT_MEMVIZ_JSON or a pickle
 * protocol (export/gmt_memviz.h). Returns 0 or a negative errno. */
int gmt_memviz_model_write(FILE *out, struct gmt_memviz_model *m, int format);

/* ---- several processes of one job (gmt_job_render.c): summary's last
 * section and its "job" member ---- */

struct gmt_job_model;
void gmt_job_text(FILE *f, const struct gmt_job_model *m);
void gmt_job_json(gmt_json_t *j, const struct gmt_job_model *m);

/* ---- diff (gmt_diff_render.c) ---- */

struct gmt_diff_model;
void gmt_diff_text(FILE *f, const struct gmt_diff_model *m);
void gmt_diff_json(gmt_json_t *j, const struct gmt_diff_model *m);

/* ---- card (gmt_card_render.c) ---- */

struct gmt_card_estimate;
struct gmt_card_trace;
/* Text (md 0) or Markdown (md 1): the head and the computed part once,
 * then each trace's observed and assumed parts and environment. */
void gmt_card_head_text(FILE *f, const struct gmt_card_estimate *e, int md);
void gmt_card_trace_text(FILE *f, const struct gmt_card_trace *t, const struct gmt_card_estimate *e, int md);
/* JSON: "units" and "computed" as members of the document, then one trace
 * object per trace (in "traces"). */
void gmt_card_computed_json(gmt_json_t *j, const struct gmt_card_estimate *e);
void gmt_card_trace_json(gmt_json_t *j, const struct gmt_card_trace *t, const struct gmt_card_estimate *e);

#endif /* GMT_RENDER_H */
