/* unit_events2: the 1.4 EVENTS2 and 1.5 EVENTS3 records, through the tracer
 * and the reader.
 *   ids      a fixed sequence of allocations and frees (an id reused, a free
 *            of an unknown address, an address allocated again without its
 *            free, a FREE_FAIL) reads back event for event, each free with
 *            its allocation's address, and with the ids the format's rule
 *            gives: 1 2 1 1 0 0 0 0 1 0 1 (the address allocated again takes
 *            no id, and its free names the address), and the longest
 *            varints (a size of 2^64 - 1) read back whole;
 *   reset    two frames lost to write errors (their ids with them): every
 *            event that reached the file reads back exactly as emitted, in
 *            order, and a record after the loss says the ids restarted;
 *   varints  a crafted record of 1,000 allocations whose sizes take every
 *            varint length (1 to 10 bytes, each length's smallest and
 *            largest value, then random lengths and values) reads back
 *            every size exactly, through both of the reader's copies of
 *            EVENTS2's loop (pext and plain, gmt_decode_pext); a 10-byte
 *            varint past 64 bits is refused by both alike;
 *   shifts   (EVENTS3) batches of allocations at odd multiples of 2 MiB with
 *            sizes at odd multiples of 512 B, one flush each: every record
 *            is EVENTS3 with shifts 21 and 9, but the one holding an ALLOC
 *            of 1000 bytes (size shift 3) and the one holding an ALLOC at
 *            an odd address (addr shift 0), each of which starts at that
 *            event (its record cut there, far past the record's first
 *            batch) unless a writer round began a frame before it; every
 *            event reads back exactly as emitted, through both copies of
 *            the reader's loop;
 *   damage   crafted records: a free of an id that is not live, a mask
 *            with bit 7, a ref column too short, EVENTS3 shifts above 63;
 *            each read up to the
 *            damage, named by offset; two of them after the committed
 *            ok_events2.gmt are the fuzz corpus's damaged_events2_*.gmt. */
#include <msgpack.h>
#include <zstd.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static char path[4200];

static int in_child(void (*fn)(void))
{
	return coll_in_child(fn, path, sizeof(path));
}

static gmt_event_t seq[] = {
	{ .type = GMT_EV_ALLOC, .addr = 0x1000, .size = 10, .device = 0, .aux = 0x101 },
	{ .type = GMT_EV_ALLOC, .addr = 0x2000, .size = 20, .device = 1, .aux = 0x101, .stream = 7 },
	{ .type = GMT_EV_FREE, .addr = 0x1000, .device = -1, .aux = 0x200 },
	{ .type = GMT_EV_ALLOC, .addr = 0x3000, .size = 30, .device = 0, .aux = 0x101 },
	{ .type = GMT_EV_FREE, .addr = 0x9999, .device = -1, .aux = 0x200 },
	{ .type = GMT_EV_ALLOC, .addr = 0x2000, .size = 40, .device = 0, .aux = 0x102 },
	{ .type = GMT_EV_FREE, .addr = 0x2000, .device = -1, .aux = 0x200, .stream = 9 },
	{ .type = GMT_EV_FREE_FAIL, .addr = 0x2000, .device = -1, .aux = 0x200 | (2ull << 32) },
	{ .type = GMT_EV_FREE, .addr = 0x3000, .device = -1, .aux = 0x200 },
	{ .type = GMT_EV_SYNC, .addr = 12345, .stream = 0x50, .aux = 1, .device = 0 },
	/* the longest varints: 10 bytes, and 9 */
	{ .type = GMT_EV_ALLOC, .addr = 0xfffffffffffff000ull, .size = UINT64_MAX, .device = 0,
	  .aux = 0x101, .stream = 1ull << 62 },
};
#define NSEQ (sizeof(seq) / sizeof(seq[0]))
static const uint32_t seq_ids[NSEQ] = { 1, 2, 1, 1, 0, 0, 0, 0, 1, 0, 1 };

static void emit_ids(void)
{
	gmt_config_t cfg = test_config(test_dir("ids"));
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	uint64_t t = gmt_now_ns();
	for (size_t i = 0; i < NSEQ; i++) {
		seq[i].ts = t + i;
		gmt_emit(&seq[i], 0, 0);
	}
	gmt_tracer_shutdown();
}

/* A pseudo-random allocate/free pattern over 64 live slots. */
#define NRESET 30000
static gmt_event_t resetseq[NRESET];

static void make_reset_seq(void)
{
	uint64_t live[64] = { 0 }, r = 0x9E3779B97F4A7C15ull, next = 1;
	size_t n = 0;
	while (n < NRESET) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		unsigned s = (unsigned)(r >> 40) % 64;
		if (live[s]) {
			resetseq[n++] = (gmt_event_t){ .type = GMT_EV_FREE, .addr = live[s], .device = -1 };
			live[s] = 0;
		} else {
			live[s] = (next++) << 12;
			resetseq[n++] = (gmt_event_t){ .type = GMT_EV_ALLOC, .addr = live[s],
						       .size = r % 100000, .device = 0 };
		}
	}
}

static void emit_reset(void)
{
	gmt_config_t cfg = test_config(test_dir("reset"));
	/* write 1 = preamble, 2 = the header frame; each batch below is at
	 * least one more: writes 4 and 5 fail, and the last batches follow */
	cfg.test_fail_write_after = 4;
	cfg.test_fail_errno = ENOSPC;
	cfg.test_fail_count = 2;
	cfg.log_level = 0;
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	for (size_t b = 0; b < 6; b++) {
		for (size_t i = b * NRESET / 6; i < (b + 1) * NRESET / 6; i++)
			gmt_emit(&resetseq[i], 0, 0);
		CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	}
	gmt_tracer_shutdown();
}

/* Batches (flushed one by one) of ALLOC/FREE pairs; in batch 2 an ALLOC
 * of 1000 bytes (SH_SIZE), in batch 4 an ALLOC and its FREE at an odd
 * address (SH_ADDR): both far past the writer's first batch (BATCH). */
#define SH_BATCH 1200
#define SH_NB 5
#define SH_SIZE (2 * SH_BATCH + 1100)
#define SH_ADDR (4 * SH_BATCH + 1000)
static gmt_event_t shseq[SH_NB * SH_BATCH];

static void make_shift_seq(void)
{
	for (size_t i = 0; i < SH_NB * SH_BATCH; i++) {
		uint64_t k = i / 2;
		if (i % 2 == 0)
			shseq[i] = (gmt_event_t){ .type = GMT_EV_ALLOC, .addr = (2 * k + 1) << 21,
						  .size = (2 * (k % 7) + 1) << 9, .device = 0, .aux = 0x101 };
		else
			shseq[i] = (gmt_event_t){ .type = GMT_EV_FREE, .addr = (2 * k + 1) << 21,
						  .device = -1, .aux = 0x200 };
	}
	shseq[SH_SIZE].size = 1000;
	shseq[SH_ADDR].addr = 0x7001;
	shseq[SH_ADDR + 1].addr = 0x7001;
}

static void emit_shifts(void)
{
	gmt_config_t cfg = test_config(test_dir("shifts"));
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	snprintf(path, sizeof(path), "%s", gmt_tracer_path());
	CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	uint64_t t = gmt_now_ns();
	for (size_t b = 0; b < SH_NB; b++) {
		for (size_t i = b * SH_BATCH; i < (b + 1) * SH_BATCH; i++) {
			shseq[i].ts = t + i;
			gmt_emit(&shseq[i], 0, 0);
		}
		CHECK_EQ_U64(0, gmt_tracer_flush(2000));
	}
	gmt_tracer_shutdown();
}

/* The event records of a file: tag, events, shifts (0 for EVENTS2), the
 * frame (its index) and whether it is its frame's first event record. */
typedef struct rec_info {
	unsigned tag, shifts;
	uint64_t n;
	size_t frame;
	int first;
} rec_info_t;

static size_t file_records(const unsigned char *b, size_t len, rec_info_t *out, size_t cap)
{
	size_t off = 0, k = 0, fr = 0;
	while (off < len) {
		int first = 1;
		size_t fs = ZSTD_findFrameCompressedSize(b + off, len - off);
		if (ZSTD_isError(fs))
			break;
		unsigned long long cs = ZSTD_getFrameContentSize(b + off, fs);
		if (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR && cs) {
			char *d = malloc(cs);
			size_t dn = ZSTD_decompress(d, cs, b + off, fs);
			msgpack_unpacked u;
			msgpack_unpacked_init(&u);
			size_t p = 0;
			while (!ZSTD_isError(dn) && msgpack_unpack_next(&u, d, dn, &p) == MSGPACK_UNPACK_SUCCESS) {
				const msgpack_object *a = u.data.via.array.ptr;
				if (u.data.type != MSGPACK_OBJECT_ARRAY || u.data.via.array.size < 5)
					continue;
				unsigned tag = (unsigned)a[0].via.u64;
				if ((tag == GMT_REC_EVENTS2 || tag == GMT_REC_EVENTS3) && k < cap) {
					out[k++] = (rec_info_t){ tag, tag == GMT_REC_EVENTS3 ? (unsigned)a[4].via.u64 : 0,
								 a[1].via.u64, fr, first };
					first = 0;
				}
			}
			msgpack_unpacked_destroy(&u);
			free(d);
		}
		off += fs;
		fr++;
	}
	return k;
}

static size_t n_reset_batches;
static int (*coll_events)(void *, const gmt_devent_t *, size_t, unsigned);

static int count_resets(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	if (flags & GMT_EVENTS_IDS_RESET)
		n_reset_batches++;
	return coll_events(ctx, ev, n, flags);
}

static int same(const gmt_devent_t *d, const gmt_event_t *e)
{
	return d->type == e->type && d->addr == e->addr && d->size == e->size &&
	       d->stream == e->stream && d->aux == e->aux && d->device == e->device &&
	       d->stack == e->stack;
}

/* A file with its trace's frames, then one frame of an EVENTS2 record with
 * these columns; checks what the reader says. With out, the file is also
 * written there (how tests/fuzz/corpus/damaged_events2_*.gmt were made). */
static int crafted_shifts = -1;   /* >= 0: an EVENTS3 record with these shifts */

static void crafted_to(const unsigned char *file, size_t len, uint64_t n, const uint8_t *const *cols,
		       const size_t *lens, const char *name, const char *want, const char *out)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4 + (crafted_shifts >= 0) + GMT_C2_COUNT);
	msgpack_pack_uint8(&pk, crafted_shifts >= 0 ? GMT_REC_EVENTS3 : GMT_REC_EVENTS2);
	msgpack_pack_uint64(&pk, n);
	msgpack_pack_uint64(&pk, 1u << 30);
	msgpack_pack_uint32(&pk, 0);
	if (crafted_shifts >= 0)
		msgpack_pack_uint32(&pk, (uint32_t)crafted_shifts);
	for (int c = 0; c < GMT_C2_COUNT; c++) {
		msgpack_pack_bin(&pk, lens[c]);
		msgpack_pack_bin_body(&pk, cols[c], lens[c]);
	}
	size_t cap = len + ZSTD_compressBound(sb.size);
	unsigned char *o = malloc(cap);
	memcpy(o, file, len);
	size_t z = ZSTD_compress(o + len, cap - len, sb.data, sb.size, 1);
	gmt_decode_result_t r;
	gmt_decode_buffer(o, len + z, name, NULL, &r);
	char full[600];
	snprintf(full, sizeof(full), "%s: offset %zu: %s", name, len, want);
	CHECK_EQ_U64(GMT_DECODE_DAMAGED, r.status);
	CHECK_EQ_STR(full, r.message);
	CHECK_EQ_U64(len, r.bytes_ok);   /* everything before the damage read */
	if (out) {
		FILE *f = fopen(out, "wb");
		CHECK(f && fwrite(o, 1, len + z, f) == len + z);
		if (f)
			fclose(f);
	}
	free(o);
	msgpack_sbuffer_destroy(&sb);
}

static void crafted(const unsigned char *file, size_t len, uint64_t n, const uint8_t *const *cols,
		    const size_t *lens, const char *want)
{
	crafted_to(file, len, n, cols, lens, "mem", want, NULL);
}

/* The frame of one EVENTS2 record with these columns, after file. */
static unsigned char *crafted_file(const unsigned char *file, size_t len, uint64_t n,
				   const uint8_t *const *cols, const size_t *lens, size_t *outlen)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4 + GMT_C2_COUNT);
	msgpack_pack_uint8(&pk, GMT_REC_EVENTS2);
	msgpack_pack_uint64(&pk, n);
	msgpack_pack_uint64(&pk, 1u << 30);
	msgpack_pack_uint32(&pk, 0);
	for (int c = 0; c < GMT_C2_COUNT; c++) {
		msgpack_pack_bin(&pk, lens[c]);
		msgpack_pack_bin_body(&pk, cols[c], lens[c]);
	}
	size_t cap = len + ZSTD_compressBound(sb.size);
	unsigned char *o = malloc(cap);
	memcpy(o, file, len);
	*outlen = len + ZSTD_compress(o + len, cap - len, sb.data, sb.size, 1);
	msgpack_sbuffer_destroy(&sb);
	return o;
}

#define NVAR 1000

/* Allocations without ids whose sizes are vals, through both copies of the
 * reader's loop: every size read back; then the same with a 10-byte varint
 * past 64 bits in the middle, refused alike. */
static void varints(const unsigned char *file, size_t len)
{
	static uint8_t types[NVAR], masks[NVAR], ts[NVAR], addrs[NVAR], sizes[NVAR * 10 + 10];
	static uint64_t vals[NVAR];
	size_t k = 0, nsz = 0;
	for (unsigned b = 1; b <= 10; b++) {
		vals[k++] = b == 1 ? 0 : 1ull << (7 * (b - 1));                 /* smallest of b bytes */
		vals[k++] = b == 10 ? UINT64_MAX : (1ull << (7 * b)) - 1;       /* largest */
	}
	uint64_t x = 88172645463325252ull;
	while (k < NVAR) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned bits = 1 + (unsigned)(x % 64);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		vals[k++] = bits == 64 ? x : x & ((1ull << bits) - 1);
	}
	for (size_t i = 0; i < NVAR; i++) {
		types[i] = GMT_EV_ALLOC;
		masks[i] = GMT_M_NOID | GMT_M_SIZE;
		ts[i] = 1;
		addrs[i] = 2;   /* zigzag +1: addresses 1, 2, 3, ... */
		nsz += gmt_uvarint_put(sizes + nsz, vals[i]);
	}
	static const uint8_t none[] = { 0 };
	const uint8_t *cols[GMT_C2_COUNT] = { types, ts, masks, none, none, none, none, none, none, addrs, sizes };
	size_t lens[GMT_C2_COUNT] = { NVAR, NVAR, NVAR, 0, 0, 0, 0, 0, 0, NVAR, nsz };
	size_t flen;
	unsigned char *f = crafted_file(file, len, NVAR, cols, lens, &flen);
	const int pext = gmt_decode_pext(-1);
	for (int way = 0; way < 2; way++) {
		gmt_decode_pext(way);
		gmt_decode_result_t r;
		coll_t *c = calloc(1, sizeof(*c));
		gmt_visitor_t v = coll_visitor;
		v.ctx = c;
		gmt_decode_buffer(f, flen, "mem", &v, &r);
		CHECK_EQ_U64(GMT_DECODE_OK, r.status);
		size_t base = c->n >= NVAR ? c->n - NVAR : 0, wrong = 0;
		CHECK(c->n >= NVAR);
		for (size_t i = 0; i < NVAR && base + i < c->n; i++) {
			const gmt_devent_t *e = &c->ev[base + i];
			wrong += e->size != vals[i] || e->addr != i + 1 || e->type != GMT_EV_ALLOC;
		}
		CHECK_EQ_U64(0, wrong);
		coll_free(c);
		free(c);
	}
	free(f);
	/* the 500th size made 10 bytes with a last byte of 2: past 64 bits */
	size_t at = 0;
	for (size_t i = 0; i < 500; i++)
		at += gmt_uvarint_put(sizes + at, vals[i]);
	uint8_t *bad = malloc(nsz + 10);
	memcpy(bad, sizes, at);
	memset(bad + at, 0xff, 9);
	bad[at + 9] = 2;
	nsz = at + 10;
	for (size_t i = 501; i < NVAR; i++)
		nsz += gmt_uvarint_put(bad + nsz, vals[i]);
	cols[GMT_C2_SIZE] = bad;
	lens[GMT_C2_SIZE] = nsz;
	for (int way = 0; way < 2; way++) {
		gmt_decode_pext(way);
		crafted(file, len, NVAR, cols, lens, "column size has wrong length in record 1 (EVENTS2) of the frame");
	}
	free(bad);
	gmt_decode_pext(pext);
}

int main(void)
{
	gmt_decode_result_t r;

	CHECK_EQ_U64(0, in_child(emit_ids));
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(NSEQ, c->n);
	for (size_t i = 0; i < NSEQ && i < c->n; i++) {
		CHECK(same(&c->ev[i], &seq[i]));
		CHECK_EQ_U64(i, c->ev[i].ts - c->ev[0].ts);
		CHECK_EQ_U64(seq_ids[i], c->ev[i].alloc_id);
	}
	coll_free(c);
	free(c);

	make_reset_seq();
	CHECK_EQ_U64(0, in_child(emit_reset));
	c = calloc(1, sizeof(*c));
	gmt_visitor_t v = coll_visitor;
	coll_events = v.events;
	v.events = count_resets;
	v.ctx = c;
	gmt_decode_file(path, &v, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK(n_reset_batches >= 1);
	CHECK_EQ_U64(NRESET, c->n + c->drops_write);
	CHECK(c->drops_write > 0);
	/* the file's events are the emitted ones less the lost frames' */
	size_t k = 0, matched = 0;
	for (size_t i = 0; i < c->n; i++) {
		while (k < NRESET && !same(&c->ev[i], &resetseq[k]))
			k++;
		if (k < NRESET) {
			matched++;
			k++;
		}
	}
	CHECK_EQ_U64(c->n, matched);
	coll_free(c);
	free(c);

	/* crafted records after the first trace's frames */
	unsigned char *file = NULL;
	size_t len = 0;
	CHECK_EQ_U64(0, in_child(emit_ids));
	CHECK(file_bytes(path, &file, &len) == 0);
	/* cut before the END frame is not needed: a record after END is read */
	static const uint8_t t_free[] = { GMT_EV_FREE }, m0[] = { 0 }, d1[] = { 1 }, ref5[] = { 10 },
			     m80[] = { 0x80 }, t2[] = { GMT_EV_ALLOC, GMT_EV_FREE }, m2[] = { 0, 0 },
			     ts2[] = { 1, 1 }, a2[] = { 2 }, none[] = { 0 };
	const uint8_t *cols[GMT_C2_COUNT] = { t_free, d1, m0, none, none, none, none, none, ref5, none, none };
	size_t lens[GMT_C2_COUNT] = { 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0 };
	crafted(file, len, 1, cols, lens,
		"record 1 (EVENTS2) of the frame: event 0 is a free of an allocation id that is not live (5)");
	cols[GMT_C2_MASK] = m80;
	crafted(file, len, 1, cols, lens, "record 1 (EVENTS2) of the frame: event 0 has a mask with bit 7 set");
	/* an ALLOC (id 1) and a FREE whose ref column is missing */
	const uint8_t *cols2[GMT_C2_COUNT] = { t2, ts2, m2, none, none, none, none, none, none, a2, none };
	size_t lens2[GMT_C2_COUNT] = { 2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 0 };
	crafted(file, len, 2, cols2, lens2, "column ref has wrong length in record 1 (EVENTS2) of the frame");
	varints(file, len);
	/* EVENTS3: the same damage is named by its record; a shift above 63 */
	crafted_shifts = GMT_SHIFTS(12, 9);
	crafted(file, len, 2, cols2, lens2, "column ref has wrong length in record 1 (EVENTS3) of the frame");
	crafted_shifts = GMT_SHIFTS(64, 9);
	crafted(file, len, 2, cols2, lens2, "wrong type for field EVENTS3.shifts of record 1 (EVENTS3) of the frame");
	crafted_shifts = -1;
	free(file);

	/* EVENTS3: shifts by construction, every event exact */
	make_shift_seq();
	CHECK_EQ_U64(0, in_child(emit_shifts));
	const int pext = gmt_decode_pext(-1);
	for (int way = 0; way < 2; way++) {   /* both copies of the reader's loop */
		gmt_decode_pext(way);
		c = coll_decode(path, &r);
		CHECK_EQ_U64(GMT_DECODE_OK, r.status);
		CHECK_EQ_U64(SH_NB * SH_BATCH, c->n);
		for (size_t i = 0; i < SH_NB * SH_BATCH && i < c->n; i++) {
			CHECK(same(&c->ev[i], &shseq[i]));
			CHECK_EQ_U64(i, c->ev[i].ts - c->ev[0].ts);
		}
		coll_free(c);
		free(c);
	}
	gmt_decode_pext(pext);
	static rec_info_t ri[256];
	file = NULL;
	CHECK(file_bytes(path, &file, &len) == 0);
	size_t nr = file ? file_records(file, len, ri, 256) : 0;
	free(file);
	/* the record of each event */
	static size_t at[SH_NB * SH_BATCH + 1];
	size_t ev = 0;
	for (size_t q = 0; q < nr; q++)
		for (uint64_t j = 0; j < ri[q].n && ev < SH_NB * SH_BATCH; j++)
			at[ev++] = q;
	CHECK_EQ_U64(SH_NB * SH_BATCH, ev);
	if (ev == SH_NB * SH_BATCH) {
		size_t rs = at[SH_SIZE], ra = at[SH_ADDR];
		CHECK_EQ_U64(GMT_SHIFTS(21, 3), ri[rs].shifts);
		CHECK(at[SH_SIZE - 1] != rs || ri[rs].first);
		CHECK_EQ_U64(GMT_SHIFTS(0, 9), ri[ra].shifts);
		CHECK(at[SH_ADDR - 1] != ra || ri[ra].first);
		for (size_t i = 0; i < SH_NB * SH_BATCH; i++) {
			if (at[i] == rs || at[i] == ra)
				continue;
			CHECK_EQ_U64(GMT_REC_EVENTS3, ri[at[i]].tag);
			CHECK_EQ_U64(GMT_SHIFTS(21, 9), ri[at[i]].shifts);
		}
	}

	/* The fuzz corpus's damaged EVENTS2 files: the committed
	 * ok_events2.gmt and one crafted frame after it. UNIT_EVENTS2_CORPUS=DIR
	 * writes them into DIR (sh: UNIT_EVENTS2_CORPUS=tests/fuzz/corpus
	 * build/tests/unit_events2 from the repository's root). */
	const char *root = getenv("ROOT"), *outdir = getenv("UNIT_EVENTS2_CORPUS");
	char ok[4200], out1[4200], out2[4200];
	snprintf(ok, sizeof(ok), "%s/tests/fuzz/corpus/ok_events2.gmt", root && *root ? root : ".");
	snprintf(out1, sizeof(out1), "%s/damaged_events2_free_id.gmt", outdir ? outdir : "");
	snprintf(out2, sizeof(out2), "%s/damaged_events2_ref_short.gmt", outdir ? outdir : "");
	file = NULL;
	CHECK(file_bytes(ok, &file, &len) == 0);
	if (file) {
		static const uint8_t ref_far[] = { 0x7e };   /* id 63 */
		cols[GMT_C2_MASK] = m0;
		cols[GMT_C2_REF] = ref_far;
		crafted_to(file, len, 1, cols, lens, "damaged_events2_free_id.gmt",
			   "record 1 (EVENTS2) of the frame: event 0 is a free of an allocation id that is not live (63)",
			   outdir ? out1 : NULL);
		crafted_to(file, len, 2, cols2, lens2, "damaged_events2_ref_short.gmt",
			   "column ref has wrong length in record 1 (EVENTS2) of the frame", outdir ? out2 : NULL);
		free(file);
	}
	TEST_DONE();
}
