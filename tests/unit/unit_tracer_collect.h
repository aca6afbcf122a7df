/* unit_tracer_collect.h - private to the tracer/decoder unit tests: a
 * visitor that keeps everything a trace holds, and small helpers. */
#ifndef UNIT_TRACER_COLLECT_H
#define UNIT_TRACER_COLLECT_H
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gmt_decode.h"
#include "gmt_tracer.h"

typedef struct coll_stack {
	uint32_t id;
	size_t n;
	uint64_t frames[130];
} coll_stack_t;

typedef struct coll {
	gmt_devent_t *ev;
	unsigned char *late;
	size_t n, cap;
	size_t n_late;
	int headers;
	uint64_t pid, ppid;
	unsigned major, minor, stack_depth;
	int free_stacks;
	char exe[4096];
	size_t n_env_gpumemtrace;
	size_t n_threads;
	uint32_t thread_idx[512];
	uint64_t thread_tid[512];
	char thread_name[512][32];
	size_t n_stacks;
	coll_stack_t stacks[256];
	size_t n_modules;
	char module_path[512][256];
	uint64_t module_base[512], module_size[512];
	size_t module_bid_len[512];
	size_t n_strings;
	uint32_t string_id[64];
	char string_text[64][64];
	size_t n_devices;
	char device_name[8][64];
	uint64_t device_total[8];
	int device_ordinal[8];
	unsigned char device_uuid[8][16];
	size_t n_drops;
	uint64_t drops_total, drops_buffer, drops_write;
	uint64_t drops_records;   /* DROPS records read */
	int drops_errno;
	int has_end;
	gmt_end_t end;      /* end.how points into end_how */
	char end_how[32];
	size_t n_meta;
	char meta_kv[8][128];
	int records_before_header;
} coll_t;

static int c_header(void *ctx, const gmt_header_t *h)
{
	coll_t *c = ctx;
	c->headers++;
	c->pid = h->pid;
	c->ppid = h->ppid;
	c->major = h->format_major;
	c->minor = h->format_minor;
	c->stack_depth = h->stack_depth;
	c->free_stacks = h->free_stacks;
	snprintf(c->exe, sizeof(c->exe), "%s", h->exe);
	for (size_t i = 0; i < h->n_env; i++)
		if (!strncmp(h->env[i].key, "GPUMEMTRACE_", 12))
			c->n_env_gpumemtrace++;
	return 0;
}

static int c_thread(void *ctx, uint32_t idx, uint64_t tid, const char *name)
{
	coll_t *c = ctx;
	if (c->n_threads < 512) {
		c->thread_idx[c->n_threads] = idx;
		c->thread_tid[c->n_threads] = tid;
		snprintf(c->thread_name[c->n_threads], 32, "%s", name);
	}
	c->n_threads++;
	return 0;
}

static int c_module(void *ctx, const gmt_module_t *m)
{
	coll_t *c = ctx;
	if (c->n_modules < 512) {
		snprintf(c->module_path[c->n_modules], 256, "%s", m->path);
		c->module_base[c->n_modules] = m->base;
		c->module_size[c->n_modules] = m->size;
		c->module_bid_len[c->n_modules] = m->build_id_len;
	}
	c->n_modules++;
	return 0;
}

static int c_stack(void *ctx, uint32_t id, const uint64_t *f, size_t n)
{
	coll_t *c = ctx;
	if (c->n_stacks < 256) {
		coll_stack_t *s = &c->stacks[c->n_stacks];
		s->id = id;
		s->n = n;
		memcpy(s->frames, f, (n < 130 ? n : 130) * sizeof(*f));
	}
	c->n_stacks++;
	return 0;
}

static int c_device(void *ctx, const gmt_device_rec_t *d)
{
	coll_t *c = ctx;
	if (c->n_devices < 8) {
		snprintf(c->device_name[c->n_devices], 64, "%s", d->name);
		c->device_total[c->n_devices] = d->total_bytes;
		c->device_ordinal[c->n_devices] = d->ordinal;
		memcpy(c->device_uuid[c->n_devices], d->uuid, 16);
	}
	c->n_devices++;
	return 0;
}

static int c_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	coll_t *c = ctx;
	if (c->n + n > c->cap) {
		size_t cap = c->cap ? c->cap : 1024;
		while (cap < c->n + n)
			cap *= 2;
		c->ev = realloc(c->ev, cap * sizeof(*c->ev));
		c->late = realloc(c->late, cap);
		c->cap = cap;
	}
	memcpy(c->ev + c->n, ev, n * sizeof(*ev));
	memset(c->late + c->n, (flags & GMT_EVENTS_LATE) ? 1 : 0, n);
	c->n += n;
	if (flags & GMT_EVENTS_LATE)
		c->n_late += n;
	return 0;
}

static int c_drops(void *ctx, const gmt_drops_t *d)
{
	coll_t *c = ctx;
	c->n_drops++;
	c->drops_total += d->count;
	c->drops_records++;
	if (!strcmp(d->reason, "buffer_full"))
		c->drops_buffer += d->count;
	if (!strcmp(d->reason, "write_error")) {
		c->drops_write += d->count;
		c->drops_errno = d->err;
	}
	return 0;
}

static int c_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	coll_t *c = ctx;
	if (c->n_strings < 64) {
		c->string_id[c->n_strings] = id;
		snprintf(c->string_text[c->n_strings], 64, "%s", text);
	}
	c->n_strings++;
	return 0;
}

static int c_end(void *ctx, const gmt_end_t *e)
{
	coll_t *c = ctx;
	c->has_end++;
	c->end = *e;
	snprintf(c->end_how, sizeof(c->end_how), "%s", e->how);
	c->end.how = c->end_how;
	return 0;
}

static int c_meta(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	coll_t *c = ctx;
	for (size_t i = 0; i < n && c->n_meta < 8; i++)
		snprintf(c->meta_kv[c->n_meta++], 128, "%s=%s", kv[i].key, kv[i].value);
	return 0;
}

static const gmt_visitor_t coll_visitor = {
	.header = c_header, .thread = c_thread, .module = c_module, .stack = c_stack,
	.device = c_device, .events = c_events, .drops = c_drops, .string = c_string,
	.end = c_end, .meta = c_meta,
};

static __attribute__((unused)) void coll_free(coll_t *c)
{
	free(c->ev);
	free(c->late);
	memset(c, 0, sizeof(*c));
}

/* Decodes path into a fresh (heap) collector. */
static __attribute__((unused)) coll_t *coll_decode(const char *path, gmt_decode_result_t *r)
{
	coll_t *c = calloc(1, sizeof(*c));
	gmt_visitor_t v = coll_visitor;
	v.ctx = c;
	gmt_decode_file(path, &v, r);
	return c;
}

#ifdef CHECK_EQ_U64
/* The trace at path decoded (the caller frees it: coll_free, free), checked
 * to end cleanly with `written` events in it, END's counts and the DROPS
 * records' total saying `written` and `dropped`. Include gmt_test.h
 * first. */
static __attribute__((unused)) coll_t *coll_decode_ended(const char *path, uint64_t written, uint64_t dropped)
{
	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(written, c->n);
	CHECK_EQ_U64(written, c->end.written);
	CHECK_EQ_U64(dropped, c->end.dropped);
	CHECK_EQ_U64(dropped, c->drops_total);
	return c;
}
#endif

/* A stream of allocations and frees: event 2k allocates block k, event
 * 2k + 1 frees block k - 16 (16 blocks live from then on: a free names an
 * allocation a few frames back by its id), or, for k < 16, a block never
 * allocated (named by address). Every block has its own address, sizes
 * vary: a run of lost events is found as such (coll_runs). */
static __attribute__((unused)) gmt_event_t coll_pair_ev(uint64_t i)
{
	uint64_t k = i / 2;
	uint64_t b = (i & 1) ? (k >= 16 ? k - 16 : (1ull << 30) + k) : k;
	gmt_event_t e = { .type = (i & 1) ? GMT_EV_FREE : GMT_EV_ALLOC,
			  .addr = 0x7100000000ull + b * 0x10000,
			  .size = (i & 1) ? 0 : 512 + (k * 40503u % 8192) * 64,
			  .device = 0 };
	return e;
}

/* The trace's events against the emitted ev(0..n): runs of them in order,
 * what lies between runs and after the last lost. Returns how many are
 * none of the emitted ones in order, or out of time order (0 for a good
 * trace); *gaps: the runs of lost events, between written ones or after
 * the last (which events a lost frame held depends on the writer's
 * timing: it may have held every one to the end), *lost: the events in
 * them. ev must give each event
 * its own (type, address, size), or a run of lost events is taken for a
 * shorter one. */
static __attribute__((unused)) uint64_t coll_runs(const coll_t *c, gmt_event_t (*ev)(uint64_t), uint64_t n,
						   uint64_t *gaps, uint64_t *lost)
{
	uint64_t bad = 0, j = 0, g = 0, l = 0;
	for (uint64_t i = 0; i < c->n; i++, j++) {
		const gmt_devent_t *d = &c->ev[i];
		uint64_t from = j;
		while (j < n) {   /* the next emitted event it can be */
			gmt_event_t e = ev(j);
			if (d->type == e.type && d->addr == e.addr && d->size == e.size)
				break;
			j++;
		}
		if (j > from) {
			g++;
			l += j - from;
		}
		if (j >= n || (i && d->ts < c->ev[i - 1].ts))
			bad++;
	}
	*gaps = g + (j < n);
	*lost = l + (j < n ? n - j : 0);
	return bad;
}

static __attribute__((unused)) const coll_stack_t *coll_find_stack(const coll_t *c, uint32_t id)
{
	for (size_t i = 0; i < c->n_stacks && i < 256; i++)
		if (c->stacks[i].id == id)
			return &c->stacks[i];
	return NULL;
}

/* A fresh directory for traces: $TESTDIR/name (run.sh) or /tmp. */
static __attribute__((unused)) const char *test_dir(const char *name)
{
	static char buf[4096];
	const char *t = getenv("TESTDIR");
	if (t && *t) {
		snprintf(buf, sizeof(buf), "%s/%s", t, name);
		mkdir(buf, 0755);
	} else {
		snprintf(buf, sizeof(buf), "/tmp/%s.XXXXXX", name);
		if (!mkdtemp(buf))
			abort();
	}
	return buf;
}

/* Runs fn in a child process; fn leaves its trace's path in path (cap
 * bytes), which comes back through a pipe. Returns the child's exit status
 * (1: a check failed there), 128 when it did not exit. Include gmt_test.h
 * first. */
static __attribute__((unused)) int coll_in_child(void (*fn)(void), char *path, size_t cap)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		gmt_test_failures = 0;   /* the child's status: its own checks */
		fn();
		ssize_t w = write(p[1], path, strlen(path) + 1);
		(void)w;
		_exit(gmt_test_failures ? 1 : 0);
	}
	close(p[1]);
	ssize_t n = read(p[0], path, cap - 1);
	path[n > 0 ? n : 0] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static __attribute__((unused)) gmt_config_t test_config(const char *dir)
{
	gmt_config_t cfg;
	gmt_config_from_env(&cfg);
	cfg.output = dir;
	cfg.stack_depth = 0;
	cfg.install_signal_handlers = 0;
	cfg.log_level = 1;
	return cfg;
}

static __attribute__((unused)) int file_bytes(const char *path, unsigned char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*data = malloc((size_t)n + 1);
	*len = fread(*data, 1, (size_t)n, f);
	fclose(f);
	return 0;
}
#endif
