/* double_lookup.c - tests the driver double's cuGetProcAddress(_v2) alone:
 * answers by (name, requested version, per-thread flag), statuses, and that
 * every answer is the address of the exported symbol of exactly that name
 * (what dlsym on the libcuda handle returns), as the interposer relies on. */
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>

#include "../fakecuda/double_check.h"

static void *lib;

/* name, version, flags -> exact exported symbol expected (NULL: not found) */
static void expect(const char *name, int version, cuuint64_t flags, const char *symbol,
		   CUdriverProcAddressQueryResult status)
{
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
	void *fn = (void *)1;
	CUresult r = cuGetProcAddress_v2(name, &fn, version, flags, &st);
	void *want = symbol ? dlsym(lib, symbol) : NULL;

	if (symbol && want == NULL) {
		fprintf(stderr, "test bug: %s not exported\n", symbol);
		dc_failures++;
	}
	if (r != (symbol ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND) || fn != want || st != status) {
		Dl_info di;
		const char *got = fn && dladdr(fn, &di) && di.dli_sname ? di.dli_sname : "(none)";

		fprintf(stderr, "lookup %s@%d flags %llu: result %d status %d symbol %s, expected %s\n",
			name, version, (unsigned long long)flags, (int)r, (int)st, got,
			symbol ? symbol : "not found");
		dc_failures++;
	}
}

#define LEG CU_GET_PROC_ADDRESS_LEGACY_STREAM
#define PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define OK CU_GET_PROC_ADDRESS_SUCCESS

/* With GMT_FAKE_DRIVER_VERSION=12080 the 13.0 entries do not exist. */
static int old_driver(void)
{
	int v = 0;

	DC_EQ(CUDA_SUCCESS, cuDriverGetVersion(&v));
	DC_EQ(12080, v);
	expect("cuCtxSynchronize", 13000, LEG, "cuCtxSynchronize", OK);
	expect("cuCtxGetDevice", 13000, LEG, "cuCtxGetDevice", OK);
	expect("cuCtxCreate", 13000, LEG, "cuCtxCreate_v4", OK);
	expect("cuMemAlloc", 13000, LEG, "cuMemAlloc_v2", OK);
	DC_DONE();
}

int main(void)
{
	void *fn = NULL;
	Dl_info di;
	const char *dv = getenv("GMT_FAKE_DRIVER_VERSION");

	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	DC_TRUE(lib != NULL);
	if (!lib)
		DC_DONE();
	if (dv && strcmp(dv, "12080") == 0)
		return old_driver();
	/* Works before cuInit, like the real driver. */
	expect("cuMemAlloc", 13000, LEG, "cuMemAlloc_v2", OK);
	expect("cuMemAlloc", 13000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAlloc_v2", OK);
	expect("cuMemAlloc", 3000, LEG, "cuMemAlloc", OK);
	expect("cuMemFree", 12000, LEG, "cuMemFree_v2", OK);
	expect("cuCtxSynchronize", 12000, LEG, "cuCtxSynchronize", OK);
	expect("cuCtxSynchronize", 12090, PTDS, "cuCtxSynchronize", OK);
	expect("cuCtxSynchronize", 13000, LEG, "cuCtxSynchronize_v2", OK);
	expect("cuCtxGetDevice", 12000, LEG, "cuCtxGetDevice", OK);
	expect("cuCtxGetDevice", 13000, LEG, "cuCtxGetDevice_v2", OK);
	expect("cuCtxCreate", 13000, LEG, "cuCtxCreate_v4", OK);
	expect("cuCtxCreate", 11040, LEG, "cuCtxCreate_v3", OK);
	expect("cuCtxCreate", 4000, LEG, "cuCtxCreate_v2", OK);
	expect("cuMemAllocAsync", 13000, PTDS, "cuMemAllocAsync_ptsz", OK);
	expect("cuMemAllocAsync", 13000, LEG, "cuMemAllocAsync", OK);
	expect("cuMemAllocAsync", 13000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAllocAsync", OK);
	expect("cuMemFreeAsync", 12000, PTDS, "cuMemFreeAsync_ptsz", OK);
	expect("cuMemAllocFromPoolAsync", 12000, PTDS, "cuMemAllocFromPoolAsync_ptsz", OK);
	expect("cuStreamSynchronize", 13000, PTDS, "cuStreamSynchronize_ptsz", OK);
	expect("cuStreamSynchronize", 13000, LEG, "cuStreamSynchronize", OK);
	expect("cuEventRecord", 13000, PTDS, "cuEventRecord_ptsz", OK);
	expect("cuMemcpyHtoD", 13000, PTDS, "cuMemcpyHtoD_v2_ptds", OK);
	expect("cuMemcpyHtoD", 13000, LEG, "cuMemcpyHtoD_v2", OK);
	expect("cuMemCreate", 13000, PTDS, "cuMemCreate", OK);	/* no variant: the one */
	expect("cuStreamDestroy", 13000, LEG, "cuStreamDestroy_v2", OK);
	expect("cuDevicePrimaryCtxRelease", 13000, LEG, "cuDevicePrimaryCtxRelease_v2", OK);
	expect("cuDevicePrimaryCtxRelease", 10020, LEG, "cuDevicePrimaryCtxRelease", OK);
	expect("cuGetProcAddress", 12000, LEG, "cuGetProcAddress_v2", OK);
	expect("cuGetProcAddress", 11080, LEG, "cuGetProcAddress", OK);
	expect("cuGetExportTable", 13000, LEG, "cuGetExportTable", OK);
	/* Not in the table; too old a version. */
	expect("cuNoSuchThing", 13000, LEG, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	expect("cublasCreate_v2", 13000, LEG, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	expect("cuMemAllocAsync", 11000, LEG, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	expect("cuMemCreate", 10010, LEG, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	/* The legacy 4-argument entry point. */
	DC_EQ(CUDA_SUCCESS, cuGetProcAddress("cuCtxSynchronize", &fn, 13000, LEG, NULL));
	DC_TRUE(fn == dlsym(lib, "cuCtxSynchronize_v2"));
	{
		/* cuda.h maps cuGetProcAddress to _v2; reach the 4-argument
		 * export the way an old program would. */
		CUresult (*gpa)(const char *, void **, int, cuuint64_t) =
			(CUresult (*)(const char *, void **, int, cuuint64_t))dlsym(lib, "cuGetProcAddress");

		DC_TRUE(gpa != NULL);
		if (gpa) {
			fn = NULL;
			DC_EQ(CUDA_SUCCESS, gpa("cuStreamSynchronize", &fn, 13000, PTDS));
			DC_TRUE(fn == dlsym(lib, "cuStreamSynchronize_ptsz"));
			DC_EQ(CUDA_ERROR_NOT_FOUND, gpa("cuNoSuchThing", &fn, 13000, LEG));
		}
	}
	/* Invalid flags. */
	DC_EQ(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 8, NULL));
	/* dladdr names the exact symbol. */
	DC_EQ(CUDA_SUCCESS, cuGetProcAddress_v2("cuMemFreeAsync", &fn, 13000, PTDS, NULL));
	DC_TRUE(dladdr(fn, &di) && di.dli_sname && strcmp(di.dli_sname, "cuMemFreeAsync_ptsz") == 0);
	DC_DONE();
}
