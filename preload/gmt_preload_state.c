/*
 * gmt_preload_state.c - initialisation, per-thread state and the recording
 * helpers the hook bodies share: device attribution (current context ->
 * device, cached per thread), owners (NCCL, cuBLAS, cuDNN), device records,
 * and the cuMemGetInfo / pool samples.
 *
 * Samples call the driver through the real pointers (gmt_drv(), real_*()),
 * never through our wrappers, so they are never recorded themselves.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gmt_preload.h"

__thread gmt_tls_t gmt_tls __attribute__((tls_model("initial-exec")));
_Atomic int gmt_preload_ready;
int gmt_pl_log_level = 1;

/* ---- initialisation ----------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void sync_period_from_env(void);

static void ctx_fork_child(void);

static void init_run(void)
{
	gmt_config_t cfg;

	gmt_config_from_env(&cfg);
	gmt_pl_log_level = cfg.log_level;
	sync_period_from_env();
	pthread_atfork(NULL, NULL, ctx_fork_child);
	gmt_libc_init();
	if (gmt_interpose_boot() != 0)
		gmt_pl_log(1, "glibc's dlsym was not found: dlopen'ed CUDA is not traced");
	atomic_store_explicit(&gmt_preload_ready, 1, memory_order_release);
	/* The runtime and NCCL calls of every module loaded so far. */
	gmt_bind_init();
}

void gmt_preload_init_slow(void)
{
	pthread_once(&init_once, init_run);
}

/* Also reached from the first hook when another library's constructor calls
 * CUDA before this one ran: pthread_once makes the order irrelevant. */
__attribute__((constructor)) static void gmt_preload_ctor(void)
{
	gmt_preload_init_slow();
}

void gmt_pl_log(int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (level > gmt_pl_log_level)
		return;
	n = snprintf(buf, sizeof buf, "gpumemtrace: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

/* ---- devices ------------------------------------------------------------- */

/* Bumped when a context goes away: per-thread caches compare generations, so
 * a new context at a recycled address is looked up again. */
_Atomic unsigned gmt_ctx_gen = 1;
_Atomic uint64_t gmt_described[GMT_MAX_DEVICES / 64];

/* What a thread's ctx_sure must equal for gmt_cur_device_ok to trust it:
 * odd (a thread's 0 never matches), bumped by 2 when a context goes, when
 * the cache is turned off and in a fork child. */
_Atomic unsigned gmt_ctx_sure_gen = 1;
_Atomic int gmt_ctx_cache_is_off;

void gmt_ctx_forget(void)
{
	atomic_fetch_add_explicit(&gmt_ctx_gen, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&gmt_ctx_sure_gen, 2, memory_order_relaxed);
}

void gmt_ctx_cache_off(const char *why)
{
	if (!atomic_exchange(&gmt_ctx_cache_is_off, 1))
		gmt_pl_log(3, "%s: the current context is asked of the driver at every call from now on", why);
	atomic_fetch_add_explicit(&gmt_ctx_sure_gen, 2, memory_order_relaxed);
}

/* The child's only thread has the parent's answer in its cache: whether
 * the driver still says the same there is the driver's business. */
static void ctx_fork_child(void)
{
	atomic_fetch_add_explicit(&gmt_ctx_sure_gen, 2, memory_order_relaxed);
}

int gmt_ctx_name(const char *n)
{
	if (n == NULL || n[0] != 'c' || n[1] != 'u')
		return 0;
	n += 2;
	if (strncmp(n, "Ctx", 3) == 0) {
		n += 3;
		return strncmp(n, "SetCurrent", 10) == 0 || strncmp(n, "PushCurrent", 11) == 0 ||
		       strncmp(n, "PopCurrent", 10) == 0 || strncmp(n, "Create", 6) == 0 ||
		       strncmp(n, "Destroy", 7) == 0 || strncmp(n, "Attach", 6) == 0 ||
		       strncmp(n, "Detach", 6) == 0;
	}
	return strncmp(n, "DevicePrimaryCtxRe", 18) == 0 || /* Retain, Release, Reset */
	       strncmp(n, "GLCtxCreate", 11) == 0 ||
	       strncmp(n, "VDPAUCtxCreate", 14) == 0 || strcmp(n, "GetExportTable") == 0;
}

/* NVIDIA's stub libcuda (the toolkit's lib64/stubs/libcuda.so, for linking)
 * answers every call with CUDA_ERROR_STUB_LIBRARY. Found lazily, by its
 * cuDriverGetVersion: 0 not known yet (no driver loaded), 1 a driver, 2 the
 * stub, 3 the stub, said (stderr and DRIVER_STUB). A stub gets no device
 * record: nothing it answers describes a device. */
static _Atomic int stub_state;

static int driver_stub(void)
{
	const gmt_drv_t *d;
	int st = atomic_load_explicit(&stub_state, memory_order_relaxed), v = 0;

	if (GMT_LIKELY(st != 0))
		return st >= 2;
	d = gmt_drv();
	if (d->driver_get_version == NULL)
		return 0;
	st = d->driver_get_version(&v) == CUDA_ERROR_STUB_LIBRARY ? 2 : 1;
	int expected = 0;
	atomic_compare_exchange_strong(&stub_state, &expected, st);
	return atomic_load(&stub_state) >= 2;
}

/* Says once that the driver is the stub, on stderr and in the trace. */
static void stub_say(void)
{
	int expected = 2;
	Dl_info info;
	const char *file = "libcuda.so.1";

	if (!driver_stub() || !atomic_compare_exchange_strong(&stub_state, &expected, 3))
		return;
	if (dladdr((void *)gmt_drv()->driver_get_version, &info) && info.dli_fname)
		file = info.dli_fname;
	gmt_pl_log(1, "%s is NVIDIA's stub libcuda (CUDA_ERROR_STUB_LIBRARY), not a CUDA driver: "
		   "no GPU is usable in this process (is the driver installed, and its libcuda.so.1 "
		   "on the library path before the toolkit's stubs directory?)", file);
	gmt_rec(GMT_EV_DRIVER_STUB, -1, gmt_tracer_string(file), 0, 0, 0, 0);
}

/* Writes the device record the first time an event names the device, so
 * the record precedes every event that refers to it (also for a device that
 * only a worker thread's cuMemCreate used, with no context we saw). */
void gmt_describe_slow(int dev)
{
	const gmt_drv_t *d = gmt_drv();
	gmt_device_info_t info;
	uint64_t bit;
	size_t total = 0;
	CUuuid uuid;
	int v;

	if (dev < 0 || dev >= GMT_MAX_DEVICES)
		return;
	bit = 1ull << (dev % 64);
	if (atomic_load_explicit(&gmt_described[dev / 64], memory_order_relaxed) & bit)
		return;
	if (atomic_fetch_or(&gmt_described[dev / 64], bit) & bit)
		return;
	if (driver_stub()) {
		stub_say();
		return;
	}
	memset(&info, 0, sizeof info);
	info.ordinal = dev;
	if (d->device_get_name == NULL ||
	    d->device_get_name(info.name, (int)sizeof info.name, (CUdevice)dev) != CUDA_SUCCESS)
		info.name[0] = '\0';
	if (d->device_get_uuid != NULL && d->device_get_uuid(&uuid, (CUdevice)dev) == CUDA_SUCCESS)
		memcpy(info.uuid, uuid.bytes, sizeof info.uuid);
	if (d->device_get_pci_bus_id == NULL ||
	    d->device_get_pci_bus_id(info.pci_bus_id, (int)sizeof info.pci_bus_id, (CUdevice)dev) != CUDA_SUCCESS)
		info.pci_bus_id[0] = '\0';
	if (d->device_total_mem != NULL && d->device_total_mem(&total, (CUdevice)dev) == CUDA_SUCCESS)
		info.total_bytes = total;
	if (d->device_get_attribute != NULL) {
		if (d->device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, (CUdevice)dev) == CUDA_SUCCESS)
			info.cc_major = v;
		if (d->device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, (CUdevice)dev) == CUDA_SUCCESS)
			info.cc_minor = v;
	}
	if (d->driver_get_version != NULL && d->driver_get_version(&v) == CUDA_SUCCESS)
		info.driver_version = v;
	gmt_tracer_device(&info);
}

/* The driver's answer (CTX_CURRENT written when the context is not the one
 * this thread last saw, or a context went since); *known: it answered
 * (a context, or none). */
static inline __attribute__((always_inline)) int ask_driver(int *known)
{
	const gmt_drv_t *d = gmt_drv();
	CUcontext ctx = NULL;
	CUdevice dev;
	unsigned gen;

	*known = 0;
	if (d->ctx_get_current == NULL || d->ctx_get_current(&ctx) != CUDA_SUCCESS)
		return -1;
	if (ctx == NULL) {
		*known = 1;
		return -1;
	}
	gen = atomic_load_explicit(&gmt_ctx_gen, memory_order_relaxed);
	if (GMT_LIKELY(ctx == gmt_tls.ctx && gen == gmt_tls.ctx_gen)) {
		*known = 1;
		return gmt_tls.ctx_dev;
	}
	if (d->ctx_get_device == NULL || d->ctx_get_device(&dev) != CUDA_SUCCESS)
		return -1;
	/* The thread's events from here on were made under ctx: the analyzer
	 * knows which context each allocation belongs to (what a destroyed
	 * context takes with it). Written again after a context went. */
	gmt_rec(GMT_EV_CTX_CURRENT, (int)dev, (uint64_t)(uintptr_t)ctx, 0, 0, 0, 0);
	gmt_tls.ctx = ctx;
	gmt_tls.ctx_dev = (int)dev;
	gmt_tls.ctx_gen = gen;
	*known = 1;
	return (int)dev;
}

/* The answer is the thread's for as long as nothing can have changed it
 * (gmt_cur_device_ok): kept when no context call of this thread came in
 * between (a signal handler's), no context went and the cache is on,
 * outside runtime and NCCL calls. With the cache off: the driver's answer,
 * nothing else. */
int gmt_cur_device(void)
{
	unsigned sure, changes;
	int dev, known;

	if (atomic_load_explicit(&gmt_ctx_cache_is_off, memory_order_relaxed))
		return ask_driver(&known);
	sure = atomic_load_explicit(&gmt_ctx_sure_gen, memory_order_relaxed);
	changes = gmt_tls.ctx_changes;
	atomic_signal_fence(memory_order_seq_cst);
	dev = ask_driver(&known);
	atomic_signal_fence(memory_order_seq_cst);
	if (known && gmt_tls.ctx_changes == changes && gmt_tls.api == GMT_API_DRIVER &&
	    gmt_tls.nccl_depth == 0) {
		gmt_tls.sure_dev = dev;
		gmt_tls.ctx_sure = sure;
	}
	return dev;
}

/* The current context's device without recording anything (the samples
 * must not write a CTX_CURRENT among themselves). */
static int cur_device_quiet(const gmt_drv_t *d)
{
	CUcontext ctx = NULL;
	CUdevice dev;

	if (d->ctx_get_current == NULL || d->ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == NULL)
		return -1;
	if (ctx == gmt_tls.ctx && gmt_tls.ctx_gen == atomic_load_explicit(&gmt_ctx_gen, memory_order_relaxed))
		return gmt_tls.ctx_dev;
	if (d->ctx_get_device == NULL || d->ctx_get_device(&dev) != CUDA_SUCCESS)
		return -1;
	return (int)dev;
}

int gmt_ctx_device(CUcontext ctx)
{
	const gmt_drv_t *d = gmt_drv();
	CUcontext cur = NULL, popped;
	CUdevice dev;
	int r;

	if (ctx == NULL)
		return gmt_cur_device();
	if (d->ctx_get_current != NULL && d->ctx_get_current(&cur) == CUDA_SUCCESS && cur == ctx)
		return gmt_cur_device();
	if (d->ctx_push == NULL || d->ctx_pop == NULL || d->ctx_get_device == NULL ||
	    d->ctx_push(ctx) != CUDA_SUCCESS)
		return -1;
	r = d->ctx_get_device(&dev);
	d->ctx_pop(&popped);
	return r == CUDA_SUCCESS ? (int)dev : -1;
}

/* ---- owners --------------------------------------------------------------- */

/*
 * Which library made a driver call. NCCL, cuBLAS and cuDNN each carry a
 * static copy of the runtime (libcublas.so.13 and libcudnn*.so.9 need no
 * libcudart), so their driver calls come from their own text: the caller's
 * address says who allocated. Their static runtime starts with
 * dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"), which goes
 * through our dlsym and tells us the library (gmt_lib_note() on the
 * caller); NCCL's entry points tell us too. A library built against the
 * dynamic libcudart calls cudaMalloc instead: the runtime wrapper notes its
 * caller and leaves the owner in gmt_tls.rt_owner for the driver call the
 * runtime makes under it.
 *
 * The known libraries are a small append-only table of executable ranges:
 * readers load the count with acquire and compare a few ranges, no lock.
 * Writers (rare: once per library) serialise on a mutex, and find the range
 * before taking it: dladdr and dl_iterate_phdr take the loader's locks,
 * which a thread running a library constructor already holds. A range stays
 * in the table if its library is unloaded (the owning libraries never are in
 * practice); a full table is said once and the library counts as the
 * application.
 */
gmt_lib_range_t gmt_libs[GMT_OWNER_LIBS];
_Atomic unsigned gmt_n_libs;
static pthread_mutex_t libs_lock = PTHREAD_MUTEX_INITIALIZER;

static inline unsigned lib_scan(uintptr_t a, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a >= atomic_load_explicit(&gmt_libs[i].lo, memory_order_relaxed) &&
		    a < atomic_load_explicit(&gmt_libs[i].hi, memory_order_relaxed))
			return atomic_load_explicit(&gmt_libs[i].owner, memory_order_relaxed);
	return GMT_OWNER_APP;
}

static inline unsigned lib_lookup(uintptr_t a)
{
	return lib_scan(a, atomic_load_explicit(&gmt_n_libs, memory_order_acquire));
}

/* The table is append-only: the owner of an address is a function of the
 * address and the number of entries, so (caller, n) -> owner is cached. */
unsigned gmt_lib_lookup_slow(uintptr_t a, unsigned n)
{
	unsigned o = lib_scan(a, n);

	gmt_tls.own_pc = a;
	gmt_tls.own_n = n;
	gmt_tls.own = o;
	return o;
}

/* The owner a library's file name stands for (its basename's prefix). */
static unsigned owner_of_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "libnccl", 7) == 0)
		return GMT_OWNER_NCCL;
	if (strncmp(base, "libcublas", 9) == 0) /* libcublas and libcublasLt */
		return GMT_OWNER_CUBLAS;
	if (strncmp(base, "libcudnn", 8) == 0)
		return GMT_OWNER_CUDNN;
	return GMT_OWNER_APP;
}

typedef struct text_search {
	uintptr_t addr, lo, hi;
} text_search_t;

/* dl_iterate_phdr callback: the executable range of the module holding
 * s->addr (lowest to highest executable PT_LOAD). */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	text_search_t *s = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int inside = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if (s->addr >= a && s->addr < a + ph->p_memsz)
			inside = 1;
		if (ph->p_flags & PF_X) {
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		}
	}
	if (!inside || hi == 0)
		return 0;
	s->lo = lo;
	s->hi = hi;
	return 1;
}

static void lib_add(uintptr_t lo, uintptr_t hi, unsigned owner, const char *file)
{
	static int warned;
	unsigned n;

	pthread_mutex_lock(&libs_lock);
	n = atomic_load_explicit(&gmt_n_libs, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++) {
		if (atomic_load_explicit(&gmt_libs[i].lo, memory_order_relaxed) == lo) {
			pthread_mutex_unlock(&libs_lock);
			return; /* another thread was first */
		}
	}
	if (n == GMT_OWNER_LIBS) {
		int first = !warned++;
		pthread_mutex_unlock(&libs_lock);
		if (first)
			gmt_pl_log(1, "more than %d NCCL/cuBLAS/cuDNN libraries: %s counts as the application",
				   GMT_OWNER_LIBS, file);
		return;
	}
	atomic_store_explicit(&gmt_libs[n].lo, lo, memory_order_relaxed);
	atomic_store_explicit(&gmt_libs[n].hi, hi, memory_order_relaxed);
	atomic_store_explicit(&gmt_libs[n].owner, owner, memory_order_relaxed);
	atomic_store_explicit(&gmt_n_libs, n + 1, memory_order_release);
	pthread_mutex_unlock(&libs_lock);
	gmt_pl_log(3, "owner %u: text at %#lx-%#lx (%s)", owner, (unsigned long)lo,
		   (unsigned long)hi, file);
}

/* A caller in no known library and outside this thread's last two
 * modules that own nothing: find its module. */
static __attribute__((noinline)) unsigned lib_learn(uintptr_t a)
{
	text_search_t s = { a, 0, 0 };
	unsigned owner;
	Dl_info info;

	if (!dladdr((void *)a, &info) || info.dli_fname == NULL)
		return GMT_OWNER_APP; /* not in any module (generated code) */
	owner = owner_of_file(info.dli_fname);
	if (dl_iterate_phdr(find_text, &s) != 1 || a < s.lo || a >= s.hi)
		return owner; /* (not data we can cache: ask again next time) */
	if (owner == GMT_OWNER_APP) {
		/* Two entries: a program often allocates from two modules in
		 * turn (PyTorch: libc10_cuda and libtorch_cuda). */
		gmt_tls.mod_lo[1] = gmt_tls.mod_lo[0];
		gmt_tls.mod_hi[1] = gmt_tls.mod_hi[0];
		gmt_tls.mod_lo[0] = s.lo;
		gmt_tls.mod_hi[0] = s.hi;
		return GMT_OWNER_APP;
	}
	lib_add(s.lo, s.hi, owner, info.dli_fname);
	return owner;
}

unsigned gmt_lib_note(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned o;

	if (addr == NULL)
		return GMT_OWNER_APP;
	o = lib_lookup(a);
	if (o != GMT_OWNER_APP || (a >= gmt_tls.mod_lo[0] && a < gmt_tls.mod_hi[0]) ||
	    (a >= gmt_tls.mod_lo[1] && a < gmt_tls.mod_hi[1]))
		return o;
	return lib_learn(a);
}

/* ---- small maps: pools and VMM handles/ranges -> device ------------------ */

/* Open addressing, linear probing, backward-shift deletion, under a mutex:
 * these calls are rare next to plain allocations (a pool is looked up once
 * per pool allocation, VMM operations map 2-20 MiB pages). Key 0 = empty. */
typedef struct gmt_map {
	pthread_mutex_t lock;
	uint32_t cap, n;      /* cap is a power of two */
	uint64_t *keys;
	int64_t *vals;
	int warned;
} gmt_map_t;

static uint64_t pool_keys[1024], handle_keys[16384], va_keys[16384];
static int64_t pool_vals[1024], handle_vals[16384], va_vals[16384];
static gmt_map_t pools = { PTHREAD_MUTEX_INITIALIZER, 1024, 0, pool_keys, pool_vals, 0 };
static gmt_map_t handles = { PTHREAD_MUTEX_INITIALIZER, 16384, 0, handle_keys, handle_vals, 0 };
static gmt_map_t vas = { PTHREAD_MUTEX_INITIALIZER, 16384, 0, va_keys, va_vals, 0 };

static uint32_t map_slot(const gmt_map_t *m, uint64_t k)
{
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 32;
	return (uint32_t)k & (m->cap - 1);
}

/* Caller holds m->lock. Returns the slot of k, or of the empty slot where it
 * would go, or UINT32_MAX when full. */
static uint32_t map_find(const gmt_map_t *m, uint64_t k)
{
	uint32_t i = map_slot(m, k);
	for (uint32_t probes = 0; probes < m->cap; probes++, i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k || m->keys[i] == 0)
			return i;
	return UINT32_MAX;
}

/* Caller holds m->lock. */
static int64_t *map_put(gmt_map_t *m, uint64_t k, int64_t v)
{
	uint32_t i = map_find(m, k);
	if (i == UINT32_MAX || (m->keys[i] == 0 && m->n + 1 > m->cap / 4 * 3)) {
		if (!m->warned++)
			gmt_pl_log(1, "too many live pools or VMM handles: some devices unattributed");
		return NULL;
	}
	if (m->keys[i] == 0) {
		m->keys[i] = k;
		m->vals[i] = v;
		m->n++;
	}
	return &m->vals[i];
}

/* Caller holds m->lock. */
static void map_del(gmt_map_t *m, uint64_t k)
{
	uint32_t i = map_find(m, k), j;
	if (i == UINT32_MAX || m->keys[i] != k)
		return;
	m->keys[i] = 0;
	m->n--;
	/* Backward shift: move later entries of the cluster into the hole when
	 * their home slot does not lie cyclically in (i, j]. */
	for (j = (i + 1) & (m->cap - 1); m->keys[j] != 0; j = (j + 1) & (m->cap - 1)) {
		uint32_t h = map_slot(m, m->keys[j]);
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
}

/* Each device's current pool (what cuMemAllocAsync takes from), as last
 * seen by cuDeviceGetMemPool / cuDeviceSetMemPool. */
static _Atomic(CUmemoryPool) current_pool[GMT_MAX_DEVICES];

/* Pool values: device in the low 16 bits (signed), bit 16 = served
 * stream-ordered allocations, bits 17-18 = GMT_POOL_* flags, bits 24-63 =
 * its reserved bytes when last read, plus one (0: never read). */
#define POOL_DEV(v)      ((int)(int16_t)((v) & 0xffff))
#define POOL_SERVED      0x10000
#define POOL_FLAGS(v)    ((unsigned)(((v) >> 17) & 0x3))
#define POOL_LOW(v)      ((v) & 0xffffff)
#define POOL_RES(v)      ((uint64_t)(v) >> 24)
#define POOL_VAL(d, s, f) ((int64_t)(((uint32_t)(d) & 0xffff) | ((s) ? POOL_SERVED : 0) | ((uint32_t)(f) & 0x3) << 17))

void gmt_pool_set(CUmemoryPool pool, int device, unsigned flags)
{
	int64_t *v;
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pools.lock);
	v = map_put(&pools, (uint64_t)(uintptr_t)pool, POOL_VAL(device, 0, flags));
	if (v != NULL)
		*v = POOL_VAL(device, *v & POOL_SERVED, flags) | (*v & ~(int64_t)0xffffff);
	pthread_mutex_unlock(&pools.lock);
}

void gmt_pool_set_device(CUmemoryPool pool, int device)
{
	int64_t *v;
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pools.lock);
	v = map_put(&pools, (uint64_t)(uintptr_t)pool, POOL_VAL(device, 0, 0));
	if (v != NULL)
		*v = POOL_VAL(device, *v & POOL_SERVED, POOL_FLAGS(*v)) | (*v & ~(int64_t)0xffffff);
	pthread_mutex_unlock(&pools.lock);
}

int gmt_pool_info(CUmemoryPool pool, unsigned *flags, int *known)
{
	int dev = -1;
	uint32_t i;

	*flags = 0;
	*known = 0;
	if (pool == NULL)
		return -1;
	pthread_mutex_lock(&pools.lock);
	i = map_find(&pools, (uint64_t)(uintptr_t)pool);
	if (i != UINT32_MAX && pools.keys[i] != 0) {
		dev = POOL_DEV(pools.vals[i]);
		*flags = POOL_FLAGS(pools.vals[i]);
		*known = 1;
	}
	pthread_mutex_unlock(&pools.lock);
	return dev;
}

int gmt_pool_device(CUmemoryPool pool)
{
	unsigned flags;
	int known;
	return gmt_pool_info(pool, &flags, &known);
}

/* Pools forgotten (gmt_pool_forget), counted after the entry went: a
 * thread's gmt_tls.served is true while this count is what it was before
 * the thread marked the pool. */
static _Atomic unsigned pools_forgotten;

/* Once marked, a pool stays served until it is forgotten (gmt_pool_set and
 * the reserve keep the bit), so a thread that marked this pool, with no
 * pool forgotten since, has nothing to do: no lock per allocation. */
void gmt_pool_served(CUmemoryPool pool, int device)
{
	unsigned gen = atomic_load_explicit(&pools_forgotten, memory_order_acquire);
	int64_t *v;

	if (pool == NULL || (pool == gmt_tls.served && gen == gmt_tls.served_gen))
		return;
	pthread_mutex_lock(&pools.lock);
	v = map_put(&pools, (uint64_t)(uintptr_t)pool, POOL_VAL(device, 1, 0));
	if (v != NULL && !(*v & POOL_SERVED))
		*v |= POOL_SERVED;
	pthread_mutex_unlock(&pools.lock);
	if (v != NULL) {
		gmt_tls.served = pool;
		gmt_tls.served_gen = gen;
	}
}

/* Remembers the reserved bytes last read of pool; returns 1 when they
 * differ from the previous reading (or there was none). */
static int pool_reserved_changed(CUmemoryPool pool, uint64_t reserved)
{
	int64_t *v;
	int changed = 1;

	pthread_mutex_lock(&pools.lock);
	v = map_put(&pools, (uint64_t)(uintptr_t)pool, POOL_VAL(-1, 0, 0));
	if (v != NULL) {
		uint64_t r1 = (reserved + 1) & ((1ull << 40) - 1);
		changed = POOL_RES(*v) != r1;
		*v = POOL_LOW(*v) | (int64_t)(r1 << 24);
	}
	pthread_mutex_unlock(&pools.lock);
	return changed;
}

unsigned gmt_pool_flags_of(const CUmemLocation *loc, CUmemAllocationType type, int *device)
{
	unsigned flags = type == CU_MEM_ALLOCATION_TYPE_MANAGED ? GMT_POOL_MANAGED : 0;

	*device = -1;
	if (loc == NULL)
		return flags;
	switch (loc->type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		*device = loc->id;
		break;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		if (!(flags & GMT_POOL_MANAGED))
			flags |= GMT_POOL_HOST;
		break;
	default:
		break;
	}
	return flags;
}

void gmt_pool_forget(CUmemoryPool pool)
{
	pthread_mutex_lock(&pools.lock);
	map_del(&pools, (uint64_t)(uintptr_t)pool);
	pthread_mutex_unlock(&pools.lock);
	atomic_fetch_add_explicit(&pools_forgotten, 1, memory_order_release);
	for (int d = 0; d < GMT_MAX_DEVICES; d++) {
		CUmemoryPool p = pool;
		atomic_compare_exchange_strong(&current_pool[d], &p, NULL);
	}
}

static _Atomic uint64_t current_pool_served[GMT_MAX_DEVICES / 64];

void gmt_pool_current_served(int device)
{
	uint64_t bit;
	if (device < 0 || device >= GMT_MAX_DEVICES)
		return;
	bit = 1ull << (device % 64);
	if (!(atomic_load_explicit(&current_pool_served[device / 64], memory_order_relaxed) & bit))
		atomic_fetch_or(&current_pool_served[device / 64], bit);
}

CUmemoryPool gmt_pool_current(int device)
{
	__typeof__(cuDeviceGetMemPool) *get;
	CUmemoryPool p;

	if (device < 0 || device >= GMT_MAX_DEVICES)
		return NULL;
	p = atomic_load_explicit(&current_pool[device], memory_order_acquire);
	if (GMT_LIKELY(p != NULL))
		return p;
	get = real_cuDeviceGetMemPool();
	if (get == NULL)
		get = (__typeof__(get))gmt_resolve(GMT_ID_cuDeviceGetMemPool);
	if (get == NULL || get(&p, (CUdevice)device) != CUDA_SUCCESS || p == NULL)
		return NULL;
	gmt_pool_current_set(device, p);
	return p;
}

void gmt_pool_current_set(int device, CUmemoryPool pool)
{
	if (device >= 0 && device < GMT_MAX_DEVICES)
		atomic_store_explicit(&current_pool[device], pool, memory_order_release);
	gmt_pool_set_device(pool, device);
}

int gmt_stream_device(CUstream stream)
{
	const gmt_drv_t *d;
	CUcontext ctx = NULL;
	CUdevice dev;

	if (gmt_stream_is_default(stream))
		return gmt_cur_device();
	d = gmt_drv();
	if (d->stream_get_device != NULL && d->stream_get_device(stream, &dev) == CUDA_SUCCESS)
		return (int)dev;
	if (d->stream_get_ctx != NULL && d->stream_get_ctx(stream, &ctx) == CUDA_SUCCESS && ctx != NULL)
		return gmt_ctx_device(ctx);
	return gmt_cur_device();
}

CUcontext gmt_stream_ctx(CUstream stream)
{
	const gmt_drv_t *d;
	CUcontext ctx = NULL;

	if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
		return NULL;
	d = gmt_drv();
	if (d->stream_get_ctx == NULL || d->stream_get_ctx(stream, &ctx) != CUDA_SUCCESS)
		return NULL;
	return ctx;
}

/* Devices whose stream-ordered allocations were captured into a graph: their
 * graph memory pool is sampled from then on. */
static _Atomic uint64_t graph_seen[GMT_MAX_DEVICES / 64];

void gmt_graph_seen(int device)
{
	uint64_t bit;

	if (device < 0 || device >= GMT_MAX_DEVICES)
		return;
	bit = 1ull << (device % 64);
	if (!(atomic_load_explicit(&graph_seen[device / 64], memory_order_relaxed) & bit))
		atomic_fetch_or(&graph_seen[device / 64], bit);
}

uint64_t gmt_capture_flag(CUstream stream, int device)
{
	const gmt_drv_t *d = gmt_drv();
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	uint64_t bit;

	/* The legacy default stream is never captured. */
	if (stream == NULL || stream == CU_STREAM_LEGACY || d->stream_is_capturing == NULL ||
	    d->stream_is_capturing(stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return 0;
	if (device >= 0 && device < GMT_MAX_DEVICES) {
		bit = 1ull << (device % 64);
		if (!(atomic_load_explicit(&graph_seen[device / 64], memory_order_relaxed) & bit))
			atomic_fetch_or(&graph_seen[device / 64], bit);
	}
	return (uint64_t)GMT_FLAG_CAPTURED << 24;
}

/* Handle values: device in the low 16 bits (signed), references above. */
#define H_DEV(v)       ((int)(int16_t)((uint32_t)(v) & 0xffff))
#define H_REFS(v)      ((uint32_t)(v) >> 16)
#define H_VAL(d, refs) ((int64_t)(((uint32_t)(d) & 0xffff) | (uint32_t)(refs) << 16))

void gmt_vmm_handle_created(uint64_t handle, int device)
{
	int64_t *v;
	if (handle == 0)
		return;
	pthread_mutex_lock(&handles.lock);
	v = map_put(&handles, handle, H_VAL(device, 1));
	if (v != NULL)
		*v = H_VAL(device, 1);
	pthread_mutex_unlock(&handles.lock);
}

void gmt_vmm_handle_retained(uint64_t handle)
{
	uint32_t i;
	pthread_mutex_lock(&handles.lock);
	i = map_find(&handles, handle);
	if (i != UINT32_MAX && handles.keys[i] == handle && H_REFS(handles.vals[i]) < 0xffff)
		handles.vals[i] = H_VAL(H_DEV(handles.vals[i]), H_REFS(handles.vals[i]) + 1);
	pthread_mutex_unlock(&handles.lock);
}

int gmt_vmm_handle_release(uint64_t handle, int *device)
{
	int last = 1;
	uint32_t i;

	*device = -1;
	pthread_mutex_lock(&handles.lock);
	i = map_find(&handles, handle);
	if (i != UINT32_MAX && handle != 0 && handles.keys[i] == handle) {
		uint32_t refs = H_REFS(handles.vals[i]);
		*device = H_DEV(handles.vals[i]);
		if (refs > 1) {
			handles.vals[i] = H_VAL(*device, refs - 1);
			last = 0;
		} else {
			map_del(&handles, handle);
		}
	}
	pthread_mutex_unlock(&handles.lock);
	return last;
}

void gmt_vmm_handle_unrelease(uint64_t handle, int device)
{
	uint32_t i;
	pthread_mutex_lock(&handles.lock);
	i = map_find(&handles, handle);
	if (i != UINT32_MAX && handles.keys[i] == handle)
		handles.vals[i] = H_VAL(H_DEV(handles.vals[i]), H_REFS(handles.vals[i]) + 1);
	else if (handle != 0 && device >= 0)
		map_put(&handles, handle, H_VAL(device, 1));
	pthread_mutex_unlock(&handles.lock);
}

int gmt_vmm_handle_device(uint64_t handle)
{
	int dev = -1;
	uint32_t i;
	if (handle == 0)
		return -1;
	pthread_mutex_lock(&handles.lock);
	i = map_find(&handles, handle);
	if (i != UINT32_MAX && handles.keys[i] == handle)
		dev = H_DEV(handles.vals[i]);
	pthread_mutex_unlock(&handles.lock);
	return dev;
}

void gmt_vmm_va_set_device(uint64_t va, int device)
{
	int64_t *v;
	if (va == 0)
		return;
	pthread_mutex_lock(&vas.lock);
	v = map_put(&vas, va, device);
	if (v != NULL)
		*v = device;
	pthread_mutex_unlock(&vas.lock);
}

int gmt_vmm_va_device(uint64_t va, int remove)
{
	int dev = -1;
	uint32_t i;
	if (va == 0)
		return -1;
	pthread_mutex_lock(&vas.lock);
	i = map_find(&vas, va);
	if (i != UINT32_MAX && vas.keys[i] == va) {
		dev = (int)vas.vals[i];
		if (remove)
			map_del(&vas, va);
	}
	pthread_mutex_unlock(&vas.lock);
	return dev;
}

/* ---- events and samples ----------------------------------------------------- */

/* Frames between gmt_emit()'s caller and the program: gmt_rec* itself, the
 * body, the generated wrapper. */
#define GMT_SKIP_FRAMES 3

__attribute__((noinline)) void gmt_rec(unsigned type, int device, uint64_t addr, uint64_t size,
				       uint64_t stream, uint64_t aux, int want_stack)
{
	gmt_event_t ev = {
		.ts = 0, .addr = addr, .size = size, .stream = stream, .aux = aux,
		.stack = 0, .type = (uint16_t)type, .device = (int16_t)device,
	};
	if (device >= 0)
		gmt_device_describe(device);
	gmt_emit(&ev, want_stack, GMT_SKIP_FRAMES);
}

#define MAX_SAMPLED_POOLS 16

/* Appends to ev[] the samples of device dev (ctx: its context, NULL for the
 * current one): MEMINFO, GRAPH_MEM once the device had an allocation
 * captured into a graph, then POOL_RESERVED and POOL_USED of each pool of
 * the device that served stream-ordered allocations. Returns how many. */
static int collect_samples_in(int dev, CUcontext ctx, gmt_event_t *ev, int max)
{
	const gmt_drv_t *d = gmt_drv();
	CUmemoryPool pl[MAX_SAMPLED_POOLS + 1];
	CUcontext cur = NULL, popped;
	size_t fr = 0, tot = 0;
	int n = 0, np = 0, pushed = 0;
	CUresult r;

	if (dev < 0 || d->mem_get_info == NULL)
		return 0;
	if (ctx != NULL && d->ctx_get_current != NULL && d->ctx_push != NULL && d->ctx_pop != NULL &&
	    d->ctx_get_current(&cur) == CUDA_SUCCESS && cur != ctx) {
		if (d->ctx_push(ctx) != CUDA_SUCCESS)
			return 0;
		pushed = 1;
	}
	/* cuMemGetInfo reads the current context's device: without a context
	 * of dev to read it in, no MEMINFO (the pools are read all the same). */
	if (ctx == NULL && cur_device_quiet(d) != dev)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		r = d->mem_get_info(&fr, &tot);
	if (pushed)
		d->ctx_pop(&popped);
	if (r == CUDA_SUCCESS && n < max)
		ev[n++] = (gmt_event_t){ .addr = fr, .size = tot, .type = GMT_EV_MEMINFO,
					 .device = (int16_t)dev };

	pthread_mutex_lock(&pools.lock);
	for (uint32_t i = 0; i < pools.cap && np < MAX_SAMPLED_POOLS; i++)
		if (pools.keys[i] != 0 && (pools.vals[i] & POOL_SERVED) && POOL_DEV(pools.vals[i]) == dev)
			pl[np++] = (CUmemoryPool)(uintptr_t)pools.keys[i];
	pthread_mutex_unlock(&pools.lock);
	if (dev < GMT_MAX_DEVICES &&
	    (atomic_load_explicit(&current_pool_served[dev / 64], memory_order_relaxed) & (1ull << (dev % 64)))) {
		__typeof__(cuDeviceGetMemPool) *get = real_cuDeviceGetMemPool();
		CUmemoryPool cp = NULL;
		int dup = 0;
		if (get == NULL)
			get = (__typeof__(get))gmt_resolve(GMT_ID_cuDeviceGetMemPool);
		if (get != NULL && get(&cp, (CUdevice)dev) == CUDA_SUCCESS && cp != NULL) {
			for (int i = 0; i < np; i++)
				dup |= pl[i] == cp;
			if (!dup)
				pl[np++] = cp;
		}
	}
	if (dev < GMT_MAX_DEVICES && d->graph_mem_attribute != NULL && n < max &&
	    (atomic_load_explicit(&graph_seen[dev / 64], memory_order_relaxed) & (1ull << (dev % 64)))) {
		cuuint64_t rc = 0, rh = 0, uc = 0, uh = 0;
		if (d->graph_mem_attribute((CUdevice)dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &rc) == CUDA_SUCCESS &&
		    d->graph_mem_attribute((CUdevice)dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &rh) == CUDA_SUCCESS &&
		    d->graph_mem_attribute((CUdevice)dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &uc) == CUDA_SUCCESS &&
		    d->graph_mem_attribute((CUdevice)dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &uh) == CUDA_SUCCESS)
			ev[n++] = (gmt_event_t){ .addr = rc, .size = rh, .stream = uc, .aux = uh,
						 .type = GMT_EV_GRAPH_MEM, .device = (int16_t)dev };
	}
	for (int i = 0; i < np && d->pool_get_attribute != NULL && n + 2 <= max; i++) {
		cuuint64_t rc = 0, rh = 0, uc = 0, uh = 0;
		if (d->pool_get_attribute(pl[i], CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &rc) != CUDA_SUCCESS ||
		    d->pool_get_attribute(pl[i], CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &rh) != CUDA_SUCCESS ||
		    d->pool_get_attribute(pl[i], CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &uc) != CUDA_SUCCESS ||
		    d->pool_get_attribute(pl[i], CU_MEMPOOL_ATTR_USED_MEM_HIGH, &uh) != CUDA_SUCCESS)
			continue;
		pool_reserved_changed(pl[i], rc);
		ev[n++] = (gmt_event_t){ .addr = rc, .size = rh, .stream = (uint64_t)(uintptr_t)pl[i],
					 .type = GMT_EV_POOL_RESERVED, .device = (int16_t)dev };
		ev[n++] = (gmt_event_t){ .addr = uc, .size = uh, .stream = (uint64_t)(uintptr_t)pl[i],
					 .type = GMT_EV_POOL_USED, .device = (int16_t)dev };
	}
	return n;
}

/* The same, in relaxed capture mode: while some thread captures a stream
 * in global mode, a thread in global mode may make no "potentially unsafe"
 * call without invalidating that capture. The driver's own way out for a
 * library is to switch the calling thread to relaxed mode around its calls. */
static int collect_samples(int dev, CUcontext ctx, gmt_event_t *ev, int max)
{
	const gmt_drv_t *d = gmt_drv();
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	const int exchanged = d->exchange_capture_mode != NULL &&
			      d->exchange_capture_mode(&mode) == CUDA_SUCCESS;
	int n = collect_samples_in(dev, ctx, ev, max);
	if (exchanged)
		d->exchange_capture_mode(&mode);
	return n;
}

void gmt_pool_after_alloc(CUmemoryPool pool, int device)
{
	const gmt_drv_t *d = gmt_drv();
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	cuuint64_t rc = 0, rh = 0, uc = 0, uh = 0;
	int exchanged, ok;

	if (pool == NULL || device < 0 || d->pool_get_attribute == NULL)
		return;
	/* In relaxed capture mode, as every sample (collect_samples). */
	exchanged = d->exchange_capture_mode != NULL && d->exchange_capture_mode(&mode) == CUDA_SUCCESS;
	ok = d->pool_get_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &rc) == CUDA_SUCCESS &&
	     pool_reserved_changed(pool, rc) &&
	     d->pool_get_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &rh) == CUDA_SUCCESS &&
	     d->pool_get_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &uc) == CUDA_SUCCESS &&
	     d->pool_get_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &uh) == CUDA_SUCCESS;
	if (exchanged)
		d->exchange_capture_mode(&mode);
	if (!ok)
		return;
	gmt_event_t ev[2] = {
		{ .addr = rc, .size = rh, .stream = (uint64_t)(uintptr_t)pool, .type = GMT_EV_POOL_RESERVED,
		  .device = (int16_t)device },
		{ .addr = uc, .size = uh, .stream = (uint64_t)(uintptr_t)pool, .type = GMT_EV_POOL_USED,
		  .device = (int16_t)device },
	};
	gmt_emit(&ev[0], 0, 0);
	gmt_emit(&ev[1], 0, 0);
}

void gmt_pools_after_sync(int device)
{
	CUmemoryPool pl[MAX_SAMPLED_POOLS];
	int np = 0;

	if (device < 0)
		return;
	/* Pools read at 0 reserved have nothing a threshold could trim. */
	pthread_mutex_lock(&pools.lock);
	for (uint32_t i = 0; i < pools.cap && np < MAX_SAMPLED_POOLS; i++)
		if (pools.keys[i] != 0 && (pools.vals[i] & POOL_SERVED) && POOL_DEV(pools.vals[i]) == device &&
		    POOL_RES(pools.vals[i]) > 1)
			pl[np++] = (CUmemoryPool)(uintptr_t)pools.keys[i];
	pthread_mutex_unlock(&pools.lock);
	for (int i = 0; i < np; i++)
		gmt_pool_after_alloc(pl[i], device);
}

#define MAX_SAMPLES (2 + 2 * (MAX_SAMPLED_POOLS + 1))

/* Emits the samples; with urgent, the last one (and so everything this
 * thread emitted before it) is on disk when this returns. */
static int emit_samples(int dev, CUcontext ctx, int urgent)
{
	gmt_event_t ev[MAX_SAMPLES];
	int n = collect_samples(dev, ctx, ev, MAX_SAMPLES);

	for (int i = 0; i < n; i++) {
		if (urgent && i == n - 1)
			gmt_emit_urgent(&ev[i], 0, 0);
		else
			gmt_emit(&ev[i], 0, 0);
	}
	return n;
}

__attribute__((noinline)) void gmt_rec_alloc_fail(int device, uint64_t size, uint64_t stream,
						  uint64_t aux, int result, int frames)
{
	gmt_event_t ev = {
		.ts = 0, .size = size, .stream = stream, .aux = GMT_AUX_WITH_RESULT(aux, result),
		.type = GMT_EV_ALLOC_FAIL, .device = (int16_t)device,
	};

	gmt_tls.fails++;
	if (GMT_UNLIKELY(atomic_load_explicit(&stub_state, memory_order_relaxed) != 1))
		stub_say();
	/* The failure first (its time is the failure's), then the samples taken
	 * right after it; one wait for the disk covers them all. */
	if (device >= 0)
		gmt_device_describe(device);
	if (device < 0 || gmt_drv()->mem_get_info == NULL) {
		gmt_emit_urgent(&ev, 1, frames + 1);
		return;
	}
	gmt_emit(&ev, 1, frames + 1);
	if (emit_samples(device, NULL, 1) == 0)
		gmt_tracer_flush(200);
}

void gmt_device_seen(int device, CUcontext ctx)
{
	if (device < 0)
		return;
	gmt_device_describe(device);
	emit_samples(device, ctx, 0);
}

void gmt_sample_now(int device)
{
	if (device >= 0)
		emit_samples(device, NULL, 0);
}

void gmt_sample_after_destroy(int device)
{
	if (device >= 0)
		emit_samples(device, NULL, 0);
}

/* At most one sample a device per period (GPUMEMTRACE_SYNC_SAMPLE_MS,
 * default 10; 0: at every synchronisation, which makes a workload's
 * number of events independent of its timing). */
static uint64_t sync_period_ns = 10000000ull;
static _Atomic uint64_t last_sample[GMT_MAX_DEVICES];

static void sync_period_from_env(void)
{
	const char *s = getenv("GPUMEMTRACE_SYNC_SAMPLE_MS");
	char *end;
	unsigned long ms;

	if (s == NULL || *s == 0)
		return;
	errno = 0;
	ms = strtoul(s, &end, 10);
	if (errno || *end || ms > 3600000ul) {
		gmt_pl_log(1, "GPUMEMTRACE_SYNC_SAMPLE_MS=%s: not a number of milliseconds from 0 "
			   "to 3600000; using 10", s);
		return;
	}
	sync_period_ns = (uint64_t)ms * 1000000ull;
}

void gmt_sample_sync(int device, CUcontext ctx)
{
	uint64_t now, last;

	if (device < 0 || device >= GMT_MAX_DEVICES)
		return;
	now = gmt_now_ns();
	last = atomic_load_explicit(&last_sample[device], memory_order_relaxed);
	/* One thread claims the period; the others, and every synchronisation
	 * within it, read only the pools a release threshold may have trimmed
	 * (the driver trims at synchronisations). */
	if ((last != 0 && now - last < sync_period_ns) ||
	    !atomic_compare_exchange_strong(&last_sample[device], &last, now)) {
		gmt_pools_after_sync(device);
		return;
	}
	emit_samples(device, ctx, 0);
	/* A library loaded since: its runtime calls are named from now on. */
	gmt_bind_check();
}

/* ---- samples at phase boundaries ----------------------------------------- */

/* Boundaries of our own API and domain are always sampled: a program marks
 * few of them. Other outermost NVTX ranges can come by the hundred thousand
 * a second (emit_nvtx without an enclosing range), so by default
 * ("auto") one is sampled only when the time since the device's last sample
 * is at least 100 times what its last boundary sample cost: the samples take
 * at most about 1% of the program's time, and every boundary of phases that
 * last longer than that is read exactly. The phases report gives each
 * value's sample time (device_used_sample_ts_ns). */
#define BOUNDARY_OFF  UINT64_MAX
#define BOUNDARY_AUTO 0ull
#define BOUNDARY_COST_FACTOR 100ull
#define BOUNDARY_AUTO_MAX_NS 10000000ull     /* an auto gap never exceeds 10 ms */
static uint64_t boundary_period_ns = BOUNDARY_AUTO;
static int boundary_fixed;
static _Atomic uint64_t boundary_cost[GMT_MAX_DEVICES];
static pthread_once_t boundary_once = PTHREAD_ONCE_INIT;

static void boundary_setup(void)
{
	const char *s = getenv("GPUMEMTRACE_BOUNDARY_SAMPLE_US");
	char *end;
	unsigned long long us;

	if (s == NULL || *s == 0 || !strcmp(s, "auto"))
		return;
	if (!strcmp(s, "off")) {
		boundary_period_ns = BOUNDARY_OFF;
		return;
	}
	errno = 0;
	us = strtoull(s, &end, 10);
	if (errno || *end || *s < '0' || *s > '9' || us > 3600ull * 1000000ull) {
		gmt_pl_log(1, "GPUMEMTRACE_BOUNDARY_SAMPLE_US=%s: not auto, off, nor a number of "
			   "microseconds from 0 to 3600000000; using auto", s);
		return;
	}
	boundary_period_ns = us * 1000ull;
	boundary_fixed = 1;
}

void gmt_sample_boundary(int always)
{
	uint64_t now, last, gap;
	int device;

	pthread_once(&boundary_once, boundary_setup);
	if (boundary_period_ns == BOUNDARY_OFF)
		return;
	/* Only on a thread that makes CUDA calls itself, and not inside one of
	 * ours: NVTX may be called where CUDA may not (a host function that
	 * the driver runs on its own thread must make no CUDA call). */
	if (!gmt_tls.hooked || gmt_tls.guard)
		return;
	device = gmt_cur_device();
	if (device < 0 || device >= GMT_MAX_DEVICES)
		return;
	now = gmt_now_ns();
	last = atomic_load_explicit(&last_sample[device], memory_order_relaxed);
	if (!always && last != 0) {
		gap = boundary_fixed ? boundary_period_ns
				     : BOUNDARY_COST_FACTOR *
					       atomic_load_explicit(&boundary_cost[device], memory_order_relaxed);
		if (gap > BOUNDARY_AUTO_MAX_NS && !boundary_fixed)
			gap = BOUNDARY_AUTO_MAX_NS;
		if (now - last < gap)
			return;
	}
	/* A boundary sample also restarts the synchronisations' period. */
	atomic_store_explicit(&last_sample[device], now, memory_order_relaxed);
	emit_samples(device, NULL, 0);
	atomic_store_explicit(&boundary_cost[device], gmt_now_ns() - now, memory_order_relaxed);
}
