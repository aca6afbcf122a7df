/*
 * procaddr_check - does the driver's cuGetProcAddress hand out its exported
 * symbols' addresses? (scripts/gpu-check.sh row 17; run WITHOUT the
 * preload.) For every driver hook of preload/hooks.def, the look-up the
 * runtime would make (its base name, at the hook's own version - the
 * newest ABI that hook implements - with the per-thread flag for a _ptsz
 * hook) is compared with dlsym of the hook's exact name on libcuda's
 * handle. Prints one line per look-up ("same", "differs" or "missing"
 * NAME) and a last line
 *   procaddr: L looked up, S the exported symbol, D differ, M missing
 * Identification by address (preload/gmt_interpose.c) holds when D = 0; the
 * preload also traces what differs through its prototype.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const struct { const char *name; int version; int ptsz; } hooks[] = {
#define GMT_FLAG_PTSZ 1
#define GMT_FLAG_CTX 0 /* (preload-private: not the per-thread flag) */
#define GMT_HOOK(lib, name, ret, params, args, minver, body, flags, req) GMT_ROW_##lib(name, minver, flags)
#define GMT_ROW_DRV(name, minver, flags) { #name, minver, flags },
#define GMT_ROW_RT(name, minver, flags)
#define GMT_ROW_NCCL(name, minver, flags)
#include "hooks.def"
#undef GMT_HOOK
};

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult (*get)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
	int looked = 0, same = 0, differ = 0, missing = 0;

	if (h == NULL) {
		printf("procaddr: no libcuda.so.1 (%s)\n", dlerror());
		return 2;
	}
	get = (CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))
		dlsym(h, "cuGetProcAddress_v2");
	if (get == NULL) {
		printf("procaddr: no cuGetProcAddress_v2\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
		char base[128];
		const char *n = hooks[i].name;
		size_t len = strlen(n);
		CUdriverProcAddressQueryResult st;
		void *fn = NULL, *sym;

		/* The base name: without _ptsz/_ptds and without _v<digits>. */
		if (len > 5 && (!strcmp(n + len - 5, "_ptsz") || !strcmp(n + len - 5, "_ptds")))
			len -= 5;
		snprintf(base, sizeof base, "%.*s", (int)len, n);
		{
			char *v = strrchr(base, '_');
			if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9')
				*v = '\0';
		}
		looked++;
		sym = dlsym(h, n);
		if (get(base, &fn, hooks[i].version,
			hooks[i].ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM,
			&st) != CUDA_SUCCESS || fn == NULL || sym == NULL) {
			printf("missing %s (%s)\n", n, base);
			missing++;
		} else if (fn == sym) {
			printf("same %s\n", n);
			same++;
		} else {
			printf("differs %s (%s at %d)\n", n, base, hooks[i].version);
			differ++;
		}
	}
	printf("procaddr: %d looked up, %d the exported symbol, %d differ, %d missing\n", looked, same, differ,
	       missing);
	return 0;
}
