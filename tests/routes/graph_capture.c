/*
 * graph_capture - CUDA graphs' memory nodes (tests/cases/graph_capture.sh).
 * On a created stream s of device 0's primary context:
 *   capture (global mode): A 8 MiB and B 4 MiB stream-ordered on s, A
 *     freed on s (B outlives the graph); nothing is backed yet; the phase
 *     "capture" opens in the middle: its boundary samples the device while
 *     the capture goes on, which must not invalidate it
 *   the graph runs: the device's graph memory pool reserves the 12 MiB the
 *     graph needs at once; B (4 MiB) stays in use after it
 *   phase "graph" begins; B freed (back to the pool) and synchronised;
 *     "graph" ends; the pool trimmed; phase "trimmed" begins and ends
 *   C: a plain 1 MiB cuMemAlloc, the only device bytes any total counts
 * Prints results and device-used deltas (the same with and without the
 * preload). Phases come from gpumemtrace's API when the preload is there:
 * each of their boundaries samples the device, graph pool included.
 */
#include <cuda.h>
#include <dlfcn.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

static size_t used0;

static long long used(void)
{
	size_t fr = 0, total = 0;
	if (cuMemGetInfo(&fr, &total) != CUDA_SUCCESS)
		return -1;
	return (long long)(total - fr - used0);
}

int main(void)
{
	void (*begin)(const char *) = NULL, (*end)(const char *) = NULL;
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr a, b, c;
	CUgraph g;
	CUgraphExec x;
	CUstreamCaptureStatus st;
	size_t fr, total;

	*(void **)&begin = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_begin");
	*(void **)&end = dlsym(RTLD_DEFAULT, "gpumemtrace_phase_end");
	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxSetCurrent", cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	used0 = total - fr;
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	route_name("s", (uintptr_t)s);

	ROUTE_CHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamIsCapturing", cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
	ROUTE_CHECK("capturing", st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	ROUTE_CHECK("cuMemAllocAsync A", cuMemAllocAsync(&a, 8 * MiB, s), CUDA_SUCCESS);
	if (begin)
		begin("capture");
	ROUTE_CHECK("cuMemAllocAsync B", cuMemAllocAsync(&b, 4 * MiB, s), CUDA_SUCCESS);
	route_name("a", a);
	route_name("b", b);
	ROUTE_CHECK("cuMemFreeAsync A", cuMemFreeAsync(a, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamEndCapture", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	if (end)
		end("capture");
	ROUTE_CHECK("used after the capture", used(), 0);

	ROUTE_CHECK("cuGraphInstantiate", cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuGraphLaunch", cuGraphLaunch(x, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
	ROUTE_CHECK("used after the graph ran", used(), 12 * MiB);
	if (begin)
		begin("graph");
	ROUTE_CHECK("cuMemFreeAsync B", cuMemFreeAsync(b, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
	if (end)
		end("graph");
	ROUTE_CHECK("used with B freed (the pool keeps it)", used(), 12 * MiB);
	ROUTE_CHECK("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim(dev), CUDA_SUCCESS);
	ROUTE_CHECK("used after the trim", used(), 0);
	if (begin)
		begin("trimmed");
	if (end)
		end("trimmed");
	ROUTE_CHECK("cuMemAlloc C", cuMemAlloc(&c, MiB), CUDA_SUCCESS);
	route_name("c", c);
	ROUTE_CHECK("cuMemFree C", cuMemFree(c), CUDA_SUCCESS);
	ROUTE_CHECK("cuGraphExecDestroy", cuGraphExecDestroy(x), CUDA_SUCCESS);
	ROUTE_CHECK("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);
	return 0;
}
