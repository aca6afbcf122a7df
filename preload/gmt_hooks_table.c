/*
 * gmt_hooks_table.c - the wrappers and the name -> {wrapper, real} table,
 * all expanded from hooks.def.
 *
 * Every wrapper has ONE shape (GMT_WRAPPER below): what differs between
 * them is only where the real function comes from.
 *
 * - A driver hook (lib DRV) has one wrapper, gmt_w_<name>, exported as
 *   <name> (an alias redeclared with the header's own prototype, so a
 *   parameter list in hooks.def that differs from the CUDA headers does not
 *   compile). Its real function is the driver's, one per process
 *   (gmt_real(), found lazily by gmt_resolve()).
 *   It also has GMT_DRV_TARGETS per-target wrappers (as below), handed out
 *   for a cuGetProcAddress result that is no exported symbol (traced
 *   through the prototype its name, version and flags give).
 * - A runtime or NCCL hook (lib RT, NCCL) is NOT exported: a process may
 *   hold several runtimes and NCCLs (a renamed libcudart-<hash>.so.12 of a
 *   wheel, two runtime majors, a vendored NCCL), and each caller must reach
 *   its own. It has GMT_TARGETS wrappers gmt_w_<name>_<k>, wrapper k calling
 *   the k-th distinct real function seen for that name (gmt_targets[][k]).
 *   gmt_bind.c points callers' GOT entries at them; our dlsym hands them out
 *   for look-ups on a real handle (gmt_interpose.c).
 *
 * A few bodies are folded into their wrappers (gmt_hooks_mem.h says which
 * and how): the same shape, one frame fewer.
 *
 * The table refers to the hidden functions, whose addresses are the
 * exported symbols', without going through the GOT.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_hooks_mem.h" /* the folded bodies */

_Atomic(void *) gmt_real_slots[GMT_HOOK_COUNT];
_Atomic(void *) gmt_targets[GMT_HOOK_COUNT][GMT_TARGETS];

/* The one shape of every hook's wrapper. errno is the program's on return
 * (GMT_KEEP_ERRNO). The call record carries the
 * wrapper's return address: the immediate caller decides the owner
 * (libnccl, libcublas, libcudnn or not). The body is never a tail call
 * (&call escapes), so the wrapper's frame is always there for the stack
 * skip count (a folded body's events are written in the wrapper's frame
 * itself). get_real yields the real function or NULL (the library's
 * "not found" error is then returned). A call that can change the current
 * context (GMT_FLAG_CTX, a constant: no cost elsewhere) makes the thread
 * unsure of it before and after, also under the re-entry guard
 * (gmt_cur_device_ok). */
#define GMT_WRAPPER(fn, lib, name, ret, params, args, body, flg, get_real)                \
	ret fn GMT_PROTO params                                                          \
	{                                                                                \
		GMT_KEEP_ERRNO;                                                          \
		gmt_call_t call = { GMT_ID_##name, (flg), __builtin_return_address(0) };   \
		__typeof__(name) *real;                                                  \
		gmt_preload_ensure_init();                                               \
		real = (__typeof__(name) *)(get_real);                                   \
		if (GMT_UNLIKELY(real == NULL))                                          \
			return GMT_MISSING_##lib;                                        \
		if ((flg) & GMT_FLAG_CTX) {                                              \
			ret r_;                                                          \
			gmt_ctx_unsure();                                                \
			r_ = gmt_tls.guard ? real args : gmt_do_##body(real, &call GMT_TAIL args); \
			gmt_ctx_unsure();                                                \
			return r_;                                                       \
		}                                                                        \
		if (gmt_tls.guard)                                                       \
			return real args;                                                \
		return gmt_do_##body(real, &call GMT_TAIL args);                         \
	}

/* The driver's function, resolved the first time it is needed. */
GMT_HOT_INLINE void *real_or_resolve(int id)
{
	void *p = gmt_real(id);
	return GMT_LIKELY(p != NULL) ? p : gmt_resolve(id);
}

/* Per library: DRV exports one wrapper, plus GMT_DRV_TARGETS per-target
 * ones for what a cuGetProcAddress returns that is no exported symbol
 * (gmt_substitute traces it through its prototype); RT and NCCL get
 * GMT_TARGETS. */
#define GMT_WRAPPERS_DRV(name, ret, params, args, body, flg)                              \
	GMT_WRAPPER(gmt_w_##name, DRV, name, ret, params, args, body, flg,              \
		    real_or_resolve(GMT_ID_##name))                                      \
	extern __typeof__(name) name                                                     \
		__attribute__((alias("gmt_w_" #name), visibility("default")));           \
	GMT_FOR_DRV_TARGETS(GMT_TARGET_WRAPPER, DRV, name, ret, params, args, body, flg)  \
	static void *const gmt_tw_##name[GMT_DRV_TARGETS] = {                            \
		GMT_FOR_DRV_TARGETS(GMT_TARGET_ADDR, name) };
#define GMT_TARGET_WRAPPER(k, lib, name, ret, params, args, body, flg)                    \
	static GMT_WRAPPER(gmt_w_##name##_##k, lib, name, ret, params, args, body, flg,  \
			   gmt_target(GMT_ID_##name, k))
#define GMT_TARGET_WRAPPERS(lib, name, ret, params, args, body, flg)                      \
	GMT_FOR_TARGETS(GMT_TARGET_WRAPPER, lib, name, ret, params, args, body, flg)      \
	static void *const gmt_tw_##name[GMT_TARGETS] = {                                \
		GMT_FOR_TARGETS(GMT_TARGET_ADDR, name) };
#define GMT_TARGET_ADDR(k, name) (void *)gmt_w_##name##_##k,
#define GMT_WRAPPERS_RT(...)   GMT_TARGET_WRAPPERS(RT, __VA_ARGS__)
#define GMT_WRAPPERS_NCCL(...) GMT_TARGET_WRAPPERS(NCCL, __VA_ARGS__)

#define GMT_HOOK(lib, name, ret, params, args, minver, body, flg, req) \
	GMT_WRAPPERS_##lib(name, ret, params, args, body, flg)
#include "hooks.def"
#undef GMT_HOOK

#define GMT_WRAPPER_OF_DRV(name)  (void *)gmt_w_##name, gmt_tw_##name, GMT_DRV_TARGETS
#define GMT_WRAPPER_OF_RT(name)   NULL, gmt_tw_##name, GMT_TARGETS
#define GMT_WRAPPER_OF_NCCL(name) NULL, gmt_tw_##name, GMT_TARGETS
const gmt_hook_t gmt_hooks[GMT_HOOK_COUNT] = {
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flg, req) \
	[GMT_ID_##name] = { #name, GMT_WRAPPER_OF_##lib(name), #body, (minver), \
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

int gmt_target_index(int id, const void *p)
{
	const gmt_hook_t *hk = &gmt_hooks[id];

	if (p == NULL)
		return -1;
	for (int k = 0; k < hk->ntargets; k++)
		if (hk->targets[k] == p)
			return k;
	return -1;
}

static _Atomic unsigned char targets_full[GMT_HOOK_COUNT];

void *gmt_target_wrapper(int id, void *real)
{
	const gmt_hook_t *hk = &gmt_hooks[id];

	if (real == NULL)
		return NULL;
	if (gmt_target_index(id, real) >= 0 || real == hk->wrapper)
		return real; /* already one of ours */
	for (int k = 0; k < hk->ntargets; k++) {
		void *expected = NULL;
		if (atomic_compare_exchange_strong_explicit(&gmt_targets[id][k], &expected, real,
							    memory_order_acq_rel, memory_order_acquire) ||
		    expected == real)
			return hk->targets[k];
	}
	if (!atomic_exchange(&targets_full[id], 1))
		gmt_pl_log(1, hk->lib == GMT_LIB_DRV
			   ? "more than %d unidentified implementations of %s: the others are untraced"
			   : "more than %d copies of a library with %s in this process: calls of the "
			     "others reach them untraced by name", hk->ntargets, hk->name);
	return NULL;
}
