/* double_driver.c - tests the driver double alone (no tracer): devices,
 * contexts, plain memory accounting, out-of-memory boundary, address reuse
 * across threads, two devices, virtual memory. Expects GMT_FAKE_DEVICES=2,
 * GMT_FAKE_MEM_BYTES=1073741824, GMT_FAKE_CONTEXT_BYTES=3145728 (set by
 * tests/cases/doubles_driver.sh). */
#include <cuda.h>
#include <pthread.h>
#include <string.h>

#include "../fakecuda/double_check.h"

#define TOTAL ((uint64_t)1 << 30)
#define CTXB ((uint64_t)3 << 20)

static uint64_t free_now(void)
{
	size_t f = 0, t = 0;

	DC_EQ(CUDA_SUCCESS, cuMemGetInfo(&f, &t));
	DC_EQ(TOTAL, t);
	return f;
}

static void test_devices(void)
{
	char name[64], bus[32];
	CUuuid u;
	int n = 0, v = 0, major = 0, minor = 0;
	size_t total = 0;

	DC_EQ(CUDA_SUCCESS, cuDriverGetVersion(&v));	/* works before cuInit */
	DC_EQ(13000, v);
	DC_EQ(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
	DC_EQ(CUDA_SUCCESS, cuInit(0));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetCount(&n));
	DC_EQ(2, n);
	DC_EQ(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof(name), 2));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetName(name, sizeof(name), 1));
	DC_TRUE(strcmp(name, "Fake GPU 1") == 0);
	DC_EQ(CUDA_SUCCESS, cuDeviceGetPCIBusId(bus, sizeof(bus), 1));
	DC_TRUE(strcmp(bus, "0000:02:00.0") == 0);
	DC_EQ(CUDA_SUCCESS, cuDeviceGetUuid(&u, 1));
	DC_TRUE(memcmp(u.bytes, "gmtfake-\0\0\0\0\0\0\0\1", 16) == 0);
	DC_EQ(CUDA_SUCCESS, cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
	DC_EQ(CUDA_SUCCESS, cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
	DC_EQ(9, major);
	DC_EQ(0, minor);
	DC_EQ(CUDA_SUCCESS, cuDeviceTotalMem(&total, 0));
	DC_EQ(TOTAL, total);
}

static void test_contexts(CUcontext *primary0)
{
	CUcontext c = NULL, top = NULL, popped = NULL;
	CUdeviceptr p = 0;
	CUdevice d = -1;
	size_t f, t;

	DC_EQ(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 512));
	DC_EQ(CUDA_ERROR_INVALID_CONTEXT, cuMemGetInfo(&f, &t));
	DC_EQ(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
	DC_EQ(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(primary0, 0));
	DC_EQ(CUDA_SUCCESS, cuCtxSetCurrent(*primary0));
	DC_EQ(TOTAL - CTXB, free_now());
	/* A second retain takes no more memory; one release keeps it alive. */
	DC_EQ(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&c, 0));
	DC_TRUE(c == *primary0);
	DC_EQ(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(0));
	DC_EQ(TOTAL - CTXB, free_now());
	/* A created context is pushed and costs its own context bytes. */
	DC_EQ(CUDA_SUCCESS, cuCtxCreate(&c, NULL, 0, 0));
	DC_EQ(CUDA_SUCCESS, cuCtxGetCurrent(&top));
	DC_TRUE(top == c);
	DC_EQ(TOTAL - 2 * CTXB, free_now());
	DC_EQ(CUDA_SUCCESS, cuCtxPopCurrent(&popped));
	DC_TRUE(popped == c);
	DC_EQ(CUDA_SUCCESS, cuCtxGetCurrent(&top));
	DC_TRUE(top == *primary0);
	DC_EQ(CUDA_SUCCESS, cuCtxPushCurrent(c));
	DC_EQ(CUDA_SUCCESS, cuCtxDestroy(c));	/* also pops it */
	DC_EQ(CUDA_SUCCESS, cuCtxGetCurrent(&top));
	DC_TRUE(top == *primary0);
	DC_EQ(TOTAL - CTXB, free_now());
	DC_EQ(CUDA_SUCCESS, cuCtxGetDevice(&d));
	DC_EQ(0, d);
	DC_EQ(CUDA_SUCCESS, cuCtxGetDevice_v2(&d, NULL));
	DC_EQ(0, d);
	DC_EQ(CUDA_SUCCESS, cuCtxSynchronize());
	DC_EQ(CUDA_SUCCESS, cuCtxSynchronize_v2(NULL));
}

static void test_plain(void)
{
	CUdeviceptr a = 0, b = 0, m = 0, again = 0;
	size_t pitch = 0, size = 0;
	CUdeviceptr base = 0;
	void *h = NULL;
	int ord = -1;
	uint64_t f0 = free_now();

	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&a, 0));
	DC_EQ(CUDA_SUCCESS, cuMemAlloc(&a, 1000));		/* 1024 */
	DC_EQ(f0 - 1024, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemAllocPitch(&b, &pitch, 1000, 3, 4));	/* 3 x 1024 */
	DC_EQ(1024, pitch);
	DC_EQ(f0 - 4096, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemAllocManaged(&m, 513, CU_MEM_ATTACH_GLOBAL));	/* 1024 */
	DC_EQ(f0 - 5120, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemAllocHost(&h, 1 << 20));	/* host: not device memory */
	DC_EQ(f0 - 5120, free_now());
	memset(h, 7, 1 << 20);
	DC_EQ(CUDA_SUCCESS, cuMemFreeHost(h));
	DC_EQ(CUDA_SUCCESS, cuMemGetAddressRange(&base, &size, a + 10));
	DC_EQ(a, base);
	DC_EQ(1000, size);
	DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a));
	DC_EQ(0, ord);
	DC_EQ(0, a % 512);
	DC_EQ(CUDA_SUCCESS, cuMemcpyHtoD(a, "x", 1));
	DC_EQ(CUDA_SUCCESS, cuMemsetD8(a, 0, 1000));
	DC_EQ(CUDA_SUCCESS, cuMemFree(a));
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemFree(a));
	DC_EQ(f0 - 4096, free_now());
	/* Same rounded size: the freed address comes back at once. */
	DC_EQ(CUDA_SUCCESS, cuMemAlloc(&again, 1020));
	DC_EQ(a, again);
	DC_EQ(CUDA_SUCCESS, cuMemFree(again));
	DC_EQ(CUDA_SUCCESS, cuMemFree(b));
	DC_EQ(CUDA_SUCCESS, cuMemFree(m));
	DC_EQ(f0, free_now());
}

static void test_oom(void)
{
	uint64_t f0 = free_now();
	CUdeviceptr big = 0, one = 12345;

	/* Exactly what is free succeeds; one more byte does not, and leaves
	 * the out-parameter untouched. */
	DC_EQ(CUDA_SUCCESS, cuMemAlloc(&big, f0));
	DC_EQ(0, free_now());
	DC_EQ(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&one, 1));
	DC_EQ(12345, one);
	DC_EQ(CUDA_SUCCESS, cuMemFree(big));
	DC_EQ(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&one, f0 + 1));
	DC_EQ(12345, one);
	DC_EQ(f0, free_now());
}

/* A free in one thread, then an allocation of the same size in another:
 * the second gets the first's address. */
static CUcontext g_ctx;
static CUdeviceptr g_addr;

static void *thread_alloc(void *arg)
{
	CUdeviceptr p = 0;

	(void)arg;
	cuCtxSetCurrent(g_ctx);
	if (cuMemAlloc(&p, 4096) == CUDA_SUCCESS)
		g_addr = p;
	return NULL;
}

static void *thread_free(void *arg)
{
	cuMemFree(g_addr);
	return arg;
}

static void test_threads(CUcontext primary0)
{
	pthread_t t;
	CUdeviceptr first;
	uint64_t f0 = free_now();

	g_ctx = primary0;
	pthread_create(&t, NULL, thread_alloc, NULL);
	pthread_join(t, NULL);
	first = g_addr;
	DC_TRUE(first != 0);
	pthread_create(&t, NULL, thread_free, NULL);	/* no context needed to free */
	pthread_join(t, NULL);
	g_addr = 0;
	pthread_create(&t, NULL, thread_alloc, NULL);
	pthread_join(t, NULL);
	DC_EQ(first, g_addr);
	DC_EQ(f0 - 4096, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemFree(g_addr));
	DC_EQ(f0, free_now());
}

static void test_two_devices(CUcontext primary0)
{
	CUcontext c1 = NULL;
	CUdeviceptr p0 = 0, p1 = 0;
	int ord = -1;
	uint64_t f0 = free_now();

	DC_EQ(CUDA_SUCCESS, cuCtxCreate(&c1, NULL, 0, 1));
	DC_EQ(TOTAL - CTXB, free_now());	/* device 1: its context only */
	DC_EQ(CUDA_SUCCESS, cuMemAlloc(&p1, 10 * MiB));
	DC_EQ(TOTAL - CTXB - 10 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p1));
	DC_EQ(1, ord);
	DC_EQ(CUDA_SUCCESS, cuCtxPushCurrent(primary0));
	DC_EQ(f0, free_now());			/* device 0 unchanged */
	DC_EQ(CUDA_SUCCESS, cuMemAlloc(&p0, 5 * MiB));
	DC_EQ(f0 - 5 * MiB, free_now());
	DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p0));
	DC_EQ(0, ord);
	DC_EQ(CUDA_SUCCESS, cuMemFree(p1));	/* freed on device 1 from device 0's context */
	DC_EQ(CUDA_SUCCESS, cuMemFree(p0));
	DC_EQ(f0, free_now());
	DC_EQ(CUDA_SUCCESS, cuCtxPopCurrent(NULL));
	DC_EQ(TOTAL - CTXB, free_now());
	DC_EQ(CUDA_SUCCESS, cuCtxDestroy(c1));
}

static size_t fk_roundup_test(uint64_t n)
{
	return (size_t)((n + 2 * MiB - 1) / (2 * MiB) * (2 * MiB));
}

static void test_vmm(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h = 0, h2 = 0;
	CUdeviceptr va = 0;
	size_t gran = 0, size = 0;
	int ord = -1;
	uint64_t f0 = free_now();

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 1;	/* not the current context's device */
	DC_EQ(CUDA_SUCCESS, cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	DC_EQ(2 * MiB, gran);
	DC_EQ(CUDA_SUCCESS, cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	DC_EQ(2 * MiB, gran);
	/* Address space is not memory. */
	DC_EQ(CUDA_SUCCESS, cuMemAddressReserve(&va, 512 * MiB, 0, 0, 0));
	DC_EQ(0, va % (2 * MiB));
	DC_EQ(f0, free_now());
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, 3 * MiB, &prop, 0));
	prop.location.id = 0;
	DC_EQ(CUDA_ERROR_OUT_OF_MEMORY, cuMemCreate(&h, fk_roundup_test(f0 + 1), &prop, 0));
	DC_EQ(CUDA_SUCCESS, cuMemCreate(&h, 4 * MiB, &prop, 0));
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemMap(va + 510 * MiB, 4 * MiB, 0, h, 0));	/* outside */
	DC_EQ(CUDA_SUCCESS, cuMemMap(va, 4 * MiB, 0, h, 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	DC_EQ(CUDA_SUCCESS, cuMemSetAccess(va, 4 * MiB, &acc, 1));
	DC_EQ(CUDA_SUCCESS, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + 100));
	DC_EQ(0, ord);
	DC_EQ(CUDA_SUCCESS, cuMemGetAddressRange(NULL, &size, va + 100));
	DC_EQ(4 * MiB, size);
	/* Retain + release leaves the count as it was (NCCL's free does this). */
	DC_EQ(CUDA_SUCCESS, cuMemRetainAllocationHandle(&h2, (void *)(va + 4096)));
	DC_TRUE(h2 == h);
	DC_EQ(CUDA_SUCCESS, cuMemRelease(h2));
	/* Released while mapped: still counted until unmapped. */
	DC_EQ(CUDA_SUCCESS, cuMemRelease(h));
	DC_EQ(f0 - 4 * MiB, free_now());
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(va, 512 * MiB));	/* still mapped */
	DC_EQ(CUDA_SUCCESS, cuMemUnmap(va, 4 * MiB));
	DC_EQ(f0, free_now());
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(va, 2 * MiB));	/* wrong size */
	DC_EQ(CUDA_SUCCESS, cuMemAddressFree(va, 512 * MiB));
	/* Physical memory on device 1 is device 1's, whatever is current. */
	prop.location.id = 1;
	DC_EQ(CUDA_SUCCESS, cuMemCreate(&h, 6 * MiB, &prop, 0));
	DC_EQ(f0, free_now());
	DC_EQ(CUDA_SUCCESS, cuMemRelease(h));	/* never mapped: freed at once */
}

int main(void)
{
	CUcontext primary0 = NULL;
	const void *tab = (const void *)1;

	test_devices();
	test_contexts(&primary0);
	test_plain();
	test_oom();
	test_threads(primary0);
	test_two_devices(primary0);
	test_vmm();
	DC_EQ(CUDA_ERROR_NOT_SUPPORTED, cuGetExportTable(&tab, NULL));
	DC_TRUE(tab == NULL);
	DC_EQ(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(0));
	DC_DONE();
}
