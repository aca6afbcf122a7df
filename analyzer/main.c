/*
 * main.c - gpumemtrace-analyze: the command line around the replay engine.
 * Commands and exit codes are described in docs/analyzer.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "gmt_curves.h"
#include "gmt_phases.h"
#include "gmt_replay.h"
#include "gmt_sites.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

enum { EXIT_OK = 0, EXIT_DAMAGED = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: gpumemtrace-analyze summary [--json] [-o FILE] [--stats] TRACE...\n"
	"       gpumemtrace-analyze phases [--json] [-o FILE] [SELECTION] [--top N]\n"
	"                                  [--max-occurrences N] [--max-disagreements N] TRACE...\n"
	"       gpumemtrace-analyze curves [--csv|--json] [-o FILE] [--view requested|held]\n"
	"                                  [--max-rows N] [SELECTION] TRACE...\n"
	"       gpumemtrace-analyze sites [--json] [-o FILE] [--top N] [--phase NAME] [--framework]\n"
	"                                 [SYMBOLS] TRACE...\n"
	"       gpumemtrace-analyze flamegraph [-o FILE] [--phase NAME] [--framework] [SYMBOLS] TRACE\n"
	"       gpumemtrace-analyze --version | --help\n"
	"\n"
	"Commands:\n"
	"  summary   per process and device: the peak of device bytes held with its\n"
	"            instant and exact composition, independent per-kind maxima, final\n"
	"            live bytes, counts, failed allocations with what was live then,\n"
	"            host pinned memory and reserved address space (apart), pools,\n"
	"            drops, and whether the trace ended cleanly, was cut or damaged.\n"
	"            Several traces (several processes) are reported in the order given.\n"
	"  phases    per phase occurrence (cold: the first; warm: the later ones, also\n"
	"            aggregated) and device: allocated, reserved, outside the framework,\n"
	"            device used at start and end; the maximum allocated, reserved, held\n"
	"            and gap with the other values AT THAT SAME INSTANT; bounds from\n"
	"            independent maxima (labelled: no real moment); failed phases; the\n"
	"            driver allocations outside the framework. Both views: requested, held.\n"
	"  curves    time series per device (time, phase, allocated, reserved, outside,\n"
	"            device used, held), one row per instant a value changes.\n"
	"  sites     per device, at its coinciding peak: the call sites holding the\n"
	"            live bytes (bytes, blocks, share, recorded and stack owner, the\n"
	"            symbolised stack), the sites that allocated most over the run,\n"
	"            and the stack of every failed allocation.\n"
	"  flamegraph  the memory live at each device's peak as folded stacks\n"
	"            (flamegraph.pl, speedscope), rooted at \"device N\".\n"
	"\n"
	"Symbols (sites, flamegraph):\n"
	"  --debug-dir DIR   separate debug files by build id (DIR/.build-id/xx/rest.debug;\n"
	"                    repeatable; /usr/lib/debug is searched too)\n"
	"  --no-symbols      modules and offsets only\n"
	"  --top N           sites: sites listed per device and list (default 20)\n"
	"  --phase NAME      also the sites (flamegraph: only the stacks) at each device's\n"
	"                    peak within each occurrence of phase NAME (default selection)\n"
	"  --framework       the framework's own blocks (allocated, the requested view) at\n"
	"                    the peak of each device's (with --phase: of each occurrence's),\n"
	"                    by stack (Python frames from the companion shown as text),\n"
	"                    instead of the driver-level blocks\n"
	"\n"
	"Selection (phases, curves): by default our API's phases, the NVTX domain\n"
	"\"gpumemtrace\" and the outermost ranges of NVTX's default domain.\n"
	"  --domain NAME     ranges of that NVTX domain too, at any depth (repeatable;\n"
	"                    '*': every named domain)\n"
	"  --pattern GLOB    only phases whose name matches (fnmatch; repeatable)\n"
	"  --all-depths      nested ranges of the default domain too (per-operator ranges)\n"
	"\n"
	"Options:\n"
	"  --json        one JSON document {\"traces\": [...]} (schemas/report.schema.json)\n"
	"  -o FILE       write the report to FILE instead of standard output\n"
	"  --stats       print events decoded, seconds, events/s and peak RSS to stderr\n"
	"  --top N       phases: outside allocations listed per device (default 20)\n"
	"  --max-occurrences N  phases: occurrences listed per name (default 100)\n"
	"  --max-disagreements N  phases: framework checkpoints that disagree with the\n"
	"                rebuilt values, listed per device (default 20; all are counted)\n"
	"  --csv         curves: CSV (the default)\n"
	"  --view V      curves: requested (default) or held\n"
	"  --max-rows N  curves: at most N rows per device; each of N buckets keeps its\n"
	"                row with the most bytes held\n"
	"\n"
	"Exit status:\n"
	"  0  every trace was read to its end (ended cleanly, or cut: no END record)\n"
	"  1  a trace was damaged; the report covers what was read before the damage\n"
	"  2  usage error, or a file that cannot be read or is not a trace it accepts\n"
	"Messages go to stderr and name the file, the byte offset and what was expected.\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Ends the report: the JSON document (when one was begun), then the stream.
 * Returns nonzero (reported) when a write failed or the document was not
 * well formed. */
static int finish_output(gmt_json_t *j, FILE *out, const char *out_path, const char *cmd)
{
	int e = gmt_json_close(j);
	int bad = fflush(out) || ferror(out);
	if (out != stdout && fclose(out))
		bad = 1;
	if (bad || e == -EIO) {
		fprintf(stderr, "gpumemtrace-analyze: %s: write error: %s\n",
			out_path ? out_path : "stdout", strerror(errno ? errno : EIO));
		return 1;
	}
	if (e) {
		fprintf(stderr, "gpumemtrace-analyze: %s: internal error: the JSON document was not "
			"well formed (completed)\n", cmd);
		return 1;
	}
	return 0;
}

static int cmd_summary(int argc, char **argv)
{
	int json = 0, stats = 0, rc = EXIT_OK;
	const char *out_path = NULL;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	int nfiles = 0, opts_done = 0;
	if (!files) {
		fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			files[nfiles++] = argv[i];
		} else if (!strcmp(a, "--")) {
			opts_done = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--stats")) {
			stats = 1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "gpumemtrace-analyze: %s needs a file name\n", a);
				free(files);
				return EXIT_USAGE;
			}
			out_path = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			out_path = a + 9;
		} else if (!strncmp(a, "-o", 2)) {
			out_path = a + 2;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			free(files);
			return EXIT_OK;
		} else {
			fprintf(stderr, "gpumemtrace-analyze: summary: unknown option '%s'\n", a);
			usage(stderr);
			free(files);
			return EXIT_USAGE;
		}
	}
	if (!nfiles) {
		fprintf(stderr, "gpumemtrace-analyze: summary: no trace given\n");
		usage(stderr);
		free(files);
		return EXIT_USAGE;
	}
	FILE *out = stdout;
	if (out_path && !(out = fopen(out_path, "w"))) {
		fprintf(stderr, "gpumemtrace-analyze: %s: cannot open for writing: %s\n",
			out_path, strerror(errno));
		free(files);
		return EXIT_USAGE;
	}

	double t0 = now_s();
	uint64_t total_events = 0;
	gmt_json_t j;
	gmt_json_init(&j, out);
	if (json) {
		gmt_report_json_head(&j, "summary");
		gmt_json_kv_arr_begin(&j, "traces");
	}
	for (int i = 0; i < nfiles; i++) {
		gmt_replay_t *r = gmt_replay_new(files[i]);
		if (!r) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			rc = EXIT_USAGE;
			break;
		}
		gmt_visitor_t v;
		gmt_decode_result_t res;
		memset(&res, 0, sizeof(res));
		gmt_replay_visitor(r, &v);
		gmt_decode_file(files[i], &v, &res);
		if (res.status == GMT_DECODE_STOPPED)
			snprintf(res.message, sizeof(res.message),
				 "%s: offset %llu: out of memory while analysing", files[i],
				 (unsigned long long)res.bytes_ok);
		const gmt_summary_t *s = gmt_replay_finish(r, &res);
		total_events += s->events;
		switch (res.status) {
		case GMT_DECODE_OK:
			break;
		case GMT_DECODE_DAMAGED:
			fprintf(stderr, "gpumemtrace-analyze: %s (reporting what came before)\n", res.message);
			if (rc < EXIT_DAMAGED)
				rc = EXIT_DAMAGED;
			break;
		default:
			fprintf(stderr, "gpumemtrace-analyze: %s\n",
				res.message[0] ? res.message : files[i]);
			rc = EXIT_USAGE;
			break;
		}
		if (json) {
			gmt_report_json(&j, s);
		} else {
			if (i)
				fputs("\n========================================================================\n\n", out);
			gmt_report_text(out, s);
		}
		gmt_replay_free(r);
	}
	if (json) {
		gmt_json_arr_end(&j);
		gmt_json_obj_end(&j);
	}
	if (finish_output(&j, out, out_path, "summary"))
		rc = EXIT_USAGE;
	if (stats) {
		double dt = now_s() - t0;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "gpumemtrace-analyze stats: events=%llu seconds=%.6f events_per_s=%.0f "
			"peak_rss_bytes=%llu\n", (unsigned long long)total_events, dt,
			dt > 0 ? (double)total_events / dt : 0.0,
			(unsigned long long)ru.ru_maxrss * 1024ull);
	}
	free(files);
	return rc;
}

/* Options of phases and curves. */
typedef struct tl_opts {
	int json, csv;
	const char *out_path;
	const char **domains, **patterns;
	size_t n_domains, n_patterns;
	int all_depths;
	unsigned long top, max_listed, max_ck;
	unsigned long long max_rows;
	enum gmt_view view;
	char **files;
	int nfiles;
} tl_opts_t;

static int parse_ul(const char *cmd, const char *opt, const char *v, unsigned long long max,
		    unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long x = v ? strtoull(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || x > max || v[0] == '-') {
		fprintf(stderr, "gpumemtrace-analyze: %s: %s needs a number (0 to %llu)\n", cmd, opt, max);
		return -1;
	}
	*out = x;
	return 0;
}

/* Returns 0, 1 (--help given: exit 0) or -1 (usage error, reported). */
static int parse_tl(const char *cmd, int argc, char **argv, tl_opts_t *o)
{
	int opts_done = 0;
	unsigned long long x;
	memset(o, 0, sizeof(*o));
	o->top = GMT_PHASES_DEFAULT_TOP;
	o->max_listed = GMT_PHASES_DEFAULT_LISTED;
	o->max_ck = GMT_PHASES_DEFAULT_CK_LISTED;
	o->files = calloc((size_t)argc + 1, sizeof(char *));
	o->domains = calloc((size_t)argc + 1, sizeof(char *));
	o->patterns = calloc((size_t)argc + 1, sizeof(char *));
	if (!o->files || !o->domains || !o->patterns) {
		fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			o->files[o->nfiles++] = argv[i];
		} else if (!strcmp(a, "--")) {
			opts_done = 1;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--csv") && !strcmp(cmd, "curves")) {
			o->csv = 1;
		} else if (!strcmp(a, "--all-depths")) {
			o->all_depths = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--domain") ||
			   !strcmp(a, "--pattern") || !strcmp(a, "--top") || !strcmp(a, "--view") ||
			   !strcmp(a, "--max-occurrences") || !strcmp(a, "--max-rows") ||
			   !strcmp(a, "--max-disagreements")) {
			if (!val) {
				fprintf(stderr, "gpumemtrace-analyze: %s: %s needs a value\n", cmd, a);
				return -1;
			}
			i++;
			if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
				o->out_path = val;
			} else if (!strcmp(a, "--domain")) {
				o->domains[o->n_domains++] = val;
			} else if (!strcmp(a, "--pattern")) {
				o->patterns[o->n_patterns++] = val;
			} else if (!strcmp(a, "--view") && !strcmp(cmd, "curves")) {
				if (!strcmp(val, "requested")) {
					o->view = GMT_VIEW_REQUESTED;
				} else if (!strcmp(val, "held")) {
					o->view = GMT_VIEW_HELD;
				} else {
					fprintf(stderr, "gpumemtrace-analyze: curves: --view is requested or held, not '%s'\n", val);
					return -1;
				}
			} else if (!strcmp(a, "--top") && !strcmp(cmd, "phases")) {
				if (parse_ul(cmd, a, val, 1000000, &x))
					return -1;
				o->top = (unsigned long)x;
			} else if (!strcmp(a, "--max-occurrences") && !strcmp(cmd, "phases")) {
				if (parse_ul(cmd, a, val, 100000000, &x))
					return -1;
				o->max_listed = x ? (unsigned long)x : 1;
			} else if (!strcmp(a, "--max-disagreements") && !strcmp(cmd, "phases")) {
				if (parse_ul(cmd, a, val, 1000000, &x))
					return -1;
				o->max_ck = x ? (unsigned long)x : 1;
			} else if (!strcmp(a, "--max-rows") && !strcmp(cmd, "curves")) {
				if (parse_ul(cmd, a, val, 1000000000ull, &x) || !x) {
					if (!x)
						fprintf(stderr, "gpumemtrace-analyze: curves: --max-rows needs at least 1\n");
					return -1;
				}
				o->max_rows = x;
			} else {
				fprintf(stderr, "gpumemtrace-analyze: %s: unknown option '%s'\n", cmd, a);
				usage(stderr);
				return -1;
			}
		} else {
			fprintf(stderr, "gpumemtrace-analyze: %s: unknown option '%s'\n", cmd, a);
			usage(stderr);
			return -1;
		}
	}
	if (o->json && o->csv) {
		fprintf(stderr, "gpumemtrace-analyze: curves: --csv and --json exclude each other\n");
		return -1;
	}
	if (!o->nfiles) {
		fprintf(stderr, "gpumemtrace-analyze: %s: no trace given\n", cmd);
		usage(stderr);
		return -1;
	}
	return 0;
}

static void free_tl(tl_opts_t *o)
{
	free(o->files);
	free(o->domains);
	free(o->patterns);
}

/* Reports a trace's decoding outcome on stderr; returns its exit code. */
static int outcome(const char *file, const gmt_decode_result_t *res)
{
	switch (res->status) {
	case GMT_DECODE_OK:
		return EXIT_OK;
	case GMT_DECODE_DAMAGED:
		fprintf(stderr, "gpumemtrace-analyze: %s (reporting what came before)\n", res->message);
		return EXIT_DAMAGED;
	default:
		fprintf(stderr, "gpumemtrace-analyze: %s\n", res->message[0] ? res->message : file);
		return EXIT_USAGE;
	}
}

/* phases and curves: one engine run per trace over the merged time line. */
static int cmd_timeline(const char *cmd, int argc, char **argv)
{
	tl_opts_t o;
	int rc = EXIT_OK, curves = !strcmp(cmd, "curves");
	int p = parse_tl(cmd, argc, argv, &o);
	if (p) {
		free_tl(&o);
		return p > 0 ? EXIT_OK : EXIT_USAGE;
	}
	FILE *out = stdout;
	if (o.out_path && !(out = fopen(o.out_path, "w"))) {
		fprintf(stderr, "gpumemtrace-analyze: %s: cannot open for writing: %s\n",
			o.out_path, strerror(errno));
		free_tl(&o);
		return EXIT_USAGE;
	}
	gmt_phase_opts_t po = {
		.domains = o.domains, .n_domains = o.n_domains,
		.patterns = o.patterns, .n_patterns = o.n_patterns,
		.all_depths = o.all_depths, .max_listed = (unsigned)o.max_listed,
		.top_n = (unsigned)o.top, .max_ck_listed = (unsigned)o.max_ck,
	};
	gmt_json_t j;
	gmt_json_init(&j, out);
	if (o.json) {
		gmt_report_json_head(&j, cmd);
		if (curves) {
			static const char *const columns[] = {
				"device", "ts_ns", "time_s", "phase", "allocated_bytes", "reserved_bytes",
				"outside_bytes", "device_used_bytes", "held_bytes",
			};
			gmt_json_kv_str(&j, "view", gmt_view_name(o.view));
			gmt_json_kv_arr_begin(&j, "columns");
			for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
				gmt_json_str(&j, columns[i]);
			gmt_json_arr_end(&j);
			gmt_json_kv_u64(&j, "max_rows", o.max_rows);
		}
		gmt_json_kv_obj_begin(&j, "selection");
		gmt_json_kv_bool(&j, "all_depths", o.all_depths);
		gmt_json_kv_arr_begin(&j, "domains");
		for (size_t i = 0; i < o.n_domains; i++)
			gmt_json_str(&j, o.domains[i]);
		gmt_json_arr_end(&j);
		gmt_json_kv_arr_begin(&j, "patterns");
		for (size_t i = 0; i < o.n_patterns; i++)
			gmt_json_str(&j, o.patterns[i]);
		gmt_json_arr_end(&j);
		gmt_json_obj_end(&j);
		gmt_json_kv_arr_begin(&j, "traces");
	} else if (curves) {
		gmt_curves_csv_header(out);
	}
	for (int i = 0; i < o.nfiles; i++) {
		gmt_decode_result_t res;
		gmt_phases_t *ph = NULL;
		gmt_curves_t *cv = NULL;
		gmt_phases_hook_t hook;
		if (curves) {
			cv = gmt_curves_new(o.view, o.max_rows);
			if (!cv) {
				fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
				rc = EXIT_USAGE;
				break;
			}
			gmt_curves_hook(cv, &hook);
		}
		gmt_phases_run(o.files[i], &po, curves ? &hook : NULL, &ph, &res);
		if (!ph) {
			fprintf(stderr, "gpumemtrace-analyze: out of memory\n");
			gmt_curves_free(cv);
			rc = EXIT_USAGE;
			break;
		}
		if (cv && gmt_curves_finish(cv) && res.status == GMT_DECODE_OK) {
			res.status = GMT_DECODE_STOPPED;
			snprintf(res.message, sizeof(res.message), "%s: the rows' temporary file failed", o.files[i]);
		}
		int r = outcome(o.files[i], &res);
		if (r > rc)
			rc = r;
		if (curves && o.json) {
			gmt_curves_json(&j, cv, ph);
		} else if (curves) {
			gmt_curves_csv(out, cv, ph, (unsigned)i);
		} else if (o.json) {
			gmt_phases_report_json(&j, ph);
		} else {
			if (i)
				fputs("\n========================================================================\n\n", out);
			gmt_phases_report_text(out, ph);
		}
		gmt_curves_free(cv);
		gmt_phases_free(ph);
	}
	if (o.json) {
		gmt_json_arr_end(&j);
		gmt_json_obj_end(&j);
	}
	if (finish_output(&j, out, o.out_path, cmd))
		rc = EXIT_USAGE;
	free_tl(&o);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("gpumemtrace-analyze %s (trace format %d.%d)\n", GMT_VERSION,
		       GMT_FORMAT_MAJOR, GMT_FORMAT_MINOR);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "summary"))
		return cmd_summary(argc - 2, argv + 2);
	if (!strcmp(cmd, "phases") || !strcmp(cmd, "curves"))
		return cmd_timeline(cmd, argc - 2, argv + 2);
	if (!strcmp(cmd, "sites") || !strcmp(cmd, "flamegraph")) {
		int rc = gmt_sites_main(cmd, argc - 2, argv + 2);
		if (rc < 0) {
			usage(stdout);
			return EXIT_OK;
		}
		return rc;
	}
	fprintf(stderr, "gpumemtrace-analyze: unknown command '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
