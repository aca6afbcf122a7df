/* shared_workload.c - processes sharing one device with overlapping
 * holdings known by construction, for the grouping of several traces by host
 * and physical device (tests/cases/shared_*.sh).
 *
 *   shared_workload 2|3 [phases]
 *
 * The parent makes no CUDA call (so writes no trace); it forks N ranks (the
 * child sets RANK=i, LOCAL_RANK=i, WORLD_SIZE=N before its first CUDA call)
 * and drives them one step at a time through pipes: each step is one
 * allocation or free of one rank on device 0, acknowledged before the next,
 * so the steps' order in time is the script's. MiB = 2^20 B.
 *
 *   N = 2:  1 r0 +100   2 r1 +300   3 r0 +200 (600: r0 300, r1 300)
 *           4 r1 -300   5 r0 -200   6 r1 +450 (550)
 *           coinciding peak 600 MiB at step 3; own peaks r0 300, r1 450
 *           (their sum, 750, happened at no instant)
 *   N = 3:  0 r2 +50    1 r0 +100   2 r1 +300   3 r0 +200 (650: r0 300,
 *           r1 300, r2 50)   4 r1 -300   5 r2 +250 (600)   6 r0 -200
 *           7 r2 -250   8 r1 +450 (600)
 *           coinciding peak 650 MiB at step 3; own peaks r0 300, r1 450,
 *           r2 300 (sum 1050); r2 also makes a context on device 1 (run
 *           with GMT_FAKE_DEVICES=2) at its first step, where it allocates
 *           nothing: a stray context. A fourth process, a "worker" of rank
 *           0 (RANK=0, LOCAL_RANK=0, no allocation), makes a context on
 *           device 0 and exits: stray too.
 * With "phases" (for phases and oom of several traces), every rank also
 * marks phases through gpumemtrace's API (when the preload is there):
 * "step" #1 from before the first step to after step 3 (its begin and end
 * sent to the ranks in rank order), "step" #2 from then to after the last
 * step, and inside #2, after the last step, one rank asks for 64 GiB, which
 * fails (the doubles' device has 16 GiB):
 *   N = 2:  #1 coinciding peak 600 MiB at step 3 (r0 300, r1 300), own
 *           maxima 300, 300; #2 600 MiB at its begin (300, 300), own maxima
 *           r0 300, r1 450 (sum 750); r0's failure: r0 100, r1 450 (550)
 *   N = 3:  #1 650 MiB at step 3 (300, 300, 50), own maxima 300, 300, 50;
 *           #2 650 MiB at its begin, own maxima 300, 450, 300 (sum 1050);
 *           r1's failure: r0 100, r1 450, r2 50 (600); the worker has no
 *           phases.
 * Then every rank frees what it holds and exits 0. Prints "step K" for
 * each step. Exit status 0; 2 bad usage; 3 a step failed.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024ull * 1024)
#define MAX_RANKS 3

typedef struct cmd {
	int op;         /* 'a' alloc, 'f' free, 'b' begin / 'e' end phase
			   "step", 'x' an allocation that must fail, 'q' quit */
	int slot;       /* 0 or 1                                           */
	unsigned mib;   /* for 'a'                                          */
} cmd_t;

typedef struct step {
	int rank;
	int op;
	int slot;
	unsigned mib;
} step_t;

static const step_t script2[] = {
	{ 0, 'a', 0, 100 }, { 1, 'a', 0, 300 }, { 0, 'a', 1, 200 },
	{ 1, 'f', 0, 0 },   { 0, 'f', 1, 0 },   { 1, 'a', 1, 450 },
};
static const step_t script3[] = {
	{ 2, 'a', 0, 50 },  { 0, 'a', 0, 100 }, { 1, 'a', 0, 300 }, { 0, 'a', 1, 200 },
	{ 1, 'f', 0, 0 },   { 2, 'a', 1, 250 }, { 0, 'f', 1, 0 },   { 2, 'f', 1, 0 },
	{ 1, 'a', 1, 450 },
};

static void set_rank_env(int rank, int n)
{
	char r[16], w[16];

	snprintf(r, sizeof r, "%d", rank);
	snprintf(w, sizeof w, "%d", n);
	setenv("RANK", r, 1);
	setenv("LOCAL_RANK", r, 1);
	setenv("WORLD_SIZE", w, 1);
}

/* A rank: executes commands from in, acknowledges each on out. */
static int rank_main(int rank, int n, int in, int out)
{
	void *slots[2] = { NULL, NULL };
	void (*phase_begin)(const char *), (*phase_end)(const char *);
	cmd_t c;
	char ok;

	*(void **)&phase_begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	*(void **)&phase_end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");

	set_rank_env(rank, n);
	if (cudaSetDevice(0) != cudaSuccess)
		return 3;
	if (n == 3 && rank == 2) {	/* a context on device 1, nothing in it */
		if (cudaSetDevice(1) != cudaSuccess || cudaFree(NULL) != cudaSuccess ||
		    cudaSetDevice(0) != cudaSuccess)
			return 3;
	}
	while (read(in, &c, sizeof c) == (ssize_t)sizeof c) {
		ok = 1;
		if (c.op == 'a')
			ok = cudaMalloc(&slots[c.slot], c.mib * MiB) == cudaSuccess;
		else if (c.op == 'f')
			ok = cudaFree(slots[c.slot]) == cudaSuccess, slots[c.slot] = NULL;
		else if (c.op == 'b' && phase_begin)
			phase_begin("step");
		else if (c.op == 'e' && phase_end)
			phase_end("step");
		else if (c.op == 'x') {
			void *p = NULL;
			ok = cudaMalloc(&p, 64ull << 30) != cudaSuccess;
		}
		else if (c.op == 'q')
			break;
		if (write(out, &ok, 1) != 1 || !ok)
			return 3;
	}
	for (int i = 0; i < 2; i++)
		if (slots[i] && cudaFree(slots[i]) != cudaSuccess)
			return 3;
	return 0;
}

/* Sends c to rank r and waits for its acknowledgement; 0 or -1. */
static int send_cmd(int to[][2], int from[][2], int r, cmd_t c)
{
	char ok = 0;
	if (write(to[r][1], &c, sizeof c) != (ssize_t)sizeof c || read(from[r][0], &ok, 1) != 1 || !ok)
		return -1;
	return 0;
}

/* 'b' or 'e' to every rank, in rank order */
static int all_ranks(int to[][2], int from[][2], int n, int op)
{
	for (int r = 0; r < n; r++)
		if (send_cmd(to, from, r, (cmd_t){ op, 0, 0 }))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc == 2 || argc == 3 ? atoi(argv[1]) : 0;
	int phases = argc == 3 && !strcmp(argv[2], "phases");
	int to[MAX_RANKS][2], from[MAX_RANKS][2];
	pid_t pids[MAX_RANKS + 1];
	const step_t *script = n == 2 ? script2 : script3;
	size_t steps = n == 2 ? sizeof script2 / sizeof script2[0] : sizeof script3 / sizeof script3[0];
	int bad = 0, st;

	if ((n != 2 && n != 3) || (argc == 3 && !phases)) {
		fprintf(stderr, "usage: shared_workload 2|3 [phases]\n");
		return 2;
	}
	fflush(stdout);
	for (int r = 0; r < n; r++) {
		if (pipe(to[r]) || pipe(from[r]))
			return 3;
		if ((pids[r] = fork()) < 0)
			return 3;
		if (pids[r] == 0) {
			close(to[r][1]);
			close(from[r][0]);
			_exit(rank_main(r, n, to[r][0], from[r][1]));
		}
		close(to[r][0]);
		close(from[r][1]);
	}
	if (phases && all_ranks(to, from, n, 'b'))
		bad = 1;
	for (size_t k = 0; k < steps && !bad; k++) {
		cmd_t c = { script[k].op, script[k].slot, script[k].mib };
		if (send_cmd(to, from, script[k].rank, c)) {
			bad = 1;
			break;
		}
		printf("step %zu\n", n == 2 ? k + 1 : k);
		/* after step 3 (index 2 of script2, 3 of script3) */
		if (phases && k == (n == 2 ? 2u : 3u) && (all_ranks(to, from, n, 'e') || all_ranks(to, from, n, 'b')))
			bad = 1;
	}
	if (phases && !bad && (send_cmd(to, from, n == 2 ? 0 : 1, (cmd_t){ 'x', 0, 0 }) ||
			       all_ranks(to, from, n, 'e')))
		bad = 1;
	for (int r = 0; r < n; r++) {
		cmd_t q = { 'q', 0, 0 };
		if (write(to[r][1], &q, sizeof q) != (ssize_t)sizeof q)
			bad = 1;
	}
	if (n == 3) {	/* the worker: a context on device 0, no allocation */
		if ((pids[n] = fork()) < 0)
			return 3;
		if (pids[n] == 0) {
			set_rank_env(0, n);
			_exit(cudaSetDevice(0) == cudaSuccess && cudaFree(NULL) == cudaSuccess ? 0 : 3);
		}
	}
	for (int r = 0; r < n + (n == 3); r++)
		if (waitpid(pids[r], &st, 0) != pids[r] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	return bad ? 3 : 0;
}
