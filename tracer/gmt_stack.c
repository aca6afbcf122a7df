/*
 * gmt_stack.c - native call stacks: capture with libunwind's unw_backtrace
 * and deduplication into sequential ids.
 *
 * libunwind is not linked: its shared object exports _Unwind_* and
 * backtrace, which would take over C++ exception handling of every program
 * that loads the preload. It is dlopen()ed RTLD_LOCAL instead, first from
 * the preload's own directory (the build copies it there), then by soname.
 *
 * Deduplication is lock-free: a fixed open-addressing table of pointers to
 * entries {hash, id, n, frames[]} allocated from a bump arena (mmap,
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
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "gmt_internal.h"

#define TABLE_BITS   20
#define TABLE_SLOTS  (1u << TABLE_BITS)
#define MAX_IDS      TABLE_SLOTS
#define MAX_PROBE    64
#define ARENA_BYTES  (256ull << 20)
#define MAX_FRAMES   128

typedef struct sentry {
	uint64_t hash;
	uint32_t id;
	uint32_t n;
	uint64_t frames[];
} sentry_t;

typedef int (*unw_backtrace_fn)(void **buf, int size);

static unw_backtrace_fn bt;
static int depth;
static sentry_t *_Atomic *table;
static sentry_t *_Atomic *by_id;
static char *arena;
static _Atomic size_t arena_used;
static _Atomic uint32_t next_id;
static _Atomic uint64_t n_stacks, n_full;
static _Atomic int warned_unwind, warned_full;

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

void gmt_stack_init(int d)
{
	depth = d > MAX_FRAMES ? MAX_FRAMES : d;
	if (depth <= 0 || bt)
		return;
	void *h = open_unwind();
	unw_backtrace_fn f = h ? (unw_backtrace_fn)dlsym(h, "unw_backtrace") : NULL;
	if (!table) {
		table = map_zero(TABLE_SLOTS * sizeof(*table));
		by_id = map_zero(MAX_IDS * sizeof(*by_id));
		arena = map_zero(ARENA_BYTES);
	}
	if (!f || !table || !by_id || !arena) {
		gmt_warn_once(&warned_unwind, "libunwind.so.8 could not be loaded (%s); "
			      "call stacks are off", h ? "no unw_backtrace" : dlerror());
		depth = 0;
		return;
	}
	bt = f;
}

int gmt_stack_available(void)
{
	return bt && depth > 0;
}

static uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static sentry_t *entry_new(uint64_t h, const uint64_t *f, uint32_t n)
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
	memcpy(e->frames, f, n * sizeof(uint64_t));
	atomic_store_explicit(&by_id[id], e, memory_order_release);
	return e;
}

/* noinline: frame 0 of unw_backtrace is this function, which is skipped. */
__attribute__((noinline)) uint32_t gmt_stack_capture(int skip)
{
	if (!bt)
		return 0;
	void *buf[MAX_FRAMES + 72];
	if (skip < 0)
		skip = 0;
	if (skip > 64)
		skip = 64;
	int got = bt(buf, depth + skip + 1);
	int first = skip + 1;
	if (got <= first)
		return 0;
	uint32_t n = (uint32_t)(got - first);
	const uint64_t *f = (const uint64_t *)(void *)(buf + first);
	uint64_t h = hash_frames(f, n);
	sentry_t *mine = NULL;
	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		sentry_t *_Atomic *slot = &table[(h + i) & (TABLE_SLOTS - 1)];
		sentry_t *e = atomic_load_explicit(slot, memory_order_acquire);
		if (!e) {
			if (!mine && !(mine = entry_new(h, f, n)))
				break;
			if (atomic_compare_exchange_strong_explicit(slot, &e, mine,
					memory_order_acq_rel, memory_order_acquire)) {
				atomic_fetch_add_explicit(&n_stacks, 1, memory_order_relaxed);
				return mine->id;
			}
		}
		if (e->hash == h && e->n == n && !memcmp(e->frames, f, n * sizeof(uint64_t)))
			return e->id;
	}
	atomic_fetch_add_explicit(&n_full, 1, memory_order_relaxed);
	gmt_warn_once(&warned_full, "the stack table is full: further new stacks are not recorded");
	return 0;
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
