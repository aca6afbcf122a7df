/*
 * gmt_decode.c - the streaming trace reader (schemas/trace-format.md).
 *
 * The file is read in chunks into a window that always holds at least the
 * current zstd frame; each frame is located with
 * ZSTD_findFrameCompressedSize, decompressed whole (its content size is in
 * the frame header; frames without one are streamed with a cap), and its
 * records are parsed with msgpack-c. Memory is bounded by one frame, never
 * by the length of the trace (plus, for EVENTS2, the addresses of the
 * allocations live at once: a free names its allocation by id, and ids are
 * reused as allocations go).
 *
 * Hostile input: every length is checked before use. msgpack-c allocates an
 * array of n objects as soon as it reads an array header claiming n
 * elements, so each record is first walked by a small allocation-free
 * skipper (mp_scan) that rejects any container claiming more elements than
 * bytes remain and any nesting deeper than msgpack-c accepts. The EVENTS
 * and EVENTS2 columns are decoded by hand (varints, zigzag deltas) into a
 * reusable array; each column must hold exactly its values and nothing
 * more, and a free by id must name a live allocation. EVENTS2's loop, the
 * reader's hottest, is in gmt_decode_ev2.h (one copy with BMI2's pext, one
 * without, chosen at run time).
 *
 * The first damage stops decoding with "FILE: offset N: ..." where N is the
 * file offset of the frame at fault; everything before it was delivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <msgpack.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "gmt_decode.h"

#define READ_CHUNK     (1u << 20)
#define MAX_FRAME_IN   (64u << 20)    /* compressed bytes of one frame   */
#define MAX_FRAME_OUT  (64u << 20)    /* decompressed bytes of one frame */
#define MAX_DEPTH      32

typedef struct dec {
	const char *name;
	const gmt_visitor_t *v;
	gmt_decode_result_t *res;
	/* input window */
	int fd;
	const uint8_t *mem;   /* in-memory image, or NULL */
	uint8_t *buf;
	size_t cap, len, pos; /* window: buf[pos, len) */
	uint64_t base;        /* file offset of buf[0] (or of mem[0]) */
	int eof;
	/* decoding */
	ZSTD_DCtx *dctx;
	uint8_t *out;
	size_t out_cap;
	gmt_devent_t *ev;
	size_t ev_cap;
	uint64_t *frames;
	size_t frames_cap;
	char *sc;             /* scratch for strings of one record */
	size_t sc_len, sc_cap;
	const char **ptrs;
	size_t ptrs_cap;
	gmt_kv_t *kvs;
	size_t kvs_cap;
	unsigned minor;
	int have_header;
	/* EVENTS2's allocation ids, across the whole file: id -> the live
	 * allocation's address and a bit for live (12 bytes and a bit an id:
	 * a trace holding millions of blocks at once), and the freed ids in
	 * the order the writer reuses them */
	uint64_t *id_addr;
	uint64_t *id_live;
	size_t ids_cap, id_live_cap;
	uint32_t id_next;
	uint32_t *id_free;
	size_t id_nfree, id_free_cap;
	uint64_t frame_off;
	size_t rec;           /* 1-based record index within the frame */
	int failed;           /* scratch allocation failed */
} dec_t;

static int damage(dec_t *d, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int damage(dec_t *d, uint64_t off, const char *fmt, ...)
{
	char what[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(d->res->message, sizeof(d->res->message), "%s: offset %llu: %s", d->name,
		 (unsigned long long)off, what);
	d->res->status = GMT_DECODE_DAMAGED;
	return -1;
}

/* ---- input window ------------------------------------------------------- */

static size_t avail(const dec_t *d)
{
	return d->len - d->pos;
}

static const uint8_t *cur(const dec_t *d)
{
	return (d->mem ? d->mem : d->buf) + d->pos;
}

static uint64_t cur_off(const dec_t *d)
{
	return d->base + d->pos;
}

/* Makes at least need bytes available (fewer only at end of file). Returns
 * 0, or -1 on a read error (status IO). */
static int fill(dec_t *d, size_t need)
{
	if (d->mem || avail(d) >= need || d->eof)
		return 0;
	if (d->pos) {
		memmove(d->buf, d->buf + d->pos, d->len - d->pos);
		d->base += d->pos;
		d->len -= d->pos;
		d->pos = 0;
	}
	if (need + READ_CHUNK > d->cap) {
		size_t cap = need + READ_CHUNK;
		uint8_t *b = realloc(d->buf, cap);
		if (!b) {
			snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
			d->res->status = GMT_DECODE_IO;
			return -1;
		}
		d->buf = b;
		d->cap = cap;
	}
	while (d->len < need && !d->eof) {
		ssize_t r = read(d->fd, d->buf + d->len, d->cap - d->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(d->res->message, sizeof(d->res->message), "%s: offset %llu: read error: %s",
				 d->name, (unsigned long long)(d->base + d->len), strerror(errno));
			d->res->status = GMT_DECODE_IO;
			return -1;
		}
		if (r == 0)
			d->eof = 1;
		d->len += (size_t)r;
	}
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- msgpack pre-scan --------------------------------------------------- */

/* Walks one msgpack object at [p, end) without allocating. Returns its end,
 * or NULL if it is malformed, truncated, nested deeper than MAX_DEPTH, or
 * has a container claiming more elements than bytes remain. */
static const uint8_t *mp_scan(const uint8_t *p, const uint8_t *end)
{
	uint64_t left[MAX_DEPTH + 1];
	int depth = 0;
	left[0] = 1;
	while (depth >= 0) {
		if (left[depth] == 0) {
			depth--;
			continue;
		}
		left[depth]--;
		if (p >= end)
			return NULL;
		uint8_t b = *p++;
		uint64_t skip = 0, items = 0;
		int container = 0;
		size_t hdr = 0;
		if (b <= 0x7f || b >= 0xe0 || (b >= 0xc0 && b <= 0xc3)) {
			if (b == 0xc1)
				return NULL;
		} else if (b >= 0xa0 && b <= 0xbf) {
			skip = b & 0x1f;
		} else if (b >= 0x90 && b <= 0x9f) {
			items = b & 0x0f;
			container = 1;
		} else if (b >= 0x80 && b <= 0x8f) {
			items = 2u * (b & 0x0f);
			container = 1;
		} else {
			switch (b) {
			case 0xc4: case 0xd9: hdr = 1; break;                      /* bin8 str8 */
			case 0xc5: case 0xda: hdr = 2; break;                      /* bin16 str16 */
			case 0xc6: case 0xdb: hdr = 4; break;                      /* bin32 str32 */
			case 0xc7: hdr = 1; break;                                 /* ext8 */
			case 0xc8: hdr = 2; break;                                 /* ext16 */
			case 0xc9: hdr = 4; break;                                 /* ext32 */
			case 0xca: skip = 4; break;
			case 0xcb: skip = 8; break;
			case 0xcc: case 0xd0: skip = 1; break;
			case 0xcd: case 0xd1: skip = 2; break;
			case 0xce: case 0xd2: skip = 4; break;
			case 0xcf: case 0xd3: skip = 8; break;
			case 0xd4: skip = 2; break;                                /* fixext */
			case 0xd5: skip = 3; break;
			case 0xd6: skip = 5; break;
			case 0xd7: skip = 9; break;
			case 0xd8: skip = 17; break;
			case 0xdc: case 0xde: hdr = 2; container = 1; break;
			case 0xdd: case 0xdf: hdr = 4; container = 1; break;
			default: return NULL;
			}
			if (hdr) {
				if ((size_t)(end - p) < hdr)
					return NULL;
				uint64_t n = 0;
				for (size_t i = 0; i < hdr; i++)
					n = n << 8 | p[i];
				p += hdr;
				if (container)
					items = (b == 0xde || b == 0xdf) ? 2 * n : n;
				else
					skip = n + (b >= 0xc7 && b <= 0xc9 ? 1 : 0);
			}
		}
		if ((uint64_t)(end - p) < skip)
			return NULL;
		p += skip;
		if (container && items) {
			if (items > (uint64_t)(end - p) || depth == MAX_DEPTH - 1)
				return NULL;
			left[++depth] = items;
		}
	}
	return p;
}

/* ---- typed field access ------------------------------------------------- */

static const char *const tag_names[] = {
	"?", "HEADER", "THREAD", "MODULE", "MODULE_UNLOAD", "STACK", "DEVICE",
	"EVENTS", "DROPS", "STRING", "END", "META", "TEXT_STACK",
	"?", "?", "?", "?", "EVENTS2", "EVENTS3",
};

static int wrong(dec_t *d, unsigned tag, const char *field)
{
	return damage(d, d->frame_off, "wrong type for field %s of record %zu (%s) of the frame",
		      field, d->rec, tag <= GMT_REC_TAG_MAX ? tag_names[tag] : "?");
}

static int get_u64(const msgpack_object *o, uint64_t *v)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -1;
	*v = o->via.u64;
	return 0;
}

static int get_u32(const msgpack_object *o, uint32_t *v)
{
	uint64_t x;
	if (get_u64(o, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int get_int(const msgpack_object *o, int *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX) {
		*v = (int)o->via.u64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN) {
		*v = (int)o->via.i64;
		return 0;
	}
	return -1;
}

static int get_bool(const msgpack_object *o, int *v)
{
	if (o->type == MSGPACK_OBJECT_BOOLEAN) {
		*v = o->via.boolean;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = o->via.u64 != 0;
		return 0;
	}
	return -1;
}

/* Strings are copied NUL-terminated into the record's scratch space. The
 * scratch is sized up front for the whole record (see record()), so the
 * pointers stay valid until the next record. */
static int get_str(dec_t *d, const msgpack_object *o, const char **s, size_t *len)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return -1;
	size_t n = o->via.str.size;
	if (d->sc_len + n + 1 > d->sc_cap) {
		d->failed = 1;
		*s = "";
		if (len)
			*len = 0;
		return 0;
	}
	char *p = d->sc + d->sc_len;
	if (n)   /* an empty string has no pointer (msgpack-c) */
		memcpy(p, o->via.str.ptr, n);
	p[n] = 0;
	d->sc_len += n + 1;
	*s = p;
	if (len)
		*len = n;
	return 0;
}

static int key_is(const msgpack_object *k, const char *s)
{
	size_t n = strlen(s);
	return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
	       !memcmp(k->via.str.ptr, s, n);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *n = realloc(*p, c * elem);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/* ---- records ------------------------------------------------------------ */

#define CB(d, fn, ...) ((d)->v->fn ? (d)->v->fn((d)->v->ctx, __VA_ARGS__) : 0)

static int rec_header(dec_t *d, const msgpack_object *a, size_t n)
{
	const msgpack_object *m = &a[1];
	/* One process, one HEADER: a second one is another trace's, or damage. */
	if (d->have_header)
		return damage(d, d->frame_off, "record %zu of the frame is a second HEADER (another "
			      "trace's, or damage): read up to here", d->rec);
	if (m->type != MSGPACK_OBJECT_MAP)
		return wrong(d, GMT_REC_HEADER, "map");
	gmt_header_t h;
	memset(&h, 0, sizeof(h));
	h.tool_version = h.host = h.exe = "";
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key, *v = &m->via.map.ptr[i].val;
		uint64_t u = 0;
		int bad = 0;
		if (key_is(k, "format_major")) {
			bad = get_u64(v, &u) || u > UINT32_MAX;
			h.format_major = (unsigned)u;
		} else if (key_is(k, "format_minor")) {
			bad = get_u64(v, &u) || u > UINT32_MAX;
			h.format_minor = (unsigned)u;
		} else if (key_is(k, "tool_version")) {
			bad = get_str(d, v, &h.tool_version, NULL);
		} else if (key_is(k, "pid")) {
			bad = get_u64(v, &h.pid);
		} else if (key_is(k, "ppid")) {
			bad = get_u64(v, &h.ppid);
		} else if (key_is(k, "host")) {
			bad = get_str(d, v, &h.host, NULL);
		} else if (key_is(k, "exe")) {
			bad = get_str(d, v, &h.exe, NULL);
		} else if (key_is(k, "clock_monotonic_ns")) {
			bad = get_u64(v, &h.clock_monotonic_ns);
		} else if (key_is(k, "clock_realtime_ns")) {
			bad = get_u64(v, &h.clock_realtime_ns);
		} else if (key_is(k, "stack_depth")) {
			bad = get_u64(v, &u) || u > UINT32_MAX;
			h.stack_depth = (unsigned)u;
		} else if (key_is(k, "free_stacks")) {
			bad = get_bool(v, &h.free_stacks);
		} else if (key_is(k, "cmdline")) {
			bad = v->type != MSGPACK_OBJECT_ARRAY;
			if (!bad) {
				size_t c = v->via.array.size;
				if (grow((void **)&d->ptrs, &d->ptrs_cap, c + 1, sizeof(*d->ptrs))) {
					d->failed = 1;
					continue;
				}
				for (size_t j = 0; j < c && !bad; j++)
					bad = get_str(d, &v->via.array.ptr[j], &d->ptrs[j], NULL);
				h.cmdline = d->ptrs;
				h.n_cmdline = c;
			}
		} else if (key_is(k, "env")) {
			bad = v->type != MSGPACK_OBJECT_MAP;
			if (!bad) {
				size_t c = v->via.map.size;
				if (grow((void **)&d->kvs, &d->kvs_cap, c + 1, sizeof(*d->kvs))) {
					d->failed = 1;
					continue;
				}
				for (size_t j = 0; j < c && !bad; j++)
					bad = get_str(d, &v->via.map.ptr[j].key, &d->kvs[j].key, NULL) ||
					      get_str(d, &v->via.map.ptr[j].val, &d->kvs[j].value, NULL);
				h.env = d->kvs;
				h.n_env = c;
			}
		}
		if (bad) {
			char f[64];
			snprintf(f, sizeof(f), "HEADER.%.*s", (int)(k->via.str.size > 40 ? 40 : k->via.str.size),
				 k->via.str.ptr);
			return wrong(d, GMT_REC_HEADER, f);
		}
	}
	(void)n;
	d->have_header = 1;
	return CB(d, header, &h);
}

static int rec_device(dec_t *d, const msgpack_object *a)
{
	const msgpack_object *m = &a[1];
	if (m->type != MSGPACK_OBJECT_MAP)
		return wrong(d, GMT_REC_DEVICE, "map");
	gmt_device_rec_t r;
	memset(&r, 0, sizeof(r));
	r.name = r.pci_bus_id = "";
	r.ordinal = -1;
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key, *v = &m->via.map.ptr[i].val;
		int bad = 0;
		uint64_t u = 0;
		const char *f = NULL;
		if (key_is(k, "ordinal"))
			bad = get_int(v, &r.ordinal), f = "DEVICE.ordinal";
		else if (key_is(k, "name"))
			bad = get_str(d, v, &r.name, NULL), f = "DEVICE.name";
		else if (key_is(k, "uuid")) {
			bad = v->type != MSGPACK_OBJECT_BIN || v->via.bin.size != 16;
			f = "DEVICE.uuid";
			if (!bad)
				memcpy(r.uuid, v->via.bin.ptr, 16);
		} else if (key_is(k, "pci_bus_id"))
			bad = get_str(d, v, &r.pci_bus_id, NULL), f = "DEVICE.pci_bus_id";
		else if (key_is(k, "total_bytes"))
			bad = get_u64(v, &u), r.total_bytes = u, f = "DEVICE.total_bytes";
		else if (key_is(k, "cc_major"))
			bad = get_int(v, &r.cc_major), f = "DEVICE.cc_major";
		else if (key_is(k, "cc_minor"))
			bad = get_int(v, &r.cc_minor), f = "DEVICE.cc_minor";
		else if (key_is(k, "driver_version"))
			bad = get_int(v, &r.driver_version), f = "DEVICE.driver_version";
		if (bad)
			return wrong(d, GMT_REC_DEVICE, f);
	}
	return CB(d, device, &r);
}

/* A varint into v, or "column col is damaged" (bad = col, goto fail): one
 * byte inline, longer ones by f (EV2_UV below). */
#define UVF(f, p, end, v, col) do { \
	if (GMT_LIKELY_DEC((p) < (end) && *(p) < 0x80)) (v) = *(p)++; \
	else if (f(&(p), (end), &(v))) { bad = (col); goto fail; } \
} while (0)
#define UV(p, end, v, col) UVF(uv_long, p, end, v, col)
#define GMT_LIKELY_DEC(x) __builtin_expect(!!(x), 1)

static const char *const col2_names[GMT_C2_COUNT] = {
	"type", "ts", "mask", "thread", "device", "stream", "stack", "aux", "ref", "addr", "size",
};

static int oom(dec_t *d)
{
	snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
	d->res->status = GMT_DECODE_IO;
	return -1;
}

/* EVENTS2's loop (gmt_decode_ev2.h), twice: as is (its varint function,
 * uv_long, serves EVENTS too), and where the compiler can target BMI2,
 * with pext packing a long varint's 7-bit groups. The copy with pext runs
 * only on processors where pext is one fast instruction (Intel's and Zen
 * 3's; older AMD ones run it in microcode, slower than the plain steps;
 * later ones this compiler cannot name yet take the plain copy). */
#define EV2_UV uv_long
#define EV2_LOOP ev2_loop
#define EV2_TARGET
/* The bytes past the varint shifted out, and the 7-bit groups gathered
 * pairwise (two bytes, then two 14-bit groups, then two 28-bit ones). */
static inline uint64_t ev2_gather(uint64_t w, unsigned bits)
{
	w <<= 64 - bits;
	w >>= 64 - bits;
	w = (w & 0x007f007f007f007full) | (w >> 1 & 0x3f803f803f803f80ull);
	w = (w & 0x00003fff00003fffull) | (w >> 2 & 0x0fffc0000fffc000ull);
	w = (w & 0x000000000fffffffull) | (w >> 4 & 0x00fffffff0000000ull);
	return w;
}
#define EV2_GATHER(w, bits) ev2_gather((w), (bits))
#include "gmt_decode_ev2.h"
#undef EV2_UV
#undef EV2_LOOP
#undef EV2_TARGET
#undef EV2_GATHER

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define EV2_UV uv_long_bmi2
#define EV2_LOOP ev2_loop_bmi2
#define EV2_TARGET __attribute__((target("bmi,bmi2")))
#define EV2_GATHER(w, bits) _pext_u64(_bzhi_u64((w), (bits)), 0x7f7f7f7f7f7f7f7full)
#include "gmt_decode_ev2.h"
#undef EV2_UV
#undef EV2_LOOP
#undef EV2_TARGET
#undef EV2_GATHER

/* -1 undecided, else whether pext is used: there and fast (decided once;
 * decoders may run in several threads). */
static int ev2_pext = -1;

static int ev2_pext_fast(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("bmi2") && (__builtin_cpu_is("intel") || __builtin_cpu_is("znver3"));
}

static int ev2_use_bmi2(void)
{
	int u = __atomic_load_n(&ev2_pext, __ATOMIC_RELAXED);
	if (u < 0) {
		u = ev2_pext_fast();
		__atomic_store_n(&ev2_pext, u, __ATOMIC_RELAXED);
	}
	return u;
}

int gmt_decode_pext(int want)
{
	if (want >= 0)
		__atomic_store_n(&ev2_pext, want && ev2_pext_fast(), __ATOMIC_RELAXED);
	return ev2_use_bmi2();
}
#else
#define ev2_loop_bmi2 ev2_loop
static int ev2_use_bmi2(void)
{
	return 0;
}

int gmt_decode_pext(int want)
{
	(void)want;
	return 0;
}
#endif


static const char *const col_names[GMT_COL_COUNT] = {
	"type", "ts", "thread", "device", "addr", "size", "stream", "stack", "aux",
};

/* The fields of an EVENTS, EVENTS2 or EVENTS3 record before its events: n,
 * base_ts, flags, and the k columns' bytes [p[c], e[c]) from a[at] on. */
static int rec_events_head(dec_t *d, const msgpack_object *a, unsigned tag, int at, int k,
			   const char *const *names, uint64_t *n, uint64_t *base, uint32_t *flags,
			   const uint8_t **p, const uint8_t **e)
{
	char f[32];
	const char *rn = tag_names[tag];
	if (get_u64(&a[1], n))
		return snprintf(f, sizeof(f), "%s.n", rn), wrong(d, tag, f);
	if (get_u64(&a[2], base))
		return snprintf(f, sizeof(f), "%s.base_ts", rn), wrong(d, tag, f);
	if (get_u32(&a[3], flags))
		return snprintf(f, sizeof(f), "%s.flags", rn), wrong(d, tag, f);
	for (int c = 0; c < k; c++) {
		const msgpack_object *o = &a[at + c];
		if (o->type != MSGPACK_OBJECT_BIN)
			return snprintf(f, sizeof(f), "%s.%s", rn, names[c]), wrong(d, tag, f);
		p[c] = (const uint8_t *)o->via.bin.ptr;
		e[c] = p[c] + o->via.bin.size;
	}
	return 0;
}

static int rec_events(dec_t *d, const msgpack_object *a)
{
	uint64_t n, base;
	uint32_t flags;
	const uint8_t *p[GMT_COL_COUNT], *e[GMT_COL_COUNT];
	if (rec_events_head(d, a, GMT_REC_EVENTS, 4, GMT_COL_COUNT, col_names, &n, &base, &flags, p, e))
		return -1;
	/* n is bounded by the type column (one byte an event), hence by the
	 * frame size, before anything is allocated. */
	if ((uint64_t)(e[GMT_COL_TYPE] - p[GMT_COL_TYPE]) != n)
		return damage(d, d->frame_off, "column type has wrong length in record %zu (EVENTS) "
			      "of the frame (%zu bytes for %llu events)", d->rec,
			      (size_t)(e[GMT_COL_TYPE] - p[GMT_COL_TYPE]), (unsigned long long)n);
	if (grow((void **)&d->ev, &d->ev_cap, n ? n : 1, sizeof(*d->ev))) {
		snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
		d->res->status = GMT_DECODE_IO;
		return -1;
	}
	gmt_devent_t *ev = d->ev;
	const uint8_t *pt = p[GMT_COL_TS], *pth = p[GMT_COL_THREAD], *pd = p[GMT_COL_DEVICE],
		      *pa = p[GMT_COL_ADDR], *ps = p[GMT_COL_SIZE], *pst = p[GMT_COL_STREAM],
		      *pk = p[GMT_COL_STACK], *px = p[GMT_COL_AUX];
	const uint8_t *types = p[GMT_COL_TYPE];
	uint64_t ts = base, addr = 0, stream = 0;
	int bad = -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		gmt_devent_t *x = &ev[i];
		x->type = types[i];
		UV(pt, e[GMT_COL_TS], v, GMT_COL_TS);
		ts += v;
		x->ts = ts;
		UV(pth, e[GMT_COL_THREAD], v, GMT_COL_THREAD);
		if (v > UINT32_MAX) {
			bad = GMT_COL_THREAD;
			goto fail;
		}
		x->thread = (uint32_t)v;
		UV(pd, e[GMT_COL_DEVICE], v, GMT_COL_DEVICE);
		if (v > (uint64_t)INT16_MAX + 1) {
			bad = GMT_COL_DEVICE;
			goto fail;
		}
		x->device = (int16_t)((int64_t)v - 1);
		UV(pa, e[GMT_COL_ADDR], v, GMT_COL_ADDR);
		addr += (uint64_t)gmt_unzigzag(v);
		x->addr = addr;
		UV(ps, e[GMT_COL_SIZE], v, GMT_COL_SIZE);
		x->size = v;
		UV(pst, e[GMT_COL_STREAM], v, GMT_COL_STREAM);
		stream += (uint64_t)gmt_unzigzag(v);
		x->stream = stream;
		UV(pk, e[GMT_COL_STACK], v, GMT_COL_STACK);
		if (v > UINT32_MAX) {
			bad = GMT_COL_STACK;
			goto fail;
		}
		x->stack = (uint32_t)v;
		UV(px, e[GMT_COL_AUX], v, GMT_COL_AUX);
		x->aux = v;
		x->alloc_id = 0;
	}
	const uint8_t *ends[GMT_COL_COUNT] = { e[0], pt, pth, pd, pa, ps, pst, pk, px };
	for (int c = 1; c < GMT_COL_COUNT; c++) {
		if (ends[c] != e[c]) {
			bad = c;
			goto fail;
		}
	}
	d->res->events += n;
	return CB(d, events, ev, (size_t)n, flags);
fail:
	return damage(d, d->frame_off, "column %s has wrong length in record %zu (EVENTS) of the frame",
		      col_names[bad], d->rec);
}

/* Decodes an EVENTS2 record (1.4) into d->ev: the same events as EVENTS,
 * each field present only where its mask says (else the previous value,
 * schemas/trace-format.md), frees named by allocation id; or (tag EVENTS3,
 * 1.5) the same with its ALLOCs' and FREEs' addr deltas and sizes in units
 * of 2^shift. */
static int rec_events2(dec_t *d, const msgpack_object *a, unsigned tag)
{
	uint64_t n, base;
	uint32_t flags, shifts = 0;
	const char *rn = tag_names[tag];
	const uint8_t *p[GMT_C2_COUNT], *e[GMT_C2_COUNT];
	if (tag == GMT_REC_EVENTS3 && (get_u32(&a[4], &shifts) || !GMT_SHIFTS_VALID(shifts)))
		return wrong(d, tag, "EVENTS3.shifts");
	if (rec_events_head(d, a, tag, tag == GMT_REC_EVENTS3 ? 5 : 4, GMT_C2_COUNT, col2_names, &n, &base,
			    &flags, p, e))
		return -1;
	int bad = -1;
	for (int c = GMT_C2_TYPE; c <= GMT_C2_MASK; c += GMT_C2_MASK - GMT_C2_TYPE)
		if ((uint64_t)(e[c] - p[c]) != n)
			bad = c;
	if (bad >= 0)
		return damage(d, d->frame_off, "column %s has wrong length in record %zu (%s) "
			      "of the frame (%zu bytes for %llu events)", col2_names[bad], d->rec, rn,
			      (size_t)(e[bad] - p[bad]), (unsigned long long)n);
	if (grow((void **)&d->ev, &d->ev_cap, n ? n : 1, sizeof(*d->ev)))
		return oom(d);
	if (flags & GMT_EVENTS_IDS_RESET) {
		d->id_next = 0;
		d->id_nfree = 0;
	}
	return ev2_use_bmi2() ? ev2_loop_bmi2(d, n, base, flags, shifts, rn, p, e)
			       : ev2_loop(d, n, base, flags, shifts, rn, p, e);
}

/* Records that grew, with trailing fields a reader takes when present: the
 * count from the minor version that added them on (0: as rec_len). */
static const size_t rec_len_1_4[GMT_REC_TAG_MAX + 1] = {
	[GMT_REC_MODULE] = 9,   /* + soname, file */
	[GMT_REC_END] = 7,      /* + how, value */
};

/* Checks the field count: need, or what the file's version may add; more
 * only in a newer minor. */
static int fields(dec_t *d, unsigned tag, size_t have, size_t need)
{
	if (have == need || (d->minor >= 4 && rec_len_1_4[tag] && have == rec_len_1_4[tag]))
		return 0;
	if (have > need && d->minor > GMT_FORMAT_MINOR) {
		d->res->newer_fields++;
		return 0;
	}
	return damage(d, d->frame_off, "record %zu (%s) of the frame has %zu fields, expected %zu",
		      d->rec, tag_names[tag], have - 1, need - 1);
}

static const size_t rec_len[GMT_REC_TAG_MAX + 1] = {
	[GMT_REC_HEADER] = 2, [GMT_REC_THREAD] = 4, [GMT_REC_MODULE] = 7,
	[GMT_REC_MODULE_UNLOAD] = 3, [GMT_REC_STACK] = 3, [GMT_REC_DEVICE] = 2,
	[GMT_REC_EVENTS] = 4 + GMT_COL_COUNT, [GMT_REC_DROPS] = 6, [GMT_REC_STRING] = 3,
	[GMT_REC_END] = 5, [GMT_REC_META] = 3, [GMT_REC_TEXT_STACK] = 3,
	[GMT_REC_EVENTS2] = 4 + GMT_C2_COUNT, [GMT_REC_EVENTS3] = 5 + GMT_C2_COUNT,
};

/* Counts a skipped record of a newer minor version and keeps its tag
 * among the first distinct ones, in ascending order. */
static void newer_tag(gmt_decode_result_t *res, uint64_t tag)
{
	const size_t cap = sizeof(res->newer_tags) / sizeof(res->newer_tags[0]);
	unsigned t = tag > UINT_MAX ? UINT_MAX : (unsigned)tag;
	size_t i = 0;
	res->newer_records++;
	while (i < res->n_newer_tags && res->newer_tags[i] < t)
		i++;
	if ((i < res->n_newer_tags && res->newer_tags[i] == t) || res->n_newer_tags == cap)
		return;
	memmove(res->newer_tags + i + 1, res->newer_tags + i, (res->n_newer_tags - i) * sizeof(unsigned));
	res->newer_tags[i] = t;
	res->n_newer_tags++;
}

static int record(dec_t *d, const msgpack_object *o)
{
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 1 ||
	    o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || o->via.array.ptr[0].via.u64 == 0)
		return damage(d, d->frame_off, "malformed msgpack record %zu of the frame "
			      "(expected an array starting with a record tag)", d->rec);
	const msgpack_object *a = o->via.array.ptr;
	size_t n = o->via.array.size;
	uint64_t tag = a[0].via.u64;
	if (tag > GMT_REC_TAG_MAX || !rec_len[tag]) {
		if (d->minor > GMT_FORMAT_MINOR && d->have_header) {
			newer_tag(d->res, tag);   /* a newer minor version's record: skipped */
			return 0;
		}
		return damage(d, d->frame_off, "unknown record tag %llu in record %zu of the frame",
			      (unsigned long long)tag, d->rec);
	}
	if (!d->have_header && tag != GMT_REC_HEADER)
		return damage(d, d->frame_off, "record %zu of the frame is %s, expected the HEADER record first",
			      d->rec, tag_names[tag]);
	if (fields(d, (unsigned)tag, n, rec_len[tag]))
		return -1;
	uint32_t id;
	uint64_t u1, u2, u3, u4;
	const char *s;
	size_t sl;
	switch (tag) {
	case GMT_REC_HEADER:
		return rec_header(d, a, n);
	case GMT_REC_THREAD:
		if (get_u32(&a[1], &id))
			return wrong(d, tag, "THREAD.idx");
		if (get_u64(&a[2], &u1))
			return wrong(d, tag, "THREAD.tid");
		if (get_str(d, &a[3], &s, NULL))
			return wrong(d, tag, "THREAD.name");
		return CB(d, thread, id, u1, s);
	case GMT_REC_MODULE: {
		gmt_module_t m;
		memset(&m, 0, sizeof(m));
		if (get_u32(&a[1], &m.id))
			return wrong(d, tag, "MODULE.id");
		if (get_str(d, &a[2], &m.path, NULL))
			return wrong(d, tag, "MODULE.path");
		if (get_u64(&a[3], &m.base))
			return wrong(d, tag, "MODULE.base");
		if (get_u64(&a[4], &m.size))
			return wrong(d, tag, "MODULE.size");
		if (a[5].type != MSGPACK_OBJECT_BIN)
			return wrong(d, tag, "MODULE.build_id");
		m.build_id = (const uint8_t *)a[5].via.bin.ptr;
		m.build_id_len = a[5].via.bin.size;
		if (get_u64(&a[6], &m.ts))
			return wrong(d, tag, "MODULE.ts");
		if (n >= 9 && get_str(d, &a[7], &m.soname, NULL))
			return wrong(d, tag, "MODULE.soname");
		if (n >= 9 && get_str(d, &a[8], &m.file, NULL))
			return wrong(d, tag, "MODULE.file");
		return CB(d, module, &m);
	}
	case GMT_REC_MODULE_UNLOAD:
		if (get_u32(&a[1], &id))
			return wrong(d, tag, "MODULE_UNLOAD.id");
		if (get_u64(&a[2], &u1))
			return wrong(d, tag, "MODULE_UNLOAD.ts");
		return CB(d, module_unload, id, u1);
	case GMT_REC_STACK: {
		if (get_u32(&a[1], &id) || id == 0)
			return wrong(d, tag, "STACK.id");
		if (a[2].type != MSGPACK_OBJECT_ARRAY)
			return wrong(d, tag, "STACK.frames");
		size_t c = a[2].via.array.size;
		if (grow((void **)&d->frames, &d->frames_cap, c + 1, sizeof(*d->frames))) {
			snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
			d->res->status = GMT_DECODE_IO;
			return -1;
		}
		for (size_t i = 0; i < c; i++)
			if (get_u64(&a[2].via.array.ptr[i], &d->frames[i]))
				return wrong(d, tag, "STACK.frames");
		return CB(d, stack, id, d->frames, c);
	}
	case GMT_REC_DEVICE:
		return rec_device(d, a);
	case GMT_REC_EVENTS:
		return rec_events(d, a);
	case GMT_REC_EVENTS2:
	case GMT_REC_EVENTS3:
		return rec_events2(d, a, (unsigned)tag);
	case GMT_REC_DROPS: {
		gmt_drops_t r;
		if (get_u64(&a[1], &r.count))
			return wrong(d, tag, "DROPS.count");
		if (get_u64(&a[2], &r.first_ts))
			return wrong(d, tag, "DROPS.first_ts");
		if (get_u64(&a[3], &r.last_ts))
			return wrong(d, tag, "DROPS.last_ts");
		if (get_str(d, &a[4], &r.reason, NULL))
			return wrong(d, tag, "DROPS.reason");
		if (get_int(&a[5], &r.err))
			return wrong(d, tag, "DROPS.errno");
		d->res->dropped += r.count;
		if (r.count && (!d->res->drop_first_ts || r.first_ts < d->res->drop_first_ts))
			d->res->drop_first_ts = r.first_ts;
		if (r.count && r.last_ts > d->res->drop_last_ts)
			d->res->drop_last_ts = r.last_ts;
		return CB(d, drops, &r);
	}
	case GMT_REC_STRING:
		if (get_u32(&a[1], &id) || id == 0)
			return wrong(d, tag, "STRING.id");
		if (get_str(d, &a[2], &s, &sl))
			return wrong(d, tag, "STRING.text");
		return CB(d, string, id, s, sl);
	case GMT_REC_END: {
		gmt_end_t r;
		if (get_u64(&a[1], &u1) || get_u64(&a[2], &u2) || get_u64(&a[3], &u3) ||
		    get_u64(&a[4], &u4))
			return wrong(d, tag, "END");
		r.ts = u1;
		r.written = u2;
		r.dropped = u3;
		r.late = u4;
		r.how = "";
		r.value = 0;
		if (n >= 7 && (get_str(d, &a[5], &r.how, NULL) || get_int(&a[6], &r.value)))
			return wrong(d, tag, "END.how");
		d->res->ended_cleanly = 1;
		d->res->end_dropped = r.dropped;
		return CB(d, end, &r);
	}
	case GMT_REC_META: {
		if (get_u64(&a[1], &u1))
			return wrong(d, tag, "META.ts");
		if (a[2].type != MSGPACK_OBJECT_MAP)
			return wrong(d, tag, "META.map");
		size_t c = a[2].via.map.size;
		if (grow((void **)&d->kvs, &d->kvs_cap, c + 1, sizeof(*d->kvs))) {
			snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
			d->res->status = GMT_DECODE_IO;
			return -1;
		}
		for (size_t i = 0; i < c; i++)
			if (get_str(d, &a[2].via.map.ptr[i].key, &d->kvs[i].key, NULL) ||
			    get_str(d, &a[2].via.map.ptr[i].val, &d->kvs[i].value, NULL))
				return wrong(d, tag, "META.map");
		return CB(d, meta, u1, d->kvs, c);
	}
	case GMT_REC_TEXT_STACK: {
		if (get_u32(&a[1], &id) || !GMT_STACK_IS_TEXT(id))
			return wrong(d, tag, "TEXT_STACK.id");
		if (a[2].type != MSGPACK_OBJECT_ARRAY)
			return wrong(d, tag, "TEXT_STACK.frames");
		size_t c = a[2].via.array.size;
		if (grow((void **)&d->ptrs, &d->ptrs_cap, c + 1, sizeof(*d->ptrs))) {
			snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
			d->res->status = GMT_DECODE_IO;
			return -1;
		}
		for (size_t i = 0; i < c; i++)
			if (get_str(d, &a[2].via.array.ptr[i], &d->ptrs[i], NULL))
				return wrong(d, tag, "TEXT_STACK.frames");
		return CB(d, text_stack, id, d->ptrs, c);
	}
	}
	return 0;
}

/* Parses the records of one decompressed frame. Returns 0, -1 (damage or
 * I/O: status set) or 1 (stopped by the visitor). */
static int frame_records(dec_t *d, const uint8_t *data, size_t size)
{
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	size_t off = 0;
	int rc = 0;
	d->rec = 0;
	while (off < size) {
		d->rec++;
		const uint8_t *end = mp_scan(data + off, data + size);
		if (!end) {
			rc = damage(d, d->frame_off, "malformed msgpack record %zu of the frame", d->rec);
			break;
		}
		size_t rlen = (size_t)(end - (data + off));
		/* scratch big enough for every string of this record: each
		 * string takes at least one byte of header, plus its NUL here */
		if (2 * rlen + 64 > d->sc_cap) {
			size_t cap = 2 * rlen + 4096;
			char *sc = realloc(d->sc, cap);
			if (!sc) {
				snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
				d->res->status = GMT_DECODE_IO;
				rc = -1;
				break;
			}
			d->sc = sc;
			d->sc_cap = cap;
		}
		d->sc_len = 0;
		size_t roff = 0;
		msgpack_unpack_return r = msgpack_unpack_next(&up, (const char *)data + off, rlen, &roff);
		if ((r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES) || roff != rlen) {
			rc = damage(d, d->frame_off, "malformed msgpack record %zu of the frame", d->rec);
			break;
		}
		off += rlen;
		d->res->records++;
		int cb = record(d, &up.data);
		if (cb < 0) {
			rc = -1;
			break;
		}
		if (cb > 0) {
			d->res->status = GMT_DECODE_STOPPED;
			snprintf(d->res->message, sizeof(d->res->message), "%s: stopped by the reader", d->name);
			rc = 1;
			break;
		}
	}
	msgpack_unpacked_destroy(&up);
	return rc;
}

/* Decompresses the frame at [p, p + n) into d->out. */
static int frame_decompress(dec_t *d, const uint8_t *p, size_t n, size_t *outlen)
{
	unsigned long long cs = ZSTD_getFrameContentSize(p, n);
	if (cs == ZSTD_CONTENTSIZE_ERROR)
		return damage(d, d->frame_off, "bad zstd frame (unreadable frame header)");
	if (cs != ZSTD_CONTENTSIZE_UNKNOWN) {
		if (cs > MAX_FRAME_OUT)
			return damage(d, d->frame_off, "bad zstd frame (claims %llu bytes, more than a trace frame can hold)",
				      cs);
		if (grow((void **)&d->out, &d->out_cap, (size_t)cs + 1, 1))
			return damage(d, d->frame_off, "out of memory for a frame of %llu bytes", cs);
		size_t r = ZSTD_decompressDCtx(d->dctx, d->out, (size_t)cs + 1, p, n);
		if (ZSTD_isError(r))
			return damage(d, d->frame_off, "bad zstd frame (%s)", ZSTD_getErrorName(r));
		if (r != cs)
			return damage(d, d->frame_off, "bad zstd frame (%zu bytes instead of %llu)", r, cs);
		*outlen = r;
		return 0;
	}
	/* No content size: stream with a cap. */
	ZSTD_DCtx_reset(d->dctx, ZSTD_reset_session_only);
	ZSTD_inBuffer in = { p, n, 0 };
	size_t have = 0;
	for (;;) {
		if (grow((void **)&d->out, &d->out_cap, have + ZSTD_DStreamOutSize(), 1))
			return damage(d, d->frame_off, "out of memory for a frame");
		ZSTD_outBuffer out = { d->out, d->out_cap, have };
		size_t r = ZSTD_decompressStream(d->dctx, &out, &in);
		if (ZSTD_isError(r))
			return damage(d, d->frame_off, "bad zstd frame (%s)", ZSTD_getErrorName(r));
		have = out.pos;
		if (r == 0)
			break;
		if (have > MAX_FRAME_OUT)
			return damage(d, d->frame_off, "bad zstd frame (larger than a trace frame can be)");
		if (in.pos == in.size && out.pos < out.size)
			return damage(d, d->frame_off, "bad zstd frame (ends early)");
	}
	*outlen = have;
	return 0;
}

static gmt_decode_progress_fn progress;

void gmt_decode_set_progress(gmt_decode_progress_fn fn)
{
	progress = fn;
}

static int run(dec_t *d)
{
	gmt_decode_result_t *res = d->res;
	if (fill(d, 20) < 0)
		return res->status;
	static const uint8_t magic[8] = GMT_FILE_MAGIC;
	const uint8_t *p = cur(d);
	size_t av = avail(d);
	uint8_t want[16];
	for (int i = 0; i < 4; i++) {
		want[i] = (uint8_t)(GMT_SKIPPABLE_MAGIC >> (8 * i));
		want[4 + i] = (uint8_t)(12u >> (8 * i));
	}
	memcpy(want + 8, magic, 8);
	if (av == 0 || memcmp(p, want, av < 16 ? av : 16)) {
		snprintf(res->message, sizeof(res->message),
			 "%s: offset 0: not a gpumemtrace trace (expected the GMTRACE preamble)", d->name);
		res->status = GMT_DECODE_REFUSED;
		return res->status;
	}
	if (av < 20)
		return damage(d, 0, "frame cut short (the preamble has %zu of 20 bytes)", av), res->status;
	res->format_major = (unsigned)(p[16] | p[17] << 8);
	res->format_minor = (unsigned)(p[18] | p[19] << 8);
	if (res->format_major > GMT_FORMAT_MAJOR) {
		snprintf(res->message, sizeof(res->message),
			 "%s: format %u.%u is newer than this reader (%d.x); upgrade gpumemtrace",
			 d->name, res->format_major, res->format_minor, GMT_FORMAT_MAJOR);
		res->status = GMT_DECODE_REFUSED;
		return res->status;
	}
	if (res->format_major < 1) {
		snprintf(res->message, sizeof(res->message),
			 "%s: format %u.%u is not one this reader knows", d->name,
			 res->format_major, res->format_minor);
		res->status = GMT_DECODE_REFUSED;
		return res->status;
	}
	d->minor = res->format_major < GMT_FORMAT_MAJOR ? 0 : res->format_minor;
	d->pos += 20;
	res->bytes_ok = 20;

	for (;;) {
		if (fill(d, 8) < 0)
			return res->status;
		av = avail(d);
		if (av == 0)
			break;
		d->frame_off = cur_off(d);
		if (av < 8)
			return damage(d, d->frame_off, "frame cut short (%zu bytes left)", av), res->status;
		p = cur(d);
		uint32_t m = le32(p);
		if ((m & 0xFFFFFFF0u) == 0x184D2A50u) {
			uint64_t sz = 8 + (uint64_t)le32(p + 4);
			if (sz > MAX_FRAME_IN)
				return damage(d, d->frame_off, "skippable frame of %llu bytes is too large",
					      (unsigned long long)sz), res->status;
			if (fill(d, (size_t)sz) < 0)
				return res->status;
			if (avail(d) < sz)
				return damage(d, d->frame_off, "frame cut short (the file ends inside a frame)"),
				       res->status;
			/* Another trace's preamble: files joined (cat a.gmt b.gmt).
			 * Read as one, the second process's events would count
			 * under the first one's pid. */
			if (sz == 20 && !memcmp(cur(d), want, 16))
				return damage(d, d->frame_off, "a second trace starts here (another GMTRACE "
					      "preamble: trace files joined into one?); split the file "
					      "at this offset to read it"), res->status;
			d->pos += (size_t)sz;
			res->bytes_ok = cur_off(d);
			continue;
		}
		size_t n;
		for (;;) {
			p = cur(d);
			av = avail(d);
			n = ZSTD_findFrameCompressedSize(p, av);
			if (!ZSTD_isError(n))
				break;
			if (ZSTD_getErrorCode(n) != ZSTD_error_srcSize_wrong)
				return damage(d, d->frame_off, "bad zstd frame (%s)", ZSTD_getErrorName(n)),
				       res->status;
			if (d->mem || d->eof)
				return damage(d, d->frame_off, "frame cut short (the file ends inside a frame)"),
				       res->status;
			if (av >= MAX_FRAME_IN)
				return damage(d, d->frame_off, "bad zstd frame (larger than %u bytes)",
					      MAX_FRAME_IN), res->status;
			if (fill(d, av * 2 > MAX_FRAME_IN ? MAX_FRAME_IN : av * 2) < 0)
				return res->status;
		}
		size_t outlen = 0;
		if (frame_decompress(d, p, n, &outlen) < 0)
			return res->status;
		int rc = frame_records(d, d->out, outlen);
		if (rc)
			return res->status;
		d->pos += n;
		res->frames++;
		res->bytes_ok = cur_off(d);
		if (progress)
			progress(d->name, res->bytes_ok, res->file_size);
	}
	res->status = GMT_DECODE_OK;
	return res->status;
}

static int decode(dec_t *d)
{
	d->dctx = ZSTD_createDCtx();
	int st;
	if (!d->dctx) {
		snprintf(d->res->message, sizeof(d->res->message), "%s: out of memory", d->name);
		d->res->status = GMT_DECODE_IO;
		st = GMT_DECODE_IO;
	} else {
		st = run(d);
	}
	ZSTD_freeDCtx(d->dctx);
	free(d->buf);
	free(d->out);
	free(d->ev);
	free(d->frames);
	free(d->sc);
	free(d->ptrs);
	free(d->kvs);
	free(d->id_addr);
	free(d->id_live);
	free(d->id_free);
	if (st == GMT_DECODE_OK)
		d->res->message[0] = 0;
	return st;
}

static void res_init(gmt_decode_result_t *res)
{
	memset(res, 0, sizeof(*res));
	res->status = GMT_DECODE_OK;
}

int gmt_decode_file(const char *path, const gmt_visitor_t *v, gmt_decode_result_t *res)
{
	static const gmt_visitor_t none;
	res_init(res);
	dec_t d;
	memset(&d, 0, sizeof(d));
	d.name = path;
	d.v = v ? v : &none;
	d.res = res;
	d.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d.fd < 0) {
		snprintf(res->message, sizeof(res->message), "%s: cannot open: %s", path, strerror(errno));
		res->status = GMT_DECODE_IO;
		return res->status;
	}
	struct stat st;
	if (fstat(d.fd, &st) == 0)
		res->file_size = (uint64_t)st.st_size;
	int rc = decode(&d);
	close(d.fd);
	return rc;
}

int gmt_decode_buffer(const void *data, size_t len, const char *name,
		      const gmt_visitor_t *v, gmt_decode_result_t *res)
{
	static const gmt_visitor_t none;
	res_init(res);
	dec_t d;
	memset(&d, 0, sizeof(d));
	d.name = name ? name : "(buffer)";
	d.v = v ? v : &none;
	d.res = res;
	d.fd = -1;
	d.mem = data ? data : (const uint8_t *)"";
	d.len = data ? len : 0;
	d.eof = 1;
	res->file_size = len;
	return decode(&d);
}
