/*
 * gmt_cli.h - PRIVATE to analyzer/: the command line of gpumemtrace-analyze
 * as one table of commands (gmt_cli.c lists the rows; each command is one
 * file in analyzer/commands/).
 *
 * gmt_cli.c parses every command line with getopt_long in one place: the
 * options every command takes (gmt_common_t: -o FILE / --output=FILE /
 * -oFILE, --json, --stats, --no-symbols, --debug-dir, the phase selection)
 * and the command's own (its gmt_cmd_opt_t list); it writes the usage from
 * the table, opens the output, begins and ends the JSON document, checks
 * the writes and prints --stats. A command gets its options parsed and
 * returns an exit status (docs/analyzer.md, "Exit status").
 *
 * Adding a command: a file analyzer/commands/gmt_cmd_NAME.c defining a
 * const gmt_cmd_t (name, help, own options, run), its row in gmt_cli.c's
 * table, its section in docs/analyzer.md and the schema.
 */
#ifndef GMT_CLI_H
#define GMT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmt_decode.h"
#include "gmt_json.h"

enum { GMT_EXIT_OK = 0, GMT_EXIT_DAMAGED = 1, GMT_EXIT_USAGE = 2 };

/* The options of every command. Arrays point into argv and live until the
 * command returns. */
typedef struct gmt_common {
	const char *out_path;                     /* -o FILE; NULL: stdout    */
	int json;                                 /* --json                   */
	int stats;                                /* --stats                  */
	int symbols;                              /* 0 with --no-symbols      */
	const char **debug_dirs; size_t n_debug_dirs;   /* --debug-dir DIR   */
	/* The phase selection (docs/analyzer.md, "Which ranges are phases"). */
	const char **domains; size_t n_domains;   /* --domain NAME            */
	const char **patterns; size_t n_patterns; /* --pattern GLOB           */
	int all_depths;                           /* --all-depths             */
	const char **files; size_t n_files;       /* the traces, in order     */
} gmt_common_t;

/* Where a command writes, and what it tells --stats. */
typedef struct gmt_out {
	FILE *f;              /* the report: stdout or the -o file           */
	gmt_json_t *json;     /* --json: the document, its top-level object
				 open with "tool", "tool_version", "command"
				 written; the command adds its members and
				 leaves the object open. NULL without --json */
	uint64_t events;      /* events decoded (add each trace's)           */
} gmt_out_t;

/* One option of a command's own. */
typedef struct gmt_cmd_opt {
	const char *name;     /* long name without "--"; NULL ends a list    */
	const char *arg;      /* the value's name ("N"); NULL: a flag        */
	const char *help;     /* lines, each ending in '\n', no indent       */
} gmt_cmd_opt_t;

typedef struct gmt_cmd {
	const char *name;
	const char *operands;      /* "TRACE..." (any number) or "TRACE"     */
	size_t max_traces;         /* 0: any number                          */
	const char *help;          /* what it reports: lines ending in '\n'  */
	const gmt_cmd_opt_t *opts; /* its own options (may be NULL)          */
	size_t state_size;         /* the options' struct the calls below
				      get (zeroed, then init)                 */
	void (*init)(void *st);                                 /* may be NULL */
	/* Own option number i of opts with its value (NULL for a flag).
	 * Returns 0, or -1 after gmt_cli_error. */
	int (*option)(void *st, size_t i, const char *value);
	/* All options together, before the output is opened (may be NULL).
	 * Returns 0, or -1 after gmt_cli_error. */
	int (*check)(void *st, const gmt_common_t *c);
	/* Reports c->files. Returns the exit status. */
	int (*run)(void *st, const gmt_common_t *c, gmt_out_t *out);
} gmt_cmd_t;

/* `gpumemtrace-analyze ARGS...`: the whole program. */
int gmt_cli_main(int argc, char **argv);

/* "gpumemtrace-analyze: CMD: message\n" on stderr. */
void gmt_cli_error(const gmt_cmd_t *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parses value as a decimal number 0..max into *out; else says "OPT needs a
 * number (0 to max)" and returns -1. */
int gmt_cli_number(const gmt_cmd_t *cmd, const char *opt, const char *value,
		   unsigned long long max, unsigned long long *out);

/* Says on stderr how a trace was read (damaged: the message and "reporting
 * what came before"; refused, unreadable or stopped: the message) and
 * returns its exit status. */
int gmt_cli_outcome(const char *file, const gmt_decode_result_t *res);

/* Erases the progress line (stderr on a terminal) if one is shown: before a
 * message of a command's own in the middle of its reading. */
void gmt_cli_progress_clear(void);

/* Says on stderr, one line each, what a trace may lack ("FILE: trace
 * incomplete: ...", render/gmt_render.h gmt_gap_line): every command calls
 * it for every trace it analysed, whatever its output's format. */
struct gmt_gaps;
void gmt_cli_gaps(const char *file, const struct gmt_gaps *g);

/* The line between the text reports of two traces. */
void gmt_cli_separator(FILE *f);

#endif /* GMT_CLI_H */
