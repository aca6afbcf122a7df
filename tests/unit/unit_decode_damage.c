/* unit_decode_damage: the reader on cut, corrupted, foreign and crafted
 * input. A trace cut at every byte decodes up to the last whole frame and
 * names the offset of the cut frame; single-byte corruption anywhere never
 * crashes it; newer majors are refused; newer minors' unknown records are
 * skipped; each kind of damage has its message. */
#include <sys/wait.h>
#include <zstd.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

static size_t count_events(const void *data, size_t len, gmt_decode_result_t *r)
{
	coll_t *c = calloc(1, sizeof(*c));
	gmt_visitor_t v = coll_visitor;
	v.ctx = c;
	gmt_decode_buffer(data, len, "mem", &v, r);
	size_t n = c->n;
	coll_free(c);
	free(c);
	return n;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* file + one zstd frame holding the given msgpack bytes */
static unsigned char *with_frame(const unsigned char *file, size_t len, const void *mp,
				 size_t mplen, size_t *outlen)
{
	size_t cap = len + ZSTD_compressBound(mplen);
	unsigned char *o = malloc(cap);
	memcpy(o, file, len);
	size_t z = ZSTD_compress(o + len, cap - len, mp, mplen, 1);
	*outlen = len + z;
	return o;
}

static void check_crafted(const unsigned char *file, size_t len, const void *mp, size_t mplen,
			  int want_status, const char *want_msg)
{
	size_t n;
	unsigned char *b = with_frame(file, len, mp, mplen, &n);
	gmt_decode_result_t r;
	gmt_decode_buffer(b, n, "mem", NULL, &r);
	CHECK_EQ_U64(want_status, r.status);
	char full[600];
	snprintf(full, sizeof(full), "mem: offset %zu: %s", len, want_msg);
	if (want_msg)
		CHECK_EQ_STR(full, r.message);
	CHECK_EQ_U64(len, r.bytes_ok);
	free(b);
}

int main(void)
{
	const char *dir = test_dir("damage");
	char path[4300];
	pid_t pid = fork();
	if (pid == 0) {
		gmt_config_t cfg = test_config(dir);
		cfg.stack_depth = 4;
		gmt_tracer_init(&cfg);
		for (int b = 0; b < 4; b++) {
			for (int i = 0; i < 50; i++) {
				gmt_event_t e = { .type = GMT_EV_ALLOC, .addr = (uint64_t)(b * 50 + i) << 12,
						  .size = (uint64_t)i, .device = 0 };
				gmt_emit(&e, 1, 0);
			}
			gmt_tracer_flush(1000);
		}
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	snprintf(path, sizeof(path), "%s/gpumemtrace.unit_decode_damage.%d.gmt", dir, (int)pid);
	unsigned char *file = NULL;
	size_t len = 0;
	CHECK_EQ_U64(0, file_bytes(path, &file, &len));
	if (gmt_test_failures)
		TEST_DONE();

	/* frame boundaries */
	size_t bounds[256], nb = 0;
	bounds[nb++] = 20;
	for (size_t off = 20; off < len && nb < 256;) {
		size_t z = ZSTD_findFrameCompressedSize(file + off, len - off);
		if (ZSTD_isError(z))
			break;
		off += z;
		bounds[nb++] = off;
	}
	CHECK_EQ_U64(len, bounds[nb - 1]);
	CHECK(nb >= 4);
	gmt_decode_result_t r;
	size_t total = count_events(file, len, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(200, total);

	/* cut at every byte */
	size_t events_at[256];
	for (size_t k = 0; k < nb; k++)
		events_at[k] = count_events(file, bounds[k], &r);
	int bad = 0;
	for (size_t cut = 0; cut <= len; cut++) {
		size_t n = count_events(file, cut, &r);
		size_t k = 0;
		while (k + 1 < nb && bounds[k + 1] <= cut)
			k++;
		char want[64];
		if (cut == 0) {
			bad += r.status != GMT_DECODE_REFUSED;
		} else if (cut < 20) {
			bad += r.status != GMT_DECODE_DAMAGED || !starts(r.message, "mem: offset 0: frame cut short");
		} else if (cut == bounds[k]) {
			bad += r.status != GMT_DECODE_OK || n != events_at[k] || r.bytes_ok != cut ||
			       r.ended_cleanly != (cut == len);
		} else {
			snprintf(want, sizeof(want), "mem: offset %zu: frame cut short", bounds[k]);
			bad += r.status != GMT_DECODE_DAMAGED || n != events_at[k] ||
			       r.bytes_ok != bounds[k] || !starts(r.message, want);
		}
		if (bad == 1) {
			fprintf(stderr, "cut %zu: status %d bytes_ok %llu events %zu: %s\n", cut, r.status,
				(unsigned long long)r.bytes_ok, n, r.message);
			bad++;
		}
	}
	CHECK_EQ_U64(0, bad);

	/* one corrupted byte anywhere: never a crash; damage reported where the
	 * good data ends */
	unsigned char *copy = malloc(len);
	bad = 0;
	size_t damaged = 0;
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, file, len);
		copy[i] ^= (unsigned char)(0x5a + i);
		count_events(copy, len, &r);
		int was = bad;
		if (r.status == GMT_DECODE_DAMAGED) {
			/* The damage names the frame where it was found, which is
			 * where good data ends. (It may lie after byte i: a flip
			 * of the checksum flag leaves an intact frame followed by
			 * 4 stray bytes.) */
			char want[64];
			snprintf(want, sizeof(want), "mem: offset %llu: ", (unsigned long long)r.bytes_ok);
			damaged++;
			bad += r.bytes_ok > len || !starts(r.message, want);
		} else if (r.status == GMT_DECODE_REFUSED) {
			bad += i >= 20;
		}
		if (bad != was)
			fprintf(stderr, "byte %zu: status %d bytes_ok %llu: %s\n", i, r.status,
				(unsigned long long)r.bytes_ok, r.message);
	}
	CHECK_EQ_U64(0, bad);
	CHECK(damaged > len / 2);

	/* versions */
	memcpy(copy, file, len);
	copy[16] = 2;
	count_events(copy, len, &r);
	CHECK_EQ_U64(GMT_DECODE_REFUSED, r.status);
	char newer[128];
	snprintf(newer, sizeof(newer), "mem: format 2.%d is newer than this reader (1.x); upgrade gpumemtrace",
		 GMT_FORMAT_MINOR);
	CHECK_EQ_STR(newer, r.message);
	count_events("hello, world\n", 13, &r);
	CHECK_EQ_U64(GMT_DECODE_REFUSED, r.status);
	CHECK_EQ_STR("mem: offset 0: not a gpumemtrace trace (expected the GMTRACE preamble)", r.message);
	CHECK_EQ_U64(GMT_DECODE_IO, gmt_decode_file("/nonexistent/x.gmt", NULL, &r));

	/* crafted records after a good file */
	static const unsigned char unknown[] = { 0x92, 0x64, 0xa1, 'x' };          /* [100, "x"] */
	check_crafted(file, len, unknown, sizeof(unknown), GMT_DECODE_DAMAGED,
		      "unknown record tag 100 in record 1 of the frame");
	memcpy(copy, file, len);
	copy[18] = GMT_FORMAT_MINOR + 1;   /* a newer minor of our major */
	size_t n2;
	unsigned char *b = with_frame(copy, len, unknown, sizeof(unknown), &n2);
	CHECK_EQ_U64(200, count_events(b, n2, &r));
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(n2, r.bytes_ok);
	CHECK_EQ_U64(1, r.newer_records);
	CHECK_EQ_U64(1, r.n_newer_tags);
	CHECK_EQ_U64(100, r.newer_tags[0]);
	CHECK_EQ_U64(0, r.newer_fields);
	free(b);
	/* what a newer minor held is counted: [100, "x"], [101], [100, 1], a
	 * THREAD with a fifth field, then tags 110 down to 101 (the first
	 * eight distinct kept, ascending) */
	static const unsigned char newer_recs[] = { 0x92, 0x64, 0xa1, 'x',   0x91, 0x65,   0x92, 0x64, 0x01,
		0x95, 0x02, 0x07, 0x08, 0xa1, 'n', 0xa1, 'e',
		0x91, 110, 0x91, 109, 0x91, 108, 0x91, 107, 0x91, 106,
		0x91, 105, 0x91, 104, 0x91, 103, 0x91, 102, 0x91, 101 };
	b = with_frame(copy, len, newer_recs, sizeof(newer_recs), &n2);
	CHECK_EQ_U64(200, count_events(b, n2, &r));
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(13, r.newer_records);
	CHECK_EQ_U64(1, r.newer_fields);
	CHECK_EQ_U64(8, r.n_newer_tags);
	static const unsigned want_tags[8] = { 100, 101, 105, 106, 107, 108, 109, 110 };
	for (int i = 0; i < 8; i++)
		CHECK_EQ_U64(want_tags[i], r.newer_tags[i]);
	free(b);
	/* the same file as our own minor: nothing counted, nothing lost */
	count_events(file, len, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(0, r.newer_records + r.newer_fields + r.n_newer_tags);
	static const unsigned char badmp[] = { 0xc1 };
	check_crafted(file, len, badmp, sizeof(badmp), GMT_DECODE_DAMAGED,
		      "malformed msgpack record 1 of the frame");
	static const unsigned char huge[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01 };
	check_crafted(file, len, huge, sizeof(huge), GMT_DECODE_DAMAGED,
		      "malformed msgpack record 1 of the frame");
	static const unsigned char thr[] = { 0x94, 0x02, 0xa1, 'x', 0x01, 0xa1, 'n' };
	check_crafted(file, len, thr, sizeof(thr), GMT_DECODE_DAMAGED,
		      "wrong type for field THREAD.idx of record 1 (THREAD) of the frame");
	/* an empty string (msgpack-c gives it no pointer): a THREAD named "" */
	static const unsigned char thr_empty[] = { 0x94, 0x02, 0x01, 0x01, 0xa0 };
	b = with_frame(file, len, thr_empty, sizeof(thr_empty), &n2);
	CHECK_EQ_U64(200, count_events(b, n2, &r));
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	free(b);
	static const unsigned char shortrec[] = { 0x93, 0x02, 0x01, 0x01 };
	check_crafted(file, len, shortrec, sizeof(shortrec), GMT_DECODE_DAMAGED,
		      "record 1 (THREAD) of the frame has 2 fields, expected 3");
	/* MODULE (1.4): 7 fields, or 9 with soname and file; 8 is damage */
	static const unsigned char mod8[] = { 0x98, 0x03, 0x01, 0xa1, 'p', 0x00, 0x00, 0xc4, 0x00, 0x00,
		0xa1, 's' };
	check_crafted(file, len, mod8, sizeof(mod8), GMT_DECODE_DAMAGED,
		      "record 1 (MODULE) of the frame has 7 fields, expected 6");
	static const unsigned char modbad[] = { 0x99, 0x03, 0x01, 0xa1, 'p', 0x00, 0x00, 0xc4, 0x00, 0x00,
		0x05, 0xa1, 'f' };
	check_crafted(file, len, modbad, sizeof(modbad), GMT_DECODE_DAMAGED,
		      "wrong type for field MODULE.soname of record 1 (MODULE) of the frame");
	static const unsigned char mod9[] = { 0x99, 0x03, 0x01, 0xa1, 'p', 0x00, 0x00, 0xc4, 0x00, 0x00,
		0xa1, 's', 0xa1, 'f' };
	b = with_frame(file, len, mod9, sizeof(mod9), &n2);
	count_events(b, n2, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	free(b);
	/* EVENTS n=2 whose ts column holds one value */
	static const unsigned char ev[] = { 0x9d, 0x07, 0x02, 0x05, 0x00,
		0xc4, 2, 1, 1,   0xc4, 1, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,
		0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0 };
	check_crafted(file, len, ev, sizeof(ev), GMT_DECODE_DAMAGED,
		      "column ts has wrong length in record 1 (EVENTS) of the frame");
	static const unsigned char ev_extra[] = { 0x9d, 0x07, 0x02, 0x05, 0x00,
		0xc4, 2, 1, 1,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,
		0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 3, 0, 0, 0 };
	check_crafted(file, len, ev_extra, sizeof(ev_extra), GMT_DECODE_DAMAGED,
		      "column aux has wrong length in record 1 (EVENTS) of the frame");
	static const unsigned char ev_ok[] = { 0x9d, 0x07, 0x02, 0x05, 0x00,
		0xc4, 2, 1, 2,   0xc4, 2, 0, 3,   0xc4, 2, 0, 0,   0xc4, 2, 0, 1,
		0xc4, 2, 4, 3,   0xc4, 2, 9, 9,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0,   0xc4, 2, 0, 0 };
	b = with_frame(file, len, ev_ok, sizeof(ev_ok), &n2);
	coll_t *c = calloc(1, sizeof(*c));
	gmt_visitor_t v = coll_visitor;
	v.ctx = c;
	gmt_decode_buffer(b, n2, "mem", &v, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(202, c->n);
	if (c->n == 202) {
		const gmt_devent_t *e = &c->ev[200];
		CHECK_EQ_U64(GMT_EV_ALLOC, e[0].type);
		CHECK_EQ_U64(GMT_EV_FREE, e[1].type);
		CHECK_EQ_U64(5, e[0].ts);
		CHECK_EQ_U64(8, e[1].ts);
		CHECK_EQ_U64((uint64_t)-1, (uint64_t)(int64_t)e[0].device);
		CHECK_EQ_U64(0, e[1].device);
		CHECK_EQ_U64(2, e[0].addr);            /* zigzag 4 = +2 */
		CHECK_EQ_U64(0, e[1].addr);            /* zigzag 3 = -2 */
		CHECK_EQ_U64(9, e[1].size);
	}
	coll_free(c);
	free(c);
	free(b);
	free(copy);
	free(file);
	TEST_DONE();
}
