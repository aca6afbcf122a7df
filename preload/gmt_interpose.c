/*
 * gmt_interpose.c - how calls to the CUDA driver reach our wrappers.
 *
 * A program reaches a driver function by one of three routes, and each must
 * end in our wrapper for the exact implementation the program asked for
 * (the runtime's and NCCL's functions take a fourth, route 4 below):
 *
 * 1. The exported symbol. A program or library linked against libcuda calls
 *    cuMemAlloc_v2 through its PLT; LD_PRELOAD puts our export first in the
 *    global scope, so the dynamic linker binds it to us. Our wrapper finds
 *    the real function lazily with dlsym(RTLD_NEXT, name), i.e. the next
 *    definition after the preload (or, when libcuda was loaded RTLD_LOCAL,
 *    in libcuda's own handle). There is one driver per process, so one real
 *    function per name is right. Only driver names are exported.
 *
 * 2. dlsym on a handle. libcudart, NCCL's static runtime and PyTorch
 *    dlopen("libcuda.so.1") and dlsym() on that handle: symbol interposition
 *    never sees those calls, so we export dlsym (and dlvsym) ourselves. For a
 *    real handle we call glibc's dlsym; if the name is EXACTLY one we hook
 *    (no prefix matching: cublas*, curl_* are not ours) and the result is not
 *    already our wrapper, the result becomes that hook's real function and
 *    the caller gets our wrapper. RTLD_NEXT and RTLD_DEFAULT are different:
 *    glibc resolves them relative to the CALLER (the object its return
 *    address lies in). Calling glibc's dlsym from here would make us the
 *    caller and change what "next" means (with two interposers it recursed
 *    forever in an experiment). So for those two our dlsym does a tail
 *    call (a jmp, checked by tests/cases/preload_tailcall.sh), after no
 *    more than a look at the name (RTLD_NEXT of a context call turns the
 *    per-thread context cache off, gmt_preload.h): glibc sees the original
 *    return address. Nothing
 *    of the driver is lost: RTLD_DEFAULT finds our driver exports anyway,
 *    we are in the global scope (a runtime or NCCL function found that way
 *    is called untraced by name; its driver calls are traced). A real-handle
 *    look-up of a hooked name or of cuGetProcAddress* also tells the owners'
 *    table who asked (gmt_lib_note(): that is how the static runtimes
 *    inside NCCL, cuBLAS and cuDNN make themselves known). A real-handle
 *    look-up of a runtime or NCCL name returns our wrapper of exactly the
 *    function found, i.e. of that handle's library.
 *
 * 3. cuGetProcAddress / cuGetProcAddress_v2 (the runtime gets every entry
 *    point this way after dlsym'ing cuGetProcAddress_v2 itself, which route
 *    2 turned into our wrapper; cudaGetDriverEntryPoint(ByVersion) go the
 *    same way). The driver chooses the implementation from the name, the
 *    requested version and the per-thread-default-stream flag
 *    (cuCtxSynchronize at 13000 is cuCtxSynchronize_v2(CUcontext); with the
 *    flag, cuMemAllocAsync is cuMemAllocAsync_ptsz). We never reimplement
 *    that choice: we call the real look-up with the caller's exact
 *    arguments and then recognise WHAT it returned - by pointer identity with
 *    a real function we already know, else by dladdr() (an exact symbol whose
 *    address is the pointer), else by resolving the hooked implementations
 *    of the requested name in the driver's handle and comparing pointers.
 *    If it is a hooked implementation, the caller gets our wrapper of that
 *    same implementation, so neither the signature nor the stream semantics
 *    change. Anything else passes through untouched - except a pointer for
 *    a hooked name that none of those identifies (a driver may hand out
 *    internal entry points): the name, version and flags then determine
 *    its prototype (by_prototype: hooks.def's versions are cudaTypedefs.h's
 *    ABI versions), and the caller gets a per-target wrapper calling
 *    exactly that pointer; where the prototype cannot be known (a version
 *    newer than our headers) it passes through untraced, said once and
 *    counted in the trace (PROC_UNIDENTIFIED). A look-up of
 *    "cuGetProcAddress" itself returns the real look-up function, which we
 *    recognise like any other and replace by our wrapper.
 *
 * 4. The runtime and NCCL (cudaMalloc, ncclMemAlloc, ...), whose hooks only
 *    name the API and the owner of the driver calls made under them. These
 *    are NOT exported: a process may hold several runtimes and NCCLs (a
 *    wheel's renamed libcudart-<hash>.so.12 loaded RTLD_LOCAL, two runtime
 *    majors, a vendored NCCL), an export can forward to only one of them,
 *    and an export answers presence probes (dlsym(RTLD_DEFAULT, ...), weak
 *    references) "present" where nothing is. Instead each calling module's
 *    GOT entries for those names are bound to per-target wrappers, each of
 *    which calls the very function ld.so had bound that entry to: see
 *    gmt_bind.c (and docs/interception.md).
 *
 * The driver's context calls that are not hooked (cuCtxDetach, the OpenGL
 * and VDPAU interop creators) are exported as pass-throughs that turn the
 * per-thread context cache off; so does any route above that hands out a
 * context call as the driver's own function (gmt_ctx_name).
 *
 * Bootstrapping glibc's dlsym. We export dlsym and dlvsym, so any reference
 * to them from this library binds to our own exports (an unversioned
 * definition satisfies a versioned reference). glibc's dlvsym is therefore
 * found by walking libc's dynamic symbol table (GNU hash + version
 * definitions) from its link map; then glibc's dlsym is
 * dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), falling back to "GLIBC_2.2.5"
 * (older glibc). __libc_dlsym and _dl_sym no longer exist in glibc >= 2.34.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "gmt_preload.h"

void *(*_Atomic gmt_real_dlsym)(void *, const char *);
void *(*_Atomic gmt_real_dlvsym)(void *, const char *, const char *);

/* ---- glibc's dlvsym from libc's own symbol table ------------------------- */

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* Dynamic-section pointers are relocated in place by ld.so on x86-64, but
 * not on every architecture: an address below the load bias is an offset. */
static uintptr_t dyn_ptr(const struct link_map *lm, uintptr_t p)
{
	return p < (uintptr_t)lm->l_addr ? p + lm->l_addr : p;
}

typedef struct elf_view {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;
	uintptr_t base;
} elf_view_t;

static int version_matches(const elf_view_t *v, uint32_t idx, const char *version)
{
	const ElfW(Verdef) *vd = v->verdef;
	unsigned ndx;

	if (v->versym == NULL || vd == NULL)
		return 1;
	ndx = v->versym[idx] & 0x7fff;
	for (;;) {
		if (vd->vd_ndx == ndx) {
			const ElfW(Verdaux) *a = (const void *)((const char *)vd + vd->vd_aux);
			return strcmp(v->strtab + a->vda_name, version) == 0;
		}
		if (vd->vd_next == 0)
			return 0;
		vd = (const void *)((const char *)vd + vd->vd_next);
	}
}

static int sym_matches(const elf_view_t *v, uint32_t i, const char *name, const char *version)
{
	const ElfW(Sym) *s = &v->symtab[i];
	return s->st_shndx != SHN_UNDEF && s->st_value != 0 &&
	       strcmp(v->strtab + s->st_name, name) == 0 && version_matches(v, i, version);
}

static void *elf_lookup(const struct link_map *lm, const char *name, const char *version)
{
	elf_view_t v = { .base = lm->l_addr };

	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		uintptr_t p = dyn_ptr(lm, d->d_un.d_ptr);
		switch (d->d_tag) {
		case DT_SYMTAB: v.symtab = (const void *)p; break;
		case DT_STRTAB: v.strtab = (const void *)p; break;
		case DT_GNU_HASH: v.gnu_hash = (const void *)p; break;
		case DT_HASH: v.sysv_hash = (const void *)p; break;
		case DT_VERSYM: v.versym = (const void *)p; break;
		case DT_VERDEF: v.verdef = (const void *)p; break;
		default: break;
		}
	}
	if (v.symtab == NULL || v.strtab == NULL)
		return NULL;
	if (v.gnu_hash != NULL) {
		const uint32_t *gh = v.gnu_hash;
		uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
		/* after the bloom filter's bloom_size words of ElfW(Addr) */
		const uint32_t *buckets = (const uint32_t *)(const void *)((const char *)(gh + 4) + (size_t)bloom_size * sizeof(ElfW(Addr)));
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = gnu_hash(name);
		uint32_t i = nbuckets ? buckets[h % nbuckets] : 0;

		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t c = chain[i - symoffset];
			if ((c | 1) == (h | 1) && sym_matches(&v, i, name, version))
				return (void *)(v.base + v.symtab[i].st_value);
			if (c & 1)
				return NULL;
		}
	}
	if (v.sysv_hash != NULL) {
		uint32_t nsyms = v.sysv_hash[1];
		for (uint32_t i = 0; i < nsyms; i++)
			if (sym_matches(&v, i, name, version))
				return (void *)(v.base + v.symtab[i].st_value);
	}
	return NULL;
}

static __thread int booting __attribute__((tls_model("initial-exec")));

int gmt_interpose_boot(void)
{
	void *(*vsym)(void *, const char *, const char *);
	void *(*sym)(void *, const char *);
	struct link_map *lm = NULL;
	void *libc;

	if (atomic_load(&gmt_real_dlsym) != NULL)
		return 0;
	if (booting)
		return -EDEADLK;
	booting = 1;
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (libc == NULL || dlinfo(libc, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL) {
		booting = 0;
		return -ENOENT;
	}
	vsym = (__typeof__(vsym))elf_lookup(lm, "dlvsym", "GLIBC_2.34");
	if (vsym == NULL)
		vsym = (__typeof__(vsym))elf_lookup(lm, "dlvsym", "GLIBC_2.2.5");
	sym = NULL;
	if (vsym != NULL) {
		sym = (__typeof__(sym))vsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (sym == NULL)
			sym = (__typeof__(sym))vsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	}
	if (sym == NULL) /* we are not in a scope that reaches libc after us */
		sym = (__typeof__(sym))elf_lookup(lm, "dlsym", "GLIBC_2.34");
	if (sym == NULL)
		sym = (__typeof__(sym))elf_lookup(lm, "dlsym", "GLIBC_2.2.5");
	dlclose(libc);
	booting = 0;
	if (sym == NULL || vsym == NULL)
		return -ENOENT;
	atomic_store(&gmt_real_dlvsym, vsym);
	atomic_store(&gmt_real_dlsym, sym);
	return 0;
}

/* What our dlsym answers if glibc's could not be found (never seen; it
 * keeps the program alive rather than jumping to NULL). */
static void *no_dlsym(void *handle, const char *name)
{
	return NULL;
}

static void *no_dlvsym(void *handle, const char *name, const char *version)
{
	return NULL;
}

static __attribute__((noinline, cold)) void *(*boot_dlsym(void))(void *, const char *)
{
	gmt_interpose_boot();
	return atomic_load(&gmt_real_dlsym) ? atomic_load(&gmt_real_dlsym) : no_dlsym;
}

static __attribute__((noinline, cold)) void *(*boot_dlvsym(void))(void *, const char *, const char *)
{
	gmt_interpose_boot();
	return atomic_load(&gmt_real_dlvsym) ? atomic_load(&gmt_real_dlvsym) : no_dlvsym;
}

/* glibc's dlsym / dlvsym; never NULL. */
static inline void *(*real_dlsym_fn(void))(void *, const char *)
{
	void *(*f)(void *, const char *) = atomic_load_explicit(&gmt_real_dlsym, memory_order_acquire);
	return GMT_LIKELY(f != NULL) ? f : boot_dlsym();
}

static inline void *(*real_dlvsym_fn(void))(void *, const char *, const char *)
{
	void *(*f)(void *, const char *, const char *) =
		atomic_load_explicit(&gmt_real_dlvsym, memory_order_acquire);
	return GMT_LIKELY(f != NULL) ? f : boot_dlvsym();
}

/* ---- our dlsym and dlvsym ------------------------------------------------ */

/* The result of a look-up on a real handle: our wrapper if name is hooked.
 * A library with its own static runtime (NCCL, cuBLAS, cuDNN) starts with
 * dlsym(libcuda, "cuGetProcAddress_v2") from its own text: that is where
 * gmt_owner() learns its range. Only hooked names and the look-up functions
 * are noted (a dladdr for a module not seen yet), not every dlsym. */
static int libc_lookup_name(const char *name)
{
	return name != NULL && (strcmp(name, "dlsym") == 0 || strcmp(name, "dlvsym") == 0);
}

static __attribute__((noinline)) void *wrap_lookup(void *p, const char *name, const void *caller)
{
	int id;

	gmt_bind_check();
	if (p == NULL)
		return NULL;
	id = gmt_hook_find(name);
	/* A context call handed out as itself (not hooked, or not ours to
	 * stand in for), or the C library's own dlsym (a look-up with it is
	 * never ours): calls of what they give change contexts unseen. */
	if ((gmt_ctx_name(name) && (id < 0 || (gmt_hooks[id].lib == GMT_LIB_DRV && !gmt_real_offer(id, p)))) ||
	    libc_lookup_name(name))
		gmt_ctx_cache_off(name);
	if (id >= 0 || (name != NULL && (strcmp(name, "cuGetProcAddress") == 0 ||
					 strcmp(name, "cuGetProcAddress_v2") == 0 ||
					 strcmp(name, "cuGetProcAddress_v2_ptsz") == 0)))
		gmt_lib_note(caller);
	if (id < 0)
		return p;
	/* A runtime or NCCL function: our wrapper of exactly this one (the
	 * handle's library, whichever copy it is). */
	if (gmt_hooks[id].lib != GMT_LIB_DRV) {
		void *w = gmt_target_wrapper(id, p);
		return w != NULL ? w : p;
	}
	if (gmt_real_offer(id, p))
		return gmt_hooks[id].wrapper;
	return p;
}

/* The pass-through must be a jmp whatever the build's optimisation level
 * (OPT=-O0 would make it a call and change what RTLD_NEXT means): gcc by
 * the function's optimisation attribute, clang (which has none) by musttail
 * on the return. */
#if defined(__clang__)
#define GMT_TAILCALL_FN
#define GMT_MUSTTAIL __attribute__((musttail))
#else
#define GMT_TAILCALL_FN __attribute__((optimize("O2", "optimize-sibling-calls", "omit-frame-pointer")))
#define GMT_MUSTTAIL
#endif

/* RTLD_NEXT from a library loaded after us finds the driver's own function,
 * not our wrapper: a context call (or the C library's dlsym) found that way
 * turns the per-thread context cache off (checked by name before the tail
 * call). */
static __attribute__((noinline)) void next_lookup(const char *name)
{
	if (gmt_ctx_name(name) || libc_lookup_name(name))
		gmt_ctx_cache_off(name);
}

GMT_EXPORT GMT_TAILCALL_FN void *dlsym(void *restrict handle, const char *restrict name)
{
	/* A tail call: glibc must see our caller's return address for these
	 * two (see the top of this file). */
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT) {
		if (handle == RTLD_NEXT && (name[0] == 'c' || name[0] == 'd'))
			next_lookup(name);
		GMT_MUSTTAIL return real_dlsym_fn()(handle, name);
	}
	return wrap_lookup(real_dlsym_fn()(handle, name), name, __builtin_return_address(0));
}

GMT_EXPORT GMT_TAILCALL_FN void *dlvsym(void *restrict handle, const char *restrict name, const char *restrict version)
{
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT) {
		if (handle == RTLD_NEXT && (name[0] == 'c' || name[0] == 'd'))
			next_lookup(name);
		GMT_MUSTTAIL return real_dlvsym_fn()(handle, name, version);
	}
	return wrap_lookup(real_dlvsym_fn()(handle, name, version), name, __builtin_return_address(0));
}

/* ---- finding a hook's real function --------------------------------------- */

/* The driver's names (runtime and NCCL hooks never look for their library
 * by name: each wrapper knows its own, gmt_bind.c). */
static const char *const driver_names[] = { "libcuda.so.1", "libcuda.so", NULL };

/* A handle of the already loaded driver (never loads one: NOLOAD). */
static void *driver_lib_handle(void)
{
	for (int i = 0; driver_names[i] != NULL; i++) {
		void *h = dlopen(driver_names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h != NULL)
			return h;
	}
	return NULL;
}

static _Atomic(void *) drv_handle;

void *gmt_driver_handle(void)
{
	void *h = atomic_load_explicit(&drv_handle, memory_order_acquire);
	Dl_info info;

	if (h != NULL)
		return h;
	h = driver_lib_handle();
	/* A driver under another name: the module of a real driver function. */
	for (int id = 0; h == NULL && id < GMT_HOOK_COUNT; id++) {
		void *p = gmt_real(id);
		if (p != NULL && gmt_hooks[id].lib == GMT_LIB_DRV && dladdr(p, &info) && info.dli_fname)
			h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	}
	if (h != NULL) {
		void *expected = NULL;
		/* NOLOAD took a reference; a second racing thread's is harmless. */
		if (!atomic_compare_exchange_strong(&drv_handle, &expected, h))
			h = expected;
	}
	return h;
}

static _Atomic unsigned char resolve_warned[GMT_HOOK_COUNT];

void *gmt_resolve(int id)
{
	const gmt_hook_t *hk = &gmt_hooks[id];
	void *(*sym)(void *, const char *);
	void *p, *h = NULL;

	gmt_preload_ensure_init();
	p = gmt_real(id);
	if (p != NULL || hk->lib != GMT_LIB_DRV)
		return p;
	sym = real_dlsym_fn();
	p = sym(RTLD_NEXT, hk->name);
	if (p == NULL || p == hk->wrapper) {
		h = gmt_driver_handle();
		p = h != NULL ? sym(h, hk->name) : NULL;
	}
	if (p != NULL)
		gmt_real_offer(id, p);
	p = gmt_real(id);
	/* Called while the library is not loaded at all: nothing to say (the
	 * caller gets "not found"). Loaded but without the symbol: an older
	 * driver; worth one warning if every supported version has it. */
	if (p == NULL && h != NULL && !atomic_exchange(&resolve_warned[id], 1))
		gmt_pl_log(hk->required ? 1 : 3, "%s: not in this CUDA driver (needs version %d)",
			   hk->name, hk->min_version);
	return p;
}

/* ---- context calls we do not trace ----------------------------------------- */

/* They can change the calling thread's current context (cuCtxDetach destroys
 * it at the last detach; the deprecated OpenGL and VDPAU interop creators
 * make a new one current), and a call of one turns the per-thread context
 * cache off. Exported so that whatever links against them reaches us (the
 * interop headers need OpenGL/VDPAU headers: the prototypes are written
 * here, VdpDevice is a uint32_t and VdpGetProcAddress a function); then the
 * driver's own function, with the same arguments and result. */
static void *ctx_call_real(const char *name)
{
	void *h = gmt_driver_handle();

	gmt_ctx_cache_off(name);
	return h != NULL ? real_dlsym_fn()(h, name) : NULL;
}

#define GMT_CTX_UNTRACED(name, params, args)                                         \
	GMT_EXPORT CUresult name params                                              \
	{                                                                            \
		GMT_KEEP_ERRNO;                                                      \
		CUresult (*real) params = (CUresult (*) params)ctx_call_real(#name); \
		return real != NULL ? real args : CUDA_ERROR_NOT_FOUND;              \
	}
CUresult cuGLCtxCreate(CUcontext *pCtx, unsigned int Flags, CUdevice device);
CUresult cuGLCtxCreate_v2(CUcontext *pCtx, unsigned int Flags, CUdevice device);
CUresult cuVDPAUCtxCreate(CUcontext *pCtx, unsigned int flags, CUdevice device, uint32_t vdpDevice,
			  void *vdpGetProcAddress);
CUresult cuVDPAUCtxCreate_v2(CUcontext *pCtx, unsigned int flags, CUdevice device, uint32_t vdpDevice,
			     void *vdpGetProcAddress);
GMT_CTX_UNTRACED(cuCtxDetach, (CUcontext ctx), (ctx))
GMT_CTX_UNTRACED(cuGLCtxCreate, (CUcontext *pCtx, unsigned int Flags, CUdevice device), (pCtx, Flags, device))
GMT_CTX_UNTRACED(cuGLCtxCreate_v2, (CUcontext *pCtx, unsigned int Flags, CUdevice device),
		 (pCtx, Flags, device))
GMT_CTX_UNTRACED(cuVDPAUCtxCreate, (CUcontext *pCtx, unsigned int flags, CUdevice device, uint32_t vdpDevice,
				    void *vdpGetProcAddress),
		 (pCtx, flags, device, vdpDevice, vdpGetProcAddress))
GMT_CTX_UNTRACED(cuVDPAUCtxCreate_v2, (CUcontext *pCtx, unsigned int flags, CUdevice device,
				       uint32_t vdpDevice, void *vdpGetProcAddress),
		 (pCtx, flags, device, vdpDevice, vdpGetProcAddress))

/* ---- driver helpers the tracer calls itself -------------------------------- */

gmt_drv_t gmt_drv_fns;
_Atomic int gmt_drv_ready;
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;

const gmt_drv_t *gmt_drv_slow(void)
{
	void *h;
	void *(*sym)(void *, const char *);

	if (GMT_LIKELY(atomic_load_explicit(&gmt_drv_ready, memory_order_acquire)))
		return &gmt_drv_fns;
	h = gmt_driver_handle();
	sym = real_dlsym_fn();
	if (h == NULL)
		return &gmt_drv_fns; /* all NULL: no driver yet */
	pthread_mutex_lock(&drv_lock);
	if (!atomic_load(&gmt_drv_ready)) {
#define GMT_DRV_FN(field, name) gmt_drv_fns.field = (__typeof__(gmt_drv_fns.field))sym(h, #name)
		GMT_DRV_FN(ctx_get_current, cuCtxGetCurrent);
		GMT_DRV_FN(ctx_get_device, cuCtxGetDevice);
		GMT_DRV_FN(ctx_push, cuCtxPushCurrent_v2);
		GMT_DRV_FN(ctx_pop, cuCtxPopCurrent_v2);
		GMT_DRV_FN(mem_get_info, cuMemGetInfo_v2);
		GMT_DRV_FN(pool_get_attribute, cuMemPoolGetAttribute);
		GMT_DRV_FN(device_get_name, cuDeviceGetName);
		GMT_DRV_FN(device_get_uuid, cuDeviceGetUuid_v2);
		GMT_DRV_FN(device_get_pci_bus_id, cuDeviceGetPCIBusId);
		GMT_DRV_FN(device_total_mem, cuDeviceTotalMem_v2);
		GMT_DRV_FN(device_get_attribute, cuDeviceGetAttribute);
		GMT_DRV_FN(driver_get_version, cuDriverGetVersion);
		GMT_DRV_FN(primary_get_state, cuDevicePrimaryCtxGetState);
		GMT_DRV_FN(stream_is_capturing, cuStreamIsCapturing);
		GMT_DRV_FN(graph_mem_attribute, cuDeviceGetGraphMemAttribute);
		GMT_DRV_FN(exchange_capture_mode, cuThreadExchangeStreamCaptureMode);
		GMT_DRV_FN(stream_get_device, cuStreamGetDevice);
		GMT_DRV_FN(stream_get_ctx, cuStreamGetCtx);
		GMT_DRV_FN(array_mem_req, cuArrayGetMemoryRequirements);
		GMT_DRV_FN(mipmap_mem_req, cuMipmappedArrayGetMemoryRequirements);
		GMT_DRV_FN(alloc_prop, cuMemGetAllocationPropertiesFromHandle);
		GMT_DRV_FN(address_range, cuMemGetAddressRange_v2);
		GMT_DRV_FN(ctx_get_limit, cuCtxGetLimit);
#undef GMT_DRV_FN
		atomic_store_explicit(&gmt_drv_ready, 1, memory_order_release);
	}
	pthread_mutex_unlock(&drv_lock);
	return &gmt_drv_fns;
}

/* ---- cuGetProcAddress ------------------------------------------------------- */

/* Is hook name an implementation of the API the program asked for? "cuMemAlloc"
 * -> cuMemAlloc_v2; "cuMemAllocAsync" -> cuMemAllocAsync, _ptsz. */
static int implements(const char *name, const char *requested)
{
	size_t n = strlen(requested);
	const char *rest;

	if (strncmp(name, requested, n) != 0)
		return 0;
	rest = name + n;
	if (rest[0] == '_' && rest[1] == 'v' && rest[2] >= '0' && rest[2] <= '9') {
		rest += 2;
		while (*rest >= '0' && *rest <= '9')
			rest++;
	}
	return *rest == '\0' || strcmp(rest, "_ptsz") == 0 || strcmp(rest, "_ptds") == 0;
}

/* The hook whose prototype a look-up of `requested` at cudaVersion with
 * flags returns, known without the pointer: among the hooks implementing
 * the name, the newest ABI (hooks.def's minver is the version of its
 * PFN_<name>_v<version> typedef in cudaTypedefs.h) not newer than the
 * version asked for, the _ptsz one when the per-thread-default-stream flag
 * asks for it and the name has one. -1 when there is none, or when the
 * version asked for is newer than the headers we were built with: the
 * driver may know an ABI we do not, and a wrong prototype must never be
 * called. */
static int by_prototype(const char *requested, int version, cuuint64_t flags)
{
	int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0, has_ptsz = 0;
	int best = -1;

	if (version > CUDA_VERSION)
		return -1;
	for (int id = 0; id < GMT_HOOK_COUNT; id++)
		if (gmt_hooks[id].lib == GMT_LIB_DRV && (gmt_hooks[id].flags & GMT_FLAG_PTSZ) &&
		    implements(gmt_hooks[id].name, requested))
			has_ptsz = 1;
	want_ptsz &= has_ptsz;
	for (int id = 0; id < GMT_HOOK_COUNT; id++) {
		const gmt_hook_t *hk = &gmt_hooks[id];
		if (hk->lib != GMT_LIB_DRV || !implements(hk->name, requested) ||
		    ((hk->flags & GMT_FLAG_PTSZ) != 0) != want_ptsz || hk->min_version > version)
			continue;
		if (best < 0 || hk->min_version > gmt_hooks[best].min_version)
			best = id;
	}
	return best;
}

/* Does any driver hook implement requested? (Else it is not ours at all.) */
static int hooked_name(const char *requested)
{
	for (int id = 0; id < GMT_HOOK_COUNT; id++)
		if (gmt_hooks[id].lib == GMT_LIB_DRV && implements(gmt_hooks[id].name, requested))
			return 1;
	return 0;
}

static _Atomic int said_prototype, said_untraced;

/* What the look-up returned for a hooked name is no function we know:
 * trace it through its prototype (a per-target wrapper calling exactly
 * fn), or, where its prototype cannot be known, pass it on untraced -
 * said once on stderr and each time in the trace (PROC_UNIDENTIFIED), so
 * that the analyzer can say the trace is incomplete. */
static void *unidentified(void *fn, const char *requested, int version, cuuint64_t flags)
{
	int id = by_prototype(requested, version, flags);
	void *w = id >= 0 ? gmt_target_wrapper(id, fn) : NULL;
	uint32_t as = 0;

	if (w != NULL) {
		as = gmt_tracer_string(gmt_hooks[id].name);
		if (!atomic_exchange(&said_prototype, 1))
			gmt_pl_log(2, "cuGetProcAddress(%s, %d) returned no exported symbol: traced as %s "
				   "by its version", requested, version, gmt_hooks[id].name);
	} else if (!atomic_exchange(&said_untraced, 1)) {
		gmt_pl_log(1, "cuGetProcAddress(%s, %d, flags %llu) returned a function that is no "
			   "exported symbol and whose prototype is not known here: its calls are "
			   "NOT traced (the trace says how many such look-ups there were)",
			   requested, version, (unsigned long long)flags);
	}
	gmt_rec(GMT_EV_PROC_UNIDENTIFIED, -1, gmt_tracer_string(requested), (uint64_t)(unsigned)version,
		flags, as, 0);
	return w != NULL ? w : fn;
}

static void *substitute(void *fn, const char *requested, int version, cuuint64_t flags);

void *gmt_substitute(void *fn, const char *requested, int version, cuuint64_t flags)
{
	void *p = substitute(fn, requested, version, flags);

	/* A context call handed out as the driver's own function (not hooked,
	 * or a pointer we cannot trace): its calls would change contexts
	 * unseen. */
	if (p != NULL && p == fn && gmt_ctx_name(requested))
		gmt_ctx_cache_off(requested);
	return p;
}

static void *substitute(void *fn, const char *requested, int version, cuuint64_t flags)
{
	Dl_info info;
	int id;

	if (fn == NULL)
		return fn;
	for (id = 0; id < GMT_HOOK_COUNT; id++)
		if (gmt_hooks[id].wrapper == fn || gmt_target_index(id, fn) >= 0)
			return fn; /* already ours (the driver used our dlsym) */
	for (id = 0; id < GMT_HOOK_COUNT; id++)
		if (gmt_hooks[id].lib == GMT_LIB_DRV && gmt_real(id) == fn)
			return gmt_hooks[id].wrapper;
	if (dladdr(fn, &info) && info.dli_sname != NULL && info.dli_saddr == fn) {
		id = gmt_hook_find(info.dli_sname);
		if (id >= 0 && gmt_hooks[id].lib == GMT_LIB_DRV && gmt_real_offer(id, fn))
			return gmt_hooks[id].wrapper;
		/* An exported symbol we do not hook (the legacy 32-bit cuMemAlloc
		 * of an old version): identified, and not ours. */
		if (id < 0)
			return fn;
	}
	if (requested == NULL)
		return fn;
	{
		void *(*sym)(void *, const char *) = real_dlsym_fn();
		void *h = gmt_driver_handle();
		for (id = 0; h != NULL && id < GMT_HOOK_COUNT; id++) {
			if (gmt_hooks[id].lib != GMT_LIB_DRV || gmt_real(id) != NULL ||
			    !implements(gmt_hooks[id].name, requested))
				continue;
			gmt_real_offer(id, sym(h, gmt_hooks[id].name));
			if (gmt_real(id) == fn)
				return gmt_hooks[id].wrapper;
		}
	}
	/* A previous look-up's unidentified function, seen again. */
	for (id = 0; id < GMT_HOOK_COUNT; id++) {
		int k;
		for (k = 0; k < gmt_hooks[id].ntargets; k++)
			if (gmt_hooks[id].lib == GMT_LIB_DRV && gmt_target(id, k) == fn)
				return gmt_hooks[id].targets[k];
	}
	return hooked_name(requested) ? unidentified(fn, requested, version, flags) : fn;
}

CUresult gmt_do_cuGetProcAddress_v2(__typeof__(cuGetProcAddress_v2) *real, const gmt_call_t *call,
				    const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);

	gmt_bind_check();
	gmt_lib_note(call->caller);
	if (r == CUDA_SUCCESS && pfn != NULL && *pfn != NULL)
		*pfn = gmt_substitute(*pfn, symbol, cudaVersion, flags);
	return r;
}

CUresult gmt_do_cuGetProcAddress(__typeof__(cuGetProcAddress) *real, const gmt_call_t *call,
				 const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	CUresult r = real(symbol, pfn, cudaVersion, flags);

	gmt_bind_check();
	gmt_lib_note(call->caller);
	if (r == CUDA_SUCCESS && pfn != NULL && *pfn != NULL)
		*pfn = gmt_substitute(*pfn, symbol, cudaVersion, flags);
	return r;
}
