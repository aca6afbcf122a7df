/*
 * rtlocal_main.c - route_rtlocal: loads extension modules the way Python
 * loads extensions (dlopen RTLD_NOW | RTLD_LOCAL; RTLD_LAZY with -lazy),
 * each carrying its own renamed runtime or NCCL (rtlocal_ext.c), runs them,
 * then probes for the runtime's and NCCL's names as a program checks
 * whether a library is present: dlsym(RTLD_DEFAULT, NAME) for every
 * runtime and NCCL hook of preload/hooks.def, and weak references bound by
 * ld.so at load time. The program is linked to no CUDA library, so every
 * probe must answer "absent", with and without the preload.
 *   route_rtlocal [-lazy] [TAG=MODULE ...]
 * Exit status: the sum of the modules' first results, modulo 128.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cuda_runtime_api.h>
#include <nccl.h>
#pragma GCC diagnostic pop

/* Weak references: 0 unless some loaded object defines them at start. */
extern __typeof__(cudaMalloc) cudaMalloc __attribute__((weak));
extern __typeof__(cudaFree) cudaFree __attribute__((weak));
extern __typeof__(ncclMemAlloc) ncclMemAlloc __attribute__((weak));
extern __typeof__(ncclCommInitRank) ncclCommInitRank __attribute__((weak));

static const char *const probe_names[] = {
#define GMT_HOOK(lib, name, ...) GMT_PROBE_##lib(name)
#define GMT_PROBE_DRV(name)
#define GMT_PROBE_RT(name) #name,
#define GMT_PROBE_NCCL(name) #name,
#include "hooks.def"
#undef GMT_HOOK
};

static void probe(const char *when)
{
	int present = 0, n = (int)(sizeof probe_names / sizeof probe_names[0]);

	for (int i = 0; i < n; i++) {
		if (dlsym(RTLD_DEFAULT, probe_names[i]) != NULL) {
			printf("%s: dlsym(RTLD_DEFAULT, %s) present\n", when, probe_names[i]);
			present++;
		}
	}
	printf("%s: %d of %d runtime and NCCL names present\n", when, present, n);
	printf("%s: weak cudaMalloc %s, cudaFree %s, ncclMemAlloc %s, ncclCommInitRank %s\n", when,
	       cudaMalloc ? "present" : "absent", cudaFree ? "present" : "absent",
	       ncclMemAlloc ? "present" : "absent", ncclCommInitRank ? "present" : "absent");
}

int main(int argc, char **argv)
{
	int mode = RTLD_NOW, sum = 0;

	probe("before");
	for (int i = 1; i < argc; i++) {
		char tag[64];
		const char *eq = strchr(argv[i], '=');
		int (*run)(const char *);
		void *h;

		if (strcmp(argv[i], "-lazy") == 0) {
			mode = RTLD_LAZY;
			continue;
		}
		if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof tag)
			return 126;
		memcpy(tag, argv[i], (size_t)(eq - argv[i]));
		tag[eq - argv[i]] = '\0';
		h = dlopen(eq + 1, mode | RTLD_LOCAL);
		if (h == NULL) {
			printf("%s: dlopen failed: %s\n", tag, dlerror());
			return 127;
		}
		run = (int (*)(const char *))dlsym(h, "ext_run");
		if (run == NULL)
			return 125;
		int r = run(tag);
		printf("%s: ext_run %d\n", tag, r);
		fflush(stdout);
		sum += r;
	}
	probe("after");
	return sum % 128;
}
