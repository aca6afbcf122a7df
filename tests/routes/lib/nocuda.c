/*
 * nocuda.c - route_nocuda: a program linked to no CUDA library that finds
 * the preload's driver exports with dlsym(RTLD_DEFAULT). Before any driver
 * is loaded a hook has no real function: it must answer "not found"
 * (CUDA_ERROR_NOT_FOUND), leave the out-parameter alone and not crash. The
 * runtime's and NCCL's names are not found at all, as without the preload
 * (runtime and NCCL hooks are no exports). Once libcuda is dlopen'ed the
 * driver exports work and are traced. Also the public API (gpumemtrace.h): version,
 * trace path, and a flush after which the trace on disk, read while the
 * program still runs, holds every event so far ($ROUTE_DUMP names the dump
 * tool).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemtrace_flush");
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "gpumemtrace_version");
	const char *(*path)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "gpumemtrace_trace_path");
	CUresult (*alloc)(CUdeviceptr *, size_t) =
		(CUresult (*)(CUdeviceptr *, size_t))dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
	CUresult (*mfree)(CUdeviceptr) = (CUresult (*)(CUdeviceptr))dlsym(RTLD_DEFAULT, "cuMemFree_v2");
	int (*rt_malloc)(void **, size_t) = (int (*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
	int (*nccl_alloc)(void **, size_t) = (int (*)(void **, size_t))dlsym(RTLD_DEFAULT, "ncclMemAlloc");
	CUdeviceptr d = 0x1234, d2;
	char cmd[4096];

	printf("preload %s\n", flush && version && path ? "yes" : "no");
	printf("cudaMalloc %s, ncclMemAlloc %s\n", rt_malloc ? "present" : "absent",
	       nccl_alloc ? "present" : "absent");
	if (!flush || !version || !path || !alloc || !mfree)
		return 0;
	printf("version %s\n", version());
	printf("path before any event: %s\n", path() ? "set" : "null");
	printf("flush before any event: %d\n", flush());
	printf("cuMemAlloc_v2 without a driver: %d d=%#llx\n", (int)alloc(&d, 4096), (unsigned long long)d);

	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult (*init)(unsigned) = h ? (CUresult (*)(unsigned))dlsym(h, "cuInit") : NULL;
	CUresult (*create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice) =
		h ? (CUresult (*)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice))dlsym(h, "cuCtxCreate_v4") : NULL;
	CUcontext ctx;
	if (!init || !create || init(0) != CUDA_SUCCESS || create(&ctx, NULL, 0, 0) != CUDA_SUCCESS)
		return 2;
	printf("cuMemAlloc_v2 with the driver: %d\n", (int)alloc(&d, 4096));
	printf("cuMemAlloc_v2 again: %d\n", (int)alloc(&d2, 8192));
	printf("cuMemFree_v2: %d\n", (int)mfree(d));
	printf("flush: %d\n", flush());
	printf("path: %s\n", path() ? "set" : "null");
	if (getenv("ROUTE_DUMP") && path()) {
		snprintf(cmd, sizeof cmd, "%s '%s' > dump-running.txt", getenv("ROUTE_DUMP"), path());
		printf("dump while running: %d\n", system(cmd));
	}
	return 0;
}
