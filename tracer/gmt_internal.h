/*
 * gmt_internal.h - PRIVATE to tracer/ (and the tracer's unit tests): the
 * shared state of the tracer core (gmt_tracer.c), the writer thread
 * (gmt_writer.c), stack capture (gmt_stack.c), the module map
 * (gmt_modules.c) and logging (gmt_log.c). Nothing outside tracer/ may
 * include it; preload/ uses gmt_tracer.h only.
 */
#ifndef GMT_INTERNAL_H
#define GMT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "gmt_clock.h"
#include "gmt_tracer.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

#define GMT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define GMT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- per-thread event buffers ------------------------------------------ */

/* A thread's first chunk is small, each next one twice the last up to the
 * largest: a thread that records a few events holds 4 KiB, a busy one takes
 * a new chunk every 1364 events. */
#define GMT_CHUNK_HDR       64u
#define GMT_CHUNK_MIN_BYTES (4u * 1024u)
#define GMT_CHUNK_MAX_BYTES (64u * 1024u)
#define GMT_CHUNK_CAP(bytes) (((bytes) - GMT_CHUNK_HDR) / (uint32_t)sizeof(gmt_event_t))

/* One buffer chunk: a single-producer single-consumer array. The owning
 * thread appends and publishes with a release store of count; the writer
 * reads up to count (acquire) and keeps its own read position rd. */
typedef struct gmt_chunk {
	struct gmt_chunk *_Atomic next;   /* linked by the producer (release)   */
	_Atomic uint32_t count;           /* published events                   */
	uint32_t cap;                     /* events it holds                    */
	uint32_t bytes;                   /* its allocation                     */
	uint32_t rd;                      /* writer only: events consumed       */
	char pad_[GMT_CHUNK_HDR - sizeof(void *) - 16];
	gmt_event_t ev[];
} gmt_chunk_t;

/* A thread's tracing state. Producer fields are touched only by the owning
 * thread; the writer reads seq, pub_ts, head, dead, the drop counters with
 * acquire loads, and frees the chunks it has drained. */
typedef struct gmt_tstate {
	gmt_chunk_t *tail;                /* producer: current chunk (or NULL) */
	uint32_t tail_n, tail_cap;        /* producer: events in tail, its cap */
	uint32_t idx;                     /* thread column value               */
	uint32_t next_bytes;              /* producer: size of the next chunk  */
	_Atomic uint64_t seq;             /* odd while busy (see the format)   */
	_Atomic uint64_t pub_ts;          /* ts of the last published event    */
	_Atomic uint64_t emitted;
	gmt_chunk_t *_Atomic head;        /* oldest chunk; writer advances it  */
	_Atomic int dead;                 /* thread exited: no more appends    */
	pid_t tid;
	/* buffer-full drops, by the producer only: a count that only grows,
	 * the ts of the first drop of the current run and of the last drop;
	 * drop_gen: the writer round in which the cap was last found reached
	 * (until the next round, drops cost no shared write at all) */
	_Atomic uint64_t drop_n, drop_first, drop_last;
	uint64_t drop_gen;
	int dropping;
	/* writer only */
	uint64_t w_seen_seq, w_seen_since;
	_Atomic uint64_t w_drop_seen;     /* drop_n the writer has counted     */
	uint64_t w_drop_last;
} gmt_tstate_t;

/* A pre-encoded msgpack record waiting for the writer. */
typedef struct gmt_mrec {
	struct gmt_mrec *next;
	size_t len;
	size_t charged;   /* bytes it holds of buf_used (a name by value),
			     given back by gmt_mrec_free */
	unsigned char data[];
} gmt_mrec_t;

enum gmt_state { GMT_OFF = 0, GMT_ACTIVE = 1, GMT_DOWN = 2 };

/* The tracer's global state (one per process; reset in a forked child). */
typedef struct gmt_global {
	_Atomic int state;                /* enum gmt_state                     */
	gmt_config_t cfg;
	int have_cfg;                     /* cfg set by an init: a fork child reuses it */
	char *output;                     /* cfg.output copy                    */
	pthread_mutex_t init_lock;

	/* registry + metadata queue + strings + devices, under lock */
	pthread_mutex_t lock;
	gmt_tstate_t **threads; size_t n_threads, cap_threads;
	uint32_t next_thread_idx;
	gmt_mrec_t *meta_head, **meta_tail;
	gmt_mrec_t *persist_head, **persist_tail; /* STRING/DEVICE, replayed in a fork child */
	uint64_t emitted_dead;

	/* buffer memory: every chunk allocated (in use or spare) counts in
	 * buf_used; a chunk is taken only while buf_used + its size stays
	 * within buf_limit, which the writer keeps between buf_floor and
	 * buf_cap (about 100 ms of its own throughput, gmt_writer.c); names
	 * (strings, text stacks) count in names_used, at most names_cap */
	_Atomic size_t buf_used, buf_limit;
	size_t buf_cap, buf_floor;
	/* the largest limit set from a measured throughput, that throughput's
	 * largest estimate (events/s), the most events the writer held at
	 * once (read from the buffer, not yet written: about a frame): what a
	 * SIGKILL can lose is bounded by them (gmt_tracer_stats_t) */
	_Atomic size_t buf_limit_max;
	_Atomic uint64_t rate_max, held_max;
	int buf_ms;
	_Atomic size_t names_used;
	size_t names_cap;
	_Atomic uint64_t round_gen;       /* bumped by every writer round      */
	_Atomic uint64_t frames_fast;     /* frames compressed at the fast level */
	_Atomic uint64_t frames_async;    /* frames compressed by the compressor */
	_Atomic uint64_t assists;         /* rounds run by producing threads   */
	_Atomic uint64_t assist_events;   /* events those rounds encoded       */
	_Atomic uint64_t names_dropped;   /* names given the overflow id       */
	_Atomic uint64_t names_by_value;  /* names beyond the budget, written
					     with each use (not kept)        */
	_Atomic size_t names_inflight_max; /* the most buf_used seen when a
					     name by value was charged       */

	/* the file: fd is ours only while it is still the file we created
	 * (file_dev, file_ino), see gmt_fd.c; abs_path reopens it */
	int fd;
	char *path, *abs_path;
	uint64_t file_dev, file_ino;
	uint64_t file_off;                /* end of the last good frame         */
	long write_calls;
	long event_write_calls;           /* writes of frames with events       */

	/* the writer */
	pthread_t writer;
	int writer_running;
	/* The end handshake (gmt_tracer.c, gmt_tracer_end): how the process ended,
	 * set before stop; the writer bumps progress as it goes and sets done
	 * (a futex word) once END is written and the file closed. */
	const char *_Atomic end_how;
	_Atomic int end_value;
	_Atomic uint32_t writer_progress;
	_Atomic uint32_t writer_done;
	_Atomic uint32_t wake;            /* futex word: bumped to wake the writer */
	_Atomic int stop;
	_Atomic uint64_t flush_target;    /* write everything with ts <= this   */
	_Atomic uint64_t done_ts;         /* everything published <= this is written */
	_Atomic uint64_t sig_req, sig_done; /* write-everything requests (exec) */
	_Atomic int waiters;
	pthread_mutex_t wait_lock;
	pthread_cond_t wait_cond;

	/* fork vs the loader lock: see fork_prepare() */
	_Atomic int forking, in_dl;

	/* counters */
	_Atomic uint64_t written, dropped, late;
} gmt_global_t;

extern gmt_global_t gmt_g;

/* Waiting for the writer only while it makes progress (writer_progress,
 * bumped at each step of its work, a helper's included): gmt_watch_begin
 * at the wait's start, then gmt_watch_idle at each look gives the ns since
 * it last moved. A producing thread that waits for room counts the writer
 * as stuck (a write that does not return) after GMT_WAIT_SLICE_MS without
 * progress. */
#define GMT_WAIT_SLICE_MS 20
typedef struct gmt_watch {
	uint32_t seen;
	uint64_t moved;
} gmt_watch_t;

static inline void gmt_watch_begin(gmt_watch_t *wt, uint64_t now)
{
	wt->seen = atomic_load(&gmt_g.writer_progress);
	wt->moved = now;
}

static inline uint64_t gmt_watch_idle(gmt_watch_t *wt, uint64_t now)
{
	uint32_t p = atomic_load(&gmt_g.writer_progress);
	if (p != wt->seen) {
		wt->seen = p;
		wt->moved = now;
	}
	return now - wt->moved;
}

/* Set in the writer thread: signal handlers and urgent waits never wait on
 * themselves. */
extern __thread int gmt_tls_in_writer __attribute__((tls_model("initial-exec")));

/* Ends the trace (END how/value) unless someone did already: see the essay
 * above it in gmt_tracer.c. Async-signal-safe with join = 0. */
void gmt_tracer_end(const char *how, int value, int join);

/* ---- signals (gmt_signals.c) -------------------------------------------- */
/* Puts the flush handler on the fatal signals whose disposition is the
 * default (once per process image). */
void gmt_signals_install(void);

/* ---- logging (gmt_log.c) ------------------------------------------------ */
int gmt_log_level(void);
void gmt_log_set_level(int level);
void gmt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Warns once per *flag (sticky failures). */
void gmt_warn_once(_Atomic int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the chunks' memory (gmt_slab.c) ------------------------------------ */
#define GMT_SLAB_SLOT ((size_t)GMT_CHUNK_MAX_BYTES)
/* Maps the slots for bytes of chunks (once; later calls do nothing).
 * Returns 0 or a negative errno (chunks then come from malloc). */
int gmt_slab_setup(size_t bytes);
/* A slot of GMT_SLAB_SLOT bytes, 64-aligned, or NULL (none left, or no
 * mapping). Lock-free, async-signal-safe. */
void *gmt_slab_get(void);
/* Gives back p if it is a slot (returns 1; 0: not the slab's, free it
 * elsewhere); it keeps its pages. Lock-free. */
int gmt_slab_put(void *p);
/* The warm slots beyond keep_bytes give their pages back to the system
 * (the writer, caught up); returns how many. */
uint64_t gmt_slab_trim(size_t keep_bytes);
typedef struct gmt_slab_stats {
	uint64_t slots, fresh, warm, trimmed;   /* mapped, ever taken new,
						   waiting with their pages,
						   pages given back       */
} gmt_slab_stats_t;
void gmt_slab_stats(gmt_slab_stats_t *st);

/* ---- core (gmt_tracer.c) used by the writer ----------------------------- */
/* Frees a drained chunk (its bytes leave buf_used). */
void gmt_chunk_free(gmt_chunk_t *c);
/* Appends a pre-encoded record to the metadata queue (takes ownership).
 * persist: also kept for replay into a forked child's new file. */
void gmt_meta_push(gmt_mrec_t *r, int persist);
gmt_mrec_t *gmt_mrec_new(const void *data, size_t len);
/* Frees a record the writer is done with (its charge leaves buf_used). */
void gmt_mrec_free(gmt_mrec_t *r);
/* The calling thread's index (registers it, starts the tracer if needed);
 * -1 when tracing is off. */
int64_t gmt_thread_index(void);

/* ---- file naming (gmt_writer.c) ---------------------------------------- */
/* Opens a new trace file for output (dir or pattern; NULL = "."), O_EXCL
 * with .1 .2 ... suffixes on collision. Returns the fd and sets *path
 * (malloc'd), or a negative errno. */
int gmt_file_create(const char *output, char **path);

/* ---- descriptors (gmt_fd.c) --------------------------------------------- */
/* Moves fd to a number far above those a program uses, close-on-exec, and
 * returns it (fd itself closed); fd unchanged (made close-on-exec) when
 * there is no room. errno unchanged. */
int gmt_fd_high(int fd);
/* Remembers fd as the trace file (device, inode, absolute path). */
void gmt_fd_own_file(int fd, const char *path);
/* The trace file's descriptor if it is still ours, else the file reopened
 * by its absolute path (a new high descriptor), else -1: the descriptor
 * the program closed or reused is never touched again. Warns once. */
int gmt_fd_trace_file(void);
/* Appends the trace file's absolute path to the file GPUMEMTRACE_TRACE_LIST
 * names, if it exists (the launcher's list of its job's traces). */
void gmt_fd_announce(void);
/* Closes the trace file if the descriptor is still ours; fd = -1. */
void gmt_fd_close_trace_file(void);

/* ---- writer (gmt_writer.c) ---------------------------------------------- */
/* Sets the buffer cap (cfg.buffer_bytes, at least two of the largest
 * chunks), the names' budget (an eighth of it), the limit's floor, and the
 * backlog window (ms of the writer's throughput, 0: none). */
void gmt_buffer_setup(size_t bytes, int ms);
int gmt_writer_start(void);        /* header record queued, preamble written */
/* Asks for the final round, END and the file's close, and waits while the
 * writer makes progress (stuck after 200 ms without progress and at most
 * about 2 s in all without join: async-signal-safe; 1 s and 10 s with join). Returns 1 when it finished; then, with join, the thread
 * is joined too. */
int gmt_writer_stop(int join);
void gmt_writer_wake(void);        /* async-signal-safe                      */
/* A producing thread's help when the buffer is behind (wait 0: only if no
 * other round runs) or full (wait 1: waits while the writer makes progress,
 * at most 50 ms; chunk_advance may call it again): a short round of the
 * writer's work. Returns 1 when it encoded events. Not from a signal
 * handler. See gmt_writer.c, "Help from the producing threads". */
int gmt_writer_assist(int wait);
void gmt_writer_reset_child(void); /* forget writer state in a fork child    */
extern void *gmt_writer_parent_state; /* what the child set aside (see there) */

/* ---- stacks (gmt_stack.c) ---------------------------------------------- */
/* dlopen libunwind; method: enum gmt_stack_method (gmt_tracer.h). */
void gmt_stack_init(int depth, int method);
/* Captures the caller's stack (skip more of the caller's frames) and
 * returns its id (>= 1), or 0 when stacks are off or the table is full. */
uint32_t gmt_stack_capture(int skip);
/* Frames of id (valid forever), or NULL. */
const uint64_t *gmt_stack_frames(uint32_t id, uint32_t *n);
uint64_t gmt_stack_count(void);
int gmt_stack_available(void);                 /* libunwind loaded, depth > 0 */
typedef struct gmt_stack_stats {
	uint64_t unwound;     /* captures libunwind answered (checks included) */
	uint64_t checked;     /* frame-pointer walks checked against libunwind */
	uint64_t walk_wrong;  /* ... that libunwind contradicted                */
} gmt_stack_stats_t;
void gmt_stack_get_stats(gmt_stack_stats_t *st);

/* ---- modules (gmt_modules.c) ------------------------------------------- */
/* Returns MODULE / MODULE_UNLOAD records (a list) for the objects loaded or
 * unloaded since the last call. Writer thread only. */
gmt_mrec_t *gmt_modules_poll(uint64_t ts);
void gmt_modules_reset(void);

#endif /* GMT_INTERNAL_H */
