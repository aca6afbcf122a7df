/*
 * phase_nvtx - NVTX ranges through the REAL NVTX3 headers of the CUDA
 * toolkit (header-only: this program carries its own NVTX instance), reaching
 * the preload as an injection library (NVTX_INJECTION64_PATH), plus a second
 * instance: libphase_nvtx.so (argv[1]), dlopen()ed, built with NVTX3 too.
 *
 * Prints every value NVTX returns (levels of push/pop, range ids); without an
 * injection NVTX returns -2 (NVTX_NO_PUSH_POP_TRACKING) and 0 ids, and the
 * program runs the same. tests/cases/nvtx_ranges.sh checks stdout and the
 * trace's range events; the sequence, on thread t0 unless said:
 *   push A "outer" | push W "wide é中" | domain gpumemtrace: push Ex
 *   (registered "registered"), mark Ex "gmark", pop | pop |
 *   domain custom (created with W): push Ex "c1", mark Ex W "cmark",
 *   start Ex "cse" (id 1), end | domain other: mark Ex "omark" |
 *   the library: push "lib", custom push "lib_c", mark "lib_mark", start
 *   "lib_se" (id 2), custom pop, pop | custom pop |
 *   start "async" (id 3) | t1: end 3, push "t1", start W "wstart" (id 4), pop
 *   | end 4 | end 2 | marks A "m_a", W "m_w", Ex "m_ex" | push Ex W "ex_w",
 *   pop | start Ex "ex_se" (id 5), end | pop | pop (nothing open: -1) |
 *   gpumemtrace pop (nothing open: -1)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <wchar.h>

#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>

static nvtxEventAttributes_t attr_a(const char *m)
{
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = m;
	return a;
}

static nvtxEventAttributes_t attr_w(const wchar_t *m)
{
	nvtxEventAttributes_t a = attr_a(NULL);
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = m;
	return a;
}

static nvtxRangeId_t async_id;

static void *worker(void *arg)
{
	nvtxRangeEnd(async_id);
	printf("t1 push t1 = %d\n", nvtxRangePushA("t1"));
	nvtxRangeId_t id = nvtxRangeStartW(L"wstart");
	printf("t1 start wstart = %llu\n", (unsigned long long)id);
	printf("t1 pop = %d\n", nvtxRangePop());
	*(nvtxRangeId_t *)arg = id;
	return NULL;
}

int main(int argc, char **argv)
{
	nvtxEventAttributes_t a;
	nvtxRangeId_t id, lib_id, t1_id = 0;
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: phase_nvtx LIBPHASE_NVTX_SO\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	nvtxRangeId_t (*lib_run)(void) = lib ? (nvtxRangeId_t (*)(void))dlsym(lib, "phase_nvtx_lib_run") : NULL;
	if (!lib_run) {
		fprintf(stderr, "phase_nvtx: %s\n", dlerror());
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);

	printf("push outer = %d\n", nvtxRangePushA("outer"));
	printf("push wide = %d\n", nvtxRangePushW(L"wide \u00e9\u4e2d"));
	nvtxDomainHandle_t g = nvtxDomainCreateA("gpumemtrace");
	a = attr_a(NULL);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(g, "registered");
	printf("gpumemtrace push registered = %d\n", nvtxDomainRangePushEx(g, &a));
	a = attr_a("gmark");
	nvtxDomainMarkEx(g, &a);
	printf("gpumemtrace pop = %d\n", nvtxDomainRangePop(g));
	printf("pop = %d\n", nvtxRangePop());

	nvtxDomainHandle_t c = nvtxDomainCreateW(L"custom");
	a = attr_a("c1");
	printf("custom push c1 = %d\n", nvtxDomainRangePushEx(c, &a));
	a = attr_w(L"cmark");
	nvtxDomainMarkEx(c, &a);
	a = attr_a("cse");
	id = nvtxDomainRangeStartEx(c, &a);
	printf("custom start cse = %llu\n", (unsigned long long)(id & ~(1ull << 63)));
	nvtxDomainRangeEnd(c, id);
	nvtxDomainHandle_t o = nvtxDomainCreateA("other");
	a = attr_a("omark");
	nvtxDomainMarkEx(o, &a);

	lib_id = lib_run();
	printf("custom pop = %d\n", nvtxDomainRangePop(c));

	async_id = nvtxRangeStartA("async");
	printf("start async = %llu\n", (unsigned long long)async_id);
	if (pthread_create(&t, NULL, worker, &t1_id) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	nvtxRangeEnd(t1_id);
	nvtxRangeEnd(lib_id);

	nvtxMarkA("m_a");
	nvtxMarkW(L"m_w");
	a = attr_a("m_ex");
	nvtxMarkEx(&a);
	a = attr_w(L"ex_w");
	printf("push ex_w = %d\n", nvtxRangePushEx(&a));
	printf("pop = %d\n", nvtxRangePop());
	a = attr_a("ex_se");
	id = nvtxRangeStartEx(&a);
	printf("start ex_se = %llu\n", (unsigned long long)id);
	nvtxRangeEnd(id);
	printf("pop outer = %d\n", nvtxRangePop());
	printf("pop nothing = %d\n", nvtxRangePop());
	printf("gpumemtrace pop nothing = %d\n", nvtxDomainRangePop(g));
	return 0;
}
