/*
 * gmt_modules.c - the module map: which ELF objects are loaded where, so
 * that the analyzer can symbolise return addresses offline.
 *
 * The writer polls dl_iterate_phdr once a round. The loader's dlpi_adds and
 * dlpi_subs counters (seen in the first callback) tell whether anything was
 * loaded or unloaded since the last poll; if not, the walk stops at once.
 * Otherwise every object is compared with the known set (by base and path):
 * new ones give MODULE records (path, base, size, GNU build id read from the
 * PT_NOTE segment in memory; since 1.4 the soname, DT_SONAME of the dynamic
 * section in memory, and the file the path resolves to, realpath(), which
 * names the version a symbolic link hides: libcudart.so.13 ->
 * libcudart.so.13.0.96; for a relative path, the file the kernel says is
 * mapped there, since the working directory may have changed since the
 * load), missing ones MODULE_UNLOAD. The main program
 * (empty name) is named by /proc/self/exe, the vDSO "[vdso]".
 */
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <msgpack.h>

#include "gmt_internal.h"

typedef struct mod {
	uint64_t base;
	char *path;
	uint32_t id;
	int seen;
} mod_t;

static mod_t *mods;
static size_t n_mods, cap_mods;
static unsigned long long last_adds, last_subs;
static int polled;
static uint32_t next_id;

typedef struct poll_ctx {
	int first;
	int unchanged;
	uint64_t ts;
	gmt_mrec_t *out, **tail;
} poll_ctx_t;

void gmt_modules_reset(void)
{
	/* The child's new file needs every module again. (The writer was not
	 * inside gmt_modules_poll at the fork: see fork_prepare.) */
	for (size_t i = 0; i < n_mods; i++)
		free(mods[i].path);
	n_mods = 0;
	polled = 0;
	next_id = 0;
}

static void emit(poll_ctx_t *c, msgpack_sbuffer *sb)
{
	gmt_mrec_t *r = sb->data ? gmt_mrec_new(sb->data, sb->size) : NULL;
	if (r) {
		*c->tail = r;
		c->tail = &r->next;
	}
}

static size_t build_id(const struct dl_phdr_info *info, const uint8_t **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			size_t nsz = (nh->n_namesz + 3) & ~3u, dsz = (nh->n_descsz + 3) & ~3u;
			const uint8_t *name = p + sizeof(*nh), *desc = name + nsz;
			if (desc + dsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				*id = desc;
				return nh->n_descsz;
			}
			p = desc + dsz;
		}
	}
	return 0;
}

/* DT_SONAME from the dynamic section in memory, or "" (none, or not
 * readable). Its DT_STRTAB pointer is relocated in place by ld.so on
 * x86-64, not on every architecture: below the load bias it is an offset. */
static const char *soname(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		size_t n = ph->p_memsz / sizeof(*dyn);
		uintptr_t strtab = 0;
		uint64_t strsz = 0, name = UINT64_MAX;
		for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; k++) {
			if (dyn[k].d_tag == DT_STRTAB)
				strtab = dyn[k].d_un.d_ptr;
			else if (dyn[k].d_tag == DT_STRSZ)
				strsz = dyn[k].d_un.d_val;
			else if (dyn[k].d_tag == DT_SONAME)
				name = dyn[k].d_un.d_val;
		}
		if (!strtab || name >= strsz)
			return "";
		if (strtab < info->dlpi_addr)
			strtab += info->dlpi_addr;
		const char *s = (const char *)strtab + name;
		return memchr(s, 0, strsz - name) ? s : "";
	}
	return "";
}

/* The file mapped at addr as the kernel names it (/proc/self/maps: the
 * absolute path of the file opened), or "". For a path the loader was
 * given relative to a working directory (LD_LIBRARY_PATH=lib, dlopen of
 * "./x.so"), which may have changed since (chdir): realpath() would
 * resolve it against the wrong one. */
static const char *mapped_file(uint64_t addr, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	int whole = 1;   /* line starts a line of the file */
	out[0] = 0;
	if (!f)
		return out;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		int start = whole;
		whole = len > 0 && line[len - 1] == '\n';
		unsigned long long lo, hi;
		int off = 0;
		if (!start || sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || !off ||
		    addr < lo || addr >= hi)
			continue;
		char *p = line + off;
		size_t n = strcspn(p, "\n");
		p[n] = 0;
		/* A name cut by the buffer, or a file deleted since: none. */
		if (whole && p[0] == '/' && n < cap && !(n > 10 && !strcmp(p + n - 10, " (deleted)")))
			memcpy(out, p, n + 1);
		break;
	}
	fclose(f);
	return out;
}

static void pack_cstr(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static int cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	poll_ctx_t *c = arg;
	if (c->first) {
		c->first = 0;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			if (polled && info->dlpi_adds == last_adds && info->dlpi_subs == last_subs) {
				c->unchanged = 1;
				return 1;
			}
			last_adds = info->dlpi_adds;
			last_subs = info->dlpi_subs;
		}
	}
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso && info->dlpi_addr + lo == vdso) {
		path = "[vdso]";
	} else if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 0;
		exe[n] = 0;
		path = exe;
	}
	for (size_t i = 0; i < n_mods; i++) {
		if (mods[i].base == info->dlpi_addr && !strcmp(mods[i].path, path)) {
			mods[i].seen = 1;
			return 0;
		}
	}
	if (n_mods == cap_mods) {
		size_t cap = cap_mods ? 2 * cap_mods : 64;
		mod_t *a = realloc(mods, cap * sizeof(*a));
		if (!a)
			return 0;
		mods = a;
		cap_mods = cap;
	}
	mod_t *m = &mods[n_mods];
	m->path = strdup(path);
	if (!m->path)
		return 0;
	m->base = info->dlpi_addr;
	m->id = ++next_id;
	m->seen = 1;
	n_mods++;

	const uint8_t *bid = NULL;
	size_t bl = build_id(info, &bid);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	char real[PATH_MAX];
	const char *file = "";
	if (path[0] == '/')
		file = realpath(path, real) ? real : "";
	else if (path[0] != '[')
		file = mapped_file(info->dlpi_addr + lo, real, sizeof(real));
	msgpack_pack_array(&pk, 9);
	msgpack_pack_uint8(&pk, GMT_REC_MODULE);
	msgpack_pack_uint32(&pk, m->id);
	pack_cstr(&pk, path);
	msgpack_pack_uint64(&pk, m->base);
	msgpack_pack_uint64(&pk, hi - lo);
	msgpack_pack_bin(&pk, bl);
	msgpack_pack_bin_body(&pk, bid, bl);
	msgpack_pack_uint64(&pk, c->ts);
	pack_cstr(&pk, soname(info));
	pack_cstr(&pk, file);
	emit(c, &sb);
	msgpack_sbuffer_destroy(&sb);
	return 0;
}

gmt_mrec_t *gmt_modules_poll(uint64_t ts)
{
	poll_ctx_t c = { .first = 1, .ts = ts };
	c.tail = &c.out;
	for (size_t i = 0; i < n_mods; i++)
		mods[i].seen = 0;
	dl_iterate_phdr(cb, &c);
	if (c.unchanged)
		return NULL;
	polled = 1;
	/* unloaded: known but not seen */
	size_t k = 0;
	for (size_t i = 0; i < n_mods; i++) {
		if (mods[i].seen) {
			mods[k++] = mods[i];
			continue;
		}
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_array(&pk, 3);
		msgpack_pack_uint8(&pk, GMT_REC_MODULE_UNLOAD);
		msgpack_pack_uint32(&pk, mods[i].id);
		msgpack_pack_uint64(&pk, ts);
		emit(&c, &sb);
		msgpack_sbuffer_destroy(&sb);
		free(mods[i].path);
	}
	n_mods = k;
	return c.out;
}
