/*
 * gmt_decode.h - streaming reader of gpumemtrace traces (format 1.x).
 *
 * The trace reader (reader/: the analyzer and the tests use it, the preload
 * does not; it shares only tracer/gmt_format.h with the writer). It reads
 * frame by frame with memory bounded by one frame, calls a visitor for each
 * record, and stops at the first damage with a message naming the file, the
 * byte offset (in the file, of the frame or record at fault) and what was
 * expected. Everything decoded before the damage has been delivered.
 */
#ifndef GMT_DECODE_H
#define GMT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gmt_kv {
	const char *key;
	const char *value;
} gmt_kv_t;

/* Strings point into the decoder's buffers: valid during the callback only. */
typedef struct gmt_header {
	unsigned format_major, format_minor;
	const char *tool_version;
	uint64_t pid, ppid;
	const char *host;
	const char *exe;
	const char *const *cmdline;  size_t n_cmdline;
	const gmt_kv_t *env;         size_t n_env;
	uint64_t clock_monotonic_ns, clock_realtime_ns;
	unsigned stack_depth;
	int free_stacks;
} gmt_header_t;

typedef struct gmt_module {
	uint32_t id;
	const char *path;
	uint64_t base, size;
	const uint8_t *build_id; size_t build_id_len;
	uint64_t ts;
	/* (1.4) DT_SONAME ("" if none) and the file the path resolves to
	 * ("" if unknown); NULL when the record has no such fields. */
	const char *soname, *file;
} gmt_module_t;

typedef struct gmt_device_rec {
	int ordinal;
	const char *name;
	uint8_t uuid[16];
	const char *pci_bus_id;
	uint64_t total_bytes;
	int cc_major, cc_minor;
	int driver_version;
} gmt_device_rec_t;

/* One decoded event. */
typedef struct gmt_devent {
	uint64_t ts, addr, size, stream, aux;
	uint32_t stack;
	uint32_t thread;
	uint16_t type;
	int16_t device;  /* -1 = none */
	/* (1.4) an ALLOC's id and the id of the allocation a FREE frees, 0 =
	 * none; small numbers reused as allocations are freed (at most the
	 * most allocations live at once), for dense arrays instead of address
	 * maps. A FREE named by id in the file is given its allocation's
	 * address here: events read the same from every version. */
	uint32_t alloc_id;
} gmt_devent_t;

typedef struct gmt_drops {
	uint64_t count, first_ts, last_ts;
	const char *reason;
	int err;
} gmt_drops_t;

typedef struct gmt_end {
	uint64_t ts, written, dropped, late;
	/* (1.4) How the process ended: GMT_END_EXIT, GMT_END__EXIT,
	 * GMT_END_SIGNAL, GMT_END_SHUTDOWN (gmt_format.h), or "" before 1.4;
	 * value is the exit status or the signal number. */
	const char *how;
	int value;
} gmt_end_t;

/* Callbacks may be NULL. A nonzero return stops decoding (result
 * GMT_DECODE_STOPPED). */
typedef struct gmt_visitor {
	void *ctx;
	int (*header)(void *ctx, const gmt_header_t *h);
	int (*thread)(void *ctx, uint32_t idx, uint64_t tid, const char *name);
	int (*module)(void *ctx, const gmt_module_t *m);
	int (*module_unload)(void *ctx, uint32_t id, uint64_t ts);
	int (*stack)(void *ctx, uint32_t id, const uint64_t *frames, size_t n);
	int (*device)(void *ctx, const gmt_device_rec_t *d);
	/* A batch of events in file order; flags = EVENTS record flags. */
	int (*events)(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags);
	int (*drops)(void *ctx, const gmt_drops_t *d);
	int (*string)(void *ctx, uint32_t id, const char *text, size_t len);
	int (*end)(void *ctx, const gmt_end_t *e);
	int (*meta)(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n);
	/* (1.2) A stack of text frames (a framework's own, e.g. Python),
	 * innermost first; id >= GMT_TEXT_STACK_ID_BASE. */
	int (*text_stack)(void *ctx, uint32_t id, const char *const *frames, size_t n);
} gmt_visitor_t;

enum gmt_decode_status {
	GMT_DECODE_OK = 0,        /* whole file read; see ended_cleanly          */
	GMT_DECODE_DAMAGED = 1,   /* stopped at damage; message says where       */
	GMT_DECODE_REFUSED = 2,   /* not a trace, or a newer major version       */
	GMT_DECODE_IO = 3,        /* cannot open or read the file                */
	GMT_DECODE_STOPPED = 4    /* a callback returned nonzero                 */
};

typedef struct gmt_decode_result {
	enum gmt_decode_status status;
	int ended_cleanly;        /* an END record was read                      */
	uint64_t bytes_ok;        /* file offset up to which all was decoded     */
	uint64_t file_size;
	uint64_t frames, records, events;
	unsigned format_major, format_minor;
	/* Events the tracer could not keep: the sum of the DROPS records'
	 * counts and their time range (drop_first_ts 0: no DROPS record), and
	 * END's total (which also counts drops no DROPS record reached). */
	uint64_t dropped, drop_first_ts, drop_last_ts, end_dropped;
	/* What a newer minor version's file held that this reader cannot read
	 * (schemas/trace-format.md, "Versions"): whole records of unknown
	 * tags, skipped; records of known tags whose trailing fields were not
	 * read; the first distinct unknown tags (newer_tags[0..n_newer_tags),
	 * ascending, at most 8). All 0 for a file of a version this reader
	 * knows (where either is damage). */
	uint64_t newer_records, newer_fields;
	unsigned newer_tags[8], n_newer_tags;
	char message[512];        /* "FILE: offset N: ..." when status != OK     */
} gmt_decode_result_t;

/* Progress of long reads (the analyzer's terminal line): called after every
 * data frame with the file's name, the bytes decoded and the file's size
 * (0 for an in-memory image). NULL (the default): nothing is called. One
 * for the process; set it before decoding. */
typedef void (*gmt_decode_progress_fn)(const char *name, uint64_t done, uint64_t size);
void gmt_decode_set_progress(gmt_decode_progress_fn fn);

/* Whether EVENTS2's long varints are packed with BMI2's pext (where the
 * processor has it and runs it fast) or in plain steps: both read every
 * trace alike. want: -1 asks, 0 forces the plain steps, 1 pext where it is
 * fast (the default). Returns whether pext is used from now on. For tests
 * and comparisons (unit_events2 reads the same records both ways). */
int gmt_decode_pext(int want);

/* Decodes path, calling v. Returns res->status. */
int gmt_decode_file(const char *path, const gmt_visitor_t *v, gmt_decode_result_t *res);

/* Same on an in-memory image (name is used in messages). */
int gmt_decode_buffer(const void *data, size_t len, const char *name,
		      const gmt_visitor_t *v, gmt_decode_result_t *res);

/* Printable names (reader/gmt_names.c): the keys of tracer/gmt_format.def;
 * "?" for numbers not in its lists. */
const char *gmt_ev_type_name(unsigned type);
const char *gmt_kind_name(unsigned kind);
const char *gmt_api_name(unsigned api);
const char *gmt_owner_name(unsigned owner);
const char *gmt_sync_name(unsigned kind);
/* Whether an event type is in the list (0, NONE, is not). */
int gmt_ev_type_known(unsigned type);

#ifdef __cplusplus
}
#endif
#endif /* GMT_DECODE_H */
