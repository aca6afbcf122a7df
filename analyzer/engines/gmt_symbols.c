/*
 * gmt_symbols.c - return addresses to functions, files and lines, offline.
 *
 * How it works. The preload records raw return addresses (it must not
 * symbolise in the traced process: too slow, and the tool's own allocations
 * would land in the measurement) and, for every module mapped, its path,
 * load bias, size and GNU build id. Here, after the fact:
 *
 *  1. An address is matched to a module: the latest MODULE record whose
 *     [bias + lowest PT_LOAD vaddr, + size) covers it. "Latest" keeps the
 *     common case (a library unloaded and another mapped at the same place)
 *     right without replaying time; a library's own code that ran before it
 *     was replaced is the rare case this gets wrong.
 *  2. The module's file is opened once per file with libdw's Dwfl, reported
 *     at bias 0, so that the address looked up is addr - bias, an ELF
 *     vaddr: one Dwfl serves every load of the same file. The file is the
 *     one the preload resolved at load time (MODULE's file, format 1.4: a
 *     library loaded by a relative path, or before a chdir, is found
 *     wherever the analyzer runs), else the recorded path when it is
 *     absolute. Only a regular file is read, opened without blocking: a
 *     path in a trace that names a FIFO or a device is "missing", never
 *     waited on (also with symbols off, when only the program headers
 *     are read for the module's address range). Debug information
 *     comes from the file itself or a separate debug file found by build id
 *     (dwfl_standard_find_debuginfo over --debug-dir and /usr/lib/debug).
 *  3. The file's build id must equal the trace's; otherwise the library was
 *     rebuilt between trace and analysis and every frame in it is reported
 *     "[build id mismatch: path]" rather than named after whatever code now
 *     sits at that offset.
 *  4. The function comes from the ELF symbol table (demangled), the file and
 *     line from DWARF's line table, and inlined frames from the DWARF scopes
 *     around the address (DW_TAG_inlined_subroutine, each with the call
 *     site in its caller), the way eu-addr2line -i does: the scopes
 *     dwarf_getscopes would give, from an index of each unit built at its
 *     first address (see "scopes" below).
 *
 * A return address points after the call instruction, possibly at the
 * first instruction of the next line or even of the next function; every
 * frame but the innermost is looked up at addr - 1.
 *
 * Each distinct (address, caller) pair is resolved once; the DWARF of a
 * large library (libtorch_cuda: about a gigabyte) is read lazily by libdw,
 * per compilation unit touched, which is what keeps this to seconds.
 */
#include "engines/gmt_symbols.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* libstdc++'s demangler (linked statically, see the Makefile). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* ---- the table ------------------------------------------------------------ */

/* A symbol, for the sorted per-file table. */
typedef struct fsym {
	uint64_t lo, size;
	const char *name;       /* libdw's memory, valid while the Dwfl lives */
	int rank;               /* global 2, weak 1, local 0: libdwfl's order */
	int index;              /* in the symbol table: the first wins a tie  */
} fsym_t;

typedef struct scunit scunit_t;
static void sc_unit_free(scunit_t *u);

typedef struct sym_file {
	char *path;
	fsym_t *fsyms;          /* sorted by lo, built at the first lookup    */
	size_t n_fsyms;
	int fsyms_loaded;
	Dwfl *dwfl;             /* NULL: missing (or symbols off)             */
	Dwfl_Module *mod;
	uint64_t lo;            /* lowest mapped vaddr                        */
	const unsigned char *build_id;
	int build_id_len;
	scunit_t **units;       /* the scope index, by unit offset            */
	size_t n_units, cap_units;
	int scopes_libdw;       /* GPUMEMTRACE_ANALYZE_SCOPES=libdw            */
} sym_file_t;

typedef struct sym_module {
	char *path;
	char *file;             /* what to open: the resolved file, else path  */
	uint64_t base, size;
	uint8_t *build_id;
	size_t build_id_len;
	sym_file_t *sf;         /* opened lazily                              */
} sym_module_t;

struct gmt_symtab {
	int enabled;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	sym_module_t *mods; size_t n_mods, cap_mods;
	sym_file_t **files; size_t n_files, cap_files;
	gmt_u64map_t cache;     /* (addr << 1 | caller) -> a = index in syms  */
	gmt_sym_t **syms; size_t n_syms, cap_syms;
	double seconds;
};

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

gmt_symtab_t *gmt_symtab_new(const char *const *debug_dirs, size_t n_dirs, int enabled)
{
	gmt_symtab_t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->enabled = enabled;
	/* libdw's search path: ':'-separated; absolute entries are also searched
	 * by build id (DIR/.build-id/xx/rest.debug); ".debug" is relative to
	 * the file's own directory. */
	size_t len = 64;
	for (size_t i = 0; i < n_dirs; i++)
		len += strlen(debug_dirs[i]) + 1;
	t->debuginfo_path = malloc(len);
	if (!t->debuginfo_path) {
		free(t);
		return NULL;
	}
	strcpy(t->debuginfo_path, ":.debug");
	for (size_t i = 0; i < n_dirs; i++) {
		strcat(t->debuginfo_path, ":");
		strcat(t->debuginfo_path, debug_dirs[i]);
	}
	strcat(t->debuginfo_path, ":/usr/lib/debug");
	t->cb.find_elf = dwfl_build_id_find_elf;
	t->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	t->cb.section_address = dwfl_offline_section_address;
	t->cb.debuginfo_path = &t->debuginfo_path;
	return t;
}

static void sym_free(gmt_sym_t *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->frames[i].function);
		free((char *)s->frames[i].file);
	}
	free(s->frames);
	free((char *)s->label);
	free(s);
}

void gmt_symtab_free(gmt_symtab_t *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_mods; i++) {
		free(t->mods[i].path);
		free(t->mods[i].file);
		free(t->mods[i].build_id);
	}
	free(t->mods);
	for (size_t i = 0; i < t->n_files; i++) {
		if (t->files[i]->dwfl)
			dwfl_end(t->files[i]->dwfl);
		free(t->files[i]->fsyms);
		for (size_t j = 0; j < t->files[i]->n_units; j++)
			sc_unit_free(t->files[i]->units[j]);
		free(t->files[i]->units);
		free(t->files[i]->path);
		free(t->files[i]);
	}
	free(t->files);
	for (size_t i = 0; i < t->n_syms; i++)
		sym_free(t->syms[i]);
	free(t->syms);
	gmt_u64map_clear(&t->cache);
	free(t->debuginfo_path);
	free(t);
}

int gmt_symtab_module(gmt_symtab_t *t, const gmt_module_t *m)
{
	if (t->n_mods == t->cap_mods) {
		size_t n = t->cap_mods ? t->cap_mods * 2 : 32;
		sym_module_t *nm = realloc(t->mods, n * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		t->mods = nm;
		t->cap_mods = n;
	}
	sym_module_t *sm = &t->mods[t->n_mods];
	memset(sm, 0, sizeof(*sm));
	sm->path = strdup(m->path ? m->path : "");
	sm->file = strdup(m->file && m->file[0] == '/' ? m->file : m->path ? m->path : "");
	sm->base = m->base;
	sm->size = m->size;
	if (m->build_id_len) {
		sm->build_id = malloc(m->build_id_len);
		if (sm->build_id) {
			memcpy(sm->build_id, m->build_id, m->build_id_len);
			sm->build_id_len = m->build_id_len;
		}
	}
	if (!sm->path || !sm->file || (m->build_id_len && !sm->build_id)) {
		free(sm->path);
		free(sm->file);
		free(sm->build_id);
		return -ENOMEM;
	}
	t->n_mods++;
	return 0;
}

/* path opened for reading if it is a regular file, else -1. O_NONBLOCK:
 * opening a FIFO or a terminal returns at once instead of waiting for the
 * other end; reading a regular file never blocks anyway. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file of a path, opened once. NULL only when out of memory; a file
 * that cannot be read (or is not a regular file) has dwfl NULL. */
static sym_file_t *file_get(gmt_symtab_t *t, const char *path)
{
	for (size_t i = 0; i < t->n_files; i++)
		if (!strcmp(t->files[i]->path, path))
			return t->files[i];
	if (t->n_files == t->cap_files) {
		size_t n = t->cap_files ? t->cap_files * 2 : 16;
		sym_file_t **nf = realloc(t->files, n * sizeof(*nf));
		if (!nf)
			return NULL;
		t->files = nf;
		t->cap_files = n;
	}
	sym_file_t *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	t->files[t->n_files++] = f;
	const char *sm = getenv("GPUMEMTRACE_ANALYZE_SCOPES");
	f->scopes_libdw = sm && !strcmp(sm, "libdw");
	/* "[vdso]" and friends are not files; an empty path is the main
	 * program of some loaders, which the preload resolves already. */
	if (path[0] != '/')
		return f;
	int fd = open_regular(path);
	if (fd < 0)
		return f;
	Dwfl *d = dwfl_begin(&t->cb);
	if (!d) {
		close(fd);
		return f;
	}
	dwfl_report_begin(d);
	/* On success the Dwfl owns fd. */
	Dwfl_Module *mod = dwfl_report_elf(d, path, path, fd, 0, false);
	dwfl_report_end(d, NULL, NULL);
	if (!mod) {
		close(fd);
		dwfl_end(d);
		return f;
	}
	Dwarf_Addr lo = 0, hi = 0;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	f->dwfl = d;
	f->mod = mod;
	f->lo = lo;
	GElf_Addr vaddr;
	const unsigned char *bits = NULL;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0) {
		f->build_id = bits;
		f->build_id_len = n;
	}
	return f;
}

/* The module covering addr (the latest record that does), or NULL. */
static sym_module_t *module_find(gmt_symtab_t *t, uint64_t addr)
{
	for (size_t i = t->n_mods; i-- > 0;) {
		sym_module_t *m = &t->mods[i];
		if (addr < m->base)
			continue;
		if (!m->sf) {
			/* The resolved file, else the path as recorded (a
			 * library upgraded since: its build id says so). */
			sym_file_t *f = file_get(t, m->file);
			if (f && !f->dwfl && strcmp(m->file, m->path))
				f = file_get(t, m->path);
			if (!(m->sf = f))
				return NULL;
		}
		uint64_t start = m->base + m->sf->lo;
		if (addr >= start && addr - start < m->size)
			return m;
	}
	return NULL;
}

const char *gmt_symtab_module_of(gmt_symtab_t *t, uint64_t addr)
{
	sym_module_t *m = module_find(t, addr);
	return m ? m->path : NULL;
}

static char *demangle(const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '_' && name[1] == 'Z') {
		int st = 0;
		char *d = __cxa_demangle(name, NULL, NULL, &st);
		if (d && st == 0)
			return d;
		free(d);
	}
	/* "__libc_start_main@@GLIBC_2.34": the symbol version is not part of
	 * the function's name. */
	const char *at = strstr(name, "@");
	return at ? strndup(name, (size_t)(at - name)) : strdup(name);
}

/* The name of a DWARF function scope (following abstract origins of
 * inlined instances), demangled; NULL if it has none. */
static char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *s = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		s = dwarf_formstring(&at);
	if (!s && dwarf_attr_integrate(die, DW_AT_name, &at))
		s = dwarf_formstring(&at);
	return s ? demangle(s) : NULL;
}

static int add_frame(gmt_sym_t *s, size_t *cap, char *function, const char *file, unsigned line,
		     int inlined)
{
	if (s->n == *cap) {
		size_t n = *cap ? *cap * 2 : 2;
		gmt_symframe_t *nf = realloc(s->frames, n * sizeof(*nf));
		if (!nf) {
			free(function);
			return -ENOMEM;
		}
		s->frames = nf;
		*cap = n;
	}
	gmt_symframe_t *f = &s->frames[s->n];
	f->function = function;
	f->file = file ? strdup(file) : NULL;
	f->line = line;
	f->inlined = inlined;
	s->n++;
	return 0;
}

static int cmp_fsym(const void *a, const void *b)
{
	const fsym_t *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;       /* global, then weak, then local */
	return x->index - y->index;
}

/* The file's function symbols, sorted once. dwfl_module_addrinfo scans the
 * whole symbol table at every call (measured: 90% of the time on
 * libcublasLt's 100,000 symbols); a binary search over this copy is the
 * same answer for functions in logarithmic time. 0 or -ENOMEM. */
static int fsyms_load(sym_file_t *f)
{
	f->fsyms_loaded = 1;
	int n = dwfl_module_getsymtab(f->mod);
	if (n <= 0)
		return 0;
	f->fsyms = malloc((size_t)n * sizeof(*f->fsyms));
	if (!f->fsyms)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym es;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(f->mod, i, &es, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(es.st_info);
		/* the types dwfl_module_addrinfo considers */
		if (!name || !*name || type == STT_SECTION || type == STT_FILE || type == STT_TLS ||
		    es.st_shndx == SHN_UNDEF || es.st_shndx == SHN_ABS)
			continue;
		int bind = GELF_ST_BIND(es.st_info);
		f->fsyms[f->n_fsyms++] = (fsym_t){ .lo = addr, .size = es.st_size, .name = name,
						    .rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0,
						    .index = i };
	}
	if (f->n_fsyms)
		qsort(f->fsyms, f->n_fsyms, sizeof(*f->fsyms), cmp_fsym);
	return 0;
}

/* The function symbol containing pc: the nearest at or below it whose size
 * covers it (a symbol of size 0 covers up to the next one), or NULL. */
static const char *fsym_find(const sym_file_t *f, uint64_t pc)
{
	size_t lo = 0, hi = f->n_fsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->fsyms[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: the first above pc. Look back over the runs of symbols at one
	 * address (in a run, the preferred first), a few runs deep: a sized
	 * symbol may contain smaller ones. */
	size_t end = lo;
	for (int k = 0; end > 0 && k < 16; k++) {
		size_t start = end - 1;
		while (start > 0 && f->fsyms[start - 1].lo == f->fsyms[start].lo)
			start--;
		for (size_t i = start; i < end; i++)
			if (pc - f->fsyms[i].lo < f->fsyms[i].size)
				return f->fsyms[i].name;
		if (k == 0 && !f->fsyms[start].size)
			return f->fsyms[start].name;  /* sizeless: up to the next */
		end = start;
	}
	return NULL;
}

/* ---- scopes: dwarf_getscopes' answer from an index per unit ------------ */

/* dwarf_getscopes(cu, pc) walks the unit's DIE tree from its top at every
 * call, and a second time to find an inlined function's abstract origin:
 * a few milliseconds an address in a large C++ library (libjvm's units,
 * libtorch's), hours for a million addresses. Here each unit is walked
 * once, by the same rules (libdw's __libdw_visit_scopes: which tags are
 * descended, imported units followed; the first child that contains pc at
 * each level), into an index: the DIEs with code ranges as a tree, the
 * unit's top-level ranges sorted by address, and every DIE an abstract
 * origin can be (a subprogram) by offset with its parents. A lookup then
 * gives the same scopes as dwarf_getscopes, innermost first. A unit whose
 * walk meets a libdw error, or an origin in another file, is left to
 * dwarf_getscopes. GPUMEMTRACE_ANALYZE_SCOPES=libdw always uses
 * dwarf_getscopes (the reference, for tests). */

#define SC_NONE UINT32_MAX
#define SC_DEPTH 512            /* deeper trees: dwarf_getscopes */

typedef struct scnode {
	Dwarf_Off off;
	uint32_t parent;        /* SC_NONE: a child of the unit's DIE          */
	uint32_t kids, next;    /* children with ranges, in order; siblings    */
	uint32_t r0, nr;        /* its ranges in the unit's range array        */
	int tag;
} scnode_t;

typedef struct sctop {
	uint64_t lo, hi, maxhi; /* maxhi: the largest hi up to here            */
	uint32_t node;
} sctop_t;

typedef struct scoff {
	Dwarf_Off off;
	uint32_t node;
} scoff_t;

struct scunit {
	Dwarf_Off off;          /* the unit's DIE                              */
	Dwarf *dw;
	scnode_t *n; size_t nn, capn;
	uint64_t (*r)[2]; size_t nr, capr;
	sctop_t *top; size_t ntop, captop;
	scoff_t *byoff; size_t nbyoff;
	int failed;             /* use dwarf_getscopes for this unit           */
};

/* __libdw_visit_scopes' rules: 1 descend, 2 follow the import, 0 skip. */
static int sc_class(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return 1;
	case DW_TAG_imported_unit:
		return 2;
	default:
		return 0;
	}
}

static int sc_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap + *cap / 2 : 256;
	if (c < need)
		c = need;
	void *n = realloc(*p, c * elem);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/* A new node for die under parent (no ranges yet); SC_NONE on failure. */
static uint32_t sc_node(scunit_t *u, Dwarf_Die *die, int tag, uint32_t parent)
{
	if (u->nn >= SC_NONE - 1 || sc_grow((void **)&u->n, &u->capn, u->nn + 1, sizeof(*u->n)))
		return SC_NONE;
	scnode_t *x = &u->n[u->nn];
	x->off = dwarf_dieoffset(die);
	x->parent = parent;
	x->kids = x->next = SC_NONE;
	x->r0 = (uint32_t)u->nr;
	x->nr = 0;
	x->tag = tag;
	return (uint32_t)u->nn++;
}

/* Adds the DIE's code ranges, as dwarf_haspc reads them: 0, or -1. */
static int sc_ranges(scunit_t *u, Dwarf_Die *die, uint32_t i)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	(void)dwarf_errno();   /* clears an older error */
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (u->nr >= SC_NONE || sc_grow((void **)&u->r, &u->capr, u->nr + 1, sizeof(*u->r)))
			return -1;
		u->r[u->nr][0] = lo;
		u->r[u->nr][1] = hi;
		u->nr++;
		u->n[i].nr++;
	}
	/* -1 without an error: no ranges; any error (even those pc_match
	 * reads as none) leaves the unit to dwarf_getscopes */
	return off < 0 && dwarf_errno() != 0 ? -1 : 0;
}

static int sc_walk(scunit_t *u, Dwarf_Die *parent_die, uint32_t parent, int depth)
{
	Dwarf_Die child;
	int rc = dwarf_child(parent_die, &child);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (depth > SC_DEPTH)
		return -1;
	uint32_t last = SC_NONE;
	do {
		int tag = dwarf_tag(&child);
		int cls = sc_class(tag);
		Dwarf_Attribute a;
		if (!cls && !dwarf_hasattr(&child, DW_AT_low_pc) && !dwarf_hasattr(&child, DW_AT_ranges))
			continue;   /* never a scope, never walked into */
		uint32_t i = sc_node(u, &child, tag, parent);
		if (i == SC_NONE || sc_ranges(u, &child, i))
			return -1;
		if (!cls && !u->n[i].nr) {
			u->nn--;    /* no scope after all (a label, a call site) */
			continue;
		}
		if (u->n[i].nr) {
			/* a child that can contain pc, in order */
			if (parent == SC_NONE) {
				for (uint32_t k = 0; k < u->n[i].nr; k++) {
					if (sc_grow((void **)&u->top, &u->captop, u->ntop + 1, sizeof(*u->top)))
						return -1;
					u->top[u->ntop].lo = u->r[u->n[i].r0 + k][0];
					u->top[u->ntop].hi = u->r[u->n[i].r0 + k][1];
					u->top[u->ntop++].node = i;
				}
			} else if (last == SC_NONE) {
				u->n[parent].kids = i;
			} else {
				u->n[last].next = i;
			}
			if (parent != SC_NONE)
				last = i;
		}
		if (cls == 1 && dwarf_haschildren(&child)) {
			if (sc_walk(u, &child, i, depth + 1))
				return -1;
			/* a type or namespace with nothing that matters inside */
			if (u->nn == (size_t)i + 1 && !u->n[i].nr && tag != DW_TAG_subprogram)
				u->nn--;
		} else if (cls == 2) {
			/* another unit's DIEs, as children of that unit's DIE */
			Dwarf_Die imp;
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &imp)) {
				if (dwarf_cu_getdwarf(imp.cu) != u->dw)
					return -1;
				uint32_t j = sc_node(u, &imp, dwarf_tag(&imp), i);
				if (j == SC_NONE || sc_walk(u, &imp, j, depth + 1))
					return -1;
			}
		}
	} while ((rc = dwarf_siblingof(&child, &child)) == 0);
	return rc < 0 ? -1 : 0;
}

static int cmp_sctop(const void *a, const void *b)
{
	const sctop_t *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_scoff(const void *a, const void *b)
{
	const scoff_t *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;   /* the first walked wins */
}

static void sc_unit_free(scunit_t *u)
{
	if (!u)
		return;
	free(u->n);
	free(u->r);
	free(u->top);
	free(u->byoff);
	free(u);
}

/* The index of the unit whose DIE is cudie, built at its first use. NULL
 * when out of memory. */
static scunit_t *sc_unit(sym_file_t *f, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	size_t lo = 0, hi = f->n_units;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (f->units[m]->off < off)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo < f->n_units && f->units[lo]->off == off)
		return f->units[lo];
	if (sc_grow((void **)&f->units, &f->cap_units, f->n_units + 1, sizeof(*f->units)))
		return NULL;
	scunit_t *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->off = off;
	u->dw = dwarf_cu_getdwarf(cudie->cu);
	if (sc_walk(u, cudie, SC_NONE, 0)) {
		u->failed = 1;
	} else {
		qsort(u->top, u->ntop, sizeof(*u->top), cmp_sctop);
		for (size_t i = 0; i < u->ntop; i++)
			u->top[i].maxhi = i && u->top[i - 1].maxhi > u->top[i].hi ? u->top[i - 1].maxhi : u->top[i].hi;
		size_t ns = 0;
		for (size_t i = 0; i < u->nn; i++)
			ns += u->n[i].tag == DW_TAG_subprogram;
		u->byoff = malloc((ns ? ns : 1) * sizeof(*u->byoff));
		if (!u->byoff) {
			u->failed = 1;
		} else {
			for (size_t i = 0; i < u->nn; i++)
				if (u->n[i].tag == DW_TAG_subprogram)
					u->byoff[u->nbyoff++] = (scoff_t){ u->n[i].off, (uint32_t)i };
			qsort(u->byoff, u->nbyoff, sizeof(*u->byoff), cmp_scoff);
		}
	}
	if (u->failed) {
		free(u->n); free(u->r); free(u->top); free(u->byoff);
		u->n = NULL; u->r = NULL; u->top = NULL; u->byoff = NULL;
		u->nn = u->nr = u->ntop = u->nbyoff = 0;
	}
	memmove(&f->units[lo + 1], &f->units[lo], (f->n_units - lo) * sizeof(*f->units));
	f->units[lo] = u;
	f->n_units++;
	return u;
}

static int sc_has(const scunit_t *u, uint32_t i, uint64_t pc)
{
	for (uint32_t k = 0; k < u->n[i].nr; k++)
		if (u->r[u->n[i].r0 + k][0] <= pc && pc < u->r[u->n[i].r0 + k][1])
			return 1;
	return 0;
}

/* The first top-level node (in DIE order) containing pc, SC_NONE if none. */
static uint32_t sc_top(const scunit_t *u, uint64_t pc)
{
	size_t lo = 0, hi = u->ntop;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (u->top[m].lo <= pc)
			lo = m + 1;
		else
			hi = m;
	}
	uint32_t best = SC_NONE;
	for (size_t i = lo; i-- > 0 && u->top[i].maxhi > pc;)
		if (pc < u->top[i].hi && u->top[i].node < best)
			best = u->top[i].node;
	return best;
}

/* Appends node i's DIE and its parents' up to the unit's DIE. */
static int sc_chain(scunit_t *u, uint32_t i, Dwarf_Die *cudie, Dwarf_Die **sc, int *n, size_t *cap)
{
	for (;;) {
		if (sc_grow((void **)sc, cap, (size_t)*n + 1, sizeof(**sc)))
			return -1;
		if (i == SC_NONE) {
			(*sc)[(*n)++] = *cudie;
			return 0;
		}
		if (!dwarf_offdie(u->dw, u->n[i].off, &(*sc)[*n]))
			return -1;
		(*n)++;
		i = u->n[i].parent;
	}
}

/* dwarf_getscopes(cudie, pc, scopes) from the index: the count (0: none),
 * -1 on an error, -2: not indexed (ask dwarf_getscopes). */
static int sc_getscopes(sym_file_t *f, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die **scopes)
{
	scunit_t *u = sc_unit(f, cudie);
	if (!u)
		return -1;
	if (u->failed)
		return -2;
	uint32_t t = sc_top(u, pc);
	if (t == SC_NONE)
		return 0;
	for (;;) {
		uint32_t k = u->n[t].kids;
		while (k != SC_NONE && !sc_has(u, k, pc))
			k = u->n[k].next;
		if (k == SC_NONE)
			break;
		t = k;
	}
	/* the innermost inlined instance on the path, if any */
	uint32_t inl = SC_NONE;
	for (uint32_t i = t; i != SC_NONE && inl == SC_NONE; i = u->n[i].parent)
		if (u->n[i].tag == DW_TAG_inlined_subroutine)
			inl = i;
	Dwarf_Die *sc = NULL;
	size_t cap = 0;
	int n = 0;
	if (inl == SC_NONE) {
		if (sc_chain(u, t, cudie, &sc, &n, &cap))
			goto fail;
		*scopes = sc;
		return n;
	}
	for (uint32_t i = t;; i = u->n[i].parent) {
		if (sc_grow((void **)&sc, &cap, (size_t)n + 1, sizeof(*sc)) ||
		    !dwarf_offdie(u->dw, u->n[i].off, &sc[n]))
			goto fail;
		n++;
		if (i == inl)
			break;
	}
	/* then the scopes around the inlined function's abstract definition */
	Dwarf_Attribute a;
	Dwarf_Die origin, ocu;
	if (!dwarf_formref_die(dwarf_attr(&sc[n - 1], DW_AT_abstract_origin, &a), &origin))
		goto fail;
	if (dwarf_cu_getdwarf(origin.cu) != u->dw || !dwarf_diecu(&origin, &ocu, NULL, NULL)) {
		free(sc);
		return -2;
	}
	scunit_t *ou = sc_unit(f, &ocu);
	if (!ou)
		goto fail;
	if (ou->failed) {
		free(sc);
		return -2;
	}
	Dwarf_Off want = dwarf_dieoffset(&origin);
	size_t lo = 0, hi = ou->nbyoff;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (ou->byoff[m].off < want)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == ou->nbyoff || ou->byoff[lo].off != want) {
		if (dwarf_tag(&origin) != DW_TAG_subprogram) {
			free(sc);
			return -2;      /* not indexed: an unusual origin */
		}
		free(sc);
		return 0;               /* not found, as dwarf_getscopes */
	}
	if (sc_chain(ou, ou->n[ou->byoff[lo].node].parent, &ocu, &sc, &n, &cap))
		goto fail;
	*scopes = sc;
	return n;
fail:
	free(sc);
	return -1;
}

/* Fills s->frames from the module's symbols and DWARF at vaddr pc. */
static int resolve(gmt_sym_t *s, sym_file_t *fl, uint64_t pc)
{
	size_t cap = 0;
	Dwfl_Module *mod = fl->mod;
	if (!fl->fsyms_loaded && fsyms_load(fl))
		return -ENOMEM;
	const char *symname = fsym_find(fl, pc);
	const char *file = NULL;
	int lineno = 0;
	Dwfl_Line *ln = dwfl_module_getsrc(mod, pc);
	if (ln)
		file = dwfl_lineinfo(ln, NULL, &lineno, NULL, NULL, NULL);

	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int nsc = 0;
	if (cu) {
		nsc = fl->scopes_libdw ? -2 : sc_getscopes(fl, cu, pc - bias, &scopes);
		if (nsc < 0)
			nsc = dwarf_getscopes(cu, pc - bias, &scopes);
	}
	Dwarf_Files *files = NULL;
	if (nsc > 0 && dwarf_getsrcfiles(cu, &files, NULL) != 0)
		files = NULL;
	const char *cur_file = file;
	unsigned cur_line = lineno > 0 ? (unsigned)lineno : 0;
	int done = 0;
	for (int i = 0; i < nsc && !done; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine) {
			if (add_frame(s, &cap, die_name(&scopes[i]), cur_file, cur_line, 1))
				goto oom;
			/* The caller's location is the inlined instance's call site. */
			Dwarf_Attribute at;
			Dwarf_Word w;
			cur_file = NULL;
			cur_line = 0;
			if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &at), &w) == 0)
				cur_file = dwarf_filesrc(files, w, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &at), &w) == 0)
				cur_line = (unsigned)w;
		} else if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
			/* The symbol table names the out-of-line function best (a
			 * C++ linkage name, or a static function's local name). */
			char *name = symname ? demangle(symname) : die_name(&scopes[i]);
			if (add_frame(s, &cap, name, cur_file, cur_line, 0))
				goto oom;
			done = 1;
		}
	}
	if (!done && add_frame(s, &cap, demangle(symname), cur_file, cur_line, 0))
		goto oom;
	free(scopes);
	return 0;
oom:
	free(scopes);
	return -ENOMEM;
}

static int bytes_eq(const uint8_t *a, size_t na, const unsigned char *b, int nb)
{
	return nb >= 0 && na == (size_t)nb && (na == 0 || !memcmp(a, b, na));
}

const gmt_sym_t *gmt_symtab_lookup(gmt_symtab_t *t, uint64_t addr, int caller)
{
	caller = caller ? 1 : 0;
	uint64_t key = addr << 1 | (uint64_t)caller;
	gmt_u64map_slot_t *slot = gmt_u64map_find(&t->cache, key);
	if (slot)
		return t->syms[slot->a];
	double t0 = mono_s();
	if (t->n_syms == t->cap_syms) {
		size_t n = t->cap_syms ? t->cap_syms * 2 : 256;
		gmt_sym_t **ns = realloc(t->syms, n * sizeof(*ns));
		if (!ns)
			return NULL;
		t->syms = ns;
		t->cap_syms = n;
	}
	gmt_sym_t *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = addr;
	char buf[4200];
	sym_module_t *m = module_find(t, addr);
	if (!m) {
		s->status = GMT_SYM_NO_MODULE;
		snprintf(buf, sizeof(buf), "[0x%" PRIx64 "]", addr);
	} else {
		s->module = m->path;
		s->offset = addr - m->base;
		sym_file_t *f = m->sf;
		if (!t->enabled) {
			s->status = GMT_SYM_OFF;
		} else if (!f->dwfl) {
			s->status = GMT_SYM_MISSING;
		} else if (m->build_id_len && !bytes_eq(m->build_id, m->build_id_len, f->build_id,
							 f->build_id_len)) {
			/* A file without a build id cannot be checked against a
			 * trace that has one: treated as a mismatch too. */
			s->status = GMT_SYM_MISMATCH;
		} else if (resolve(s, f, s->offset - (uint64_t)caller)) {
			sym_free(s);
			return NULL;
		}
		if (s->status == GMT_SYM_MISMATCH)
			snprintf(buf, sizeof(buf), "[build id mismatch: %s]", m->path);
		else
			snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", m->path, s->offset);
	}
	if (s->n && s->frames[s->n - 1].function)
		s->label = strdup(s->frames[s->n - 1].function);
	else
		s->label = strdup(buf);
	if (!s->n) {
		size_t cap = 0;
		if (add_frame(s, &cap, NULL, NULL, 0, 0)) {
			sym_free(s);
			return NULL;
		}
	}
	int existed;
	if (!s->label || !(slot = gmt_u64map_put(&t->cache, key, &existed))) {
		sym_free(s);
		return NULL;
	}
	slot->a = t->n_syms;
	t->syms[t->n_syms++] = s;
	t->seconds += mono_s() - t0;
	return s;
}

void gmt_symtab_stats(const gmt_symtab_t *t, uint64_t *addresses, uint64_t *files, double *seconds)
{
	uint64_t nf = 0;
	for (size_t i = 0; i < t->n_files; i++)
		nf += t->files[i]->dwfl != NULL;
	if (addresses)
		*addresses = t->n_syms;
	if (files)
		*files = nf;
	if (seconds)
		*seconds = t->seconds;
}
