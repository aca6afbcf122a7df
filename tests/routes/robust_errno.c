/*
 * robust_errno - errno is what the program set, whatever the preload did
 * inside a hook: before every call errno is set to a marker value, after it
 * the value is printed. Without the preload the doubles leave errno alone,
 * so both runs print the marker everywhere. Covers the driver (the first
 * call that captures a stack: libunwind's probe of memory), the runtime
 * (a driver call under it), a synchronisation (a cuMemGetInfo sample), a
 * failed allocation (a wait for the disk), NCCL, NVTX ranges through the
 * injection (phase boundary samples) and the public phase API. The NVTX
 * calls' results differ with a tool (the nesting level) and are not printed.
 * tests/cases/robust_errno.sh runs it.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "gpumemtrace.h"
#include "route_util.h"

/* Weak: NULL without the preload (calls are then skipped, errno kept). */
extern void gpumemtrace_phase_begin(const char *name) __attribute__((weak));
extern void gpumemtrace_phase_end(const char *name) __attribute__((weak));
extern void gpumemtrace_mark(const char *name) __attribute__((weak));
extern int gpumemtrace_flush(void) __attribute__((weak));
extern int gpumemtrace_fw_register(const char *name) __attribute__((weak));
extern void gpumemtrace_fw_counters(int fw, int device, uint64_t allocated, uint64_t allocated_peak,
				    uint64_t reserved, uint64_t reserved_peak) __attribute__((weak));
extern void gpumemtrace_meta(const char *key, const char *value) __attribute__((weak));

#define MARK 7171

#define KEEPS(what, call)                                                  \
	do {                                                               \
		errno = MARK;                                              \
		long long r_ = (long long)(call);                          \
		int e_ = errno;                                            \
		printf("%s = %lld, errno %s\n", (what), r_,                \
		       e_ == MARK ? "kept" : "CHANGED");                   \
		if (e_ != MARK)                                            \
			fprintf(stderr, "%s: errno %d\n", (what), e_);     \
	} while (0)

int main(void)
{
	CUcontext ctx;
	CUdeviceptr a, b, big;
	CUstream s;
	void *r;
	ncclComm_t comm;
	int dev = 0, fw = 0;

	KEEPS("cuInit", cuInit(0));
	KEEPS("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0));
	KEEPS("cuMemAlloc", cuMemAlloc(&a, 1 << 20));
	KEEPS("cuMemAlloc again", cuMemAlloc(&b, 1 << 20));
	KEEPS("cuStreamCreate", cuStreamCreate(&s, 0));
	KEEPS("cuMemAllocAsync", cuMemAllocAsync(&big, 1 << 20, s));
	KEEPS("cuMemFreeAsync", cuMemFreeAsync(big, s));
	KEEPS("cuStreamSynchronize", cuStreamSynchronize(s));
	KEEPS("cuCtxSynchronize", cuCtxSynchronize());
	KEEPS("cuMemAlloc too big", cuMemAlloc(&big, 1ull << 50));
	KEEPS("cudaMalloc", cudaMalloc(&r, 1 << 20));
	KEEPS("cudaFree", cudaFree(r));
	KEEPS("ncclCommInitAll", ncclCommInitAll(&comm, 1, &dev));
	KEEPS("ncclMemAlloc", ncclMemAlloc(&r, 1 << 20));
	KEEPS("ncclMemFree", ncclMemFree(r));
	KEEPS("ncclCommDestroy", ncclCommDestroy(comm));
	KEEPS("nvtxRangePushA", (nvtxRangePushA("step"), 0));
	KEEPS("nvtxMarkA", (nvtxMarkA("here"), 0));
	KEEPS("nvtxRangePop", (nvtxRangePop(), 0));
	KEEPS("gpumemtrace_phase_begin",
	      (gpumemtrace_phase_begin ? gpumemtrace_phase_begin("phase") : (void)0, 0));
	KEEPS("gpumemtrace_mark", (gpumemtrace_mark ? gpumemtrace_mark("m") : (void)0, 0));
	KEEPS("gpumemtrace_phase_end",
	      (gpumemtrace_phase_end ? gpumemtrace_phase_end("phase") : (void)0, 0));
	KEEPS("gpumemtrace_fw_register",
	      (fw = gpumemtrace_fw_register ? gpumemtrace_fw_register("errno_fw") : 0, 0));
	KEEPS("gpumemtrace_fw_counters",
	      (gpumemtrace_fw_counters ? gpumemtrace_fw_counters(fw, 0, 1, 2, 3, 4) : (void)0, 0));
	KEEPS("gpumemtrace_meta", (gpumemtrace_meta ? gpumemtrace_meta("k", "v") : (void)0, 0));
	KEEPS("gpumemtrace_flush", gpumemtrace_flush ? gpumemtrace_flush() : 0);
	KEEPS("cuMemFree", cuMemFree(a));
	KEEPS("cuMemFree again", cuMemFree(b));
	KEEPS("cuCtxDestroy", cuCtxDestroy(ctx));
	return 0;
}
