/* unit_liveset: the live set by stack at chosen instants
 * (analyzer/engines/gmt_liveset.h) on tests/golden/v1_3_basic.gmt, whose
 * events are known by construction (tests/golden/make_golden.c): main-stream
 * events 1-54 in time order, the side stream's two (not counted), then one
 * LATE allocation (main event 55). Device 0 holds, with their stack ids:
 *   after event 9:  64 MiB (stack 1), 8 MiB (stack 2)
 *   after event 22 (the peak, 107 MiB): 64 MiB (1), 35 MiB in 3 blocks
 *                   without a stack (VMM 2 MiB, managed 1 MiB, async 32 MiB),
 *                   8 MiB (2)
 *   after event 36 (the failed allocation): 64 MiB (1), 8 MiB (2), 3 MiB in
 *                   2 blocks (0)
 *   after event 55 (the end; the reset at 54 took every block): 512 B (0) */
#include "engines/gmt_liveset.h"
#include "gmt_test.h"

#define MiB (1ull << 20)

static void check_groups(const gmt_instant_t *at, size_t n, const gmt_live_group_t *want)
{
	CHECK_EQ_U64(1, at->taken);
	CHECK_EQ_U64(n, at->n_groups);
	for (size_t i = 0; i < n && i < at->n_groups; i++) {
		CHECK_EQ_U64(want[i].stack, at->groups[i].stack);
		CHECK_EQ_U64(want[i].owner, at->groups[i].owner);
		CHECK_EQ_U64(want[i].bytes, at->groups[i].bytes);
		CHECK_EQ_U64(want[i].count, at->groups[i].count);
	}
}

int main(void)
{
	char path[4200];
	const char *root = getenv("ROOT");
	snprintf(path, sizeof(path), "%s/tests/golden/v1_3_basic.gmt", root && *root ? root : ".");
	gmt_instant_t at[8];
	memset(at, 0, sizeof(at));
	at[0] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 36 };   /* the failure */
	at[1] = (gmt_instant_t){ .kind = GMT_AT_PEAK, .ordinal = 0, .bytes = 112197632 };
	at[2] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 9 };
	at[3] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 0 };    /* before any */
	at[4] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 55 };   /* the last */
	at[5] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 0, .seq = 56 };   /* never comes */
	at[6] = (gmt_instant_t){ .kind = GMT_AT_PEAK, .ordinal = 0, .bytes = 112197633 };
	at[7] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = 1, .seq = 22 };   /* no such device */
	gmt_instant_t *p[8];
	for (int i = 0; i < 8; i++)
		p[i] = &at[i];
	gmt_decode_result_t res;
	CHECK_EQ_U64(0, gmt_liveset_run(path, p, 8, &res));
	CHECK_EQ_U64(GMT_DECODE_OK, res.status);

	const gmt_live_group_t fail[] = { { 1, 0, 64 * MiB, 1 }, { 2, 0, 8 * MiB, 1 }, { 0, 0, 3 * MiB, 2 } };
	check_groups(&at[0], 3, fail);
	CHECK_EQ_U64(36, at[0].at_seq);
	CHECK_EQ_U64(1730, at[0].at_ts);
	/* the peak: VMM's owner is nccl but the group takes the first block's */
	const gmt_live_group_t peak[] = { { 1, 0, 64 * MiB, 1 }, { 0, 0, 35 * MiB, 3 }, { 2, 0, 8 * MiB, 1 } };
	check_groups(&at[1], 3, peak);
	CHECK_EQ_U64(22, at[1].at_seq);
	CHECK_EQ_U64(1530, at[1].at_ts);
	const gmt_live_group_t early[] = { { 1, 0, 64 * MiB, 1 }, { 2, 0, 8 * MiB, 1 } };
	check_groups(&at[2], 2, early);
	check_groups(&at[3], 0, NULL);
	CHECK_EQ_U64(0, at[3].at_seq);
	const gmt_live_group_t last[] = { { 0, 0, 512, 1 } };
	check_groups(&at[4], 1, last);
	CHECK_EQ_U64(950, at[4].at_ts);
	CHECK_EQ_U64(0, at[5].taken);
	CHECK_EQ_U64(0, at[5].n_groups);
	CHECK_EQ_U64(0, at[6].taken);
	check_groups(&at[7], 0, NULL);   /* taken: nothing lived there */

	/* a trace that cannot be read: nothing taken, the outcome says why */
	gmt_instant_t one = { .kind = GMT_AT_EVENT, .seq = 1 };
	gmt_instant_t *q = &one;
	CHECK_EQ_U64(0, gmt_liveset_run("/nonexistent/x.gmt", &q, 1, &res));
	CHECK_EQ_U64(GMT_DECODE_IO, res.status);
	CHECK_EQ_U64(0, one.taken);
	for (int i = 0; i < 8; i++)
		gmt_instant_clear(&at[i]);
	TEST_DONE();
}
