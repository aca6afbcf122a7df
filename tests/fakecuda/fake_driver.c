/* fake_driver.c - a test double of the CUDA driver (libcuda.so.1).
 *
 * Device memory is never backed. Each device owns a 1 TiB range of virtual
 * address space reserved PROT_NONE at start (one more range serves
 * cuMemAddressReserve), so a fake device address can never equal a host
 * address, yet looks like what the real driver hands out. Addresses are
 * placed by a bump pointer plus per-size LIFO free lists: freeing a block and
 * allocating the same rounded size again returns the same address at once,
 * from any thread, which is what the tracer's reuse tests need.
 *
 * Accounting is exact and documented in tests/fakecuda/README.md: every
 * number the tests expect (cuMemGetInfo, pool attributes) follows from the
 * rules there. One mutex guards all state; the current context stack is per
 * thread.
 *
 * Look-ups: cuGetProcAddress(_v2) answer from one table of (name, minimum
 * CUDA version, legacy implementation, per-thread-stream implementation),
 * picking the newest entry not newer than the requested version, and return
 * the address of the exported symbol of that exact name (taken through hidden
 * aliases, so an LD_PRELOADed definition of the same name cannot leak into
 * the answer: dlsym on this library's handle would not return it either).
 *
 * NVIDIA's private export tables are not reimplemented: cuGetExportTable
 * answers CUDA_ERROR_NOT_SUPPORTED.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fakecuda_internal.h"

#define FK_MAX_DEV 8
#define FK_REGION ((uintptr_t)1 << 40)
#define FK_VMM_REGION FK_MAX_DEV /* index of the cuMemAddressReserve range */
#define FK_CTX_STACK 16

enum { MAGIC_CTX = 0x43545846, MAGIC_STREAM = 0x53545246, MAGIC_EVENT = 0x45565446,
       MAGIC_POOL = 0x504f4f46, MAGIC_PHYS = 0x50485946, MAGIC_GRAPH = 0x48505247,
       MAGIC_GEXEC = 0x58454747 };

/* K_GRAPH: a stream-ordered allocation made while its stream was being
 * captured: a graph memory node's address, backed from the device's graph
 * memory pool when the graph runs. K_OPENED: a block of another process
 * opened here (IPC, a pool's exported pointer): charges nothing. */
enum fk_kind { K_PLAIN, K_PITCH, K_MANAGED, K_POOL, K_HOST, K_GRAPH, K_OPENED };

struct CUctx_st {
	uint32_t magic;
	int device;
	int primary;
	int active;	/* primary: retained at least once and not reset */
	unsigned refs;	/* primary retain count */
	unsigned flags;
};

struct CUstream_st {
	uint32_t magic;
	int device;
	unsigned flags;
	int priority;
	CUcontext ctx;
	struct CUgraph_st *capture;   /* the graph being captured, or NULL */
};

/* A captured graph: only what its memory nodes need. live: the bytes of
 * its allocations during capture (freed ones taken off), peak: their most,
 * escape: those still live at the end (freed after the graph runs). */
struct CUgraph_st {
	uint32_t magic;
	int device;
	uint64_t live, peak, escape;
	int global;             /* captured in CU_STREAM_CAPTURE_MODE_GLOBAL */
	uint64_t unsafe_at;     /* S.unsafe_calls when the capture began */
};

struct CUgraphExec_st {
	uint32_t magic;
	struct CUgraph_st graph;
};

struct CUevent_st {
	uint32_t magic;
	int recorded;
	int device;
	uintptr_t key;
	uint64_t seq;
};

/* device: the pool's device, or -1 for a pool located in host memory or a
 * managed pool without a preferred device; charges: its reserve counts in
 * its device's used bytes (device-located pinned pools only); region: the
 * address range its blocks come from (FK_VMM_REGION when not a device's). */
struct CUmemPoolHandle_st {
	uint32_t magic;
	int device;
	int charges, region;
	CUmemLocationType loc_type;
	CUmemAllocationType alloc_type;
	int is_default;
	int destroyed;
	uint64_t reserved, used, reserved_high, used_high, threshold, max_size;
	int reuse[3];
	struct CUmemPoolHandle_st *next;
};

/* A physical allocation, or (alias set) a handle imported from another's
 * shareable handle - the same memory, charged once, kept alive by a
 * reference on it - or (multicast set) a multicast object, which charges
 * nothing: the memory bound to it is the devices' own. */
struct fk_phys {
	uint32_t magic;
	int device;
	size_t size;
	unsigned refs;	/* cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease */
	unsigned maps;
	CUmemAllocationProp prop;
	struct fk_phys *alias;
	int multicast;
	unsigned bound;	/* multicast: bindings */
};

struct fk_alloc {
	uintptr_t addr;
	size_t size, rounded;
	int device;
	int kind;
	int pending;	/* a cuMemFreeAsync waits for its stream */
	CUmemoryPool pool;
	CUcontext ctx;
	struct fk_alloc *next;
};

struct fk_bin {
	size_t size;
	uintptr_t *addr;
	size_t n, cap;
	struct fk_bin *next;
};

struct fk_region {
	uintptr_t base, next, end;
	struct fk_bin *bins[256];
};

struct fk_range { uintptr_t base; size_t size; };
struct fk_map { uintptr_t va; size_t size; struct fk_phys *phys; };
struct fk_pending { struct fk_alloc *a; uintptr_t key; int device; uint64_t seq; };

struct fk_vec { void *v; size_t n, cap, elem; };

static struct {
	pthread_mutex_t mu;
	int initialized;	/* cuInit called */
	int ndev;
	uint64_t total, ctx_bytes;
	int driver_version;
	int proc_internal;	/* GMT_FAKE_PROC_INTERNAL: look-ups answer internal entry points */
	int pool_recycle;	/* GMT_FAKE_POOL_RECYCLE: a new pool reuses the last freed one */
	CUmemoryPool recycled;	/* that pool (its memory), NULL when none */
	uint64_t used[FK_MAX_DEV];
	/* each device's graph memory pool (cuDeviceGetGraphMemAttribute) */
	uint64_t graph_reserved[FK_MAX_DEV], graph_reserved_high[FK_MAX_DEV];
	uint64_t graph_used[FK_MAX_DEV], graph_used_high[FK_MAX_DEV];
	/* captures in global mode going on, and "potentially unsafe" calls
	 * made meanwhile by a thread not in relaxed mode (each invalidates
	 * them) */
	int global_captures;
	uint64_t unsafe_calls;
	struct CUctx_st primary[FK_MAX_DEV];
	struct CUmemPoolHandle_st *default_pool[FK_MAX_DEV], *cur_pool[FK_MAX_DEV];
	/* the default (and current) host pool and managed pool of the process */
	struct CUmemPoolHandle_st *host_pool, *managed_pool;
	struct CUmemPoolHandle_st *pools;
	struct fk_region region[FK_MAX_DEV + 1];
	struct fk_alloc **tab;
	size_t tab_size, tab_count;
	struct fk_alloc *free_nodes;
	struct fk_vec resv, maps, pending;
	uint64_t seq;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t S_once = PTHREAD_ONCE_INIT;
static __thread CUcontext tls_stack[FK_CTX_STACK];
static __thread int tls_depth;
static __thread char tls_ptds_marker;	/* its address names this thread's default stream */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "fakecuda: ignoring %s=%s (not a number)\n", name, s);
		return def;
	}
	return v;
}

static void fork_prepare(void) { pthread_mutex_lock(&S.mu); }
static void fork_release(void) { pthread_mutex_unlock(&S.mu); }

static void state_init(void)
{
	uint64_t n = env_u64("GMT_FAKE_DEVICES", 1);
	uintptr_t base;
	void *p;

	S.ndev = n < 1 ? 1 : n > FK_MAX_DEV ? FK_MAX_DEV : (int)n;
	S.total = env_u64("GMT_FAKE_MEM_BYTES", 17179869184ull);
	S.ctx_bytes = env_u64("GMT_FAKE_CONTEXT_BYTES", 0);
	S.driver_version = (int)env_u64("GMT_FAKE_DRIVER_VERSION", 13000);
	S.proc_internal = env_u64("GMT_FAKE_PROC_INTERNAL", 0) != 0;
	S.pool_recycle = env_u64("GMT_FAKE_POOL_RECYCLE", 0) != 0;
	/* Address space only: PROT_NONE + MAP_NORESERVE costs no memory and
	 * keeps host allocations out of the fake device ranges. Without it
	 * (ulimit -v), fall back to numbers above the user address space. */
	p = mmap(NULL, FK_REGION * (FK_MAX_DEV + 1), PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	base = p == MAP_FAILED ? (uintptr_t)0x100000000000000ull : (uintptr_t)p;
	for (int i = 0; i <= FK_MAX_DEV; i++) {
		/* Keep address 0 of each range unused: 0 means NULL. */
		S.region[i].base = base + (uintptr_t)i * FK_REGION;
		S.region[i].next = S.region[i].base + FK_GRANULE;
		S.region[i].end = S.region[i].base + FK_REGION;
	}
	for (int i = 0; i < FK_MAX_DEV; i++) {
		S.primary[i].magic = MAGIC_CTX;
		S.primary[i].device = i;
		S.primary[i].primary = 1;
	}
	S.tab_size = 1024;
	S.tab = calloc(S.tab_size, sizeof(*S.tab));
	S.resv.elem = sizeof(struct fk_range);
	S.maps.elem = sizeof(struct fk_map);
	S.pending.elem = sizeof(struct fk_pending);
	/* A child forked while another thread held the lock can still call in. */
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void lock(void)
{
	pthread_once(&S_once, state_init);
	pthread_mutex_lock(&S.mu);
}

static void unlock(void)
{
	pthread_mutex_unlock(&S.mu);
}

/* ---- small containers ---------------------------------------------------- */

static void *vec_push(struct fk_vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *nv = realloc(v->v, cap * v->elem);

		if (!nv)
			return NULL;
		v->v = nv;
		v->cap = cap;
	}
	return (char *)v->v + v->elem * v->n++;
}

static void vec_del(struct fk_vec *v, size_t i)
{
	char *b = v->v;

	memmove(b + i * v->elem, b + (i + 1) * v->elem, (v->n - i - 1) * v->elem);
	v->n--;
}

#define VEC_AT(vec, type, i) (((type *)(vec).v)[i])

static size_t hash_addr(uintptr_t a, size_t size)
{
	return (size_t)(((uint64_t)(a >> 9) * 0x9E3779B97F4A7C15ull) >> 20) & (size - 1);
}

static void tab_grow(void)
{
	size_t nsize = S.tab_size * 2;
	struct fk_alloc **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (size_t i = 0; i < S.tab_size; i++) {
		struct fk_alloc *a = S.tab[i], *nx;

		for (; a; a = nx) {
			size_t h = hash_addr(a->addr, nsize);

			nx = a->next;
			a->next = nt[h];
			nt[h] = a;
		}
	}
	free(S.tab);
	S.tab = nt;
	S.tab_size = nsize;
}

static struct fk_alloc *tab_insert(uintptr_t addr)
{
	struct fk_alloc *a = S.free_nodes;
	size_t h;

	if (a)
		S.free_nodes = a->next;
	else if (!(a = malloc(sizeof(*a))))
		return NULL;
	memset(a, 0, sizeof(*a));
	a->addr = addr;
	if (S.tab_count >= S.tab_size * 2)
		tab_grow();
	h = hash_addr(addr, S.tab_size);
	a->next = S.tab[h];
	S.tab[h] = a;
	S.tab_count++;
	return a;
}

static struct fk_alloc *tab_find(uintptr_t addr)
{
	struct fk_alloc *a = S.tab[hash_addr(addr, S.tab_size)];

	while (a && a->addr != addr)
		a = a->next;
	return a;
}

/* Finds the allocation containing addr (slow path: interior pointers). */
static struct fk_alloc *tab_find_range(uintptr_t addr)
{
	struct fk_alloc *a = tab_find(addr);

	if (a)
		return a;
	for (size_t i = 0; i < S.tab_size; i++)
		for (a = S.tab[i]; a; a = a->next)
			if (addr >= a->addr && addr < a->addr + (a->size ? a->size : 1))
				return a;
	return NULL;
}

static void tab_remove(struct fk_alloc *x)
{
	struct fk_alloc **pp = &S.tab[hash_addr(x->addr, S.tab_size)];

	while (*pp && *pp != x)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = x->next;
		S.tab_count--;
	}
	x->next = S.free_nodes;
	S.free_nodes = x;
}

/* ---- address placement ---------------------------------------------------- */

static struct fk_bin *bin_get(struct fk_region *r, size_t size, int create)
{
	size_t h = (size_t)((size * 0x9E3779B97F4A7C15ull) >> 56);
	struct fk_bin *b = r->bins[h];

	while (b && b->size != size)
		b = b->next;
	if (!b && create && (b = calloc(1, sizeof(*b)))) {
		b->size = size;
		b->next = r->bins[h];
		r->bins[h] = b;
	}
	return b;
}

/* Returns an address for size bytes (already rounded) aligned to align, or 0
 * when the range is exhausted. Freed addresses of the same size come back
 * last-in first-out. */
static uintptr_t va_alloc(int region, size_t size, size_t align)
{
	struct fk_region *r = &S.region[region];
	struct fk_bin *b = bin_get(r, size, 0);
	uintptr_t a;

	if (b && b->n && b->addr[b->n - 1] % align == 0)
		return b->addr[--b->n];
	a = fk_roundup(r->next, align);
	if (a + size > r->end || a + size < a)
		return 0;
	r->next = a + size;
	return a;
}

static void va_free(int region, uintptr_t a, size_t size)
{
	struct fk_bin *b = bin_get(&S.region[region], size, 1);

	if (!b)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		uintptr_t *na = realloc(b->addr, cap * sizeof(*na));

		if (!na)
			return;
		b->addr = na;
		b->cap = cap;
	}
	b->addr[b->n++] = a;
}

static int region_of(uintptr_t a)
{
	for (int i = 0; i <= FK_MAX_DEV; i++)
		if (a >= S.region[i].base && a < S.region[i].end)
			return i;
	return -1;
}

/* ---- accounting ----------------------------------------------------------- */

static int charge(int dev, uint64_t bytes)
{
	if (bytes > S.total || S.used[dev] > S.total - bytes)
		return -1;
	S.used[dev] += bytes;
	return 0;
}

static void uncharge(int dev, uint64_t bytes)
{
	S.used[dev] -= bytes;
}

static CUcontext cur_ctx(void)
{
	return tls_depth ? tls_stack[tls_depth - 1] : NULL;
}

static int valid_ctx(CUcontext c)
{
	return c && c->magic == MAGIC_CTX;
}

static int valid_dev(CUdevice d)
{
	return d >= 0 && d < S.ndev;
}

/* ---- initialisation, devices --------------------------------------------- */

CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	S.initialized = 1;
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&S_once, state_init);
	*v = S.driver_version;
	return CUDA_SUCCESS;
}

/* Every device query below needs cuInit first, like the real driver. */
static CUresult need_dev(CUdevice d)
{
	pthread_once(&S_once, state_init);
	if (!S.initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	return valid_dev(d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetCount(int *count)
{
	CUresult r = need_dev(0);

	if (r == CUDA_SUCCESS && !count)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*count = S.ndev;
	return r;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	CUresult r = need_dev(ordinal);

	if (r == CUDA_SUCCESS && !dev)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*dev = ordinal;
	return r;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && (!name || len <= 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		snprintf(name, (size_t)len, "Fake GPU %d", dev);
	return r;
}

/* UUID: "gmtfake-" then seven zero bytes then the ordinal. */
static CUresult get_uuid(CUuuid *uuid, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && !uuid)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		memset(uuid->bytes, 0, sizeof(uuid->bytes));
		memcpy(uuid->bytes, "gmtfake-", 8);
		uuid->bytes[15] = (char)dev;
	}
	return r;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return get_uuid(uuid, dev);
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return get_uuid(uuid, dev);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && (!pciBusId || len <= 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", dev + 1);
	return r;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && !bytes)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*bytes = S.total;
	return r;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && !pi)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = dev + 1; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
		*pi = 1;
		break;
	default: *pi = 0; break;
	}
	return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------- */

static void ctx_release_allocs(CUcontext c);

static void stack_set(CUcontext c)
{
	if (tls_depth)
		tls_stack[tls_depth - 1] = c;
	else if (c)
		tls_stack[tls_depth++] = c;
	if (!c && tls_depth == 1)
		tls_depth = 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = need_dev(dev);
	struct CUctx_st *c;

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	c = &S.primary[dev];
	if (!c->active) {
		if (charge(dev, S.ctx_bytes)) {
			unlock();
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		c->active = 1;
	}
	c->refs++;
	unlock();
	*pctx = c;
	return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev, int reset)
{
	CUresult r = need_dev(dev);
	struct CUctx_st *c;

	if (r != CUDA_SUCCESS)
		return r;
	lock();
	c = &S.primary[dev];
	/* A reset destroys the context but keeps its references (retained,
	 * inactive until used again; releasing it afterwards is safe); the
	 * last release destroys it. */
	if (!reset && c->refs == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if ((reset || --c->refs == 0) && c->active) {
		c->active = 0;
		uncharge(dev, S.ctx_bytes);
		ctx_release_allocs(c);
	}
	unlock();
	return r;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return primary_release(dev, 0); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return primary_release(dev, 0); }
CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return primary_release(dev, 1); }
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return primary_release(dev, 1); }

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && (!flags || !active))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	*flags = S.primary[dev].flags;
	*active = S.primary[dev].active;
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS) {
		lock();
		S.primary[dev].flags = flags;
		unlock();
	}
	return r;
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUresult r = need_dev(dev);
	struct CUctx_st *c;

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && tls_depth == FK_CTX_STACK)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	if (!(c = calloc(1, sizeof(*c))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	if (charge(dev, S.ctx_bytes)) {
		unlock();
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	unlock();
	c->magic = MAGIC_CTX;
	c->device = dev;
	c->active = 1;
	c->flags = flags;
	tls_stack[tls_depth++] = c;	/* a new context is pushed, as in the real driver */
	*pctx = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
			unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
			CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

static CUresult ctx_destroy(CUcontext c)
{
	if (!valid_ctx(c) || c->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	lock();
	uncharge(c->device, S.ctx_bytes);
	ctx_release_allocs(c);
	unlock();
	for (int i = 0; i < tls_depth; i++)
		if (tls_stack[i] == c) {
			memmove(&tls_stack[i], &tls_stack[i + 1],
				(size_t)(tls_depth - i - 1) * sizeof(tls_stack[0]));
			tls_depth--;
			i--;
		}
	c->magic = 0;
	free(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx) { return ctx_destroy(ctx); }
CUresult cuCtxDestroy_v2(CUcontext ctx) { return ctx_destroy(ctx); }

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx && !valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	stack_set(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = cur_ctx();
	return CUDA_SUCCESS;
}

static CUresult ctx_push(CUcontext ctx)
{
	if (!valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (tls_depth == FK_CTX_STACK)
		return CUDA_ERROR_INVALID_VALUE;
	tls_stack[tls_depth++] = ctx;
	return CUDA_SUCCESS;
}

static CUresult ctx_pop(CUcontext *pctx)
{
	if (!tls_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_depth--;
	if (pctx)
		*pctx = tls_stack[tls_depth];
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx) { return ctx_push(ctx); }
CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return ctx_push(ctx); }
CUresult cuCtxPopCurrent(CUcontext *pctx) { return ctx_pop(pctx); }
CUresult cuCtxPopCurrent_v2(CUcontext *pctx) { return ctx_pop(pctx); }

static CUresult ctx_device(CUdevice *device, CUcontext ctx)
{
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx)
		ctx = cur_ctx();
	if (!valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = ctx->device;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) { return ctx_device(device, NULL); }
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx) { return ctx_device(device, ctx); }

/* The device of the calling thread's current context, or -1. */
static int cur_dev(void)
{
	CUcontext c = cur_ctx();

	return valid_ctx(c) ? c->device : -1;
}

/* ---- pools and stream-ordered frees -------------------------------------- */

static int valid_pool(CUmemoryPool p)
{
	return p && p->magic == MAGIC_POOL && !p->destroyed;
}

static void pool_bump_high(CUmemoryPool p)
{
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
	if (p->used > p->used_high)
		p->used_high = p->used;
}

static void pool_unlink_free(CUmemoryPool p)
{
	CUmemoryPool *pp = &S.pools;

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	if (p->charges)
		uncharge(p->device, p->reserved);
	p->magic = 0;
	if (S.pool_recycle) {
		free(S.recycled);
		S.recycled = p;	/* the next pool gets this handle */
	} else {
		free(p);
	}
}

/* Shrinks reserved to the smallest whole number of granules holding keep. */
static void pool_trim(CUmemoryPool p, uint64_t keep)
{
	uint64_t target;

	if (keep >= p->reserved)
		return;
	target = fk_roundup(keep, FK_GRANULE);
	if (target < p->reserved) {
		if (p->charges)
			uncharge(p->device, p->reserved - target);
		p->reserved = target;
	}
}

static void pools_trim_all(void)
{
	for (CUmemoryPool p = S.pools; p; p = p->next)
		pool_trim(p, p->used > p->threshold ? p->used : p->threshold);
}

/* A pool of dev (-1: host memory or a managed pool with no device). */
static CUmemoryPool pool_new(int dev, CUmemLocationType loc, CUmemAllocationType type)
{
	CUmemoryPool p = S.recycled;

	if (p != NULL) {
		S.recycled = NULL;
		memset(p, 0, sizeof(*p));
	} else if ((p = calloc(1, sizeof(*p))) == NULL) {
		return NULL;
	}
	p->magic = MAGIC_POOL;
	p->device = dev;
	p->loc_type = loc;
	p->alloc_type = type;
	p->charges = dev >= 0 && loc == CU_MEM_LOCATION_TYPE_DEVICE && type == CU_MEM_ALLOCATION_TYPE_PINNED;
	p->region = p->charges ? dev : FK_VMM_REGION;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
	p->next = S.pools;
	S.pools = p;
	return p;
}

static CUmemoryPool default_pool(int dev)
{
	if (!S.default_pool[dev]) {
		S.default_pool[dev] = pool_new(dev, CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_ALLOCATION_TYPE_PINNED);
		if (S.default_pool[dev])
			S.default_pool[dev]->is_default = 1;
		S.cur_pool[dev] = S.default_pool[dev];
	}
	return S.cur_pool[dev];
}

/* Releases a block for good: accounting, address reuse, table. */
static void alloc_release(struct fk_alloc *a)
{
	if (a->kind == K_POOL) {
		CUmemoryPool p = a->pool;

		p->used -= a->rounded;
		if (p->destroyed && p->used == 0)
			pool_unlink_free(p);
	} else if (a->kind == K_GRAPH) {
		/* back to the graph memory pool, which keeps it reserved */
		S.graph_used[a->device] -= a->rounded;
	} else if (a->kind == K_OPENED) {
		/* another's memory opened here: nothing to give back */
	} else {
		uncharge(a->device, a->rounded);
	}
	va_free(region_of(a->addr), a->addr, a->rounded);
	tab_remove(a);
}

enum { SYNC_STREAM, SYNC_EVENT, SYNC_DEVICE };

/* Completes the pending frees a synchronisation covers, then trims every
 * pool (see README: "Stream-ordered allocations"). */
static void sync_complete(int how, uintptr_t key, int device, uint64_t before)
{
	struct fk_vec *v = &S.pending;

	for (size_t i = 0; i < v->n;) {
		struct fk_pending *e = &VEC_AT(*v, struct fk_pending, i);
		int hit = how == SYNC_DEVICE ? e->device == device
			: e->key == key && (how == SYNC_STREAM || e->seq < before);

		if (hit) {
			alloc_release(e->a);
			vec_del(v, i);
		} else {
			i++;
		}
	}
	pools_trim_all();
}

/* A context destroyed (cuCtxDestroy, the primary's last release or reset)
 * takes what was allocated in it: device, managed and stream-ordered blocks
 * (with their pending frees; the pools are trimmed after) and pinned host
 * memory. VMM allocations belong to no context and stay. Called locked. */
static void ctx_release_allocs(CUcontext c)
{
	struct fk_vec *v = &S.pending;

	for (size_t i = 0; i < v->n;) {
		if (VEC_AT(*v, struct fk_pending, i).a->ctx == c)
			vec_del(v, i);
		else
			i++;
	}
	for (size_t i = 0; i < S.tab_size; i++) {
		struct fk_alloc *a = S.tab[i], *nx;

		for (; a; a = nx) {
			nx = a->next;
			/* graph memory belongs to the device's graph pool */
			if (a->ctx != c || a->kind == K_GRAPH)
				continue;
			if (a->kind == K_HOST) {
				void *p = (void *)a->addr;

				tab_remove(a);
				free(p);
			} else {
				alloc_release(a);
			}
		}
	}
	pools_trim_all();
}

/* Stream keys: created streams by handle, the legacy stream 1, the
 * per-thread default stream by the address of a thread-local byte. */
static uintptr_t stream_key(CUstream s, int ptds)
{
	if (!s)
		s = ptds ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (s == CU_STREAM_LEGACY)
		return 1;
	if (s == CU_STREAM_PER_THREAD)
		return (uintptr_t)&tls_ptds_marker;
	return (uintptr_t)s;
}

static int is_builtin_stream(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* Device a stream works on; -1 (and *err) if none. */
static int stream_device(CUstream s, CUresult *err)
{
	if (is_builtin_stream(s)) {
		int d = cur_dev();

		*err = d < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
		return d;
	}
	if (s->magic != MAGIC_STREAM) {
		*err = CUDA_ERROR_INVALID_HANDLE;
		return -1;
	}
	*err = CUDA_SUCCESS;
	return s->device;
}

/* sdev: the device of the stream (the block's device when the pool has
 * none: a host or managed pool). */
static CUresult pool_alloc(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool p, CUcontext ctx, int sdev)
{
	size_t r = fk_roundup(bytesize, FK_ALIGN);
	uint64_t grow = 0;
	uintptr_t a;
	struct fk_alloc *rec;

	if (r > p->reserved - p->used) {
		grow = fk_roundup(r, FK_GRANULE);
		if (p->max_size && p->reserved + grow > p->max_size)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (p->charges && charge(p->device, grow))
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a = va_alloc(p->region, r, FK_ALIGN);
	if (!a || !(rec = tab_insert(a))) {
		if (a)
			va_free(p->region, a, r);
		if (p->charges)
			uncharge(p->device, grow);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->reserved += grow;
	p->used += r;
	pool_bump_high(p);
	rec->size = bytesize;
	rec->rounded = r;
	rec->device = p->device >= 0 ? p->device : sdev;
	rec->kind = K_POOL;
	rec->pool = p;
	rec->ctx = ctx;
	*dptr = a;
	return CUDA_SUCCESS;
}

/* During capture: a memory node. Its address is reserved now; no memory is
 * used until the graph runs (cuGraphLaunch). Called locked. */
static CUresult graph_alloc(CUdeviceptr *dptr, size_t bytesize, struct CUgraph_st *g)
{
	size_t r = fk_roundup(bytesize, FK_ALIGN);
	uintptr_t a = va_alloc(g->device, r, FK_ALIGN);
	struct fk_alloc *rec;

	if (!a || !(rec = tab_insert(a))) {
		if (a)
			va_free(g->device, a, r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rec->size = bytesize;
	rec->rounded = r;
	rec->device = g->device;
	rec->kind = K_GRAPH;
	rec->ctx = cur_ctx();
	g->live += r;
	if (g->live > g->peak)
		g->peak = g->live;
	*dptr = a;
	return CUDA_SUCCESS;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
			    CUstream s, int ptds)
{
	CUresult r;
	int dev;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	dev = stream_device(s, &r);
	if (r == CUDA_SUCCESS && !is_builtin_stream(s) && s->capture) {
		r = graph_alloc(dptr, bytesize, s->capture);
		unlock();
		return r;
	}
	if (r == CUDA_SUCCESS) {
		if (!pool)
			pool = default_pool(dev);
		if (!valid_pool(pool))
			r = CUDA_ERROR_INVALID_VALUE;
		else
			r = pool_alloc(dptr, bytesize, pool, cur_ctx(), dev);
	}
	unlock();
	(void)ptds;	/* the stream only decides when a free completes */
	return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
	return alloc_async(dptr, bytesize, NULL, s, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
	return alloc_async(dptr, bytesize, NULL, s, 1);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
	return pool ? alloc_async(dptr, bytesize, pool, s, 0) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				      CUstream s)
{
	return pool ? alloc_async(dptr, bytesize, pool, s, 1) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult free_async(CUdeviceptr dptr, CUstream s, int ptds)
{
	struct fk_alloc *a;
	struct fk_pending *e;
	CUresult r = CUDA_SUCCESS;

	lock();
	a = tab_find(dptr);
	if (!a || a->kind == K_HOST || a->pending)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!is_builtin_stream(s) && s->magic != MAGIC_STREAM)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (!is_builtin_stream(s) && s->capture) {
		/* a free node: the graph's own allocation is gone within it */
		if (a->kind != K_GRAPH)
			r = CUDA_ERROR_INVALID_VALUE;
		else {
			s->capture->live -= a->rounded;
			va_free(region_of(a->addr), a->addr, a->rounded);
			tab_remove(a);
		}
	} else if (!(e = vec_push(&S.pending)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		a->pending = 1;
		e->a = a;
		e->key = stream_key(s, ptds);
		e->device = a->device;
		e->seq = ++S.seq;
	}
	unlock();
	return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) { return free_async(dptr, s, 0); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s) { return free_async(dptr, s, 1); }

/* The device a (location, allocation type) names: its ordinal, -1 for host
 * memory or a managed pool without a preferred device, -2 if invalid
 * (*err says why). As documented for cuMemPoolCreate and cuMemGetMemPool:
 * pinned pools on a device, on the host or a host NUMA node; managed pools
 * on a device, the host, or nowhere in particular. */
static int location_device(const CUmemLocation *loc, CUmemAllocationType type, CUresult *err)
{
	*err = CUDA_ERROR_INVALID_VALUE;
	if (!loc || (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED))
		return -2;
	switch (loc->type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		if ((*err = need_dev(loc->id)) != CUDA_SUCCESS)
			return -2;
		return loc->id;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
		break;
	case CU_MEM_LOCATION_TYPE_NONE:
		if (type != CU_MEM_ALLOCATION_TYPE_MANAGED)
			return -2;
		break;
	default:
		return -2;
	}
	pthread_once(&S_once, state_init);
	*err = S.initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
	return *err == CUDA_SUCCESS ? -1 : -2;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	CUresult r;
	CUmemoryPool p;
	int dev;

	if (!pool || !props)
		return CUDA_ERROR_INVALID_VALUE;
	if ((dev = location_device(&props->location, props->allocType, &r)) < -1)
		return r;
	lock();
	p = pool_new(dev, props->location.type, props->allocType);
	if (p)
		p->max_size = props->maxSize;
	unlock();
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pool = p;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult r = CUDA_SUCCESS;

	lock();
	if (!valid_pool(pool) || pool->is_default) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		if (pool->device >= 0 && S.cur_pool[pool->device] == pool)
			S.cur_pool[pool->device] = S.default_pool[pool->device];
		pool->destroyed = 1;
		if (pool->used == 0)
			pool_unlink_free(pool);	/* else when its last block is freed */
	}
	unlock();
	return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r = CUDA_SUCCESS;

	lock();
	if (!valid_pool(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		pool_trim(pool, pool->used > minBytesToKeep ? pool->used : minBytesToKeep);
	unlock();
	return r;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult r = CUDA_SUCCESS;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if (!valid_pool(pool)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
			pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
				*(int *)value;
			break;
		case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
			pool->threshold = *(cuuint64_t *)value;
			break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
			if (*(cuuint64_t *)value)
				r = CUDA_ERROR_INVALID_VALUE;
			else
				pool->reserved_high = pool->reserved;
			break;
		case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
			if (*(cuuint64_t *)value)
				r = CUDA_ERROR_INVALID_VALUE;
			else
				pool->used_high = pool->used;
			break;
		default:
			r = CUDA_ERROR_INVALID_VALUE;
		}
	}
	unlock();
	return r;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult r = CUDA_SUCCESS;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if (!valid_pool(pool)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
			*(int *)value =
				pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
			break;
		case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = pool->threshold; break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = pool->reserved; break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = pool->reserved_high; break;
		case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = pool->used; break;
		case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = pool->used_high; break;
		default: r = CUDA_ERROR_INVALID_VALUE;
		}
	}
	unlock();
	return r;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && !pool)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	default_pool(dev);
	*pool = S.default_pool[dev];
	unlock();
	return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r == CUDA_SUCCESS && !pool)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	*pool = default_pool(dev);
	unlock();
	return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	CUresult r = need_dev(dev);

	if (r != CUDA_SUCCESS)
		return r;
	lock();
	default_pool(dev);
	if (!valid_pool(pool) || !pool->charges)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (pool->device != dev)
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		S.cur_pool[dev] = pool;
	unlock();
	return r;
}

/* The process's host pool or managed pool (one each, whatever the host
 * NUMA node or preferred location asked for). Called locked. */
static CUmemoryPool other_pool(CUmemAllocationType type)
{
	CUmemoryPool *pp = type == CU_MEM_ALLOCATION_TYPE_MANAGED ? &S.managed_pool : &S.host_pool;

	if (!*pp && (*pp = pool_new(-1, type == CU_MEM_ALLOCATION_TYPE_MANAGED ? CU_MEM_LOCATION_TYPE_NONE
								: CU_MEM_LOCATION_TYPE_HOST, type)))
		(*pp)->is_default = 1;
	return *pp;
}

/* cuMemGetDefaultMemPool / cuMemGetMemPool: a device's pinned pools are
 * the device's; a managed pool of a device is the process's managed pool. */
static CUresult loc_pool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type,
			 int current)
{
	CUresult r;
	int dev = location_device(location, type, &r);

	if (dev < -1)
		return r;
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if (dev >= 0 && type == CU_MEM_ALLOCATION_TYPE_PINNED)
		*pool_out = current ? default_pool(dev) : (default_pool(dev), S.default_pool[dev]);
	else
		*pool_out = other_pool(type);
	unlock();
	return *pool_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
	return loc_pool(pool_out, location, type, 0);
}

CUresult cuMemGetMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
	return loc_pool(pool_out, location, type, 1);
}

/* Only a device's pinned pool can be made current here (as
 * cuDeviceSetMemPool); other locations keep their default. */
CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
	CUresult r;
	int dev = location_device(location, type, &r);

	if (dev < -1)
		return r;
	if (dev >= 0 && type == CU_MEM_ALLOCATION_TYPE_PINNED)
		return cuDeviceSetMemPool(dev, pool);
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- streams and events --------------------------------------------------- */

static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	CUcontext c = cur_ctx();
	CUstream s;

	if (!ph || flags > CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_ctx(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!(s = calloc(1, sizeof(*s))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = MAGIC_STREAM;
	s->device = c->device;
	s->flags = flags;
	s->priority = priority;
	s->ctx = c;
	*ph = s;
	return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_create(ph, flags, 0);
}

CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority)
{
	return stream_create(ph, flags, priority);
}

/* The device and context a stream works on (the current context's for the
 * legacy and per-thread streams). */
static CUresult stream_get(CUstream s, CUdevice *device, CUcontext *pctx)
{
	CUresult r;
	int d;

	lock();
	d = stream_device(s, &r);
	if (r == CUDA_SUCCESS) {
		if (device)
			*device = d;
		if (pctx)
			*pctx = is_builtin_stream(s) ? cur_ctx() : s->ctx;
	}
	unlock();
	return r;
}

CUresult cuStreamGetDevice(CUstream s, CUdevice *device)
{
	return device ? stream_get(s, device, NULL) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *device)
{
	return device ? stream_get(s ? s : CU_STREAM_PER_THREAD, device, NULL) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
	return pctx ? stream_get(s, NULL, pctx) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx)
{
	return pctx ? stream_get(s ? s : CU_STREAM_PER_THREAD, NULL, pctx) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult stream_sync(CUstream s, int ptds)
{
	CUresult r;

	lock();
	stream_device(s, &r);
	if (r == CUDA_SUCCESS)
		sync_complete(SYNC_STREAM, stream_key(s, ptds), 0, 0);
	unlock();
	return r;
}

CUresult cuStreamSynchronize(CUstream s) { return stream_sync(s, 0); }
CUresult cuStreamSynchronize_ptsz(CUstream s) { return stream_sync(s, 1); }

/* ---- stream capture and graphs: their memory nodes only ------------------- *
 * A capture records, of all the graph API, only what memory nodes need: the
 * stream-ordered allocations and frees made on the capturing stream. The
 * device's graph memory pool backs them when the graph runs: cuGraphLaunch
 * grows its reserved bytes to what the graph needs on top of what is in use
 * (charged to the device), counts the allocations that outlive the graph as
 * used until they are freed, and cuDeviceGraphMemTrim gives back what is not
 * in use. */

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags);

/* A thread's capture mode (cuThreadExchangeStreamCaptureMode), global by
 * default as in the driver. */
static __thread CUstreamCaptureMode tls_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = tls_capture_mode;

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	tls_capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

/* A "potentially unsafe" call while a capture in global mode goes on, from a
 * thread not in relaxed mode: refused, and the captures are invalidated, as
 * the driver does. The double counts cuMemGetInfo among those calls (the
 * driver's list is not published in full): whatever the preload calls on
 * its own must not break a program's capture. Called locked. */
static CUresult unsafe_call(void)
{
	if (S.global_captures == 0 || tls_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	S.unsafe_calls++;
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

static CUresult begin_capture(CUstream s, CUstreamCaptureMode mode)
{
	CUresult r = CUDA_SUCCESS;
	struct CUgraph_st *g;

	if (is_builtin_stream(s))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	lock();
	if (s->magic != MAGIC_STREAM)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (s->capture)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else if (!(g = calloc(1, sizeof(*g))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		g->magic = MAGIC_GRAPH;
		g->device = s->device;
		g->global = mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
		g->unsafe_at = S.unsafe_calls;
		S.global_captures += g->global;
		s->capture = g;
	}
	unlock();
	return r;
}

CUresult cuStreamBeginCapture(CUstream s) { return begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL); }
CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) { return begin_capture(s, mode); }
CUresult cuStreamBeginCapture_ptsz(CUstream s) { return begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL); }
CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode) { return begin_capture(s, mode); }

static CUresult end_capture(CUstream s, CUgraph *pg)
{
	CUresult r = CUDA_SUCCESS;

	if (!pg)
		return CUDA_ERROR_INVALID_VALUE;
	if (is_builtin_stream(s))
		return CUDA_ERROR_ILLEGAL_STATE;
	lock();
	if (s->magic != MAGIC_STREAM)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (!s->capture)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else {
		struct CUgraph_st *g = s->capture;

		s->capture = NULL;
		S.global_captures -= g->global;
		if (g->global && S.unsafe_calls != g->unsafe_at) {
			g->magic = 0;
			free(g);
			r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		} else {
			g->escape = g->live;
			*pg = g;
		}
	}
	unlock();
	return r;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *pg) { return end_capture(s, pg); }
CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *pg) { return end_capture(s, pg); }

static CUresult is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	if (is_builtin_stream(s)) {
		*st = CU_STREAM_CAPTURE_STATUS_NONE;
		return CUDA_SUCCESS;
	}
	if (s->magic != MAGIC_STREAM)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	*st = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { return is_capturing(s, st); }
CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return is_capturing(s, st); }

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
	struct CUgraphExec_st *x;

	(void)flags;
	if (!exec || !g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(x = calloc(1, sizeof(*x))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->magic = MAGIC_GEXEC;
	x->graph = *g;
	*exec = x;
	return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec x, CUstream s)
{
	CUresult r = CUDA_SUCCESS;

	if (!x || x->magic != MAGIC_GEXEC)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	stream_device(s, &r);
	if (r == CUDA_SUCCESS) {
		const int d = x->graph.device;
		const uint64_t need = S.graph_used[d] + x->graph.peak;

		if (need > S.graph_reserved[d]) {
			if (charge(d, need - S.graph_reserved[d]))
				r = CUDA_ERROR_OUT_OF_MEMORY;
			else
				S.graph_reserved[d] = need;
		}
		if (r == CUDA_SUCCESS) {
			if (S.graph_reserved[d] > S.graph_reserved_high[d])
				S.graph_reserved_high[d] = S.graph_reserved[d];
			if (need > S.graph_used_high[d])
				S.graph_used_high[d] = need;
			S.graph_used[d] += x->graph.escape;
		}
	}
	unlock();
	return r;
}

CUresult cuGraphLaunch(CUgraphExec x, CUstream s) { return graph_launch(x, s); }
CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s) { return graph_launch(x, s); }

CUresult cuGraphExecDestroy(CUgraphExec x)
{
	if (!x || x->magic != MAGIC_GEXEC)
		return CUDA_ERROR_INVALID_VALUE;
	x->magic = 0;
	free(x);
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
	if (!g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	g->magic = 0;
	free(g);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
	CUresult r = need_dev(dev);
	cuuint64_t v;

	if (r == CUDA_SUCCESS && !value)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: v = S.graph_used[dev]; break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: v = S.graph_used_high[dev]; break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = S.graph_reserved[dev]; break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = S.graph_reserved_high[dev]; break;
	default: r = CUDA_ERROR_INVALID_VALUE; break;
	}
	unlock();
	if (r == CUDA_SUCCESS)
		*(cuuint64_t *)value = v;
	return r;
}

CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
	CUresult r = need_dev(dev);

	if (r != CUDA_SUCCESS)
		return r;
	lock();
	uncharge(dev, S.graph_reserved[dev] - S.graph_used[dev]);
	S.graph_reserved[dev] = S.graph_used[dev];
	unlock();
	return CUDA_SUCCESS;
}

/* Destroying a stream completes its pending frees, as a synchronisation. */
static CUresult stream_destroy(CUstream s)
{
	if (is_builtin_stream(s) || s->magic != MAGIC_STREAM)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	sync_complete(SYNC_STREAM, stream_key(s, 0), 0, 0);
	unlock();
	s->magic = 0;
	free(s);
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream s) { return stream_destroy(s); }
CUresult cuStreamDestroy_v2(CUstream s) { return stream_destroy(s); }

static CUresult stream_query(CUstream s)
{
	CUresult r;

	lock();
	stream_device(s, &r);
	unlock();
	return r;
}

CUresult cuStreamQuery(CUstream s) { return stream_query(s); }
CUresult cuStreamQuery_ptsz(CUstream s) { return stream_query(s); }

CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
	CUevent e;

	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_ctx(cur_ctx()))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!(e = calloc(1, sizeof(*e))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = MAGIC_EVENT;
	*ph = e;
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream s, int ptds)
{
	CUresult r;
	int dev;

	if (!e || e->magic != MAGIC_EVENT)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	dev = stream_device(s, &r);
	if (r == CUDA_SUCCESS) {
		e->recorded = 1;
		e->device = dev;
		e->key = stream_key(s, ptds);
		e->seq = ++S.seq;
	}
	unlock();
	return r;
}

CUresult cuEventRecord(CUevent e, CUstream s) { return event_record(e, s, 0); }
CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return event_record(e, s, 1); }

CUresult cuEventSynchronize(CUevent e)
{
	if (!e || e->magic != MAGIC_EVENT)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	if (e->recorded)
		sync_complete(SYNC_EVENT, e->key, 0, e->seq);
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent e)
{
	return e && e->magic == MAGIC_EVENT ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult event_destroy(CUevent e)
{
	if (!e || e->magic != MAGIC_EVENT)
		return CUDA_ERROR_INVALID_HANDLE;
	e->magic = 0;
	free(e);
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e) { return event_destroy(e); }
CUresult cuEventDestroy_v2(CUevent e) { return event_destroy(e); }

static CUresult ctx_sync(CUcontext c)
{
	if (!c)
		c = cur_ctx();
	if (!valid_ctx(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	lock();
	sync_complete(SYNC_DEVICE, 0, c->device, 0);
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return ctx_sync(NULL); }
CUresult cuCtxSynchronize_v2(CUcontext ctx) { return ctx_sync(ctx); }

/* ---- plain memory --------------------------------------------------------- */

/* Places and accounts a plain block on the current context's device. */
static CUresult plain_alloc(CUdeviceptr *dptr, size_t bytesize, size_t rounded, int kind)
{
	CUcontext c = cur_ctx();
	CUresult r = CUDA_SUCCESS;
	uintptr_t a = 0;
	struct fk_alloc *rec;

	if (!valid_ctx(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	lock();
	if (charge(c->device, rounded)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!(a = va_alloc(c->device, rounded, FK_ALIGN)) || !(rec = tab_insert(a))) {
		if (a)
			va_free(c->device, a, rounded);
		uncharge(c->device, rounded);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		rec->size = bytesize;
		rec->rounded = rounded;
		rec->device = c->device;
		rec->kind = kind;
		rec->ctx = c;
		*dptr = a;
	}
	unlock();
	return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	return plain_alloc(dptr, bytesize, fk_roundup(bytesize, FK_ALIGN), K_PLAIN);
}

/* 32-bit device pointers cannot hold the fake addresses. */
CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
			    size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch = fk_roundup(WidthInBytes, FK_ALIGN);
	CUresult r;

	if (!dptr || !pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = plain_alloc(dptr, pitch * Height, pitch * Height, K_PITCH);
	if (r == CUDA_SUCCESS)
		*pPitch = pitch;
	return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (!dptr || !bytesize || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	return plain_alloc(dptr, bytesize, fk_roundup(bytesize, FK_ALIGN), K_MANAGED);
}

static CUresult mem_free(CUdeviceptr dptr)
{
	struct fk_alloc *a;
	CUresult r = CUDA_SUCCESS;

	if (!dptr)
		return CUDA_SUCCESS;
	lock();
	a = tab_find(dptr);
	if (!a || a->kind == K_HOST || a->pending)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		alloc_release(a);
	unlock();
	return r;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) { return mem_free(dptr); }
CUresult cuMemFree(CUdeviceptr_v1 dptr) { return mem_free(dptr); }

static CUresult host_alloc(void **pp, size_t bytesize)
{
	void *p = NULL;
	struct fk_alloc *rec;

	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_ctx(cur_ctx()))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (posix_memalign(&p, 4096, bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	rec = tab_insert((uintptr_t)p);
	if (rec) {
		rec->size = rec->rounded = bytesize;
		rec->device = -1;
		rec->kind = K_HOST;
		rec->ctx = cur_ctx();
	}
	unlock();
	if (!rec) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) { return host_alloc(pp, bytesize); }

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	return host_alloc(pp, bytesize);
}

CUresult cuMemFreeHost(void *p)
{
	struct fk_alloc *a;

	lock();
	a = tab_find((uintptr_t)p);
	if (a && a->kind == K_HOST)
		tab_remove(a);
	unlock();
	if (!a || a->kind != K_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_, size_t *total)
{
	int d = cur_dev();

	if (!free_ || !total)
		return CUDA_ERROR_INVALID_VALUE;
	if (d < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	lock();
	CUresult r = unsafe_call();
	if (r == CUDA_SUCCESS) {
		*free_ = S.total - S.used[d];
		*total = S.total;
	}
	unlock();
	return r;
}

/* The mapping of a virtual-memory address, or NULL. Caller holds the lock. */
static struct fk_map *map_find(uintptr_t a)
{
	for (size_t i = 0; i < S.maps.n; i++) {
		struct fk_map *m = &VEC_AT(S.maps, struct fk_map, i);

		if (a >= m->va && a < m->va + m->size)
			return m;
	}
	return NULL;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	struct fk_alloc *a;
	struct fk_map *m;
	CUresult r = CUDA_SUCCESS;

	lock();
	if ((m = map_find(dptr))) {
		if (pbase)
			*pbase = m->va;
		if (psize)
			*psize = m->size;
	} else if ((a = tab_find_range(dptr)) && a->kind != K_HOST) {
		if (pbase)
			*pbase = a->addr;
		if (psize)
			*psize = a->size;
	} else {
		r = CUDA_ERROR_NOT_FOUND;
	}
	unlock();
	return r;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	struct fk_alloc *a = NULL;
	struct fk_map *m;
	CUresult r = CUDA_SUCCESS;
	uintptr_t base;
	size_t size;
	int dev, host;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if ((m = map_find(ptr))) {
		base = m->va, size = m->size, dev = m->phys->device, host = 0;
	} else if ((a = tab_find_range(ptr))) {
		base = a->addr, size = a->size, dev = a->device;
		host = a->kind == K_HOST || (a->kind == K_POOL && a->pool->loc_type != CU_MEM_LOCATION_TYPE_DEVICE &&
					     a->pool->alloc_type == CU_MEM_ALLOCATION_TYPE_PINNED);
	} else {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = host ? -1 : dev; break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = a ? a->ctx : NULL; break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = host ? (void *)(uintptr_t)ptr : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = base; break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = size; break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = a && (a->kind == K_MANAGED ||
					      (a->kind == K_POOL && a->pool->alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED));
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(CUmemoryPool *)data = a && a->kind == K_POOL ? a->pool : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned int *)data = 1; break;
	default: r = CUDA_ERROR_INVALID_VALUE;
	}
	unlock();
	return r;
}

/* Copies: real only between two host addresses; device memory has no bytes. */
static CUresult copy(uintptr_t dst, uintptr_t src, size_t n)
{
	pthread_once(&S_once, state_init);
	if (n && region_of(dst) < 0 && region_of(src) < 0)
		memmove((void *)dst, (const void *)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(dst, src, n);
}
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(dst, src, n);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return CUDA_SUCCESS; }

static CUresult memset8(CUdeviceptr dst, unsigned char uc, size_t n)
{
	pthread_once(&S_once, state_init);
	if (n && region_of(dst) < 0)
		memset((void *)dst, uc, n);
	return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n) { return memset8(dst, uc, n); }
CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n)
{
	return memset8(dst, uc, n);
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
	return memset8(dst, uc, n);
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
	return memset8(dst, uc, n);
}

/* ---- virtual memory management ------------------------------------------- */

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = FK_GRANULE;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	struct fk_range *rg;
	uintptr_t a;
	CUresult r = CUDA_SUCCESS;

	if (!ptr || !size || size % FK_GRANULE || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < FK_GRANULE)
		alignment = FK_GRANULE;
	lock();
	if (!(a = va_alloc(FK_VMM_REGION, size, alignment))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!(rg = vec_push(&S.resv))) {
		va_free(FK_VMM_REGION, a, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		rg->base = a;
		rg->size = size;
		*ptr = a;
	}
	unlock();
	return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	for (size_t i = 0; i < S.resv.n; i++) {
		struct fk_range *rg = &VEC_AT(S.resv, struct fk_range, i);

		if (rg->base != ptr || rg->size != size)
			continue;
		r = CUDA_SUCCESS;
		for (size_t j = 0; j < S.maps.n; j++) {
			struct fk_map *m = &VEC_AT(S.maps, struct fk_map, j);

			if (m->va >= ptr && m->va < ptr + size)
				r = CUDA_ERROR_INVALID_VALUE;	/* still mapped */
		}
		if (r == CUDA_SUCCESS) {
			va_free(FK_VMM_REGION, ptr, size);
			vec_del(&S.resv, i);
		}
		break;
	}
	unlock();
	return r;
}

static struct fk_phys *phys_of(CUmemGenericAllocationHandle h)
{
	struct fk_phys *p = (struct fk_phys *)(uintptr_t)h;

	return p && p->magic == MAGIC_PHYS && p->refs ? p : NULL;
}

/* Physical memory is given back once released and unmapped everywhere. */
static void phys_maybe_free(struct fk_phys *p)
{
	struct fk_phys *orig = p->alias;

	if (p->refs || p->maps)
		return;
	if (!orig && !p->multicast)
		uncharge(p->device, p->size);
	p->magic = 0;
	free(p);
	if (orig) {
		orig->refs--;
		phys_maybe_free(orig);
	}
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct fk_phys *p;
	CUresult r;

	if (!handle || !prop || !size || size % FK_GRANULE || flags ||
	    prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((r = need_dev(prop->location.id)) != CUDA_SUCCESS)
		return r;
	if (!(p = calloc(1, sizeof(*p))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	if (charge(prop->location.id, size)) {
		unlock();
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	unlock();
	p->magic = MAGIC_PHYS;
	p->device = prop->location.id;
	p->size = size;
	p->refs = 1;
	p->prop = *prop;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct fk_phys *p;
	CUresult r = CUDA_SUCCESS;

	lock();
	if (!(p = phys_of(handle))) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		p->refs--;
		phys_maybe_free(p);
	}
	unlock();
	return r;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct fk_phys *p;
	struct fk_map *m;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!size || size % FK_GRANULE || offset % FK_GRANULE || flags)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	p = phys_of(handle);
	if (!p || offset > p->size || size > p->size - offset)
		goto out;
	for (size_t i = 0; i < S.resv.n; i++) {
		struct fk_range *rg = &VEC_AT(S.resv, struct fk_range, i);

		if (ptr >= rg->base && ptr + size <= rg->base + rg->size)
			r = CUDA_SUCCESS;
	}
	for (size_t i = 0; r == CUDA_SUCCESS && i < S.maps.n; i++) {
		m = &VEC_AT(S.maps, struct fk_map, i);
		if (ptr < m->va + m->size && m->va < ptr + size)
			r = CUDA_ERROR_INVALID_VALUE;	/* overlaps a mapping */
	}
	if (r != CUDA_SUCCESS)
		goto out;
	if (!(m = vec_push(&S.maps))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	m->va = ptr;
	m->size = size;
	m->phys = p;
	p->maps++;
out:
	unlock();
	return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	for (size_t i = 0; i < S.maps.n; i++) {
		struct fk_map *m = &VEC_AT(S.maps, struct fk_map, i);

		if (m->va + m->size <= ptr || m->va >= ptr + size)
			continue;
		if (m->va < ptr || m->va + m->size > ptr + size) {
			r = CUDA_ERROR_INVALID_VALUE;	/* would split a mapping */
			goto out;
		}
	}
	for (size_t i = 0; i < S.maps.n;) {
		struct fk_map *m = &VEC_AT(S.maps, struct fk_map, i);

		if (m->va >= ptr && m->va + m->size <= ptr + size) {
			struct fk_phys *p = m->phys;

			vec_del(&S.maps, i);
			p->maps--;
			phys_maybe_free(p);
			r = CUDA_SUCCESS;
		} else {
			i++;
		}
	}
out:
	unlock();
	return r;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r;

	if (!desc || !count || !size)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	r = map_find(ptr) && map_find(ptr + size - 1) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	unlock();
	return r;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
						CUmemGenericAllocationHandle handle)
{
	struct fk_phys *p;
	CUresult r = CUDA_SUCCESS;

	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if ((p = phys_of(handle)))
		*prop = p->prop;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	unlock();
	return r;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct fk_map *m;
	CUresult r = CUDA_SUCCESS;

	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if ((m = map_find((uintptr_t)addr))) {
		m->phys->refs++;
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
	} else {
		r = CUDA_ERROR_INVALID_VALUE;
	}
	unlock();
	return r;
}

/* ---- errors ---------------------------------------------------------------- */

static const struct { CUresult code; const char *name, *text; } errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_lookup(CUresult e, const char **p, int text)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e) {
			*p = text ? errors[i].text : errors[i].name;
			return CUDA_SUCCESS;
		}
	*p = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult e, const char **p) { return error_lookup(e, p, 0); }
CUresult cuGetErrorString(CUresult e, const char **p) { return error_lookup(e, p, 1); }

/* NVIDIA's private tables are not reimplemented (see the facts file). */
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	if (ppExportTable)
		*ppExportTable = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- cuGetProcAddress ----------------------------------------------------- */

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* Hidden aliases: taking their address yields this library's own definition
 * even when a preloaded library defines the same public name. */

/* ---- CUDA arrays ----------------------------------------------------------- *
 * An array holds roundup(its bytes, 512) of its device (the current
 * context's) per level, where its bytes are Width * max(Height, 1) *
 * max(Depth, 1) * NumChannels * the format's element size (block-compressed
 * formats: 8 or 16 bytes per 4x4 block); a mipmapped array sums its levels,
 * each halving Width, Height and (unless layered) Depth down to 1. An array
 * made with CUDA_ARRAY3D_DEFERRED_MAPPING holds nothing: its memory is
 * mapped into it later; only for such arrays cuArrayGetMemoryRequirements
 * answers (size = the bytes above, alignment 2 MiB), as documented; for
 * others it says CUDA_ERROR_INVALID_VALUE. */
struct CUarray_st {
	uint32_t magic;
	int device, mipmapped;
	uint64_t bytes, charged;
	CUcontext ctx;
};
struct CUmipmappedArray_st {
	struct CUarray_st a;
};
enum { MAGIC_ARRAY = 0x52524146, MAGIC_MIPMAP = 0x504d4d46 };

/* Bits per element and channel of a format; 0 if unknown here. For block
 * formats, bits per texel of the whole block (BC1/BC4: 4, others: 8). */
static unsigned format_bits(CUarray_format f, unsigned *block)
{
	*block = 0;
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
	case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 8;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
	case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return 16;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 32;
	case CU_AD_FORMAT_BC1_UNORM: case CU_AD_FORMAT_BC1_UNORM_SRGB:
	case CU_AD_FORMAT_BC4_UNORM: case CU_AD_FORMAT_BC4_SNORM: *block = 1; return 4;
	case CU_AD_FORMAT_BC2_UNORM: case CU_AD_FORMAT_BC2_UNORM_SRGB: case CU_AD_FORMAT_BC3_UNORM:
	case CU_AD_FORMAT_BC3_UNORM_SRGB: case CU_AD_FORMAT_BC5_UNORM: case CU_AD_FORMAT_BC5_SNORM:
	case CU_AD_FORMAT_BC6H_UF16: case CU_AD_FORMAT_BC6H_SF16: case CU_AD_FORMAT_BC7_UNORM:
	case CU_AD_FORMAT_BC7_UNORM_SRGB: *block = 1; return 8;
	default: return 0;
	}
}

static uint64_t level_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
	unsigned block, bits = format_bits(f, &block);
	uint64_t texels = (uint64_t)w * (h ? h : 1) * (d ? d : 1);

	if (block)	/* whole 4x4 blocks, all channels in the block */
		return (uint64_t)((w + 3) / 4) * (((h ? h : 1) + 3) / 4) * (d ? d : 1) * 16 * bits / 8;
	return texels * ch * bits / 8;
}

static CUresult array_make(struct CUarray_st *a, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
	size_t w = d->Width, h = d->Height, dep = d->Depth;
	unsigned block;
	int dev = cur_dev();

	if (dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!w || !format_bits(d->Format, &block) || !d->NumChannels || d->NumChannels > 4 || !levels)
		return CUDA_ERROR_INVALID_VALUE;
	a->bytes = 0;
	for (unsigned l = 0; l < levels; l++) {
		a->bytes += fk_roundup(level_bytes(w, h, dep, d->Format, d->NumChannels), FK_ALIGN);
		w = w > 1 ? w / 2 : 1;
		h = h > 1 ? h / 2 : h;
		if (!(d->Flags & CUDA_ARRAY3D_LAYERED))
			dep = dep > 1 ? dep / 2 : dep;
	}
	a->device = dev;
	a->ctx = cur_ctx();
	a->charged = d->Flags & CUDA_ARRAY3D_DEFERRED_MAPPING ? 0 : a->bytes;
	lock();
	if (charge(dev, a->charged)) {
		unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	unlock();
	return CUDA_SUCCESS;
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	struct CUarray_st *a;
	CUresult r;

	if (!pHandle || !desc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(a = calloc(1, sizeof(*a))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = array_make(a, desc, 1)) != CUDA_SUCCESS) {
		free(a);
		return r;
	}
	a->magic = MAGIC_ARRAY;
	*pHandle = a;
	return CUDA_SUCCESS;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d3, 0, sizeof(d3));
	d3.Width = desc->Width;
	d3.Height = desc->Height;
	d3.Format = desc->Format;
	d3.NumChannels = desc->NumChannels;
	return cuArray3DCreate_v2(pHandle, &d3);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc,
				unsigned int numMipmapLevels)
{
	struct CUmipmappedArray_st *m;
	CUresult r;

	if (!pHandle || !desc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(m = calloc(1, sizeof(*m))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = array_make(&m->a, desc, numMipmapLevels)) != CUDA_SUCCESS) {
		free(m);
		return r;
	}
	m->a.magic = MAGIC_MIPMAP;
	m->a.mipmapped = 1;
	*pHandle = m;
	return CUDA_SUCCESS;
}

static CUresult array_destroy(struct CUarray_st *a, uint32_t magic)
{
	if (!a || a->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	uncharge(a->device, a->charged);
	unlock();
	a->magic = 0;
	free(a);
	return CUDA_SUCCESS;
}

CUresult cuArrayDestroy(CUarray a) { return array_destroy(a, MAGIC_ARRAY); }
CUresult cuMipmappedArrayDestroy(CUmipmappedArray m) { return array_destroy(m ? &m->a : NULL, MAGIC_MIPMAP); }

static CUresult array_requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, struct CUarray_st *a, uint32_t magic,
				   CUdevice dev)
{
	if (!req || !a || a->magic != magic || a->charged || dev != a->device)
		return CUDA_ERROR_INVALID_VALUE;	/* only deferred-mapping arrays */
	memset(req, 0, sizeof(*req));
	req->size = a->bytes;
	req->alignment = FK_GRANULE;
	return CUDA_SUCCESS;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUarray a, CUdevice dev)
{
	return array_requirements(req, a, MAGIC_ARRAY, dev);
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray m,
					       CUdevice dev)
{
	return array_requirements(req, m ? &m->a : NULL, MAGIC_MIPMAP, dev);
}

/* ---- graphs built with the graph API: their memory nodes ------------------ *
 * cuGraphCreate makes an empty graph; cuGraphAddMemAllocNode (and
 * cuGraphAddNode(_v2) with a memory-allocation node) reserves the node's
 * address at once and counts its bytes in the graph as a captured
 * allocation does (on the device of poolProps.location; one device per
 * graph); cuGraphAddMemFreeNode (or a free node) of one of the graph's own
 * allocations ends it inside the graph. Nodes: an opaque counter. Other node
 * types are CUDA_ERROR_NOT_SUPPORTED. */
CUresult cuGraphCreate(CUgraph *pg, unsigned int flags)
{
	struct CUgraph_st *g;

	if (!pg || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(g = calloc(1, sizeof(*g))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = MAGIC_GRAPH;
	g->device = -1;
	*pg = g;
	return CUDA_SUCCESS;
}

static uintptr_t next_node = 1;

static CUresult graph_mem_alloc(CUgraphNode *node, CUgraph g, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	CUresult r;

	if (!node || !g || g->magic != MAGIC_GRAPH || !p || !p->bytesize ||
	    p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = need_dev(p->poolProps.location.id)) != CUDA_SUCCESS)
		return r;
	lock();
	if (g->device >= 0 && g->device != p->poolProps.location.id)
		r = CUDA_ERROR_NOT_SUPPORTED;
	else {
		g->device = p->poolProps.location.id;
		r = graph_alloc(&p->dptr, p->bytesize, g);
		g->escape = g->live;
	}
	if (r == CUDA_SUCCESS)
		*node = (CUgraphNode)(next_node++);
	unlock();
	return r;
}

static CUresult graph_mem_free(CUgraphNode *node, CUgraph g, CUdeviceptr dptr)
{
	struct fk_alloc *a;
	CUresult r = CUDA_SUCCESS;

	if (!node || !g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	a = tab_find(dptr);
	if (!a || a->kind != K_GRAPH || a->device != g->device) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		g->live -= a->rounded;
		g->escape = g->live;
		va_free(region_of(a->addr), a->addr, a->rounded);
		tab_remove(a);
		*node = (CUgraphNode)(next_node++);
	}
	unlock();
	return r;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
				CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	return graph_mem_alloc(node, g, p);
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			       CUdeviceptr dptr)
{
	return graph_mem_free(node, g, dptr);
}

static CUresult graph_add_node(CUgraphNode *node, CUgraph g, CUgraphNodeParams *p)
{
	CUDA_MEM_ALLOC_NODE_PARAMS a;
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	switch (p->type) {
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		memset(&a, 0, sizeof(a));
		a.poolProps = p->alloc.poolProps;
		a.accessDescs = p->alloc.accessDescs;
		a.accessDescCount = p->alloc.accessDescCount;
		a.bytesize = p->alloc.bytesize;
		r = graph_mem_alloc(node, g, &a);
		if (r == CUDA_SUCCESS)
			p->alloc.dptr = a.dptr;
		return r;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		return graph_mem_free(node, g, p->free.dptr);
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

CUresult cuGraphAddNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			CUgraphNodeParams *p)
{
	return graph_add_node(node, g, p);
}

CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
			   const CUgraphEdgeData *edges, size_t ndeps, CUgraphNodeParams *p)
{
	return graph_add_node(node, g, p);
}

/* ---- memory shared between processes ---------------------------------------- *
 * The double is one process: what another process would see is modelled in
 * this one. cuMemExportToShareableHandle (POSIX file descriptor type) gives
 * an int token; cuMemImportFromShareableHandle of it gives a NEW handle to
 * the same physical memory (charged once; the original lives until both
 * are released and unmapped). cuIpcGetMemHandle/cuIpcOpenMemHandle and
 * cuMemPoolExportPointer/cuMemPoolImportPointer open a block at a second
 * address, as the other process would (the driver refuses to open a handle
 * in the process it came from; the double cannot span processes), which
 * cuIpcCloseMemHandle or cuMemFree/cuMemFreeAsync close again; a pool
 * exported and imported (cuMemPoolExportToShareableHandle/
 * cuMemPoolImportFromShareableHandle) is the same pool under a new handle.
 * Opening takes no memory. */
#define FK_MAX_SHARED 64
static struct fk_phys *shared[FK_MAX_SHARED];
static CUmemoryPool shared_pools[FK_MAX_SHARED];

CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType type, unsigned long long flags)
{
	struct fk_phys *p;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!shareableHandle || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	if ((p = phys_of(handle)) && !p->alias) {
		for (int i = 0; i < FK_MAX_SHARED; i++)
			if (!shared[i] || shared[i] == p) {
				shared[i] = p;
				*(int *)shareableHandle = 1000 + i;
				r = CUDA_SUCCESS;
				break;
			}
	}
	unlock();
	return r;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
					CUmemAllocationHandleType type)
{
	struct fk_phys *p, *orig;
	int i = osHandle ? (int)(intptr_t)osHandle - 1000 : -1;

	/* A file descriptor travels by value in the pointer argument. */
	if (!handle || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || i < 0 || i >= FK_MAX_SHARED)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(p = calloc(1, sizeof(*p))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	if (!(orig = shared[i]) || orig->magic != MAGIC_PHYS) {
		unlock();
		free(p);
		return CUDA_ERROR_INVALID_VALUE;
	}
	*p = *orig;
	p->refs = 1;
	p->maps = 0;
	p->alias = orig;
	orig->refs++;
	unlock();
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* A block opened at a second address: K_PLAIN-like bookkeeping, no charge. */
static CUresult open_alias(CUdeviceptr *out, struct fk_alloc *orig)
{
	uintptr_t a;
	struct fk_alloc *rec;

	a = va_alloc(FK_VMM_REGION, orig->rounded, FK_ALIGN);
	if (!a || !(rec = tab_insert(a)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rec->size = orig->size;
	rec->rounded = orig->rounded;
	rec->device = orig->device;
	rec->kind = K_OPENED;
	rec->ctx = cur_ctx();
	*out = a;
	return CUDA_SUCCESS;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr dptr)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;
	struct fk_alloc *a;

	if (!h)
		return r;
	lock();
	if ((a = tab_find(dptr)) && (a->kind == K_PLAIN || a->kind == K_PITCH)) {
		memset(h, 0, sizeof(*h));
		memcpy(h->reserved, "gmtipc", 6);
		memcpy(h->reserved + 8, &dptr, sizeof(dptr));
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

static CUresult ipc_open(CUdeviceptr *pdptr, CUipcMemHandle h, unsigned int flags)
{
	CUdeviceptr orig;
	struct fk_alloc *a;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!pdptr || memcmp(h.reserved, "gmtipc", 6) || flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
		return r;
	memcpy(&orig, h.reserved + 8, sizeof(orig));
	lock();
	if ((a = tab_find(orig)) && a->kind != K_OPENED)
		r = open_alias(pdptr, a);
	unlock();
	return r;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle h, unsigned int flags)
{
	return ipc_open(pdptr, h, flags);
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle h, unsigned int flags)
{
	return ipc_open(pdptr, h, flags);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct fk_alloc *a;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	if ((a = tab_find(dptr)) && a->kind == K_OPENED) {
		va_free(FK_VMM_REGION, a->addr, a->rounded);
		tab_remove(a);
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
					  CUmemAllocationHandleType type, unsigned long long flags)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!handle_out || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags)
		return r;
	lock();
	if (valid_pool(pool))
		for (int i = 0; i < FK_MAX_SHARED; i++)
			if (!shared_pools[i] || shared_pools[i] == pool) {
				shared_pools[i] = pool;
				*(int *)handle_out = 2000 + i;
				r = CUDA_SUCCESS;
				break;
			}
	unlock();
	return r;
}

/* The imported pool: a handle of its own that names the exporter's pool. */
struct fk_pool_import { uint32_t magic; CUmemoryPool pool; };
enum { MAGIC_POOL_IMPORT = 0x49504f46 };

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
					    CUmemAllocationHandleType type, unsigned long long flags)
{
	int i = handle ? (int)(intptr_t)handle - 2000 : -1;
	struct fk_pool_import *imp;
	CUmemoryPool p;

	if (!pool_out || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags || i < 0 || i >= FK_MAX_SHARED)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	p = shared_pools[i];
	unlock();
	if (!valid_pool(p) || !(imp = calloc(1, sizeof(*imp))))
		return CUDA_ERROR_INVALID_VALUE;
	imp->magic = MAGIC_POOL_IMPORT;
	imp->pool = p;
	*pool_out = (CUmemoryPool)(void *)imp;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr ptr)
{
	struct fk_alloc *a;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!data)
		return r;
	lock();
	if ((a = tab_find(ptr)) && a->kind == K_POOL) {
		memset(data, 0, sizeof(*data));
		memcpy(data->reserved, "gmtpool", 7);
		memcpy(data->reserved + 8, &ptr, sizeof(ptr));
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
	struct fk_pool_import *imp = (struct fk_pool_import *)(void *)pool;
	CUdeviceptr orig;
	struct fk_alloc *a;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!ptr_out || !data || !imp || imp->magic != MAGIC_POOL_IMPORT || memcmp(data->reserved, "gmtpool", 7))
		return r;
	memcpy(&orig, data->reserved + 8, sizeof(orig));
	lock();
	if ((a = tab_find(orig)) && a->kind == K_POOL && a->pool == imp->pool)
		r = open_alias(ptr_out, a);
	unlock();
	return r;
}

/* ---- multicast objects --------------------------------------------------- *
 * cuMulticastCreate makes a handle of prop->size bytes (a multiple of 2 MiB)
 * that charges nothing; devices join with cuMulticastAddDevice; device
 * memory bound into it (cuMulticastBindMem of a handle, cuMulticastBindAddr
 * of a mapped address) stays its own allocation's. The handle maps with
 * cuMemMap and goes with cuMemRelease like any other. */
CUresult cuMulticastCreate(CUmemGenericAllocationHandle *mc, const CUmulticastObjectProp *prop)
{
	struct fk_phys *p;

	if (!mc || !prop || !prop->numDevices || !prop->size || prop->size % FK_GRANULE || prop->flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(p = calloc(1, sizeof(*p))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->magic = MAGIC_PHYS;
	p->device = -1;
	p->size = prop->size;
	p->refs = 1;
	p->multicast = 1;
	*mc = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mc, CUdevice dev)
{
	struct fk_phys *p;
	CUresult r = need_dev(dev);

	if (r != CUDA_SUCCESS)
		return r;
	lock();
	p = phys_of(mc);
	if (!p || !p->multicast)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (p->device < 0)
		p->device = dev;
	unlock();
	return r;
}

CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mcOffset, CUmemGenericAllocationHandle mem,
			    size_t memOffset, size_t size, unsigned long long flags)
{
	struct fk_phys *p, *m;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	p = phys_of(mc);
	m = phys_of(mem);
	if (p && p->multicast && m && !m->multicast && !flags && size && mcOffset <= p->size &&
	    size <= p->size - mcOffset && memOffset <= m->size && size <= m->size - memOffset) {
		p->bound++;
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mc, size_t mcOffset, CUdeviceptr memptr, size_t size,
			     unsigned long long flags)
{
	struct fk_phys *p;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	p = phys_of(mc);
	if (p && p->multicast && !flags && size && mcOffset <= p->size && size <= p->size - mcOffset &&
	    map_find(memptr) && map_find(memptr + size - 1)) {
		p->bound++;
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mcOffset, size_t size)
{
	struct fk_phys *p;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	lock();
	p = phys_of(mc);
	if (p && p->multicast && p->bound) {
		p->bound--;
		r = CUDA_SUCCESS;
	}
	unlock();
	return r;
}

/* ---- context limits and modules ---------------------------------------------- *
 * cuCtxSetLimit of CU_LIMIT_MALLOC_HEAP_SIZE or CU_LIMIT_PRINTF_FIFO_SIZE
 * takes that many bytes of the current context's device (the previous
 * value's given back; defaults 8 MiB and 1 MiB, not charged until set);
 * CU_LIMIT_STACK_SIZE is kept, charges nothing; other limits are kept.
 * cuCtxGetLimit reads them back. Each loaded module (cuModuleLoad,
 * cuModuleLoadData, cuModuleLoadDataEx, cuModuleLoadFatBinary) and library
 * (cuLibraryLoadData, cuLibraryLoadFromFile) takes GMT_FAKE_MODULE_BYTES of
 * the current context's device (a library: of device 0 when no context is
 * current) until unloaded. Images are not read. */
struct fk_limits { uint64_t v[CU_LIMIT_MAX]; int set[CU_LIMIT_MAX]; };
static struct fk_limits limits[FK_MAX_DEV];

static uint64_t limit_default(CUlimit l)
{
	switch (l) {
	case CU_LIMIT_STACK_SIZE: return 1024;
	case CU_LIMIT_PRINTF_FIFO_SIZE: return 1 << 20;
	case CU_LIMIT_MALLOC_HEAP_SIZE: return 8 << 20;
	default: return 0;
	}
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	int dev = cur_dev();
	struct fk_limits *L;
	CUresult r = CUDA_SUCCESS;

	if (dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if ((unsigned)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	lock();
	L = &limits[dev];
	if (limit == CU_LIMIT_MALLOC_HEAP_SIZE || limit == CU_LIMIT_PRINTF_FIFO_SIZE) {
		uint64_t old = L->set[limit] ? L->v[limit] : 0;
		if (value > old && charge(dev, value - old))
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else if (value < old)
			uncharge(dev, old - value);
	}
	if (r == CUDA_SUCCESS) {
		L->v[limit] = value;
		L->set[limit] = 1;
	}
	unlock();
	return r;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	int dev = cur_dev();

	if (!pvalue)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if ((unsigned)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	lock();
	*pvalue = limits[dev].set[limit] ? limits[dev].v[limit] : limit_default(limit);
	unlock();
	return CUDA_SUCCESS;
}

struct CUmod_st { uint32_t magic; int device; uint64_t bytes; };
struct CUlib_st { uint32_t magic; int device; uint64_t bytes; };
enum { MAGIC_MODULE = 0x444f4d46, MAGIC_LIBRARY = 0x42494c46 };

static CUresult module_take(uint32_t magic, int dev, void **out)
{
	struct CUmod_st *m;
	uint64_t bytes = env_u64("GMT_FAKE_MODULE_BYTES", 0);

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!(m = calloc(1, sizeof(*m))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	if (charge(dev, bytes)) {
		unlock();
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	unlock();
	m->magic = magic;
	m->device = dev;
	m->bytes = bytes;
	*out = m;
	return CUDA_SUCCESS;
}

static CUresult module_give(void *p, uint32_t magic)
{
	struct CUmod_st *m = p;

	if (!m || m->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	lock();
	uncharge(m->device, m->bytes);
	unlock();
	m->magic = 0;
	free(m);
	return CUDA_SUCCESS;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	return fname ? module_take(MAGIC_MODULE, cur_dev(), (void **)module) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	return image ? module_take(MAGIC_MODULE, cur_dev(), (void **)module) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
			    void **values)
{
	return image ? module_take(MAGIC_MODULE, cur_dev(), (void **)module) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return fatCubin ? module_take(MAGIC_MODULE, cur_dev(), (void **)module) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuModuleUnload(CUmodule module) { return module_give(module, MAGIC_MODULE); }

static int lib_dev(void)
{
	int d = cur_dev();

	pthread_once(&S_once, state_init);
	return d >= 0 ? d : S.initialized ? 0 : -1;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
			   unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	return code ? module_take(MAGIC_LIBRARY, lib_dev(), (void **)library) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
			       void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
			       void **libraryOptionValues, unsigned int numLibraryOptions)
{
	return fileName ? module_take(MAGIC_LIBRARY, lib_dev(), (void **)library) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLibraryUnload(CUlibrary library) { return module_give(library, MAGIC_LIBRARY); }

#define FK_ALIAS(n) extern __typeof(n) fk_##n __attribute__((alias(#n), visibility("hidden")));
#define FK_FUNCS(X) \
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) \
	X(cuDeviceGetUuid) X(cuDeviceGetUuid_v2) X(cuDeviceGetPCIBusId) X(cuDeviceTotalMem_v2) \
	X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) \
	X(cuDevicePrimaryCtxRelease_v2) X(cuDevicePrimaryCtxReset) X(cuDevicePrimaryCtxReset_v2) \
	X(cuDevicePrimaryCtxGetState) X(cuDevicePrimaryCtxSetFlags_v2) X(cuCtxCreate) \
	X(cuCtxCreate_v2) X(cuCtxCreate_v3) X(cuCtxCreate_v4) X(cuCtxDestroy) X(cuCtxDestroy_v2) \
	X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxPushCurrent) X(cuCtxPushCurrent_v2) \
	X(cuCtxPopCurrent) X(cuCtxPopCurrent_v2) X(cuCtxGetDevice) X(cuCtxGetDevice_v2) \
	X(cuCtxSynchronize) X(cuCtxSynchronize_v2) X(cuMemAlloc) X(cuMemAlloc_v2) \
	X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree) X(cuMemFree_v2) \
	X(cuMemAllocHost_v2) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemGetInfo_v2) \
	X(cuMemGetAddressRange_v2) X(cuPointerGetAttribute) X(cuMemcpy) X(cuMemcpy_ptds) \
	X(cuMemcpyAsync) X(cuMemcpyAsync_ptsz) X(cuMemcpyHtoD_v2) X(cuMemcpyHtoD_v2_ptds) \
	X(cuMemcpyDtoH_v2) X(cuMemcpyDtoH_v2_ptds) X(cuMemcpyDtoD_v2) X(cuMemcpyDtoD_v2_ptds) \
	X(cuMemsetD8_v2) X(cuMemsetD8_v2_ptds) X(cuMemsetD8Async) X(cuMemsetD8Async_ptsz) \
	X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz) X(cuMemAllocFromPoolAsync) \
	X(cuMemAllocFromPoolAsync_ptsz) X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz) \
	X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemPoolTrimTo) X(cuMemPoolSetAttribute) \
	X(cuMemPoolGetAttribute) X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) \
	X(cuDeviceSetMemPool) X(cuMemGetDefaultMemPool) X(cuMemGetMemPool) X(cuMemSetMemPool) \
	X(cuStreamGetDevice) X(cuStreamGetDevice_ptsz) X(cuStreamGetCtx) X(cuStreamGetCtx_ptsz) \
	X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy) \
	X(cuStreamDestroy_v2) X(cuStreamSynchronize) X(cuStreamSynchronize_ptsz) X(cuStreamQuery) \
	X(cuStreamQuery_ptsz) X(cuEventCreate) X(cuEventRecord) X(cuEventRecord_ptsz) \
	X(cuEventSynchronize) X(cuEventQuery) X(cuEventDestroy) X(cuEventDestroy_v2) \
	X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemAddressFree) \
	X(cuMemCreate) X(cuMemRelease) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess) \
	X(cuMemGetAllocationPropertiesFromHandle) X(cuMemRetainAllocationHandle) \
	X(cuGetErrorName) X(cuGetErrorString) X(cuGetExportTable) X(cuGetProcAddress) \
	X(cuGetProcAddress_v2) X(cuStreamBeginCapture) X(cuStreamBeginCapture_v2) \
	X(cuStreamBeginCapture_ptsz) X(cuStreamBeginCapture_v2_ptsz) X(cuStreamEndCapture) \
	X(cuStreamEndCapture_ptsz) X(cuStreamIsCapturing) X(cuStreamIsCapturing_ptsz) \
	X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphLaunch_ptsz) \
	X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuDeviceGetGraphMemAttribute) \
	X(cuDeviceGraphMemTrim) X(cuThreadExchangeStreamCaptureMode) \
	X(cuArrayCreate_v2) X(cuArray3DCreate_v2) X(cuMipmappedArrayCreate) X(cuArrayDestroy) \
	X(cuMipmappedArrayDestroy) X(cuArrayGetMemoryRequirements) X(cuMipmappedArrayGetMemoryRequirements) \
	X(cuGraphCreate) X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode) X(cuGraphAddNode) \
	X(cuGraphAddNode_v2) X(cuMemExportToShareableHandle) X(cuMemImportFromShareableHandle) \
	X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcOpenMemHandle_v2) X(cuIpcCloseMemHandle) \
	X(cuMemPoolExportToShareableHandle) X(cuMemPoolImportFromShareableHandle) \
	X(cuMemPoolExportPointer) X(cuMemPoolImportPointer) X(cuMulticastCreate) X(cuMulticastAddDevice) \
	X(cuMulticastBindMem) X(cuMulticastBindAddr) X(cuMulticastUnbind) X(cuCtxSetLimit) \
	X(cuCtxGetLimit) X(cuModuleLoad) X(cuModuleLoadData) X(cuModuleLoadDataEx) \
	X(cuModuleLoadFatBinary) X(cuModuleUnload) X(cuLibraryLoadData) X(cuLibraryLoadFromFile) \
	X(cuLibraryUnload)
FK_FUNCS(FK_ALIAS)

/* With GMT_FAKE_PROC_INTERNAL=1, cuGetProcAddress answers with internal
 * entry points instead of the exported symbols: one jump each to the
 * function, at an address no exported symbol has (as a driver may hand
 * out), so that the tracer's identification by address fails. */
#define FK_THUNK(n)                                                                \
	__asm__(".pushsection .text\n\t.p2align 4\n\t.type fk_thunk_" #n ",@function\n" \
		"fk_thunk_" #n ":\n\tjmp fk_" #n "\n\t.size fk_thunk_" #n ", .-fk_thunk_" #n \
		"\n\t.popsection");                                                  \
	extern char fk_thunk_##n[] __attribute__((visibility("hidden")));
FK_FUNCS(FK_THUNK)

struct fk_proc {
	const char *name;
	int version;	/* the first CUDA version that resolves name to this entry */
	void *legacy, *ptds;
	void *legacy_internal, *ptds_internal;
};

#define P(name, ver, fn) { name, ver, (void *)fk_##fn, NULL, (void *)fk_thunk_##fn, NULL },
#define PP(name, ver, fn, pfn) { name, ver, (void *)fk_##fn, (void *)fk_##pfn, \
				 (void *)fk_thunk_##fn, (void *)fk_thunk_##pfn },
/* Entries of one name are consecutive, oldest first (versions from the
 * PFN_<name>_v<version> typedefs of cudaTypedefs.h). */
static const struct fk_proc procs[] = {
	P("cuInit", 2000, cuInit)
	P("cuDriverGetVersion", 2020, cuDriverGetVersion)
	P("cuDeviceGet", 2000, cuDeviceGet)
	P("cuDeviceGetCount", 2000, cuDeviceGetCount)
	P("cuDeviceGetName", 2000, cuDeviceGetName)
	P("cuDeviceGetUuid", 9020, cuDeviceGetUuid)
	P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2)
	P("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId)
	P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2)
	P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute)
	P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain)
	P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease)
	P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2)
	P("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset)
	P("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2)
	P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState)
	P("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2)
	P("cuCtxCreate", 2000, cuCtxCreate)
	P("cuCtxCreate", 3020, cuCtxCreate_v2)
	P("cuCtxCreate", 11040, cuCtxCreate_v3)
	P("cuCtxCreate", 12050, cuCtxCreate_v4)
	P("cuCtxDestroy", 2000, cuCtxDestroy)
	P("cuCtxDestroy", 4000, cuCtxDestroy_v2)
	P("cuCtxSetCurrent", 4000, cuCtxSetCurrent)
	P("cuCtxGetCurrent", 4000, cuCtxGetCurrent)
	P("cuCtxPushCurrent", 2000, cuCtxPushCurrent)
	P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2)
	P("cuCtxPopCurrent", 2000, cuCtxPopCurrent)
	P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2)
	P("cuCtxGetDevice", 2000, cuCtxGetDevice)
	P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2)
	P("cuCtxSynchronize", 2000, cuCtxSynchronize)
	P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2)
	P("cuMemAlloc", 2000, cuMemAlloc)
	P("cuMemAlloc", 3020, cuMemAlloc_v2)
	P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2)
	P("cuMemAllocManaged", 6000, cuMemAllocManaged)
	P("cuMemFree", 2000, cuMemFree)
	P("cuMemFree", 3020, cuMemFree_v2)
	P("cuMemAllocHost", 3020, cuMemAllocHost_v2)
	P("cuMemHostAlloc", 2020, cuMemHostAlloc)
	P("cuMemFreeHost", 2000, cuMemFreeHost)
	P("cuMemGetInfo", 3020, cuMemGetInfo_v2)
	P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2)
	P("cuPointerGetAttribute", 4000, cuPointerGetAttribute)
	PP("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds)
	PP("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz)
	PP("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)
	PP("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)
	PP("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds)
	PP("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds)
	PP("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz)
	PP("cuMemAllocAsync", 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz)
	PP("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz)
	PP("cuMemFreeAsync", 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz)
	P("cuMemPoolCreate", 11020, cuMemPoolCreate)
	P("cuMemPoolDestroy", 11020, cuMemPoolDestroy)
	P("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo)
	P("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute)
	P("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute)
	P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool)
	P("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool)
	P("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool)
	P("cuMemGetDefaultMemPool", 13000, cuMemGetDefaultMemPool)
	P("cuMemGetMemPool", 13000, cuMemGetMemPool)
	P("cuMemSetMemPool", 13000, cuMemSetMemPool)
	PP("cuStreamGetDevice", 12080, cuStreamGetDevice, cuStreamGetDevice_ptsz)
	PP("cuStreamGetCtx", 9020, cuStreamGetCtx, cuStreamGetCtx_ptsz)
	P("cuStreamCreate", 2000, cuStreamCreate)
	P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority)
	P("cuStreamDestroy", 2000, cuStreamDestroy)
	P("cuStreamDestroy", 4000, cuStreamDestroy_v2)
	PP("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz)
	PP("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz)
	P("cuEventCreate", 2000, cuEventCreate)
	PP("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz)
	P("cuEventSynchronize", 2000, cuEventSynchronize)
	P("cuEventQuery", 2000, cuEventQuery)
	P("cuEventDestroy", 2000, cuEventDestroy)
	P("cuEventDestroy", 4000, cuEventDestroy_v2)
	P("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity)
	P("cuMemAddressReserve", 10020, cuMemAddressReserve)
	P("cuMemAddressFree", 10020, cuMemAddressFree)
	P("cuMemCreate", 10020, cuMemCreate)
	P("cuMemRelease", 10020, cuMemRelease)
	P("cuMemMap", 10020, cuMemMap)
	P("cuMemUnmap", 10020, cuMemUnmap)
	P("cuMemSetAccess", 10020, cuMemSetAccess)
	P("cuMemGetAllocationPropertiesFromHandle", 10020, cuMemGetAllocationPropertiesFromHandle)
	P("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle)
	P("cuGetErrorName", 6000, cuGetErrorName)
	P("cuGetErrorString", 6000, cuGetErrorString)
	P("cuGetExportTable", 3000, cuGetExportTable)
	P("cuGetProcAddress", 11030, cuGetProcAddress)
	P("cuGetProcAddress", 12000, cuGetProcAddress_v2)
	PP("cuStreamBeginCapture", 10000, cuStreamBeginCapture, cuStreamBeginCapture_ptsz)
	PP("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz)
	PP("cuStreamEndCapture", 10000, cuStreamEndCapture, cuStreamEndCapture_ptsz)
	PP("cuStreamIsCapturing", 10000, cuStreamIsCapturing, cuStreamIsCapturing_ptsz)
	P("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags)
	P("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags)
	PP("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz)
	P("cuGraphExecDestroy", 10000, cuGraphExecDestroy)
	P("cuGraphDestroy", 10000, cuGraphDestroy)
	P("cuDeviceGetGraphMemAttribute", 11040, cuDeviceGetGraphMemAttribute)
	P("cuDeviceGraphMemTrim", 11040, cuDeviceGraphMemTrim)
	P("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode)
	P("cuArrayCreate", 3020, cuArrayCreate_v2)
	P("cuArray3DCreate", 3020, cuArray3DCreate_v2)
	P("cuArrayDestroy", 2000, cuArrayDestroy)
	P("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate)
	P("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy)
	P("cuArrayGetMemoryRequirements", 11060, cuArrayGetMemoryRequirements)
	P("cuMipmappedArrayGetMemoryRequirements", 11060, cuMipmappedArrayGetMemoryRequirements)
	P("cuGraphCreate", 10000, cuGraphCreate)
	P("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode)
	P("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode)
	P("cuGraphAddNode", 12020, cuGraphAddNode)
	P("cuGraphAddNode", 12030, cuGraphAddNode_v2)
	P("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle)
	P("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle)
	P("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle)
	P("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle)
	P("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2)
	P("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle)
	P("cuMemPoolExportToShareableHandle", 11020, cuMemPoolExportToShareableHandle)
	P("cuMemPoolImportFromShareableHandle", 11020, cuMemPoolImportFromShareableHandle)
	P("cuMemPoolExportPointer", 11020, cuMemPoolExportPointer)
	P("cuMemPoolImportPointer", 11020, cuMemPoolImportPointer)
	P("cuMulticastCreate", 12010, cuMulticastCreate)
	P("cuMulticastAddDevice", 12010, cuMulticastAddDevice)
	P("cuMulticastBindMem", 12010, cuMulticastBindMem)
	P("cuMulticastBindAddr", 12010, cuMulticastBindAddr)
	P("cuMulticastUnbind", 12010, cuMulticastUnbind)
	P("cuCtxSetLimit", 3010, cuCtxSetLimit)
	P("cuCtxGetLimit", 3010, cuCtxGetLimit)
	P("cuModuleLoad", 2000, cuModuleLoad)
	P("cuModuleLoadData", 2000, cuModuleLoadData)
	P("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx)
	P("cuModuleLoadFatBinary", 2000, cuModuleLoadFatBinary)
	P("cuModuleUnload", 2000, cuModuleUnload)
	P("cuLibraryLoadData", 12000, cuLibraryLoadData)
	P("cuLibraryLoadFromFile", 12000, cuLibraryLoadFromFile)
	P("cuLibraryUnload", 12000, cuLibraryUnload)
};
#undef P
#undef PP

/* Picks the newest entry of symbol that is not newer than the requested
 * version nor than the driver (GMT_FAKE_DRIVER_VERSION): an entry newer than
 * the driver does not exist for it. */
static CUresult proc_lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			    CUdriverProcAddressQueryResult *status)
{
	const struct fk_proc *best = NULL;
	int known = 0;

	pthread_once(&S_once, state_init);
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn ||
	    (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		const struct fk_proc *e = &procs[i];

		if (strcmp(e->name, symbol) || e->version > S.driver_version)
			continue;
		known = 1;
		if (e->version <= cudaVersion)
			best = e;
	}
	if (!best) {
		if (known && status)
			*status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
		return CUDA_ERROR_NOT_FOUND;
	}
	if (S.proc_internal)
		*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptds_internal
			? best->ptds_internal : best->legacy_internal;
	else
		*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptds
			? best->ptds : best->legacy;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	return proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return proc_lookup(symbol, pfn, cudaVersion, flags, NULL);
}
