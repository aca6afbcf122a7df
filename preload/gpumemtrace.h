/*
 * gpumemtrace.h - the public API of the gpumemtrace preload (libgpumemtrace.so).
 *
 * A program needs none of this to be traced: LD_PRELOAD alone traces it.
 * These functions let a program that knows it may run under the tracer talk
 * to it. They exist only while the preload is loaded, so call them through
 * dlsym(RTLD_DEFAULT, "gpumemtrace_flush") (NULL: not traced), or declare
 * them weak and test the address. Python: `import gpumemtrace` (python/),
 * which does nothing when the preload is not loaded.
 *
 * Strings passed in are copied (interned) before the call returns.
 */
#ifndef GPUMEMTRACE_H
#define GPUMEMTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every event buffered so far, of every thread, to the trace file and
 * waits (up to about 2 s) until it is there. Returns 0 when done (also when
 * nothing was traced yet), -1 when it could not finish in time or the
 * trace cannot be written. Safe from any thread; never from a signal handler. */
int gpumemtrace_flush(void);

/* The preload's version, e.g. "0.1.0": a static string. */
const char *gpumemtrace_version(void);

/* Path of the trace file this process writes, or NULL before the first
 * traced call created it (and after tracing stopped). Owned by the tracer:
 * do not free; valid until the process exits or forks. */
const char *gpumemtrace_trace_path(void);

/* ---- phases --------------------------------------------------------------
 * A phase is a named stretch of one thread's time ("model_load", "warmup",
 * "step"). Phases nest per thread; the analyzer reports each occurrence of a
 * phase name apart (the first, cold, and the later, warm, ones). Cheap: one
 * event each (the name is interned once). NULL or "" names are ignored. */
void gpumemtrace_phase_begin(const char *name);
/* Ends the innermost open phase of the calling thread; name, if not NULL,
 * must match it (a mismatch is recorded as given and reported by the
 * analyzer). */
void gpumemtrace_phase_end(const char *name);
/* An instant worth seeing on the timeline. */
void gpumemtrace_mark(const char *name);

/* ---- a framework allocator's own view ------------------------------------
 * An allocator that carves blocks out of memory it got from CUDA (PyTorch's
 * caching allocator, RMM, ...) reports what it hands out, so the trace holds
 * "allocated" beside "reserved". */
enum gpumemtrace_fw_action {
	GPUMEMTRACE_FW_ALLOC = 1,           /* block handed to the program      */
	GPUMEMTRACE_FW_FREE_REQUESTED = 2,  /* program let go of it             */
	GPUMEMTRACE_FW_FREE_COMPLETED = 3,  /* block reusable                   */
	GPUMEMTRACE_FW_SEGMENT_ALLOC = 4,   /* memory taken from CUDA           */
	GPUMEMTRACE_FW_SEGMENT_FREE = 5,
	GPUMEMTRACE_FW_SEGMENT_MAP = 6,     /* expandable segment grew          */
	GPUMEMTRACE_FW_SEGMENT_UNMAP = 7,
	GPUMEMTRACE_FW_OOM = 8              /* size = request, addr = free bytes */
};

/* OR'ed into an event's action: the event was moved from the framework's
 * own history after the fact (PyTorch's allocator trace), not reported as
 * it happened. Recorded as the SNAPSHOT flag; only with a past time_ns. */
#define GPUMEMTRACE_FW_FROM_HISTORY 0x100

typedef struct gpumemtrace_fw_event {
	int action;         /* enum gpumemtrace_fw_action                     */
	int device;         /* CUDA device ordinal                            */
	uint64_t addr;
	uint64_t size;      /* bytes                                          */
	uint64_t stream;    /* the CUstream/cudaStream_t value, 0 = default   */
	uint64_t time_ns;   /* 0 = now; else CLOCK_MONOTONIC ns, in the past  */
	uint64_t stack;     /* gpumemtrace_stack() id, 0 = none               */
} gpumemtrace_fw_event_t;
/* ABI: the struct grew in 0.1.x (stack, at the end: 48 bytes, was 40). A
 * program built against the older header passes 40-byte elements and must
 * be rebuilt; its arrays would be read with the wrong stride. */

/* Interns a call stack the framework recorded itself, as text (Python
 * frames, "name (file:line)"), n frames innermost first, and returns its id
 * for gpumemtrace_fw_event_t.stack: the same frames give the same id. The
 * analyzer shows it for the framework's events (`sites --framework`).
 * Strings are copied. 0 when not traced (or out of memory). */
uint32_t gpumemtrace_stack(const char *const *frames, size_t n);

/* Registers a framework by name ("pytorch") and returns its id (> 0), the
 * same id for the same name; 0 when not traced. The first registration of
 * a name is recorded (FW_REGISTER): from then on the analyzer lets a new
 * driver allocation wait for the framework's segment event on every
 * device, so register before the first segment is taken from CUDA. */
int gpumemtrace_fw_register(const char *name);

/* Reports n events of framework fw. Events with time_ns == 0 are stamped
 * now and join the main time line at once (call it as things happen).
 * Events with past times (a history moved after the fact) must be sorted
 * by time_ns and newer than any past-time event reported before: each is
 * reported once. Returns 0, or -1 when fw is unknown or an action invalid
 * (nothing of that call is recorded). */
int gpumemtrace_fw_events(int fw, const gpumemtrace_fw_event_t *ev, size_t n);

/* The framework's own counters at this instant (a checkpoint the analyzer
 * compares with the bytes it rebuilt): bytes allocated and reserved,
 * current and peak since the framework's last peak reset. */
void gpumemtrace_fw_counters(int fw, int device, uint64_t allocated,
			     uint64_t allocated_peak, uint64_t reserved,
			     uint64_t reserved_peak);

/* The framework's own counts at this instant (a checkpoint): allocations
 * it retried after giving its cache back to CUDA, and out-of-memory failures
 * it gave up on, since it started (PyTorch: memory_stats' num_alloc_retries
 * and num_ooms). The analyzer's oom report shows them beside the failures
 * and cache releases it sees itself. */
void gpumemtrace_fw_retries(int fw, int device, uint64_t retries, uint64_t ooms);

/* n events of framework fw were lost before they could be reported (its
 * own history buffer overflowed): the analyzer says its numbers for that
 * framework are incomplete from here. */
void gpumemtrace_fw_lost(int fw, int device, uint64_t n);

/* A key/value pair of metadata for the trace (a META record): the
 * dimensions this run tests ("batch", "8"), which the analyzer's card
 * shows, or what the PyTorch companion knows (torch_version, ...; the keys
 * gpumemtrace writes itself are listed in schemas/trace-format.md). A
 * forked child's trace repeats it. Starts the trace file if there was none
 * yet. */
void gpumemtrace_meta(const char *key, const char *value);

#ifdef __cplusplus
}
#endif
#endif /* GPUMEMTRACE_H */
