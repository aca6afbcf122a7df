/*
 * gmt_tracer.h - the tracer core's public API (plain C, no CUDA).
 *
 * The preload's hooks and the unit tests call this with real or fake values.
 * The core owns: per-thread event buffers, the writer thread (msgpack + zstd),
 * the trace file, stack capture and deduplication, the module map, drops,
 * fork/exit/signal handling. Format: schemas/trace-format.md.
 *
 * Every function here is safe to call from any thread, before or after
 * gmt_tracer_init(), and never blocks the caller for long: a writer that
 * falls behind gets the calling threads' help (GPUMEMTRACE_OVERLOAD: with
 * the buffer full, a thread waits while the writer makes progress, 50 ms a
 * wait and 16 waits at most, never on the disk: 20 ms without progress
 * ends it), and a full buffer or a failing disk then drops
 * events (counted and written as a DROPS record); it never stalls or
 * crashes the program.
 */
#ifndef GMT_TRACER_H
#define GMT_TRACER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "gmt_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One event as the hot path records it (48 bytes). Thread is implicit. */
typedef struct gmt_event {
	uint64_t ts;      /* CLOCK_MONOTONIC ns                       */
	uint64_t addr;
	uint64_t size;
	uint64_t stream;
	uint64_t aux;     /* type-specific; see gmt_format.h           */
	uint32_t stack;   /* stack id, 0 = none                        */
	uint16_t type;    /* enum gmt_ev_type                          */
	int16_t  device;  /* device ordinal, -1 = none                 */
} gmt_event_t;

/* How stacks are captured (GPUMEMTRACE_STACK_METHOD). auto: a frame-pointer
 * walk wherever it was checked to give libunwind's frames for the same call
 * path, libunwind elsewhere; libunwind: libunwind only. */
enum gmt_stack_method { GMT_STACK_AUTO = 0, GMT_STACK_LIBUNWIND = 1 };

/* What a thread does when the writer is behind (GPUMEMTRACE_OVERLOAD).
 * help: it does some of the writer's work, and with the buffer full it
 * waits for the writer while the writer makes progress (50 ms a wait, 16
 * waits at most, 20 ms without progress ends them) before it drops; drop:
 * it never waits, the buffer full drops its events (gmt_writer.c, "Help
 * from the producing threads"). */
enum gmt_overload { GMT_OVERLOAD_HELP = 0, GMT_OVERLOAD_DROP = 1 };

/* Settings; gmt_config_from_env() fills them from GPUMEMTRACE_* variables
 * (documented in docs/configuration.md). */
/* zstd's level for the trace's frames (GPUMEMTRACE_ZSTD_LEVEL): -3. On
 * make bench's streams (EVENTS3 columns, dense) it writes as few bytes as
 * level 1 within their run-to-run spread (5.0-5.1 bytes an event on mixed
 * sizes and addresses, 0.36-0.41 on a few sizes) for 40 to 50 fewer
 * instructions an event in the writer and its compressor (about a fifth of
 * their instructions; their CPU time the same within its spread:
 * docs/performance.md, session 8). */
#define GMT_ZSTD_LEVEL_DEFAULT (-3)

typedef struct gmt_config {
	const char *output;       /* dir or file pattern; NULL = "."              */
	int stack_depth;          /* frames per stack, 0 = stacks off (default 20)*/
	int free_stacks;          /* capture stacks on frees too (default 0)      */
	int stack_method;         /* enum gmt_stack_method (default auto)         */
	size_t buffer_bytes;      /* cap on buffered events (default 64 MiB)      */
	int buffer_ms;            /* and on what is buffered but not yet written:
	                             this many ms of the writer's throughput
	                             (default 100; 0: the byte cap only)        */
	int flush_ms;             /* writer period (default 10 ms)                */
	int zstd_level;           /* default GMT_ZSTD_LEVEL_DEFAULT                */
	int overload;             /* enum gmt_overload (default help)             */
	int log_level;            /* 0 quiet, 1 warnings (default), 2 info, 3 debug*/
	int install_signal_handlers; /* flush on SIGTERM/SIGINT/fatal (default 1) */
	int cmdline;              /* the header's command line: GMT_CMDLINE_*     */
	/* Test hook: fail the Nth and later write() calls with this errno
	 * (GPUMEMTRACE_TEST_FAIL_WRITES="N:ENOSPC" or "N:ENOSPC:M" for M calls;
	 * "N:ENOSPC:M:events" counts only the writes of frames that hold
	 * events, so that a test's lost frames lose events whatever the
	 * writer's timing). */
	long test_fail_write_after;
	int test_fail_errno;
	long test_fail_count;
	int test_fail_events_only;
	/* Test hook: every write() of the trace first sleeps this long, a slow
	 * disk (GPUMEMTRACE_TEST_WRITE_DELAY_MS). */
	int test_write_delay_ms;
} gmt_config_t;

/* gmt_config_t.cmdline (GPUMEMTRACE_CMDLINE): the command line as given,
 * the program's name only (every later argument replaced by "<redacted>",
 * their number kept), or none at all. */
enum { GMT_CMDLINE_FULL = 0, GMT_CMDLINE_REDACT = 1, GMT_CMDLINE_NONE = 2 };

/* Fills cfg with the defaults overridden by the environment. */
void gmt_config_from_env(gmt_config_t *cfg);

/* Starts the tracer with cfg (NULL: from the environment): opens the trace
 * file, writes the header, starts the writer thread. Idempotent and thread
 * safe; returns 0 or a negative errno (the tracer then stays disabled and
 * every emit is a cheap no-op). */
int gmt_tracer_init(const gmt_config_t *cfg);

/* Nonzero once gmt_tracer_init() succeeded and shutdown has not run. */
int gmt_tracer_active(void);

/* Drains every buffer, writes the END record (how "shutdown"), closes the
 * file, stops the writer. Later emits are dropped silently (counted
 * nowhere: the file is closed). exit() and fatal signals end the trace
 * themselves, saying so in END (GMT_END_*). Never waits on a lock; waits
 * for the writer only while it makes progress (at most about 2 s). */
void gmt_tracer_shutdown(void);

/* Ends the trace of a process about to _exit(status) (END how "_exit"):
 * async-signal-safe (an _exit from a signal handler), and only in the
 * process that opened the trace (never in a vfork()ed child sharing its
 * memory). */
void gmt_tracer_exit_flush(int status);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gmt_now_ns(void);

/* Hot path: appends one event for the calling thread. ev->ts == 0 means
 * "now". want_stack: capture the caller's stack (if stacks are on) and put
 * its id in ev->stack; skip_frames frames of the caller's own are omitted.
 * Initialises the tracer on first use. */
void gmt_emit(const gmt_event_t *ev, int want_stack, int skip_frames);

/* The side stream (schemas/trace-format.md, "The side stream"): appends n
 * events that carry explicit times in the past (each ev[i].ts != 0,
 * CLOCK_MONOTONIC ns as gmt_now_ns() counts), sorted by ts, none older than
 * the previous call's newest. They are written in SIDE EVENTS records of the
 * calling thread's index. Takes a lock: for batches (a framework's history
 * moved at a phase boundary), not for a hot path. Out-of-order input is
 * clamped to the previous newest ts and counted as late. */
void gmt_emit_side(const gmt_event_t *ev, size_t n);

/* Like gmt_emit, then waits (at most about 200 ms) until the event is on
 * disk: for failed allocations, which a post-mortem needs. */
void gmt_emit_urgent(const gmt_event_t *ev, int want_stack, int skip_frames);

/* Asks the writer to write everything buffered now and waits up to
 * timeout_ms for it. Returns 0 when done, -ETIMEDOUT otherwise. */
int gmt_tracer_flush(int timeout_ms);

/* Test hook (unit tests only): while on, the writer waits before each
 * write() of the trace, a disk that stopped; the buffer then fills (the
 * emitting threads encode into the open frame while it has room: see
 * GPUMEMTRACE_OVERLOAD) and drops. Turn it off before flushing or shutting
 * down. */
void gmt_tracer_test_hold_writes(int on);

/* Test hook (unit tests only): the next count write() calls of the trace
 * (the one waiting in gmt_tracer_test_hold_writes' hold included) fail with
 * err. */
void gmt_tracer_test_fail_writes(int err, int count);

/* Test hook (unit tests only): fn (NULL: none) runs in every round (on the
 * writer thread, or on a producing thread that helps), after the round
 * took the metadata queue and before it encodes events: what another
 * thread does then is what a round must not take half of
 * (unit_tracer_order). */
void gmt_tracer_test_round_hook(void (*fn)(void));

/* Before an exec function: records EXEC and writes everything buffered,
 * waiting only while the writer makes progress (at most about 2 s); for a
 * successful exec the trace ends there (the file is close-on-exec and the
 * new image, with the same pid, writes a trace of its own). Only in the
 * process that opened the trace (never in a vfork()ed child). After an
 * exec that returned, gmt_tracer_exec_failed(errno) records EXEC_FAILED
 * and tracing goes on. errno unchanged. */
void gmt_tracer_exec(void);
void gmt_tracer_exec_failed(int err);

/* Device description (metadata record, written before the next events). */
typedef struct gmt_device_info {
	int ordinal;
	char name[256];
	uint8_t uuid[16];
	char pci_bus_id[32];
	uint64_t total_bytes;
	int cc_major, cc_minor;
	int driver_version;
} gmt_device_info_t;
void gmt_tracer_device(const gmt_device_info_t *dev);

/* Interns a string (phase names, domains, messages) and returns its id (>0),
 * written as a STRING record before any event that can refer to it. 0 on
 * failure. Kept names take memory in the traced process, at most an eighth
 * of the buffer cap (the names' budget); the same text returns the same id.
 * Beyond the budget a new name is written BY VALUE: a STRING record with a
 * fresh id at each call (*kept = 0: the caller must not cache the id), held
 * in the events' buffer (within its cap) until written, so the trace still
 * names it (the analyzer merges ids by text). Only when the buffer is full
 * too does the name get the id of GMT_NAME_OVERFLOW (counted in
 * names_overflow, one warning). gmt_tracer_string = gmt_tracer_name(text,
 * NULL). */
#define GMT_NAME_OVERFLOW "[more names than the trace buffer keeps]"
uint32_t gmt_tracer_name(const char *text, int *kept);
uint32_t gmt_tracer_string(const char *text);

/* Interns a stack of text frames (innermost first; a framework's own
 * frames, e.g. Python's "name (file:line)") and returns its id
 * (>= GMT_TEXT_STACK_ID_BASE, for an event's stack field), written as a
 * TEXT_STACK record before any event that can refer to it; the same frames
 * return the same id. 0 on failure, when tracing is off, or beyond the
 * names' budget (shared with gmt_tracer_string). n may be 0. */
uint32_t gmt_tracer_text_stack(const char *const *frames, size_t n);

/* Free-form metadata (a META record): keys and values are strings. The
 * record is written again at the start of a fork child's own file. */
void gmt_tracer_meta(const char *const *keys, const char *const *values, int n);

/* Counters for tests and the end record. */
typedef struct gmt_tracer_stats {
	uint64_t emitted;     /* events accepted into buffers      */
	uint64_t written;     /* events written to the file        */
	uint64_t dropped;     /* events lost (buffer full, write error) */
	uint64_t late;        /* events written after a later one  */
	uint64_t stacks;      /* distinct stacks                   */
	uint64_t stacks_unwound; /* captures libunwind answered (the rest: the
	                            frame-pointer walk)             */
	uint64_t names_overflow; /* names lost: beyond the names' budget
	                            with the buffer full (GMT_NAME_OVERFLOW) */
	uint64_t names_by_value; /* names written by value (beyond the budget) */
	uint64_t names_kept_bytes; /* of the names' budget, used (name_cost) */
	uint64_t names_budget;   /* the names' budget: buffer cap / 8, bytes */
	uint64_t names_inflight_max; /* the most buffered bytes (chunks and
	                            names by value) when one was queued: at
	                            most the buffer's limit */
	/* the buffer (GPUMEMTRACE_BUFFER_MS): what a SIGKILL can lose is the
	 * events in the buffer, at most buffer_limit_max bytes of chunks
	 * once the backlog has come within the limit, and those the writer
	 * holds (read, not yet written: at most writer_held_max) */
	uint64_t buffered;         /* bytes of chunks held now             */
	uint64_t buffer_limit;     /* bytes: the limit now                 */
	uint64_t buffer_limit_max; /* bytes: the largest limit set from a
	                              measured throughput (0: none yet)    */
	uint64_t buffer_floor;     /* bytes: the limit's floor             */
	uint64_t chunk_bytes, chunk_events; /* a full chunk: its bytes, its events */
	uint64_t writer_rate_max;  /* events/s: the writer's largest
	                              throughput estimate                  */
	uint64_t writer_held_max;  /* the most events the writer held at once
	                              (about a frame, 1 MiB encoded)      */
	uint64_t frames_fast;      /* frames compressed at the fast level
	                              because the writer was behind        */
	uint64_t frames_async;     /* frames compressed by the compressor
	                              thread while the writer encoded the
	                              next one (a backlog, gmt_writer.c)   */
	uint64_t assists;          /* rounds run by a producing thread
	                              because the buffer was behind or full
	                              (help from the producing threads,
	                              gmt_writer.c)                       */
	uint64_t assist_events;    /* events those rounds encoded          */
	/* the chunks' memory (gmt_slab.c): 64 KiB slots of one mapping */
	uint64_t slab_slots;       /* mapped (0: none, chunks from malloc) */
	uint64_t slab_fresh;       /* slots ever taken new (pages faulted in) */
	uint64_t slab_warm;        /* given back, pages kept, waiting      */
	uint64_t slab_trimmed;     /* given back beyond the buffer's limit:
	                              pages returned to the system         */
} gmt_tracer_stats_t;
void gmt_tracer_get_stats(gmt_tracer_stats_t *st);

/* Path of the trace file being written, or NULL. */
const char *gmt_tracer_path(void);

/* Moves a descriptor the tracer's side keeps (libunwind's pipe) to a high
 * number, close-on-exec, out of the program's way; returns the new number
 * (the old one is closed), or fd itself when there is no room. */
int gmt_tracer_fd_high(int fd);

/* Called once, with libunwind's dlopen() handle, when the stack capture has
 * loaded it (before its first use): the preload binds libunwind's own pipe2
 * to one that moves the probe pipe high (preload/gmt_libc.c). */
void gmt_tracer_on_unwinder(void (*fn)(void *handle));

/* sigaction() as the program sees it (the preload's sigaction and signal):
 * where the tracer's flush handler stands in for the default disposition,
 * queries answer with the default as the program set it, and setting a
 * handler replaces ours (tracer/gmt_signals.c). Same contract as
 * sigaction(2), async-signal-safe. */
int gmt_tracer_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#ifdef __cplusplus
}
#endif
#endif /* GMT_TRACER_H */
