/* fuzz_decode - libFuzzer target for the trace reader (make fuzz).
 * Any input must decode to a status without crashing, reading out of
 * bounds, leaking or allocating without bound. Every callback touches what
 * it is given so that bad pointers show under AddressSanitizer.
 *
 * An input whose first byte is 0 is raw records: the rest is wrapped in a
 * preamble and one zstd frame before decoding, so that mutations reach the
 * msgpack and column decoding instead of dying at the zstd checksum. The corpus
 * in tests/fuzz/corpus/ is replayed by unit_decode_corpus in the normal
 * test run.
 *
 * Where the reader's EVENTS2 loop has its pext copy (gmt_decode_pext), each
 * input is read both ways, and both must give the same status, message,
 * bytes read and events (a hash of every event handed over). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <stdlib.h>
#include <zstd.h>

#include "gmt_decode.h"

static volatile uint64_t sink;

static void touch(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		sink += b[i];
}

static int f_header(void *c, const gmt_header_t *h)
{
	touch(h->host, strlen(h->host));
	touch(h->exe, strlen(h->exe));
	touch(h->tool_version, strlen(h->tool_version));
	for (size_t i = 0; i < h->n_cmdline; i++)
		touch(h->cmdline[i], strlen(h->cmdline[i]));
	for (size_t i = 0; i < h->n_env; i++) {
		touch(h->env[i].key, strlen(h->env[i].key));
		touch(h->env[i].value, strlen(h->env[i].value));
	}
	return 0;
}
static int f_thread(void *c, uint32_t i, uint64_t t, const char *n) { touch(n, strlen(n)); return 0; }
static int f_module(void *c, const gmt_module_t *m)
{
	touch(m->path, strlen(m->path));
	touch(m->build_id, m->build_id_len);
	return 0;
}
static int f_unload(void *c, uint32_t id, uint64_t ts) { sink += id + ts; return 0; }
static int f_stack(void *c, uint32_t id, const uint64_t *f, size_t n) { touch(f, n * sizeof(*f)); return 0; }
static int f_device(void *c, const gmt_device_rec_t *d)
{
	touch(d->name, strlen(d->name));
	touch(d->pci_bus_id, strlen(d->pci_bus_id));
	return 0;
}
static uint64_t ev_hash;   /* FNV-1a of the events handed over, and their flags */

static int f_events(void *c, const gmt_devent_t *e, size_t n, unsigned fl)
{
	const unsigned char *b = (const unsigned char *)e;
	for (size_t i = 0; i < n * sizeof(*e); i++)
		ev_hash = (ev_hash ^ b[i]) * 0x100000001b3ull;
	ev_hash = (ev_hash ^ fl) * 0x100000001b3ull;
	return 0;
}
static int f_drops(void *c, const gmt_drops_t *d) { touch(d->reason, strlen(d->reason)); return 0; }
static int f_string(void *c, uint32_t id, const char *t, size_t n) { touch(t, n + 1); return 0; }
static int f_end(void *c, const gmt_end_t *e) { sink += e->written; return 0; }
static int f_meta(void *c, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		touch(kv[i].key, strlen(kv[i].key));
		touch(kv[i].value, strlen(kv[i].value));
	}
	return 0;
}

const gmt_visitor_t gmt_fuzz_visitor = {
	.header = f_header, .thread = f_thread, .module = f_module, .module_unload = f_unload,
	.stack = f_stack, .device = f_device, .events = f_events, .drops = f_drops,
	.string = f_string, .end = f_end, .meta = f_meta,
};

/* Decodes with the default loop; where there is a pext copy, again with
 * the plain one, and traps on any difference. */
static void decode_both(const uint8_t *data, size_t size, gmt_decode_result_t *r)
{
	ev_hash = 0xcbf29ce484222325ull;
	gmt_decode_buffer(data, size, "fuzz", &gmt_fuzz_visitor, r);
	if (!gmt_decode_pext(-1))
		return;
	const uint64_t h = ev_hash;
	gmt_decode_result_t p;
	gmt_decode_pext(0);
	ev_hash = 0xcbf29ce484222325ull;
	gmt_decode_buffer(data, size, "fuzz", &gmt_fuzz_visitor, &p);
	gmt_decode_pext(1);
	if (p.status != r->status || p.bytes_ok != r->bytes_ok || p.events != r->events || ev_hash != h ||
	    strcmp(p.message, r->message))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gmt_decode_result_t r;
	if (size >= 1 && data[0] == 0) {
		static const uint8_t pre[20] = { 0x5e, 0x2a, 0x4d, 0x18, 12, 0, 0, 0,
			'G', 'M', 'T', 'R', 'A', 'C', 'E', 0, 1, 0, 0, 0 };
		size_t cap = 20 + ZSTD_compressBound(size - 1);
		uint8_t *buf = malloc(cap);
		if (!buf)
			return 0;
		memcpy(buf, pre, 20);
		size_t z = ZSTD_compress(buf + 20, cap - 20, data + 1, size - 1, 1);
		if (!ZSTD_isError(z)) {
			decode_both(buf, 20 + z, &r);
			if (r.status > GMT_DECODE_STOPPED || r.bytes_ok > 20 + z)
				__builtin_trap();
		}
		free(buf);
		return 0;
	}
	decode_both(data, size, &r);
	if (r.status > GMT_DECODE_STOPPED || r.bytes_ok > size)
		__builtin_trap();
	return 0;
}
