/*
 * gmt_run.c - gpumemtrace-run, the launcher's last step (scripts/gpumemtrace.in
 * execs it once the environment is set): runs the job, passes the signals
 * a batch system stops it with on to the job, and says which traces the
 * job wrote.
 *
 *   gpumemtrace-run [-q] [-k] [-a ANALYZER] [-p PRELOAD] -- COMMAND [ARGS...]
 *
 * -p: the job (only the job, not this program) runs with LD_PRELOAD and
 * NVTX_INJECTION64_PATH set to PRELOAD (LD_PRELOAD's earlier entries kept
 * after it). -k: NVTX_INJECTION64_PATH is left as it is (the launcher's
 * --keep-nvtx-injection: another tool's injection library). -q: say
 * nothing of the traces.
 *
 * Exits with COMMAND's exit status, or 128+N if a signal N killed it (as
 * a shell reports it). 127: COMMAND could not be run.
 *
 * Why a program and not the shell. A shell waiting for a foreground job
 * runs no trap until the job ends, and a job it starts in the background
 * gets SIGINT and SIGQUIT ignored and its input from /dev/null; so a shell
 * launcher stopped by SIGTERM died and left the job running. This process
 * keeps the launcher's pid (the shell execs it), forks the job in the same
 * process group (the terminal still sees it as the foreground), and
 * forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT sent by a process (kill,
 * scancel, a supervisor); the same signals typed at the terminal (Ctrl-C)
 * reach the whole foreground group already and are not sent twice.
 *
 * Which traces. Several jobs may share an output directory at once, so the
 * directory's new files are not this job's: every traced process of the
 * job appends its trace's path to the file GPUMEMTRACE_TRACE_LIST names
 * (tracer/gmt_fd.c, gmt_fd_announce), which this program creates and reads
 * when the job has ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* SI_KERNEL: from the terminal, to the whole group: the job has it. */
	if (child > 0 && si && si->si_code != SI_KERNEL)
		kill(child, sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: gpumemtrace-run [-q] [-k] [-a ANALYZER] [-p PRELOAD] -- COMMAND [ARGS...]\n");
	exit(2);
}

/* Prints the job's traces (the list's lines that name an existing file,
 * each once) and the command that analyses them. */
static void report(const char *list, const char *analyzer)
{
	FILE *f = fopen(list, "r");
	char line[4200], *seen = NULL, *p;
	size_t seen_len = 0;
	int n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		size_t l = strcspn(line, "\n");
		line[l] = 0;
		struct stat st;
		if (!l || stat(line, &st) != 0)
			continue;
		/* The same path twice (a file reopened): once. */
		int dup = 0;
		for (p = seen; p && p < seen + seen_len; p += strlen(p) + 1)
			dup |= !strcmp(p, line);
		if (dup)
			continue;
		char *s = realloc(seen, seen_len + l + 1);
		if (!s)
			break;
		seen = s;
		memcpy(seen + seen_len, line, l + 1);
		seen_len += l + 1;
		fprintf(stderr, "gpumemtrace: trace written to %s\n", line);
		n++;
	}
	if (f)
		fclose(f);
	if (!n) {
		fprintf(stderr, "gpumemtrace: no trace written (the command made no traced call, or see the messages above)\n");
	} else {
		fprintf(stderr, "gpumemtrace: analyze with: %s summary", analyzer);
		for (p = seen; p < seen + seen_len; p += strlen(p) + 1)
			fprintf(stderr, " %s", p);
		fprintf(stderr, "\n");
	}
	free(seen);
}

int main(int argc, char **argv)
{
	int quiet = 0, keep_nvtx = 0, i = 1;
	const char *analyzer = "gpumemtrace-analyze", *preload = NULL;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "-k"))
			keep_nvtx = 1;
		else if (!strcmp(argv[i], "-a") && i + 1 < argc)
			analyzer = argv[++i];
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			preload = argv[++i];
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			usage();
	}
	if (i >= argc)
		usage();

	char list[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(list, sizeof(list), "%s/gpumemtrace.traces.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int lfd = mkstemp(list);
	if (lfd < 0) {
		fprintf(stderr, "gpumemtrace: cannot create %s: %s\n", list, strerror(errno));
		return 2;
	}
	close(lfd);
	setenv("GPUMEMTRACE_TRACE_LIST", list, 1);

	/* Handlers before the fork: a signal that comes at once is passed on. */
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaddset(&block, forwarded[k]);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpumemtrace: fork: %s\n", strerror(errno));
		unlink(list);
		return 2;
	}
	if (pid == 0) {
		/* The job gets the mask and dispositions the launcher was given. */
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (preload) {
			const char *was = getenv("LD_PRELOAD");
			size_t n = strlen(preload) + (was ? strlen(was) : 0) + 2;
			char *lp = malloc(n);
			if (lp) {
				snprintf(lp, n, "%s%s%s", preload, was && *was ? ":" : "", was ? was : "");
				setenv("LD_PRELOAD", lp, 1);
			}
			if (!keep_nvtx)
				setenv("NVTX_INJECTION64_PATH", preload, 1);
		}
		execvp(argv[i], argv + i);
		fprintf(stderr, "gpumemtrace: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	child = pid;
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++) {
		struct sigaction sa, prev;
		sigaction(forwarded[k], NULL, &prev);
		if (prev.sa_handler == SIG_IGN)
			continue;   /* nohup: ignored for us, ignored for the job */
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = forward;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(forwarded[k], &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!quiet)
		report(list, analyzer);
	unlink(list);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
