/* fuzz_analyze - libFuzzer target for every analyzer command (make
 * fuzz-analyze). Each input becomes a file (a memfd, named by its
 * /proc/self/fd path) and every command of the analyzer's own table
 * (`gpumemtrace-analyze --commands`, read once) runs on it, as text and
 * with --json, symbols off, output to /dev/null (their messages go to
 * stderr with libFuzzer's): any input must give a
 * report or a clear refusal (exit status 0, 1 or 2) without crashing,
 * reading out of bounds, leaking or allocating without bound.
 *
 * As in fuzz_decode.c, an input whose first byte is 0 is raw records: the
 * rest is wrapped in a preamble and one zstd frame, so that mutations reach
 * the records instead of dying at the zstd checksum (format 1.4). The corpus
 * (tests/fuzz/corpus/) is replayed through every command by
 * tests/cases/analyze_corpus.sh in the normal test run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "cli/gmt_cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char names[64][32];
static int operands[64];   /* how many traces a command takes at least */
static int n_cmds;

/* The command table, from `--commands` (NAME OPERANDS a line). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = memfd_create("commands", 0), out = dup(1);
	const char *av[] = { "gpumemtrace-analyze", "--commands", NULL };
	fflush(stdout);
	dup2(fd, 1);
	gmt_cli_main(2, (char **)av);
	fflush(stdout);
	dup2(out, 1);
	close(out);
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (char *line = strtok(buf, "\n"); line && n_cmds < 64; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');
		if (!sp || sp - line >= 32)
			continue;
		memcpy(names[n_cmds], line, (size_t)(sp - line));
		/* "TRACE...", "TRACE", "A B": one trace per word */
		int k = 1;
		for (char *q = sp + 1; *q; q++)
			k += *q == ' ';
		operands[n_cmds++] = k;
	}
	if (!n_cmds)
		abort();
	return 0;
}

static void run_all(const void *data, size_t size)
{
	int fd = memfd_create("trace", 0);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int i = 0; i < n_cmds; i++) {
		for (int json = 0; json < 2; json++) {
			const char *av[16];
			int ac = 0;
			av[ac++] = "gpumemtrace-analyze";
			av[ac++] = names[i];
			av[ac++] = "--no-symbols";
			if (json)
				av[ac++] = "--json";
			av[ac++] = "-o";
			av[ac++] = "/dev/null";
			for (int k = 0; k < operands[i] && ac < 15; k++)
				av[ac++] = path;
			av[ac] = NULL;
			int rc = gmt_cli_main(ac, (char **)av);
			if (rc < 0 || rc > 2)
				__builtin_trap();
		}
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 1 && data[0] == 0) {
		static const uint8_t pre[20] = { 0x5e, 0x2a, 0x4d, 0x18, 12, 0, 0, 0,
			'G', 'M', 'T', 'R', 'A', 'C', 'E', 0, 1, 0, 4, 0 };
		size_t cap = 20 + ZSTD_compressBound(size - 1);
		uint8_t *buf = malloc(cap);
		if (!buf)
			return 0;
		memcpy(buf, pre, 20);
		size_t z = ZSTD_compress(buf + 20, cap - 20, data + 1, size - 1, 1);
		if (!ZSTD_isError(z))
			run_all(buf, 20 + z);
		free(buf);
		return 0;
	}
	run_all(data, size);
	return 0;
}
