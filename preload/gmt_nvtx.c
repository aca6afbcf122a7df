/*
 * gmt_nvtx.c - the preload as an NVTX injection library.
 *
 * How NVTX reaches us. Every library built with the NVTX3 headers (the
 * program, PyTorch, NCCL, ...) carries its own hidden copy of NVTX: a table
 * of function pointers that all start at an "init" stub. The first NVTX call
 * of a copy reads NVTX_INJECTION64_PATH, dlopen()s that library (for us the
 * already loaded preload: the same handle), looks up
 * InitializeInjectionNvtx2 and calls it with the copy's getExportTable.
 * We ask for the callback export table and write our handlers into the
 * copy's CORE (RangePush/Pop, RangeStart/End, Mark in the A, W and Ex forms)
 * and CORE2 (the domain forms, domain creation, registered strings) slots;
 * NVTX turns every slot we leave alone into a no-op. So:
 *   - the call comes once per copy, from any thread, possibly two copies at
 *     once: it only fills the table it was given and reads settings once;
 *   - an LD_PRELOADed symbol alone is never found (NVTX looks only in the
 *     library it dlopen()ed): the launcher sets NVTX_INJECTION64_PATH to the
 *     preload itself;
 *   - handles we give out (domains, registered strings, range ids) cross
 *     copies: a domain created in one copy may be used in another, so
 *     domains are one process-wide table (same name, same handle) and range
 *     ids come from one process-wide counter.
 *
 * What is recorded (docs/configuration.md): ranges and marks of the default
 * domain and of the domain "gpumemtrace" always; of other domains when
 * GPUMEMTRACE_PHASE_DOMAINS names them ("*": all). A push/pop becomes
 * RANGE_BEGIN/RANGE_END with the thread's nesting depth (shared with the
 * phase API, gmt_phases.c), a start/end becomes the same events with the
 * range id in addr, a mark a MARK; the message becomes a STRING (wide
 * messages converted to UTF-8; a registered string's handle IS its string
 * id). Colors, categories and payloads are ignored.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#include "gmt_phases.h"
#include "gmt_preload.h"

/* The whole NVTX API of a domain is a handle to this (opaque to NVTX). */
struct nvtxDomainRegistration_st {
	struct nvtxDomainRegistration_st *next;
	uint32_t name_id;       /* interned name; 0 when not recorded       */
	uint32_t idx;           /* slot of the per-thread NVTX levels       */
	int recorded;           /* its ranges and marks go into the trace   */
	char name[];
};
typedef struct nvtxDomainRegistration_st gmt_nvtx_domain_t;

/* The level NVTX returns from push/pop is per domain and thread: slot 0 is
 * the default domain, slot i the i-th domain created. Domains beyond the
 * last slot are not counted (their push/pop return 0). */
#define LEVEL_SLOTS 32u
static __thread uint32_t nvtx_level[LEVEL_SLOTS] __attribute__((tls_model("initial-exec")));

/* Range ids of NVTX start/end: process-wide, never 0. Ranges that are not
 * recorded get bit 63 set, so their end is recognised without a table. */
#define UNRECORDED_RANGE (1ull << 63)
static _Atomic uint64_t next_range_id;

/* A registered string's handle carries the string id; this one (above any
 * id) is what a domain that is not recorded gets. */
#define UNRECORDED_STRING ((uintptr_t)1 << 32)

static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;
static gmt_nvtx_domain_t *domains;
static uint32_t n_domains;

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static char *selected;          /* GPUMEMTRACE_PHASE_DOMAINS, or NULL */
static int nvtx_enabled = 1;    /* GPUMEMTRACE_NVTX */

static void settings_read(void)
{
	const char *s = getenv("GPUMEMTRACE_PHASE_DOMAINS");
	if (s && *s)
		selected = strdup(s);
	s = getenv("GPUMEMTRACE_NVTX");
	if (s && !strcmp(s, "0"))
		nvtx_enabled = 0;
}

/* Whether ranges of the domain called name are recorded. */
static int domain_selected(const char *name)
{
	if (!strcmp(name, GMT_PHASE_DOMAIN))
		return 1;
	if (!selected)
		return 0;
	const size_t len = strlen(name);
	for (const char *p = selected; *p;) {
		const char *comma = strchr(p, ',');
		const size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if ((n == 1 && *p == '*') || (n == len && !memcmp(p, name, n)))
			return 1;
		p += n + (comma != NULL);
	}
	return 0;
}

/* ---- messages ------------------------------------------------------------ */

/* wchar_t (UTF-32 on Linux) to UTF-8, truncated at a character boundary to
 * fit the buffer; invalid code points become U+FFFD. */
static void wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
	size_t n = 0;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char u[4];
		size_t k;
		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		if (c < 0x80) {
			u[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | c >> 6);
			u[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | c >> 12);
			u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			u[0] = (char)(0xf0 | c >> 18);
			u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k >= cap)
			break;
		memcpy(out + n, u, k);
		n += k;
	}
	out[n] = 0;
}

static uint32_t wide_string(const wchar_t *w)
{
	char buf[1024];
	wide_to_utf8(w, buf, sizeof buf);
	return gmt_phase_string(buf);
}

static uint32_t attr_message(const nvtxEventAttributes_t *a)
{
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return gmt_phase_string(a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return wide_string(a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		const uintptr_t v = (uintptr_t)a->message.registered;
		return v < UNRECORDED_STRING ? (uint32_t)v : 0;
	}
	default:
		return 0;
	}
}

/* ---- the common paths ---------------------------------------------------- */

static inline int recorded(const gmt_nvtx_domain_t *d)
{
	return d == NULL || d->recorded;
}

static inline uint32_t domain_id(const gmt_nvtx_domain_t *d)
{
	return d ? d->name_id : 0;
}

static inline uint32_t *level_of(const gmt_nvtx_domain_t *d)
{
	const uint32_t i = d ? d->idx : 0;
	return i < LEVEL_SLOTS ? &nvtx_level[i] : NULL;
}

/* Callers intern the message only for recorded domains: a domain that is
 * not recorded costs a level count and nothing else. */
static int push(const gmt_nvtx_domain_t *d, uint32_t name)
{
	uint32_t *lv = level_of(d);
	const int level = lv ? (int)(*lv)++ : 0;
	if (recorded(d))
		gmt_range_push(GMT_RANGE_NVTX_PUSHPOP, name, domain_id(d));
	return level;
}

static int pop(const gmt_nvtx_domain_t *d)
{
	uint32_t *lv = level_of(d);
	if (lv) {
		/* A pop without a push is the program's error: NVTX says so
		 * with a negative level, and there is no range to end. */
		if (*lv == 0)
			return -1;
		--*lv;
	}
	if (recorded(d))
		gmt_range_pop(GMT_RANGE_NVTX_PUSHPOP, 0, domain_id(d));
	return lv ? (int)*lv : 0;
}

static nvtxRangeId_t start(const gmt_nvtx_domain_t *d, uint32_t name)
{
	const uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed) + 1;
	if (!recorded(d))
		return id | UNRECORDED_RANGE;
	gmt_range_emit(GMT_EV_RANGE_BEGIN, GMT_RANGE_NVTX_STARTEND, id, 0, name, domain_id(d));
	return id;
}

static void end(const gmt_nvtx_domain_t *d, nvtxRangeId_t id)
{
	if (id == 0 || (id & UNRECORDED_RANGE))
		return;
	gmt_range_emit(GMT_EV_RANGE_END, GMT_RANGE_NVTX_STARTEND, id, 0, 0, domain_id(d));
}

/* NVTX marks carry the push/pop source (2), "from NVTX", and like every
 * MARK the thread's depth in size. */
static void mark(const gmt_nvtx_domain_t *d, uint32_t name)
{
	gmt_range_emit(GMT_EV_MARK, GMT_RANGE_NVTX_PUSHPOP, 0, gmt_range_depth(), name, domain_id(d));
}

/* ---- CORE handlers (the default domain) ---------------------------------- */

static void h_mark_ex(const nvtxEventAttributes_t *a) { mark(NULL, attr_message(a)); }
static void h_mark_a(const char *m) { mark(NULL, gmt_phase_string(m)); }
static void h_mark_w(const wchar_t *m) { mark(NULL, wide_string(m)); }
static nvtxRangeId_t h_start_ex(const nvtxEventAttributes_t *a) { return start(NULL, attr_message(a)); }
static nvtxRangeId_t h_start_a(const char *m) { return start(NULL, gmt_phase_string(m)); }
static nvtxRangeId_t h_start_w(const wchar_t *m) { return start(NULL, wide_string(m)); }
static void h_end(nvtxRangeId_t id) { end(NULL, id); }
static int h_push_ex(const nvtxEventAttributes_t *a) { return push(NULL, attr_message(a)); }
static int h_push_a(const char *m) { return push(NULL, gmt_phase_string(m)); }
static int h_push_w(const wchar_t *m) { return push(NULL, wide_string(m)); }
static int h_pop(void) { return pop(NULL); }

/* ---- CORE2 handlers (domains) -------------------------------------------- */

static void h_dmark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (recorded(d))
		mark(d, attr_message(a));
}

static nvtxRangeId_t h_dstart_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start(d, recorded(d) ? attr_message(a) : 0);
}

static void h_dend(nvtxDomainHandle_t d, nvtxRangeId_t id) { end(d, id); }

static int h_dpush_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(d, recorded(d) ? attr_message(a) : 0);
}

static int h_dpop(nvtxDomainHandle_t d) { return pop(d); }

static nvtxStringHandle_t registered(nvtxDomainHandle_t d, uint32_t id)
{
	/* NULL would read as "registration failed"; 0 is a valid no-name. */
	return (nvtxStringHandle_t)(recorded(d) ? (uintptr_t)id : UNRECORDED_STRING);
}

static nvtxStringHandle_t h_register_a(nvtxDomainHandle_t d, const char *s)
{
	return registered(d, recorded(d) ? gmt_phase_string(s) : 0);
}

static nvtxStringHandle_t h_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	return registered(d, recorded(d) ? wide_string(s) : 0);
}

/* Same name, same handle (in every NVTX copy); handles live until exit,
 * since another copy may still use one its creator destroyed. */
static nvtxDomainHandle_t domain_create(const char *name)
{
	GMT_KEEP_ERRNO;
	gmt_nvtx_domain_t *d;

	if (!name)
		return NULL;
	pthread_once(&settings_once, settings_read);
	pthread_mutex_lock(&domains_lock);
	for (d = domains; d; d = d->next)
		if (!strcmp(d->name, name))
			goto out;
	const size_t len = strlen(name);
	d = calloc(1, sizeof(*d) + len + 1);
	if (!d)
		goto out;
	memcpy(d->name, name, len + 1);
	d->idx = ++n_domains;
	d->recorded = domain_selected(name);
	/* Under our lock, so the handle is complete when anyone sees it (the
	 * tracer's lock nests inside ours; it never calls back into us). */
	if (d->recorded)
		d->name_id = gmt_phase_string(d->name);
	d->next = domains;
	domains = d;
out:
	pthread_mutex_unlock(&domains_lock);
	return d;
}

/* For the NVTX memory extension (gmt_nvtx_mem.c): the STRING id of a domain
 * handle's name, interned now if its ranges are not recorded; 0 for the
 * default domain. A heap described in domain "rmm" is framework "rmm". */
uint32_t gmt_nvtx_domain_string(const void *domain);
uint32_t gmt_nvtx_domain_string(const void *domain)
{
	const gmt_nvtx_domain_t *d = domain;
	if (!d)
		return 0;
	return d->name_id ? d->name_id : gmt_tracer_string(d->name);
}

static nvtxDomainHandle_t h_domain_create_a(const char *name) { return domain_create(name); }

static nvtxDomainHandle_t h_domain_create_w(const wchar_t *name)
{
	char buf[1024];
	if (!name)
		return NULL;
	wide_to_utf8(name, buf, sizeof buf);
	return domain_create(buf);
}

static void h_domain_destroy(nvtxDomainHandle_t d) { (void)d; }

/* ---- the entry point ----------------------------------------------------- */

/* Loaded by NVTX alone (NVTX_INJECTION64_PATH, not LD_PRELOAD): then our
 * driver hooks are not the process's definitions of the driver's names and
 * see none of its calls. The test: what the process's global scope gives
 * for cuMemAlloc_v2 is our own hook (preloaded: we come first) or not
 * (dlopen()ed by NVTX: not in the global scope; the driver's, or nothing).
 * Said once, on stderr and in the trace (NVTX_ONLY). */
static _Atomic int nvtx_only_checked;

static void check_interposing(void)
{
	void *(*sym)(void *, const char *) = atomic_load(&gmt_real_dlsym);

	void *global;
	int ours;

	if (atomic_exchange(&nvtx_only_checked, 1) || sym == NULL)
		return;
	/* The main program's handle searches the global scope (RTLD_DEFAULT
	 * would search ours too: the caller's own scope comes with it). */
	global = dlopen(NULL, RTLD_LAZY);
	if (global == NULL)
		return;
	ours = sym(global, "cuMemAlloc_v2") == gmt_hooks[GMT_ID_cuMemAlloc_v2].wrapper;
	dlclose(global);
	if (ours)
		return;
	gmt_pl_log(1, "loaded only as an NVTX injection (NVTX_INJECTION64_PATH), not through LD_PRELOAD: "
		   "NVTX ranges are recorded, allocations are NOT (run the program under the launcher, "
		   "gpumemtrace COMMAND, or with LD_PRELOAD naming this library)");
	gmt_rec(GMT_EV_NVTX_ONLY, -1, 0, 0, 0, 0, 0);
}

static void slot_set(NvtxFunctionTable t, unsigned n, unsigned id, NvtxFunctionPointer fn)
{
	if (id < n && t[id])
		*t[id] = fn;
}

#define FN(f) ((NvtxFunctionPointer)(f))

/* NVTX's entry point (nvtxInit.h), called once per NVTX copy: fills that
 * copy's tables and returns 1, or 0 (NVTX then makes every call a no-op)
 * when GPUMEMTRACE_NVTX=0 or the copy offers no callback table. */
GMT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

GMT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;
	NvtxFunctionTable t = NULL;
	unsigned n = 0;

	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	pthread_once(&settings_once, settings_read);
	if (!nvtx_enabled || !get_export_table)
		return 0;
	cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t)
		return 0;
	check_interposing();
	slot_set(t, n, NVTX_CBID_CORE_MarkEx, FN(h_mark_ex));
	slot_set(t, n, NVTX_CBID_CORE_MarkA, FN(h_mark_a));
	slot_set(t, n, NVTX_CBID_CORE_MarkW, FN(h_mark_w));
	slot_set(t, n, NVTX_CBID_CORE_RangeStartEx, FN(h_start_ex));
	slot_set(t, n, NVTX_CBID_CORE_RangeStartA, FN(h_start_a));
	slot_set(t, n, NVTX_CBID_CORE_RangeStartW, FN(h_start_w));
	slot_set(t, n, NVTX_CBID_CORE_RangeEnd, FN(h_end));
	slot_set(t, n, NVTX_CBID_CORE_RangePushEx, FN(h_push_ex));
	slot_set(t, n, NVTX_CBID_CORE_RangePushA, FN(h_push_a));
	slot_set(t, n, NVTX_CBID_CORE_RangePushW, FN(h_push_w));
	slot_set(t, n, NVTX_CBID_CORE_RangePop, FN(h_pop));
	t = NULL;
	n = 0;
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
		slot_set(t, n, NVTX_CBID_CORE2_DomainMarkEx, FN(h_dmark_ex));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, FN(h_dstart_ex));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, FN(h_dend));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, FN(h_dpush_ex));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRangePop, FN(h_dpop));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, FN(h_register_a));
		slot_set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, FN(h_register_w));
		slot_set(t, n, NVTX_CBID_CORE2_DomainCreateA, FN(h_domain_create_a));
		slot_set(t, n, NVTX_CBID_CORE2_DomainCreateW, FN(h_domain_create_w));
		slot_set(t, n, NVTX_CBID_CORE2_DomainDestroy, FN(h_domain_destroy));
	}
	/* "Must be set by tools when attaching" (nvtxTypes.h); ignored today. */
	vi = get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	return 1;
}
