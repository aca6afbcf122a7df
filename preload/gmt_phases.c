/*
 * gmt_phases.c - the phase API of gpumemtrace.h (gpumemtrace_phase_begin,
 * _end, _mark) and the range recording it shares with the NVTX injection
 * (gmt_nvtx.c).
 *
 * A phase boundary is one event: the name is interned (a STRING record the
 * first time) and the event carries its id, our domain's id, the source and
 * the thread's nesting depth. Names go through a small lock-free cache in
 * front of the tracer's string table, because NVTX messages (one per
 * operator under torch.autograd.profiler.emit_nvtx) can arrive from many
 * threads at a high rate and the table is behind the tracer's lock.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_phases.h"
#include "gmt_preload.h"
#include "gpumemtrace.h"

/* Recorded ranges open on this thread (all sources and domains). */
static __thread uint32_t range_depth __attribute__((tls_model("initial-exec")));

/* ---- the name cache ------------------------------------------------------ */

/* Direct-mapped on the text's hash. A slot is filled once and never
 * replaced, so a reader needs no lock and a node is never freed under it;
 * a name whose slot is taken goes to the tracer's table every time (still
 * correct, only slower). Its memory is fixed: at most NAME_CACHE_SLOTS
 * nodes of at most NAME_CACHE_MAX_LEN + 1 bytes of text (about 290 KiB),
 * beside the tracer's names' budget (gmt_tracer.h). Names the tracer
 * writes by value are never cached. The ids stay valid across fork: the tracer keeps
 * its string table and writes it again into the child's file. */
#define NAME_CACHE_SLOTS 1024u
#define NAME_CACHE_MAX_LEN 256u

typedef struct name_node {
	uint64_t hash;
	uint32_t id;
	char text[];
} name_node_t;

static _Atomic(name_node_t *) name_cache[NAME_CACHE_SLOTS];

static uint64_t name_hash(const char *s, size_t *len)
{
	uint64_t h = 1469598103934665603ull;
	const char *p = s;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	*len = (size_t)(p - s);
	return h;
}

uint32_t gmt_phase_string(const char *text)
{
	GMT_KEEP_ERRNO;
	if (!text || !*text)
		return 0;
	size_t len;
	const uint64_t h = name_hash(text, &len);
	_Atomic(name_node_t *) *slot = &name_cache[h % NAME_CACHE_SLOTS];
	name_node_t *n = atomic_load_explicit(slot, memory_order_acquire);
	if (n && n->hash == h && !strcmp(n->text, text))
		return n->id;

	int kept;
	const uint32_t id = gmt_tracer_name(text, &kept);
	if (id == 0 || !kept || n || len > NAME_CACHE_MAX_LEN)
		return id;   /* a name by value is written again at each use */
	name_node_t *fresh = malloc(sizeof(*fresh) + len + 1);
	if (!fresh)
		return id;
	fresh->hash = h;
	fresh->id = id;
	memcpy(fresh->text, text, len + 1);
	name_node_t *expected = NULL;
	if (!atomic_compare_exchange_strong_explicit(slot, &expected, fresh, memory_order_acq_rel,
						     memory_order_acquire))
		free(fresh);
	return id;
}

uint32_t gmt_phase_domain_id(void)
{
	GMT_KEEP_ERRNO;
	static _Atomic uint32_t id;
	uint32_t v = atomic_load_explicit(&id, memory_order_relaxed);
	if (GMT_LIKELY(v))
		return v;
	/* Two threads may both intern it: the table returns the same id. */
	v = gmt_tracer_string(GMT_PHASE_DOMAIN);
	atomic_store_explicit(&id, v, memory_order_relaxed);
	return v;
}

/* ---- range events ------------------------------------------------------ */

void gmt_range_emit(unsigned type, unsigned source, uint64_t id, uint64_t depth,
		    uint32_t name, uint32_t domain)
{
	GMT_KEEP_ERRNO;
	const gmt_event_t ev = {
		.ts = 0, .addr = id, .size = depth, .stream = source,
		.aux = (uint64_t)name | (uint64_t)domain << 32,
		.stack = 0, .type = (uint16_t)type, .device = -1,
	};
	/* A boundary of what may be a phase (docs/analyzer.md: our API and our
	 * domain at any depth, any other recorded range when outermost) reads
	 * the device first, so that the phase's start or end sees it. */
	if (type != GMT_EV_MARK) {
		const int ours = source == GMT_RANGE_API || domain == gmt_phase_domain_id();
		if (ours || depth == 0)
			gmt_sample_boundary(ours);
	}
	gmt_emit(&ev, 0, 0);
}

uint32_t gmt_range_depth(void)
{
	return range_depth;
}

uint32_t gmt_range_push(unsigned source, uint32_t name, uint32_t domain)
{
	const uint32_t d = range_depth;
	range_depth = d + 1;
	gmt_range_emit(GMT_EV_RANGE_BEGIN, source, 0, d, name, domain);
	return d;
}

uint32_t gmt_range_pop(unsigned source, uint32_t name, uint32_t domain)
{
	/* An end without a begin (a program that ends more than it began) is
	 * still recorded, at depth 0: the analyzer reports the mismatch. */
	const uint32_t d = range_depth ? range_depth - 1 : 0;
	range_depth = d;
	gmt_range_emit(GMT_EV_RANGE_END, source, 0, d, name, domain);
	return d;
}

/* ---- the public API (gpumemtrace.h) ------------------------------------- */

GMT_EXPORT void gpumemtrace_phase_begin(const char *name)
{
	GMT_KEEP_ERRNO;
	if (!name || !*name)
		return;
	gmt_preload_ensure_init();
	gmt_range_push(GMT_RANGE_API, gmt_phase_string(name), gmt_phase_domain_id());
}

GMT_EXPORT void gpumemtrace_phase_end(const char *name)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	gmt_range_pop(GMT_RANGE_API, gmt_phase_string(name), gmt_phase_domain_id());
}

GMT_EXPORT void gpumemtrace_mark(const char *name)
{
	GMT_KEEP_ERRNO;
	if (!name || !*name)
		return;
	gmt_preload_ensure_init();
	gmt_range_emit(GMT_EV_MARK, GMT_RANGE_API, 0, range_depth, gmt_phase_string(name),
		       gmt_phase_domain_id());
}
