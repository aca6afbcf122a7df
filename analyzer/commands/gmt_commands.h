/*
 * gmt_commands.h - PRIVATE to analyzer/: the rows of the command table
 * (analyzer/cli/gmt_cli.c lists them), one per file of analyzer/commands/.
 * A command file wires engine -> model -> renderer and nothing else.
 */
#ifndef GMT_COMMANDS_H
#define GMT_COMMANDS_H

#include "cli/gmt_cli.h"

extern const gmt_cmd_t gmt_cmd_summary;     /* gmt_cmd_summary.c  */
extern const gmt_cmd_t gmt_cmd_phases;      /* gmt_cmd_timeline.c */
extern const gmt_cmd_t gmt_cmd_curves;      /* gmt_cmd_timeline.c */
extern const gmt_cmd_t gmt_cmd_sites;       /* gmt_cmd_sites.c    */
extern const gmt_cmd_t gmt_cmd_flamegraph;  /* gmt_cmd_sites.c    */
extern const gmt_cmd_t gmt_cmd_oom;         /* gmt_cmd_oom.c      */
extern const gmt_cmd_t gmt_cmd_report;      /* gmt_cmd_report.c   */
extern const gmt_cmd_t gmt_cmd_export;      /* gmt_cmd_export.c   */
extern const gmt_cmd_t gmt_cmd_diff;        /* gmt_cmd_diff.c     */
extern const gmt_cmd_t gmt_cmd_card;        /* gmt_cmd_card.c     */

/* The report model (model/gmt_report_model.h) of c's traces, finished, for
 * `report` and `export`; NULL after saying why on stderr. *rc gets the
 * worst of the traces' exit statuses (gmt_cli_outcome). temp_max: the
 * temporary file's budget (--temp-max; NULL: the default).
 * gmt_cmd_report.c. */
struct gmt_report_model;
struct gmt_report_model *gmt_cmd_report_model(const gmt_cmd_t *cmd, const gmt_common_t *c,
					      gmt_out_t *out, int *rc, const unsigned long long *temp_max);

/* --temp-max's help line and value (report, export). */
#define GMT_CMD_TEMP_MAX_HELP "the report model's temporary file, at most (default 268435456); beyond,\n" \
	"the streams still growing are given up and their traces read again\n" \
	"when drawn (0: never use the file)\n"
int gmt_cmd_temp_max(const gmt_cmd_t *cmd, const char *value, unsigned long long *out);

/* Says on stderr, once per trace, that a trace records the same process
 * as an earlier one (gmt_rm_trace_t.same_as: counted once). gmt_cmd_report.c. */
void gmt_cmd_same_notes(const struct gmt_report_model *m);

/* Several traces: the report model of c's traces, finished, and the job
 * model on it (model/gmt_job_model.h: the processes grouped by host and
 * physical device), for summary, phases and oom. 0 with both set, or
 * -ENOMEM / -EIO with neither. gmt_cmd_summary.c. */
struct gmt_job_model;
int gmt_cmd_job(const gmt_common_t *c, struct gmt_report_model **rm, struct gmt_job_model **jm);
/* Writes the job section (JSON or text after a separator) when rc is 0,
 * frees both models and returns rc: the end of every command's job
 * section, after its own build step. gmt_cmd_summary.c. */
int gmt_cmd_job_finish(gmt_out_t *out, struct gmt_report_model *rm, struct gmt_job_model *jm, int rc);

#endif /* GMT_COMMANDS_H */
