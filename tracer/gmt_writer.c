/*
 * gmt_writer.c - the writer thread: drains the per-thread buffers, merges
 * them by timestamp, encodes records (msgpack-c envelope, varint columns:
 * EVENTS2, frees named by allocation id, see "Allocation ids" below, and
 * EVENTS3 when allocations' addresses and sizes share low zero bits: see
 * "Shifts") and writes zstd frames, each with one write() (one frame per
 * round unless the round's events fill more; literals entropy coded only
 * where a probe frame shows it pays, PROBE_EVERY).
 *
 * A round (the writer thread's, or a producing thread's that helps: one at
 * a time, under round_lock; see "Help from the producing threads"):
 *   1. T0 = now; under the registry lock, a snapshot of the thread list.
 *   2. Watermark W = min(T0 - 1 ms, last published ts of every busy
 *      thread); W = infinity at shutdown and on a fatal signal.
 *   3. Each thread's published position, then (under the registry lock)
 *      the metadata queue (THREAD, DEVICE, STRING, META records): every
 *      event up to those positions has the records it names in that queue
 *      (a thread queues them before it publishes), so they go ahead of it
 *      (fix_limits); then the module map (MODULE / MODULE_UNLOAD records).
 *   4. (the buffer-full drops counted since the last round)
 *   5. Encode, straight from the threads' chunks (each in its own time
 *      order), the published events with ts <= W, up to those positions
 *      (what a thread published later waits for the next round; at
 *      shutdown, rounds follow while there is such): one thread's as they
 *      are, several threads' merged by ts a run at a time (the thread with
 *      the oldest next event gives all it has up to the next thread's).
 *      Drained chunks are freed on the way.
 *   6. Frame = pending metadata, DROPS, then EVENTS records (a STACK record
 *      ahead of the first event using each stack id); compress; write:
 *      the writer's rounds leave the frame open and, once it is half full
 *      or the round took all, write it with round_lock released (with a
 *      backlog, compressed by the compressor thread while the next is
 *      encoded: frame_post, collect_job);
 *      the final rounds (shutdown, exec) write under it.
 *      Each frame also samples the writer's throughput, which sets the
 *      buffer's limit (buffer_limit_update); a frame begun while the
 *      buffer is over half its limit is compressed at a fast level
 *      (frame_level): the writer catches up instead of the buffer dropping.
 *      In a final round of several frames (a backlog), each full frame but
 *      the last is compressed by a second thread while the writer encodes
 *      the next ("The compressor" below); frames stay in order, and the
 *      round ends with all of its frames written.
 *
 * Why the file is in time order. An event that this round did not see
 * published either was time-stamped after T0 - 1 ms (its clock read came
 * after our T0, give or take the store-visibility margin), or belongs to a
 * thread that was busy when we looked, whose unpublished events are stamped
 * at or after its last published ts; both are >= W. So every event a later
 * round writes has ts >= W >= everything written so far. Two things break
 * the premise and are caught, not assumed away: a thread busy for over 1 s
 * (stopped, or killed mid-append) stops holding W, and a caller may pass its
 * own ts (ev->ts != 0) read before the busy mark. Any event older than the
 * newest one already written goes into an EVENTS record flagged LATE and is
 * counted; normal records are therefore nondecreasing by construction.
 *
 * Write errors (ENOSPC, EIO, or injected by cfg.test_fail_*): the frame is
 * lost and the file is truncated back to the last good frame, its events
 * are counted as dropped (DROPS "write_error"), its metadata and stacks go
 * back into the queue for the next frame, and draining goes on: the program
 * never waits for the disk. One warning goes to stderr.
 *
 * Before each write the descriptor is checked to be still the trace file
 * (gmt_fd_trace_file): a program that closed it, or got its number back
 * from open(), never sees our bytes; the file is reopened by its path.
 *
 * The writer sleeps on a futex word (gmt_g.wake), not on a descriptor: a
 * wake-up is an atomic increment and a FUTEX_WAKE, async-signal-safe, and
 * there is nothing for the program to close under us.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>
#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_c_literalCompressionMode, ZSTD_ps_* (zstd 1.5.1 on) */
#include <zstd.h>

#include "gmt_evrec.h"
#include "gmt_internal.h"

#define FRAME_CAP     (1u << 20)   /* uncompressed bytes per frame (soft)  */
#define REC_EVENTS    4096u        /* events per EVENTS record: the two
					  records' columns are 2 x 9 x 40 KiB */
#define MARGIN_NS     1000000ull   /* store-visibility margin of W          */
/* Events a round takes at most: a producing thread's help (see "Help from
 * the producing threads"), the writer's own rounds (a few frames). */
#define ASSIST_BUDGET (8u * GMT_CHUNK_CAP(GMT_CHUNK_MAX_BYTES))
#define WRITER_BUDGET (256u * GMT_CHUNK_CAP(GMT_CHUNK_MAX_BYTES))
/* A producing thread that finds the buffer full waits for the round lock
 * while its holder makes progress (round_lock_take), in slices of
 * GMT_WAIT_SLICE_MS (gmt_internal.h), at most WAIT_MAX_MS a call. */
#define WAIT_MAX_MS   50
#define STUCK_NS      1000000000ull
#define PREAMBLE_LEN  20u
/* The level of frames compressed while the writer is behind (see
 * frame_level), when the configured one is higher: the fastest (about 6
 * to 9 instructions an event fewer than the default -3 on make bench's
 * streams, the same bytes within their run-to-run spread:
 * docs/performance.md, session 8). */
#define FAST_LEVEL    (-7)
/* Literals: zstd's Huffman coding of the bytes it finds no match for is
 * about two thirds of its instructions at level 1 and, on columns whose
 * values drop their common low zero bits (EVENTS3), saves little. The
 * first frame of at least PROBE_MIN bytes, and every PROBE_EVERY-th such
 * frame after it, is compressed both ways; the frames after it take
 * Huffman only if it saved at least HUF_GAIN_PCT percent over the probes
 * (the later weighing more; until the first probe, they take it:
 * docs/performance.md, session 5). */
#define PROBE_EVERY   32u
#define PROBE_MIN     (16u * 1024u)
#define HUF_GAIN_PCT  15u

extern char **environ;

typedef gmt_evrec2_t evrec_t;

/* Allocation ids (EVENTS2). The writer names the allocation a FREE frees
 * by a small number instead of repeating its address: each ALLOC of the
 * main stream takes the most recently freed id (or the next new one), in
 * the order the records are in the file, so that a reader that follows
 * the same rule knows every ALLOC's id without it being written, and ids
 * stay below the most allocations ever live at once. A map address -> id
 * holds the live ones, at most IDS_MAX (beyond it an ALLOC takes no id and
 * its FREE names the address). LATE events neither take nor free ids. An
 * ALLOC at an address already in the map (a free never recorded) takes no
 * id and the address leaves the map: the older id is never freed, by the
 * writer or by a reader, and a later FREE of the address names it. So no
 * two live ids ever share an address, and a reader can keep blocks by id
 * and look addresses up only for events without one. A lost frame (write
 * error) resets the ids; the next record says so (GMT_EVENTS_IDS_RESET). */
#define IDS_MAX (1u << 23)
typedef struct idmap {
	uint64_t *key;                 /* 0 = empty                              */
	uint32_t *val;
	uint32_t cap, n;               /* slots (a power of two), live entries   */
	unsigned shift;                /* 64 - log2(cap): a slot is the product's top bits */
	uint32_t *free_ids;            /* LIFO of freed ids                      */
	uint32_t n_free, next;         /* ids 1..next handed out so far          */
	int reset;                     /* the next main record carries IDS_RESET */
} idmap_t;

/* Shifts (EVENTS3). Each main record divides its ALLOCs' and FREEs' addr
 * deltas and sizes by 2^sa and 2^ss: the largest powers of two that every
 * such event of its first batch allows (shifts_for: the or-ed values'
 * trailing zeros). A later batch's event that they do not allow ends the
 * record, and the next one starts with shifts that allow it, so the
 * division is always exact, and a stream whose values lose their
 * alignment costs at most a shorter record. */

/* One round at a time, the writer's or a producing thread's: see "Help
 * from the producing threads". */
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;

/* Producing threads waiting for round_lock with the buffer full
 * (gmt_writer_assist): the writer's round ends at its next batch. */
static _Atomic int help_waiting;

/* A thread's publishable events in a round: a cursor over its chunks. */
typedef struct cursor {
	gmt_tstate_t *t;
	gmt_chunk_t *c;                 /* chunk of the next event             */
	uint32_t end;                   /* events of c known to be published   */
	int dead;                       /* the thread had exited when the round
					   began: all it will publish was there */
	uint64_t ts;                    /* ts of the next event                */
	gmt_chunk_t *lim_c;             /* the round takes nothing past event  */
	uint32_t lim_n;                 /* lim_n of chunk lim_c (NULL: nothing):
					   what was published before the round
					   took the metadata queue              */
} cursor_t;

/* What a frame carries besides its bytes, for its accounting once written
 * (frame_done): its metadata, the stacks it wrote first, its events and
 * their time range, the drops it reports. */
typedef struct fstate {
	gmt_mrec_t *inflight, **inflight_tail; /* metadata in this frame    */
	uint32_t *stacks;                      /* STACK records in it       */
	size_t n_stacks, cap_stacks;
	uint64_t events, late, first, last;
	uint64_t fr_bf, fr_we;                 /* drops its DROPS records count */
} fstate_t;

/* A frame handed to the compressor: its bytes, its accounting, and what
 * the compressor gives back. */
typedef struct zjob {
	msgpack_sbuffer sb;
	fstate_t f;
	int level, preamble;           /* zstd level; the preamble goes first */
	int lit;                       /* literals: LIT_* (frame_lit)          */
	uint8_t *zbuf;
	size_t zcap, zlen;             /* the compressed frame (preamble included) */
	int zerr;                      /* 0 or an errno: nothing to write      */
	ZSTD_CCtx *cctx;               /* the compressor's own                 */
	int cctx_level, cctx_lit;
	uint8_t *pbuf;                 /* a probe's second compression         */
	size_t pcap;
} zjob_t;

enum { LIT_RAW = 0, LIT_HUF = 1, LIT_PROBE = 2 };

enum { ZJ_IDLE = 0, ZJ_POSTED = 1, ZJ_DONE = 2, ZJ_QUIT = 3 };

static struct writer {
	ZSTD_CCtx *cctx;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint8_t *zbuf;
	size_t zcap;
	int preamble_done;

	gmt_mrec_t *pending, **pending_tail;   /* metadata not yet on disk  */
	fstate_t f;                            /* the frame being built     */

	gmt_tstate_t **snap;
	size_t n_snap, cap_snap;
	cursor_t *cur;                 /* n_snap of them                       */
	uint32_t *heap;                /* cursor indices, by (ts, index)        */
	unsigned char *gone;           /* thread exited and drained             */
	int left;                      /* the last round left events published
					  past its limits                       */
	size_t cap_cur;

	/* the buffer limit: the writer's throughput (events per second while
	 * it works), from the rounds with at least a chunk's worth of events */
	double rate;
	uint64_t rate_since;           /* start of the work the next sample
					  covers (in this round; work_ns: the
					  rounds' before it)                   */

	evrec_t rec, late;
	int level;                     /* the zstd level the context is set to */
	int lit;                       /* its literal mode (LIT_RAW, LIT_HUF)  */
	uint8_t *pbuf;                 /* a probe's second compression         */
	size_t pcap;
	unsigned probe_n;              /* frames since the last probe          */
	uint64_t probe_raw, probe_huf; /* the probes' sizes without and with it
					  (frame_compress: the compressor's or
					  the writer's, never both at once) */
	_Atomic int huf;               /* the last probe chose Huffman         */
	int frame_behind;              /* the buffer was over half its limit
					  when this frame began              */
	idmap_t ids;
	uint8_t *stack_bits;
	size_t stack_bits_len;
	uint64_t last_ts;                      /* newest ts written (LATE test) */

	/* drops not yet on disk, and what the current frame carries of them */
	uint64_t bf_count, bf_first, bf_last;
	uint64_t we_count, we_first, we_last;
	int we_errno;
	_Atomic int warned;

	/* the round's budget: it stops after this many events (the rest wait
	 * for the next round; see "Help from the producing threads") */
	uint64_t round_n, budget;
	int cut;                       /* the round stopped at its budget      */
	int open_round;                /* the round leaves its frame open      */
	int yields;                    /* the round ends early for a producing
					  thread that waits to help (the
					  writer's rounds but the final ones) */
	uint64_t round_done;           /* done_ts once its frame is written    */
	int frame_is_open;             /* a frame is begun and not ended (a
					  helper's rounds leave it so)         */
	uint64_t work_ns;              /* rounds' time since the last rate
					  sample (buffer_limit_update)         */
	/* a frame detached to be compressed and written by the writer's
	 * thread with round_lock released (frame_detach: it takes the
	 * compressor's slot, zj.sb and zj.f, which is idle then) */
	int out_busy, out_level, out_lit;
	uint64_t zj_done;              /* done_ts once the frame in the
					  compressor's slot (posted or detached)
					  is written (frame_post)              */

	/* the compressor (see "The compressor" below) */
	pthread_t zt;
	int zt_state;                  /* 0: not started, 1: running, -1: cannot */
	_Atomic uint32_t zj_state;     /* futex word: ZJ_IDLE, ZJ_POSTED, ZJ_DONE, ZJ_QUIT */
	zjob_t zj;
} w;

/* Tells gmt_writer_stop's wait that the writer is still moving. */
static inline void progress(void)
{
	atomic_fetch_add_explicit(&gmt_g.writer_progress, 1, memory_order_relaxed);
}

/* ---- file --------------------------------------------------------------- */

/* The job's rank for file names: RANK (torchrun, most launchers) when it
 * is a plain decimal number of at most 9 digits, else NULL. */
static const char *rank_for_name(void)
{
	const char *r = getenv("RANK");
	size_t n = r ? strspn(r, "0123456789") : 0;
	return n > 0 && n <= 9 && r[n] == 0 ? r : NULL;
}

/* Expands a GPUMEMTRACE_OUTPUT pattern: %p pid, %n program, %h host,
 * %r rank (empty without one), %%. */
static int expand_pattern(const char *pat, char *out, size_t cap)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	size_t n = 0;
	for (const char *p = pat; *p; p++) {
		char tmp[300];
		const char *add = tmp;
		if (*p == '%' && p[1]) {
			p++;
			switch (*p) {
			case 'p': snprintf(tmp, sizeof(tmp), "%d", (int)getpid()); break;
			case 'n': add = program_invocation_short_name; break;
			case 'h': add = host; break;
			case 'r': add = rank_for_name(); add = add ? add : ""; break;
			case '%': add = "%"; break;
			default: snprintf(tmp, sizeof(tmp), "%%%c", *p); break;
			}
		} else {
			tmp[0] = *p;
			tmp[1] = 0;
		}
		size_t l = strlen(add);
		if (n + l + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out + n, add, l);
		n += l;
	}
	out[n] = 0;
	return 0;
}

/* mkdir -p of the first len bytes of path (existing directories are fine). */
static void make_dirs(const char *path, size_t len)
{
	char d[PATH_MAX];
	if (len == 0 || len >= sizeof(d))
		return;
	memcpy(d, path, len);
	d[len] = 0;
	for (size_t i = 1; i <= len; i++) {
		if (d[i] != '/' && d[i] != 0)
			continue;
		char c = d[i];
		d[i] = 0;
		if (mkdir(d, 0777) < 0 && errno != EEXIST)
			return;
		d[i] = c;
	}
}

/* What GPUMEMTRACE_OUTPUT (and the launcher's -o, the same variable) names:
 * a file pattern when it contains '%' or ends in ".gmt", else a directory,
 * created if missing; a pattern's directory is created too. The launcher
 * relies on nothing of this (the traces announce themselves, gmt_fd.c). */
int gmt_file_create(const char *output, char **pathp)
{
	char base[PATH_MAX], path[PATH_MAX + 16];
	const char *out = output && *output ? output : ".";
	struct stat sb;
	size_t ol = strlen(out);
	int pattern = strchr(out, '%') || (ol >= 4 && !strcmp(out + ol - 4, ".gmt"));
	if (!(stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) && (!pattern || out[ol - 1] == '/'))
		make_dirs(out, ol);
	if ((stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) || out[ol - 1] == '/') {
		while (ol > 1 && out[ol - 1] == '/')
			ol--;
		/* gpumemtrace.<program>[.rank<R>].<pid>.gmt: a torchrun job's
		 * directory reads at a glance. */
		const char *rank = rank_for_name();
		if ((size_t)snprintf(base, sizeof(base), "%.*s/gpumemtrace.%s.%s%s%s%d.gmt", (int)ol, out,
				     program_invocation_short_name, rank ? "rank" : "", rank ? rank : "",
				     rank ? "." : "", (int)getpid()) >= sizeof(base))
			return -ENAMETOOLONG;
	} else if (expand_pattern(out, base, sizeof(base)) < 0) {
		return -ENAMETOOLONG;
	} else {
		const char *slash = strrchr(base, '/');
		if (slash)
			make_dirs(base, (size_t)(slash - base));
	}
	size_t bl = strlen(base);
	size_t stem = bl >= 4 && !strcmp(base + bl - 4, ".gmt") ? bl - 4 : bl;
	for (int i = 0; i < 100000; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s", base);
		else
			snprintf(path, sizeof(path), "%.*s.%d%s", (int)stem, base, i, base + stem);
		/* 0600: a trace holds the command line, paths and allow-listed
		 * variables of the environment (docs/trace-contents.md). */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*pathp = strdup(path);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* ---- record encoding ---------------------------------------------------- */

static void pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s ? s : "", n);
}

static int env_allowed(const char *kv)
{
	static const char *const prefixes[] = {
		"CUDA_", "NCCL_", "NVIDIA_", "GPUMEMTRACE_", "PYTORCH_", "TORCH_",
	};
	static const char *const names[] = {
		"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
		"MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES",
		"NVTX_INJECTION64_PATH", "LD_PRELOAD", "OMP_NUM_THREADS",
	};
	const char *eq = strchr(kv, '=');
	if (!eq)
		return 0;
	size_t kl = (size_t)(eq - kv);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(kv, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == kl && !strncmp(kv, names[i], kl))
			return 1;
	return 0;
}

static size_t read_small_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t n = 0;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return n;
}

static gmt_mrec_t *header_record(void)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);

	char host[256] = "", exe[PATH_MAX] = "";
	gethostname(host, sizeof(host) - 1);
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = 0;
	static char cmd[65536];
	size_t cl = read_small_file("/proc/self/cmdline", cmd, sizeof(cmd) - 1);
	cmd[cl] = 0;
	size_t nargs = 0;
	for (size_t i = 0; i < cl; i++)
		if (cmd[i] == 0)
			nargs++;
	if (cl && cmd[cl - 1] != 0)
		nargs++;
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);

	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint8(&pk, GMT_REC_HEADER);
	msgpack_pack_map(&pk, 13);
	pack_str(&pk, "format_major");
	msgpack_pack_uint32(&pk, GMT_FORMAT_MAJOR);
	pack_str(&pk, "format_minor");
	msgpack_pack_uint32(&pk, GMT_FORMAT_MINOR);
	pack_str(&pk, "tool_version");
	pack_str(&pk, GMT_VERSION);
	pack_str(&pk, "pid");
	msgpack_pack_uint64(&pk, (uint64_t)getpid());
	pack_str(&pk, "ppid");
	msgpack_pack_uint64(&pk, (uint64_t)getppid());
	pack_str(&pk, "host");
	pack_str(&pk, host);
	/* As GPUMEMTRACE_CMDLINE says: all, the program's name, or nothing. */
	int mode = gmt_g.cfg.cmdline;
	pack_str(&pk, "cmdline");
	msgpack_pack_array(&pk, mode == GMT_CMDLINE_NONE ? 0 : nargs);
	for (size_t i = 0, k = 0; k < nargs && mode != GMT_CMDLINE_NONE; k++) {
		pack_str(&pk, k > 0 && mode == GMT_CMDLINE_REDACT ? "<redacted>" : cmd + i);
		i += strlen(cmd + i) + 1;
	}
	pack_str(&pk, "exe");
	pack_str(&pk, exe);
	pack_str(&pk, "clock_monotonic_ns");
	msgpack_pack_uint64(&pk, (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
	pack_str(&pk, "clock_realtime_ns");
	msgpack_pack_uint64(&pk, (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec);
	size_t nenv = 0;
	for (char **e = environ; e && *e; e++)
		nenv += (size_t)env_allowed(*e);
	pack_str(&pk, "env");
	msgpack_pack_map(&pk, nenv);
	for (char **e = environ; e && *e; e++) {
		if (!env_allowed(*e))
			continue;
		const char *eq = strchr(*e, '=');
		msgpack_pack_str(&pk, (size_t)(eq - *e));
		msgpack_pack_str_body(&pk, *e, (size_t)(eq - *e));
		pack_str(&pk, eq + 1);
	}
	pack_str(&pk, "stack_depth");
	msgpack_pack_uint32(&pk, (uint32_t)gmt_g.cfg.stack_depth);
	pack_str(&pk, "free_stacks");
	if (gmt_g.cfg.free_stacks)
		msgpack_pack_true(&pk);
	else
		msgpack_pack_false(&pk);
	gmt_mrec_t *r = sb.data ? gmt_mrec_new(sb.data, sb.size) : NULL;
	msgpack_sbuffer_destroy(&sb);
	return r;
}

/* Columns are sized once for a full record, so appending an event checks
 * nothing. */
static int evrec_alloc(evrec_t *r)
{
	return gmt_evrec2_alloc(r, REC_EVENTS);
}

static inline uint32_t id_slot(const idmap_t *m, uint64_t addr)
{
	return (uint32_t)((addr * 0x9E3779B97F4A7C15ull) >> m->shift);
}

static int id_grow(idmap_t *m)
{
	uint32_t cap = m->cap ? 2 * m->cap : 1024;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = k ? malloc(cap * sizeof(*v)) : NULL;
	uint32_t *f = v ? realloc(m->free_ids, (cap / 2) * sizeof(*f)) : NULL;
	if (!f) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	m->free_ids = f;
	uint32_t oldcap = m->cap;
	uint64_t *ok = m->key;
	uint32_t *ov = m->val;
	m->key = k;
	m->val = v;
	m->cap = cap;
	m->shift = 64u - (unsigned)__builtin_ctz(cap);
	for (uint32_t i = 0; i < oldcap; i++) {
		if (!(i & 0xffff))
			progress();   /* millions of live blocks: a long move */
		if (!ok[i])
			continue;
		uint32_t j = id_slot(m, ok[i]);
		while (k[j])
			j = (j + 1) & (cap - 1);
		k[j] = ok[i];
		v[j] = ov[i];
	}
	free(ok);
	free(ov);
	return 0;
}

/* Removes the entry in slot i by backward shift (the probe sequences stay
 * unbroken). */
static void id_del_slot(idmap_t *m, uint32_t i)
{
	for (uint32_t j = i;;) {
		j = (j + 1) & (m->cap - 1);
		if (!m->key[j])
			break;
		uint32_t h = id_slot(m, m->key[j]);
		if (((j - h) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->key[i] = m->key[j];
			m->val[i] = m->val[j];
			i = j;
		}
	}
	m->key[i] = 0;
	m->n--;
}

/* The id an ALLOC of addr takes, 0 when none (the map is full, or addr is
 * already live: then it leaves the map). */
static uint32_t id_alloc(idmap_t *m, uint64_t addr)
{
	if (!addr)
		return 0;
	/* at most a quarter full: a free's backward shift then moves over about
	 * one slot (at a half, three: 60 instructions a free, 8% of the writer) */
	if ((m->n + 1) * 4 > m->cap && (m->cap >= 4 * IDS_MAX || id_grow(m) < 0))
		return 0;
	uint32_t j = id_slot(m, addr);
	while (m->key[j] && m->key[j] != addr)
		j = (j + 1) & (m->cap - 1);
	if (m->key[j]) {
		id_del_slot(m, j);   /* its id stays live for ever */
		return 0;
	}
	if (!m->n_free && m->next >= GMT_IDS_LIMIT)
		return 0;
	uint32_t id = m->n_free ? m->free_ids[--m->n_free] : ++m->next;
	m->n++;
	m->key[j] = addr;
	m->val[j] = id;
	return id;
}

/* The id of the live allocation at addr, freed (removed from the map and
 * next to be reused); 0 when addr has none. */
static uint32_t id_free(idmap_t *m, uint64_t addr)
{
	if (!m->n || !addr)
		return 0;
	uint32_t i = id_slot(m, addr);
	while (m->key[i] != addr) {
		if (!m->key[i])
			return 0;
		i = (i + 1) & (m->cap - 1);
	}
	uint32_t id = m->val[i];
	id_del_slot(m, i);
	m->free_ids[m->n_free++] = id;
	return id;
}

static void id_reset(idmap_t *m)
{
	if (m->key)
		memset(m->key, 0, m->cap * sizeof(*m->key));
	m->n = m->n_free = m->next = 0;
	m->reset = 1;
}

/* Packs the record under construction into the frame and resets it. */
static void evrec_finish(evrec_t *r)
{
	if (!r->n)
		return;
	gmt_evrec2_pack(r, &w.pk);
	w.f.events += r->n;
	if (r->flags & GMT_EVENTS_LATE)
		w.f.late += r->n;
	if (!w.f.first || r->first_ts < w.f.first)
		w.f.first = r->first_ts;
	if (r->last_ts > w.f.last)
		w.f.last = r->last_ts;
	gmt_evrec2_reset(r);
}

static void pack_drops(uint64_t count, uint64_t first, uint64_t last, const char *reason, int err)
{
	msgpack_pack_array(&w.pk, 6);
	msgpack_pack_uint8(&w.pk, GMT_REC_DROPS);
	msgpack_pack_uint64(&w.pk, count);
	msgpack_pack_uint64(&w.pk, first);
	msgpack_pack_uint64(&w.pk, last);
	pack_str(&w.pk, reason);
	msgpack_pack_int(&w.pk, err);
}

static void stack_mark(uint32_t id, int on)
{
	size_t byte = id / 8;
	if (byte >= w.stack_bits_len) {
		if (!on)
			return;
		size_t len = w.stack_bits_len ? w.stack_bits_len : 4096;
		while (len <= byte)
			len *= 2;
		uint8_t *b = realloc(w.stack_bits, len);
		if (!b)
			return;
		memset(b + w.stack_bits_len, 0, len - w.stack_bits_len);
		w.stack_bits = b;
		w.stack_bits_len = len;
	}
	if (on)
		w.stack_bits[byte] |= (uint8_t)(1u << (id & 7));
	else
		w.stack_bits[byte] &= (uint8_t)~(1u << (id & 7));
}

static inline int stack_written(uint32_t id)
{
	size_t byte = id / 8;
	return byte < w.stack_bits_len && (w.stack_bits[byte] >> (id & 7) & 1);
}

/* Writes a STACK record into the frame the first time id is referred to. */
static void need_stack(uint32_t id)
{
	/* A text stack's record went out with the metadata, when it was
	 * interned (gmt_tracer_text_stack). */
	if (!id || GMT_STACK_IS_TEXT(id) || stack_written(id))
		return;
	uint32_t n = 0;
	const uint64_t *f = gmt_stack_frames(id, &n);
	if (!f)
		n = 0;
	msgpack_pack_array(&w.pk, 3);
	msgpack_pack_uint8(&w.pk, GMT_REC_STACK);
	msgpack_pack_uint32(&w.pk, id);
	msgpack_pack_array(&w.pk, n);
	for (uint32_t i = 0; i < n; i++)
		msgpack_pack_uint64(&w.pk, f[i]);
	stack_mark(id, 1);
	if (w.f.n_stacks == w.f.cap_stacks) {
		size_t cap = w.f.cap_stacks ? 2 * w.f.cap_stacks : 256;
		uint32_t *a = realloc(w.f.stacks, cap * sizeof(*a));
		if (!a)
			return;   /* worst case a lost frame's stack is not rewritten */
		w.f.stacks = a;
		w.f.cap_stacks = cap;
	}
	w.f.stacks[w.f.n_stacks++] = id;
}

/* ---- frames ------------------------------------------------------------- */

/* Starts a frame: metadata not yet on disk, then drops not yet on disk. */
static void frame_begin(void)
{
	w.frame_is_open = 1;
	w.sb.size = 0;
	w.frame_behind = atomic_load_explicit(&gmt_g.buf_used, memory_order_relaxed) * 2 >
			 atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed);
	w.f.events = w.f.late = w.f.first = w.f.last = 0;
	w.f.n_stacks = 0;
	if (w.pending) {
		w.f.inflight = w.pending;
		w.f.inflight_tail = w.pending_tail;
		w.pending = NULL;
		w.pending_tail = &w.pending;
		for (gmt_mrec_t *r = w.f.inflight; r; r = r->next)
			msgpack_sbuffer_write(&w.sb, (const char *)r->data, r->len);
	}
	/* A frame begun while the one before is with the compressor (the
	 * middle of a round: no drops were taken since that one began) or
	 * detached (frame_detach) leaves the drops to it: they would be
	 * counted twice. */
	w.f.fr_bf = w.f.fr_we = 0;
	if (atomic_load_explicit(&w.zj_state, memory_order_relaxed) != ZJ_IDLE || w.out_busy)
		return;
	w.f.fr_bf = w.bf_count;
	w.f.fr_we = w.we_count;
	if (w.bf_count)
		pack_drops(w.bf_count, w.bf_first, w.bf_last, "buffer_full", 0);
	if (w.we_count)
		pack_drops(w.we_count, w.we_first, w.we_last, "write_error", w.we_errno);
}

/* The frame for a round's events: the one a helper left open (the
 * records it holds finished first, then the metadata taken since, so the
 * file holds the same records in the same order as if each round had
 * its own frame), or a new one. */
static void frame_open(void)
{
	if (!w.frame_is_open) {
		frame_begin();
		return;
	}
	evrec_finish(&w.rec);
	evrec_finish(&w.late);
	if (!w.pending)
		return;
	for (gmt_mrec_t *r = w.pending; r; r = r->next)
		msgpack_sbuffer_write(&w.sb, (const char *)r->data, r->len);
	if (w.f.inflight) {
		*w.f.inflight_tail = w.pending;
	} else {
		w.f.inflight = w.pending;
	}
	w.f.inflight_tail = w.pending_tail;
	w.pending = NULL;
	w.pending_tail = &w.pending;
}

static _Atomic int test_fail_err, test_fail_n;

void gmt_tracer_test_fail_writes(int err, int count)
{
	atomic_store(&test_fail_err, err);
	atomic_store(&test_fail_n, count);
}

static int write_injected(uint64_t events)
{
	const gmt_config_t *c = &gmt_g.cfg;
	if (atomic_load(&test_fail_n) > 0) {
		atomic_fetch_sub(&test_fail_n, 1);
		return atomic_load(&test_fail_err);
	}
	long calls = gmt_g.write_calls;
	if (c->test_fail_events_only) {
		if (!events)
			return 0;
		calls = gmt_g.event_write_calls;
	}
	if (c->test_fail_write_after <= 0 || calls < c->test_fail_write_after)
		return 0;
	if (c->test_fail_count > 0 && calls >= c->test_fail_write_after + c->test_fail_count)
		return 0;
	return c->test_fail_errno;
}

/* One write() of len bytes at the end of the last good frame. On failure the
 * file is cut back to that boundary. Returns 0 or a negative errno. */
static _Atomic int test_hold;

void gmt_tracer_test_hold_writes(int on)
{
	atomic_store(&test_hold, on);
}

static void (*_Atomic test_round_hook)(void);

void gmt_tracer_test_round_hook(void (*fn)(void))
{
	atomic_store(&test_round_hook, fn);
}

/* One write() of len bytes holding events events (for the test hook). */
static int file_write(const void *buf, size_t len, uint64_t events)
{
	gmt_g.write_calls++;
	if (events)
		gmt_g.event_write_calls++;
	while (atomic_load_explicit(&test_hold, memory_order_relaxed)) {
		struct timespec d = { 0, 1000000 };
		nanosleep(&d, NULL);
	}
	if (gmt_g.cfg.test_write_delay_ms > 0) {
		struct timespec d = { gmt_g.cfg.test_write_delay_ms / 1000,
				      (long)(gmt_g.cfg.test_write_delay_ms % 1000) * 1000000L };
		nanosleep(&d, NULL);
	}
	int err = write_injected(events);
	gmt_log(3, "write %ld: %zu bytes%s", gmt_g.write_calls, len, err ? " (injected failure)" : "");
	int fd = err ? gmt_g.fd : gmt_fd_trace_file();
	if (!err && fd < 0)
		return -EBADF;   /* the file is gone (said once): every frame is lost */
	if (!err) {
		ssize_t r;
		do
			r = pwrite(fd, buf, len, (off_t)gmt_g.file_off);
		while (r < 0 && errno == EINTR);
		if (r == (ssize_t)len) {
			gmt_g.file_off += len;
			return 0;
		}
		err = r < 0 ? errno : ENOSPC;
	}
	if (fd >= 0 && ftruncate(fd, (off_t)gmt_g.file_off) < 0) {
		/* nothing more to do: the reader stops at the cut frame */
	}
	gmt_warn_once(&w.warned, "writing %s failed (%s): events are dropped and counted "
		      "in the trace until writing works again", gmt_g.path, strerror(err));
	return -err;
}

static void preamble(uint8_t *p)
{
	static const uint8_t magic[8] = GMT_FILE_MAGIC;
	uint32_t m = GMT_SKIPPABLE_MAGIC, l = 12;
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(m >> (8 * i));
		p[4 + i] = (uint8_t)(l >> (8 * i));
	}
	memcpy(p + 8, magic, 8);
	p[16] = GMT_FORMAT_MAJOR & 0xff;
	p[17] = GMT_FORMAT_MAJOR >> 8;
	p[18] = GMT_FORMAT_MINOR & 0xff;
	p[19] = GMT_FORMAT_MINOR >> 8;
}

/* Keeps the buffered events within buf_ms (100) ms of the writer's own
 * throughput (what a SIGKILL can lose), between buf_floor and buf_cap less
 * the names' memory. The throughput is events per second of the writer's
 * wall time while it works (encoding, compressing and writing; sleeping
 * between rounds not), sampled at every frame: a writer starved of CPU by a
 * busy program, or held up by a slow disk, drains slowly, and the limit
 * follows within a few frames. */
static void buffer_limit_update(uint64_t events)
{
	uint64_t now = gmt_now_ns(), ns = w.work_ns + (now - w.rate_since);
	w.rate_since = now;
	w.work_ns = 0;
	if (events >= GMT_CHUNK_CAP(GMT_CHUNK_MAX_BYTES) && ns) {
		/* a decaying maximum: one frame held up (the writer preempted
		 * once) does not shrink the limit, a writer that stays slow
		 * brings it down by a tenth a frame */
		double r = (double)events * 1e9 / (double)ns;
		w.rate = r > 0.9 * w.rate ? r : 0.9 * w.rate;
	}
	size_t top = gmt_g.buf_cap - atomic_load(&gmt_g.names_used);
	size_t lim = top;
	if (w.rate > 0 && gmt_g.buf_ms > 0) {
		double b = w.rate * 1e-3 * gmt_g.buf_ms * (double)GMT_CHUNK_MAX_BYTES /
			   (double)GMT_CHUNK_CAP(GMT_CHUNK_MAX_BYTES);
		lim = b < (double)top ? (size_t)b : top;
	}
	if (lim < gmt_g.buf_floor)
		lim = gmt_g.buf_floor;
	atomic_store_explicit(&gmt_g.buf_limit, lim, memory_order_relaxed);
	if (w.rate > 0 && gmt_g.buf_ms > 0) {
		if ((uint64_t)w.rate > atomic_load_explicit(&gmt_g.rate_max, memory_order_relaxed))
			atomic_store_explicit(&gmt_g.rate_max, (uint64_t)w.rate, memory_order_relaxed);
		if (lim > atomic_load_explicit(&gmt_g.buf_limit_max, memory_order_relaxed))
			atomic_store_explicit(&gmt_g.buf_limit_max, lim, memory_order_relaxed);
	}
}

void gmt_buffer_setup(size_t bytes, int ms)
{
	gmt_g.buf_ms = ms;
	size_t min = 2 * (size_t)GMT_CHUNK_MAX_BYTES;
	gmt_g.buf_cap = bytes > min ? bytes : min;
	gmt_g.buf_floor = gmt_g.buf_cap < (4u << 20) ? gmt_g.buf_cap : (4u << 20);
	gmt_g.names_cap = gmt_g.buf_cap / 8;
	int rc = gmt_slab_setup(gmt_g.buf_cap);
	if (rc)
		gmt_log(2, "no mapping for the buffer's chunks (%s): they come from malloc", strerror(-rc));
	atomic_store(&gmt_g.buf_limit, gmt_g.buf_cap);
	atomic_store(&gmt_g.buf_limit_max, 0);
	atomic_store(&gmt_g.rate_max, 0);
	atomic_store(&gmt_g.held_max, 0);
	atomic_store(&gmt_g.frames_fast, 0);
	atomic_store(&gmt_g.frames_async, 0);
	atomic_store(&gmt_g.assists, 0);
	atomic_store(&gmt_g.assist_events, 0);
	w.rate = 0;
}

/* The writer behind (the buffer more than half its limit when the frame
 * began: what is left to write would take over half the backlog window at
 * the rate measured): frames go out at FAST_LEVEL until it has caught up,
 * a larger trace rather than drops. Otherwise the configured level. */
static int frame_level(void)
{
	int level = w.frame_behind ? FAST_LEVEL : gmt_g.cfg.zstd_level;
	if (level > gmt_g.cfg.zstd_level)
		level = gmt_g.cfg.zstd_level;   /* configured faster still */
	if (level != gmt_g.cfg.zstd_level)
		atomic_fetch_add_explicit(&gmt_g.frames_fast, 1, memory_order_relaxed);
	return level;
}

/* The literal mode of a frame of size bytes (the writer's thread): a
 * probe every PROBE_EVERY frames of PROBE_MIN bytes or more, else what the
 * last probe chose. */
static int frame_lit(size_t size)
{
	if (size >= PROBE_MIN && w.probe_n++ % PROBE_EVERY == 0)
		return LIT_PROBE;
	return atomic_load_explicit(&w.huf, memory_order_relaxed) ? LIT_HUF : LIT_RAW;
}

static int grow_buf(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	uint8_t *z = realloc(*buf, need);
	if (!z)
		return -1;
	*buf = z;
	*cap = need;
	return 0;
}

static size_t compress_lit(ZSTD_CCtx *cctx, int *cur_lit, int lit, uint8_t *dst, size_t cap,
			   const msgpack_sbuffer *src)
{
	if (lit != *cur_lit) {
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode,
				       lit == LIT_HUF ? ZSTD_ps_auto : ZSTD_ps_disable);
		*cur_lit = lit;
	}
	return ZSTD_compress2(cctx, dst, cap, src->data, src->size);
}

/* Compresses src (a frame's bytes) into *zbuf at level with literals lit
 * (a probe: both ways into *zbuf and *pbuf, the smaller kept, w.huf set),
 * behind the preamble when asked. Returns the length, or 0 with *err set. */
static size_t frame_compress(ZSTD_CCtx *cctx, int *cur_level, int *cur_lit, int level, int lit,
			     int with_preamble, const msgpack_sbuffer *src, uint8_t **zbuf, size_t *zcap,
			     uint8_t **pbuf, size_t *pcap, int *err)
{
	if (lit == LIT_PROBE && level <= 0)
		lit = LIT_HUF;   /* the level's own choice: no entropy coding */
	size_t bound = ZSTD_compressBound(src->size) + PREAMBLE_LEN;
	if (grow_buf(zbuf, zcap, bound) < 0 || (lit == LIT_PROBE && grow_buf(pbuf, pcap, bound) < 0)) {
		*err = ENOMEM;
		return 0;
	}
	size_t off = 0;
	if (with_preamble) {
		preamble(*zbuf);
		off = PREAMBLE_LEN;
	}
	if (level != *cur_level) {
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
		*cur_level = level;
	}
	size_t z = compress_lit(cctx, cur_lit, lit == LIT_HUF, *zbuf + off, *zcap - off, src);
	if (lit == LIT_PROBE && !ZSTD_isError(z)) {
		size_t h = compress_lit(cctx, cur_lit, LIT_HUF, *pbuf, *pcap, src);
		/* the probes so far, each weighing half the one after it */
		w.probe_raw = w.probe_raw / 2 + z;
		w.probe_huf = w.probe_huf / 2 + (ZSTD_isError(h) ? z : h);
		int huf = w.probe_huf * 100 <= w.probe_raw * (100 - HUF_GAIN_PCT);
		atomic_store_explicit(&w.huf, huf, memory_order_relaxed);
		if (huf) {
			memcpy(*zbuf + off, *pbuf, h);
			z = h;
		}
	}
	if (ZSTD_isError(z)) {
		*err = EIO;
		return 0;
	}
	*err = 0;
	return off + z;
}

/* A frame's accounting once its write succeeded (err 0) or failed: its
 * metadata freed or put back at the front of the queue, its stacks
 * unmarked, its events written or dropped (write_error), its drops on disk
 * or not. */
static void frame_done(fstate_t *f, int err)
{
	buffer_limit_update(f->events);
	if (!err) {
		for (gmt_mrec_t *r = f->inflight, *n; r; r = n) {
			n = r->next;
			gmt_mrec_free(r);
		}
		f->inflight = NULL;
		atomic_fetch_add(&gmt_g.written, f->events);
		atomic_fetch_add(&gmt_g.late, f->late);
		w.bf_count -= f->fr_bf;
		w.we_count -= f->fr_we;
		if (!w.bf_count)
			w.bf_first = w.bf_last = 0;
		if (!w.we_count)
			w.we_first = w.we_last = 0;
	} else {
		/* Metadata back to the front of the queue; stacks unmarked. */
		if (f->inflight) {
			*f->inflight_tail = w.pending;
			if (!w.pending)
				w.pending_tail = f->inflight_tail;
			w.pending = f->inflight;
			f->inflight = NULL;
		}
		for (size_t i = 0; i < f->n_stacks; i++)
			stack_mark(f->stacks[i], 0);
		if (f->events) {
			if (!w.we_count || f->first < w.we_first)
				w.we_first = f->first;
			if (f->last > w.we_last)
				w.we_last = f->last;
			w.we_count += f->events;
			atomic_fetch_add(&gmt_g.dropped, f->events);
		}
		w.we_errno = err;
		/* the frame's ids are lost with it */
		if (f->events - f->late)
			id_reset(&w.ids);
	}
	f->n_stacks = 0;
}

/* ---- the compressor ------------------------------------------------------
 * The writer's rounds that stop with more to do (a backlog) hand their
 * frame to the compressor thread and write it with the round lock
 * released once they encoded the next (frame_post, collect_job: "Help
 * from the producing threads"). A final
 * round (shutdown, exec), under the lock from start to end, hands each
 * full frame but its last to the compressor thread and goes on encoding
 * the next; before it hands over the next one, and at the end of
 * the round, it waits for the frame in flight and writes it: frames stay in
 * order, one write() each, and a round ends with nothing in flight (what
 * done_ts and the end of the trace promise is unchanged). The point: with
 * the program's threads busy on every core, the scheduler gives each thread
 * its share, and the writer's work (encoding about half, compressing the
 * other half, docs/performance.md) now gets two shares. A frame begun while
 * another is in flight was encoded assuming that one is written (its
 * stacks, its allocation ids, its metadata before this one's events): if
 * the write fails, the next frame is dropped with it (counted as
 * write_error like the first). The thread starts at the first frame handed
 * over (a process whose writer keeps up never has it); if it cannot be
 * started, the writer compresses every frame itself, as before. */

static void *zworker_main(void *arg)
{
	(void)arg;
	gmt_tls_in_writer = 1;
	zjob_t *j = &w.zj;
	for (;;) {
		uint32_t s = atomic_load_explicit(&w.zj_state, memory_order_acquire);
		if (s == ZJ_QUIT)
			return NULL;
		if (s == ZJ_POSTED) {
			j->zlen = frame_compress(j->cctx, &j->cctx_level, &j->cctx_lit, j->level, j->lit,
						 j->preamble, &j->sb, &j->zbuf, &j->zcap, &j->pbuf, &j->pcap,
						 &j->zerr);
			progress();
			atomic_store_explicit(&w.zj_state, ZJ_DONE, memory_order_release);
			syscall(SYS_futex, &w.zj_state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			continue;
		}
		syscall(SYS_futex, &w.zj_state, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
	}
}

static int zworker_start(void)
{
	zjob_t *j = &w.zj;
	w.zt_state = -1;
	if (!j->cctx) {
		j->cctx = ZSTD_createCCtx();
		if (!j->cctx)
			return -ENOMEM;
	}
	ZSTD_CCtx_reset(j->cctx, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_compressionLevel, gmt_g.cfg.zstd_level);
	ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_checksumFlag, 1);
	j->cctx_level = gmt_g.cfg.zstd_level;
	j->cctx_lit = -1;
	atomic_store(&w.zj_state, ZJ_IDLE);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w.zt, NULL, zworker_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	w.zt_state = 1;
	return 0;
}

/* Stops the compressor (nothing is in flight: every round ends so). */
static void zworker_stop(void)
{
	if (w.zt_state != 1)
		return;
	atomic_store_explicit(&w.zj_state, ZJ_QUIT, memory_order_release);
	syscall(SYS_futex, &w.zj_state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(w.zt, NULL);
	w.zt_state = 0;
	atomic_store(&w.zj_state, ZJ_IDLE);
}

/* Hands the frame built so far to the compressor; 0 when there is none. */
static int zjob_post(void)
{
	if (w.zt_state == 0)
		zworker_start();
	if (w.zt_state != 1)
		return 0;
	zjob_t *j = &w.zj;
	msgpack_sbuffer sb = j->sb;    /* the job's old buffer becomes the writer's */
	j->sb = w.sb;
	w.sb = sb;
	w.sb.size = 0;
	uint32_t *stacks = j->f.stacks;
	size_t cap = j->f.cap_stacks;
	j->f = w.f;
	w.f.inflight = NULL;
	w.f.stacks = stacks;
	w.f.cap_stacks = cap;
	w.f.n_stacks = 0;
	j->preamble = !w.preamble_done;
	j->level = frame_level();
	j->lit = frame_lit(j->sb.size);
	atomic_fetch_add_explicit(&gmt_g.frames_async, 1, memory_order_relaxed);
	atomic_store_explicit(&w.zj_state, ZJ_POSTED, memory_order_release);
	syscall(SYS_futex, &w.zj_state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return 1;
}

/* Waits for the frame in flight and writes it (the writer's thread; no
 * lock needed: only it writes); returns 0 or its errno. The job stays in
 * flight (its drops are still its own: frame_begin) until zjob_release. */
static int zjob_wait_write(void)
{
	zjob_t *j = &w.zj;
	uint32_t s;
	while ((s = atomic_load_explicit(&w.zj_state, memory_order_acquire)) != ZJ_DONE) {
		struct timespec d = { 0, 10000000 };
		syscall(SYS_futex, &w.zj_state, FUTEX_WAIT_PRIVATE, s, &d, NULL, 0);
	}
	int err = j->zerr ? j->zerr : -file_write(j->zbuf, j->zlen, j->f.events);
	progress();
	if (!err) {
		if (j->preamble)
			w.preamble_done = 1;
	}
	return err;
}

static void zjob_release(void)
{
	w.zj.sb.size = 0;
	atomic_store_explicit(&w.zj_state, ZJ_IDLE, memory_order_relaxed);
}

/* Waits for the frame in flight and writes it; returns 0 or its errno
 * (its accounting is the caller's: frame_done). */
static int zjob_write(void)
{
	int err = zjob_wait_write();
	zjob_release();
	return err;
}

/* Ends the frame being built: written now, or (async, the middle of a
 * round) handed to the compressor. The frame in flight, if any, is written
 * first; if that write failed, this frame is dropped with it. */
static void frame_end(int async)
{
	w.frame_is_open = 0;
	evrec_finish(&w.rec);
	evrec_finish(&w.late);
	if (atomic_load_explicit(&w.zj_state, memory_order_relaxed) != ZJ_IDLE) {
		int err = zjob_write();
		if (err) {
			/* this frame's metadata first to the queue's front, then the
			 * lost one's before it: the queue keeps their order */
			frame_done(&w.f, err);
			frame_done(&w.zj.f, err);
			w.sb.size = 0;
			return;
		}
		frame_done(&w.zj.f, 0);
	}
	if (!w.sb.size)
		return;
	if (async && zjob_post())
		return;
	int err;
	size_t len = frame_compress(w.cctx, &w.level, &w.lit, frame_level(), frame_lit(w.sb.size), !w.preamble_done,
				    &w.sb, &w.zbuf, &w.zcap, &w.pbuf, &w.pcap, &err);
	if (!err)
		err = -file_write(w.zbuf, len, w.f.events);
	progress();
	if (!err)
		w.preamble_done = 1;
	frame_done(&w.f, err);
	w.sb.size = 0;
}

/* What the writer's rounds have written up to (done_ts: every event
 * published with ts <= done is in the file; it only grows), and the
 * flush waiters told. */
static void round_done(uint64_t done)
{
	uint64_t cur = atomic_load(&gmt_g.done_ts);
	while (cur < done && !atomic_compare_exchange_weak(&gmt_g.done_ts, &cur, done))
		;
	if (atomic_load(&gmt_g.waiters)) {
		pthread_mutex_lock(&gmt_g.wait_lock);
		pthread_cond_broadcast(&gmt_g.wait_cond);
		pthread_mutex_unlock(&gmt_g.wait_lock);
	}
}

/* A frame written with round_lock released, so that a slow disk or a
 * starved compression never holds up the producing threads' help: under
 * the lock, frame_detach takes the open frame (its bytes and accounting;
 * the producers then build the next); without it, frame_write_out
 * compresses and writes it (the writer's thread only: it alone writes);
 * under the lock again, frame_settle does its accounting. If the write
 * failed, the frame built meanwhile is dropped with it (its events were
 * encoded assuming the lost frame's stacks, ids and metadata written), as
 * for the compressor's frames. frame_detach returns 1 when it took a
 * frame. */
static size_t frame_bytes(void)
{
	return w.sb.size + gmt_evrec2_bytes(&w.rec) + gmt_evrec2_bytes(&w.late);
}

static int frame_detach(void)
{
	if (!w.frame_is_open)
		return 0;
	evrec_finish(&w.rec);
	evrec_finish(&w.late);
	w.frame_is_open = 0;
	if (!w.sb.size)
		return 0;
	msgpack_sbuffer sb = w.zj.sb;   /* the old buffer becomes the frame's */
	w.zj.sb = w.sb;
	w.sb = sb;
	w.sb.size = 0;
	uint32_t *stacks = w.zj.f.stacks;
	size_t cap = w.zj.f.cap_stacks;
	w.zj.f = w.f;
	w.f.inflight = NULL;
	w.f.stacks = stacks;
	w.f.cap_stacks = cap;
	w.f.n_stacks = 0;
	w.out_level = frame_level();
	w.out_lit = frame_lit(w.zj.sb.size);
	w.out_busy = 1;
	return 1;
}

static int frame_write_out(void)
{
	int err;
	size_t len = frame_compress(w.cctx, &w.level, &w.lit, w.out_level, w.out_lit, !w.preamble_done,
				    &w.zj.sb, &w.zbuf, &w.zcap, &w.pbuf, &w.pcap, &err);
	progress();
	if (!err)
		err = -file_write(w.zbuf, len, w.zj.f.events);
	progress();
	return err;
}

/* A frame written with the lock released failed (err): the open frame was
 * encoded assuming it on disk and goes with it (its metadata first to the
 * queue's front, the lost frame's then before it: frame_done). */
static void open_frame_lost(int err)
{
	if (!err || !w.frame_is_open)
		return;
	evrec_finish(&w.rec);
	evrec_finish(&w.late);
	frame_done(&w.f, err);
	w.sb.size = 0;
	w.frame_is_open = 0;
}

static void frame_settle(int err)
{
	if (!err)
		w.preamble_done = 1;
	open_frame_lost(err);
	frame_done(&w.zj.f, err);
	w.zj.sb.size = 0;
	w.out_busy = 0;
	if (!err)
		round_done(w.zj_done);
}

/* The open frame, to be written with the lock released (frame_post: under
 * the lock, nothing in flight). more (a backlog: the round stopped at its
 * budget or at a full frame): to the compressor, written by the writer's
 * thread once it encoded the next (collect_job); else, or without a
 * compressor, frame_detach's way (a process whose writer keeps up never
 * starts the compressor). done: what done_ts may become once it is
 * written. Returns 1 (posted), 2 (detached: frame_write_out, frame_settle)
 * or 0 (nothing to write). */
static int frame_post(uint64_t done, int more)
{
	if (!w.frame_is_open)
		return 0;
	evrec_finish(&w.rec);
	evrec_finish(&w.late);
	if (!w.sb.size) {
		w.frame_is_open = 0;
		return 0;
	}
	w.zj_done = done;
	if (more && zjob_post()) {
		w.frame_is_open = 0;
		return 1;
	}
	return frame_detach() ? 2 : 0;
}

/* The compressor's frame written (no lock), then its accounting under the
 * lock: as frame_settle's. */
static void collect_job(void)
{
	int err = zjob_wait_write();
	pthread_mutex_lock(&round_lock);
	open_frame_lost(err);
	frame_done(&w.zj.f, err);
	zjob_release();
	if (!err)
		round_done(w.zj_done);
	pthread_mutex_unlock(&round_lock);
}

/* ---- a round ------------------------------------------------------------ */

/* The metadata queue (THREAD, DEVICE, STRING, META records) goes into the
 * frame ahead of its events. */
static void take_meta(void)
{
	pthread_mutex_lock(&gmt_g.lock);
	if (gmt_g.meta_head) {
		*w.pending_tail = gmt_g.meta_head;
		w.pending_tail = gmt_g.meta_tail;
		gmt_g.meta_head = NULL;
		gmt_g.meta_tail = &gmt_g.meta_head;
	}
	pthread_mutex_unlock(&gmt_g.lock);
}

/* Each snapped thread's published position now (acquire): the round takes
 * no event past it. A thread queues a record (a STRING it interns, under
 * gmt_g.lock) before it publishes the event that names it, so every event
 * up to these positions has its records in the queue that take_meta then
 * takes: the frame holds them ahead of it. An event published later waits
 * for the next round, whatever its time (a caller's explicit past time: a
 * LATE record then, as before). Only the writer frees chunks, and only
 * drained ones, so the walk is safe. */
static void fix_limits(void)
{
	for (size_t i = 0; i < w.n_snap; i++) {
		cursor_t *k = &w.cur[i];
		gmt_chunk_t *c = atomic_load_explicit(&w.snap[i]->head, memory_order_acquire), *n;
		while (c && (n = atomic_load_explicit(&c->next, memory_order_acquire)))
			c = n;
		k->lim_c = c;
		k->lim_n = c ? atomic_load_explicit(&c->count, memory_order_acquire) : 0;
	}
}

/* Whether a thread published past its limit this round (read after the
 * round: a thread may have gone since, so only the cursors that it kept). */
static int past_limits(void)
{
	for (size_t i = 0; i < w.n_snap; i++) {
		const cursor_t *k = &w.cur[i];
		if (w.gone[i])
			continue;
		if (!k->lim_c) {
			if (atomic_load_explicit(&w.snap[i]->head, memory_order_acquire))
				return 1;
		} else if (atomic_load_explicit(&k->lim_c->count, memory_order_acquire) > k->lim_n ||
			   atomic_load_explicit(&k->lim_c->next, memory_order_acquire)) {
			return 1;
		}
	}
	return 0;
}

/* The thread list (its records are taken after the limits: fix_limits). */
static int snap_threads(void)
{
	pthread_mutex_lock(&gmt_g.lock);
	if (gmt_g.n_threads > w.cap_snap) {
		size_t cap = gmt_g.n_threads * 2;
		gmt_tstate_t **a = realloc(w.snap, cap * sizeof(*a));
		if (a)
			w.snap = a;
		cursor_t *c = a ? realloc(w.cur, cap * sizeof(*c)) : NULL;
		if (c)
			w.cur = c;
		uint32_t *h = c ? realloc(w.heap, cap * sizeof(*h)) : NULL;
		if (h)
			w.heap = h;
		unsigned char *g = h ? realloc(w.gone, cap) : NULL;
		if (g)
			w.gone = g;
		if (!g) {
			pthread_mutex_unlock(&gmt_g.lock);
			return -ENOMEM;
		}
		w.cap_snap = cap;
	}
	if (gmt_g.n_threads)
		memcpy(w.snap, gmt_g.threads, gmt_g.n_threads * sizeof(*w.snap));
	w.n_snap = gmt_g.n_threads;
	pthread_mutex_unlock(&gmt_g.lock);
	return 0;
}

/* Counts the thread's buffer-full drops since the last look (they go out as
 * one DROPS record with the time range they cover). */
static void take_drops(gmt_tstate_t *t)
{
	uint64_t n = atomic_load_explicit(&t->drop_n, memory_order_acquire);
	uint64_t seen = atomic_load_explicit(&t->w_drop_seen, memory_order_relaxed);
	if (n == seen)
		return;
	uint64_t first = atomic_load_explicit(&t->drop_first, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&t->drop_last, memory_order_relaxed);
	/* A run of drops that began before the last look: what is new began
	 * after the last drop counted then. */
	if (first < t->w_drop_last)
		first = t->w_drop_last;
	t->w_drop_last = last;
	atomic_store_explicit(&t->w_drop_seen, n, memory_order_relaxed);
	atomic_fetch_add(&gmt_g.dropped, n - seen);
	if (!w.bf_count || first < w.bf_first)
		w.bf_first = first;
	if (last > w.bf_last)
		w.bf_last = last;
	w.bf_count += n - seen;
}

static void free_thread(gmt_tstate_t *t)
{
	pthread_mutex_lock(&gmt_g.lock);
	for (size_t i = 0; i < gmt_g.n_threads; i++) {
		if (gmt_g.threads[i] == t) {
			gmt_g.threads[i] = gmt_g.threads[--gmt_g.n_threads];
			break;
		}
	}
	gmt_g.emitted_dead += atomic_load(&t->emitted);
	pthread_mutex_unlock(&gmt_g.lock);
	take_drops(t);
	for (gmt_chunk_t *c = atomic_load(&t->head), *n; c; c = n) {
		n = atomic_load(&c->next);
		gmt_chunk_free(c);
	}
	free(t);
}

/* Positions k's cursor on the thread's next published event; 0 when there
 * is none (yet). Chunks it leaves behind are drained: freed. */
static int cursor_seek(cursor_t *k)
{
	gmt_chunk_t *c = k->c;
	for (;;) {
		if (c->rd < k->end) {
			k->ts = c->ev[c->rd].ts;
			return 1;
		}
		uint32_t cnt = atomic_load_explicit(&c->count, memory_order_acquire);
		if (c == k->lim_c && cnt > k->lim_n)
			cnt = k->lim_n;   /* published after the round's limits */
		if (c->rd < cnt) {
			k->end = cnt;
			continue;
		}
		if (c == k->lim_c || cnt < c->cap)
			return 0;
		gmt_chunk_t *n = atomic_load_explicit(&c->next, memory_order_acquire);
		if (!n)
			return 0;
		atomic_store_explicit(&k->t->head, n, memory_order_release);
		gmt_chunk_free(c);
		k->c = c = n;
		k->end = 0;
	}
}

/* The thread's cursor for this round; 0 when it has nothing published. */
static int cursor_open(cursor_t *k, gmt_tstate_t *t)
{
	k->t = t;
	k->c = atomic_load_explicit(&t->head, memory_order_acquire);
	k->end = 0;
	return k->c && k->lim_c && cursor_seek(k);
}

/* A thread's buffer is empty once its cursor found nothing more. */
static int cursor_drained(const cursor_t *k)
{
	return !k->c || (k->c->rd >= atomic_load_explicit(&k->c->count, memory_order_acquire) &&
			 !atomic_load_explicit(&k->c->next, memory_order_acquire));
}

#define BATCH 256u   /* events encoded at once; the frame's size is checked between batches */

/* One event that cannot join the batch: of no known type, or older than
 * the newest written (a LATE record, nondecreasing inside itself too;
 * LATE events neither take nor free allocation ids). */
static void encode_odd(const gmt_event_t *e, uint32_t thread)
{
	static const uint32_t no_id = 0;
	if (e->type >= GMT_EVREC2_TYPES) {
		atomic_fetch_add(&gmt_g.dropped, 1);   /* no such event type */
		return;
	}
	need_stack(e->stack);
	if (w.late.n && (e->ts < w.late.prev_ts || w.late.n >= REC_EVENTS))
		evrec_finish(&w.late);
	w.late.flags = GMT_EVENTS_LATE;
	gmt_evrec2_add_n(&w.late, e, 1, thread, &no_id);
}

/* The shifts for the *lim events at e (EVENTS3, "Shifts" above): a record
 * that is empty takes the largest that they all allow (without an ALLOC or
 * FREE among them, the last record's); in a record begun already, *lim
 * becomes the number of them that its shifts allow, and 1 is returned when
 * that is fewer (the record ends there). */
static int shifts_for(const gmt_event_t *e, uint32_t *lim)
{
	uint64_t oa = 0, os = 0;
	for (uint32_t k = 0; k < *lim; k++) {
		if (GMT_EV_SHIFTED(e[k].type)) {
			oa |= e[k].addr;
			os |= e[k].size;
		}
	}
	if (!w.rec.n) {
		if (oa)
			w.rec.sa = (unsigned)__builtin_ctzll(oa);
		if (os)
			w.rec.ss = (unsigned)__builtin_ctzll(os);
		return 0;
	}
	const uint64_t am = (1ull << w.rec.sa) - 1, sm = (1ull << w.rec.ss) - 1;
	if (GMT_LIKELY(!((oa & am) | (os & sm))))
		return 0;
	uint32_t k = 0;
	while (!GMT_EV_SHIFTED(e[k].type) || !((e[k].addr & am) | (e[k].size & sm)))
		k++;
	*lim = k;
	return 1;
}

/* Encodes ev[i..n) of one thread (n - i <= BATCH) as far as the events go
 * now (ts < limit, or == limit when inclusive), in one pass: each event's
 * check, its stack, its allocation id and its columns; an event that
 * cannot join the main stream alone (encode_odd). Returns the index of the
 * first event that does not go now (n: all went). */
static uint32_t encode_events(const gmt_event_t *ev, uint32_t i, uint32_t n, uint32_t thread,
			      uint64_t limit, int inclusive)
{
	const uint32_t from = i;
	while (i < n) {
		if (w.rec.n >= REC_EVENTS)
			evrec_finish(&w.rec);
		if (!w.rec.n) {
			w.rec.flags = w.ids.reset ? GMT_EVENTS_IDS_RESET : 0;
			w.ids.reset = 0;
		}
		uint32_t room = REC_EVENTS - w.rec.n, lim = n - i < room ? n - i : room, k = 0;
		uint64_t last = w.last_ts;
		const gmt_event_t *e = ev + i;
		const int cut = shifts_for(e, &lim);
		gmt_evrec2_pos_t q;
		gmt_evrec2_open(&w.rec, &q, e->ts);
		int odd = 0;
		for (; k < lim; k++, e++) {
			const uint64_t ts = e->ts;
			const unsigned t = e->type;
			if (ts >= limit && (ts > limit || !inclusive))
				break;
			if (GMT_UNLIKELY(ts < last || t >= GMT_EVREC2_TYPES)) {
				odd = 1;
				break;
			}
			last = ts;
			if (e->stack && GMT_UNLIKELY(!stack_written(e->stack)))
				need_stack(e->stack);
			uint32_t id = 0;
			if (t == GMT_EV_ALLOC)
				id = id_alloc(&w.ids, e->addr);
			else if (t == GMT_EV_FREE)
				id = id_free(&w.ids, e->addr);
			gmt_evrec2_put(&q, e, thread, id);
		}
		gmt_evrec2_close(&w.rec, &q);
		w.last_ts = last;
		i += k;
		if (odd)
			encode_odd(&ev[i++], thread);
		else if (k < lim)
			break;   /* the next event does not go now */
		else if (cut)
			evrec_finish(&w.rec);   /* the next event needs finer shifts */
	}
	if (i == from)
		return i;
	/* what the writer holds, read from the buffer and not yet written */
	uint64_t held = w.f.events + w.rec.n + w.late.n +
			(atomic_load_explicit(&w.zj_state, memory_order_relaxed) != ZJ_IDLE ? w.zj.f.events : 0) +
			(w.out_busy ? w.zj.f.events : 0);
	if (held > atomic_load_explicit(&gmt_g.held_max, memory_order_relaxed))
		atomic_store_explicit(&gmt_g.held_max, held, memory_order_relaxed);
	/* A frame of 1 MiB takes long to encode on a starved writer (a loaded
	 * machine, a sanitizer): gmt_writer_stop's wait sees it moving. */
	progress();
	/* The frame size check costs 24 loads: once a batch is enough (at
	 * most ~80 KiB over the soft cap). */
	if (frame_bytes() >= FRAME_CAP) {
		if (w.open_round) {
			w.budget = 0;   /* the round ends: frame_detach's to write */
		} else {
			frame_end(1);
			frame_begin();
		}
	}
	return i;
}

/* Encodes k's events with ts <= limit (the next one included when
 * inclusive); returns 0 when the thread has no more published events. */
static int encode_run(cursor_t *k, uint64_t limit, int inclusive)
{
	const uint32_t idx = k->t->idx;
	do {
		gmt_chunk_t *c = k->c;
		while (c->rd < k->end) {
			/* the events of this chunk that go now, a batch at most */
			uint32_t end = k->end - c->rd < BATCH ? k->end : c->rd + BATCH;
			uint32_t j = encode_events(c->ev, c->rd, end, idx, limit, inclusive);
			w.round_n += j - c->rd;
			c->rd = j;
			if (j < end) {
				k->ts = c->ev[j].ts;
				return 1;
			}
			if (GMT_UNLIKELY(w.round_n >= w.budget || (w.yields && help_waiting))) {
				w.cut = 1;   /* the round ends here (encode_round) */
				return 1;
			}
		}
	} while (cursor_seek(k));
	return 0;
}

/* Cursor order: by next ts, then by snapshot position (a stable order for
 * equal timestamps). */
static inline int cursor_less(uint32_t a, uint32_t b)
{
	return w.cur[a].ts < w.cur[b].ts || (w.cur[a].ts == w.cur[b].ts && a < b);
}

static void heap_down(size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && cursor_less(w.heap[l], w.heap[m]))
			m = l;
		if (l + 1 < n && cursor_less(w.heap[l + 1], w.heap[m]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t t = w.heap[i];
		w.heap[i] = w.heap[m];
		w.heap[m] = t;
		i = m;
	}
}

/* Encodes, in time order, every published event with ts <= W. With one
 * thread holding events (the usual case) they are encoded straight from
 * its chunks; with several, the thread with the oldest next event gives
 * all of its events up to the next thread's (a merge by runs, not by
 * events). */
static void encode_round(uint64_t W)
{
	size_t nh = 0;
	for (size_t i = 0; i < w.n_snap; i++) {
		/* dead before taking: everything it will ever publish is visible.
		 * (Read after taking, a thread could publish its last events
		 * between our look and its exit, and they would be freed unread.) */
		cursor_t *k = &w.cur[i];
		k->dead = atomic_load_explicit(&w.snap[i]->dead, memory_order_acquire);
		w.gone[i] = 0;
		if (cursor_open(k, w.snap[i]) && k->ts <= W)
			w.heap[nh++] = (uint32_t)i;
		else if (k->dead && cursor_drained(k))
			w.gone[i] = 1;
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(nh, i);
	while (nh) {
		uint32_t top = w.heap[0];
		cursor_t *k = &w.cur[top];
		int more;
		if (nh == 1) {
			more = encode_run(k, W, 1);
		} else {
			/* up to the next thread's oldest (the smaller child) */
			uint32_t nxt = nh > 2 && cursor_less(w.heap[2], w.heap[1]) ? w.heap[2] : w.heap[1];
			if (w.cur[nxt].ts > W)
				more = encode_run(k, W, 1);
			else
				more = encode_run(k, w.cur[nxt].ts, nxt > top);
		}
		if (GMT_UNLIKELY(w.cut))
			break;   /* at its budget: what is written is the oldest */
		if (more && k->ts <= W) {
			heap_down(nh, 0);
			continue;
		}
		if (!more && k->dead && cursor_drained(k))
			w.gone[top] = 1;
		w.heap[0] = w.heap[--nh];
		heap_down(nh, 0);
	}
}

/* How a round runs (writer_round's flags). */
enum {
	ROUND_OPEN = 1,    /* encodes into the open frame and leaves it open:
			      its events are written by a later frame_end or
			      frame_detach (the frame full ends the round) */
	ROUND_HELPER = 2,  /* a producing thread's: no clock calibration, no
			      module poll (see "Help from the producing
			      threads") */
};

/* all: write everything published (shutdown, fatal signal). Otherwise at
 * most about budget events (the oldest): returns 1 when the round stopped
 * there with events left that it would have taken. Without ROUND_OPEN the
 * round's frame is written and done_ts raised; with it, w.round_done is
 * what done_ts may become once the open frame is written. The caller holds
 * round_lock. */
static int writer_round(int all, int final, uint64_t budget, int flags)
{
	const int helper = flags & ROUND_HELPER;
	if (!helper)
		gmt_clock_calibrate();
	uint64_t T0 = gmt_now_ns();
	if (snap_threads() < 0)
		return 0;
	progress();
	if (final) {
		/* Let threads caught mid-append finish (bounded). */
		for (int i = 0; i < 10; i++) {
			int busy = 0;
			for (size_t k = 0; k < w.n_snap; k++)
				busy |= (int)(atomic_load(&w.snap[k]->seq) & 1);
			if (!busy)
				break;
			struct timespec d = { 0, 1000000 };
			nanosleep(&d, NULL);
		}
	}
	uint64_t W = all ? UINT64_MAX : T0 > MARGIN_NS ? T0 - MARGIN_NS : 0;
	for (size_t k = 0; k < w.n_snap && !all; k++) {
		gmt_tstate_t *t = w.snap[k];
		uint64_t seq = atomic_load_explicit(&t->seq, memory_order_acquire);
		if (!(seq & 1))
			continue;
		if (seq != t->w_seen_seq) {
			t->w_seen_seq = seq;
			t->w_seen_since = T0;
		}
		if (T0 - t->w_seen_since > STUCK_NS)
			continue;   /* stuck: no longer holds the watermark */
		uint64_t p = atomic_load_explicit(&t->pub_ts, memory_order_relaxed);
		if (p < W)
			W = p;
	}
	/* After W: an event published past the limits was stamped after W was
	 * set (its thread was not busy then) or after its thread's last
	 * published event (it was), so it is no older than W. */
	fix_limits();
	take_meta();
	/* Never inside dl_iterate_phdr while a thread forks: the child would
	 * inherit the loader's lock held by a thread it does not have. (The
	 * writer's rounds only: a helper's thread may be anywhere.) */
	gmt_mrec_t *mods = NULL;
	if (!helper) {
		atomic_store(&gmt_g.in_dl, 1);
		if (!atomic_load(&gmt_g.forking))
			mods = gmt_modules_poll(T0);
		atomic_store(&gmt_g.in_dl, 0);
	}
	progress();
	while (mods) {
		gmt_mrec_t *n = mods->next;
		mods->next = NULL;
		*w.pending_tail = mods;
		w.pending_tail = &mods->next;
		mods = n;
	}
	void (*hook)(void) = atomic_load(&test_round_hook);
	if (hook)
		hook();

	/* Buffer-full drops counted by the threads since the last round; from
	 * here on (the writer's rounds) a thread that was refused a chunk may
	 * ask again. */
	for (size_t k = 0; k < w.n_snap; k++)
		take_drops(w.snap[k]);
	if (!helper)
		atomic_fetch_add_explicit(&gmt_g.round_gen, 1, memory_order_relaxed);

	w.rate_since = T0;
	w.round_n = 0;
	w.budget = all ? UINT64_MAX : budget;
	w.cut = 0;
	w.open_round = flags & ROUND_OPEN;
	w.yields = !all && !helper;
	frame_open();
	if (w.open_round && frame_bytes() >= FRAME_CAP)
		w.cut = 1;   /* the open frame is full: frame_detach's first */
	else
		encode_round(W);
	/* A helper's round that freed something: a thread that was refused a
	 * chunk may ask again (not after one that freed nothing: they would
	 * ask at every event). */
	if (helper && w.round_n)
		atomic_fetch_add_explicit(&gmt_g.round_gen, 1, memory_order_relaxed);
	/* After a round with W = infinity, what was published before T0 is
	 * written; after one cut at its budget, what is older than the newest
	 * event it wrote (the rest of the merge is no older: those of equal
	 * ts may wait); else what is up to W. */
	w.round_done = w.cut ? (w.last_ts ? w.last_ts - 1 : 0) : all ? T0 : W;
	if (!w.open_round)
		frame_end(0);
	/* the round's time is work; what follows until the next round is
	 * not, but for a frame's compression and write (frame_settle's
	 * sample counts it from here) */
	uint64_t t_end = gmt_now_ns();
	w.work_ns += t_end - w.rate_since;
	w.rate_since = t_end;
	w.left = all && past_limits();

	/* Threads that exited and are drained: their state can go (rounds,
	 * one at a time, are the only ones that free thread states, so a
	 * round's snapshot never dangles). */
	for (size_t k = 0; k < w.n_snap; k++)
		if (w.gone[k])
			free_thread(w.snap[k]);
	if (!w.open_round)
		round_done(w.round_done);
	return w.cut;
}

/* ---- help from the producing threads -----------------------------------
 * On a machine whose cores the program keeps busy, the scheduler gives the
 * writer its one thread's share: with 8 busy threads on 2 cores, a fifth of
 * a core, about 7 M events a second at its 27 to 48 ns an event; beyond
 * that the buffer filled and 8 to 30% of the events were dropped
 * (docs/performance.md, sessions 8 and 9). So the producing threads help:
 *
 * - Behind (the buffer over half its limit), a thread that takes a new
 *   chunk tries the round lock (never waits for it) and, if it got it,
 *   runs a round of at most ASSIST_BUDGET events (the oldest published,
 *   about 0.3 ms of work) into the open frame, which it leaves open.
 * - Full (no chunk to be had), it waits for the lock while its holder
 *   makes progress (round_lock_take: at most WAIT_MAX_MS), helps, and asks
 *   for the chunk again, the smallest one when its own size does not fit
 *   (room comes back a chunk at a time and any thread may take it: a
 *   thread asking for 64 KiB alone could lose that race for a whole wait),
 *   up to 16 times while the writer makes progress (chunk_advance,
 *   gmt_tracer.c), before it drops the event as before. A writer stuck in
 *   a slow write() makes no progress: the thread drops after one slice
 *   (GMT_WAIT_SLICE_MS), as it did without help.
 * - The writer's rounds leave the frame open; once it is half full, or
 *   when a round took all, the writer writes it with the lock released,
 *   compressed by itself or, with more to do, by the compressor thread
 *   while it encodes the next (frame_post, frame_detach, collect_job): a
 *   producer never waits on the disk, and compression overlaps the
 *   encoding, the writer's or theirs. While threads offer help and the
 *   buffer is behind, the writer's rounds are as short as theirs and a
 *   millisecond apart (their turn); a round of the writer's ends at its
 *   next batch when a thread waits to help (help_waiting).
 *
 * So under overload the program runs a little slower rather than losing
 * events, each thread paying for the tracing of its own events out of its
 * own share of the machine.
 *
 * One round at a time (round_lock: the writer's state, the open frame, the
 * ids, the stacks written are one), so the file is the same sequence of
 * rounds it always was, only run by other threads, and the same
 * time-order argument holds: a helper helps from inside its own event
 * (busy, its clock read, not yet published), which holds W at its last
 * published event as any busy thread does. A helper does no module poll
 * (dl_iterate_phdr stays the writer's: see fork_prepare), no clock
 * calibration, no compression and no write.
 *
 * The helper runs its round with every signal blocked (a handler that ends
 * the trace would wait for a writer that waits for this thread's lock)
 * and gives errno back as it found it; it is never the writer's or the
 * compressor's thread, and there is no help once the trace is ending (the
 * writer keeps the lock from its final round on). What a SIGKILL loses
 * grows by the frame being written with the lock released (counted in
 * writer_held_max, gmt_tracer_stats_t). */
static int buffer_behind(void)
{
	return atomic_load_explicit(&gmt_g.buf_used, memory_order_relaxed) * 2 >
	       atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed);
}
/* Producing threads' offers of help (gmt_writer_assist calls, taken or
 * not): the writer steps back only while they come. */
static _Atomic uint64_t help_offered;

/* Takes round_lock: at once or not at all, or (wait) while whoever holds
 * it makes progress, in slices of GMT_WAIT_SLICE_MS, until the deadline (a
 * writer stuck in a slow write() would make none: then the caller drops,
 * as it did without help). timedlock's clock is the realtime one: a jump
 * of it only stretches or shortens a slice. */
static int round_lock_take(int wait, uint64_t deadline)
{
	if (!wait)
		return pthread_mutex_trylock(&round_lock) == 0;
	gmt_watch_t wt;
	gmt_watch_begin(&wt, gmt_now_ns());
	for (;;) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += GMT_WAIT_SLICE_MS * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_mutex_timedlock(&round_lock, &dl) == 0)
			return 1;
		uint64_t now = gmt_now_ns();
		if (gmt_watch_idle(&wt, now) >= GMT_WAIT_SLICE_MS * 1000000ull || now >= deadline)
			return 0;
	}
}

/* A producing thread's help (gmt_tracer.c, chunk_advance): a round of at
 * most ASSIST_BUDGET events into the open frame. wait: the buffer is full,
 * so it waits for the round lock, and for the writer to take the open
 * frame away when that is full, while the writer makes progress and at
 * most WAIT_MAX_MS in all. Returns 1 when it encoded events (chunks may
 * have been freed). */
int gmt_writer_assist(int wait)
{
	if (gmt_tls_in_writer || atomic_load_explicit(&gmt_g.stop, memory_order_relaxed))
		return 0;
	int saved = errno;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_fetch_add_explicit(&help_offered, 1, memory_order_relaxed);
	const uint64_t start = wait ? gmt_now_ns() : 0, deadline = start + WAIT_MAX_MS * 1000000ull;
	gmt_watch_t wt;
	gmt_watch_begin(&wt, start);
	int done = 0;
	if (wait)
		atomic_fetch_add(&help_waiting, 1);
	while (round_lock_take(wait, deadline)) {
		/* the open frame full: the writer is to write it first */
		const int full = w.frame_is_open && frame_bytes() >= FRAME_CAP;
		if (!full && !atomic_load(&gmt_g.stop) && atomic_load(&gmt_g.state) == GMT_ACTIVE) {
			gmt_tls_in_writer = 1;
			writer_round(0, 0, ASSIST_BUDGET, ROUND_OPEN | ROUND_HELPER);
			gmt_tls_in_writer = 0;
			atomic_fetch_add_explicit(&gmt_g.assists, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&gmt_g.assist_events, w.round_n, memory_order_relaxed);
			if (w.budget == 0)
				gmt_writer_wake();   /* a full frame to write */
			done = w.round_n > 0;
		}
		pthread_mutex_unlock(&round_lock);
		if (!full || !wait)
			break;
		/* the writer takes the frame (it may be asleep between rounds) */
		gmt_writer_wake();
		struct timespec d = { 0, 200000 };
		nanosleep(&d, NULL);
		uint64_t now = gmt_now_ns();
		if (gmt_watch_idle(&wt, now) > GMT_WAIT_SLICE_MS * 1000000ull || now >= deadline)
			break;
	}
	if (wait)
		atomic_fetch_sub(&help_waiting, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return done;
}

static void writer_end(void)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		frame_begin();
		msgpack_pack_array(&w.pk, 7);
		msgpack_pack_uint8(&w.pk, GMT_REC_END);
		msgpack_pack_uint64(&w.pk, gmt_now_ns());
		msgpack_pack_uint64(&w.pk, atomic_load(&gmt_g.written));
		msgpack_pack_uint64(&w.pk, atomic_load(&gmt_g.dropped));
		msgpack_pack_uint64(&w.pk, atomic_load(&gmt_g.late));
		const char *how = atomic_load(&gmt_g.end_how);
		pack_str(&w.pk, how ? how : GMT_END_SHUTDOWN);
		msgpack_pack_int(&w.pk, atomic_load(&gmt_g.end_value));
		uint64_t before = gmt_g.file_off;
		frame_end(0);
		if (gmt_g.file_off != before)
			return;
	}
}

static void *writer_main(void *arg)
{
	(void)arg;
	gmt_tls_in_writer = 1;
	uint64_t offers_seen = 0;
	for (;;) {
		uint32_t seen = atomic_load(&gmt_g.wake);
		uint64_t offers = atomic_load_explicit(&help_offered, memory_order_relaxed);
		int helped = offers != offers_seen;
		offers_seen = offers;
		int stop = atomic_load(&gmt_g.stop);
		uint64_t sreq = atomic_load(&gmt_g.sig_req);
		int sig = sreq != atomic_load(&gmt_g.sig_done);
		int timeout = gmt_g.cfg.flush_ms;
		pthread_mutex_lock(&round_lock);
		if (stop || sig) {
			/* Everything, under the lock (its frames beyond the
			 * first by the compressor): the trace's end, an exec. */
			writer_round(1, stop, 0, 0);
			/* what was published while the round ran (past its
			 * limits): a few more rounds, when no other will come */
			for (int more = 0; stop && w.left && more < 3; more++)
				writer_round(1, 1, 0, 0);
			if (sig)
				atomic_store(&gmt_g.sig_done, sreq);
			if (stop)
				break;   /* the lock held to the end: no help from now on */
			pthread_mutex_unlock(&round_lock);
			continue;
		}
		/* A round into the open frame (with what the producing threads
		 * encoded into it), which is compressed and written with the
		 * lock released once it is half full or the round took all: a
		 * helper never waits on the disk. While they offer help and the
		 * buffer is behind, short rounds a millisecond apart: their
		 * turn ("Help from the producing threads"). */
		const int helping = helped && buffer_behind();
		int cut = writer_round(0, 0, helping ? ASSIST_BUDGET : WRITER_BUDGET, ROUND_OPEN);
		const uint64_t done = w.round_done;
		const int take = !cut || frame_bytes() >= FRAME_CAP / 2;
		const int inflight = atomic_load_explicit(&w.zj_state, memory_order_relaxed) != ZJ_IDLE;
		pthread_mutex_unlock(&round_lock);
		if (take) {
			/* the frame before first (one in flight at a time) */
			if (inflight)
				collect_job();
			pthread_mutex_lock(&round_lock);
			int how = frame_post(done, cut);
			if (!how && !cut)
				round_done(done);   /* nothing to write: all is */
			pthread_mutex_unlock(&round_lock);
			if (how == 2) {
				int err = frame_write_out();
				pthread_mutex_lock(&round_lock);
				frame_settle(err);
				pthread_mutex_unlock(&round_lock);
			} else if (how == 1 && !cut) {
				collect_job();   /* caught up: on disk before the sleep */
			}
		}
		if (cut) {
			if (!helping)
				continue;   /* more is waiting: no sleep */
			timeout = 1;
		}
		/* caught up: the chunks' slots beyond the buffer's limit give
		 * their pages back (gmt_slab.c) */
		gmt_slab_trim(atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed));
		uint64_t ft = atomic_load(&gmt_g.flush_target);
		if (ft > atomic_load(&gmt_g.done_ts)) {
			uint64_t now = gmt_now_ns(), due = ft + MARGIN_NS + 100000;
			int ms = due > now ? (int)((due - now + 999999) / 1000000) : 1;
			if (ms < timeout)
				timeout = ms;
		}
		/* Returns at once if woken since the round began (seen). */
		struct timespec ts = { timeout / 1000, (long)(timeout % 1000) * 1000000L };
		syscall(SYS_futex, &gmt_g.wake, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	}
	progress();
	writer_end();
	zworker_stop();
	gmt_fd_close_trace_file();
	pthread_mutex_unlock(&round_lock);
	atomic_store(&gmt_g.writer_done, 1);
	syscall(SYS_futex, &gmt_g.writer_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	return NULL;
}

/* ---- lifecycle ---------------------------------------------------------- */

void gmt_writer_wake(void)
{
	int saved = errno;
	atomic_fetch_add(&gmt_g.wake, 1);
	syscall(SYS_futex, &gmt_g.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

int gmt_writer_start(void)
{
	int rc;
	w.pending = NULL;
	w.pending_tail = &w.pending;
	w.f.inflight = NULL;
	w.last_ts = 0;
	w.preamble_done = 0;
	id_reset(&w.ids);
	w.ids.reset = 0;   /* a new file: nothing to reset */
	w.rec.sa = w.rec.ss = 0;
	w.probe_n = 0;
	w.probe_raw = w.probe_huf = 0;
	atomic_store(&w.huf, 1);
	if (!w.cctx) {
		w.cctx = ZSTD_createCCtx();
		if (!w.cctx)
			return -ENOMEM;
		msgpack_sbuffer_init(&w.sb);
		msgpack_packer_init(&w.pk, &w.sb, msgpack_sbuffer_write);
	}
	ZSTD_CCtx_reset(w.cctx, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_compressionLevel, gmt_g.cfg.zstd_level);
	w.level = gmt_g.cfg.zstd_level;
	w.lit = -1;
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_checksumFlag, 1);
	if (evrec_alloc(&w.rec) < 0 || evrec_alloc(&w.late) < 0)
		return -ENOMEM;
	gmt_mrec_t *h = header_record();
	if (!h)
		return -ENOMEM;
	w.pending = h;
	w.pending_tail = &h->next;

	/* The preamble goes out now so that the file is recognisable at once;
	 * if this write fails the first frame carries it. */
	uint8_t pre[PREAMBLE_LEN];
	preamble(pre);
	if (file_write(pre, sizeof(pre), 0) == 0)
		w.preamble_done = 1;

	atomic_store(&gmt_g.stop, 0);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&gmt_g.writer, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	gmt_g.writer_running = 1;
	return 0;
}

/* The waiter gives up after STALL_NS without progress, or TOTAL_NS in all
 * (TOTAL_JOIN_NS for a caller that may block: exit(), shutdown): the final
 * frames of a full 64 MiB buffer take well under a second to compress, and
 * a writer stuck behind a lock never gets anywhere. */
/* Without progress for STALL_NS the writer counts as stuck. A caller that
 * may block (normal exit, gmt_tracer_shutdown) grants it STALL_JOIN_NS: one
 * frame's compression on a loaded machine (or under TSan) can take longer
 * than 200 ms, and giving up there loses a trace's last frames for
 * nothing. A signal handler's or _exit's caller keeps the short bound. */
#define STALL_NS       200000000ull
#define STALL_JOIN_NS 1000000000ull
#define TOTAL_NS      2000000000ull
#define TOTAL_JOIN_NS 10000000000ull

int gmt_writer_stop(int join)
{
	if (!gmt_g.writer_running)
		return 1;
	atomic_store(&gmt_g.stop, 1);
	gmt_writer_wake();
	uint64_t start = gmt_now_ns();
	gmt_watch_t wt;
	gmt_watch_begin(&wt, start);
	while (!atomic_load(&gmt_g.writer_done)) {
		struct timespec d = { 0, 10000000 };
		syscall(SYS_futex, &gmt_g.writer_done, FUTEX_WAIT_PRIVATE, 0, &d, NULL, 0);
		uint64_t now = gmt_now_ns();
		if (gmt_watch_idle(&wt, now) > (join ? STALL_JOIN_NS : STALL_NS) ||
		    now - start > (join ? TOTAL_JOIN_NS : TOTAL_NS))
			return 0;
	}
	if (join) {
		pthread_join(gmt_g.writer, NULL);
		gmt_g.writer_running = 0;
	}
	atomic_store(&gmt_g.done_ts, UINT64_MAX);
	return 1;
}

void *gmt_writer_parent_state;

void gmt_writer_reset_child(void)
{
	/* The parent's writer may have been anywhere at the fork (freeing a
	 * list, growing a buffer): nothing of its state can be trusted or
	 * freed here. It is set aside as it is (still reachable, so leak
	 * checkers stay quiet) and the child's writer starts from nothing. */
	static struct writer parent_writer;
	memcpy(&parent_writer, &w, sizeof(w));
	gmt_writer_parent_state = &parent_writer;   /* keeps the copy alive */
	memset(&w, 0, sizeof(w));
	w.pending_tail = &w.pending;
	/* a parent's thread may have held it in a round at the fork */
	pthread_mutex_init(&round_lock, NULL);
	gmt_modules_reset();
}
