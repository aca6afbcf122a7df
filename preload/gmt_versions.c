/*
 * gmt_versions.c - which CUDA runtime(s) and NCCL answered the program, and
 * their versions, as META records: what a comparison of two traces across
 * driver and library versions must show (the driver's version is in each
 * DEVICE record, the files' build ids in the module map).
 *
 * The runtime and NCCL hooks pass the real function they are about to call
 * (gmt_versions_note()). The first time a function of a library we have not
 * seen arrives, that library's own cudaRuntimeGetVersion or ncclGetVersion
 * is looked up in it (dlopen RTLD_NOLOAD of its file, glibc's dlsym, and a
 * check that the symbol lies in that same file: dlsym on a handle searches
 * its dependencies too) and called once, with the re-entry guard set. One
 * META record per library:
 *
 *   cuda_runtime_version = "13000", cuda_runtime_file = "/path/libcudart.so.13"
 *   nccl_version = "22809",        nccl_file = "/path/libnccl.so.2"
 *
 * A program may load several runtimes (a wheel's renamed copy beside the
 * system's): each gets its record. Static runtimes inside libraries (cuBLAS,
 * NCCL) export nothing and never reach the runtime hooks: not recorded.
 *
 * Cost: a scan of the few real functions seen so far, per runtime/NCCL call.
 * The loader calls (dladdr, dlopen) run with no lock of ours held, as in
 * gmt_lib_note(): a thread running a library constructor holds the loader's
 * lock and may be the one calling us.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gmt_preload.h"

#define SEEN_MAX 64   /* real functions already attributed to a library */
#define LIBS_MAX 16   /* libraries probed                                */

static _Atomic(const void *) seen[SEEN_MAX];
static _Atomic unsigned n_seen;
static const void *libs[LIBS_MAX];   /* dli_fbase of each library probed */
static unsigned n_libs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int is_seen(const void *fn)
{
	unsigned n = atomic_load_explicit(&n_seen, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (atomic_load_explicit(&seen[i], memory_order_relaxed) == fn)
			return 1;
	return n >= SEEN_MAX; /* full: stop looking (every library seen by then) */
}

/* The library's own `name` (a function int f(int *)), or NULL. */
static int (*own_symbol(const char *file, const void *base, const char *name))(int *)
{
	void *(*sym)(void *, const char *) = atomic_load(&gmt_real_dlsym);
	void *h, *p;
	Dl_info info;

	if (sym == NULL || (h = dlopen(file, RTLD_LAZY | RTLD_NOLOAD)) == NULL)
		return NULL;
	p = sym(h, name);
	if (p != NULL && (!dladdr(p, &info) || info.dli_fbase != base))
		p = NULL;
	dlclose(h);
	return (int (*)(int *))p;
}

static void probe(const char *file, const void *base, enum gmt_hook_lib lib)
{
	const char *sym = lib == GMT_LIB_NCCL ? "ncclGetVersion" : "cudaRuntimeGetVersion";
	int (*get)(int *) = own_symbol(file, base, sym);
	const char *keys[2], *values[2];
	char version[24];
	int v = 0;

	if (get == NULL)
		return;
	GMT_GUARD_ENTER();
	int r = get(&v);
	GMT_GUARD_LEAVE();
	if (r != 0) /* cudaSuccess, ncclSuccess */
		return;
	snprintf(version, sizeof version, "%d", v);
	keys[0] = lib == GMT_LIB_NCCL ? "nccl_version" : "cuda_runtime_version";
	keys[1] = lib == GMT_LIB_NCCL ? "nccl_file" : "cuda_runtime_file";
	values[0] = version;
	values[1] = file;
	gmt_tracer_meta(keys, values, 2);
}

void gmt_versions_note(const void *fn, int lib)
{
	Dl_info info;
	unsigned i, n;
	int fresh = 1;

	if (fn == NULL || is_seen(fn))
		return;
	if (!dladdr(fn, &info) || info.dli_fname == NULL || info.dli_fbase == NULL)
		return;
	pthread_mutex_lock(&lock);
	n = atomic_load_explicit(&n_seen, memory_order_relaxed);
	for (i = 0; i < n && fresh; i++)
		fresh = atomic_load_explicit(&seen[i], memory_order_relaxed) != fn;
	if (fresh && n < SEEN_MAX) {
		atomic_store_explicit(&seen[n], fn, memory_order_relaxed);
		atomic_store_explicit(&n_seen, n + 1, memory_order_release);
	}
	for (i = 0; i < n_libs && fresh; i++)
		fresh = libs[i] != info.dli_fbase;
	if (fresh && n_libs < LIBS_MAX)
		libs[n_libs++] = info.dli_fbase;
	else
		fresh = 0;
	pthread_mutex_unlock(&lock);
	if (fresh)
		probe(info.dli_fname, info.dli_fbase, (enum gmt_hook_lib)lib);
}
