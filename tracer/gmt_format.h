/*
 * gmt_format.h - constants of the trace format shared by the writer (tracer/)
 * and the reader (reader/gmt_decode.c, used by analyzer/ and tests/).
 *
 * schemas/trace-format.md is normative; this header only names its numbers.
 * The event types, kinds, APIs and owners are listed in gmt_format.def, from
 * which the enums below (and the reader's names) are expanded.
 * Knows no CUDA header: CUDA-specific meanings (kind, api) are plain numbers.
 */
#ifndef GMT_FORMAT_H
#define GMT_FORMAT_H

#include <stdint.h>

/* File preamble: a zstd skippable frame (magic GMT_SKIPPABLE_MAGIC, 12-byte
 * payload "GMTRACE\0" + u16 major + u16 minor, little endian). */
#define GMT_SKIPPABLE_MAGIC   0x184D2A5Eu
#define GMT_FILE_MAGIC        "GMTRACE"     /* 7 chars + NUL = 8 bytes */
#define GMT_FORMAT_MAJOR      1
#define GMT_FORMAT_MINOR      5

/* Record tags: every record is a msgpack array whose first element is one of
 * these positive fixints. */
enum gmt_rec_tag {
	GMT_REC_HEADER        = 1,  /* [1, map]                                   */
	GMT_REC_THREAD        = 2,  /* [2, idx, tid, name]                        */
	GMT_REC_MODULE        = 3,  /* [3, id, path, base, size, build_id, ts]
	                               (1.4: + soname, file)                     */
	GMT_REC_MODULE_UNLOAD = 4,  /* [4, id, ts]                                */
	GMT_REC_STACK         = 5,  /* [5, id, [frame addresses, innermost first]]*/
	GMT_REC_DEVICE        = 6,  /* [6, map]                                   */
	GMT_REC_EVENTS        = 7,  /* [7, n, base_ts, flags, 9 bin columns]      */
	GMT_REC_DROPS         = 8,  /* [8, count, first_ts, last_ts, reason, errno] */
	GMT_REC_STRING        = 9,  /* [9, id, text]                              */
	GMT_REC_END           = 10, /* [10, ts, written, dropped, late, how, value]
				     * (how and value: 1.4, GMT_END_*)        */
	GMT_REC_META          = 11, /* [11, ts, map] free-form key/values         */
	GMT_REC_TEXT_STACK    = 12, /* [12, id, [str frames, innermost first]] (1.2) */
	/* 13-16: kept for b-intercept and c-robust (BOARD) */
	GMT_REC_EVENTS2       = 17, /* [17, n, base_ts, flags, 11 bin columns] (1.4):
	                               EVENTS with allocation ids, fields that
	                               repeat left out                          */
	GMT_REC_EVENTS3       = 18, /* [18, n, base_ts, flags, shifts, 11 bin
	                               columns] (1.5): EVENTS2 whose ALLOCs' and
	                               FREEs' addresses and sizes count in units
	                               of 2^shift (GMT_SHIFTS_*)                */
	GMT_REC_TAG_MAX       = 18
};

/* END `how` (1.4): how the process ended; `value` is the exit status (the
 * low 8 bits, as the parent sees them) or the signal number. */
#define GMT_END_EXIT     "exit"      /* exit(value), or main returned value   */
#define GMT_END__EXIT    "_exit"     /* _exit/_Exit(value): no atexit handlers */
#define GMT_END_SIGNAL   "signal"    /* a fatal signal value (we flushed, then
				      * it killed the process the default way) */
#define GMT_END_SHUTDOWN "shutdown"  /* gmt_tracer_shutdown(), value 0        */

/* Event types (column "type", one byte), kinds, APIs and owners: the lists
 * are in gmt_format.def (one line each: number, name, key, meaning). */
/* TEXT_STACK ids start here, so an event's stack column tells the two kinds
 * apart: native STACK ids count up from 1 and never get this far. */
#define GMT_TEXT_STACK_ID_BASE 0x80000000u
#define GMT_STACK_IS_TEXT(id)  ((uint32_t)(id) >= GMT_TEXT_STACK_ID_BASE)

enum gmt_ev_type {
#define GMT_EV(name, number, key) GMT_EV_##name = (number),
#include "gmt_format.def"
};
/* The largest number (the table's last: gmt_names.c checks it is the
 * largest). */
enum { GMT_EV_TYPE_MAX = 0
#define GMT_EV(name, number, key) * 0 + (number)
#include "gmt_format.def"
};

/* aux of CTX_DESTROY (1.3). A context created with cuCtxCreate has no flag;
 * the primary context is destroyed by its last cuDevicePrimaryCtxRelease
 * (the preload then finds it inactive) or by cuDevicePrimaryCtxReset
 * (cudaDeviceReset). */
enum gmt_ctx_flags {
	GMT_CTX_PRIMARY = 0x1,
	GMT_CTX_RESET   = 0x2
};

/* aux for ALLOC / FREE / ALLOC_FAIL / FREE_FAIL / VMM_CREATE / VMM_RELEASE:
 *   bits  0-7  kind, 8-15 api, 16-23 owner, 24-31 flags, 32-63 result. */
#define GMT_AUX(kind, api, owner) \
	((uint64_t)(kind) | (uint64_t)(api) << 8 | (uint64_t)(owner) << 16)
#define GMT_AUX_KIND(a)   ((unsigned)((a) & 0xff))
#define GMT_AUX_API(a)    ((unsigned)(((a) >> 8) & 0xff))
#define GMT_AUX_OWNER(a)  ((unsigned)(((a) >> 16) & 0xff))
#define GMT_AUX_FLAGS(a)  ((unsigned)(((a) >> 24) & 0xff))
#define GMT_AUX_RESULT(a) ((unsigned)((a) >> 32))
#define GMT_AUX_WITH_RESULT(a, r) (((a) & 0xffffffffull) | (uint64_t)(uint32_t)(r) << 32)

enum gmt_kind {
#define GMT_KIND(name, number, key) GMT_KIND_##name = (number),
#include "gmt_format.def"
};
/* The largest number (the table's last: gmt_names.c checks it is the
 * largest). */
enum { GMT_KIND_MAX = 0
#define GMT_KIND(name, number, key) * 0 + (number)
#include "gmt_format.def"
};

enum gmt_api {
#define GMT_API(name, number, key) GMT_API_##name = (number),
#include "gmt_format.def"
};
/* The largest number (the table's last: gmt_names.c checks it is the
 * largest). */
enum { GMT_API_MAX = 0
#define GMT_API(name, number, key) * 0 + (number)
#include "gmt_format.def"
};

enum gmt_owner {
#define GMT_OWNER(name, number, key) GMT_OWNER_##name = (number),
#include "gmt_format.def"
};
/* The largest number (the table's last: gmt_names.c checks it is the
 * largest). */
enum { GMT_OWNER_MAX = 0
#define GMT_OWNER(name, number, key) * 0 + (number)
#include "gmt_format.def"
};

/* aux flags (bits 24-31 of aux) */
#define GMT_FLAG_PTSZ     0x01u   /* the per-thread-default-stream variant */
#define GMT_FLAG_CAPTURED 0x02u   /* (1.3) made on a stream being captured: a
				     CUDA graph memory node, backed from the
				     graph memory pool only when the graph runs */
#define GMT_FLAG_ESTIMATED 0x04u  /* (1.4) an array's size from its descriptor
				     (the driver gave no memory requirements) */
#define GMT_FLAG_DEFERRED  0x08u  /* (1.4) an array made with
				     CUDA_ARRAY3D_DEFERRED_MAPPING: its size is
				     what it needs; its memory is mapped into it
				     later (from VMM allocations), none is its own */
#define GMT_FLAG_GRAPH_NODE 0x10u /* (1.4) with GMT_FLAG_CAPTURED: a memory node
				     added with the graph API; stream = the graph */

/* aux of MODULE_LOAD / MODULE_UNLOAD (1.4): which call. */
enum gmt_module_call {
	GMT_MODULE_LOAD = 1,
	GMT_MODULE_LOAD_DATA = 2,
	GMT_MODULE_LOAD_DATA_EX = 3,
	GMT_MODULE_LOAD_FAT_BINARY = 4,
	GMT_LIBRARY_LOAD_DATA = 5,
	GMT_LIBRARY_LOAD_FROM_FILE = 6,
	GMT_MODULE_UNLOAD = 7,
	GMT_LIBRARY_UNLOAD = 8
};

/* aux of MEMINFO (1.4): 0 = the tracer's own sample, GMT_MEMINFO_PROGRAM =
 * what the program's own cuMemGetInfo returned. */
#define GMT_MEMINFO_PROGRAM 0x1u

enum gmt_sync_kind {
	GMT_SYNC_STREAM = 1,
	GMT_SYNC_CTX    = 2,
	GMT_SYNC_EVENT  = 3
};

enum gmt_nccl_call {
	GMT_NCCL_COMM_INIT_RANK = 1,
	GMT_NCCL_COMM_INIT_ALL = 2,
	GMT_NCCL_COMM_INIT_RANK_CONFIG = 3,
	GMT_NCCL_COMM_SPLIT = 4,
	GMT_NCCL_COMM_DESTROY = 5,
	GMT_NCCL_COMM_ABORT = 6,
	GMT_NCCL_MEM_ALLOC = 7,
	GMT_NCCL_MEM_FREE = 8,
	GMT_NCCL_COMM_INIT_RANK_SCALABLE = 9,
	GMT_NCCL_COMM_SHRINK = 10
};

/* EVENTS record flags */
#define GMT_EVENTS_LATE 0x1u  /* batch holds events older than an earlier batch */
#define GMT_EVENTS_SIDE 0x2u  /* the side stream: events emitted with an
                                 explicit past time (gmt_emit_side) */
#define GMT_EVENTS_IDS_RESET 0x4u /* (EVENTS2) allocation ids start again from
                                 here: the writer lost a frame            */

/* RANGE_BEGIN / RANGE_END / MARK: where the range came from (stream field). */
enum gmt_range_source {
	GMT_RANGE_API = 1,          /* gpumemtrace_phase_begin/end, _mark        */
	GMT_RANGE_NVTX_PUSHPOP = 2, /* nvtxRangePush/Pop (all forms)             */
	GMT_RANGE_NVTX_STARTEND = 3 /* nvtxRangeStart/End (all forms)            */
};

/* FW_* flags (aux bits 32-63). */
#define GMT_FW_FLAG_PAST_TIME 0x1u  /* time given by the framework, converted */
#define GMT_FW_FLAG_SNAPSHOT  0x2u  /* moved from a history snapshot          */
#define GMT_FW_FLAG_NVTX_MEM  0x4u  /* from the NVTX memory extension         */

/* Column order inside an EVENTS record (after the 4 leading fields). */
enum gmt_column {
	GMT_COL_TYPE = 0,   /* n raw bytes                                      */
	GMT_COL_TS,         /* uvarint delta to the previous event (first: base) */
	GMT_COL_THREAD,     /* uvarint thread index                             */
	GMT_COL_DEVICE,     /* uvarint device + 1 (0 = no device)               */
	GMT_COL_ADDR,       /* zigzag varint delta to previous event's addr     */
	GMT_COL_SIZE,       /* uvarint                                          */
	GMT_COL_STREAM,     /* zigzag varint delta to previous event's stream   */
	GMT_COL_STACK,      /* uvarint stack id (0 = none)                      */
	GMT_COL_AUX,        /* uvarint                                          */
	GMT_COL_COUNT
};

/* Columns of an EVENTS2 record (1.4; schemas/trace-format.md, "EVENTS2
 * columns"). Every event has a type, a ts and a mask; the mask says which
 * other values it carries: a field left out repeats the previous event's
 * value (thread) or the previous value of an event of the same type in the
 * record (the others); a free names its allocation by id. */
enum gmt_column2 {
	GMT_C2_TYPE = 0,    /* n raw bytes                                      */
	GMT_C2_TS,          /* uvarint delta to the previous event (first: base) */
	GMT_C2_MASK,        /* n raw bytes: GMT_M_*                             */
	GMT_C2_THREAD,      /* uvarint thread index                   (M_THREAD) */
	GMT_C2_DEVICE,      /* uvarint device + 1                     (M_DEVICE) */
	GMT_C2_STREAM,      /* zigzag delta to the type's last stream (M_STREAM) */
	GMT_C2_STACK,       /* uvarint stack id                       (M_STACK)  */
	GMT_C2_AUX,         /* uvarint                                (M_AUX)    */
	GMT_C2_REF,         /* zigzag delta to the last allocation id: a FREE's  */
	GMT_C2_ADDR,        /* zigzag delta to the type's last addr: the rest   */
	GMT_C2_SIZE,        /* uvarint                                (M_SIZE)   */
	GMT_C2_COUNT
};
#define GMT_M_THREAD 0x01u  /* thread differs from the previous event's     */
#define GMT_M_DEVICE 0x02u  /* device, stream, stack, aux, size: differ from */
#define GMT_M_STREAM 0x04u  /* the previous value of this type's events in   */
#define GMT_M_STACK  0x08u  /* the record (0, device -1, at its start)        */
#define GMT_M_AUX    0x10u
#define GMT_M_NOID   0x20u  /* FREE: by address, not by id; ALLOC: takes no id */
#define GMT_M_SIZE   0x40u
#define GMT_M_ALL    0x7fu
/* EVENTS3 `shifts` (1.5): an ALLOC's or FREE's addr column holds its delta
 * divided by 2^GMT_SHIFTS_ADDR(shifts), its size column its size divided by
 * 2^GMT_SHIFTS_SIZE(shifts) (both exact); other types' values as EVENTS2. */
#define GMT_SHIFTS_ADDR(s)   ((s) & 0x3fu)
#define GMT_SHIFTS_SIZE(s)   ((s) >> 8 & 0x3fu)
#define GMT_SHIFTS(a, z)     ((unsigned)(a) | (unsigned)(z) << 8)
#define GMT_SHIFTS_VALID(s)  (((s) & ~0x3f3fu) == 0)
#define GMT_EV_SHIFTED(t)    ((t) == GMT_EV_ALLOC || (t) == GMT_EV_FREE)
/* Allocation ids are 1 to GMT_IDS_LIMIT: with no freed id to reuse and all
 * of them handed out, an ALLOC takes none. */
#define GMT_IDS_LIMIT (1u << 24)

/* Varint helpers used by both the writer and the reader. */
static inline uint64_t gmt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t gmt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes v as LEB128 into p (at least 10 bytes free); returns bytes used. */
static inline unsigned gmt_uvarint_put(uint8_t *p, uint64_t v)
{
	unsigned n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Reads one LEB128 value from [*pp, end). Returns 0, or -1 when the value
 * runs past end or is longer than 10 bytes. */
static inline int gmt_uvarint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;
	while (p < end) {
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

#endif /* GMT_FORMAT_H */
