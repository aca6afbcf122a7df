/* unit_tracer_slab: the chunks' memory (tracer/gmt_slab.c), one mapping
 * of 64 KiB slots:
 *   slots    a mapping for 1 MiB + 1 byte has 17 slots: 17 distinct ones,
 *            64-aligned, 64 KiB apart, inside it, then none (NULL); a
 *            second setup changes nothing;
 *   warm     a slot given back is the next one taken (its bytes kept);
 *   trim     the warm slots beyond the bytes to keep give their pages
 *            back to the system, the last given back first: taken
 *            again such a slot reads as zeros, and the counters say how
 *            many were trimmed and how many stay warm;
 *   foreign  memory that is not the slab's is refused (0), untouched;
 *   threads  4 threads take and give back 200,000 times each over 3
 *            slots (fewer than the threads, so that they contend): no
 *            slot is ever held by two at once (each claims its slot's
 *            owner word, which must be free), and at the end every slot
 *            comes back, each once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "gmt_internal.h"
#include "gmt_test.h"

#define N_SLOTS 17
#define THREADS 4
#define ROUNDS 200000
#define SHARED 3

static void *slot_of[N_SLOTS];
static _Atomic int owner[N_SLOTS];
static _Atomic uint64_t clashes, misses;
static char *base;

static int index_of(void *p)
{
	return (int)(((char *)p - base) / (ptrdiff_t)GMT_SLAB_SLOT);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg + 1;
	for (int i = 0; i < ROUNDS; i++) {
		void *p = gmt_slab_get();
		if (!p) {
			atomic_fetch_add(&misses, 1);
			continue;
		}
		int k = index_of(p), free_ = 0;
		if (!atomic_compare_exchange_strong(&owner[k], &free_, me))
			atomic_fetch_add(&clashes, 1);
		*(volatile int *)p = me;
		if (*(volatile int *)p != me)
			atomic_fetch_add(&clashes, 1);
		atomic_store(&owner[k], 0);
		gmt_slab_put(p);
	}
	return NULL;
}

int main(void)
{
	gmt_slab_stats_t st;
	CHECK_EQ_U64(0, gmt_slab_setup((1u << 20) + 1));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(N_SLOTS, st.slots);

	/* slots */
	for (int i = 0; i < N_SLOTS; i++) {
		slot_of[i] = gmt_slab_get();
		CHECK(slot_of[i] != NULL);
		CHECK_EQ_U64(0, (uintptr_t)slot_of[i] % 64);
	}
	base = slot_of[0];
	for (int i = 0; i < N_SLOTS; i++)
		CHECK_EQ_U64((uint64_t)i * GMT_SLAB_SLOT, (uint64_t)((char *)slot_of[i] - base));
	CHECK(gmt_slab_get() == NULL);
	CHECK_EQ_U64(0, gmt_slab_setup(64u << 20));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(N_SLOTS, st.slots);
	CHECK_EQ_U64(N_SLOTS, st.fresh);
	CHECK(gmt_slab_get() == NULL);

	/* warm */
	memset(slot_of[5], 0x5a, GMT_SLAB_SLOT);
	CHECK_EQ_U64(1, gmt_slab_put(slot_of[5]));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(1, st.warm);
	void *p = gmt_slab_get();
	CHECK(p == slot_of[5]);
	CHECK_EQ_U64(0x5a, ((unsigned char *)p)[GMT_SLAB_SLOT - 1]);
	CHECK(gmt_slab_get() == NULL);

	/* trim: the warm slots beyond the bytes to keep lose their pages */
	CHECK_EQ_U64(1, gmt_slab_put(slot_of[5]));
	CHECK_EQ_U64(1, gmt_slab_put(slot_of[6]));
	CHECK_EQ_U64(0, gmt_slab_trim(2 * GMT_SLAB_SLOT));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(2, st.warm);
	CHECK_EQ_U64(1, gmt_slab_trim(GMT_SLAB_SLOT + 1));   /* slot 6: the top */
	gmt_slab_stats(&st);
	CHECK_EQ_U64(1, st.warm);
	CHECK_EQ_U64(1, st.trimmed);
	CHECK_EQ_U64(1, gmt_slab_trim(0));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(0, st.warm);
	CHECK_EQ_U64(2, st.trimmed);
	p = gmt_slab_get();   /* the cold stack's top: slot 5, trimmed last */
	CHECK(p == slot_of[5]);
	uint64_t nonzero = 0;
	for (size_t i = 0; i < GMT_SLAB_SLOT; i++)
		nonzero += ((unsigned char *)p)[i] != 0;
	CHECK_EQ_U64(0, nonzero);
	CHECK(gmt_slab_get() == slot_of[6]);

	/* foreign */
	char mine[64] = { 7 };
	CHECK_EQ_U64(0, gmt_slab_put(mine));
	CHECK_EQ_U64(7, mine[0]);
	CHECK_EQ_U64(0, gmt_slab_put(base + N_SLOTS * GMT_SLAB_SLOT));

	/* threads: SHARED slots go back; the others stay taken */
	for (int i = 0; i < SHARED; i++)
		CHECK_EQ_U64(1, gmt_slab_put(slot_of[i]));
	pthread_t th[THREADS];
	for (intptr_t k = 0; k < THREADS; k++)
		CHECK(pthread_create(&th[k], NULL, worker, (void *)k) == 0);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	CHECK_EQ_U64(0, atomic_load(&clashes));
	gmt_slab_stats(&st);
	CHECK_EQ_U64(SHARED, st.warm);
	int seen[N_SLOTS] = { 0 };
	for (int i = 0; i < SHARED; i++) {
		p = gmt_slab_get();
		CHECK(p != NULL);
		if (p) {
			int k = index_of(p);
			CHECK(k >= 0 && k < SHARED);
			if (k >= 0 && k < N_SLOTS)
				seen[k]++;
		}
	}
	for (int i = 0; i < SHARED; i++)
		CHECK_EQ_U64(1, seen[i]);
	CHECK(gmt_slab_get() == NULL);
	TEST_DONE();
}
