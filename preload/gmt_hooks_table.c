/*
 * gmt_hooks_table.c - the exported wrappers and the name -> {wrapper, real}
 * table, both expanded from hooks.def.
 *
 * Each wrapper is a hidden function gmt_w_<name> plus an exported alias
 * <name> redeclared with the header's own prototype (so a parameter list in
 * hooks.def that differs from the CUDA/NCCL headers does not compile). The
 * table refers to the hidden function, whose address is the exported
 * symbol's, without going through the GOT.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_preload.h"

_Atomic(void *) gmt_real_slots[GMT_HOOK_COUNT];

/* The common shape of every hook. errno is the program's on return
 * (GMT_KEEP_ERRNO). The call record carries the wrapper's
 * return address: the immediate caller decides the owner (libnccl,
 * libcublas, libcudnn or not). The body is never a tail call (&call
 * escapes), so the wrapper's frame is always there for the stack skip
 * count. */
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flg, req)                  \
	ret gmt_w_##name GMT_PROTO params                                              \
	{                                                                              \
		GMT_KEEP_ERRNO;                                                        \
		gmt_call_t call = { GMT_ID_##name, (flg), __builtin_return_address(0) }; \
		__typeof__(name) *real;                                                \
		gmt_preload_ensure_init();                                             \
		real = real_##name();                                                  \
		if (GMT_UNLIKELY(real == NULL)) {                                      \
			real = (__typeof__(name) *)gmt_resolve(GMT_ID_##name);         \
			if (real == NULL)                                              \
				return GMT_MISSING_##lib;                              \
		}                                                                      \
		if (gmt_tls.guard)                                                     \
			return real args;                                              \
		return gmt_do_##body(real, &call GMT_TAIL args);                       \
	}                                                                              \
	extern __typeof__(name) name                                                   \
		__attribute__((alias("gmt_w_" #name), visibility("default")));
#include "hooks.def"
#undef GMT_HOOK

const gmt_hook_t gmt_hooks[GMT_HOOK_COUNT] = {
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flg, req) \
	[GMT_ID_##name] = { #name, (void *)gmt_w_##name, #body, (minver), \
			    GMT_LIB_OF_##lib, (flg), GMT_REQ_##req },
#include "hooks.def"
#undef GMT_HOOK
};

/* Names sorted once for bsearch: dlsym is called hundreds of times at start-up
 * (once per symbol a library wants) and must answer "not ours" quickly. */
static int sorted[GMT_HOOK_COUNT];
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

static int cmp_id(const void *a, const void *b)
{
	return strcmp(gmt_hooks[*(const int *)a].name, gmt_hooks[*(const int *)b].name);
}

static void sort_names(void)
{
	for (int i = 0; i < GMT_HOOK_COUNT; i++)
		sorted[i] = i;
	qsort(sorted, GMT_HOOK_COUNT, sizeof sorted[0], cmp_id);
}

int gmt_hook_find(const char *name)
{
	int lo = 0, hi = GMT_HOOK_COUNT - 1;

	if (name == NULL || (name[0] != 'c' && name[0] != 'n'))
		return -1;
	pthread_once(&sorted_once, sort_names);
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(name, gmt_hooks[sorted[mid]].name);
		if (c == 0)
			return sorted[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

int gmt_real_offer(int id, void *p)
{
	void *expected = NULL;

	if (p == NULL || p == gmt_hooks[id].wrapper)
		return 0;
	if (atomic_compare_exchange_strong_explicit(&gmt_real_slots[id], &expected, p,
						    memory_order_acq_rel, memory_order_acquire))
		return 1;
	return expected == p;
}
