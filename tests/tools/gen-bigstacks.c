/*
 * gen-bigstacks.c - writes a synthetic trace for the symbolisation benchmark
 * (scripts/bench.sh): MODULE records naming real libraries given on the
 * command line (their real GNU build ids and PT_LOAD layout, read from the
 * files, each at its own made-up load bias), N STACK records of DEPTH
 * return addresses drawn (deterministically) from the libraries' executable
 * segments, and one live device allocation per stack, never freed: every
 * stack is a site at the peak, so `sites` symbolises them all.
 *
 *   gen-bigstacks OUT.gmt N DEPTH LIBRARY...
 *
 * The records are written here with msgpack-c and zstd following
 * schemas/trace-format.md (the tracer's writer only records stacks it
 * captured itself); the EVENTS columns use the writer's own coder
 * (gmt_evrec.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "gmt_evrec.h"
#include "gmt_format.h"

#define MAX_LIBS 16
#define MAX_TEXT 8

typedef struct lib {
	const char *path;
	uint64_t base, lo, hi;
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t text_lo[MAX_TEXT], text_hi[MAX_TEXT];
	int n_text;
} lib_t;

/* Reads the PT_LOAD layout, executable segments and GNU build id of a
 * 64-bit ELF file. 0 or -1. */
static int read_elf(lib_t *l)
{
	int fd = open(l->path, O_RDONLY);
	if (fd < 0)
		return -1;
	Elf64_Ehdr eh;
	int rc = -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	l->lo = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			goto out;
		if (ph.p_type == PT_LOAD) {
			if (ph.p_vaddr < l->lo)
				l->lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > l->hi)
				l->hi = ph.p_vaddr + ph.p_memsz;
			if ((ph.p_flags & PF_X) && l->n_text < MAX_TEXT && ph.p_memsz > 64) {
				l->text_lo[l->n_text] = ph.p_vaddr;
				l->text_hi[l->n_text++] = ph.p_vaddr + ph.p_filesz;
			}
		} else if (ph.p_type == PT_NOTE && !l->build_id_len && ph.p_filesz < (1u << 20)) {
			uint8_t *n = malloc(ph.p_filesz);
			if (!n)
				goto out;
			if (pread(fd, n, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= ph.p_filesz;) {
					Elf64_Nhdr *nh = (Elf64_Nhdr *)(void *)(n + off);
					size_t name = off + sizeof(*nh), desc = name + ((nh->n_namesz + 3) & ~3u);
					if (desc + nh->n_descsz > ph.p_filesz)
						break;
					if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
					    !memcmp(n + name, "GNU", 4) && nh->n_descsz <= sizeof(l->build_id)) {
						memcpy(l->build_id, n + desc, nh->n_descsz);
						l->build_id_len = nh->n_descsz;
						break;
					}
					off = desc + ((nh->n_descsz + 3) & ~3u);
				}
			}
			free(n);
		}
	}
	rc = l->n_text && l->lo < l->hi ? 0 : -1;
out:
	close(fd);
	return rc;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* Compresses what sb holds as one zstd frame onto f and empties sb. */
static int flush_frame(FILE *f, msgpack_sbuffer *sb)
{
	if (!sb->size)
		return 0;
	size_t cap = ZSTD_compressBound(sb->size);
	void *z = malloc(cap);
	if (!z)
		return -1;
	size_t n = ZSTD_compress(z, cap, sb->data, sb->size, 3);
	int rc = ZSTD_isError(n) || fwrite(z, 1, n, f) != n ? -1 : 0;
	free(z);
	msgpack_sbuffer_clear(sb);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: gen-bigstacks OUT.gmt N DEPTH LIBRARY...\n");
		return 2;
	}
	const char *out = argv[1];
	unsigned long n = strtoul(argv[2], NULL, 10), depth = strtoul(argv[3], NULL, 10);
	int nl = argc - 4;
	if (!n || !depth || depth > 1000 || nl > MAX_LIBS) {
		fprintf(stderr, "gen-bigstacks: bad N, DEPTH or too many libraries\n");
		return 2;
	}
	static lib_t libs[MAX_LIBS];
	for (int i = 0; i < nl; i++) {
		libs[i].path = argv[4 + i];
		libs[i].base = 0x7f0000000000ull + (uint64_t)i * 0x100000000ull;
		if (read_elf(&libs[i])) {
			fprintf(stderr, "gen-bigstacks: %s: not a readable 64-bit ELF file with code\n", libs[i].path);
			return 1;
		}
	}
	FILE *f = fopen(out, "wb");
	if (!f) {
		fprintf(stderr, "gen-bigstacks: %s: %s\n", out, strerror(errno));
		return 1;
	}
	/* preamble: skippable frame, 12 bytes: "GMTRACE\0", major, minor */
	uint8_t pre[20] = { 0 };
	uint32_t magic = GMT_SKIPPABLE_MAGIC, len = 12;
	uint16_t maj = GMT_FORMAT_MAJOR, min = GMT_FORMAT_MINOR;
	memcpy(pre, &magic, 4);
	memcpy(pre + 4, &len, 4);
	memcpy(pre + 8, "GMTRACE", 8);
	memcpy(pre + 16, &maj, 2);
	memcpy(pre + 18, &min, 2);
	fwrite(pre, 1, sizeof(pre), f);

	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	const uint64_t t0 = 1000000000ull;
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint8(&pk, GMT_REC_HEADER);
	msgpack_pack_map(&pk, 12);
	pack_str(&pk, "format_major"); msgpack_pack_uint16(&pk, GMT_FORMAT_MAJOR);
	pack_str(&pk, "format_minor"); msgpack_pack_uint16(&pk, GMT_FORMAT_MINOR);
	pack_str(&pk, "tool_version"); pack_str(&pk, "gen-bigstacks");
	pack_str(&pk, "pid"); msgpack_pack_uint32(&pk, 1);
	pack_str(&pk, "ppid"); msgpack_pack_uint32(&pk, 0);
	pack_str(&pk, "host"); pack_str(&pk, "synthetic");
	pack_str(&pk, "cmdline"); msgpack_pack_array(&pk, 1); pack_str(&pk, "gen-bigstacks");
	pack_str(&pk, "exe"); pack_str(&pk, "/nonexistent/gen-bigstacks");
	pack_str(&pk, "clock_monotonic_ns"); msgpack_pack_uint64(&pk, t0);
	pack_str(&pk, "clock_realtime_ns"); msgpack_pack_uint64(&pk, t0);
	pack_str(&pk, "env"); msgpack_pack_map(&pk, 0);
	pack_str(&pk, "stack_depth"); msgpack_pack_uint64(&pk, depth);
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint8(&pk, GMT_REC_THREAD);
	msgpack_pack_uint32(&pk, 0);
	msgpack_pack_uint32(&pk, 1);
	pack_str(&pk, "main");
	for (int i = 0; i < nl; i++) {
		msgpack_pack_array(&pk, 7);
		msgpack_pack_uint8(&pk, GMT_REC_MODULE);
		msgpack_pack_uint32(&pk, (uint32_t)i + 1);
		pack_str(&pk, libs[i].path);
		msgpack_pack_uint64(&pk, libs[i].base);
		msgpack_pack_uint64(&pk, libs[i].hi - libs[i].lo);
		msgpack_pack_bin(&pk, libs[i].build_id_len);
		msgpack_pack_bin_body(&pk, libs[i].build_id, libs[i].build_id_len);
		msgpack_pack_uint64(&pk, t0);
	}
	gmt_evrec_t ev;
	memset(&ev, 0, sizeof(ev));
	if (gmt_evrec_alloc(&ev, 4096)) {
		fprintf(stderr, "gen-bigstacks: out of memory\n");
		return 1;
	}
	int rc = 0;
	for (unsigned long s = 1; s <= n && !rc; s++) {
		msgpack_pack_array(&pk, 3);
		msgpack_pack_uint8(&pk, GMT_REC_STACK);
		msgpack_pack_uint32(&pk, (uint32_t)s);
		msgpack_pack_array(&pk, depth);
		for (unsigned long d = 0; d < depth; d++) {
			const lib_t *l = &libs[next() % (uint64_t)nl];
			int t = (int)(next() % (uint64_t)l->n_text);
			uint64_t span = l->text_hi[t] - l->text_lo[t];
			msgpack_pack_uint64(&pk, l->base + l->text_lo[t] + next() % span);
		}
		gmt_event_t e = { .ts = t0 + s * 1000, .addr = 0x100000000ull + s * 0x10000ull,
				  .size = 4096ull * (1 + s % 7), .stack = (uint32_t)s, .type = GMT_EV_ALLOC,
				  .aux = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, GMT_OWNER_APP),
				  .device = 0 };
		gmt_evrec_add(&ev, &e, 0);
		if (ev.n == 4096 || s == n) {
			gmt_evrec_pack(&ev, &pk);
			gmt_evrec_reset(&ev);
			rc = flush_frame(f, &sb);
		}
	}
	msgpack_pack_array(&pk, 5);
	msgpack_pack_uint8(&pk, GMT_REC_END);
	msgpack_pack_uint64(&pk, t0 + (n + 1) * 1000);
	msgpack_pack_uint64(&pk, n);
	msgpack_pack_uint64(&pk, 0);
	msgpack_pack_uint64(&pk, 0);
	if (rc || flush_frame(f, &sb) || fclose(f)) {
		fprintf(stderr, "gen-bigstacks: %s: write error\n", out);
		return 1;
	}
	gmt_evrec_free(&ev);
	msgpack_sbuffer_destroy(&sb);
	return 0;
}
