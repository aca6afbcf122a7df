/* unit_tracer_golden: pins format 1.0 with a committed trace.
 *
 * With GMT_GOLDEN_OUT=DIR it writes DIR/v1_0_basic.gmt (a fixed workload
 * with fixed timestamps; see tests/golden/README). Without it, it reads
 * $ROOT/tests/golden/v1_0_basic.gmt (ROOT from tests/run.sh, else relative
 * to this source) and checks every event field against the same table. */
#include <sys/prctl.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"

#define A(k, api, o) GMT_AUX(k, api, o)
static const gmt_event_t golden[] = {
	{ 1000, 0x7f0000000000, 1 << 20, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, 0), 0, GMT_EV_ALLOC, 0 },
	{ 1010, 0x7f0000100000, 4096, 0xdead, A(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, 0) | 1u << 24, 0, GMT_EV_ALLOC, 0 },
	{ 1020, 0, 1ull << 40, 0xdead, GMT_AUX_WITH_RESULT(A(GMT_KIND_ASYNC, 0, 0), 2), 0, GMT_EV_ALLOC_FAIL, 0 },
	{ 1030, 0x7f0000000000, 0, 0, A(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, 0), 0, GMT_EV_FREE, 0 },
	{ 1031, 0x7f0000000000, 0, 0, 0, 0, GMT_EV_FREE_FAIL, 0 },
	{ 1040, 0x11, 2 << 20, 0, A(GMT_KIND_VMM, 0, GMT_OWNER_NCCL), 0, GMT_EV_VMM_CREATE, 1 },
	{ 1050, 0x7e0000000000, 64 << 20, 0, 0, 0, GMT_EV_VMM_RESERVE, -1 },
	{ 1060, 0x7e0000000000, 2 << 20, 0x11, 0, 0, GMT_EV_VMM_MAP, 1 },
	{ 1070, 0x7e0000000000, 2 << 20, 0x11, GMT_AUX_WITH_RESULT(0, 1), 0, GMT_EV_VMM_MAP_FAIL, 1 },
	{ 1080, 0x7e0000000000, 2 << 20, 0, 0, 0, GMT_EV_VMM_UNMAP, -1 },
	{ 1090, 0x7e0000000000, 64 << 20, 0, 0, 0, GMT_EV_VMM_ADDR_FREE, -1 },
	{ 1100, 0x11, 0, 0, A(GMT_KIND_VMM, 0, GMT_OWNER_NCCL), 0, GMT_EV_VMM_RELEASE, 1 },
	{ 1110, 0, 0, 0x900, 0, 0, GMT_EV_POOL_CREATE, 0 },
	{ 1120, 0, 1 << 20, 0x900, 0, 0, GMT_EV_POOL_TRIM, 0 },
	{ 1130, 3 << 20, 5 << 20, 0x900, 0, 0, GMT_EV_POOL_RESERVED, 0 },
	{ 1140, 1 << 20, 4 << 20, 0x900, 0, 0, GMT_EV_POOL_USED, 0 },
	{ 1150, 0, 0, 0x900, 0, 0, GMT_EV_POOL_DESTROY, 0 },
	{ 1160, 1155, 0, 0x10, GMT_SYNC_STREAM, 0, GMT_EV_SYNC, 0 },
	{ 1170, 0xc0, 0, 0, 0, 0, GMT_EV_CTX_CREATE, 0 },
	{ 1180, 0xc1, 0, 0, 0, 0, GMT_EV_PRIMARY_RETAIN, 0 },
	{ 1190, 70ull << 30, 80ull << 30, 0, 0, 0, GMT_EV_MEMINFO, 0 },
	{ 1200, 0, 0, 0, GMT_NCCL_COMM_INIT_RANK, 0, GMT_EV_NCCL_BEGIN, 0 },
	{ 1210, 0xcc, 0, 0, GMT_NCCL_COMM_INIT_RANK, 0, GMT_EV_NCCL_END, 0 },
	{ 1220, 0, 0, 0, 0, 0, GMT_EV_PRIMARY_RELEASE, 0 },
	{ 1230, 0xc0, 0, 0, 0, 0, GMT_EV_CTX_DESTROY, 0 },
	{ 1240, 0x7f0000100000, 0, 0xdead, A(GMT_KIND_ASYNC, GMT_API_CUDA_FREE_ASYNC, 0), 0, GMT_EV_FREE, 0 },
	{ 900, 0x7f0000200000, 512, 0, A(GMT_KIND_MANAGED, GMT_API_CUDA_MALLOC_MANAGED, 0), 0, GMT_EV_ALLOC, 0 },
};
#define N_GOLDEN (sizeof(golden) / sizeof(golden[0]))
#define N_INORDER (N_GOLDEN - 1)   /* the last one is older: a LATE record */

static int generate(const char *dir)
{
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s/v1_0_basic.gmt", dir);
	gmt_config_t cfg = test_config(pat);
	prctl(PR_SET_NAME, "golden", 0, 0, 0);
	if (gmt_tracer_init(&cfg))
		return 1;
	gmt_device_info_t dev;
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.name, sizeof(dev.name), "Golden GPU");
	dev.total_bytes = 80ull << 30;
	dev.cc_major = 9;
	gmt_tracer_device(&dev);
	gmt_tracer_string("phase:warmup");
	const char *k[1] = { "purpose" }, *v[1] = { "golden" };
	gmt_tracer_meta(k, v, 1);
	for (size_t i = 0; i < N_INORDER; i++)
		gmt_emit(&golden[i], 0, 0);
	gmt_tracer_flush(1000);
	gmt_emit(&golden[N_INORDER], 0, 0);
	gmt_tracer_shutdown();
	printf("%s\n", pat);
	return 0;
}

int main(void)
{
	const char *out = getenv("GMT_GOLDEN_OUT");
	if (out && *out)
		return generate(out);
	char path[4200];
	const char *root = getenv("ROOT");
	if (root && *root)
		snprintf(path, sizeof(path), "%s/tests/golden/v1_0_basic.gmt", root);
	else
		snprintf(path, sizeof(path), "%s/../golden/v1_0_basic.gmt", strrchr(__FILE__, '/') ?
			 "tests/unit" : ".");
	gmt_decode_result_t r;
	coll_t *c = coll_decode(path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(1, c->major);
	CHECK_EQ_U64(0, c->minor);
	CHECK_EQ_U64(N_GOLDEN, c->n);
	CHECK_EQ_U64(1, c->n_late);
	CHECK_EQ_U64(N_GOLDEN, c->end.written);
	CHECK_EQ_U64(1, c->end.late);
	CHECK_EQ_U64(1, c->n_threads);
	CHECK_EQ_STR("golden", c->thread_name[0]);
	CHECK_EQ_STR("Golden GPU", c->device_name[0]);
	CHECK_EQ_STR("phase:warmup", c->string_text[0]);
	CHECK_EQ_STR("purpose=golden", c->meta_kv[0]);
	for (size_t i = 0; i < c->n && i < N_GOLDEN; i++) {
		const gmt_devent_t *e = &c->ev[i];
		const gmt_event_t *g = &golden[i];
		CHECK_EQ_U64(g->ts, e->ts);
		CHECK_EQ_U64(g->type, e->type);
		CHECK_EQ_U64(g->addr, e->addr);
		CHECK_EQ_U64(g->size, e->size);
		CHECK_EQ_U64(g->stream, e->stream);
		CHECK_EQ_U64(g->aux, e->aux);
		CHECK_EQ_U64((uint64_t)(int64_t)g->device, (uint64_t)(int64_t)e->device);
		CHECK_EQ_U64(i == N_INORDER, c->late[i]);
	}
	coll_free(c);
	free(c);
	TEST_DONE();
}
