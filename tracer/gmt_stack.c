/*
 * gmt_stack.c - native call stacks: capture (a frame-pointer walk checked
 * once per call path against libunwind's unw_backtrace, which answers
 * wherever the walk cannot be trusted) and deduplication into sequential ids.
 *
 * libunwind is not linked: its shared object exports _Unwind_* and
 * backtrace, which would take over C++ exception handling of every program
 * that loads the preload. It is dlopen()ed RTLD_LOCAL instead, first from
 * the preload's own directory (the build copies it there), then by soname.
 * Its probe pipe is the one descriptor it makes: the preload rebinds
 * libunwind's own pipe2 at load (gmt_tracer_on_unwinder) to keep it high.
 *
 * The frame-pointer walk. Code built with frame pointers keeps, in %rbp, the
 * address where it saved its caller's %rbp, with its return address just
 * above: following that chain costs a load a frame where libunwind looks
 * every return address up in a cache (about 1 ns against 5 to 7 here). In
 * code without frame pointers %rbp is any value: the walk then skips or
 * invents frames. So a walk is believed only for call paths it has been
 * seen to get right:
 *   - it reads only the calling thread's own stack, between its own frame
 *     and the top of the stack (bounds read once a thread; another stack,
 *     such as a signal handler's alternate one, is not walked), each frame
 *     above the one before;
 *   - its frames are looked up in the stack table like any stack; an entry
 *     whose FP_OK flag is set is the answer;
 *   - otherwise (a new call path) libunwind unwinds the same instant. Equal
 *     frames set FP_OK on the entry; different ones put the walk's hash in a
 *     "wrong" set, so that this walk output goes straight to libunwind
 *     from then on (a hash collision there costs only speed).
 * Why a match can be trusted later: the walk steps through a function
 * correctly exactly when that function, at the return address the walk
 * read, keeps its frame in %rbp; that is a property of the return address
 * (the code), not of the instant. A later walk that yields the frames of an
 * FP_OK entry stepped only through those return addresses, all of which
 * were stepped through correctly when the entry was checked. (A function
 * without frame pointers could pass the check only if its %rbp, used as an
 * ordinary register, held the address of its own saved-%rbp slot at the
 * check: no compiler does that.) A module unloaded and another loaded at the
 * same address would need the very same return addresses in the same order
 * to match an entry. GPUMEMTRACE_STACK_METHOD=libunwind turns the walk off.
 *
 * Deduplication is lock-free: a fixed open-addressing table of pointers to
 * entries {hash, id, n, flags, frames[]} allocated from a bump arena (mmap,
 * MAP_NORESERVE: only touched pages cost memory). A new entry takes the
 * next id, is published in the id -> entry array, then installed in its
 * slot with a CAS; a thread that loses the race uses the winner's entry
 * (the loser's id stays unused: ids are increasing, not dense). Because the
 * id array is written before the CAS, any thread that can see an id (from
 * the table, or from an event) can read its frames with an acquire load.
 * A full table or arena answers id 0 (no stack) and is counted.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gmt_internal.h"

#define TABLE_BITS   20
#define TABLE_SLOTS  (1u << TABLE_BITS)
#define MAX_IDS      TABLE_SLOTS
#define MAX_PROBE    64
#define ARENA_BYTES  (256ull << 20)
#define MAX_FRAMES   128
#define MAX_SKIP     64
#define WRONG_SLOTS  (1u << 16)
#define WRONG_PROBE  8

#define ENTRY_FP_OK  0x1u   /* the frame-pointer walk yields these frames exactly */

typedef struct sentry {
	uint64_t hash;
	uint32_t id;
	uint32_t n;
	_Atomic uint32_t flags;
	uint32_t pad_;
	uint64_t frames[];
} sentry_t;

typedef int (*unw_backtrace_fn)(void **buf, int size);

static unw_backtrace_fn bt;
static void (*on_unwinder)(void *handle);   /* gmt_tracer_on_unwinder */
static void *unwind_handle;
static int depth;
static int walk_on;                 /* method auto: try the frame-pointer walk */
static sentry_t *_Atomic *table;
static sentry_t *_Atomic *by_id;
static _Atomic uint64_t *wrong;     /* hashes of walks that were wrong */
static char *arena;
static _Atomic size_t arena_used;
static _Atomic uint32_t next_id;
static _Atomic uint64_t n_stacks, n_full, n_unwound, n_checked, n_walk_wrong;
static _Atomic int warned_unwind, warned_full;

/* The calling thread's stack: [lo, hi), read once (state 1), or unknown
 * (state 2: never walked). */
static __thread uintptr_t tls_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t tls_stack_hi __attribute__((tls_model("initial-exec")));
static __thread int tls_stack_state __attribute__((tls_model("initial-exec")));

extern void *__libc_stack_end;

static void *map_zero(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void *open_unwind(void)
{
	Dl_info di;
	if (dladdr((void *)gmt_stack_init, &di) && di.dli_fname) {
		char buf[PATH_MAX];
		snprintf(buf, sizeof(buf), "%s", di.dli_fname);
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/libunwind.so.8", dirname(buf));
		void *h = dlopen(path, RTLD_LOCAL | RTLD_NOW);
		if (h)
			return h;
	}
	return dlopen("libunwind.so.8", RTLD_LOCAL | RTLD_NOW);
}

void gmt_stack_init(int d, int method)
{
	depth = d > MAX_FRAMES ? MAX_FRAMES : d;
	walk_on = method != GMT_STACK_LIBUNWIND;
	if (depth <= 0 || bt)
		return;
	void *h = open_unwind();
	unw_backtrace_fn f = h ? (unw_backtrace_fn)dlsym(h, "unw_backtrace") : NULL;
	if (!table) {
		table = map_zero(TABLE_SLOTS * sizeof(*table));
		by_id = map_zero(MAX_IDS * sizeof(*by_id));
		wrong = map_zero(WRONG_SLOTS * sizeof(*wrong));
		arena = map_zero(ARENA_BYTES);
	}
	if (!f || !table || !by_id || !wrong || !arena) {
		gmt_warn_once(&warned_unwind, "libunwind.so.8 could not be loaded (%s); "
			      "call stacks are off", h ? "no unw_backtrace" : dlerror());
		depth = 0;
		return;
	}
	unwind_handle = h;
	if (on_unwinder)
		on_unwinder(h);
	bt = f;
}

/* Under the tracer's init (gmt_stack_init's caller) or before it. */
void gmt_tracer_on_unwinder(void (*fn)(void *handle))
{
	on_unwinder = fn;
	if (unwind_handle && fn)
		fn(unwind_handle);   /* loaded already (our API called first) */
}

int gmt_stack_available(void)
{
	return bt && depth > 0;
}

/* Positions weigh differently and the products are independent, so the
 * loop is not one long chain of multiplications. */
static inline uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	for (uint32_t i = 0; i < n; i++)
		h += (f[i] ^ (0xC2B2AE3D27D4EB4Full * (i + 1))) * 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h | 1;   /* never 0: 0 is an empty slot of the wrong set */
}

static sentry_t *entry_new(uint64_t h, const uint64_t *f, uint32_t n, uint32_t flags)
{
	size_t sz = (sizeof(sentry_t) + n * sizeof(uint64_t) + 7) & ~(size_t)7;
	size_t off = atomic_fetch_add_explicit(&arena_used, sz, memory_order_relaxed);
	if (off + sz > ARENA_BYTES)
		return NULL;
	uint32_t id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
	if (id >= MAX_IDS)
		return NULL;
	sentry_t *e = (sentry_t *)(void *)(arena + off);
	e->hash = h;
	e->id = id;
	e->n = n;
	atomic_store_explicit(&e->flags, flags, memory_order_relaxed);
	memcpy(e->frames, f, n * sizeof(uint64_t));
	atomic_store_explicit(&by_id[id], e, memory_order_release);
	return e;
}

static inline int entry_is(const sentry_t *e, uint64_t h, const uint64_t *f, uint32_t n)
{
	return e->hash == h && e->n == n && !memcmp(e->frames, f, n * sizeof(uint64_t));
}

/* The entry of these frames, or NULL. */
static inline sentry_t *table_find(uint64_t h, const uint64_t *f, uint32_t n)
{
	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		sentry_t *e = atomic_load_explicit(&table[(h + i) & (TABLE_SLOTS - 1)],
						   memory_order_acquire);
		if (!e)
			return NULL;
		if (entry_is(e, h, f, n))
			return e;
	}
	return NULL;
}

/* The entry of these frames, made if needed (with flags); NULL when the
 * table is full. */
static sentry_t *table_get(uint64_t h, const uint64_t *f, uint32_t n, uint32_t flags)
{
	sentry_t *mine = NULL;
	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		sentry_t *_Atomic *slot = &table[(h + i) & (TABLE_SLOTS - 1)];
		sentry_t *e = atomic_load_explicit(slot, memory_order_acquire);
		if (!e) {
			if (!mine && !(mine = entry_new(h, f, n, flags)))
				break;
			if (atomic_compare_exchange_strong_explicit(slot, &e, mine,
					memory_order_acq_rel, memory_order_acquire)) {
				atomic_fetch_add_explicit(&n_stacks, 1, memory_order_relaxed);
				return mine;
			}
		}
		if (entry_is(e, h, f, n)) {
			if (flags)
				atomic_fetch_or_explicit(&e->flags, flags, memory_order_relaxed);
			return e;
		}
	}
	atomic_fetch_add_explicit(&n_full, 1, memory_order_relaxed);
	gmt_warn_once(&warned_full, "the stack table is full: further new stacks are not recorded");
	return NULL;
}

static int wrong_has(uint64_t h)
{
	for (uint32_t i = 0; i < WRONG_PROBE; i++) {
		uint64_t v = atomic_load_explicit(&wrong[(h + i) & (WRONG_SLOTS - 1)],
						  memory_order_relaxed);
		if (v == h)
			return 1;
		if (!v)
			return 0;
	}
	return 0;
}

static void wrong_add(uint64_t h)
{
	for (uint32_t i = 0; i < WRONG_PROBE; i++) {
		_Atomic uint64_t *slot = &wrong[(h + i) & (WRONG_SLOTS - 1)];
		uint64_t v = 0;
		if (atomic_compare_exchange_strong_explicit(slot, &v, h, memory_order_relaxed,
							    memory_order_relaxed) || v == h)
			return;
	}
	/* full around h: this walk is checked again next time (speed only) */
}

/* Reads the calling thread's stack bounds (once a thread). The main
 * thread's stack ends at __libc_stack_end's page (glibc's
 * pthread_getattr_np would read /proc/self/maps for it: a descriptor and an
 * allocation); other threads' come from their pthread attributes. */
static __attribute__((noinline)) int stack_bounds(void)
{
	uintptr_t lo = 0, hi = 0;
	if (gettid() == getpid()) {
		uintptr_t top = (uintptr_t)__libc_stack_end;
		hi = top;
		lo = top > (256u << 20) ? top - (256u << 20) : 0;
	} else {
		pthread_attr_t a;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &a) == 0) {
			if (pthread_attr_getstack(&a, &addr, &size) == 0) {
				lo = (uintptr_t)addr;
				hi = lo + size;
			}
			pthread_attr_destroy(&a);
		}
	}
	tls_stack_lo = lo;
	tls_stack_hi = hi;
	tls_stack_state = hi > lo ? 1 : 2;
	return tls_stack_state == 1;
}

/* The frame-pointer walk from frame fp (the caller's): out[i] is the return
 * address in frame i (out[0]: into the function that owns fp). Reads only
 * [fp, hi) of the thread's stack, each frame above the one before. Returns
 * how many it found (at most max). */
static inline __attribute__((always_inline)) uint32_t fp_walk(uintptr_t fp, uintptr_t hi,
							      uint64_t *out, uint32_t max)
{
	uint32_t n = 0;
	while (n < max) {
		const uintptr_t *fr = (const uintptr_t *)fp;
		uintptr_t next = fr[0], ra = fr[1];
		if (!ra)
			break;
		out[n++] = ra;
		if (next <= fp || next > hi - 16 || (next & 7))
			break;
		fp = next;
	}
	return n;
}

/* libunwind's answer: frames after the skipped ones into out (at most
 * depth), their count. */
static inline uint32_t unwind(void **buf, int skip)
{
	int got = bt(buf, depth + skip + 1);
	atomic_fetch_add_explicit(&n_unwound, 1, memory_order_relaxed);
	return got > skip + 1 ? (uint32_t)(got - skip - 1) : 0;
}

/* noinline, and with a frame of its own (__builtin_frame_address): frame 0
 * of unw_backtrace is this function, which is skipped; the walk starts at
 * this function's frame, whose return address is unw_backtrace's frame 1. */
__attribute__((noinline)) uint32_t gmt_stack_capture(int skip)
{
	if (!bt)
		return 0;
	void *buf[MAX_FRAMES + MAX_SKIP + 8];
	uint64_t walk[MAX_FRAMES + MAX_SKIP + 8];
	if (skip < 0)
		skip = 0;
	if (skip > MAX_SKIP)
		skip = MAX_SKIP;
	uint32_t wn = 0;
	uint64_t wh = 0;
	const uint64_t *wf = NULL;
	if (walk_on) {
		uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
		if (GMT_UNLIKELY(tls_stack_state != 1) && (tls_stack_state || !stack_bounds()))
			goto unwound;
		if (fp < tls_stack_lo || fp >= tls_stack_hi)
			goto unwound;   /* another stack (sigaltstack, a coroutine's) */
		uint32_t got = fp_walk(fp, tls_stack_hi, walk, (uint32_t)(depth + skip));
		if (got <= (uint32_t)skip)
			goto unwound;
		wn = got - (uint32_t)skip;
		wf = walk + skip;
		wh = hash_frames(wf, wn);
		sentry_t *e = table_find(wh, wf, wn);
		if (GMT_LIKELY(e && (atomic_load_explicit(&e->flags, memory_order_relaxed) & ENTRY_FP_OK)))
			return e->id;
		if (wrong_has(wh))
			wn = 0;   /* known wrong: libunwind only */
	}
unwound:;
	uint32_t n = unwind(buf, skip);
	if (!n)
		return 0;
	const uint64_t *f = (const uint64_t *)(void *)(buf + skip + 1);
	uint32_t flags = 0;
	if (wn) {
		/* A walk not seen before: checked against libunwind's answer. */
		atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
		if (wn == n && !memcmp(wf, f, n * sizeof(uint64_t))) {
			flags = ENTRY_FP_OK;
		} else {
			atomic_fetch_add_explicit(&n_walk_wrong, 1, memory_order_relaxed);
			wrong_add(wh);
		}
	}
	sentry_t *e = table_get(flags ? wh : hash_frames(f, n), f, n, flags);
	return e ? e->id : 0;
}

const uint64_t *gmt_stack_frames(uint32_t id, uint32_t *n)
{
	if (!by_id || id == 0 || id >= MAX_IDS)
		return NULL;
	sentry_t *e = atomic_load_explicit(&by_id[id], memory_order_acquire);
	if (!e)
		return NULL;
	*n = e->n;
	return e->frames;
}

uint64_t gmt_stack_count(void)
{
	return atomic_load_explicit(&n_stacks, memory_order_relaxed);
}

void gmt_stack_get_stats(gmt_stack_stats_t *st)
{
	st->unwound = atomic_load_explicit(&n_unwound, memory_order_relaxed);
	st->checked = atomic_load_explicit(&n_checked, memory_order_relaxed);
	st->walk_wrong = atomic_load_explicit(&n_walk_wrong, memory_order_relaxed);
}
