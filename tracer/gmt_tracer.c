/*
 * gmt_tracer.c - the tracer core: configuration, the hot path, per-thread
 * buffers, the thread registry, metadata (threads, devices, strings, meta),
 * init / shutdown (the end of the trace), fork. Signals: gmt_signals.c.
 *
 * How an event travels. gmt_emit() runs in the application's thread: it
 * marks the thread busy (an odd sequence number), reads the clock
 * (CLOCK_MONOTONIC in ns, mostly extended from the TSC: gmt_clock.h says
 * how), copies the 48-byte event into the thread's current
 * chunk, publishes it with a release store of the chunk's count, and clears
 * the busy mark. No lock, no system call, no allocation on that path. A
 * full chunk is followed by a new one (4 KiB for a thread's first, twice the
 * last up to 64 KiB: a thread that records little holds little), allocated
 * when one CAS on buf_used keeps the buffer within its limit (the cap, and
 * about 100 ms of the writer's throughput, gmt_writer.c); otherwise the
 * event is counted as dropped in the thread's own counters, and until the
 * writer's next round a drop costs no shared write at all. The writer
 * thread (gmt_writer.c) drains the chunks, frees them, merges the threads
 * by timestamp, encodes and compresses. Names (strings, text stacks) take
 * at most an eighth of the cap.
 *
 * Metadata (THREAD, DEVICE, STRING, META) is rare: it is encoded to msgpack
 * in the calling thread and queued under a mutex; the writer writes the
 * queue before the events of its round. Because the queue is taken after
 * the round's T0 and an event's clock is read after its metadata was queued,
 * every record precedes the events that refer to it.
 *
 * Fork: the child keeps nothing of the parent's buffers, queue, file or
 * writer; it starts a new file at its first traced call (state OFF). Strings
 * and devices are replayed into the child's queue, so the ids it already
 * holds stay valid in its own file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "gmt_internal.h"

gmt_global_t gmt_g = {
	.init_lock = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wait_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.meta_tail = &gmt_g.meta_head,
	.persist_tail = &gmt_g.persist_head,
};

static __thread gmt_tstate_t *tls_state __attribute__((tls_model("initial-exec")));
__thread int gmt_tls_in_writer __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static int stacks_on, free_stacks;
static pid_t owner_pid;        /* the process whose trace this is */

/* ---- configuration ------------------------------------------------------ */

/* The environment is read more than once per process (the preload's start
 * for its log level, the tracer's start): a bad setting is said only the
 * first time (config_loud, set per call). */
static _Atomic int config_reads;
static __thread int config_loud;
#define CONFIG_WARN(...)                          \
	do {                                      \
		if (config_loud)                  \
			gmt_log(1, __VA_ARGS__);  \
	} while (0)

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *e = getenv(name);
	if (!e || !*e)
		return def;
	char *end;
	errno = 0;
	long v = strtol(e, &end, 10);
	if (errno || *end) {
		CONFIG_WARN("%s=%s is not a number; using %ld", name, e, def);
		return def;
	}
	return v < lo ? lo : v > hi ? hi : v;
}

static int errno_by_name(const char *s)
{
	if (!strcmp(s, "ENOSPC"))
		return ENOSPC;
	if (!strcmp(s, "EIO"))
		return EIO;
	if (!strcmp(s, "EDQUOT"))
		return EDQUOT;
	return 0;
}

void gmt_config_from_env(gmt_config_t *c)
{
	config_loud = atomic_fetch_add(&config_reads, 1) == 0;
	memset(c, 0, sizeof(*c));
	const char *o = getenv("GPUMEMTRACE_OUTPUT");
	c->output = o && *o ? o : NULL;
	c->stack_depth = (int)env_long("GPUMEMTRACE_STACK_DEPTH", 20, 0, 128);
	c->free_stacks = (int)env_long("GPUMEMTRACE_FREE_STACKS", 0, 0, 1);
	const char *sm = getenv("GPUMEMTRACE_STACK_METHOD");
	if (sm && *sm && strcmp(sm, "auto")) {
		if (!strcmp(sm, "libunwind"))
			c->stack_method = GMT_STACK_LIBUNWIND;
		else
			CONFIG_WARN("GPUMEMTRACE_STACK_METHOD=%s: expected auto or libunwind; using auto", sm);
	}
	const char *ov = getenv("GPUMEMTRACE_OVERLOAD");
	if (ov && *ov && strcmp(ov, "help")) {
		if (!strcmp(ov, "drop"))
			c->overload = GMT_OVERLOAD_DROP;
		else
			CONFIG_WARN("GPUMEMTRACE_OVERLOAD=%s: expected help or drop; using help", ov);
	}
	c->buffer_bytes = (size_t)env_long("GPUMEMTRACE_BUFFER_MB", 64, 1, 1 << 20) << 20;
	c->buffer_ms = (int)env_long("GPUMEMTRACE_BUFFER_MS", 100, 0, 100000);
	c->flush_ms = (int)env_long("GPUMEMTRACE_FLUSH_MS", 10, 1, 100);
	c->zstd_level = (int)env_long("GPUMEMTRACE_ZSTD_LEVEL", GMT_ZSTD_LEVEL_DEFAULT, -7, 19);
	c->log_level = (int)env_long("GPUMEMTRACE_LOG", 1, 0, 3);
	c->install_signal_handlers = (int)env_long("GPUMEMTRACE_SIGNALS", 1, 0, 1);
	const char *cl = getenv("GPUMEMTRACE_CMDLINE");
	if (!cl || !*cl || !strcmp(cl, "full")) {
		c->cmdline = GMT_CMDLINE_FULL;
	} else if (!strcmp(cl, "none")) {
		c->cmdline = GMT_CMDLINE_NONE;
	} else {
		/* A privacy setting that is misspelt fails closed. */
		if (strcmp(cl, "redact"))
			CONFIG_WARN("GPUMEMTRACE_CMDLINE=%s: expected full, redact or none; using redact", cl);
		c->cmdline = GMT_CMDLINE_REDACT;
	}
	c->test_write_delay_ms = (int)env_long("GPUMEMTRACE_TEST_WRITE_DELAY_MS", 0, 0, 10000);
	const char *f = getenv("GPUMEMTRACE_TEST_FAIL_WRITES");
	if (f && *f) {
		/* "N:ERRNO[:M[:events]]" */
		char name[16] = "", which[8] = "";
		long n = 0, m = 0;
		int k = sscanf(f, "%ld:%15[A-Z]:%ld:%7s", &n, name, &m, which);
		int err = k >= 2 ? errno_by_name(name) : 0;
		if (n > 0 && err && (k < 4 || !strcmp(which, "events"))) {
			c->test_fail_write_after = n;
			c->test_fail_errno = err;
			c->test_fail_count = k >= 3 ? m : 0;
			c->test_fail_events_only = k == 4;
		} else {
			CONFIG_WARN("GPUMEMTRACE_TEST_FAIL_WRITES=%s: expected N:ENOSPC|EIO|EDQUOT[:M[:events]]", f);
		}
	}
}

uint64_t gmt_now_ns(void)
{
	return gmt_clock_ns();
}

/* ---- chunks ------------------------------------------------------------- */

/* A chunk of this size, if buf_used stays within buf_limit (one CAS, once
 * per chunk); NULL when it would not, or when memory is short. */
static gmt_chunk_t *chunk_alloc(uint32_t bytes)
{
	size_t used = atomic_load_explicit(&gmt_g.buf_used, memory_order_relaxed);
	do {
		if (used + bytes > atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed))
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&gmt_g.buf_used, &used, used + bytes,
							 memory_order_relaxed, memory_order_relaxed));
	gmt_chunk_t *c = gmt_slab_get();
	if (!c)
		c = aligned_alloc(64, bytes);
	if (!c) {
		atomic_fetch_sub_explicit(&gmt_g.buf_used, bytes, memory_order_relaxed);
		return NULL;
	}
	atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&c->count, 0, memory_order_relaxed);
	c->cap = GMT_CHUNK_CAP(bytes);
	c->bytes = bytes;
	c->rd = 0;
	return c;
}

void gmt_chunk_free(gmt_chunk_t *c)
{
	size_t bytes = c->bytes;
	if (!gmt_slab_put(c))
		free(c);
	atomic_fetch_sub_explicit(&gmt_g.buf_used, bytes, memory_order_relaxed);
}

/* ---- metadata queue ----------------------------------------------------- */

gmt_mrec_t *gmt_mrec_new(const void *data, size_t len)
{
	gmt_mrec_t *r = malloc(sizeof(*r) + len);
	if (!r)
		return NULL;
	r->next = NULL;
	r->len = len;
	r->charged = 0;
	memcpy(r->data, data, len);
	return r;
}

void gmt_mrec_free(gmt_mrec_t *r)
{
	if (r && r->charged)
		atomic_fetch_sub_explicit(&gmt_g.buf_used, r->charged, memory_order_relaxed);
	free(r);
}

static void meta_push_locked(gmt_mrec_t *r, int persist)
{
	if (persist) {
		gmt_mrec_t *copy = gmt_mrec_new(r->data, r->len);
		if (copy) {
			*gmt_g.persist_tail = copy;
			gmt_g.persist_tail = &copy->next;
		}
	}
	*gmt_g.meta_tail = r;
	gmt_g.meta_tail = &r->next;
}

void gmt_meta_push(gmt_mrec_t *r, int persist)
{
	if (!r)
		return;
	pthread_mutex_lock(&gmt_g.lock);
	meta_push_locked(r, persist);
	pthread_mutex_unlock(&gmt_g.lock);
}

/* Encodes one record with a fresh packer into a queue entry. */
typedef struct rec_builder {
	msgpack_sbuffer sb;
	msgpack_packer pk;
} rec_builder_t;

static void rb_init(rec_builder_t *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

static gmt_mrec_t *rb_finish(rec_builder_t *b)
{
	gmt_mrec_t *r = b->sb.data ? gmt_mrec_new(b->sb.data, b->sb.size) : NULL;
	msgpack_sbuffer_destroy(&b->sb);
	return r;
}

static void pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s ? s : "", n);
}

/* ---- thread registry ---------------------------------------------------- */

static void thread_exit(void *p)
{
	gmt_tstate_t *t = p;
	if (tls_state == t)
		tls_state = NULL;
	atomic_store_explicit(&t->dead, 1, memory_order_release);
}

static gmt_tstate_t *thread_register(void)
{
	gmt_tstate_t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = (pid_t)gettid();
	t->next_bytes = GMT_CHUNK_MIN_BYTES;   /* tail_n == tail_cap == 0: the
						  first emit takes a chunk */
	char name[17] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	/* Events of this thread are time-stamped after this instant, so it is
	 * a safe "last published" value while the first event is in flight. */
	atomic_store_explicit(&t->pub_ts, gmt_now_ns(), memory_order_relaxed);

	rec_builder_t b;
	pthread_mutex_lock(&gmt_g.lock);
	if (gmt_g.n_threads == gmt_g.cap_threads) {
		size_t cap = gmt_g.cap_threads ? 2 * gmt_g.cap_threads : 16;
		gmt_tstate_t **a = realloc(gmt_g.threads, cap * sizeof(*a));
		if (!a) {
			pthread_mutex_unlock(&gmt_g.lock);
			free(t);
			return NULL;
		}
		gmt_g.threads = a;
		gmt_g.cap_threads = cap;
	}
	t->idx = gmt_g.next_thread_idx++;
	rb_init(&b);
	msgpack_pack_array(&b.pk, 4);
	msgpack_pack_uint8(&b.pk, GMT_REC_THREAD);
	msgpack_pack_uint32(&b.pk, t->idx);
	msgpack_pack_uint64(&b.pk, (uint64_t)t->tid);
	pack_str(&b.pk, name);
	gmt_mrec_t *r = rb_finish(&b);
	if (r)
		meta_push_locked(r, 0);
	gmt_g.threads[gmt_g.n_threads++] = t;
	pthread_mutex_unlock(&gmt_g.lock);

	tls_state = t;
	pthread_setspecific(thread_key, t);
	return t;
}

/* ---- hot path ----------------------------------------------------------- */

/* The buffer cap is reached: the event is counted in the thread's own
 * counters (written by this thread only; the writer reads them), no shared
 * write at all. */
static __attribute__((noinline)) void drop_buffer_full(gmt_tstate_t *t, uint64_t ts)
{
	if (!t->dropping) {
		t->dropping = 1;
		atomic_store_explicit(&t->drop_first, ts, memory_order_relaxed);
	}
	atomic_store_explicit(&t->drop_last, ts, memory_order_relaxed);
	atomic_store_explicit(&t->drop_n, atomic_load_explicit(&t->drop_n, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* The thread's help to the writer (gmt_writer_assist), with its busy mark
 * off: a helper that stayed busy would hold every round's watermark at its
 * own last published event, and with all threads waiting to help no round
 * could take anything. So the event in hand is begun again after the help
 * (*seq the new busy mark's base, *ts read again unless the caller gave
 * one): its time is when it is published, still before a free's real call
 * and after an allocation's. Returns gmt_writer_assist's answer. */
static int help_writer(gmt_tstate_t *t, int wait, uint64_t *seq, uint64_t *ts, uint64_t given)
{
	atomic_store_explicit(&t->seq, *seq + 2, memory_order_release);
	int r = gmt_writer_assist(wait);
	*seq += 2;
	atomic_store_explicit(&t->seq, *seq + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (!given) {
		uint64_t now = gmt_clock_fast_ns();
		*ts = now ? now : gmt_clock_slow();
	}
	return r;
}

/* Links a fresh chunk after the full tail; 0 when the buffer cap is
 * reached. Once refused, a thread asks again only after the writer's next
 * round (round_gen): under overload each event costs one shared load. A
 * buffer that is behind (over half its limit) or full gets this thread's
 * help first (GPUMEMTRACE_OVERLOAD=help: help_writer). The event in hand
 * (busy mark *seq + 1, time *ts, the caller's own time given or 0) may be
 * begun again on the way. */
static __attribute__((noinline)) int chunk_advance(gmt_tstate_t *t, uint64_t *seq, uint64_t *ts,
						   uint64_t given)
{
	uint64_t gen = atomic_load_explicit(&gmt_g.round_gen, memory_order_relaxed);
	if (t->dropping && t->drop_gen == gen)
		return 0;
	gmt_chunk_t *c = chunk_alloc(t->next_bytes);
	const int help = gmt_g.cfg.overload == GMT_OVERLOAD_HELP;
	if (!c && help) {
		/* Room comes back a chunk at a time and any thread may take it:
		 * after each wait the smallest chunk is taken when this thread's
		 * own size does not fit, and the thread waits again as long as
		 * the writer (or a helper) made progress in the last slice, 16
		 * waits at most. Only a writer stuck in a write, or all those
		 * waits, drop the event. */
		gmt_watch_t wt;
		gmt_watch_begin(&wt, gmt_now_ns());
		for (int tries = 0; !c && tries < 16; tries++) {
			const int helped = help_writer(t, 1, seq, ts, given);
			c = chunk_alloc(t->next_bytes);
			if (!c && t->next_bytes > GMT_CHUNK_MIN_BYTES && (c = chunk_alloc(GMT_CHUNK_MIN_BYTES)))
				t->next_bytes = GMT_CHUNK_MIN_BYTES;
			if (!helped && gmt_watch_idle(&wt, gmt_now_ns()) >= GMT_WAIT_SLICE_MS * 1000000ull)
				break;
		}
	}
	if (!c) {
		t->drop_gen = gen;
		return 0;
	}
	if (t->tail)
		atomic_store_explicit(&t->tail->next, c, memory_order_release);
	else
		atomic_store_explicit(&t->head, c, memory_order_release);
	t->tail = c;
	t->tail_n = 0;
	t->tail_cap = c->cap;
	if (t->next_bytes < GMT_CHUNK_MAX_BYTES)
		t->next_bytes *= 2;
	t->dropping = 0;
	if (atomic_load_explicit(&gmt_g.buf_used, memory_order_relaxed) * 2 >
	    atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed)) {
		if (!help || !help_writer(t, 0, seq, ts, given))
			gmt_writer_wake();
	}
	return 1;
}

static __attribute__((noinline)) gmt_tstate_t *thread_attach(void)
{
	if (atomic_load_explicit(&gmt_g.state, memory_order_acquire) == GMT_OFF)
		gmt_tracer_init(NULL);
	if (atomic_load_explicit(&gmt_g.state, memory_order_acquire) != GMT_ACTIVE)
		return NULL;
	return tls_state ? tls_state : thread_register();
}

static inline int is_free_like(unsigned type)
{
	return type == GMT_EV_FREE || type == GMT_EV_VMM_RELEASE ||
	       type == GMT_EV_VMM_UNMAP || type == GMT_EV_VMM_ADDR_FREE;
}

/* Puts the event in the thread's current chunk (the busy mark seq + 1 is
 * set, ts read; room checked), publishes it, and clears the busy mark. */
static inline __attribute__((always_inline)) void
emit_publish(gmt_tstate_t *t, const gmt_event_t *ev, uint64_t seq, uint64_t ts, uint32_t stack)
{
	gmt_chunk_t *c = t->tail;
	gmt_event_t *e = &c->ev[t->tail_n];
	*e = *ev;
	e->ts = ts;
	e->stack = stack;
	atomic_store_explicit(&t->pub_ts, ts, memory_order_relaxed);
	atomic_store_explicit(&c->count, ++t->tail_n, memory_order_release);
	atomic_store_explicit(&t->emitted,
			      atomic_load_explicit(&t->emitted, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&t->seq, seq + 2, memory_order_release);
}

/* The rest of an event once busy (seq + 1 stored; ts 0: the clock is still
 * to be read): the clock's slow read, a new chunk, or the drop. Returns the
 * event's ts, 0 when it was not recorded. */
static inline __attribute__((always_inline)) uint64_t
emit_finish(gmt_tstate_t *t, const gmt_event_t *ev, uint64_t seq, uint64_t ts, uint32_t stack)
{
	if (!ts)
		ts = gmt_clock_slow();
	if (GMT_UNLIKELY(t->tail_n >= t->tail_cap) && !chunk_advance(t, &seq, &ts, ev->ts)) {
		drop_buffer_full(t, ts);
		atomic_store_explicit(&t->seq, seq + 2, memory_order_release);
		return 0;
	}
	emit_publish(t, ev, seq, ts, stack);
	return ts;
}

/* Returns the event's ts, or 0 when it was not recorded. Inlined into both
 * callers so that the stack capture sees a fixed number of tracer frames. */
static inline __attribute__((always_inline)) uint64_t
emit_impl(const gmt_event_t *ev, int want_stack, int skip)
{
	gmt_tstate_t *t = tls_state;
	if (GMT_UNLIKELY(!t || atomic_load_explicit(&gmt_g.state, memory_order_acquire) != GMT_ACTIVE)) {
		t = thread_attach();
		if (!t)
			return 0;
	}
	uint32_t stack = ev->stack;
	if (want_stack && stacks_on && (free_stacks || !is_free_like(ev->type)))
		stack = gmt_stack_capture(skip);

	/* Busy before the clock read, idle after publication: the writer's
	 * watermark argument (schemas/trace-format.md, "Time order"). Only a
	 * compiler barrier: a hardware fence (mfence, ~30 ns) would double the
	 * cost of an event, and the time the busy store may sit in the store
	 * buffer is what the writer's 1 ms margin covers. */
	uint64_t seq = atomic_load_explicit(&t->seq, memory_order_relaxed);
	atomic_store_explicit(&t->seq, seq + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return emit_finish(t, ev, seq, ev->ts ? ev->ts : gmt_clock_fast_ns(), stack);
}

/* emit_finish as a function of its own: the no-stack path's rare turns go
 * there by a tail call. */
static __attribute__((noinline)) void
emit_finish_call(gmt_tstate_t *t, const gmt_event_t *ev, uint64_t seq, uint64_t ts)
{
	emit_finish(t, ev, seq, ts, ev->stack);
}

/* The general path (a stack to capture, a thread's first event, tracing
 * not active) in a function of its own, so that gmt_emit's no-stack path
 * saves no registers. Always a real call from gmt_emit (never a tail call:
 * see there), so the capture skips exactly one tracer frame more. */
static __attribute__((noinline)) void emit_general(const gmt_event_t *ev, int want_stack, int skip)
{
	emit_impl(ev, want_stack, skip);
}

/* Without a stack to capture (stacks off, not asked for, or a free without
 * free stacks), an attached thread's event with room in its chunk and the
 * TSC clock's window open makes no call at all: no registers to save,
 * about 20 instructions fewer than the general path (docs/performance.md).
 * The same steps in the same order as emit_impl; the rest go to
 * emit_finish_call (tail call) or emit_general. */
void gmt_emit(const gmt_event_t *ev, int want_stack, int skip_frames)
{
	gmt_tstate_t *t = tls_state;
	if (GMT_LIKELY(t && !(want_stack && stacks_on && (free_stacks || !is_free_like(ev->type))) &&
		       atomic_load_explicit(&gmt_g.state, memory_order_acquire) == GMT_ACTIVE)) {
		uint64_t seq = atomic_load_explicit(&t->seq, memory_order_relaxed);
		atomic_store_explicit(&t->seq, seq + 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		uint64_t ts = ev->ts ? ev->ts : gmt_clock_fast_ns();
		if (GMT_LIKELY(ts && t->tail_n < t->tail_cap)) {
			emit_publish(t, ev, seq, ts, ev->stack);
			return;
		}
		emit_finish_call(t, ev, seq, ts);
		return;
	}
	/* gmt_emit's frame and emit_general's lie between the caller's and the
	 * capture: skip both. The empty asm after the call keeps it a call
	 * (a tail call would leave one frame fewer). */
	emit_general(ev, want_stack, skip_frames + 2);
	__asm__ volatile("" ::: "memory");
}

static int wait_written(uint64_t target, int timeout_ms)
{
	uint64_t cur = atomic_load(&gmt_g.flush_target);
	while (cur < target && !atomic_compare_exchange_weak(&gmt_g.flush_target, &cur, target))
		;
	gmt_writer_wake();
	if (atomic_load(&gmt_g.done_ts) >= target)
		return 0;
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	atomic_fetch_add(&gmt_g.waiters, 1);
	pthread_mutex_lock(&gmt_g.wait_lock);
	while (atomic_load(&gmt_g.done_ts) < target &&
	       atomic_load(&gmt_g.state) == GMT_ACTIVE) {
		if (pthread_cond_timedwait(&gmt_g.wait_cond, &gmt_g.wait_lock, &dl) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&gmt_g.wait_lock);
	atomic_fetch_sub(&gmt_g.waiters, 1);
	return atomic_load(&gmt_g.done_ts) >= target ? 0 : -ETIMEDOUT;
}

void gmt_emit_urgent(const gmt_event_t *ev, int want_stack, int skip_frames)
{
	uint64_t ts = emit_impl(ev, want_stack, skip_frames + 1);
	if (ts && !gmt_tls_in_writer)
		wait_written(ts, 200);
}

int gmt_tracer_flush(int timeout_ms)
{
	if (atomic_load(&gmt_g.state) != GMT_ACTIVE)
		return 0;
	return wait_written(gmt_now_ns(), timeout_ms < 0 ? 0 : timeout_ms);
}

/* ---- fork --------------------------------------------------------------- */

/* glibc does not reset the loader lock that dl_iterate_phdr takes in a
 * fork child: if our writer were inside it at fork, the child's writer
 * would wait on it forever. So fork waits (microseconds) for the writer to
 * leave it, and the writer skips the module poll while a fork is under way
 * (seq_cst on both flags: one of the two sees the other). */
static void fork_prepare(void)
{
	atomic_fetch_add(&gmt_g.forking, 1);
	while (atomic_load(&gmt_g.in_dl)) {
		struct timespec d = { 0, 20000 };
		nanosleep(&d, NULL);
	}
	pthread_mutex_lock(&gmt_g.init_lock);
	pthread_mutex_lock(&gmt_g.lock);
	pthread_mutex_lock(&gmt_g.wait_lock);
}

static void fork_unlock(void)
{
	pthread_mutex_unlock(&gmt_g.wait_lock);
	pthread_mutex_unlock(&gmt_g.lock);
	pthread_mutex_unlock(&gmt_g.init_lock);
}

static void fork_parent(void)
{
	fork_unlock();
	atomic_fetch_sub(&gmt_g.forking, 1);
}

/* The child owns none of the parent's buffered events (the parent writes
 * them), nor its file or writer. The parent's thread states and chunks are
 * left allocated on purpose: freeing them would touch (and copy) pages the
 * child never needs. */
static void *orphans[16];
static size_t n_orphans;

static void fork_child(void)
{
	fork_unlock();
	atomic_store(&gmt_g.forking, 0);
	atomic_store(&gmt_g.in_dl, 0);
	tls_state = NULL;
	if (gmt_g.fd >= 0)
		close(gmt_g.fd);
	gmt_g.fd = -1;
	free(gmt_g.path);
	gmt_g.path = NULL;
	free(gmt_g.abs_path);
	gmt_g.abs_path = NULL;
	atomic_store(&gmt_g.wake, 0);
	gmt_g.writer_running = 0;
	gmt_writer_reset_child();

	/* The parent's thread states (and through them its chunks) stay
	 * reachable from here, untouched. */
	if (gmt_g.n_threads && n_orphans < sizeof(orphans) / sizeof(orphans[0])) {
		orphans[n_orphans++] = gmt_g.threads;
		gmt_g.threads = NULL;
		gmt_g.cap_threads = 0;
	}
	gmt_g.n_threads = 0;
	gmt_g.next_thread_idx = 0;
	gmt_g.emitted_dead = 0;
	for (gmt_mrec_t *r = gmt_g.meta_head, *n; r; r = n) {
		n = r->next;
		free(r);
	}
	gmt_g.meta_head = NULL;
	gmt_g.meta_tail = &gmt_g.meta_head;
	for (gmt_mrec_t *r = gmt_g.persist_head; r; r = r->next) {
		gmt_mrec_t *c = gmt_mrec_new(r->data, r->len);
		if (c) {
			*gmt_g.meta_tail = c;
			gmt_g.meta_tail = &c->next;
		}
	}
	/* The parent's chunks are the parent's: the child's buffer starts
	 * empty (its names, replayed above, still count). */
	atomic_store(&gmt_g.buf_used, 0);
	atomic_store(&gmt_g.stop, 0);
	atomic_store(&gmt_g.flush_target, 0);
	atomic_store(&gmt_g.done_ts, 0);
	atomic_store(&gmt_g.sig_req, 0);
	atomic_store(&gmt_g.sig_done, 0);
	atomic_store(&gmt_g.writer_progress, 0);
	atomic_store(&gmt_g.writer_done, 0);
	atomic_store(&gmt_g.waiters, 0);
	atomic_store(&gmt_g.written, 0);
	atomic_store(&gmt_g.dropped, 0);
	atomic_store(&gmt_g.late, 0);
	gmt_g.file_off = 0;
	gmt_g.write_calls = 0;
	gmt_g.event_write_calls = 0;
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE)
		atomic_store(&gmt_g.state, GMT_OFF);
}

/* ---- init / shutdown ---------------------------------------------------- */

/* exit(status) and a return from main come here first (on_exit, not atexit:
 * it is told the status). */
static void shutdown_at_exit(int status, void *arg)
{
	(void)arg;
	if (getpid() == owner_pid)
		gmt_tracer_end(GMT_END_EXIT, status & 0xff, 1);
}

__attribute__((destructor)) static void shutdown_destructor(void)
{
	gmt_tracer_shutdown();
}

static void once_init(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&gmt_g.wait_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_key_create(&thread_key, thread_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	on_exit(shutdown_at_exit, NULL);
}

int gmt_tracer_init(const gmt_config_t *cfg)
{
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE)
		return 0;
	pthread_once(&once, once_init);
	pthread_mutex_lock(&gmt_g.init_lock);
	int st = atomic_load(&gmt_g.state);
	if (st != GMT_OFF) {
		pthread_mutex_unlock(&gmt_g.init_lock);
		return st == GMT_ACTIVE ? 0 : -ESHUTDOWN;
	}
	gmt_config_t *c = &gmt_g.cfg;
	if (cfg || !gmt_g.have_cfg) {
		/* (A fork child's lazy init keeps the parent's settings.) */
		if (cfg)
			*c = *cfg;
		else
			gmt_config_from_env(c);
		char *out = c->output ? strdup(c->output) : NULL;
		free(gmt_g.output);
		gmt_g.output = out;
		c->output = out;
		gmt_g.have_cfg = 1;
	}
	if (c->stack_depth < 0)
		c->stack_depth = 0;
	if (c->stack_depth > 128)
		c->stack_depth = 128;
	if (c->flush_ms < 1)
		c->flush_ms = 1;
	if (c->flush_ms > 100)
		c->flush_ms = 100;
	gmt_log_set_level(c->log_level);
	gmt_buffer_setup(c->buffer_bytes, c->buffer_ms);

	gmt_clock_setup();
	gmt_stack_init(c->stack_depth, c->stack_method);
	stacks_on = gmt_stack_available();
	if (!stacks_on)
		c->stack_depth = 0;
	free_stacks = c->free_stacks;

	int fd = gmt_file_create(c->output, &gmt_g.path);
	if (fd < 0) {
		gmt_log(1, "cannot create a trace file in %s: %s; tracing is off",
			c->output ? c->output : ".", strerror(-fd));
		atomic_store(&gmt_g.state, GMT_DOWN);
		pthread_mutex_unlock(&gmt_g.init_lock);
		return fd;
	}
	/* Out of the program's way (gmt_fd.c). */
	gmt_g.fd = gmt_fd_high(fd);
	gmt_fd_own_file(gmt_g.fd, gmt_g.path);
	gmt_fd_announce();
	int rc = gmt_writer_start();
	if (rc < 0) {
		gmt_log(1, "cannot start the trace writer: %s; tracing is off", strerror(-rc));
		close(fd);
		gmt_g.fd = -1;
		atomic_store(&gmt_g.state, GMT_DOWN);
		pthread_mutex_unlock(&gmt_g.init_lock);
		return rc;
	}
	if (c->install_signal_handlers)
		gmt_signals_install();
	gmt_log(2, "tracing to %s", gmt_g.path);
	owner_pid = getpid();
	atomic_store(&gmt_g.state, GMT_ACTIVE);
	pthread_mutex_unlock(&gmt_g.init_lock);
	return 0;
}

int gmt_tracer_active(void)
{
	return atomic_load(&gmt_g.state) == GMT_ACTIVE;
}

/*
 * The end. Whoever ends the trace first (exit's handler, _exit, a fatal
 * signal's handler, gmt_tracer_shutdown) wins the state change ACTIVE ->
 * DOWN with one compare-and-swap: no lock, so a signal handler that
 * interrupted its own thread in the middle of the tracer (holding the
 * registry's or the pool's lock, or inside malloc) never waits on itself.
 * It then asks the writer for its final round and END, and waits only while
 * the writer makes progress (gmt_writer_stop: at most about 2 s, nothing
 * if the writer is stuck behind a lock the interrupted thread holds: the
 * trace then ends at its last frame, without END, as after SIGKILL). Only
 * a caller that may block (join) joins the writer and wakes flush waiters.
 */
void gmt_tracer_end(const char *how, int value, int join)
{
	int st = GMT_ACTIVE;
	if (!atomic_compare_exchange_strong(&gmt_g.state, &st, GMT_DOWN))
		return;
	atomic_store(&gmt_g.end_how, how);
	atomic_store(&gmt_g.end_value, value);
	if (gmt_writer_stop(join) && join) {
		pthread_mutex_lock(&gmt_g.wait_lock);
		pthread_cond_broadcast(&gmt_g.wait_cond);
		pthread_mutex_unlock(&gmt_g.wait_lock);
	}
	/* When the names' budget bit, what it cost and what was lost (not
	 * from a signal handler: join = 0 there). */
	uint64_t byval = atomic_load(&gmt_g.names_by_value), lost = atomic_load(&gmt_g.names_dropped);
	if (join && (byval || lost))
		gmt_log(1, "names: %zu bytes of the names' budget of %zu kept, %llu written by value, "
			"%llu lost (the buffer was full); at most %zu bytes buffered when one was queued",
			atomic_load(&gmt_g.names_used), gmt_g.names_cap, (unsigned long long)byval,
			(unsigned long long)lost, atomic_load(&gmt_g.names_inflight_max));
}

/* Waits until the writer has done a write-everything round asked for after
 * now: only while it makes progress (see gmt_writer_stop), no lock. */
static void write_all_now(void)
{
	uint64_t gen = atomic_fetch_add(&gmt_g.sig_req, 1) + 1;
	gmt_writer_wake();
	uint64_t start = gmt_now_ns();
	gmt_watch_t wt;
	gmt_watch_begin(&wt, start);
	while (atomic_load(&gmt_g.sig_done) < gen && atomic_load(&gmt_g.state) == GMT_ACTIVE) {
		struct timespec d = { 0, 500000 };
		nanosleep(&d, NULL);
		uint64_t now = gmt_now_ns();
		if (gmt_watch_idle(&wt, now) > 200000000ull || now - start > 2000000000ull)
			return;
	}
}

void gmt_tracer_exec(void)
{
	int saved = errno;
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE && getpid() == owner_pid && !gmt_tls_in_writer) {
		const gmt_event_t ev = { .type = GMT_EV_EXEC, .device = -1 };
		gmt_emit(&ev, 0, 0);
		write_all_now();
	}
	errno = saved;
}

void gmt_tracer_exec_failed(int err)
{
	int saved = errno;
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE && getpid() == owner_pid) {
		const gmt_event_t ev = { .type = GMT_EV_EXEC_FAILED, .device = -1, .aux = (uint64_t)err };
		gmt_emit(&ev, 0, 0);
	}
	errno = saved;
}

void gmt_tracer_shutdown(void)
{
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE)
		gmt_tracer_end(GMT_END_SHUTDOWN, 0, 1);
}

/* A vfork()ed child (posix_spawn, CPython's subprocess) shares our memory
 * and must not shut the parent's tracer down: only the process that opened
 * the trace ends it. */
void gmt_tracer_exit_flush(int status)
{
	if (atomic_load(&gmt_g.state) == GMT_ACTIVE && getpid() == owner_pid)
		gmt_tracer_end(GMT_END__EXIT, status & 0xff, 0);
}

const char *gmt_tracer_path(void)
{
	return gmt_g.path;
}

/* ---- metadata API ------------------------------------------------------- */

static int ensure_init(void)
{
	if (atomic_load(&gmt_g.state) == GMT_OFF)
		gmt_tracer_init(NULL);
	return atomic_load(&gmt_g.state) == GMT_ACTIVE;
}

void gmt_tracer_device(const gmt_device_info_t *d)
{
	if (!d || !ensure_init())
		return;
	rec_builder_t b;
	rb_init(&b);
	msgpack_packer *pk = &b.pk;
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint8(pk, GMT_REC_DEVICE);
	msgpack_pack_map(pk, 8);
	pack_str(pk, "ordinal");
	msgpack_pack_int(pk, d->ordinal);
	pack_str(pk, "name");
	char name[sizeof(d->name) + 1];
	memcpy(name, d->name, sizeof(d->name));
	name[sizeof(d->name)] = 0;
	pack_str(pk, name);
	pack_str(pk, "uuid");
	msgpack_pack_bin(pk, 16);
	msgpack_pack_bin_body(pk, d->uuid, 16);
	pack_str(pk, "pci_bus_id");
	char bus[sizeof(d->pci_bus_id) + 1];
	memcpy(bus, d->pci_bus_id, sizeof(d->pci_bus_id));
	bus[sizeof(d->pci_bus_id)] = 0;
	pack_str(pk, bus);
	pack_str(pk, "total_bytes");
	msgpack_pack_uint64(pk, d->total_bytes);
	pack_str(pk, "cc_major");
	msgpack_pack_int(pk, d->cc_major);
	pack_str(pk, "cc_minor");
	msgpack_pack_int(pk, d->cc_minor);
	pack_str(pk, "driver_version");
	msgpack_pack_int(pk, d->driver_version);
	gmt_meta_push(rb_finish(&b), 1);
}

/* String interning: an open-addressing table under gmt_g.lock (rare calls;
 * ids are process-wide and survive fork, see fork_child). */
typedef struct istr {
	uint64_t hash;
	uint32_t id;
	char *text;
} istr_t;
static istr_t *strtab;
static size_t strtab_cap, strtab_n;
static uint32_t str_ids;   /* the last id given (kept names and names by value) */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h | 1;
}

static int strtab_grow(void)
{
	size_t cap = strtab_cap ? strtab_cap * 2 : 256;
	istr_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < strtab_cap; i++) {
		if (!strtab[i].hash)
			continue;
		size_t j = strtab[i].hash & (cap - 1);
		while (t[j].hash)
			j = (j + 1) & (cap - 1);
		t[j] = strtab[i];
	}
	free(strtab);
	strtab = t;
	strtab_cap = cap;
	return 0;
}

/* What a new name costs in the traced process: its copy in the table, its
 * record (queued, and kept for a fork child's file), its table slots. */
static size_t name_cost(size_t len)
{
	return 3 * (len + 1) + 2 * sizeof(istr_t) + 64;
}

/* Takes cost bytes of the names' budget (under gmt_g.lock); 0 when the
 * budget (an eighth of the buffer cap) would be exceeded: the caller then
 * writes the name by value (one warning). */
static _Atomic int warned_names, warned_names_lost;
static int names_take(size_t cost)
{
	size_t used = atomic_load_explicit(&gmt_g.names_used, memory_order_relaxed);
	if (used + cost > gmt_g.names_cap) {
		gmt_warn_once(&warned_names, "more distinct names than the trace buffer keeps "
			      "(GPUMEMTRACE_BUFFER_MB / 8): further new names are written with each use");
		return 0;
	}
	atomic_store_explicit(&gmt_g.names_used, used + cost, memory_order_relaxed);
	return 1;
}

/* Charges a name by value's record to the events' buffer (buf_used, within
 * buf_limit, as a chunk is) until the writer has written it; 0 when the
 * buffer is full: the name is lost (the overflow name, counted). */
static int by_value_charge(gmt_mrec_t *r)
{
	size_t cost = sizeof(*r) + r->len;
	size_t used = atomic_load_explicit(&gmt_g.buf_used, memory_order_relaxed);
	do {
		if (used + cost > atomic_load_explicit(&gmt_g.buf_limit, memory_order_relaxed))
			return 0;
	} while (!atomic_compare_exchange_weak_explicit(&gmt_g.buf_used, &used, used + cost,
							 memory_order_relaxed, memory_order_relaxed));
	r->charged = cost;
	if (used + cost > atomic_load_explicit(&gmt_g.names_inflight_max, memory_order_relaxed))
		atomic_store_explicit(&gmt_g.names_inflight_max, used + cost, memory_order_relaxed);
	return 1;
}

static rec_builder_t *string_record(rec_builder_t *b, uint32_t id, const char *text)
{
	rb_init(b);
	msgpack_pack_array(&b->pk, 3);
	msgpack_pack_uint8(&b->pk, GMT_REC_STRING);
	msgpack_pack_uint32(&b->pk, id);
	pack_str(&b->pk, text);
	return b;
}

/* The id of text (under gmt_g.lock). A name in the table keeps its id. A
 * new one is kept while the names' budget lasts (budgeted; its STRING is
 * also written again into a fork child's file); beyond it, it is written by
 * value: a STRING with a fresh id at each use, not kept (*kept = 0), held
 * in the events' buffer until written; when that is full too, the name is
 * lost and becomes GMT_NAME_OVERFLOW's (counted). */
static uint32_t string_locked(const char *text, int budgeted, int *kept)
{
	uint64_t h = str_hash(text);
	if (kept)
		*kept = 1;
	if ((strtab_n + 1) * 2 > strtab_cap && strtab_grow() < 0)
		return 0;
	size_t j = h & (strtab_cap - 1);
	for (; strtab[j].hash; j = (j + 1) & (strtab_cap - 1))
		if (strtab[j].hash == h && !strcmp(strtab[j].text, text))
			return strtab[j].id;
	rec_builder_t b;
	if (budgeted && !names_take(name_cost(strlen(text)))) {
		gmt_mrec_t *r = rb_finish(string_record(&b, str_ids + 1, text));
		if (!r)
			return 0;
		if (!by_value_charge(r)) {
			free(r);
			atomic_fetch_add_explicit(&gmt_g.names_dropped, 1, memory_order_relaxed);
			gmt_warn_once(&warned_names_lost, "the trace buffer is full: new names beyond "
				      "the names' budget are recorded as \"%s\"", GMT_NAME_OVERFLOW);
			return string_locked(GMT_NAME_OVERFLOW, 0, kept);
		}
		atomic_fetch_add_explicit(&gmt_g.names_by_value, 1, memory_order_relaxed);
		if (kept)
			*kept = 0;
		meta_push_locked(r, 0);
		return ++str_ids;
	}
	char *copy = strdup(text);
	if (!copy)
		return 0;
	gmt_mrec_t *r = rb_finish(string_record(&b, str_ids + 1, text));
	if (!r) {
		free(copy);
		return 0;
	}
	strtab_n++;
	uint32_t id = ++str_ids;
	strtab[j].hash = h;
	strtab[j].id = id;
	strtab[j].text = copy;
	meta_push_locked(r, 1);
	return id;
}

uint32_t gmt_tracer_name(const char *text, int *kept)
{
	if (kept)
		*kept = 0;
	if (!text)
		return 0;
	ensure_init();
	pthread_mutex_lock(&gmt_g.lock);
	uint32_t id = string_locked(text, 1, kept);
	pthread_mutex_unlock(&gmt_g.lock);
	return id;
}

uint32_t gmt_tracer_string(const char *text)
{
	return gmt_tracer_name(text, NULL);
}

/* Text stacks: a second table like the strings' one, keyed by the frames
 * joined with '\n' (a frame holds no newline worth keeping: one is folded
 * into a space). Not a hot path: a framework interns each distinct stack once
 * and caches the id itself. */
static istr_t *tstab;
static size_t tstab_cap, tstab_n;

static int tstab_grow(void)
{
	size_t cap = tstab_cap ? tstab_cap * 2 : 64;
	istr_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < tstab_cap; i++) {
		if (!tstab[i].hash)
			continue;
		size_t j = tstab[i].hash & (cap - 1);
		while (t[j].hash)
			j = (j + 1) & (cap - 1);
		t[j] = tstab[i];
	}
	free(tstab);
	tstab = t;
	tstab_cap = cap;
	return 0;
}

/* The frames as one key string ("3:a\nb\nc": the count first, so that
 * [""] and [] differ), malloc'ed; NULL on failure. */
static char *text_stack_key(const char *const *frames, size_t n)
{
	size_t len = 24;
	for (size_t i = 0; i < n; i++)
		len += strlen(frames[i] ? frames[i] : "") + 1;
	char *key = malloc(len);
	if (!key)
		return NULL;
	char *p = key + snprintf(key, 24, "%zu:", n);
	for (size_t i = 0; i < n; i++) {
		for (const char *f = frames[i] ? frames[i] : ""; *f; f++)
			*p++ = *f == '\n' ? ' ' : *f;
		if (i + 1 < n)
			*p++ = '\n';
	}
	*p = 0;
	return key;
}

uint32_t gmt_tracer_text_stack(const char *const *frames, size_t n)
{
	if ((n && !frames) || n > UINT32_MAX || !ensure_init())
		return 0;
	char *key = text_stack_key(frames, n);
	if (!key)
		return 0;
	uint64_t h = str_hash(key);
	uint32_t id = 0;
	pthread_mutex_lock(&gmt_g.lock);
	if ((tstab_n + 1) * 2 > tstab_cap && tstab_grow() < 0)
		goto out;
	if (tstab_n >= UINT32_MAX - GMT_TEXT_STACK_ID_BASE)
		goto out;
	size_t j = h & (tstab_cap - 1);
	for (; tstab[j].hash; j = (j + 1) & (tstab_cap - 1)) {
		if (tstab[j].hash == h && !strcmp(tstab[j].text, key)) {
			id = tstab[j].id;
			goto out;
		}
	}
	if (!names_take(name_cost(strlen(key))))
		goto out;   /* beyond the names' budget: no stack */
	rec_builder_t b;
	rb_init(&b);
	msgpack_pack_array(&b.pk, 3);
	msgpack_pack_uint8(&b.pk, GMT_REC_TEXT_STACK);
	msgpack_pack_uint32(&b.pk, GMT_TEXT_STACK_ID_BASE + (uint32_t)tstab_n);
	msgpack_pack_array(&b.pk, n);
	for (size_t i = 0; i < n; i++)
		pack_str(&b.pk, frames[i] ? frames[i] : "");
	gmt_mrec_t *r = rb_finish(&b);
	if (!r)
		goto out;
	id = GMT_TEXT_STACK_ID_BASE + (uint32_t)tstab_n++;
	tstab[j].hash = h;
	tstab[j].id = id;
	tstab[j].text = key;
	key = NULL;   /* owned by the table now */
	/* persist: a fork child's new file must define the ids it inherits. */
	meta_push_locked(r, 1);
out:
	pthread_mutex_unlock(&gmt_g.lock);
	free(key);
	return id;
}

void gmt_tracer_meta(const char *const *keys, const char *const *values, int n)
{
	if (n < 0 || !ensure_init())
		return;
	rec_builder_t b;
	rb_init(&b);
	msgpack_pack_array(&b.pk, 3);
	msgpack_pack_uint8(&b.pk, GMT_REC_META);
	msgpack_pack_uint64(&b.pk, gmt_now_ns());
	msgpack_pack_map(&b.pk, (size_t)n);
	for (int i = 0; i < n; i++) {
		pack_str(&b.pk, keys[i]);
		pack_str(&b.pk, values[i]);
	}
	/* persist: metadata describes the process (library versions, the
	 * job's dimensions), which a fork child's own file describes too. */
	gmt_meta_push(rb_finish(&b), 1);
}

void gmt_tracer_get_stats(gmt_tracer_stats_t *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&gmt_g.lock);
	st->emitted = gmt_g.emitted_dead;
	/* drops the writer has not counted yet (it counts each thread's
	 * before it frees the thread's state) */
	uint64_t pending = 0;
	for (size_t i = 0; i < gmt_g.n_threads; i++) {
		gmt_tstate_t *t = gmt_g.threads[i];
		st->emitted += atomic_load_explicit(&t->emitted, memory_order_relaxed);
		pending += atomic_load(&t->drop_n) - atomic_load(&t->w_drop_seen);
	}
	pthread_mutex_unlock(&gmt_g.lock);
	st->written = atomic_load(&gmt_g.written);
	st->dropped = atomic_load(&gmt_g.dropped) + pending;
	st->late = atomic_load(&gmt_g.late);
	st->stacks = gmt_stack_count();
	gmt_stack_stats_t ss;
	gmt_stack_get_stats(&ss);
	st->stacks_unwound = ss.unwound;
	st->names_overflow = atomic_load(&gmt_g.names_dropped);
	st->names_by_value = atomic_load(&gmt_g.names_by_value);
	st->names_kept_bytes = atomic_load(&gmt_g.names_used);
	st->names_budget = gmt_g.names_cap;
	st->names_inflight_max = atomic_load(&gmt_g.names_inflight_max);
	st->buffered = atomic_load(&gmt_g.buf_used);
	st->buffer_limit = atomic_load(&gmt_g.buf_limit);
	st->buffer_limit_max = atomic_load(&gmt_g.buf_limit_max);
	st->buffer_floor = gmt_g.buf_floor;
	st->chunk_bytes = GMT_CHUNK_MAX_BYTES;
	st->chunk_events = GMT_CHUNK_CAP(GMT_CHUNK_MAX_BYTES);
	st->writer_rate_max = atomic_load(&gmt_g.rate_max);
	st->writer_held_max = atomic_load(&gmt_g.held_max);
	st->frames_fast = atomic_load(&gmt_g.frames_fast);
	st->frames_async = atomic_load(&gmt_g.frames_async);
	st->assists = atomic_load(&gmt_g.assists);
	st->assist_events = atomic_load(&gmt_g.assist_events);
	gmt_slab_stats_t sl;
	gmt_slab_stats(&sl);
	st->slab_slots = sl.slots;
	st->slab_fresh = sl.fresh;
	st->slab_warm = sl.warm;
	st->slab_trimmed = sl.trimmed;
}

/* The calling thread's index in the trace (registering the thread, and
 * starting the tracer, if needed); -1 when tracing is off. */
int64_t gmt_thread_index(void)
{
	gmt_tstate_t *t = tls_state;
	if (!t || atomic_load_explicit(&gmt_g.state, memory_order_relaxed) != GMT_ACTIVE)
		t = thread_attach();
	return t ? (int64_t)t->idx : -1;
}
