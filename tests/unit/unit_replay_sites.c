/*
 * unit_replay_sites.c - pieces of the sites report that need no trace: the
 * analyzer's uint64 hash map (analyzer/support/gmt_u64map.c) against a plain array under
 * random puts and deletes (deletion by backward shift must keep every other
 * key findable), and the stack owner rule (gmt_stackowner.c) for each row of
 * docs/analyzer.md's table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/gmt_sites_model.h"
#include "gmt_test.h"
#include "support/gmt_u64map.h"

#define UNIVERSE 5000

static void test_map(void)
{
	static uint64_t ref[UNIVERSE];   /* 0: absent; else value + 1 */
	gmt_u64map_t m;
	memset(&m, 0, sizeof(m));
	uint64_t x = 88172645463325252ull;
	size_t live = 0;
	for (int step = 0; step < 200000; step++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		/* keys clustered (addresses 256 apart) and spread */
		unsigned k = (unsigned)(x % UNIVERSE);
		uint64_t key = (k & 1) ? (uint64_t)k << 8 : (uint64_t)k * 0x9e3779b97f4a7c15ull;
		if ((x >> 20) % 3) {
			int existed;
			gmt_u64map_slot_t *s = gmt_u64map_put(&m, key, &existed);
			CHECK(s != NULL);
			CHECK_EQ_U64(ref[k] != 0, existed);
			if (!existed)
				live++;
			s->a = step;
			s->b = key ^ 1;
			ref[k] = (uint64_t)step + 1;
		} else {
			gmt_u64map_slot_t *s = gmt_u64map_find(&m, key);
			CHECK_EQ_U64(ref[k] != 0, s != NULL);
			if (s) {
				gmt_u64map_del(&m, s);
				ref[k] = 0;
				live--;
			}
		}
	}
	CHECK_EQ_U64(live, m.n);
	for (unsigned k = 0; k < UNIVERSE; k++) {
		uint64_t key = (k & 1) ? (uint64_t)k << 8 : (uint64_t)k * 0x9e3779b97f4a7c15ull;
		gmt_u64map_slot_t *s = gmt_u64map_find(&m, key);
		CHECK_EQ_U64(ref[k] != 0, s != NULL);
		if (s && ref[k]) {
			CHECK_EQ_U64(ref[k] - 1, s->a);
			CHECK_EQ_U64(key ^ 1, s->b);
		}
	}
	int existed;
	CHECK(gmt_u64map_put(&m, UINT64_MAX, &existed) == NULL);
	gmt_u64map_clear(&m);
	CHECK(gmt_u64map_find(&m, 1) == NULL);
}

static void test_owner(void)
{
	static const struct { const char *path; const char *owner; } t[] = {
		{ "/x/torch/lib/libc10_cuda.so", "framework" },
		{ "/x/torch/lib/libtorch_cuda.so", "framework" },
		{ "libtorch.so", "framework" },
		{ "/usr/lib/libnccl.so.2", "nccl" },
		{ "/x/libcublas.so.12", "cublas" },
		{ "/x/fakelibs/libcublasLt.so.13", "cublas" },
		{ "/x/libcudnn_ops.so.9", "cudnn" },
		{ "/x/libcudnn.so.9", "cudnn" },
		{ "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "unknown" },
		{ "/usr/local/cuda/lib64/libcudart.so.13", "unknown" },
		{ "/opt/gmt/libgpumemtrace.so", "unknown" },
		{ "/home/u/train", "application" },
		{ "/lib/x86_64-linux-gnu/libc.so.6", "application" },
		{ "/x/libcudaext.so", "application" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_EQ_STR(t[i].owner, gmt_stack_owner_name(gmt_module_owner(t[i].path)));
	CHECK_EQ_STR("unknown", gmt_stack_owner_name((enum gmt_stack_owner)99));
}

int main(void)
{
	test_map();
	test_owner();
	TEST_DONE();
}
