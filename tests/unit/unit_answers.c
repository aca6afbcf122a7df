/* unit_answers: the engines of answers/ with values known by construction:
 * the card's exact arithmetic and units (the figures of the protocol's
 * script and of issue 9: 7e9 parameters at 16 bits = 14,000,000,000 B =
 * 14.00 GB = about 13.04 GiB, + 4 GiB = about 17.04 GiB; the KV cache
 * 2 x 32 x 8 x 128 x 8192 x 2 x 1 = 1,073,741,824 B = 1.00 GiB), its refusals;
 * the coinciding peak of several processes' step functions (ties, changes
 * at one nanosecond, a change going back in time), own peaks and their sum;
 * the device identity; the phase-name rules. */
#include "gmt_test.h"
#include "gmt_card.h"
#include "gmt_group.h"
#include "gmt_leads.h"

static void card(void)
{
	char err[256] = "", t[128], f[6][96];
	uint64_t b = 0, r = 0;

	CHECK_EQ_U64(0, gmt_card_weights("7e9", "16", &b, err, sizeof err));
	CHECK_EQ_U64(14000000000ull, b);
	gmt_card_units_text(b, t, sizeof t);
	CHECK_EQ_STR("14000000000 B = 14.00 GB = about 13.04 GiB", t);
	CHECK_EQ_U64(0, gmt_card_reserve("4", &r, err, sizeof err));
	CHECK_EQ_U64(4294967296ull, r);
	gmt_card_units_text(b + r, t, sizeof t);
	CHECK_EQ_STR("18294967296 B = about 18.29 GB = about 17.04 GiB", t);
	CHECK_EQ_U64(0, gmt_card_weights("70e9", "4", &b, err, sizeof err));
	CHECK_EQ_U64(35000000000ull, b);
	gmt_card_units_text(b, t, sizeof t);
	CHECK_EQ_STR("35000000000 B = 35.00 GB = about 32.60 GiB", t);
	CHECK_EQ_U64(0, gmt_card_weights(" 7000000000 ", "4.5", &b, err, sizeof err));
	CHECK_EQ_U64(3937500000ull, b);
	CHECK_EQ_U64(0, gmt_card_weights("1.5e3", "16", &b, err, sizeof err));
	CHECK_EQ_U64(3000, b);
	CHECK_EQ_U64(0, gmt_card_reserve("0.5", &r, err, sizeof err));
	CHECK_EQ_U64(536870912, r);
	CHECK_EQ_U64(0, gmt_card_reserve("0", &r, err, sizeof err));
	CHECK_EQ_U64(0, r);

	CHECK_EQ_U64(-1, gmt_card_weights("3", "3", &b, err, sizeof err));
	CHECK_EQ_STR("3 parameters x 3 bits is not a whole number of bytes", err);
	CHECK_EQ_U64(-1, gmt_card_weights("1.5", "16", &b, err, sizeof err));
	CHECK_EQ_STR("--parameters: must be a whole number above 0, got '1.5'", err);
	CHECK_EQ_U64(-1, gmt_card_weights("7B", "16", &b, err, sizeof err));
	CHECK_EQ_STR("--parameters: not a number: '7B'", err);
	CHECK_EQ_U64(-1, gmt_card_weights("7e9", "0", &b, err, sizeof err));
	CHECK_EQ_STR("--bits: must be above 0, got '0'", err);
	CHECK_EQ_U64(-1, gmt_card_weights("1e40", "16", &b, err, sizeof err));
	CHECK_EQ_STR("1e40 parameters x 16 bits is too large", err);
	CHECK_EQ_U64(-1, gmt_card_reserve("1e-10", &r, err, sizeof err));
	CHECK_EQ_STR("--reserve-gib 1e-10 is not a whole number of bytes", err);
	CHECK_EQ_U64(-1, gmt_card_reserve("-1", &r, err, sizeof err));
	CHECK_EQ_STR("--reserve-gib: not a number (0 or more): '-1'", err);

	CHECK_EQ_U64(0, gmt_card_kv("32,8,128,8192,2,1", &b, f, err, sizeof err));
	CHECK_EQ_U64(1073741824ull, b);
	gmt_card_units_text(b, t, sizeof t);
	CHECK_EQ_STR("1073741824 B = about 1.07 GB = 1.00 GiB", t);
	CHECK_EQ_STR("32", f[0]);
	CHECK_EQ_STR("8192", f[3]);
	CHECK_EQ_STR("2", f[4]);
	CHECK_EQ_STR("1", f[5]);
	CHECK_EQ_U64(0, gmt_card_kv("32,8,128,8192,0.5,3", &b, f, err, sizeof err));
	CHECK_EQ_U64(805306368ull, b);
	CHECK_EQ_STR("0.5", f[4]);
	CHECK_EQ_U64(0, gmt_card_kv("80,8,128,128e3,2,16", &b, f, err, sizeof err));
	CHECK_EQ_U64(2ull * 80 * 8 * 128 * 128000 * 2 * 16, b);
	CHECK_EQ_STR("128000", f[3]);
	CHECK_EQ_U64(-1, gmt_card_kv("32,8,128,8192,0.3,1", &b, f, err, sizeof err));
	CHECK_EQ_STR("--kv 32,8,128,8192,0.3,1 is not a whole number of bytes", err);
	CHECK_EQ_U64(-1, gmt_card_kv("32,8,128", &b, f, err, sizeof err));
	CHECK(!strncmp(err, "--kv: expected six numbers L,H,D,T,B,S (", 40));
	CHECK_EQ_U64(-1, gmt_card_kv("32,8,128,8192,2,1,1", &b, f, err, sizeof err));
	CHECK(!strncmp(err, "--kv: expected six numbers", 26));
	CHECK_EQ_U64(-1, gmt_card_kv("32,8,128.5,8192,2,1", &b, f, err, sizeof err));
	CHECK_EQ_STR("--kv: head dimension must be a whole number above 0, got '128.5'", err);
	CHECK_EQ_U64(-1, gmt_card_kv("32,8,128,8192,0,1", &b, f, err, sizeof err));
	CHECK_EQ_STR("--kv: bytes per value must be a number above 0, got '0'", err);

	/* two decimals, half to even, "exact" only when nothing was lost */
	CHECK_EQ_U64(1, gmt_card_in_unit(1500000000ull, GMT_GB, t));
	CHECK_EQ_STR("1.50", t);
	CHECK_EQ_U64(0, gmt_card_in_unit(15000000ull, GMT_GB, t));
	CHECK_EQ_STR("0.02", t);
	CHECK_EQ_U64(0, gmt_card_in_unit(25000000ull, GMT_GB, t));
	CHECK_EQ_STR("0.02", t);
	CHECK_EQ_U64(0, gmt_card_in_unit(35000000ull, GMT_GB, t));
	CHECK_EQ_STR("0.04", t);
	CHECK_EQ_U64(1, gmt_card_in_unit(0, GMT_GIB, t));
	CHECK_EQ_STR("0.00", t);
	CHECK_EQ_U64(0, gmt_card_in_unit(UINT64_MAX, GMT_GIB, t));
	CHECK_EQ_STR("17179869184.00", t);
}

#define MiB (1ull << 20)

static void group(void)
{
	/* shared_workload 3's script (tests/routes/shared_workload.c), one
	 * step every 10 ns: the coinciding peak 650 MiB at step 3 (r0 300,
	 * r1 300, r2 50); own peaks 300, 450, 300 (sum 1050). */
	const gmt_step_t r0[] = { { 10, 100 * MiB }, { 30, 300 * MiB }, { 60, 100 * MiB }, { 100, 0 } };
	const gmt_step_t r1[] = { { 20, 300 * MiB }, { 40, 0 }, { 80, 450 * MiB }, { 100, 0 } };
	const gmt_step_t r2[] = { { 0, 50 * MiB }, { 50, 300 * MiB }, { 70, 50 * MiB }, { 100, 0 } };
	gmt_group_array_t a[3] = { { r0, 4, 0 }, { r1, 4, 0 }, { r2, 4, 0 } };
	gmt_group_src_t src[3];
	gmt_group_member_t m[3];
	gmt_group_result_t res;

	for (int i = 0; i < 3; i++)
		src[i] = (gmt_group_src_t){ gmt_group_array_next, &a[i] };
	CHECK_EQ_U64(0, gmt_group_merge(src, 3, m, &res));
	CHECK_EQ_U64(1, res.found);
	CHECK_EQ_U64(650 * MiB, res.peak_bytes);
	CHECK_EQ_U64(30, res.peak_ts);
	CHECK_EQ_U64(300 * MiB, m[0].at_peak);
	CHECK_EQ_U64(300 * MiB, m[1].at_peak);
	CHECK_EQ_U64(50 * MiB, m[2].at_peak);
	CHECK_EQ_U64(300 * MiB, m[0].own_peak);
	CHECK_EQ_U64(30, m[0].own_peak_ts);
	CHECK_EQ_U64(450 * MiB, m[1].own_peak);
	CHECK_EQ_U64(80, m[1].own_peak_ts);
	CHECK_EQ_U64(300 * MiB, m[2].own_peak);
	CHECK_EQ_U64(50, m[2].own_peak_ts);
	CHECK_EQ_U64(1050 * MiB, res.own_peak_sum);
	CHECK_EQ_U64(12, res.changes);
	CHECK_EQ_U64(100, m[1].last_ts);

	/* Simultaneous changes of two processes count together; two changes of
	 * one process at one instant leave its last value (the transient 900
	 * never counts); a tie keeps the first instant; a change that goes
	 * back in time is taken at the time before it. */
	const gmt_step_t p[] = { { 5, 100 }, { 5, 900 }, { 5, 200 }, { 20, 0 }, { 40, 300 } };
	const gmt_step_t q[] = { { 5, 100 }, { 30, 0 }, { 25, 0 }, { 40, 0 } };
	gmt_group_array_t b[2] = { { p, 5, 0 }, { q, 4, 0 } };
	gmt_group_src_t s2[2] = { { gmt_group_array_next, &b[0] }, { gmt_group_array_next, &b[1] } };
	gmt_group_member_t m2[2];
	CHECK_EQ_U64(0, gmt_group_merge(s2, 2, m2, &res));
	CHECK_EQ_U64(300, res.peak_bytes);
	CHECK_EQ_U64(5, res.peak_ts);
	CHECK_EQ_U64(200, m2[0].at_peak);
	CHECK_EQ_U64(100, m2[1].at_peak);
	CHECK_EQ_U64(300, m2[0].own_peak);
	CHECK_EQ_U64(40, m2[0].own_peak_ts);
	CHECK_EQ_U64(400, res.own_peak_sum);
	CHECK_EQ_U64(40, m2[1].last_ts);

	/* Nothing held: not found. */
	gmt_group_array_t e = { NULL, 0, 0 };
	gmt_group_src_t se = { gmt_group_array_next, &e };
	CHECK_EQ_U64(0, gmt_group_merge(&se, 1, m2, &res));
	CHECK_EQ_U64(0, res.found);
	CHECK_EQ_U64(0, res.own_peak_sum);

	uint8_t u1[16] = { 1 }, u2[16] = { 2 }, z[16] = { 0 };
	CHECK(gmt_group_same_device("h", u1, 0, "A", "h", u1, 3, "B"));
	CHECK(!gmt_group_same_device("h", u1, 0, "A", "h", u2, 0, "A"));
	CHECK(!gmt_group_same_device("h", u1, 0, "A", "g", u1, 0, "A"));
	CHECK(gmt_group_same_device("h", z, 1, "A", "h", z, 1, "A"));
	CHECK(!gmt_group_same_device("h", z, 1, "A", "h", z, 2, "A"));
	CHECK(!gmt_group_same_device("h", z, 1, "A", "h", u1, 1, "A"));
}

static void leads(void)
{
	gmt_leads_t l;
	char err[256] = "";

	gmt_leads_default(&l);
	CHECK_EQ_U64(GMT_LEAD_LOADING, gmt_leads_classify(&l, "model_load"));
	CHECK_EQ_U64(GMT_LEAD_LOADING, gmt_leads_classify(&l, "Load Weights"));
	CHECK_EQ_U64(GMT_LEAD_GENERATION, gmt_leads_classify(&l, "generate"));
	CHECK_EQ_U64(GMT_LEAD_GENERATION, gmt_leads_classify(&l, "prefill"));
	CHECK_EQ_U64(GMT_LEAD_BACKWARD, gmt_leads_classify(&l, "train"));
	CHECK_EQ_U64(GMT_LEAD_BACKWARD, gmt_leads_classify(&l, "backward"));
	CHECK_EQ_U64(GMT_LEAD_EVALUATION, gmt_leads_classify(&l, "eval_step"));
	CHECK_EQ_U64(GMT_LEAD_EVALUATION, gmt_leads_classify(&l, "validation"));
	CHECK_EQ_U64((uint64_t)GMT_LEAD_NONE, gmt_leads_classify(&l, "cold_forward"));
	CHECK_EQ_U64((uint64_t)GMT_LEAD_NONE, gmt_leads_classify(&l, ""));
	CHECK_EQ_U64((uint64_t)GMT_LEAD_NONE, gmt_leads_classify(&l, NULL));
	CHECK_EQ_STR("loading", gmt_lead_key(GMT_LEAD_LOADING));
	CHECK_EQ_STR("none", gmt_lead_key(GMT_LEAD_NONE));
	CHECK(gmt_lead_text(GMT_LEAD_NONE) == NULL);
	CHECK(strstr(gmt_lead_text(GMT_LEAD_GENERATION), "KV cache") != NULL);
	CHECK_EQ_U64(0, gmt_leads_rule(&l, "backward=*forward*,fwd_*", err, sizeof err));
	CHECK_EQ_U64(GMT_LEAD_BACKWARD, gmt_leads_classify(&l, "cold_forward"));
	CHECK_EQ_U64(GMT_LEAD_BACKWARD, gmt_leads_classify(&l, "FWD_1"));
	CHECK_EQ_U64((uint64_t)GMT_LEAD_NONE, gmt_leads_classify(&l, "train"));
	CHECK_EQ_U64(0, gmt_leads_rule(&l, "loading=", err, sizeof err));
	CHECK_EQ_U64((uint64_t)GMT_LEAD_NONE, gmt_leads_classify(&l, "model_load"));
	CHECK_EQ_U64(-1, gmt_leads_rule(&l, "forward=*fwd*", err, sizeof err));
	CHECK(!strncmp(err, "--lead: expected CATEGORY=GLOB", 30));
	CHECK_EQ_U64(-1, gmt_leads_rule(&l, "loading", err, sizeof err));
}

int main(void)
{
	card();
	group();
	leads();
	TEST_DONE();
}
