/*
 * route_dlsym - route 3: dlsym and dlvsym on a dlopen'ed libcuda handle (how
 * older PyTorch and many libraries reach the driver). Hooked names must come
 * back as our wrappers, every other name (including the 32-bit cuMemFree,
 * names that merely share a prefix, and unknown names) untouched. The
 * symbol name dladdr() gives for each pointer is printed: our wrappers are
 * exported under the driver's own names, so it is the same with and
 * without the preload, and it shows which implementation the caller got.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>

#include "route_util.h"

static const char *sym_name(void *p)
{
	Dl_info info;
	if (p == NULL)
		return "(null)";
	if (!dladdr(p, &info) || info.dli_sname == NULL || info.dli_saddr != p)
		return "(unnamed)";
	return info.dli_sname;
}

static void *look(void *h, const char *name)
{
	void *p = dlsym(h, name);
	printf("dlsym %s -> %s\n", name, sym_name(p));
	return p;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUdeviceptr a, m;
	CUcontext ctx;

	ROUTE_CHECK("dlopen", h != NULL, 1);
	CUresult (*init)(unsigned) = (CUresult (*)(unsigned))look(h, "cuInit");
	CUresult (*create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice) =
		(CUresult (*)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice))look(h, "cuCtxCreate_v4");
	CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))look(h, "cuMemAlloc_v2");
	CUresult (*fr)(CUdeviceptr) = (CUresult (*)(CUdeviceptr))look(h, "cuMemFree_v2");
	CUresult (*sync)(CUstream) = (CUresult (*)(CUstream))look(h, "cuStreamSynchronize");
	CUresult (*destroy)(CUcontext) = (CUresult (*)(CUcontext))look(h, "cuCtxDestroy_v2");
	/* Not hooked, or not a hooked name exactly: passed through as they are. */
	look(h, "cuMemFree");
	look(h, "cuMemGetInfo_v2");
	look(h, "cuMemAlloc_v2x");
	look(h, "cuMemAlloc_v");
	look(h, "cublasCreate_v2");
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned) =
		(CUresult (*)(CUdeviceptr *, size_t, unsigned))look(h, "cuMemAllocManaged");
	/* dlvsym: glibc matches only symbols of that version node; libcuda (the
	 * real one too) has none, so CUDA names are never found this way. Our
	 * dlvsym must answer as glibc's does. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	printf("dlvsym malloc -> %s\n", sym_name(dlvsym(libc, "malloc", "GLIBC_2.2.5")));
	printf("dlvsym cuMemAllocManaged -> %s\n", sym_name(dlvsym(h, "cuMemAllocManaged", "GLIBC_2.2.5")));
	if (!init || !create || !alloc || !fr || !sync || !destroy || !managed)
		return 2;

	ROUTE_CHECK("cuInit", init(0), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxCreate_v4", create(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	route_name("ctx", (uintptr_t)ctx);
	ROUTE_CHECK("cuMemAlloc_v2", alloc(&a, 65536), CUDA_SUCCESS);
	route_name("a", a);
	ROUTE_CHECK("cuMemAllocManaged", managed(&m, 8192, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	route_name("m", m);
	ROUTE_CHECK("cuStreamSynchronize", sync(NULL), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree_v2 a", fr(a), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree_v2 m", fr(m), CUDA_SUCCESS);
	ROUTE_CHECK("cuCtxDestroy_v2", destroy(ctx), CUDA_SUCCESS);
	return 0;
}
