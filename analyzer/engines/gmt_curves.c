/*
 * gmt_curves.c - time series of allocated, reserved, outside, device used
 * and held per device.
 *
 * The phase engine calls back after every event that changed a device's
 * values or the innermost phase. The values after the last event of one
 * instant are the instant's row: rows wait as "pending" per device until
 * an event with a later time arrives, and a row equal to the device's
 * previous one is not written. With a sink (gmt_curves_set_sink: the CSV
 * of every row) each row goes there as it is made, until the sink is full.
 * Otherwise (and then) rows go to an
 * anonymous temporary file (the engine may restart for a second pass, and
 * --max-rows needs the counts first), so memory stays bounded by the
 * number of devices. In the file a
 * row is a mask of the fields that differ from the file's previous row
 * with the count of values, their byte lengths (4 bits each), the values, each
 * without its high zero bytes (the time first, as a zigzag difference):
 * 17.5 bytes a row on make bench's mixed trace instead of 64 (18.5 as
 * varints), written and read with one 8-byte store or load a value, no
 * byte loop; blocks of whole rows, each after its length.
 *
 * --max-rows N: a device's rows are cut into N consecutive buckets of equal
 * count (the last may be shorter) and each bucket keeps its row with the
 * highest held bytes (the first such row on ties). The device's peak of
 * held bytes is therefore always kept. A row that no bucket can keep,
 * whatever the count turns out to be, is not written to the file (the
 * rule is at pruned_put); a written row carries how many of its device's
 * rows were left out before it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_curves.h"
#include "gmt_format.h"

#define BLOCK     (1u << 20)
#define ROW_MAX   96            /* the longest encoded row */

typedef gmt_curve_row_t crow_t;

typedef struct cdev {
	int seen;                /* a row was written */
	int pending;
	crow_t r[2];             /* the last row written and the next one: */
	uint8_t nx;              /* r[nx] is the next (swapped, not copied) */
	uint64_t rows;           /* written */
	uint64_t *keep;          /* --max-rows: per bucket, the kept row (global index + 1) */
	uint64_t *keep_held;
	uint64_t bucket;         /* rows per bucket */
	size_t base;             /* its first slot in gmt_curves.kept */
	/* --max-rows while writing: the rows that no later row has exceeded
	 * yet (held non-increasing upwards), and the next row's index */
	struct cand { uint64_t k, held, g; } *st;
	size_t n_st, cap_st;
	uint64_t next_k;         /* the row after the last one in the file */
} cdev_t;

/* --max-rows: a row waits in the queue (file order) until it is known
 * whether a bucket can keep it. */
enum { Q_WAIT = 0, Q_WRITE, Q_DROP };
typedef struct qent {
	crow_t r;
	uint64_t k;              /* its index among its device's rows */
	int state;
} qent_t;
#define QCAP  (1u << 14)     /* rows waiting at most (a full queue writes
				its oldest: never wrong, only larger) */
#define STCAP (1u << 14)     /* candidates a device (the same when full) */

/* A kept row in memory (--max-rows), with its place in the file + 1. */
typedef struct kept {
	uint64_t g;
	crow_t r;
} kept_t;

/* --max-rows keeps its rows in memory up to this many slots (72 bytes
 * each), so that the file is read once; beyond, read again to write. */
#define KEPT_MEM (1u << 16)

struct gmt_curves {
	enum gmt_view view;
	uint64_t max_rows;
	FILE *rows;
	uint64_t n_rows, n_kept;
	cdev_t *dev;             /* by ordinal */
	size_t n_dev;
	uint64_t cur_ts;
	int have_ts;
	int err;
	uint8_t *buf;            /* a block being written, or read */
	size_t len, pos;
	crow_t prev;             /* the file's previous row (writing, reading) */
	qent_t *q;               /* --max-rows: rows waiting, a ring of QCAP */
	uint64_t q_g0;           /* the first one's place in the file order */
	size_t q_n;
	kept_t *kept;            /* --max-rows: the kept rows in file order, */
	size_t n_kept_mem;       /* ... when they fit in KEPT_MEM slots      */
	gmt_curves_sink_t sink;  /* sink.row: rows go there, not to the file */
	int sink_full;           /* ... until it said it is full: the rest go
				    to the file                              */
	gmt_phases_t *ph;        /* the engine of the latest instant         */
	size_t n_pending;        /* devices with a row pending, ...          */
	int one;                 /* ... the ordinal when there is one        */
};

#define ROW_LAST(d) (&(d)->r[(d)->nx ^ 1])
#define ROW_NEXT(d) (&(d)->r[(d)->nx])

enum { M_DEV = 1, M_ALLOC = 2, M_RES = 4, M_OUT = 8, M_USED = 16, M_HELD = 32, M_PHASE = 64, M_HAS = 128,
       M_LIVE = 256, M_SKIP = 512 };

static unsigned has_bits(const crow_t *r)
{
	return r->has_alloc | r->has_res << 1 | r->has_used << 2 | r->has_phase << 3;
}

static int block_write(gmt_curves_t *c)
{
	uint32_t n = (uint32_t)c->len;
	if (!n)
		return 0;
	if (fwrite(&n, sizeof(n), 1, c->rows) != 1 || fwrite(c->buf, 1, n, c->rows) != n)
		return -(c->err = EIO);
	c->len = 0;
	return 0;
}

/* A value's length in the file: its bytes without the high zero ones. */
static inline unsigned vlen(uint64_t v)
{
	return v ? (unsigned)(71 - __builtin_clzll(v)) / 8 : 0;
}

static inline uint64_t to_le(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/* A row; skip: its device's rows left out just before it (--max-rows). */
static int row_put(gmt_curves_t *c, const crow_t *r, uint64_t skip)
{
	if (c->len + ROW_MAX > BLOCK && block_write(c))
		return -EIO;
	const crow_t *p = &c->prev;
	uint64_t v[10];
	unsigned m = 0, k = 0;
	int64_t dt = (int64_t)(r->ts - p->ts);
	v[k++] = ((uint64_t)dt << 1) ^ (uint64_t)(dt >> 63);
	if (skip) {
		m |= M_SKIP;
		v[k++] = skip;
	}
#define F(bit, field) \
	if (r->field != p->field) { \
		m |= bit; \
		v[k++] = (uint64_t)r->field; \
	}
	F(M_DEV, dev) F(M_ALLOC, allocated) F(M_RES, reserved) F(M_OUT, outside) F(M_USED, used)
	F(M_HELD, held) F(M_PHASE, phase) F(M_LIVE, live)
#undef F
	if (has_bits(r) != has_bits(p))
		m |= M_HAS;
	/* the header: the mask, and the count of values in its top 4 bits */
	uint8_t *o = c->buf + c->len, *nib = o + 2, *q = nib + (k + 1) / 2;
	o[0] = (uint8_t)m;
	o[1] = (uint8_t)(m >> 8 | k << 4);
	uint64_t lens = 0;
	for (unsigned i = 0; i < k; i++)
		lens |= (uint64_t)vlen(v[i]) << 4 * i;
	uint64_t le = to_le(lens);
	memcpy(nib, &le, 8);     /* (the block keeps ROW_MAX bytes free; the
				    values overwrite what is past the lengths) */
	for (unsigned i = 0; i < k; i++, lens >>= 4) {
		le = to_le(v[i]);
		memcpy(q, &le, 8);
		q += lens & 15;
	}
	if (m & M_HAS)
		*q++ = (uint8_t)has_bits(r);
	c->len = (size_t)(q - c->buf);
	c->prev = *r;
	return 0;
}

/* Back to the first row (after gmt_curves_finish wrote the last block). */
static int rows_rewind(gmt_curves_t *c)
{
	rewind(c->rows);
	c->len = c->pos = 0;
	memset(&c->prev, 0, sizeof(c->prev));
	return 0;
}

/* The next row: 1, 0 at the end, negative on a read error; *skip: its
 * device's rows left out just before it. */
static int row_get(gmt_curves_t *c, crow_t *r, uint64_t *skip)
{
	if (c->pos >= c->len) {
		uint32_t n;
		if (fread(&n, sizeof(n), 1, c->rows) != 1)
			return 0;
		if (n > BLOCK || fread(c->buf, 1, n, c->rows) != n)
			return -EIO;
		c->len = n;
		c->pos = 0;
	}
	const uint8_t *q = c->buf + c->pos, *end = c->buf + c->len;
	crow_t *p = &c->prev;
	if (end - q < 2)
		return -EIO;
	unsigned m = (q[0] | (unsigned)q[1] << 8) & 0xfff, k = q[1] >> 4;
	const uint8_t *nib = q + 2;
	if (k < 1 || k > 10 || (size_t)(end - nib) < (k + 1) / 2)
		return -EIO;
	/* The lengths and each value: 8 bytes loaded (the buffer has 8 to
	 * spare), their own kept. */
	uint64_t lens;
	memcpy(&lens, nib, 8);
	lens = to_le(lens);
	q = nib + (k + 1) / 2;
#define NEXT(v) \
	do { \
		unsigned n_ = (unsigned)(lens & 15); \
		uint64_t x_; \
		lens >>= 4; \
		if (n_ > 8 || (size_t)(end - q) < n_) \
			return -EIO; \
		memcpy(&x_, q, 8); \
		x_ = to_le(x_); \
		(v) = n_ == 8 ? x_ : x_ & ((1ull << (8 * n_)) - 1); \
		q += n_; \
	} while (0)
	uint64_t v;
	NEXT(v);
	p->ts += (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1));
	*skip = 0;
	if (m & M_SKIP)
		NEXT(*skip);
#define F(bit, field, type) \
	if (m & bit) { \
		NEXT(v); \
		p->field = (type)v; \
	}
	F(M_DEV, dev, int32_t) F(M_ALLOC, allocated, uint64_t) F(M_RES, reserved, uint64_t)
	F(M_OUT, outside, uint64_t) F(M_USED, used, uint64_t) F(M_HELD, held, uint64_t)
	F(M_PHASE, phase, uint32_t) F(M_LIVE, live, uint64_t)
#undef F
#undef NEXT
	if (m & M_HAS) {
		if (q >= end)
			return -EIO;
		unsigned h = *q++;
		p->has_alloc = h & 1;
		p->has_res = h >> 1 & 1;
		p->has_used = h >> 2 & 1;
		p->has_phase = h >> 3 & 1;
	}
	c->pos = (size_t)(q - c->buf);
	*r = *p;
	return 1;
}

static int rows_open(gmt_curves_t *c)
{
	if (!(c->rows = tmpfile()))
		return -(errno ? errno : EIO);
	if (!c->buf && !(c->buf = calloc(1, BLOCK + 8)))   /* 8: a value's load */
		return -ENOMEM;
	return 0;
}

static int c_reset(void *ctx)
{
	gmt_curves_t *c = ctx;
	int rc;
	if (c->rows)
		fclose(c->rows);
	c->rows = NULL;
	c->sink_full = 0;
	if (c->sink.row) {
		if (c->sink.reset && (rc = c->sink.reset(c->sink.ctx)))
			return rc < 0 ? rc : -EIO;
	} else if ((rc = rows_open(c))) {
		return rc;
	}
	c->ph = NULL;
	c->len = c->pos = 0;
	memset(&c->prev, 0, sizeof(c->prev));
	for (size_t i = 0; i < c->n_dev; i++) {
		free(c->dev[i].keep);
		free(c->dev[i].keep_held);
		free(c->dev[i].st);
	}
	free(c->dev);
	c->dev = NULL;
	c->q_g0 = 0;
	c->q_n = 0;
	c->n_dev = 0;
	c->n_pending = 0;
	free(c->kept);
	c->kept = NULL;
	c->n_kept_mem = 0;
	c->n_rows = c->n_kept = 0;
	c->have_ts = 0;
	c->err = 0;
	return 0;
}

gmt_curves_t *gmt_curves_new(enum gmt_view view, uint64_t max_rows)
{
	gmt_curves_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->view = view;
	c->max_rows = max_rows;
	return c;
}

void gmt_curves_free(gmt_curves_t *c)
{
	if (!c)
		return;
	if (c->rows)
		fclose(c->rows);
	for (size_t i = 0; i < c->n_dev; i++) {
		free(c->dev[i].keep);
		free(c->dev[i].keep_held);
		free(c->dev[i].st);
	}
	free(c->dev);
	free(c->q);
	free(c->kept);
	free(c->buf);
	free(c);
}

static cdev_t *cdev_grow(gmt_curves_t *c, int ordinal)
{
	if (ordinal < 0)
		return NULL;
	if ((size_t)ordinal >= c->n_dev) {
		size_t n = c->n_dev ? c->n_dev : 2;
		while (n <= (size_t)ordinal)
			n *= 2;
		cdev_t *nd = realloc(c->dev, n * sizeof(*nd));
		if (!nd)
			return NULL;
		memset(nd + c->n_dev, 0, (n - c->n_dev) * sizeof(*nd));
		c->dev = nd;
		c->n_dev = n;
	}
	return &c->dev[ordinal];
}

static inline cdev_t *cdev(gmt_curves_t *c, int ordinal)
{
	if (__builtin_expect(ordinal >= 0 && (size_t)ordinal < c->n_dev, 1))
		return &c->dev[ordinal];
	return cdev_grow(c, ordinal);
}

static int same(const crow_t *a, const crow_t *b)
{
	return a->allocated == b->allocated && a->reserved == b->reserved && a->outside == b->outside &&
	       a->used == b->used && a->held == b->held && a->live == b->live && a->phase == b->phase &&
	       a->has_alloc == b->has_alloc && a->has_res == b->has_res && a->has_used == b->has_used &&
	       a->has_phase == b->has_phase;
}

/* ---- --max-rows: rows that no bucket can keep are not written ---------------
 *
 * A device's rows are cut into buckets of B = ceil(rows / N) at the end,
 * and a bucket keeps its first row with the most held. B is not known while
 * the rows come, but it is at least ceil(rows so far / N). Row i cannot be
 * kept when an earlier row j1 holds at least as much, a later row j2 holds
 * more, and j2 - j1 <= B: its bucket (B consecutive rows, or the last ones)
 * then contains j1 or j2. With a stack of the rows that no later row has
 * exceeded yet, row i's j1 is the row below it and its j2 the row that
 * pops it (the nearest ones: the best test). Rows wait in file order in a
 * queue until decided; a row that cannot be decided in time (a full queue
 * or stack) is written, which only makes the file larger. */

static void decide(gmt_curves_t *c, uint64_t g, int state)
{
	if (g >= c->q_g0)
		c->q[g % QCAP].state = state;
}

/* Writes the decided rows at the queue's front; all: every row. */
static int q_drain(gmt_curves_t *c, int all)
{
	while (c->q_n) {
		qent_t *e = &c->q[c->q_g0 % QCAP];
		if (e->state == Q_WAIT && !all)
			break;
		if (e->state != Q_DROP) {
			cdev_t *d = &c->dev[e->r.dev];
			if (row_put(c, &e->r, e->k - d->next_k))
				return -(c->err = EIO);
			d->next_k = e->k + 1;
		}
		c->q_g0++;
		c->q_n--;
	}
	return 0;
}

/* Row r, the k-th of device d and the g-th of the file, just made. */
static int pruned_put(gmt_curves_t *c, cdev_t *d, const crow_t *r, uint64_t k, uint64_t g)
{
	uint64_t b_lo = (k + 1 + c->max_rows - 1) / c->max_rows;
	while (d->n_st && d->st[d->n_st - 1].held < r->held) {
		const struct cand *i = &d->st[--d->n_st];
		int drop = d->n_st && k - d->st[d->n_st - 1].k <= b_lo;
		decide(c, i->g, drop ? Q_DROP : Q_WRITE);
	}
	if (d->n_st == d->cap_st) {
		size_t nc = d->cap_st ? d->cap_st * 2 : 64;
		struct cand *ns = nc <= STCAP ? realloc(d->st, nc * sizeof(*ns)) : NULL;
		if (ns) {
			d->st = ns;
			d->cap_st = nc;
		} else {
			for (size_t j = 0; j < d->n_st; j++)
				decide(c, d->st[j].g, Q_WRITE);
			d->n_st = 0;
		}
	}
	int pushed = d->n_st < d->cap_st;
	if (pushed)
		d->st[d->n_st++] = (struct cand){ k, r->held, g };
	if (!c->q && !(c->q = malloc(QCAP * sizeof(*c->q))))
		return -(c->err = ENOMEM);
	while (c->q_n == QCAP) {
		c->q[c->q_g0 % QCAP].state = Q_WRITE;
		if (q_drain(c, 0))
			return -EIO;
	}
	if (g != c->q_g0 + c->q_n)
		return -(c->err = EIO);
	c->q[g % QCAP] = (qent_t){ *r, k, pushed ? Q_WAIT : Q_WRITE };
	c->q_n++;
	/* most of the time the front row still waits: nothing to write */
	return c->q[c->q_g0 % QCAP].state == Q_WAIT ? 0 : q_drain(c, 0);
}

/* Device d's pending row, written unless it repeats the last one. */
static inline int flush_dev(gmt_curves_t *c, cdev_t *d)
{
	d->pending = 0;
	if (d->seen && same(ROW_LAST(d), ROW_NEXT(d)))
		return 0;
	/* the sink, until it is full (1); then the file */
	int rc = c->sink.row && !c->sink_full ? c->sink.row(c->sink.ctx, c->ph, ROW_NEXT(d)) : 1;
	if (rc < 0)
		return -(c->err = -rc);
	if (rc) {
		if (!c->rows && (rc = rows_open(c)))
			return -(c->err = -rc);
		c->sink_full = c->sink.row != NULL;
		if (c->max_rows) {
			if ((rc = pruned_put(c, d, ROW_NEXT(d), d->rows, c->n_rows)))
				return rc;
		} else if (row_put(c, ROW_NEXT(d), 0)) {
			return -(c->err = EIO);
		}
	}
	d->nx ^= 1;
	d->seen = 1;
	d->rows++;
	c->n_rows++;
	return 0;
}

/* The pending rows, by device ordinal. */
static int flush(gmt_curves_t *c)
{
	int rc = 0;
	if (c->n_pending == 1) {
		rc = flush_dev(c, &c->dev[c->one]);
	} else if (c->n_pending) {
		for (size_t i = 0; i < c->n_dev && !rc; i++)
			if (c->dev[i].pending)
				rc = flush_dev(c, &c->dev[i]);
	}
	c->n_pending = 0;
	return rc;
}

/* A device's row of this instant so far (phase, open: the innermost open
 * phase). */
static inline int set_pending(gmt_curves_t *c, const gmt_levels_t *lv, int ordinal, uint64_t ts,
			      uint32_t phase, int open)
{
	cdev_t *d = cdev(c, ordinal);
	if (!d)
		return -ENOMEM;
	gmt_lv_curve_t v;
	gmt_levels_curve(lv, ordinal, c->view, &v);
	crow_t *r = ROW_NEXT(d);
	r->ts = ts;
	r->dev = ordinal;
	r->allocated = v.allocated;
	r->has_alloc = v.has_allocated;
	r->reserved = v.reserved;
	r->has_res = v.has_reserved;
	r->outside = v.outside;
	r->used = v.used;
	r->has_used = v.has_used;
	r->held = v.held;
	r->live = v.live;
	r->phase = phase;
	r->has_phase = (uint8_t)open;
	memset(r->pad, 0, sizeof(r->pad));
	if (!d->pending) {
		d->pending = 1;
		c->n_pending++;
		c->one = ordinal;
	}
	return 0;
}

static int c_instant(void *ctx, gmt_phases_t *ph, uint64_t ts, const int *devs, size_t n, int changed)
{
	gmt_curves_t *c = ctx;
	int rc;
	if (!c->rows && !c->sink.row)
		return -EIO;
	if (c->have_ts && ts != c->cur_ts && (rc = flush(c)))
		return rc;
	c->ph = ph;
	c->have_ts = 1;
	c->cur_ts = ts;
	const gmt_levels_t *lv = gmt_phases_levels(ph);
	int open;
	uint32_t phase = gmt_phases_current(ph, &open);
	for (size_t i = 0; i < n; i++)
		if (devs[i] >= 0 && (rc = set_pending(c, lv, devs[i], ts, phase, open)))
			return rc;
	if (changed) {
		int all[256];
		size_t k = gmt_phases_devices(ph, all, 256);
		for (size_t i = 0; i < k && i < 256; i++)
			if ((rc = set_pending(c, lv, all[i], ts, phase, open)))
				return rc;
	}
	return 0;
}

void gmt_curves_set_sink(gmt_curves_t *c, const gmt_curves_sink_t *sink)
{
	if (!c->max_rows)
		c->sink = *sink;
}

void gmt_curves_hook(gmt_curves_t *c, gmt_phases_hook_t *hook)
{
	memset(hook, 0, sizeof(*hook));
	hook->ctx = c;
	hook->reset = c_reset;
	hook->instant = c_instant;
}

static int kept_cmp(const void *a, const void *b)
{
	uint64_t x = ((const kept_t *)a)->g, y = ((const kept_t *)b)->g;
	return x < y ? -1 : x > y;
}

int gmt_curves_finish(gmt_curves_t *c)
{
	int rc;
	if (!c->rows && !c->sink.row)
		return -EIO;
	if ((rc = flush(c)))
		return rc;
	c->n_kept = c->n_rows;
	if (!c->rows)
		return 0;                /* (every row went to the sink) */
	/* the rows no later row exceeded are written */
	if ((rc = q_drain(c, 1)))
		return rc;
	if (block_write(c) || fflush(c->rows))
		return -EIO;
	if (!c->max_rows)
		return 0;
	/* --max-rows: per device, the best row of each bucket; the rows to
	 * write kept in memory when they fit (slots: max_rows a device). */
	size_t slots = 0;
	for (size_t i = 0; i < c->n_dev; i++) {
		cdev_t *d = &c->dev[i];
		d->base = slots;
		if (d->rows && slots <= KEPT_MEM)
			slots = c->max_rows > KEPT_MEM - slots ? KEPT_MEM + 1 : slots + (size_t)c->max_rows;
		if (d->rows <= c->max_rows)
			continue;
		d->bucket = (d->rows + c->max_rows - 1) / c->max_rows;
		d->keep = calloc(c->max_rows, sizeof(*d->keep));
		d->keep_held = calloc(c->max_rows, sizeof(*d->keep_held));
		if (!d->keep || !d->keep_held)
			return -ENOMEM;
	}
	kept_t *mem = slots && slots <= KEPT_MEM ? calloc(slots, sizeof(*mem)) : NULL;
	if (rows_rewind(c))
		return -EIO;
	uint64_t *seen = calloc(c->n_dev ? c->n_dev : 1, sizeof(*seen));
	if (!seen) {
		free(mem);
		return -ENOMEM;
	}
	crow_t r;
	int got;
	uint64_t skip;
	for (uint64_t g = 0; (got = row_get(c, &r, &skip)) == 1; g++) {
		cdev_t *d = cdev(c, r.dev);
		if (!d)
			continue;
		seen[r.dev] += skip;
		uint64_t k = seen[r.dev]++;
		if (d->keep) {
			uint64_t b = k / d->bucket;
			if (!d->keep[b] || r.held > d->keep_held[b]) {
				d->keep[b] = g + 1;
				d->keep_held[b] = r.held;
				if (mem)
					mem[d->base + b] = (kept_t){ g + 1, r };
			}
		} else if (mem) {
			mem[d->base + k] = (kept_t){ g + 1, r };
		}
	}
	free(seen);
	if (got < 0) {
		free(mem);
		return got;
	}
	c->n_kept = 0;
	for (size_t i = 0; i < c->n_dev; i++) {
		cdev_t *d = &c->dev[i];
		if (!d->keep) {
			c->n_kept += d->rows;
			continue;
		}
		for (uint64_t b = 0; b < c->max_rows; b++)
			c->n_kept += d->keep[b] ? 1 : 0;
	}
	if (mem) {
		/* the used slots, in file order */
		size_t n = 0;
		for (size_t i = 0; i < slots; i++)
			if (mem[i].g)
				mem[n++] = mem[i];
		qsort(mem, n, sizeof(*mem), kept_cmp);
		c->kept = mem;
		c->n_kept_mem = n;
	}
	return 0;
}

uint64_t gmt_curves_rows(const gmt_curves_t *c, uint64_t *all)
{
	if (all)
		*all = c->n_rows;
	return c->n_kept;
}

int gmt_curves_each_row(gmt_curves_t *c, int (*out)(void *, const gmt_curve_row_t *), void *ctx)
{
	crow_t r;
	if (c->kept) {
		int rc = 0;
		for (size_t i = 0; i < c->n_kept_mem && !rc; i++)
			rc = out(ctx, &c->kept[i].r);
		return rc;
	}
	if (!c->rows)
		return 0;
	uint64_t *idx = c->n_dev ? calloc(c->n_dev, sizeof(*idx)) : NULL;   /* rows seen */
	int rc = 0;
	if (c->n_dev && !idx)
		return -ENOMEM;
	if (rows_rewind(c)) {
		free(idx);
		return -EIO;
	}
	int got = 0;
	uint64_t skip;
	for (uint64_t g = 0; !rc && (got = row_get(c, &r, &skip)) == 1; g++) {
		cdev_t *d = cdev(c, r.dev);
		if (!d)
			continue;
		if (d->keep) {
			/* a bucket's kept row is the only one of that bucket */
			idx[r.dev] += skip;
			uint64_t b = idx[r.dev]++ / d->bucket;
			if (d->keep[b] != g + 1)
				continue;
		}
		rc = out(ctx, &r);
	}
	free(idx);
	return rc ? rc : got < 0 ? got : 0;
}

enum gmt_view gmt_curves_view(const gmt_curves_t *c)
{
	return c->view;
}

uint64_t gmt_curves_dev_rows(gmt_curves_t *c, int ordinal)
{
	cdev_t *d = cdev(c, ordinal);
	return d ? d->rows : 0;
}
