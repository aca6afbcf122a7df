/*
 * route_objects - device memory that is no plain allocation, each of its
 * own kind (tests/cases/route_objects.sh):
 *   arrays: A1 cuArrayCreate_v2 1000 x 100 float (400000 B from its
 *     descriptor), A2 cuArray3DCreate_v2 256 x 256 x 4 channels of bytes with
 *     CUDA_ARRAY3D_DEFERRED_MAPPING (262144 B of memory requirements, none
 *     of its own), M1 cuMipmappedArrayCreate 64 x 64 bytes, 3 levels (5376 B
 *     from its descriptor), R1 cudaMallocArray 500 x 10 float (20000 B,
 *     through the runtime double): all live at once, then destroyed;
 *   imported memory: a 1 MiB cuMemAlloc opened through an IPC handle, a
 *     3 MiB stream-ordered block opened through an exported pool and
 *     pointer (both open at once: 4 MiB imported), a 2 MiB cuMemCreate
 *     handle exported and imported (mapped, unmapped, released);
 *   a multicast object of 2 MiB with the 2 MiB handle bound into it.
 * Prints results (the same with and without the preload).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "route_util.h"

#define MiB (1024ull * 1024)

int main(void)
{
	CUDA_ARRAY_DESCRIPTOR d2;
	CUDA_ARRAY3D_DESCRIPTOR d3;
	struct cudaChannelFormatDesc fdesc = { 32, 0, 0, 0, cudaChannelFormatKindFloat };
	CUarray a1, a2;
	CUmipmappedArray m1;
	cudaArray_t r1;
	CUcontext ctx;
	CUdeviceptr p, opened, q, qopened, va;
	CUipcMemHandle ih;
	CUmemoryPool pool, ipool;
	CUmemPoolPtrExportData pd;
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle v, vi, mc;
	CUmulticastObjectProp mp;
	CUstream s;
	int fd = -1, pfd = -1;

	ROUTE_CHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	ROUTE_CHECK("cudaSetDevice", cudaSetDevice(0), cudaSuccess);	/* the runtime's primary context */
	ROUTE_CHECK("cuCtxGetCurrent", cuCtxGetCurrent(&ctx), CUDA_SUCCESS);

	/* ---- arrays ---- */
	memset(&d2, 0, sizeof(d2));
	d2.Width = 1000;
	d2.Height = 100;
	d2.Format = CU_AD_FORMAT_FLOAT;
	d2.NumChannels = 1;
	ROUTE_CHECK("cuArrayCreate A1", cuArrayCreate(&a1, &d2), CUDA_SUCCESS);
	route_name("a1", (uintptr_t)a1);
	memset(&d3, 0, sizeof(d3));
	d3.Width = 256;
	d3.Height = 256;
	d3.Format = CU_AD_FORMAT_UNSIGNED_INT8;
	d3.NumChannels = 4;
	d3.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING;
	ROUTE_CHECK("cuArray3DCreate A2 (deferred mapping)", cuArray3DCreate(&a2, &d3), CUDA_SUCCESS);
	route_name("a2", (uintptr_t)a2);
	memset(&d3, 0, sizeof(d3));
	d3.Width = 64;
	d3.Height = 64;
	d3.Format = CU_AD_FORMAT_UNSIGNED_INT8;
	d3.NumChannels = 1;
	ROUTE_CHECK("cuMipmappedArrayCreate M1", cuMipmappedArrayCreate(&m1, &d3, 3), CUDA_SUCCESS);
	route_name("m1", (uintptr_t)m1);
	ROUTE_CHECK("cudaMallocArray R1", cudaMallocArray(&r1, &fdesc, 500, 10, 0), cudaSuccess);
	route_name("r1", (uintptr_t)r1);
	ROUTE_CHECK("cudaFreeArray R1", cudaFreeArray(r1), cudaSuccess);
	ROUTE_CHECK("cuMipmappedArrayDestroy M1", cuMipmappedArrayDestroy(m1), CUDA_SUCCESS);
	ROUTE_CHECK("cuArrayDestroy A2", cuArrayDestroy(a2), CUDA_SUCCESS);
	ROUTE_CHECK("cuArrayDestroy A1", cuArrayDestroy(a1), CUDA_SUCCESS);

	/* ---- imported memory ---- */
	ROUTE_CHECK("cuMemAlloc P", cuMemAlloc(&p, MiB), CUDA_SUCCESS);
	route_name("p", p);
	ROUTE_CHECK("cuIpcGetMemHandle", cuIpcGetMemHandle(&ih, p), CUDA_SUCCESS);
	ROUTE_CHECK("cuIpcOpenMemHandle", cuIpcOpenMemHandle(&opened, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
		    CUDA_SUCCESS);
	route_name("opened", opened);
	ROUTE_CHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAllocAsync Q", cuMemAllocAsync(&q, 3 * MiB, s), CUDA_SUCCESS);
	route_name("q", q);
	ROUTE_CHECK("cuMemPoolExportToShareableHandle",
		    cuMemPoolExportToShareableHandle(&pfd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		    CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolImportFromShareableHandle",
		    cuMemPoolImportFromShareableHandle(&ipool, (void *)(intptr_t)pfd,
						       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		    CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolExportPointer", cuMemPoolExportPointer(&pd, q), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemPoolImportPointer", cuMemPoolImportPointer(&qopened, ipool, &pd), CUDA_SUCCESS);
	route_name("qopened", qopened);
	ROUTE_CHECK("cuIpcCloseMemHandle", cuIpcCloseMemHandle(opened), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree (the imported pool pointer)", cuMemFree(qopened), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFreeAsync Q", cuMemFreeAsync(q, s), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree P", cuMemFree(p), CUDA_SUCCESS);

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	ROUTE_CHECK("cuMemCreate V", cuMemCreate(&v, 2 * MiB, &prop, 0), CUDA_SUCCESS);
	route_name("v", v);
	ROUTE_CHECK("cuMemExportToShareableHandle",
		    cuMemExportToShareableHandle(&fd, v, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemImportFromShareableHandle",
		    cuMemImportFromShareableHandle(&vi, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		    CUDA_SUCCESS);
	route_name("vi", vi);
	ROUTE_CHECK("cuMemAddressReserve", cuMemAddressReserve(&va, 2 * MiB, 2 * MiB, 0, 0), CUDA_SUCCESS);
	route_name("va", va);
	ROUTE_CHECK("cuMemMap (the imported handle)", cuMemMap(va, 2 * MiB, 0, vi, 0), CUDA_SUCCESS);

	/* ---- a multicast object ---- */
	memset(&mp, 0, sizeof(mp));
	mp.numDevices = 1;
	mp.size = 2 * MiB;
	ROUTE_CHECK("cuMulticastCreate", cuMulticastCreate(&mc, &mp), CUDA_SUCCESS);
	route_name("mc", mc);
	ROUTE_CHECK("cuMulticastAddDevice", cuMulticastAddDevice(mc, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMulticastBindMem", cuMulticastBindMem(mc, 0, v, 0, 2 * MiB, 0), CUDA_SUCCESS);
	ROUTE_CHECK("cuMulticastUnbind", cuMulticastUnbind(mc, 0, 0, 2 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemRelease (the multicast object)", cuMemRelease(mc), CUDA_SUCCESS);

	ROUTE_CHECK("cuMemUnmap", cuMemUnmap(va, 2 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemRelease (the imported handle)", cuMemRelease(vi), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemAddressFree", cuMemAddressFree(va, 2 * MiB), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemRelease V", cuMemRelease(v), CUDA_SUCCESS);
	ROUTE_CHECK("cuStreamDestroy", cuStreamDestroy(s), CUDA_SUCCESS);
	return 0;
}
