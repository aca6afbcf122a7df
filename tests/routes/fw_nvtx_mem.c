/*
 * fw_nvtx_mem - the NVTX memory extension through the REAL NVTX3 headers of
 * the CUDA toolkit, describing a pool the way a sub-allocator (RMM) does;
 * it reaches the preload as an injection library (NVTX_INJECTION64_PATH).
 * tests/cases/fw_nvtx_mem.sh checks the trace's FW events.
 *
 * P = a 1 MiB cudaMalloc (device 0). Sequence:
 *   domain "rmm": heap H (sub-allocator, range P, 1 MiB) |
 *   regions P+0 (256) and P+4096 (1024), one batch, handles out |
 *   resize P+4096 to 2048 (and P+0 to 256: unchanged, nothing) |
 *   unregister P+0 by pointer | unregister P+4096 by handle |
 *   regions P+8192 (512), P+12288 (64) | reset H | region P+16384 (128) |
 *   unregister an unknown pointer (nothing) | layout heap L over P+16384
 *   with a region P+16384 (16): nothing | unregister L |
 *   unregister H (frees P+16384, then the segment) |
 *   default domain: heap D (range P+65536, 4096) with region P+65536 (32);
 *   process-wide region P+131072 (8) | reset the process-wide heap
 *   (frees P+131072) | unregister D (frees P+65536, then the segment) |
 *   cudaFree P.
 * stdout is the same with and without the preload except the line about
 * region handles (written by the tool only).
 */
#include <stdint.h>
#include <stdio.h>

#define NVTX_AS_SYSTEM_HEADER
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>

static nvtxMemHeapHandle_t heap(nvtxDomainHandle_t dom, uint32_t usage, void *p, size_t size)
{
	nvtxMemVirtualRangeDesc_t range = { size, p };
	nvtxMemHeapDesc_t d = { 0 };
	d.extCompatID = NVTX_EXT_COMPATID_MEM;
	d.structSize = sizeof(d);
	d.usage = usage;
	d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	d.typeSpecificDescSize = sizeof(range);
	d.typeSpecificDesc = &range;
	return nvtxMemHeapRegister(dom, &d);
}

static void regions(nvtxDomainHandle_t dom, nvtxMemHeapHandle_t h, const nvtxMemVirtualRangeDesc_t *r,
		    size_t n, nvtxMemRegionHandle_t *out)
{
	nvtxMemRegionsRegisterBatch_t b = { 0 };
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof(b);
	b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	b.heap = h;
	b.regionCount = n;
	b.regionDescElementSize = sizeof(*r);
	b.regionDescElements = r;
	b.regionHandleElementsOut = out;
	nvtxMemRegionsRegister(dom, &b);
}

static void unregister(nvtxDomainHandle_t dom, uint32_t type, nvtxMemRegionRef_t ref)
{
	nvtxMemRegionsUnregisterBatch_t b = { 0 };
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof(b);
	b.refType = type;
	b.refCount = 1;
	b.refElementSize = sizeof(ref);
	b.refElements = &ref;
	nvtxMemRegionsUnregister(dom, &b);
}

int main(void)
{
	char *p = NULL;
	printf("cudaMalloc = %d\n", (int)cudaMalloc((void **)&p, 1 << 20));
	nvtxDomainHandle_t rmm = nvtxDomainCreateA("rmm");

	nvtxMemHeapHandle_t h = heap(rmm, NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR, p, 1 << 20);
	nvtxMemVirtualRangeDesc_t r1[2] = { { 256, p }, { 1024, p + 4096 } };
	nvtxMemRegionHandle_t out[2] = { NULL, NULL };
	regions(rmm, h, r1, 2, out);
	if (out[0] == NULL && out[1] == NULL)
		fprintf(stderr, "handles untouched\n");
	else
		fprintf(stderr, "handles %s\n", (void *)out[0] == p && (void *)out[1] == p + 4096
							? "are the pointers" : "unexpected");

	nvtxMemVirtualRangeDesc_t rs[2] = { { 2048, p + 4096 }, { 256, p } };
	nvtxMemRegionsResizeBatch_t rb = { 0 };
	rb.extCompatID = NVTX_EXT_COMPATID_MEM;
	rb.structSize = sizeof(rb);
	rb.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	rb.regionDescCount = 2;
	rb.regionDescElementSize = sizeof(rs[0]);
	rb.regionDescElements = rs;
	nvtxMemRegionsResize(rmm, &rb);

	nvtxMemRegionRef_t ref;
	ref.pointer = p;
	unregister(rmm, NVTX_MEM_REGION_REF_TYPE_POINTER, ref);
	/* By handle: the tool's handle when it gave one, else the pointer
	 * (what a program without a tool would pass; nothing happens then). */
	ref.handle = out[1] ? out[1] : (nvtxMemRegionHandle_t)(void *)(p + 4096);
	unregister(rmm, NVTX_MEM_REGION_REF_TYPE_HANDLE, ref);

	nvtxMemVirtualRangeDesc_t r2[2] = { { 512, p + 8192 }, { 64, p + 12288 } };
	regions(rmm, h, r2, 2, NULL);
	nvtxMemHeapReset(rmm, h);
	nvtxMemVirtualRangeDesc_t r3 = { 128, p + 16384 };
	regions(rmm, h, &r3, 1, NULL);
	ref.pointer = p + 999;
	unregister(rmm, NVTX_MEM_REGION_REF_TYPE_POINTER, ref);

	nvtxMemHeapHandle_t l = heap(rmm, NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT, p + 16384, 128);
	nvtxMemVirtualRangeDesc_t r4 = { 16, p + 16384 };
	regions(rmm, l, &r4, 1, NULL);
	nvtxMemHeapUnregister(rmm, l);
	nvtxMemHeapUnregister(rmm, h);

	nvtxMemHeapHandle_t d = heap(NULL, NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR, p + 65536, 4096);
	nvtxMemVirtualRangeDesc_t r5 = { 32, p + 65536 };
	regions(NULL, d, &r5, 1, NULL);
	nvtxMemVirtualRangeDesc_t r6 = { 8, p + 131072 };
	regions(NULL, NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE, &r6, 1, NULL);
	nvtxMemHeapReset(NULL, NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE);
	nvtxMemHeapUnregister(NULL, d);

	printf("cudaFree = %d\n", (int)cudaFree(p));
	fprintf(stderr, "addr P %p\n", (void *)p);
	return 0;
}
