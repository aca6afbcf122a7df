/*
 * gmt_bind.c - how calls to the CUDA runtime and NCCL reach our wrappers:
 * each calling module's GOT entries are bound to wrappers that know the
 * module's own library.
 *
 * Why not exported symbols (as for the driver). A process may hold several
 * runtimes and NCCLs: an auditwheel-repaired wheel carries its own renamed
 * libcudart-<hash>.so.12 and Python loads it RTLD_LOCAL; a cudart-12
 * library and a cudart-13 one live side by side; a wheel vendors its NCCL.
 * An exported cudaMalloc comes first in every module's look-up and can
 * forward only to one runtime: the others' callers got the wrong library or
 * none (cudaErrorSymbolNotFound). And an export answers presence probes
 * wrongly: dlsym(RTLD_DEFAULT, "cudaMalloc") and a weak reference (bound by
 * ld.so at load time) found "present" in a process with no runtime at all.
 * So runtime and NCCL hooks are not exported; instead:
 *
 * 1. For every loaded module (the program and each library, except ours)
 *    we read its relocations (DT_JMPREL and DT_RELA): each JUMP_SLOT (a
 *    call through the PLT) or GLOB_DAT (a call through the GOT, -fno-plt, or
 *    an address taken) whose symbol is EXACTLY a runtime/NCCL hook name.
 * 2. The entry's real target is what ld.so bound it to: the value in the
 *    GOT when it lies outside the module (bound at load time, RTLD_NOW /
 *    BIND_NOW, or lazily by an earlier call). A lazy entry not yet resolved
 *    points back into the module's own PLT: we then look the symbol up as
 *    ld.so will - the global scope first (glibc's dlsym(RTLD_DEFAULT) from
 *    this library, which is in the global scope itself), then the module's
 *    own dependencies (dlsym on its handle), with the version the module
 *    requires (DT_VERNEED: dlvsym) when it requires one. A weak reference
 *    that found nothing holds 0 and stays 0: the probe answers "absent".
 * 3. The entry is rewritten to our per-target wrapper of that real
 *    function (gmt_target_wrapper(): wrapper k of a hook calls the k-th
 *    distinct real function seen for its name), so the caller reaches its
 *    own library through us, with every argument and result untouched.
 *    Entries under RELRO (read-only after relocation) are written between
 *    an mprotect to read-write and one back to read-only, under one mutex.
 *
 * When. At initialisation (every module loaded at start), then whenever
 * gmt_bind_check() finds that modules were added (dl_iterate_phdr's
 * dlpi_adds counter): it is called from our dlsym, from cuGetProcAddress
 * and at synchronisation samples (at most every 10 ms per device). A
 * library cannot be bound before its first call is under way when that
 * call is what loads and initialises its runtime (the runtime's own dlsym
 * of cuGetProcAddress_v2 is then the first moment we run): that one call
 * reaches the driver unnamed (api "driver"); the driver-level record is
 * there as always. We do not interpose dlopen to bind earlier: glibc
 * resolves a relative dlopen name through the CALLER's RUNPATH, and a
 * wrapper would become the caller.
 *
 * What this cannot see (the driver-level hooks still record the memory):
 * a call through a pointer obtained by dlsym(RTLD_DEFAULT / RTLD_NEXT, ...)
 * (our dlsym must pass those through as a tail call, gmt_interpose.c);
 * function tables filled by R_X86_64_64 relocations; a module that binds
 * its entry lazily in the instant between our read and our write (ld.so's
 * write then wins: the calls go to the right library, unnamed); calls
 * within a runtime or NCCL that do not go through its PLT; more than
 * GMT_TARGETS copies of one library (said once).
 *
 * Safety. Each module is pinned (dlopen RTLD_NOLOAD of its own name, then
 * dlinfo checks it is the same object) while we read and write it, so a
 * concurrent dlclose cannot unmap it under us; the pin is dropped at once.
 * dlopen/dlsym are never called inside dl_iterate_phdr's callback (it holds
 * the loader's write lock: that order could deadlock against a dlopen in
 * progress). A scan that finds another scan running skips (trylock): our
 * dlsym may run in a library constructor while its thread holds the
 * loader's lock, which the other scan's dlopen may be waiting for.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gmt_preload.h"

#if defined(__x86_64__)
#define GMT_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define GMT_R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define GMT_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define GMT_R_GLOB_DAT  R_AARCH64_GLOB_DAT
#else
#error "gmt_bind.c: relocation types of this architecture"
#endif

extern ElfW(Dyn) _DYNAMIC[];

static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long bound_adds; /* dlpi_adds at the last scan */
static _Atomic int bind_ready;

/* ---- modules already bound -------------------------------------------- */

/* Key: load address and dynamic section (a module loaded again at the same
 * address is another object if the entry we wrote no longer holds our
 * wrapper). Open addressing; when full, modules are simply looked at
 * again on the next scan. Only touched under bind_lock. */
typedef struct seen {
	uintptr_t base, dyn;
	void **slot;        /* one entry we wrote (NULL: none) */
	void *val;          /* ... and what we wrote there     */
} seen_t;

#define SEEN_CAP 4096
static seen_t seen[SEEN_CAP];

static uint32_t seen_hash(uintptr_t base, uintptr_t dyn)
{
	uint64_t k = (uint64_t)base ^ ((uint64_t)dyn << 7);
	k ^= k >> 31;
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 40) & (SEEN_CAP - 1);
}

static seen_t *seen_find(uintptr_t base, uintptr_t dyn, int add)
{
	uint32_t i = seen_hash(base, dyn);

	for (uint32_t n = 0; n < SEEN_CAP; n++, i = (i + 1) & (SEEN_CAP - 1)) {
		if (seen[i].dyn == dyn && seen[i].base == base)
			return &seen[i];
		if (seen[i].dyn == 0) {
			if (!add)
				return NULL;
			seen[i].base = base;
			seen[i].dyn = dyn;
			seen[i].slot = NULL;
			seen[i].val = NULL;
			return &seen[i];
		}
	}
	return NULL;
}

/* ---- collecting the modules to look at ----------------------------------- */

typedef struct cand {
	uintptr_t base, dyn;
	const ElfW(Phdr) *phdr;
	int phnum;
	int is_main;
	char *name;
} cand_t;

typedef struct collect {
	cand_t *c;
	size_t n, cap;
	unsigned long long adds;
	uintptr_t self_dyn, vdso;
	int first;
} collect_t;

static uintptr_t dynamic_of(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	return 0;
}

/* dl_iterate_phdr callback (the loader's write lock is held: no dlopen,
 * dlsym or dladdr here). Notes each module not bound yet. */
static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	collect_t *c = arg;
	uintptr_t dyn = dynamic_of(info);
	int is_main = c->first;
	seen_t *s;

	c->first = 0;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) && is_main)
		c->adds = info->dlpi_adds;
	if (dyn == 0 || dyn == c->self_dyn || (c->vdso != 0 && info->dlpi_addr == c->vdso))
		return 0;
	if (!is_main && (info->dlpi_name == NULL || info->dlpi_name[0] == '\0'))
		return 0;
	s = seen_find(info->dlpi_addr, dyn, 0);
	/* Seen: unless the entry we wrote lost our wrapper (another object
	 * at the same place), nothing to do. The module is mapped: we hold
	 * the lock its unmapping needs. */
	if (s != NULL && (s->slot == NULL || *s->slot == s->val))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		cand_t *nc = realloc(c->c, cap * sizeof *nc);
		if (nc == NULL) {
			c->adds = 0; /* look again next time */
			return 1;
		}
		c->c = nc;
		c->cap = cap;
	}
	c->c[c->n] = (cand_t){ info->dlpi_addr, dyn, info->dlpi_phdr, info->dlpi_phnum, is_main,
			       is_main ? NULL : strdup(info->dlpi_name) };
	if (!is_main && c->c[c->n].name == NULL)
		return 0;
	c->n++;
	return 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/* ---- one module ----------------------------------------------------------- */

static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p)
{
	return p < base ? p + base : p;
}

typedef struct mod {
	const cand_t *c;
	void *handle;             /* the pin; dlopen(NULL) for the program */
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	uintptr_t lo, hi;         /* the module's mapped range */
	uintptr_t relro_lo, relro_hi; /* pages ld.so made read-only */
	seen_t *s;
} mod_t;

/* The version the module requires for symbol index i, or NULL. */
static const char *required_version(const mod_t *m, uint32_t i)
{
	unsigned ndx;

	if (m->versym == NULL || m->verneed == NULL)
		return NULL;
	ndx = m->versym[i] & 0x7fff;
	if (ndx < 2)
		return NULL;
	for (const ElfW(Verneed) *vn = m->verneed;;
	     vn = (const void *)((const char *)vn + vn->vn_next)) {
		const ElfW(Vernaux) *a = (const void *)((const char *)vn + vn->vn_aux);
		for (unsigned j = 0; j < vn->vn_cnt; j++) {
			if (a->vna_other == ndx)
				return m->strtab + a->vna_name;
			a = (const void *)((const char *)a + a->vna_next);
		}
		if (vn->vn_next == 0)
			return NULL;
	}
}

/* What ld.so binds (or bound) this module's reference to: global scope
 * first, then the module's own dependencies. */
static void *lookup_as_loader(const mod_t *m, const char *name, const char *version)
{
	void *(*sym)(void *, const char *) = atomic_load(&gmt_real_dlsym);
	void *(*vsym)(void *, const char *, const char *) = atomic_load(&gmt_real_dlvsym);
	void *p;

	if (sym == NULL || vsym == NULL)
		return NULL;
	p = version ? vsym(RTLD_DEFAULT, name, version) : sym(RTLD_DEFAULT, name);
	if (p == NULL && version != NULL)
		p = sym(RTLD_DEFAULT, name);
	if (p == NULL && m->handle != NULL) {
		p = version ? vsym(m->handle, name, version) : sym(m->handle, name);
		if (p == NULL && version != NULL)
			p = sym(m->handle, name);
	}
	return p;
}

/* Writes val into a GOT entry, through a read-write window if ld.so made
 * its page read-only (RELRO). Caller holds bind_lock (gmt_bind_symbol says
 * why it need not). */
static int got_write(const mod_t *m, void **slot, void *val)
{
	static long page;
	uintptr_t a = (uintptr_t)slot, pg;
	int ro;

	if (page == 0)
		page = sysconf(_SC_PAGESIZE);
	pg = a & ~((uintptr_t)page - 1);
	ro = pg >= m->relro_lo && pg < m->relro_hi;
	if (ro && mprotect((void *)pg, (size_t)page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	__atomic_store_n(slot, val, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)pg, (size_t)page, PROT_READ);
	return 0;
}

/* Is the entry's page part of a writable segment or of the RELRO range?
 * (Anything else we leave alone rather than fault.) */
static int writable(const mod_t *m, uintptr_t a)
{
	const cand_t *c = m->c;

	for (int i = 0; i < c->phnum; i++) {
		const ElfW(Phdr) *ph = &c->phdr[i];
		uintptr_t lo = c->base + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && a >= lo && a + sizeof(void *) <= lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

static int bind_one(mod_t *m, const ElfW(Rela) *r, size_t bytes)
{
	size_t n = bytes / sizeof *r;
	int bound = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(r[i].r_info);
		uint32_t si = (uint32_t)ELF64_R_SYM(r[i].r_info);
		const char *name, *version;
		void **slot, *cur, *real, *w;
		Dl_info info;
		int id;

		if ((type != GMT_R_JUMP_SLOT && type != GMT_R_GLOB_DAT) || si == 0)
			continue;
		name = m->strtab + m->symtab[si].st_name;
		if (!((name[0] == 'c' && name[1] == 'u' && name[2] == 'd' && name[3] == 'a') ||
		      (name[0] == 'n' && name[1] == 'c' && name[2] == 'c' && name[3] == 'l')))
			continue;
		id = gmt_hook_find(name);
		if (id < 0 || gmt_hooks[id].lib == GMT_LIB_DRV)
			continue;
		slot = (void **)(m->c->base + r[i].r_offset);
		if (!writable(m, (uintptr_t)slot))
			continue;
		cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (cur == NULL)
			continue; /* a weak reference that found nothing */
		if (gmt_target_index(id, cur) >= 0) {
			bound++;
			continue;
		}
		version = required_version(m, si);
		if ((uintptr_t)cur >= m->lo && (uintptr_t)cur < m->hi)
			real = lookup_as_loader(m, name, version); /* lazy: not resolved yet */
		else
			real = cur;
		/* The target must be code of a loaded module (never a guess). */
		if (real == NULL || !dladdr(real, &info) || info.dli_fname == NULL)
			continue;
		w = gmt_target_wrapper(id, real);
		if (w == NULL || got_write(m, slot, w) != 0)
			continue;
		gmt_pl_log(3, "bound %s of %s to %s", name, m->c->is_main ? "the program" : m->c->name,
			   info.dli_fname);
		if (m->s != NULL && m->s->slot == NULL) {
			m->s->slot = slot;
			m->s->val = w;
		}
		bound++;
	}
	return bound;
}

/* The module's mapped range, RELRO pages and dynamic section (symbols,
 * relocations) into m; m->c is set. */
typedef struct relocs {
	const ElfW(Rela) *rela, *jmprel;
	size_t relasz, jmprelsz;
	long pltrel;
} relocs_t;

static void mod_read(mod_t *m, relocs_t *r)
{
	const cand_t *c = m->c;
	long page = sysconf(_SC_PAGESIZE);

	m->lo = UINTPTR_MAX;
	*r = (relocs_t){ .pltrel = DT_RELA };
	for (int i = 0; i < c->phnum; i++) {
		const ElfW(Phdr) *ph = &c->phdr[i];
		if (ph->p_type == PT_LOAD) {
			if (c->base + ph->p_vaddr < m->lo)
				m->lo = c->base + ph->p_vaddr;
			if (c->base + ph->p_vaddr + ph->p_memsz > m->hi)
				m->hi = c->base + ph->p_vaddr + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_RELRO) {
			/* As ld.so protects it: whole pages, the end rounded down. */
			m->relro_lo = (c->base + ph->p_vaddr) & ~((uintptr_t)page - 1);
			m->relro_hi = (c->base + ph->p_vaddr + ph->p_memsz) & ~((uintptr_t)page - 1);
		}
	}
	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)c->dyn; d->d_tag != DT_NULL; d++) {
		uintptr_t p = dyn_ptr(c->base, d->d_un.d_ptr);
		switch (d->d_tag) {
		case DT_SYMTAB: m->symtab = (const void *)p; break;
		case DT_STRTAB: m->strtab = (const void *)p; break;
		case DT_VERSYM: m->versym = (const void *)p; break;
		case DT_VERNEED: m->verneed = (const void *)p; break;
		case DT_RELA: r->rela = (const void *)p; break;
		case DT_RELASZ: r->relasz = d->d_un.d_val; break;
		case DT_JMPREL: r->jmprel = (const void *)p; break;
		case DT_PLTRELSZ: r->jmprelsz = d->d_un.d_val; break;
		case DT_PLTREL: r->pltrel = (long)d->d_un.d_val; break;
		default: break;
		}
	}
}

static void bind_module(const cand_t *c)
{
	mod_t m = { .c = c };
	relocs_t r;
	struct link_map *lm = NULL;

	/* The pin, and the check that it is the object we collected. */
	m.handle = dlopen(c->is_main ? NULL : c->name, RTLD_LAZY | RTLD_NOLOAD);
	if (m.handle == NULL)
		return;
	if (dlinfo(m.handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_addr != c->base ||
	    (uintptr_t)lm->l_ld != c->dyn) {
		dlclose(m.handle);
		return;
	}
	mod_read(&m, &r);
	m.s = seen_find(c->base, c->dyn, 1);
	if (m.s != NULL) {
		m.s->slot = NULL;
		m.s->val = NULL;
	}
	if (m.symtab != NULL && m.strtab != NULL && r.pltrel == DT_RELA) {
		if (r.jmprel != NULL)
			bind_one(&m, r.jmprel, r.jmprelsz);
		if (r.rela != NULL)
			bind_one(&m, r.rela, r.relasz);
	}
	if (!c->is_main)
		dlclose(m.handle);
}

/* ---- one symbol of one module (libunwind's pipe2) ------------------------ */

typedef struct find_mod {
	uintptr_t base, dyn;
	cand_t c;
	int found;
} find_mod_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	find_mod_t *f = arg;

	(void)size;
	if (info->dlpi_addr != f->base || dynamic_of(info) != f->dyn)
		return 0;
	f->c = (cand_t){ info->dlpi_addr, f->dyn, info->dlpi_phdr, info->dlpi_phnum, 0, NULL };
	f->found = 1;
	return 1;
}

static int bind_name(mod_t *m, const ElfW(Rela) *r, size_t bytes, const char *name, void *fn)
{
	int bound = 0;

	for (size_t i = 0; i < bytes / sizeof *r; i++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(r[i].r_info);
		uint32_t si = (uint32_t)ELF64_R_SYM(r[i].r_info);
		void **slot = (void **)(m->c->base + r[i].r_offset);

		if ((type != GMT_R_JUMP_SLOT && type != GMT_R_GLOB_DAT) || si == 0 ||
		    strcmp(m->strtab + m->symtab[si].st_name, name) != 0 || !writable(m, (uintptr_t)slot))
			continue;
		if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == NULL)
			continue; /* a weak reference that found nothing */
		if (got_write(m, slot, fn) == 0)
			bound++;
	}
	return bound;
}

/* No bind_lock: the scans write only GOT pages of cuda and nccl names,
 * never this module's page for this name, and the caller (the stack
 * capture's one-time initialisation) may hold the loader's lock, which a
 * scan holding bind_lock may be waiting for. The handle keeps it mapped. */
int gmt_bind_symbol(void *handle, const char *name, void *fn)
{
	struct link_map *lm = NULL;
	find_mod_t f = { 0 };
	mod_t m = { 0 };
	relocs_t r;
	int bound = 0;

	if (handle == NULL || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL)
		return 0;
	f.base = lm->l_addr;
	f.dyn = (uintptr_t)lm->l_ld;
	dl_iterate_phdr(find_cb, &f);
	if (!f.found)
		return 0;
	m.c = &f.c;
	m.handle = handle;
	mod_read(&m, &r);
	if (m.symtab == NULL || m.strtab == NULL || r.pltrel != DT_RELA)
		return 0;
	if (r.jmprel != NULL)
		bound += bind_name(&m, r.jmprel, r.jmprelsz, name, fn);
	if (r.rela != NULL)
		bound += bind_name(&m, r.rela, r.relasz, name, fn);
	gmt_pl_log(3, "bound %s of %s: %d entries", name, lm->l_name, bound);
	return bound;
}

/* ---- scans -------------------------------------------------------------- */

static void scan(void)
{
	/* Our own module is never bound (it calls no runtime by name). */
	collect_t c = { .first = 1, .self_dyn = (uintptr_t)_DYNAMIC };

	if (pthread_mutex_trylock(&bind_lock) != 0)
		return;
	c.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(collect_cb, &c);
	for (size_t i = 0; i < c.n; i++) {
		bind_module(&c.c[i]);
		free(c.c[i].name);
	}
	free(c.c);
	atomic_store(&bound_adds, c.adds);
	pthread_mutex_unlock(&bind_lock);
}

void gmt_bind_check(void)
{
	unsigned long long adds = 0;

	if (!atomic_load_explicit(&bind_ready, memory_order_acquire))
		return;
	dl_iterate_phdr(adds_cb, &adds);
	if (adds != atomic_load_explicit(&bound_adds, memory_order_relaxed))
		scan();
}

void gmt_bind_init(void)
{
	atomic_store_explicit(&bind_ready, 1, memory_order_release);
	scan();
}
