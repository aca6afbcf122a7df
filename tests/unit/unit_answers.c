/* unit_answers: the engines of answers/ with values known by construction:
 * the card's exact arithmetic and units (the figures of the protocol's
 * script and of issue 9: 7e9 parameters at 16 bits = 14,000,000,000 B =
 * 14.00 GB = about 13.04 GiB, + 4 GiB = about 17.04 GiB; the KV cache
 * 2 x 32 x 8 x 128 x 8192 x 2 x 1 = 1,073,741,824 B = 1.00 GiB), its refusals;
 * the coinciding peak of several processes' step functions (ties, changes
 * at one nanosecond, a change going back in time), own peaks and their sum;
 * the device identity; the phase-name rules; the diff's matching by key
 * (a rebuilt library's frames match by file name and function), growth,
 * percent and the --fail-above decision at its edge. */
#include "gmt_test.h"
#include "gmt_card.h"
#include "gmt_diff.h"
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

	/* numbers as the card writes and compares them */
	CHECK_EQ_U64(0, gmt_card_plain("7e9", f[0]));
	CHECK_EQ_STR("7000000000", f[0]);
	CHECK_EQ_U64(0, gmt_card_plain("4.50", f[0]));
	CHECK_EQ_STR("4.5", f[0]);
	CHECK_EQ_U64(-1, gmt_card_plain("float16", f[0]));
	CHECK_EQ_STR("float16", f[0]);
	CHECK_EQ_U64(1, gmt_card_same("8192", "8.192e3"));
	CHECK_EQ_U64(1, gmt_card_same("0.50", ".5") || gmt_card_same("0.50", "0.5"));
	CHECK_EQ_U64(0, gmt_card_same("8192", "8193"));
	CHECK_EQ_U64(1, gmt_card_same("bf16", "bf16"));
	CHECK_EQ_U64(0, gmt_card_same("bf16", "16"));

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

static void diff(void)
{
	char k[128], pc[32];
	gmt_diff_row_t *rows = NULL;

	gmt_diff_frame_key("/a/lib/libdiffws.so", "diffws_workspace", 0x1119, k, sizeof k);
	CHECK_EQ_STR("libdiffws.so:diffws_workspace", k);
	gmt_diff_frame_key("/b/lib/libdiffws.so", NULL, 0x1129, k, sizeof k);
	CHECK_EQ_STR("libdiffws.so+0x1129", k);
	gmt_diff_frame_key("main", "", 16, k, sizeof k);
	CHECK_EQ_STR("main+0x10", k);

	/* sites of the diff fixture (diff_main.c): the workspace grows by
	 * 28 MiB, the NCCL buffers by 4 MiB, a site only in A, one only in B,
	 * a key repeated in B (two stacks, one symbolised site) */
	const gmt_diff_item_t A[] = {
		{ "libdiffws.so:diffws_workspace\ndiff_workload:main", 4 * MiB, 1, NULL },
		{ "diff_workload:load_weights", 1024 * MiB, 1, NULL },
		{ "libnccl.so.2:buffers", 4 * MiB, 1, NULL },
		{ "diff_workload:gone", 1 * MiB, 1, NULL },
	};
	const gmt_diff_item_t B[] = {
		{ "libnccl.so.2:buffers", 8 * MiB, 1, NULL },
		{ "diff_workload:load_weights", 1024 * MiB, 1, NULL },
		{ "libdiffws.so:diffws_workspace\ndiff_workload:main", 16 * MiB, 1, NULL },
		{ "libdiffws.so:diffws_workspace\ndiff_workload:main", 16 * MiB, 1, NULL },
		{ "diff_workload:new", 2 * MiB, 1, NULL },
	};
	long n = gmt_diff_match(A, 4, B, 5, GMT_DIFF_BY_GROWTH, &rows);
	CHECK_EQ_U64(5, n);
	if (n == 5) {
		CHECK_EQ_U64(0, rows[0].a);             /* the workspace: +28 MiB */
		CHECK_EQ_U64(2, rows[0].b);
		CHECK_EQ_U64(28 * MiB, rows[0].delta);
		CHECK_EQ_U64(GMT_DIFF_BOTH, rows[0].side);
		CHECK_EQ_U64(2, rows[1].a);             /* NCCL: +4 MiB */
		CHECK_EQ_U64(4 * MiB, rows[1].delta);
		CHECK_EQ_U64(-1, rows[2].a);            /* new: +2 MiB */
		CHECK_EQ_U64(4, rows[2].b);
		CHECK_EQ_U64(GMT_DIFF_ONLY_B, rows[2].side);
		CHECK_EQ_U64(1, rows[3].a);             /* weights: 0 */
		CHECK_EQ_U64(0, rows[3].delta);
		CHECK_EQ_U64(0, rows[3].differs);
		CHECK_EQ_U64(3, rows[4].a);             /* gone: -1 MiB */
		CHECK_EQ_U64(GMT_DIFF_ONLY_A, rows[4].side);
		CHECK_EQ_U64((uint64_t)-(int64_t)MiB, (uint64_t)rows[4].delta);
		CHECK_EQ_U64(1, rows[4].differs);
	}
	free(rows);

	/* the environment: by key, values compared as text */
	const gmt_diff_item_t EA[] = { { "driver_version", 0, 0, "13000" }, { "NCCL_BUFFSIZE", 0, 0, "4194304" },
				       { "host", 0, 0, "vm" } };
	const gmt_diff_item_t EB[] = { { "host", 0, 0, "vm" }, { "driver_version", 0, 0, "13010" },
				       { "NCCL_BUFFSIZE", 0, 0, "8388608" }, { "CUDA_MODULE_LOADING", 0, 0, "EAGER" } };
	n = gmt_diff_match(EA, 3, EB, 4, GMT_DIFF_BY_KEY, &rows);
	CHECK_EQ_U64(4, n);
	if (n == 4) {
		CHECK_EQ_U64(3, rows[0].b);             /* CUDA_MODULE_LOADING, only in B */
		CHECK_EQ_U64(1, rows[0].differs);
		CHECK_EQ_U64(1, rows[1].a);             /* NCCL_BUFFSIZE */
		CHECK_EQ_U64(1, rows[1].differs);
		CHECK_EQ_U64(0, rows[2].a);             /* driver_version */
		CHECK_EQ_U64(1, rows[2].differs);
		CHECK_EQ_U64(2, rows[3].a);             /* host: same */
		CHECK_EQ_U64(0, rows[3].differs);
	}
	free(rows);
	CHECK_EQ_U64(0, gmt_diff_match(NULL, 0, NULL, 0, GMT_DIFF_BY_KEY, &rows));
	free(rows);

	/* percent to one decimal, half away from zero */
	gmt_diff_percent(1290 * MiB, 1322 * MiB, pc);
	CHECK_EQ_STR("+2.5", pc);                       /* 32 / 1290 = 2.48 % */
	gmt_diff_percent(1000, 1000, pc);
	CHECK_EQ_STR("0.0", pc);
	gmt_diff_percent(1000, 900, pc);
	CHECK_EQ_STR("-10.0", pc);
	gmt_diff_percent(2000, 2001, pc);               /* 0.05 % -> 0.1 */
	CHECK_EQ_STR("+0.1", pc);
	gmt_diff_percent(20000, 20001, pc);             /* 0.005 % -> 0.0 */
	CHECK_EQ_STR("0.0", pc);
	gmt_diff_percent(0, 5, pc);
	CHECK_EQ_STR("new", pc);
	gmt_diff_percent(0, 0, pc);
	CHECK_EQ_STR("0.0", pc);

	/* --fail-above: exactly at the edge is not above */
	CHECK_EQ_U64(1, gmt_diff_exceeds(1290 * MiB, 1322 * MiB, "2"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(1290 * MiB, 1322 * MiB, "5"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(1000, 1025, "2.5"));
	CHECK_EQ_U64(1, gmt_diff_exceeds(1000, 1026, "2.5"));
	CHECK_EQ_U64(1, gmt_diff_exceeds(1000000, 1000001, "0.000099"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(1000000, 1000001, "0.0001"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(1000, 900, "0"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(1000, 1000, "0"));
	CHECK_EQ_U64(1, gmt_diff_exceeds(1000, 1001, "0"));
	CHECK_EQ_U64(1, gmt_diff_exceeds(0, 1, "1000"));
	CHECK_EQ_U64(0, gmt_diff_exceeds(UINT64_MAX - 1, UINT64_MAX, "1"));
	CHECK_EQ_U64((uint64_t)-1, (uint64_t)gmt_diff_exceeds(1, 2, "-1"));
	CHECK_EQ_U64((uint64_t)-1, (uint64_t)gmt_diff_exceeds(1, 2, "1e-7"));
	CHECK_EQ_U64((uint64_t)-1, (uint64_t)gmt_diff_exceeds(1, 2, "abc"));
}

int main(void)
{
	card();
	group();
	leads();
	diff();
	TEST_DONE();
}
