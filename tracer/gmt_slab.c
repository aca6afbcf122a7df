/*
 * gmt_slab.c - the memory of the event chunks: one private mapping of
 * 64 KiB slots, taken and given back without a lock and without malloc.
 *
 * Chunks came from the program's malloc: the producing thread's arena
 * gave a chunk, the writer freed it there, and glibc trimmed the arena's
 * top now and then, so that chunks taken again faulted their pages in
 * once more (13,000 to 36,000 minor faults for 10 M events, 0.04 to 0.13 s
 * of system time, run to run); the tracer's buffer also mixed with the
 * program's own heap. Here a slot keeps its pages while it waits in the
 * warm stack; a chunk of any size takes a whole slot (a thread's first,
 * small chunks touch only their pages).
 *
 * The stacks are Treiber stacks of slot numbers (index + 1) with a
 * generation in the head's high half, so that a pop that read a stale
 * next cannot succeed (ABA); the links live beside the slots, not in
 * them (a trimmed slot's pages are gone). Any thread takes (a producer,
 * also in a signal handler: no lock, no call), any thread gives back (the
 * writer, a helping producer, a thread's exit).
 *
 * Taking: a warm slot, else a trimmed one, else one never used. Giving
 * back: to the warm stack. The writer, when it has caught up and goes to
 * sleep, trims the warm slots beyond the buffer's limit (which it lowers
 * when the program calms down): their pages go back to the system
 * (MADV_DONTNEED) and they wait in the cold stack. Not while it drains:
 * trimming as chunks came back (a first version) would cost a writer
 * that drains after the limit fell a system call at every chunk, and the
 * producers the faults again. The mapping is made
 * once, for the buffer's cap at the first setup (MAP_NORESERVE: untouched
 * slots cost address space only); a chunk beyond it, or without it,
 * comes from malloc as before.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "gmt_internal.h"

static struct {
	char *_Atomic base;             /* set once, before its first use  */
	uint32_t slots;
	_Atomic uint32_t *links;         /* a stacked slot's next (number)   */
	_Atomic uint64_t warm, cold;     /* generation << 32 | top's number  */
	_Atomic uint32_t bump;           /* slots never taken start here     */
	_Atomic uint32_t n_warm;
	_Atomic uint64_t trimmed;
} s;

int gmt_slab_setup(size_t bytes)
{
	if (atomic_load(&s.base))
		return 0;
	size_t n = (bytes + GMT_SLAB_SLOT - 1) / GMT_SLAB_SLOT;
	if (!n || n > UINT32_MAX / 2)
		return -EINVAL;
	_Atomic uint32_t *links = calloc(n, sizeof(*links));
	if (!links)
		return -ENOMEM;
	void *p = mmap(NULL, n * GMT_SLAB_SLOT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		free(links);
		return -e;
	}
	s.links = links;
	s.slots = (uint32_t)n;
	atomic_store_explicit(&s.base, p, memory_order_release);
	return 0;
}

static uint32_t pop(_Atomic uint64_t *head)
{
	uint64_t h = atomic_load_explicit(head, memory_order_acquire);
	for (;;) {
		uint32_t top = (uint32_t)h;
		if (!top)
			return 0;
		uint32_t next = atomic_load_explicit(&s.links[top - 1], memory_order_relaxed);
		uint64_t nh = ((h >> 32) + 1) << 32 | next;
		if (atomic_compare_exchange_weak_explicit(head, &h, nh, memory_order_acquire,
							 memory_order_acquire))
			return top;
	}
}

static void push(_Atomic uint64_t *head, uint32_t id)
{
	uint64_t h = atomic_load_explicit(head, memory_order_relaxed), nh;
	do {
		atomic_store_explicit(&s.links[id - 1], (uint32_t)h, memory_order_relaxed);
		nh = ((h >> 32) + 1) << 32 | id;
	} while (!atomic_compare_exchange_weak_explicit(head, &h, nh, memory_order_release,
							memory_order_relaxed));
}

static inline void *slot(char *base, uint32_t id)
{
	return base + (size_t)(id - 1) * GMT_SLAB_SLOT;
}

void *gmt_slab_get(void)
{
	char *base = atomic_load_explicit(&s.base, memory_order_acquire);
	if (!base)
		return NULL;
	uint32_t id = pop(&s.warm);
	if (id) {
		atomic_fetch_sub_explicit(&s.n_warm, 1, memory_order_relaxed);
		return slot(base, id);
	}
	if ((id = pop(&s.cold)))
		return slot(base, id);
	uint32_t b = atomic_load_explicit(&s.bump, memory_order_relaxed);
	do {
		if (b >= s.slots)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&s.bump, &b, b + 1, memory_order_relaxed,
							memory_order_relaxed));
	return slot(base, b + 1);
}

int gmt_slab_put(void *p)
{
	char *c = p, *base = atomic_load_explicit(&s.base, memory_order_acquire);
	if (!base || c < base || c >= base + (size_t)s.slots * GMT_SLAB_SLOT)
		return 0;
	push(&s.warm, (uint32_t)((size_t)(c - base) / GMT_SLAB_SLOT) + 1);
	atomic_fetch_add_explicit(&s.n_warm, 1, memory_order_relaxed);
	return 1;
}

uint64_t gmt_slab_trim(size_t keep_bytes)
{
	char *base = atomic_load_explicit(&s.base, memory_order_acquire);
	uint64_t n = 0;
	if (!base)
		return 0;
	int e = errno;
	while ((uint64_t)atomic_load_explicit(&s.n_warm, memory_order_relaxed) * GMT_SLAB_SLOT > keep_bytes) {
		uint32_t id = pop(&s.warm);
		if (!id)
			break;
		atomic_fetch_sub_explicit(&s.n_warm, 1, memory_order_relaxed);
		madvise(slot(base, id), GMT_SLAB_SLOT, MADV_DONTNEED);
		push(&s.cold, id);
		n++;
	}
	errno = e;
	atomic_fetch_add_explicit(&s.trimmed, n, memory_order_relaxed);
	return n;
}

void gmt_slab_stats(gmt_slab_stats_t *st)
{
	st->slots = s.slots;
	st->fresh = atomic_load_explicit(&s.bump, memory_order_relaxed);
	st->warm = atomic_load_explicit(&s.n_warm, memory_order_relaxed);
	st->trimmed = atomic_load_explicit(&s.trimmed, memory_order_relaxed);
}
