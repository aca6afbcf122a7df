/*
 * gmt_preload.h - PRIVATE to preload/: what the interposer's files share.
 *
 * The hooks (hooks.def) are expanded here into ids, typed accessors of the
 * real functions and the prototypes of the hand-written bodies. A wrapper
 * (generated in gmt_hooks_table.c) does the common part: keep the
 * program's errno (GMT_KEEP_ERRNO), make sure the preload is initialised,
 * find the real function (or return the library's "not found" error), pass
 * straight through when the re-entry guard is set, and otherwise call
 * gmt_do_<body>(real, &call, args...), which calls the real function and
 * records what happened. The hottest bodies are folded into their wrappers
 * instead (gmt_hooks_mem.h).
 */
#ifndef GMT_PRELOAD_H
#define GMT_PRELOAD_H

/* The un-macroed declarations: cuMemAlloc_v2, cuCtxSynchronize_v2, the _ptsz
 * variants and the legacy names, exactly as the driver exports them. */
#define __CUDA_API_VERSION_INTERNAL 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#pragma GCC diagnostic pop

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "gmt_tracer.h"

#define GMT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define GMT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GMT_EXPORT      __attribute__((visibility("default")))
/* The hot path's helpers: inlined even into a wrapper with a folded body,
 * which GCC's size limits would otherwise call them from. */
#define GMT_HOT_INLINE  static inline __attribute__((always_inline))

/* ---- the hook table ------------------------------------------------------ */

enum gmt_hook_lib { GMT_LIB_DRV = 0, GMT_LIB_RT = 1, GMT_LIB_NCCL = 2 };
#define GMT_LIB_OF_DRV  GMT_LIB_DRV
#define GMT_LIB_OF_RT   GMT_LIB_RT
#define GMT_LIB_OF_NCCL GMT_LIB_NCCL
#define GMT_REQ_REQ 1
#define GMT_REQ_OPT 0
/* hooks.def's flags beside GMT_FLAG_PTSZ (gmt_format.h), never in a trace
 * (gmt_aux keeps the low 8 bits): the call can change the calling thread's
 * current context (gmt_cur_device_ok). */
#define GMT_FLAG_CTX 0x100u

/* What a wrapper returns when the real function does not exist (only a
 * driver wrapper can lack one: a runtime or NCCL wrapper is handed out
 * only together with its real function). */
#define GMT_MISSING_DRV  CUDA_ERROR_NOT_FOUND
#define GMT_MISSING_RT   cudaErrorSymbolNotFound
#define GMT_MISSING_NCCL ncclSystemError

enum gmt_hook_id {
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flags, req) GMT_ID_##name,
#include "hooks.def"
#undef GMT_HOOK
	GMT_HOOK_COUNT
};

typedef struct gmt_hook {
	const char *name;       /* exact exported / implementation name       */
	void *wrapper;          /* DRV: our wrapper (the exported symbol's
				 * address); RT, NCCL: NULL                    */
	void *const *targets;   /* the per-target wrappers: wrapper k calls
				 * gmt_targets[id][k]                          */
	int ntargets;           /* RT, NCCL: GMT_TARGETS; DRV: GMT_DRV_TARGETS */
	const char *body;       /* the body's base name                        */
	int min_version;
	uint8_t lib;            /* enum gmt_hook_lib                           */
	uint16_t flags;         /* GMT_FLAG_PTSZ, GMT_FLAG_CTX                 */
	uint8_t required;
} gmt_hook_t;

extern const gmt_hook_t gmt_hooks[GMT_HOOK_COUNT];

/* The real functions, one slot per hook, set once (first writer wins) by
 * gmt_real_offer() and read with acquire. */
extern _Atomic(void *) gmt_real_slots[GMT_HOOK_COUNT];

GMT_HOT_INLINE void *gmt_real(int id)
{
	return atomic_load_explicit(&gmt_real_slots[id], memory_order_acquire);
}

/* Runtime and NCCL hooks: up to GMT_TARGETS distinct real functions per
 * name (one per copy of the library in the process), set once each (first
 * writer wins) by gmt_target_wrapper(); wrapper k of a hook calls
 * gmt_targets[id][k]. Driver hooks: up to GMT_DRV_TARGETS functions the
 * driver's cuGetProcAddress returned that are no exported symbol. */
#define GMT_TARGETS 16
#define GMT_DRV_TARGETS 4
extern _Atomic(void *) gmt_targets[GMT_HOOK_COUNT][GMT_TARGETS];

GMT_HOT_INLINE void *gmt_target(int id, int k)
{
	return atomic_load_explicit(&gmt_targets[id][k], memory_order_acquire);
}

/* Our wrapper of runtime/NCCL hook id that calls real (claiming the next
 * free target for it), or NULL when real is NULL or the hook's targets are
 * all taken by others (said once). A wrapper of ours is returned as is. */
void *gmt_target_wrapper(int id, void *real);
/* k when p is hook id's k-th per-target wrapper, else -1. */
int gmt_target_index(int id, const void *p);

/* X(k, ...) for k = 0 .. GMT_DRV_TARGETS-1. */
#define GMT_FOR_DRV_TARGETS(X, ...) X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__)

/* X(k, ...) for k = 0 .. GMT_TARGETS-1. */
#define GMT_FOR_TARGETS(X, ...)                                                          	X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__)           	X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__)           	X(8, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) X(11, __VA_ARGS__)         	X(12, __VA_ARGS__) X(13, __VA_ARGS__) X(14, __VA_ARGS__) X(15, __VA_ARGS__)

/* Typed accessors of the real functions: real_cuMemAlloc_v2() etc. */
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flags, req) \
	static inline __typeof__(name) *real_##name(void)                 \
	{                                                                  \
		return (__typeof__(name) *)gmt_real(GMT_ID_##name);        \
	}
#include "hooks.def"
#undef GMT_HOOK

/* Offers p as hook id's real function: stored if the slot is empty. Returns
 * 1 when the slot now holds p (so our wrapper may stand in for p), 0 when it
 * holds another function (p must then be passed through untouched). */
int gmt_real_offer(int id, void *p);

/* Finds driver hook id's real function when nobody has offered one yet:
 * dlsym(RTLD_NEXT), then the driver's own handle. NULL when it does not
 * exist (an old driver): the wrapper then returns GMT_MISSING_DRV. */
void *gmt_resolve(int id);

/* Index of the hook whose name is exactly `name`, or -1. */
int gmt_hook_find(const char *name);

/* What the generated wrapper tells its body. */
typedef struct gmt_call {
	int id;                 /* the hook that was called             */
	unsigned flags;         /* GMT_FLAG_PTSZ for a _ptsz variant,
				 * GMT_FLAG_CTX                          */
	void *caller;           /* the wrapper's return address         */
} gmt_call_t;

/* params "(a, b)" -> ", a, b"; "()" -> "" */
#define GMT_TAIL(...) __VA_OPT__(, __VA_ARGS__)
/* params "(a, b)" -> "(a, b)"; "()" -> "(void)" */
#define GMT_PROTO(...) __VA_OPT__((__VA_ARGS__) GMT_EAT)(void)
#define GMT_EAT(...)

#define GMT_HOOK(lib, name, ret, params, args, minver, body, flags, req)            \
	ret gmt_w_##name GMT_PROTO params;                                           \
	ret gmt_do_##body(__typeof__(body) *real, const gmt_call_t *call GMT_TAIL params);
#include "hooks.def"
#undef GMT_HOOK

/* ---- per-thread state (initial-exec TLS: no allocation, no lock) --------- */

typedef struct gmt_tls {
	int guard;              /* >0: inside a hook or the tracer: pass through */
	unsigned api;           /* enum gmt_api of the outermost runtime call    */
	int nccl_depth;         /* inside an NCCL entry point                    */
	unsigned rt_owner;      /* owner of the outermost runtime call (its
				 * caller's library), for the driver call under it */
	uintptr_t mod_lo[2], mod_hi[2]; /* text of the last two callers' modules
					 * found to own nothing (gmt_lib_note) */
	uintptr_t own_pc;       /* gmt_owner's cache: the last caller looked up, */
	unsigned own_n, own;    /* the table's size then, and its owner there   */
	unsigned ctx_gen;       /* gmt_ctx_gen when ctx/ctx_dev were cached      */
	CUcontext ctx;          /* cache: the last current context seen ...      */
	int ctx_dev;            /* ... and its device                            */
	unsigned ctx_sure;      /* gmt_ctx_sure_gen when sure_dev was asked of the
				 * driver, 0: not sure (gmt_cur_device_ok)      */
	int sure_dev;           /* the current context's device then (-1: none)  */
	unsigned ctx_changes;   /* context calls of this thread (gmt_ctx_unsure) */
	int hooked;             /* the thread entered a hook (made a CUDA call)  */
	unsigned fails;         /* ALLOC_FAIL records this thread wrote          */
	CUmemoryPool served;    /* gmt_pool_served's cache: a pool this thread  */
	unsigned served_gen;    /* marked served, and gmt_pool_forget's count then */
	int *errno_at;          /* the thread's errno (gmt_errno_save), or NULL  */
} gmt_tls_t;

extern __thread gmt_tls_t gmt_tls __attribute__((tls_model("initial-exec")));

/* errno as the program left it, put back when the enclosing scope ends,
 * on every return path: the first statement of every wrapper and of every
 * other entry point of the preload (the public API, NVTX's callbacks).
 * Inside, libunwind's memory probe (EAGAIN), the driver's helper calls and
 * the tracer's system calls may change errno; the program never sees it.
 * The real function's own errno, which CUDA and NCCL do not define, is
 * not passed on either: errno is exactly what it was before the call. Not
 * in dlsym/dlvsym, whose tail call must stay one (gmt_interpose.c). The
 * thread's errno lives at one address for the thread's life: found once
 * (gmt_tls.errno_at), not by a call of __errno_location per wrapper. */
typedef struct gmt_saved_errno {
	int *where, value;
} gmt_saved_errno_t;
GMT_HOT_INLINE gmt_saved_errno_t gmt_errno_save(void)
{
	int *p = gmt_tls.errno_at;
	if (GMT_UNLIKELY(p == NULL))
		gmt_tls.errno_at = p = &errno;
	return (gmt_saved_errno_t){ p, *p };
}
GMT_HOT_INLINE void gmt_errno_restore(const gmt_saved_errno_t *saved)
{
	*saved->where = saved->value;
}
#define GMT_KEEP_ERRNO \
	const gmt_saved_errno_t gmt_saved_errno_ __attribute__((cleanup(gmt_errno_restore), unused)) = \
		gmt_errno_save()

#define GMT_GUARD_ENTER() (gmt_tls.hooked = 1, gmt_tls.guard++)
#define GMT_GUARD_LEAVE() (gmt_tls.guard--)

/* ---- initialisation and logging (gmt_preload_state.c) -------------------- */

/* Makes sure the preload is initialised (cheap once done; safe from any
 * thread and from another library's constructor before ours ran). */
void gmt_preload_init_slow(void);
extern _Atomic int gmt_preload_ready;
GMT_HOT_INLINE void gmt_preload_ensure_init(void)
{
	if (GMT_UNLIKELY(!atomic_load_explicit(&gmt_preload_ready, memory_order_acquire)))
		gmt_preload_init_slow();
}

/* Log level (0 quiet, 1 warnings, 2 info, 3 debug), read once. */
extern int gmt_pl_log_level;
void gmt_pl_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- symbol resolution (gmt_interpose.c) ---------------------------------- */

/* glibc's dlsym/dlvsym, found without going through our own exports. */
extern void *(*_Atomic gmt_real_dlsym)(void *, const char *);
extern void *(*_Atomic gmt_real_dlvsym)(void *, const char *, const char *);
int gmt_interpose_boot(void);

/* Binds the runtime and NCCL calls of modules loaded since the last time
 * (gmt_bind.c): cheap when nothing was loaded (one dl_iterate_phdr step). */
void gmt_bind_check(void);
/* The first scan, at initialisation. */
void gmt_bind_init(void);
/* Rewrites the GOT entries (JUMP_SLOT, GLOB_DAT) for NAME of the one module
 * HANDLE names (a dlopen handle; not its dependencies) to FN; returns how
 * many. For libunwind's pipe2 (gmt_libc.c): nobody else's call changes. */
int gmt_bind_symbol(void *handle, const char *name, void *fn);
/* Registers libunwind's pipe2 binding with the tracer (gmt_libc.c). */
void gmt_libc_init(void);

/* A handle of the loaded driver (libcuda), or NULL. */
void *gmt_driver_handle(void);

/* Replaces a function pointer the driver handed out for a look-up of
 * requested (at version, with flags) by our wrapper for the same
 * implementation, when it is one we hook; a pointer that is no exported
 * symbol is traced through the prototype the look-up determines, or said
 * (PROC_UNIDENTIFIED) and passed on; any other name's pointer is fn. */
void *gmt_substitute(void *fn, const char *requested, int version, cuuint64_t flags);

/* ---- driver functions the tracer calls itself (never hooked) ------------- */

typedef struct gmt_drv {
	__typeof__(cuCtxGetCurrent) *ctx_get_current;
	__typeof__(cuCtxGetDevice) *ctx_get_device;
	__typeof__(cuCtxPushCurrent_v2) *ctx_push;
	__typeof__(cuCtxPopCurrent_v2) *ctx_pop;
	__typeof__(cuMemGetInfo_v2) *mem_get_info;
	__typeof__(cuMemPoolGetAttribute) *pool_get_attribute;
	__typeof__(cuDeviceGetName) *device_get_name;
	__typeof__(cuDeviceGetUuid_v2) *device_get_uuid;
	__typeof__(cuDeviceGetPCIBusId) *device_get_pci_bus_id;
	__typeof__(cuDeviceTotalMem_v2) *device_total_mem;
	__typeof__(cuDeviceGetAttribute) *device_get_attribute;
	__typeof__(cuDriverGetVersion) *driver_get_version;
	__typeof__(cuDevicePrimaryCtxGetState) *primary_get_state;
	__typeof__(cuStreamIsCapturing) *stream_is_capturing;
	__typeof__(cuDeviceGetGraphMemAttribute) *graph_mem_attribute;
	__typeof__(cuThreadExchangeStreamCaptureMode) *exchange_capture_mode;
	__typeof__(cuStreamGetDevice) *stream_get_device;   /* 12.8+ */
	__typeof__(cuStreamGetCtx) *stream_get_ctx;
	__typeof__(cuArrayGetMemoryRequirements) *array_mem_req;            /* 11.6+ */
	__typeof__(cuMipmappedArrayGetMemoryRequirements) *mipmap_mem_req;  /* 11.6+ */
	__typeof__(cuMemGetAllocationPropertiesFromHandle) *alloc_prop;
	__typeof__(cuMemGetAddressRange_v2) *address_range;
	__typeof__(cuCtxGetLimit) *ctx_get_limit;
} gmt_drv_t;

/* The driver's helper functions; members NULL until the driver is loaded
 * (resolved once, at the first hook that needs them: gmt_drv_slow). Inline:
 * one load on every later call. */
extern gmt_drv_t gmt_drv_fns;
extern _Atomic int gmt_drv_ready;
const gmt_drv_t *gmt_drv_slow(void);
GMT_HOT_INLINE const gmt_drv_t *gmt_drv(void)
{
	if (GMT_LIKELY(atomic_load_explicit(&gmt_drv_ready, memory_order_acquire)))
		return &gmt_drv_fns;
	return gmt_drv_slow();
}

/* ---- recording helpers (gmt_preload_state.c) ----------------------------- */

#define GMT_MAX_DEVICES 64

/* Device of the calling thread's current context, -1 if none: asks the
 * driver (cuCtxGetCurrent); CTX_CURRENT is written when the context is not
 * the one this thread last saw (or a context went since). A device it
 * returns (and gmt_cur_device_ok, gmt_cur_device_asked: the same answers,
 * kept) has its device record written: CTX_CURRENT's gmt_rec describes
 * it before the answer is kept, and a device stays described. */
int gmt_cur_device(void);

/*
 * The same answer without asking the driver, for a body right after its
 * real call succeeded (the hot path): the answer gmt_cur_device() last
 * gave on this thread, while nothing can have changed it since.
 *
 * The thread's current context changes only by calls the thread makes (the
 * context stack is per thread; a context destroyed elsewhere stays current
 * here, and every destruction we see bumps gmt_ctx_sure_gen). Every route
 * to a driver function that changes it passes through us:
 * - the hooked context calls (cuCtxSetCurrent, Push/PopCurrent, Create*,
 *   Destroy*, Attach/Detach, cuDevicePrimaryCtxRetain/Release/Reset): their
 *   wrappers (GMT_FLAG_CTX) make the thread unsure before and after the
 *   real call, under the re-entry guard too, by whatever route they were
 *   reached (exported symbol, dlsym on a handle, cuGetProcAddress, our
 *   per-target wrappers); runtime and NCCL entry points make it unsure on
 *   entry and exit, and nothing inside them trusts the cache;
 * - routes we cannot follow turn the cache off for the process
 *   (gmt_ctx_cache_off; every answer asks the driver again, as without the
 *   cache): cuGetExportTable called at all (the driver's private tables:
 *   every CUDA runtime, the dynamic libcudart and the static copies inside
 *   cuBLAS, cuDNN, NCCL, asks for them, and what they hold is not
 *   documented), a context-changing name looked up with dlsym(RTLD_NEXT)
 *   (the real function, not our wrapper), a cuGetProcAddress result we
 *   cannot trace, and the interop creators cuGLCtxCreate/cuVDPAUCtxCreate
 *   (not hooked: exported as pass-throughs that turn it off, and looked up
 *   by name);
 * - a fork child starts unsure; the driver's teardown at exit makes calls
 *   fail, and a failed call never uses the cache (GMT_CUR_DEVICE_AFTER).
 */
extern _Atomic unsigned gmt_ctx_sure_gen;
/* Set for good when the cache goes off (gmt_ctx_cache_off). */
extern _Atomic int gmt_ctx_cache_is_off;
/* Bumped when a context goes (gmt_ctx_forget); gmt_tls.ctx_gen is its
 * value when ctx and ctx_dev were kept. */
extern _Atomic unsigned gmt_ctx_gen;

/*
 * With the cache off, the driver is asked at every allocation, as without
 * the cache: no cheaper check is correct there (docs/interception.md, "With
 * the cache off"). What can be cheap is our side of the question: inline,
 * the driver's answer compared with the context this thread last saw
 * (gmt_tls.ctx, of generation gmt_tls.ctx_gen: then its device is
 * gmt_tls.ctx_dev, recorded and described when it was first seen);
 * anything else (another context: CTX_CURRENT to write, none, an error) is
 * gmt_cur_device()'s, which asks once more and records.
 */
GMT_HOT_INLINE int gmt_cur_device_asked(void)
{
	CUcontext ctx = NULL;

	if (GMT_LIKELY(atomic_load_explicit(&gmt_drv_ready, memory_order_acquire)) &&
	    gmt_drv_fns.ctx_get_current != NULL && gmt_drv_fns.ctx_get_current(&ctx) == CUDA_SUCCESS &&
	    GMT_LIKELY(ctx != NULL && ctx == gmt_tls.ctx &&
		       gmt_tls.ctx_gen == atomic_load_explicit(&gmt_ctx_gen, memory_order_relaxed)))
		return gmt_tls.ctx_dev;
	return gmt_cur_device();
}

GMT_HOT_INLINE int gmt_cur_device_ok(void)
{
	if (GMT_LIKELY(gmt_tls.ctx_sure == atomic_load_explicit(&gmt_ctx_sure_gen, memory_order_relaxed)))
		return gmt_tls.sure_dev;
	if (atomic_load_explicit(&gmt_ctx_cache_is_off, memory_order_relaxed))
		return gmt_cur_device_asked();
	return gmt_cur_device();
}
/* The device for a body after its real call returned r. */
#define GMT_CUR_DEVICE_AFTER(r) ((r) == CUDA_SUCCESS ? gmt_cur_device_ok() : gmt_cur_device())
/* This thread's current context may change (or have changed). */
GMT_HOT_INLINE void gmt_ctx_unsure(void)
{
	gmt_tls.ctx_sure = 0;
	gmt_tls.ctx_changes++;
	atomic_signal_fence(memory_order_seq_cst);
}
/* A route the cache cannot follow is in use: off for the process, for good
 * (why: said at log level 3). */
void gmt_ctx_cache_off(const char *why);
/* name (a dlsym or cuGetProcAddress look-up) is a driver function that can
 * change a thread's current context, or cuGetExportTable. */
int gmt_ctx_name(const char *name);
/* Device of ctx (-1 if unknown); NULL means the current context. */
int gmt_ctx_device(CUcontext ctx);
/* Forget every cached context -> device (a context was destroyed). */
void gmt_ctx_forget(void);

/* The known owning libraries' text (gmt_lib_note): append-only, readers
 * load the count with acquire (gmt_preload_state.c). */
#define GMT_OWNER_LIBS 16
typedef struct gmt_lib_range {
	_Atomic uintptr_t lo, hi;
	_Atomic unsigned owner;
} gmt_lib_range_t;
extern gmt_lib_range_t gmt_libs[GMT_OWNER_LIBS];
extern _Atomic unsigned gmt_n_libs;
/* The scan of the n entries for a, remembered in gmt_tls (own_*). */
unsigned gmt_lib_lookup_slow(uintptr_t a, unsigned n);

/* The owner of a driver-level call (enum gmt_owner): NCCL inside an NCCL
 * entry point; else the library whose text call->caller lies in, among
 * those gmt_lib_note() learnt; else the owner of the runtime call this one
 * is made under (gmt_tls.rt_owner); else the application. Per thread, the
 * last caller's answer is kept with the table's size it was found at (the
 * table only grows, so it stays true): a load and two compares. */
GMT_HOT_INLINE unsigned gmt_owner(const gmt_call_t *call)
{
	uintptr_t a = (uintptr_t)call->caller;
	unsigned n, o;

	if (GMT_UNLIKELY(gmt_tls.nccl_depth > 0))
		return GMT_OWNER_NCCL;
	n = atomic_load_explicit(&gmt_n_libs, memory_order_acquire);
	if (GMT_LIKELY(n == 0))
		return gmt_tls.rt_owner;
	o = GMT_LIKELY(a == gmt_tls.own_pc && n == gmt_tls.own_n) ? gmt_tls.own
								   : gmt_lib_lookup_slow(a, n);
	return o != GMT_OWNER_APP ? o : gmt_tls.rt_owner;
}
/* Tells the tracer that code at addr called us (dlsym of cuGetProcAddress,
 * cuGetProcAddress, an NCCL or runtime entry point). If addr lies in a
 * library that owns its allocations (basename libnccl*, libcublas* -
 * libcublasLt too -, libcudnn*), that library's text range is remembered
 * for gmt_owner() (at most GMT_OWNER_LIBS libraries). Returns its owner, or
 * GMT_OWNER_APP. Cheap when addr is in a library already known or in the
 * last two modules this thread found to own nothing; one dladdr otherwise. */
unsigned gmt_lib_note(const void *addr);

/* The runtime or NCCL library whose function fn is (lib: GMT_LIB_RT or
 * GMT_LIB_NCCL) is recorded, with its version, as a META record the first
 * time one of its functions is about to be called (gmt_versions.c). A scan
 * of the few functions seen so far; one dladdr for a new one. */
void gmt_versions_note(const void *fn, int lib);

/* aux of an allocation-like event: kind | api | owner | flags. */
GMT_HOT_INLINE uint64_t gmt_aux(unsigned kind, const gmt_call_t *call)
{
	return GMT_AUX(kind, gmt_tls.api, gmt_owner(call)) | (uint64_t)(call->flags & 0xff) << 24;
}


/* A failed allocation: ALLOC_FAIL, then a MEMINFO and pool samples of the
 * device, all on disk before it returns (post-mortems need them). frames:
 * the preload's frames above the call (GMT_BODY_SKIP_FRAMES from a body,
 * GMT_FOLDED_SKIP_FRAMES from a folded one): the stack starts at the
 * program's call. */
void gmt_rec_alloc_fail(int device, uint64_t size, uint64_t stream,
			uint64_t aux, int result, int frames);

/* The device record (if not written yet) and a MEMINFO and pool sample of
 * ctx (NULL: current context), for context creation. */
void gmt_device_seen(int device, CUcontext ctx);

/* The device record of device (if not written yet), nothing else: for events
 * that do not go through gmt_rec() (the framework's side stream). Inline:
 * one load and a bit test once the device is described (gmt_described). */
extern _Atomic uint64_t gmt_described[GMT_MAX_DEVICES / 64];
void gmt_describe_slow(int device);
GMT_HOT_INLINE void gmt_device_describe(int device)
{
	if (device >= 0 && device < GMT_MAX_DEVICES &&
	    !(atomic_load_explicit(&gmt_described[device / 64], memory_order_relaxed) &
	      (1ull << (device % 64))))
		gmt_describe_slow(device);
}

/* Emits one event from a body (skip: the body's and the wrapper's frames);
 * the first event naming a device is preceded by the device's record. */
void gmt_rec(unsigned type, int device, uint64_t addr, uint64_t size,
	     uint64_t stream, uint64_t aux, int want_stack);

/* The preload's frames between the code that writes an event and the
 * program, the writer's own included: a body and its generated wrapper, or
 * the wrapper alone when the body is folded into it (gmt_hooks_mem.h). */
#define GMT_BODY_SKIP_FRAMES 2
#define GMT_FOLDED_SKIP_FRAMES 1

/* gmt_rec without its frame, for the hot bodies: ONLY in a body itself (or
 * what is always inlined into one: skip GMT_BODY_SKIP_FRAMES) or in a
 * folded body (GMT_FOLDED_SKIP_FRAMES), where those are exactly the frames
 * above gmt_emit: the same stack as gmt_rec gives from a body.
 * gmt_rec_described: the same for a device whose record is known to be
 * written (-1, or gmt_cur_device's answer). */
GMT_HOT_INLINE void
gmt_rec_described(unsigned type, int device, uint64_t addr, uint64_t size, uint64_t stream,
		  uint64_t aux, int want_stack, int skip)
{
	gmt_event_t ev = {
		.ts = 0, .addr = addr, .size = size, .stream = stream, .aux = aux,
		.stack = 0, .type = (uint16_t)type, .device = (int16_t)device,
	};
	gmt_emit(&ev, want_stack, skip);
}
GMT_HOT_INLINE void
gmt_rec_skip(unsigned type, int device, uint64_t addr, uint64_t size, uint64_t stream,
	     uint64_t aux, int want_stack, int skip)
{
	gmt_device_describe(device);
	gmt_rec_described(type, device, addr, size, stream, aux, want_stack, skip);
}
#define gmt_rec_body(type, device, addr, size, stream, aux, want_stack) \
	gmt_rec_skip(type, device, addr, size, stream, aux, want_stack, GMT_BODY_SKIP_FRAMES)

/* Samples right after a context of device went (what it took with it:
 * the pools are trimmed): MEMINFO when a context is current, and the
 * pools. Written just before the CTX_DESTROY record, so that the state at
 * the destruction's instant is the state after it. */
void gmt_sample_after_destroy(int device);
/* MEMINFO (and pools) of the current context's device right now: after
 * the driver took memory for itself (a module loaded, a limit set). */
void gmt_sample_now(int device);

/* Samples at a synchronisation point: MEMINFO and pools of the device, at
 * most every 10 ms per device; in between, the reserve of the device's pools
 * that keep one (gmt_pools_after_sync). */
void gmt_sample_sync(int device, CUcontext ctx);

/* Samples at a phase boundary, before its RANGE event: MEMINFO and pools of
 * the calling thread's current device (nothing when it has no context, or
 * never made a CUDA call: a driver thread running a host function), so
 * that a phase's start and end values of device used are read at the
 * boundary itself. always (our API, our NVTX domain): every boundary;
 * otherwise as GPUMEMTRACE_BOUNDARY_SAMPLE_US says (docs/configuration.md:
 * by default when the samples would take at most about 1% of the time). */
void gmt_sample_boundary(int always);

/* Pools: remember the device of a pool (-1: none) and where its memory is
 * (GMT_POOL_HOST: host memory, GMT_POOL_MANAGED: managed memory; neither
 * counts as device memory); mark a pool as serving stream-ordered
 * allocations (no lock when this thread marked the same pool last and no
 * pool was forgotten since); the device's current pool served one (pool
 * unknown). */
#define GMT_POOL_HOST     0x1
#define GMT_POOL_MANAGED  0x2
#define GMT_POOL_IMPORTED 0x4   /* (POOL_CREATE's aux only) another process's */
void gmt_pool_set(CUmemoryPool pool, int device, unsigned flags);
void gmt_pool_set_device(CUmemoryPool pool, int device);
/* The pool's device (-1 when unknown or none); *flags its GMT_POOL_*
 * flags; *known whether we saw the pool made or looked up. */
int gmt_pool_info(CUmemoryPool pool, unsigned *flags, int *known);
int gmt_pool_device(CUmemoryPool pool);
void gmt_pool_served(CUmemoryPool pool, int device);
void gmt_pool_forget(CUmemoryPool pool);
void gmt_pool_current_served(int device);
/* GMT_POOL_* of a (location, allocation type); *device the location's
 * device (-1 when not a device). */
unsigned gmt_pool_flags_of(const CUmemLocation *loc, CUmemAllocationType type, int *device);
/* The device's current pool (cached; cuDeviceSetMemPool and
 * cuDeviceGetMemPool keep the cache), NULL if unknown. */
CUmemoryPool gmt_pool_current(int device);
void gmt_pool_current_set(int device, CUmemoryPool pool);
/* After a stream-ordered allocation from pool on device (the pool may have
 * grown) or a cuMemPoolTrimTo of it (it may have shrunk): reads its
 * reserved bytes (one driver call) and, when they changed since they were
 * last read, writes POOL_RESERVED and POOL_USED samples. */
void gmt_pool_after_alloc(CUmemoryPool pool, int device);
/* After a synchronisation of device that took no full sample (the period of
 * gmt_sample_sync): the driver may have trimmed the device's pools to their
 * release thresholds. Reads the reserved bytes of each pool of the device
 * that served stream-ordered allocations and reserved some when last read
 * (one driver call each), and samples those that changed, as
 * gmt_pool_after_alloc. */
void gmt_pools_after_sync(int device);
/* The device a stream works on: the current context's for the legacy and
 * per-thread default streams, else the stream's own (cuStreamGetDevice,
 * or its context's), -1 if unknown. */
int gmt_stream_device(CUstream stream);
/* The legacy or per-thread default stream (NULL is the legacy one unless
 * the call is a _ptsz variant): its device is the current context's. */
GMT_HOT_INLINE int gmt_stream_is_default(CUstream stream)
{
	return stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}
/* A created stream's context (cuStreamGetCtx); NULL for the legacy and
 * per-thread default streams (the current context's) or if unknown. */
CUcontext gmt_stream_ctx(CUstream stream);
/* GMT_FLAG_CAPTURED << 24 when stream is being captured (a graph memory
 * node), else 0; the device's graph memory pool is then sampled with the
 * other samples (GRAPH_MEM). One driver call: only for stream-ordered
 * allocations on streams that can be captured. */
uint64_t gmt_capture_flag(CUstream stream, int device);
/* The device had a graph memory node (its graph pool is sampled from now). */
void gmt_graph_seen(int device);

/* VMM handles -> device and reference count (1 at creation, +1 per
 * cuMemRetainAllocationHandle); mapped ranges -> device. */
void gmt_vmm_handle_created(uint64_t handle, int device);
void gmt_vmm_handle_retained(uint64_t handle);
/* Takes one reference away before cuMemRelease runs (the entry goes with the
 * last); returns 1 when it was the last (or unknown). *device is the
 * handle's device (-1 if unknown). gmt_vmm_handle_unrelease() gives the
 * reference back when the real release failed. */
int gmt_vmm_handle_release(uint64_t handle, int *device);
void gmt_vmm_handle_unrelease(uint64_t handle, int device);
int gmt_vmm_handle_device(uint64_t handle);
void gmt_vmm_va_set_device(uint64_t va, int device);
int gmt_vmm_va_device(uint64_t va, int remove);

#endif /* GMT_PRELOAD_H */
