/*
 * route_driver_self - memory the driver takes that no allocation call
 * names, and graph memory nodes added with the graph API
 * (tests/cases/route_driver_self.sh; GMT_FAKE_MODULE_BYTES=1048576):
 *   a graph built with the graph API: a 3 MiB memory-allocation node
 *     (cuGraphAddMemAllocNode), a 1 MiB one (cuGraphAddNode_v2) freed by a
 *     free node in the graph (cuGraphAddMemFreeNode); nothing is backed
 *     until the graph runs; it runs: the device's graph pool reserves the
 *     4 MiB it needs at once, the 3 MiB block outlives it; then freed;
 *   cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 MiB): the driver's heap for
 *     device-side malloc;
 *   a module (cuModuleLoadData) and a library (cuLibraryLoadData), 1 MiB
 *     each on the double, unloaded again.
 * Prints results and device-used deltas (the same with and without the
 * preload).
 */
#include <cuda.h>
#include <string.h>

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
	static const char image[] = "not a real fatbin: the double reads no image";
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CUgraphNodeParams np;
	CUgraphNode n1, n2, n3;
	CUgraphExec x;
	CUgraph g;
	CUcontext ctx;
	CUstream s;
	CUmodule mod;
	CUlibrary lib;
	size_t fr, total;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemGetInfo", cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
	used0 = total - fr;
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	route_name("s", (uintptr_t)s);

	ROUTE_CHECK("cuGraphCreate", cuGraphCreate(&g, 0), CUDA_SUCCESS);
	route_name("g", (uintptr_t)g);
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.poolProps.location.id = 0;
	ap.bytesize = 3 * MiB;
	ROUTE_CHECK("cuGraphAddMemAllocNode 3 MiB", cuGraphAddMemAllocNode(&n1, g, NULL, 0, &ap), CUDA_SUCCESS);
	route_name("a", ap.dptr);
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
	np.alloc.poolProps = ap.poolProps;
	np.alloc.bytesize = MiB;
	ROUTE_CHECK("cuGraphAddNode_v2 alloc 1 MiB", cuGraphAddNode_v2(&n2, g, &n1, NULL, 1, &np), CUDA_SUCCESS);
	route_name("b", np.alloc.dptr);
	ROUTE_CHECK("cuGraphAddMemFreeNode", cuGraphAddMemFreeNode(&n3, g, &n2, 1, np.alloc.dptr), CUDA_SUCCESS);
	ROUTE_CHECK("used with the graph built", used(), 0);
	ROUTE_CHECK("cuGraphInstantiate", cuGraphInstantiateWithFlags(&x, g, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuGraphLaunch", cuGraphLaunch(x, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
	ROUTE_CHECK("used after the graph ran (its pool)", used(), 4 * MiB);
	ROUTE_CHECK("cuMemFreeAsync a", cuMemFreeAsync(ap.dptr, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	ROUTE_CHECK("used after the trim", used(), 0);
	ROUTE_CHECK("cuGraphExecDestroy", cuGraphExecDestroy(x), CUDA_SUCCESS);
	ROUTE_CHECK("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);

	ROUTE_CHECK("cuCtxSetLimit malloc heap 64 MiB", cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 * MiB),
		    CUDA_SUCCESS);
	ROUTE_CHECK("used with the heap", used(), 64 * MiB);

	ROUTE_CHECK("cuModuleLoadData", cuModuleLoadData(&mod, image), CUDA_SUCCESS);
	route_name("mod", (uintptr_t)mod);
	ROUTE_CHECK("cuLibraryLoadData", cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	route_name("lib", (uintptr_t)lib);
	ROUTE_CHECK("used with a module and a library", used(), 66 * MiB);
	ROUTE_CHECK("cuModuleUnload", cuModuleUnload(mod), CUDA_SUCCESS);
	ROUTE_CHECK("cuLibraryUnload", cuLibraryUnload(lib), CUDA_SUCCESS);
	ROUTE_CHECK("used at the end", used(), 64 * MiB);
	ROUTE_CHECK("cuStreamDestroy", cuStreamDestroy(s), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);
	return 0;
}
