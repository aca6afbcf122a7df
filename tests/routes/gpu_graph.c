/*
 * gpu_graph - CUDA graphs' memory nodes, measured: the program of the GPU
 * check's row 16 (scripts/gpu-check.sh, docs/gpu-validation.md), built
 * against the real driver and runtime by `make gpu-progs` and against the
 * test doubles as a route program (gpu-check.sh --doubles runs it there).
 *
 *   capture (global mode) on a created stream: A 64 MiB and B 32 MiB
 *     stream-ordered, A freed in the graph (B outlives it)
 *   instantiate, launch, synchronise; the program reads the device's graph
 *     memory pool itself (cuDeviceGetGraphMemAttribute) and prints it
 *   phase "after_launch" (gpumemtrace's API, when the preload is there):
 *     its boundary samples the same pool; nothing changed in between
 *   B freed and synchronised, the pool trimmed
 *
 * Prints every result and the pool's four attributes; the same with and
 * without the tracer.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#define MiB (1024ull * 1024)

static int failed;

static void check(const char *what, CUresult r)
{
	printf("%s: %d\n", what, (int)r);
	failed |= r != CUDA_SUCCESS;
}

int main(void)
{
	void (*begin)(const char *) = NULL, (*end)(const char *) = NULL;
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr a = 0, b = 0;
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	cuuint64_t rc = 0, rh = 0, uc = 0, uh = 0;

	*(void **)&begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	*(void **)&end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	check("cuInit", cuInit(0));
	check("cuDeviceGet", cuDeviceGet(&dev, 0));
	check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
	check("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
	check("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	if (failed)
		return 1;
	check("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	check("cuMemAllocAsync A 64 MiB", cuMemAllocAsync(&a, 64 * MiB, s));
	check("cuMemAllocAsync B 32 MiB", cuMemAllocAsync(&b, 32 * MiB, s));
	check("cuMemFreeAsync A", cuMemFreeAsync(a, s));
	check("cuStreamEndCapture", cuStreamEndCapture(s, &g));
	if (failed)
		return 1;
	check("cuGraphInstantiate", cuGraphInstantiate(&x, g, 0));
	check("cuGraphLaunch", cuGraphLaunch(x, s));
	check("cuStreamSynchronize", cuStreamSynchronize(s));
	check("reserved", cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &rc));
	check("reserved high", cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &rh));
	check("used", cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &uc));
	check("used high", cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &uh));
	printf("graph pool after the launch: %llu %llu %llu %llu\n", (unsigned long long)rc,
	       (unsigned long long)rh, (unsigned long long)uc, (unsigned long long)uh);
	if (begin)
		begin("after_launch");
	if (end)
		end("after_launch");
	check("cuMemFreeAsync B", cuMemFreeAsync(b, s));
	check("cuStreamSynchronize", cuStreamSynchronize(s));
	check("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim(dev));
	check("cuGraphExecDestroy", cuGraphExecDestroy(x));
	check("cuGraphDestroy", cuGraphDestroy(g));
	check("cuStreamDestroy", cuStreamDestroy(s));
	return failed;
}
