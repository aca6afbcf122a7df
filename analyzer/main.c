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

#include "gmt_replay.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

enum { EXIT_OK = 0, EXIT_DAMAGED = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: gpumemtrace-analyze summary [--json] [-o FILE] [--stats] TRACE...\n"
	"       gpumemtrace-analyze --version | --help\n"
	"\n"
	"Commands:\n"
	"  summary   per process and device: the peak of device bytes held with its\n"
	"            instant and exact composition, independent per-kind maxima, final\n"
	"            live bytes, counts, failed allocations with what was live then,\n"
	"            host pinned memory and reserved address space (apart), pools,\n"
	"            drops, and whether the trace ended cleanly, was cut or damaged.\n"
	"            Several traces (several processes) are reported in the order given.\n"
	"\n"
	"Options:\n"
	"  --json        one JSON document {\"traces\": [...]} (schemas/report.schema.json)\n"
	"  -o FILE       write the report to FILE instead of standard output\n"
	"  --stats       print events decoded, seconds, events/s and peak RSS to stderr\n"
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
	if (json)
		gmt_report_json_begin(out);
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
			gmt_report_json(out, s, i == 0);
		} else {
			if (i)
				fputs("\n========================================================================\n\n", out);
			gmt_report_text(out, s);
		}
		gmt_replay_free(r);
	}
	if (json)
		gmt_report_json_end(out);
	if (fflush(out) || (out != stdout && fclose(out))) {
		fprintf(stderr, "gpumemtrace-analyze: %s: write error: %s\n",
			out_path ? out_path : "stdout", strerror(errno));
		rc = EXIT_USAGE;
	}
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
	fprintf(stderr, "gpumemtrace-analyze: unknown command '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
