/* unit_sites_model: the sites model (analyzer/model/gmt_sites_model.h) and
 * every number it derives, on tests/golden/v1_3_basic.gmt (contents known by
 * construction, tests/golden/make_golden.c; see unit_liveset.c for the live
 * sets): device 0 peaks at 112197632 B (107 MiB) at ts 1530 with 64 MiB of
 * stack 1, 35 MiB in 3 blocks without a stack and 8 MiB of stack 2; over the
 * run stack 0 allocated 35 MiB + 512 B in 4 blocks; one failed allocation
 * (1 TiB, cudaMallocAsync, CUDA_ERROR_OUT_OF_MEMORY, stack 3); the
 * framework peaks at 56 MiB (16 + 40 MiB, one text stack) at ts 1710; phase
 * "step" has two occurrences, [1500, 1610] and [1700, 1760]. */
#include <string.h>

#include "engines/gmt_liveset.h"
#include "model/gmt_sites_model.h"
#include "gmt_test.h"

#define MiB (1ull << 20)

static gmt_sites_model_t *build(const char *path, unsigned what, unsigned top, const char *phase, int fw)
{
	gmt_sites_model_opts_t o = { .what = what, .top = top, .phase = phase, .framework = fw, .symbols = 0 };
	gmt_sites_model_t *m = gmt_sites_model_build(path, &o);
	CHECK(m != NULL);
	return m;
}

int main(void)
{
	char path[4200];
	const char *root = getenv("ROOT");
	snprintf(path, sizeof(path), "%s/tests/golden/v1_3_basic.gmt", root && *root ? root : ".");
	const uint64_t peak = 112197632;

	/* the peak's live set found in the replay's own pass, then (no rise
	 * followed: gmt_liveset_max_rises 0) by the peak's bytes in a second
	 * pass: the same model */
	gmt_sites_model_t *m = NULL;
	for (int way = 0; way < 2; way++) {
	gmt_liveset_max_rises = way ? 0 : UINT32_MAX - 1;
	m = build(path, GMT_SITES_REPORT, 2, NULL, 0);
	if (!m)
		TEST_DONE();
	CHECK_EQ_STR("clean", m->status_key);
	CHECK_EQ_U64(57, m->events);
	CHECK_EQ_U64(1, m->n_devs);
	const gmt_sites_dev_t *d = &m->devs[0];
	CHECK_EQ_U64(0, d->ordinal);
	CHECK_EQ_U64(peak, d->peak);
	CHECK_EQ_U64(1530, d->peak_ts);
	/* live at the peak: all three, two listed */
	CHECK_EQ_U64(3, d->live.n);
	CHECK_EQ_U64(2, d->live.n_listed);
	CHECK_EQ_U64(1, d->live.more);
	CHECK_EQ_U64(1, d->live.not_listed);
	const uint64_t lb[3] = { 64 * MiB, 35 * MiB, 8 * MiB }, lc[3] = { 1, 3, 1 }, ls[3] = { 1, 0, 2 };
	for (int i = 0; i < 3; i++) {
		const gmt_site_t *s = &d->live.sites[i];
		CHECK_EQ_U64(lb[i], s->bytes);
		CHECK_EQ_U64(lc[i], s->count);
		CHECK_EQ_U64(ls[i], s->stack);
		CHECK_EQ_U64(1, s->has_share);
		CHECK(s->share == (double)lb[i] / (double)peak);
		CHECK(s->percent == 100.0 * (double)lb[i] / (double)peak);
		CHECK_EQ_STR("application", s->owner_key);
		CHECK_EQ_U64(0, s->n_ids);
	}
	/* the listed ones have their stacks' views; the third is not listed */
	CHECK(d->live.sites[0].st && d->live.sites[0].st->kind == GMT_STACK_NATIVE);
	CHECK(d->live.sites[0].st && d->live.sites[0].st->n == 4 && d->live.sites[0].st->recorded);
	CHECK(d->live.sites[0].st && !strcmp(d->live.sites[0].st->frames[0].status, "off"));
	CHECK(d->live.sites[1].st && d->live.sites[1].st->kind == GMT_STACK_NONE && !d->live.sites[1].st->recorded);
	CHECK(d->live.sites[2].st == NULL);
	/* allocated most over the run: cut to the top two, no share */
	CHECK_EQ_U64(2, d->top.n);
	CHECK_EQ_U64(2, d->top.n_listed);
	CHECK_EQ_U64(0, d->top.more);
	CHECK_EQ_U64(0, d->top.not_listed);
	CHECK_EQ_U64(64 * MiB, d->top.sites[0].bytes);
	CHECK_EQ_U64(35 * MiB + 512, d->top.sites[1].bytes);
	CHECK_EQ_U64(4, d->top.sites[1].count);
	CHECK_EQ_U64(0, d->top.sites[1].has_share);
	/* the failure */
	CHECK_EQ_U64(1, m->fails_total);
	CHECK_EQ_U64(1, m->n_fails);
	CHECK_EQ_U64(0, m->fails_more);
	CHECK_EQ_U64(1ull << 40, m->fails[0].size);
	CHECK_EQ_U64(1730, m->fails[0].ts);
	CHECK_EQ_U64(3, m->fails[0].stack);
	CHECK_EQ_STR("CUDA_ERROR_OUT_OF_MEMORY", m->fails[0].result_name);
	CHECK_EQ_STR("cudaMallocAsync", m->fails[0].api_key);
	CHECK_EQ_STR("stream_ordered", m->fails[0].kind_key);
	CHECK(m->fails[0].st && m->fails[0].st->kind == GMT_STACK_NATIVE);
	CHECK_EQ_U64(0, m->n_folded);
	CHECK_EQ_U64(0, m->symbols);
	gmt_sites_model_free(m);
	}
	gmt_liveset_max_rises = UINT32_MAX - 1;

	/* folded lines: one per stack, sorted, summing to the peak */
	m = build(path, GMT_SITES_FOLDED, 20, NULL, 0);
	if (m) {
		CHECK_EQ_U64(3, m->n_folded);
		uint64_t sum = 0;
		for (size_t i = 0; i < m->n_folded; i++) {
			sum += m->folded[i].bytes;
			CHECK(!strncmp(m->folded[i].text, "device 0;", 9));
			if (i)
				CHECK(strcmp(m->folded[i - 1].text, m->folded[i].text) < 0);
		}
		CHECK_EQ_U64(peak, sum);
		int nostack = 0;
		for (size_t i = 0; i < m->n_folded; i++)
			if (!strcmp(m->folded[i].text, "device 0;[no stack]"))
				nostack = m->folded[i].bytes == 35 * MiB;
		CHECK(nostack);
		CHECK(m->devs[0].live.sites[0].st == NULL);   /* no report: no views */
		gmt_sites_model_free(m);
	}

	/* the framework, whole run and per occurrence of "step" */
	m = build(path, GMT_SITES_REPORT | GMT_SITES_FOLDED, 20, "step", 1);
	if (m) {
		CHECK_EQ_U64(1, m->n_fwdevs);
		const gmt_sites_dev_t *f = &m->fwdevs[0];
		CHECK_EQ_U64(56 * MiB, f->peak);
		CHECK_EQ_U64(1710, f->peak_ts);
		CHECK_EQ_U64(1, f->live.n);
		CHECK_EQ_U64(2, f->live.sites[0].count);
		CHECK(f->live.sites[0].share == 1.0);
		CHECK(f->live.sites[0].percent == 100.0);
		CHECK(f->live.sites[0].st && f->live.sites[0].st->kind == GMT_STACK_TEXT);
		CHECK(f->live.sites[0].st && f->live.sites[0].st->n == 2);
		CHECK(f->live.sites[0].st && !strcmp(f->live.sites[0].st->frames[0].text, "forward (model.py:42)"));
		CHECK_EQ_U64(2, m->occ_total);
		CHECK_EQ_U64(2, m->n_occs);
		CHECK_EQ_U64(0, m->occ_more);
		CHECK(m->n_occs == 2 && m->occs[0].k == 1 && m->occs[0].begin_ts == 1500 && m->occs[0].end_ts == 1610);
		CHECK(m->n_occs == 2 && m->occs[1].k == 2 && m->occs[1].begin_ts == 1700 && m->occs[1].end_ts == 1760);
		/* occurrence 1: the framework held 16 MiB from before, and 32 more
		 * from 1550 to 1560; occurrence 2: 16 + 40 */
		if (m->n_occs == 2) {
			CHECK(m->occs[0].n_fwdevs == 1 && m->occs[0].fwdevs[0].peak == 48 * MiB);
			CHECK(m->occs[0].n_fwdevs == 1 && m->occs[0].fwdevs[0].peak_ts == 1550);
			CHECK(m->occs[1].n_fwdevs == 1 && m->occs[1].fwdevs[0].peak == 56 * MiB);
			/* the driver-level peak of occurrence 1: the whole run's */
			CHECK(m->occs[0].n_devs == 1 && m->occs[0].devs[0].peak == peak);
		}
		/* folded with --phase --framework: rooted at "step #K" */
		CHECK(m->n_folded >= 2);
		for (size_t i = 0; i < m->n_folded; i++)
			CHECK(!strncmp(m->folded[i].text, "step #", 6));
		gmt_sites_model_free(m);
	}
	/* GMT_SITES_AT_ONLY: after every event number, the instant's live set
	 * is the one of the whole trace's read, found reading no further than
	 * that event's batch; no devices, totals or failures. The peak (107
	 * MiB at ts 1530) comes at one of them, with its three sites. */
	int peaks_seen = 0;
	for (uint64_t seq = 0; seq <= 58; seq++) {
		const gmt_sites_at_t at = { 0, seq };
		gmt_sites_model_opts_t o = { .what = GMT_SITES_REPORT, .top = 2, .at = &at, .n_at = 1 };
		gmt_sites_model_t *full = gmt_sites_model_build(path, &o);
		o.what = GMT_SITES_REPORT | GMT_SITES_AT_ONLY;
		gmt_sites_model_t *part = gmt_sites_model_build(path, &o);
		CHECK(full && part);
		if (!full || !part)
			break;
		CHECK(full->n_ats == 1 && part->n_ats == 1);
		if (full->n_ats != 1 || part->n_ats != 1)
			break;
		const gmt_sites_dev_t *a = &full->ats[0], *b = &part->ats[0];
		CHECK_EQ_U64(a->peak, b->peak);
		CHECK_EQ_U64(a->peak_ts, b->peak_ts);
		CHECK_EQ_U64(a->live.n, b->live.n);
		CHECK_EQ_U64(a->live.n_listed, b->live.n_listed);
		for (size_t i = 0; i < a->live.n && i < b->live.n; i++) {
			CHECK_EQ_U64(a->live.sites[i].bytes, b->live.sites[i].bytes);
			CHECK_EQ_U64(a->live.sites[i].count, b->live.sites[i].count);
			CHECK_EQ_U64(a->live.sites[i].stack, b->live.sites[i].stack);
			CHECK(a->live.sites[i].share == b->live.sites[i].share);
		}
		CHECK_EQ_U64(0, part->n_devs);
		CHECK_EQ_U64(0, part->n_fails);
		/* the trace's 57 events: read to the end only for an instant
		   in its last batch, or past the end (never taken) */
		CHECK_EQ_U64(57, full->events);
		if (seq <= 1) {
			CHECK_EQ_STR("stopped", part->status_key);
			CHECK(part->events < 57);
		}
		if (seq > 57)
			CHECK_EQ_STR("clean", part->status_key);
		if (b->peak == peak && b->peak_ts == 1530) {
			peaks_seen++;
			CHECK_EQ_U64(3, b->live.n);
			CHECK(b->live.n == 3 && b->live.sites[0].bytes == 64 * MiB && b->live.sites[1].bytes == 35 * MiB);
		}
		gmt_sites_model_free(full);
		gmt_sites_model_free(part);
	}
	CHECK_EQ_U64(1, peaks_seen);
	/* a trace that cannot be read: a model saying so */
	m = build("/nonexistent/x.gmt", GMT_SITES_REPORT, 20, NULL, 0);
	if (m) {
		CHECK_EQ_STR("unreadable", m->status_key);
		CHECK_EQ_U64(0, m->n_devs);
		gmt_sites_model_free(m);
	}
	TEST_DONE();
}
