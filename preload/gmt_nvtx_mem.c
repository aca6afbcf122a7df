/*
 * gmt_nvtx_mem.c - the NVTX memory extension (nvToolsExtMem.h): heaps and
 * regions that an allocator describes (RMM's pools do) become framework
 * events with no adapter.
 *
 * How the calls reach us. An NVTX3 extension keeps its own table of
 * function slots in each library built with the headers. The first call of
 * one of its functions (nvtxMemHeapRegister, ...) runs the extension's init:
 * it initialises NVTX's core, dlopen()s NVTX_INJECTION64_PATH (the launcher
 * points it at this library; a preloaded library dlopen()ed again is the
 * same handle) and calls its InitializeInjectionNvtxExtension(moduleInfo),
 * once per module and per NVTX instance. We fill the memory module's slots
 * with our callbacks; every slot left empty is turned into a no-op by NVTX.
 *
 * What the calls mean here:
 *  - a heap with a described virtual range is memory the allocator took
 *    for itself ("reserved"): FW_SEGMENT_ALLOC, and FW_SEGMENT_FREE when it
 *    is unregistered;
 *  - a region registered in a heap is a block handed to the program
 *    ("allocated"): FW_ALLOC; unregistering it is FW_FREE_REQUESTED then
 *    FW_FREE_COMPLETED at once (NVTX has no stream-ordered free); a resize
 *    is the free of the old extent and the allocation of the new;
 *  - resetting a heap frees all its regions; unregistering it too.
 * Every event carries GMT_FW_FLAG_NVTX_MEM and, as its framework, the NVTX
 * domain's name (or "nvtx-mem" for the default domain). NVTX says nothing of
 * devices: a heap's device is the current context's at its registration,
 * a region's is its heap's.
 *
 * Heaps of usage LAYOUT only describe the inside of a region already
 * counted: their regions are not counted again. Regions other than
 * virtual-address ranges (CUDA arrays) are not device bytes we can place:
 * ignored. A region's handle is its address, so a region unregistered by
 * pointer or by handle is found the same way (keyed by domain and address).
 */
#define NVTX_NO_IMPL
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nvtx3/nvToolsExtMem.h>
#pragma GCC diagnostic pop

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "gmt_framework.h"
#include "gmt_preload.h"

/* The NVTX core injection (gmt_nvtx.c) knows domains' names: it returns the
 * STRING id of a domain handle's name (0 for the default domain or an
 * unknown handle). Weak, so this file works without it. */
extern uint32_t gmt_nvtx_domain_string(const void *domain)
	__attribute__((weak, visibility("hidden")));

#define DEFAULT_FW_NAME "nvtx-mem"

typedef struct mem_heap {
	struct mem_heap *next;
	const void *domain;
	uint64_t addr, size;    /* 0, 0: no described range */
	uint32_t fw;
	int device;
	int layout;             /* usage LAYOUT only: regions not counted */
} mem_heap_t;

typedef struct mem_region {
	uint64_t addr;          /* 0 = free slot */
	const void *domain;
	uint64_t size;
	mem_heap_t *heap;       /* NULL: the process-wide heap */
	uint32_t fw;
	int device;
} mem_region_t;

/* One lock for the heap list and the region table: the extension's calls
 * come once per sub-allocation, not per kernel, and the order of a free and
 * a reuse of the same address must hold across threads. */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_heap_t *heaps;
static mem_region_t *regions;   /* open addressing, linear probing */
static size_t regions_cap, regions_n;

static uint32_t domain_fw(const void *domain)
{
	uint32_t id = 0;
	if (domain && gmt_nvtx_domain_string)
		id = gmt_nvtx_domain_string(domain);
	return id ? id : gmt_fw_id(DEFAULT_FW_NAME);
}

static size_t region_hash(uint64_t addr, const void *domain)
{
	uint64_t h = (addr ^ (uint64_t)(uintptr_t)domain * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	return (size_t)(h >> 17) & (regions_cap - 1);
}

static mem_region_t *region_find(uint64_t addr, const void *domain)
{
	if (!regions_cap || !addr)
		return NULL;
	for (size_t j = region_hash(addr, domain);; j = (j + 1) & (regions_cap - 1)) {
		if (!regions[j].addr)
			return NULL;
		if (regions[j].addr == addr && regions[j].domain == domain)
			return &regions[j];
	}
}

static int region_grow(void)
{
	size_t cap = regions_cap ? regions_cap * 2 : 1024;
	mem_region_t *old = regions, *t = calloc(cap, sizeof(*t));
	size_t old_cap = regions_cap;

	if (!t)
		return -ENOMEM;
	regions = t;
	regions_cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].addr)
			continue;
		size_t j = region_hash(old[i].addr, old[i].domain);
		while (regions[j].addr)
			j = (j + 1) & (cap - 1);
		regions[j] = old[i];
	}
	free(old);
	return 0;
}

/* Inserts or replaces (a region registered twice keeps the last extent). */
static mem_region_t *region_put(uint64_t addr, const void *domain)
{
	mem_region_t *r = region_find(addr, domain);
	if (r)
		return r;
	if ((regions_n + 1) * 2 > regions_cap && region_grow() < 0)
		return NULL;
	size_t j = region_hash(addr, domain);
	while (regions[j].addr)
		j = (j + 1) & (regions_cap - 1);
	regions_n++;
	regions[j].addr = addr;
	regions[j].domain = domain;
	return &regions[j];
}

/* Removes r, shifting back the entries of its probe run (no tombstones). */
static void region_del(mem_region_t *r)
{
	size_t i = (size_t)(r - regions), j = i;
	regions[i].addr = 0;
	regions_n--;
	for (;;) {
		j = (j + 1) & (regions_cap - 1);
		if (!regions[j].addr)
			return;
		size_t k = region_hash(regions[j].addr, regions[j].domain);
		/* Move j into the hole at i unless its home k lies in (i, j]. */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		regions[i] = regions[j];
		regions[j].addr = 0;
		i = j;
	}
}

static void region_freed(const mem_region_t *r)
{
	const uint32_t f = GMT_FW_FLAG_NVTX_MEM;
	gmt_fw_emit_now(GMT_EV_FW_FREE_REQUESTED, r->device, r->addr, r->size, 0, r->fw, f);
	gmt_fw_emit_now(GMT_EV_FW_FREE_COMPLETED, r->device, r->addr, r->size, 0, r->fw, f);
}

static int region_cmp(const void *a, const void *b)
{
	const mem_region_t *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int region_of(const mem_region_t *r, const mem_heap_t *h, const void *domain)
{
	return r->addr && r->heap == h && (h || r->domain == domain);
}

/* Frees every region of heap h (NULL: the process-wide heap of domain), in
 * address order (the table's order depends on the addresses' hashes). */
static void heap_free_regions(const mem_heap_t *h, const void *domain)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < regions_cap; i++)
		n += region_of(&regions[i], h, domain);
	mem_region_t *v = n ? malloc(n * sizeof(*v)) : NULL;
	if (v) {
		for (size_t i = 0; i < regions_cap; i++)
			if (region_of(&regions[i], h, domain))
				v[k++] = regions[i];
		qsort(v, n, sizeof(*v), region_cmp);
		for (size_t i = 0; i < n; i++) {
			region_freed(&v[i]);
			region_del(region_find(v[i].addr, v[i].domain));
		}
		free(v);
		return;
	}
	/* Out of memory: the same frees in table order. */
	for (size_t i = 0; n && i < regions_cap;) {
		mem_region_t *r = &regions[i];
		if (region_of(r, h, domain)) {
			region_freed(r);
			region_del(r);   /* may move another entry into slot i */
			continue;
		}
		i++;
	}
}

static mem_heap_t *heap_lookup(const void *handle)
{
	for (mem_heap_t *h = heaps; h; h = h->next)
		if (h == handle)
			return h;
	return NULL;
}

/* ---- the callbacks --------------------------------------------------------- */

static nvtxMemHeapHandle_t cb_heap_register(nvtxDomainHandle_t domain, nvtxMemHeapDesc_t const *desc)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	mem_heap_t *h = calloc(1, sizeof(*h));
	if (!h || !desc) {
		free(h);
		return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
	}
	h->domain = domain;
	h->fw = domain_fw(domain);
	h->device = gmt_cur_device();
	h->layout = desc->usage == NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT;
	if (desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc &&
	    desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
		const nvtxMemVirtualRangeDesc_t *vr = desc->typeSpecificDesc;
		h->addr = (uint64_t)(uintptr_t)vr->ptr;
		h->size = vr->size;
	}
	pthread_mutex_lock(&mem_lock);
	h->next = heaps;
	heaps = h;
	if (h->size && !h->layout)
		gmt_fw_emit_now(GMT_EV_FW_SEGMENT_ALLOC, h->device, h->addr, h->size, 0, h->fw,
				GMT_FW_FLAG_NVTX_MEM);
	pthread_mutex_unlock(&mem_lock);
	return (nvtxMemHeapHandle_t)h;
}

static void cb_heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	pthread_mutex_lock(&mem_lock);
	mem_heap_t *h = heap_lookup(heap);
	if (h) {
		heap_free_regions(h, domain);
		if (h->size && !h->layout)
			gmt_fw_emit_now(GMT_EV_FW_SEGMENT_FREE, h->device, h->addr, h->size, 0,
					h->fw, GMT_FW_FLAG_NVTX_MEM);
		mem_heap_t **pp = &heaps;
		while (*pp != h)
			pp = &(*pp)->next;
		*pp = h->next;
		free(h);
	}
	pthread_mutex_unlock(&mem_lock);
}

static void cb_heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	pthread_mutex_lock(&mem_lock);
	if (heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE)
		heap_free_regions(NULL, domain);
	else if (heap_lookup(heap))
		heap_free_regions(heap_lookup(heap), domain);
	pthread_mutex_unlock(&mem_lock);
}

static void cb_regions_register(nvtxDomainHandle_t domain, nvtxMemRegionsRegisterBatch_t const *b)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!b)
		return;
	const int va = b->regionType == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
		       b->regionDescElementSize >= sizeof(nvtxMemVirtualRangeDesc_t);
	pthread_mutex_lock(&mem_lock);
	mem_heap_t *h = b->heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE ? NULL : heap_lookup(b->heap);
	const int count = va && (h ? !h->layout : b->heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE);
	const uint32_t fw = h ? h->fw : domain_fw(domain);
	const int device = h ? h->device : gmt_cur_device();
	for (size_t i = 0; i < b->regionCount; i++) {
		const nvtxMemVirtualRangeDesc_t *d = NULL;
		if (va)
			d = (const void *)((const char *)b->regionDescElements + i * b->regionDescElementSize);
		if (b->regionHandleElementsOut)
			b->regionHandleElementsOut[i] = d ? (nvtxMemRegionHandle_t)(uintptr_t)d->ptr
							  : NVTX_MEM_REGION_HANDLE_NO_TOOL;
		if (!count || !d->ptr)
			continue;
		const uint64_t addr = (uint64_t)(uintptr_t)d->ptr;
		gmt_fw_emit_now(GMT_EV_FW_ALLOC, device, addr, d->size, 0, fw, GMT_FW_FLAG_NVTX_MEM);
		/* Out of memory: the allocation is recorded, its free will not be. */
		mem_region_t *r = region_put(addr, domain);
		if (!r)
			continue;
		r->size = d->size;
		r->heap = h;
		r->fw = fw;
		r->device = device;
	}
	pthread_mutex_unlock(&mem_lock);
}

static void cb_regions_resize(nvtxDomainHandle_t domain, nvtxMemRegionsResizeBatch_t const *b)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!b || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS ||
	    b->regionDescElementSize < sizeof(nvtxMemVirtualRangeDesc_t))
		return;
	pthread_mutex_lock(&mem_lock);
	for (size_t i = 0; i < b->regionDescCount; i++) {
		const nvtxMemVirtualRangeDesc_t *d =
			(const void *)((const char *)b->regionDescElements + i * b->regionDescElementSize);
		mem_region_t *r = region_find((uint64_t)(uintptr_t)d->ptr, domain);
		if (!r || r->size == d->size)
			continue;
		region_freed(r);
		r->size = d->size;
		gmt_fw_emit_now(GMT_EV_FW_ALLOC, r->device, r->addr, r->size, 0, r->fw,
				GMT_FW_FLAG_NVTX_MEM);
	}
	pthread_mutex_unlock(&mem_lock);
}

static void cb_regions_unregister(nvtxDomainHandle_t domain, nvtxMemRegionsUnregisterBatch_t const *b)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!b || b->refElementSize < sizeof(nvtxMemRegionRef_t) ||
	    (b->refType != NVTX_MEM_REGION_REF_TYPE_POINTER &&
	     b->refType != NVTX_MEM_REGION_REF_TYPE_HANDLE))
		return;
	pthread_mutex_lock(&mem_lock);
	for (size_t i = 0; i < b->refCount; i++) {
		const nvtxMemRegionRef_t *ref =
			(const void *)((const char *)b->refElements + i * b->refElementSize);
		/* Our handles are the regions' addresses: both kinds look alike. */
		uint64_t addr = b->refType == NVTX_MEM_REGION_REF_TYPE_POINTER
					? (uint64_t)(uintptr_t)ref->pointer
					: (uint64_t)(uintptr_t)ref->handle;
		mem_region_t *r = region_find(addr, domain);
		if (!r)
			continue;
		region_freed(r);
		region_del(r);
	}
	pthread_mutex_unlock(&mem_lock);
}

/* ---- the extension's entry point --------------------------------------------- */

GMT_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *mi);

/* Called by each NVTX instance, once per extension module. Returns 1 also
 * for modules we do not serve (their slots stay empty and become no-ops):
 * 0 would mark the injection as failed for that module. */
GMT_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *mi)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!mi || mi->moduleId != NVTX_EXT_MODULEID_MEM || mi->compatId != NVTX_EXT_COMPATID_MEM)
		return 1;
	for (size_t s = 0; s < mi->segmentsCount; s++) {
		nvtxExtModuleSegment_t *seg = &mi->segments[s];
		if (seg->segmentId != 1 || seg->slotCount <= NVTX3EXT_CBID_nvtxMemRegionsUnregister)
			continue;
		intptr_t *slot = seg->functionSlots;
		slot[NVTX3EXT_CBID_nvtxMemHeapRegister] = (intptr_t)cb_heap_register;
		slot[NVTX3EXT_CBID_nvtxMemHeapUnregister] = (intptr_t)cb_heap_unregister;
		slot[NVTX3EXT_CBID_nvtxMemHeapReset] = (intptr_t)cb_heap_reset;
		slot[NVTX3EXT_CBID_nvtxMemRegionsRegister] = (intptr_t)cb_regions_register;
		slot[NVTX3EXT_CBID_nvtxMemRegionsResize] = (intptr_t)cb_regions_resize;
		slot[NVTX3EXT_CBID_nvtxMemRegionsUnregister] = (intptr_t)cb_regions_unregister;
	}
	return 1;
}
