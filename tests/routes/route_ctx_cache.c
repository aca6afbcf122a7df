/*
 * route_ctx_cache - the current context changes between allocations by
 * every route the preload's per-thread cache of it must notice
 * (tests/cases/route_ctx_cache.sh; GMT_FAKE_DEVICES=2). Each step changes
 * the context (or not) and then allocates STEP KiB with cuMemAlloc_v2, so
 * that the trace's ALLOC of that size must name the device the program's
 * own cuCtxGetCurrent/cuCtxGetDevice say; the program prints, per step,
 * "STEP KiB device=D ctx=HANDLE" from its own questions.
 *
 *   route_ctx_cache          every route the preload follows, cache on
 *   route_ctx_cache bypass   a context change through glibc's own dlsym on
 *                            libcuda's handle (we never see that call: the
 *                            look-up of dlsym itself turns the cache off)
 *   route_ctx_cache export   cuGetExportTable first (the driver's private
 *                            tables: the cache is off), then the same steps
 *
 * With one device (a real GPU machine: scripts/gpu-check.sh row 23, where
 * the same program is linked against the real runtime), "P1" is a context
 * created on device 0 and cudaSetDevice(1) is cudaSetDevice(0): every
 * allocation still names the program's own device and context.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "route_util.h"

static CUcontext p0, p1, c;

static void route_fail(const char *what)
{
	printf("failed: %s\n", what);
	fflush(stdout);
	exit(1);
}
static CUdevice d0, d1;
static int ndev;

/* Allocates kib KiB and says what the program itself sees as current. */
static void step(int kib)
{
	CUdeviceptr p;
	CUcontext cur = NULL;
	CUdevice dev = -1;

	ROUTE_CHECK("cuMemAlloc_v2", cuMemAlloc_v2(&p, (size_t)kib * 1024), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxGetCurrent", cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxGetDevice", cuCtxGetDevice(&dev), CUDA_SUCCESS);
	printf("%d KiB device=%d ctx=%s\n", kib, (int)dev,
	       cur == p0 ? "P0" : cur == p1 ? "P1" : cur == c && c != NULL ? "C" : "?");
}

static pthread_barrier_t bar;

/* Another thread: its own context; after the main thread's release of a
 * primary context (a context may have gone: looked at anew, written again). */
static void *thread_main(void *arg)
{
	(void)arg;
	ROUTE_CHECK("cuCtxSetCurrent P1 (thread)", cuCtxSetCurrent(p1), CUDA_SUCCESS);
	step(17);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	step(19);
	return NULL;
}

typedef CUresult (*set_fn)(CUcontext);
typedef CUresult (*pop_fn)(CUcontext *);

static void routes(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	CUdriverProcAddressQueryResult st;
	CUcontext x = NULL;
	set_fn set = NULL, push;
	pop_fn pop;
	pthread_t t;

	if (h == NULL)
		route_fail("dlopen libcuda.so.1");
	/* Exported symbols. */
	ROUTE_CHECK("cuCtxSetCurrent P0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	step(1);
	step(2); /* no change */
	ROUTE_CHECK("cuCtxSetCurrent P1", cuCtxSetCurrent(p1), CUDA_SUCCESS);
	step(3);
	ROUTE_CHECK("cuCtxPushCurrent_v2 P0", cuCtxPushCurrent_v2(p0), CUDA_SUCCESS);
	step(4);
	ROUTE_CHECK("cuCtxPopCurrent_v2", cuCtxPopCurrent_v2(&x), CUDA_SUCCESS);
	step(5);
	ROUTE_CHECK("cuCtxCreate_v4", cuCtxCreate_v4(&c, NULL, 0, d0), CUDA_SUCCESS);
	route_name("C", (uint64_t)(uintptr_t)c);
	step(6);
	ROUTE_CHECK("cuCtxDestroy_v2", cuCtxDestroy_v2(c), CUDA_SUCCESS); /* pops it: P1 */
	step(7);
	/* cuGetProcAddress. */
	ROUTE_CHECK("cuGetProcAddress cuCtxSetCurrent",
		    cuGetProcAddress_v2("cuCtxSetCurrent", (void **)&set, 12000, 0, &st), CUDA_SUCCESS);
	ROUTE_CHECK("its cuCtxSetCurrent P0", set(p0), CUDA_SUCCESS);
	step(8);
	/* dlsym on the driver's handle, current and legacy names. */
	push = (set_fn)dlsym(h, "cuCtxPushCurrent_v2");
	pop = (pop_fn)dlsym(h, "cuCtxPopCurrent_v2");
	if (push == NULL || pop == NULL)
		route_fail("dlsym cuCtxPushCurrent_v2/cuCtxPopCurrent_v2");
	ROUTE_CHECK("dlsym'd push P1", push(p1), CUDA_SUCCESS);
	step(9);
	ROUTE_CHECK("dlsym'd pop", pop(&x), CUDA_SUCCESS);
	step(10);
	push = (set_fn)dlsym(h, "cuCtxPushCurrent");
	pop = (pop_fn)dlsym(h, "cuCtxPopCurrent");
	if (push == NULL || pop == NULL)
		route_fail("dlsym cuCtxPushCurrent/cuCtxPopCurrent");
	ROUTE_CHECK("legacy push P1", push(p1), CUDA_SUCCESS);
	step(11);
	ROUTE_CHECK("legacy pop", pop(&x), CUDA_SUCCESS);
	step(12);
	/* The runtime makes a device's primary context current itself. */
	ROUTE_CHECK("cudaSetDevice 1", cudaSetDevice(ndev > 1 ? 1 : 0), cudaSuccess);
	step(13);
	ROUTE_CHECK("cudaSetDevice 0", cudaSetDevice(0), cudaSuccess);
	step(14);
	/* A primary context's reset and release (contexts went: every thread
	 * looks anew, and the trace says the context again). */
	ROUTE_CHECK("cuDevicePrimaryCtxReset_v2 0", cuDevicePrimaryCtxReset_v2(d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 0", cuDevicePrimaryCtxRetain(&p0, d0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent P0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	step(15);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 1", cuDevicePrimaryCtxRetain(&x, d1), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRelease_v2 1", cuDevicePrimaryCtxRelease_v2(d1), CUDA_SUCCESS);
	step(16);
	/* Another thread with another context; this one's stays. */
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		route_fail("thread");
	pthread_barrier_wait(&bar);
	step(18);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 1", cuDevicePrimaryCtxRetain(&x, d1), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRelease_v2 1", cuDevicePrimaryCtxRelease_v2(d1), CUDA_SUCCESS);
	pthread_barrier_wait(&bar);
	if (pthread_join(t, NULL) != 0)
		route_fail("thread");
}

/* glibc's own dlsym, found through our dlvsym: with it, libcuda's
 * cuCtxSetCurrent itself, which we never see being called. */
static void bypass(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *(*sym)(void *, const char *);
	set_fn set;

	if (libc == NULL || h == NULL)
		route_fail("dlopen libc.so.6/libcuda.so.1");
	sym = (void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.34");
	if (sym == NULL)
		sym = (void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.2.5");
	if (sym == NULL)
		route_fail("glibc's dlsym");
	set = (set_fn)sym(h, "cuCtxSetCurrent");
	if (set == NULL)
		route_fail("libcuda's cuCtxSetCurrent");
	ROUTE_CHECK("cuCtxSetCurrent P0", cuCtxSetCurrent(p0), CUDA_SUCCESS);
	step(1);
	ROUTE_CHECK("libcuda's own cuCtxSetCurrent P1", set(p1), CUDA_SUCCESS);
	step(2);
	ROUTE_CHECK("libcuda's own cuCtxSetCurrent P0", set(p0), CUDA_SUCCESS);
	step(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "routes";

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGetCount", cuDeviceGetCount(&ndev), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGet 0", cuDeviceGet(&d0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain 0", cuDevicePrimaryCtxRetain(&p0, d0), CUDA_SUCCESS);
	if (ndev > 1) {
		ROUTE_CHECK("cuDeviceGet 1", cuDeviceGet(&d1, 1), CUDA_SUCCESS);
		ROUTE_CHECK("cuDevicePrimaryCtxRetain 1", cuDevicePrimaryCtxRetain(&p1, d1), CUDA_SUCCESS);
	} else {
		CUcontext x;
		d1 = d0;
		ROUTE_CHECK("cuCtxCreate_v4 P1", cuCtxCreate_v4(&p1, NULL, 0, d0), CUDA_SUCCESS);
		ROUTE_CHECK("cuCtxPopCurrent_v2", cuCtxPopCurrent_v2(&x), CUDA_SUCCESS);
	}
	route_name("P0", (uint64_t)(uintptr_t)p0);
	route_name("P1", (uint64_t)(uintptr_t)p1);
	if (strcmp(mode, "bypass") == 0) {
		bypass();
		return 0;
	}
	if (strcmp(mode, "export") == 0) {
		const void *tab = NULL;
		CUuuid id;
		memset(&id, 0, sizeof id);
		printf("cuGetExportTable %d\n", (int)cuGetExportTable(&tab, &id));
	}
	routes();
	return 0;
}
