/*
 * gmt_cli.c - gpumemtrace-analyze's command line: the table of commands,
 * the one option parser (getopt_long), the usage made from the table, the
 * output (-o, the JSON document, write errors) and --stats (gmt_cli.h).
 */
#include "cli/gmt_cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "commands/gmt_commands.h"
#include "engines/gmt_replay.h"
#include "render/gmt_render.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

/* The commands, in the order the usage lists them. */
static const gmt_cmd_t *const commands[] = {
	&gmt_cmd_summary,
	&gmt_cmd_phases,
	&gmt_cmd_curves,
	&gmt_cmd_sites,
	&gmt_cmd_flamegraph,
	&gmt_cmd_oom,
	&gmt_cmd_report,
	&gmt_cmd_export,
	&gmt_cmd_diff,
	&gmt_cmd_card,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The options of every command. */
enum { C_OUTPUT, C_JSON, C_STATS, C_NO_SYMBOLS, C_DEBUG_DIR, C_DOMAIN, C_PATTERN, C_ALL_DEPTHS,
       C_HELP, N_COMMON };
static const gmt_cmd_opt_t common_opts[N_COMMON + 1] = {
	[C_OUTPUT] = { "output", "FILE", "write the report to FILE instead of standard output\n"
				 "(also -oFILE, --output=FILE; -o - is standard output)\n" },
	[C_JSON] = { "json", NULL, "one JSON document {\"tool\", ..., \"traces\": [...]}\n"
				   "(schemas/report.schema.json)\n" },
	[C_STATS] = { "stats", NULL, "print events decoded, seconds, events/s and peak RSS to stderr\n" },
	[C_NO_SYMBOLS] = { "no-symbols", NULL, "stacks as modules and offsets only (no function, file, line)\n" },
	[C_DEBUG_DIR] = { "debug-dir", "DIR", "separate debug files by build id (DIR/.build-id/xx/rest.debug;\n"
					      "repeatable; /usr/lib/debug is searched too)\n" },
	[C_DOMAIN] = { "domain", "NAME", "only the ranges of the domains named are phases (repeatable):\n"
					 "an NVTX domain (any depth), 'gpumemtrace' (our API and domain),\n"
					 "'default' (NVTX's default domain), '*' (all of them)\n" },
	[C_PATTERN] = { "pattern", "GLOB", "only phases whose name matches (fnmatch; repeatable)\n" },
	[C_ALL_DEPTHS] = { "all-depths", NULL, "nested ranges of the default domain are phases too\n"
					       "(per-operator ranges)\n" },
	[C_HELP] = { "help", NULL, "this command's usage\n" },
};

static const char selection_note[] =
	"The phase selection (--domain, --pattern, --all-depths) chooses which ranges are\n"
	"phases; by default our API's phases, the NVTX domain \"gpumemtrace\" and the\n"
	"outermost ranges of NVTX's default domain (as --domain gpumemtrace --domain\n"
	"default would). Every command takes every option above; those a command has\n"
	"no use for change nothing in its report (summary has no phases; only sites\n"
	"and flamegraph print stacks).\n";

static const char exit_text[] =
	"Exit status:\n"
	"  0  every trace was read to its end (ended cleanly, or cut: no END record)\n"
	"  1  a trace was damaged; the report covers what was read before the damage\n"
	"  2  usage error, or a file that cannot be read or is not a trace it accepts\n"
	"  3  diff --fail-above PCT: a matched peak grew by more than PCT percent\n"
	"Messages go to stderr and name the file, the byte offset and what was expected.\n";

/* ---- messages and small helpers -------------------------------------------- */

void gmt_cli_error(const gmt_cmd_t *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gpumemtrace-analyze: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int gmt_cli_number(const gmt_cmd_t *cmd, const char *opt, const char *value,
		   unsigned long long max, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long x = value ? strtoull(value, &end, 10) : 0;
	if (!value || !*value || *end || errno || x > max || value[0] == '-') {
		gmt_cli_error(cmd, "%s needs a number (0 to %llu)", opt, max);
		return -1;
	}
	*out = x;
	return 0;
}

/* Drops qualify every result: said once per trace by every command. */
static void drops_caveat(const char *file, const gmt_decode_result_t *res)
{
	uint64_t n = res->dropped > res->end_dropped ? res->dropped : res->end_dropped;
	if (!n)
		return;
	if (res->dropped)
		fprintf(stderr, "gpumemtrace-analyze: %s: %" PRIu64 " events missing (dropped by the tracer) "
			"between ts %" PRIu64 " and %" PRIu64 " ns%s: results from that time on may be off either way (a lost allocation makes them low, a lost free high)\n",
			file, n, res->drop_first_ts, res->drop_last_ts,
			n > res->dropped ? " and at the end" : "");
	else
		fprintf(stderr, "gpumemtrace-analyze: %s: %" PRIu64 " events missing (dropped by the tracer, "
			"when is not recorded): results may be off either way (a lost allocation makes them low, a lost free high)\n", file, n);
}

/* ---- progress on a terminal ------------------------------------------------
 * A command that reads for more than GPUMEMTRACE_PROGRESS_AFTER_MS (default
 * 2000) shows, when stderr is a terminal, one line it rewrites at most 4
 * times a second (with 0, at every frame: for tests): "gpumemtrace-analyze: reading FILE (pass N): P%" (a command
 * may read a trace more than once); erased before any other message and
 * when the command ends. Never when stderr is not a terminal. */
static double prog_start, prog_last, prog_after = 2.0;
static const char *prog_name;
static uint64_t prog_done;
static unsigned prog_pass;
static int prog_shown;

static double now_s(void);

void gmt_cli_progress_clear(void)
{
	if (prog_shown)
		fputs("\r\033[K", stderr);
	prog_shown = 0;
}

static void progress(const char *name, uint64_t done, uint64_t size)
{
	if (name != prog_name || done <= prog_done)
		prog_pass = name == prog_name ? prog_pass + 1 : 1;
	prog_name = name;
	prog_done = done;
	double t = now_s();
	if (t - prog_start < prog_after || (prog_after > 0 && prog_shown && t - prog_last < 0.25) || !size)
		return;
	prog_last = t;
	prog_shown = 1;
	fprintf(stderr, "\r\033[Kgpumemtrace-analyze: reading %s", name);
	if (prog_pass > 1)
		fprintf(stderr, " (pass %u)", prog_pass);
	fprintf(stderr, ": %u%%", (unsigned)(done >= size ? 100 : done * 100 / size));
}

static void progress_start(void)
{
	if (!isatty(STDERR_FILENO))
		return;
	const char *e = getenv("GPUMEMTRACE_PROGRESS_AFTER_MS");
	if (e && *e) {
		char *end;
		unsigned long ms = strtoul(e, &end, 10);
		if (!*end)
			prog_after = (double)ms / 1000.0;
	}
	prog_start = now_s();
	gmt_decode_set_progress(progress);
}

int gmt_cli_outcome(const char *file, const gmt_decode_result_t *res)
{
	gmt_cli_progress_clear();
	if (res->status == GMT_DECODE_OK || res->status == GMT_DECODE_DAMAGED)
		drops_caveat(file, res);
	switch (res->status) {
	case GMT_DECODE_OK:
		return GMT_EXIT_OK;
	case GMT_DECODE_DAMAGED:
		fprintf(stderr, "gpumemtrace-analyze: %s (reporting what came before)\n", res->message);
		return GMT_EXIT_DAMAGED;
	default:
		fprintf(stderr, "gpumemtrace-analyze: %s\n", res->message[0] ? res->message : file);
		return GMT_EXIT_USAGE;
	}
}

void gmt_cli_gaps(const char *file, const gmt_gaps_t *g)
{
	char b[512];
	for (int i = 0; gmt_gap_line(g, i, b, sizeof(b)); i++)
		fprintf(stderr, "gpumemtrace-analyze: %s: %s\n", file, b);
}

void gmt_cli_separator(FILE *f)
{
	fputs("\n========================================================================\n\n", f);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- usage, from the table ------------------------------------------------- */

/* "  --name ARG" then the help, its lines aligned. */
static void put_opt(FILE *f, const gmt_cmd_opt_t *o)
{
	char head[64];
	const char *shorts = o == &common_opts[C_OUTPUT] ? "-o, " : o == &common_opts[C_HELP] ? "-h, " : "";
	snprintf(head, sizeof(head), "  %s--%s%s%s", shorts, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	fputs(head, f);
	int col = (int)strlen(head);
	const char *p = o->help;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (col > 24) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%*s%.*s\n", 26 - col, "", (int)n, p);
		col = 0;
		p += n + (nl != NULL);
	}
}

static void put_synopsis(FILE *f, const gmt_cmd_t *c, const char *lead)
{
	int col = fprintf(f, "%sgpumemtrace-analyze %s [COMMON OPTIONS]", lead, c->name);
	int indent = (int)strlen(lead) + 20 + (int)strlen(c->name);
	for (const gmt_cmd_opt_t *o = c->opts; o && o->name; o++) {
		char b[64];
		int n = snprintf(b, sizeof(b), " [--%s%s%s]", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		if (col + n > 90) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
		}
		fputs(b, f);
		col += n;
	}
	fprintf(f, " %s\n", c->operands);
}

static void put_help_lines(FILE *f, const char *text, int indent)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(f, "%*s%.*s\n", indent, "", (int)n, p);
		p += n + (nl != NULL);
	}
}

static void put_common(FILE *f)
{
	fputs("Common options (every command):\n", f);
	for (int i = 0; i < N_COMMON; i++)
		put_opt(f, &common_opts[i]);
	fputc('\n', f);
	fputs(selection_note, f);
}

/* Everything: every command's synopsis, help and options. */
static void usage_all(FILE *f)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		put_synopsis(f, commands[i], i ? "       " : "usage: ");
	fputs("       gpumemtrace-analyze COMMAND --help\n"
	      "       gpumemtrace-analyze --version | --help | --commands\n\nCommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++) {
		fprintf(f, "  %s\n", commands[i]->name);
		put_help_lines(f, commands[i]->help, 4);
		if (commands[i]->opts && commands[i]->opts[0].name) {
			fprintf(f, "    options of %s:\n", commands[i]->name);
			for (const gmt_cmd_opt_t *o = commands[i]->opts; o->name; o++) {
				/* indented by two more */
				char *buf = NULL;
				size_t len = 0;
				FILE *m = open_memstream(&buf, &len);
				if (!m)
					continue;
				put_opt(m, o);
				fclose(m);
				put_help_lines(f, buf, 2);
				free(buf);
			}
		}
	}
	fputc('\n', f);
	put_common(f);
	fputc('\n', f);
	fputs(exit_text, f);
}

static void usage_cmd(FILE *f, const gmt_cmd_t *c)
{
	put_synopsis(f, c, "usage: ");
	fputc('\n', f);
	put_help_lines(f, c->help, 0);
	if (c->opts && c->opts[0].name) {
		fprintf(f, "\nOptions of %s:\n", c->name);
		for (const gmt_cmd_opt_t *o = c->opts; o->name; o++)
			put_opt(f, o);
	}
	fputc('\n', f);
	put_common(f);
	fputc('\n', f);
	fputs(exit_text, f);
}

/* A usage error: what is wrong was said; the synopsis goes to stderr. */
static int usage_error(const gmt_cmd_t *c)
{
	put_synopsis(stderr, c, "usage: ");
	fprintf(stderr, "(gpumemtrace-analyze %s --help says more)\n", c->name);
	return GMT_EXIT_USAGE;
}

/* ---- one command ------------------------------------------------------------- */

/* Appends v to a NULL-initialised array of at most cap entries. */
static void push(const char **a, size_t *n, const char *v)
{
	a[(*n)++] = v;
}

/* Ends the report: the JSON document (when begun), then the stream. Returns
 * nonzero (reported) when a write failed or the document was malformed. */
static int finish_output(const gmt_cmd_t *c, gmt_json_t *j, FILE *out, const char *out_path)
{
	int e = j ? gmt_json_close(j) : 0;
	int bad = fflush(out) || ferror(out);
	if (out != stdout && fclose(out))
		bad = 1;
	if (bad || e == -EIO) {
		fprintf(stderr, "gpumemtrace-analyze: %s: write error: %s\n", out_path ? out_path : "stdout",
			strerror(errno ? errno : EIO));
		return 1;
	}
	if (e) {
		gmt_cli_error(c, "internal error: the JSON document was not well formed (completed)");
		return 1;
	}
	return 0;
}

static int run_command(const gmt_cmd_t *c, int argc, char **argv)
{
	size_t n_own = 0;
	while (c->opts && c->opts[n_own].name)
		n_own++;
	struct option *lo = calloc(N_COMMON + n_own + 1, sizeof(*lo));
	const char **arrays = calloc(4 * ((size_t)argc + 1), sizeof(char *));
	void *st = calloc(1, c->state_size ? c->state_size : 1);
	int rc = GMT_EXIT_OK;
	if (!lo || !arrays || !st) {
		fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
		free(lo);
		free(arrays);
		free(st);
		return GMT_EXIT_USAGE;
	}
	for (int i = 0; i < N_COMMON; i++)
		lo[i] = (struct option){ common_opts[i].name, common_opts[i].arg ? required_argument : no_argument,
					 NULL, 256 + i };
	for (size_t i = 0; i < n_own; i++)
		lo[N_COMMON + i] = (struct option){ c->opts[i].name,
						    c->opts[i].arg ? required_argument : no_argument,
						    NULL, 512 + (int)i };
	gmt_common_t cm;
	memset(&cm, 0, sizeof(cm));
	cm.symbols = 1;
	cm.debug_dirs = arrays;
	cm.domains = arrays + argc + 1;
	cm.patterns = arrays + 2 * (argc + 1);
	cm.files = arrays + 3 * (argc + 1);
	if (c->init)
		c->init(st);

	/* argv[0] is the command: getopt starts after it. */
	optind = 1;
	opterr = 0;
	int help = 0;
	for (;;) {
		int li = -1;
		int k = getopt_long(argc, argv, ":o:h", lo, &li);
		if (k == -1)
			break;
		if (k == 'o' || k == 256 + C_OUTPUT) {
			cm.out_path = strcmp(optarg, "-") ? optarg : NULL;   /* -: standard output */
		} else if (k == 'h' || k == 256 + C_HELP) {
			help = 1;
		} else if (k == 256 + C_JSON) {
			cm.json = 1;
		} else if (k == 256 + C_STATS) {
			cm.stats = 1;
		} else if (k == 256 + C_NO_SYMBOLS) {
			cm.symbols = 0;
		} else if (k == 256 + C_DEBUG_DIR) {
			push(cm.debug_dirs, &cm.n_debug_dirs, optarg);
		} else if (k == 256 + C_DOMAIN) {
			push(cm.domains, &cm.n_domains, optarg);
		} else if (k == 256 + C_PATTERN) {
			push(cm.patterns, &cm.n_patterns, optarg);
		} else if (k == 256 + C_ALL_DEPTHS) {
			cm.all_depths = 1;
		} else if (k >= 512 && k < 512 + (int)n_own) {
			if (c->option(st, (size_t)(k - 512), optarg)) {
				rc = usage_error(c);
				goto out;
			}
		} else if (k == ':') {
			gmt_cli_error(c, "%s needs a value", argv[optind - 1]);
			rc = usage_error(c);
			goto out;
		} else {
			if (optopt && optopt < 256)
				gmt_cli_error(c, "unknown option '-%c'", optopt);
			else
				gmt_cli_error(c, "unknown option '%s'", argv[optind - 1]);
			rc = usage_error(c);
			goto out;
		}
	}
	if (help) {
		usage_cmd(stdout, c);
		goto out;
	}
	for (int i = optind; i < argc; i++)
		push(cm.files, &cm.n_files, argv[i]);
	if (!cm.n_files) {
		gmt_cli_error(c, "no trace given");
		rc = usage_error(c);
		goto out;
	}
	if (c->max_traces && cm.n_files > c->max_traces) {
		if (c->max_traces == 1)
			gmt_cli_error(c, "one trace at a time");
		else
			gmt_cli_error(c, "at most %zu traces at a time", c->max_traces);
		rc = usage_error(c);
		goto out;
	}
	if (c->check && c->check(st, &cm)) {
		rc = usage_error(c);
		goto out;
	}

	FILE *f = stdout;
	if (cm.out_path && !(f = fopen(cm.out_path, "w"))) {
		fprintf(stderr, "gpumemtrace-analyze: %s: cannot open for writing: %s\n", cm.out_path,
			strerror(errno));
		rc = GMT_EXIT_USAGE;
		goto out;
	}
	double t0 = now_s();
	progress_start();
	gmt_json_t j;
	gmt_out_t o = { .f = f, .json = cm.json ? &j : NULL };
	if (cm.json) {
		gmt_json_init(&j, f);
		gmt_render_json_head(&j, c->name);
	}
	rc = c->run(st, &cm, &o);
	gmt_cli_progress_clear();
	if (cm.json)
		gmt_json_obj_end(&j);
	if (finish_output(c, o.json, f, cm.out_path))
		rc = GMT_EXIT_USAGE;
	if (cm.stats) {
		double dt = now_s() - t0;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "gpumemtrace-analyze stats: events=%llu seconds=%.6f events_per_s=%.0f "
			"peak_rss_bytes=%llu\n", (unsigned long long)o.events, dt,
			dt > 0 ? (double)o.events / dt : 0.0, (unsigned long long)ru.ru_maxrss * 1024ull);
	}
out:
	free(lo);
	free(arrays);
	free(st);
	return rc;
}

int gmt_cli_main(int argc, char **argv)
{
	if (argc < 2) {
		usage_all(stderr);
		return GMT_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("gpumemtrace-analyze %s (trace format %d.%d)\n", GMT_VERSION, GMT_FORMAT_MAJOR,
		       GMT_FORMAT_MINOR);
		return GMT_EXIT_OK;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage_all(stdout);
		return GMT_EXIT_OK;
	}
	if (!strcmp(name, "--commands")) {
		/* the table, one line a command: NAME OPERANDS (for scripts,
		 * shell completion and the test of every common option) */
		for (size_t i = 0; i < N_COMMANDS; i++)
			printf("%s %s\n", commands[i]->name, commands[i]->operands);
		return fflush(stdout) || ferror(stdout) ? GMT_EXIT_USAGE : GMT_EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return run_command(commands[i], argc - 1, argv + 1);
	fprintf(stderr, "gpumemtrace-analyze: unknown command '%s'\n", name);
	usage_all(stderr);
	return GMT_EXIT_USAGE;
}
