/*
 * gmt_phases.h - PRIVATE to preload/: what the phase API (gmt_phases.c) and
 * the NVTX injection (gmt_nvtx.c) share.
 *
 * Both record RANGE_BEGIN / RANGE_END / MARK events (schemas/trace-format.md)
 * and share one nesting depth per thread: the depth of a range is the number
 * of recorded ranges (of any source and domain) open on its thread when it
 * began, so an operator range that PyTorch pushes inside a phase of our own
 * API is at depth >= 1 and is not taken as a phase by default.
 */
#ifndef GMT_PHASES_H
#define GMT_PHASES_H

#include <stdint.h>

/* Our own NVTX domain (and the domain of gpumemtrace_phase_*): always
 * recorded. */
#define GMT_PHASE_DOMAIN "gpumemtrace"

/* Interns text, like gmt_tracer_string(), through a lock-free cache so a
 * name seen before costs a hash and a compare, not the tracer's lock.
 * Returns 0 for NULL or "" (and when interning fails). */
uint32_t gmt_phase_string(const char *text);

/* The string id of GMT_PHASE_DOMAIN (interned on first use; 0 on failure). */
uint32_t gmt_phase_domain_id(void);

/* Opens a range on the calling thread: RANGE_BEGIN with the thread's depth,
 * then depth + 1. Returns the depth the range has. */
uint32_t gmt_range_push(unsigned source, uint32_t name, uint32_t domain);

/* Closes the thread's innermost recorded range: depth - 1 (not below 0),
 * then RANGE_END with that depth. Returns the depth the closed range had. */
uint32_t gmt_range_pop(unsigned source, uint32_t name, uint32_t domain);

/* Recorded ranges open on the calling thread (what a MARK's size says). */
uint32_t gmt_range_depth(void);

/* Emits one range event (no stack): type GMT_EV_RANGE_* or GMT_EV_MARK,
 * addr = id, size = depth, stream = source, aux = name | domain << 32. */
void gmt_range_emit(unsigned type, unsigned source, uint64_t id, uint64_t depth,
		    uint32_t name, uint32_t domain);

#endif /* GMT_PHASES_H */
