/*
 * gmt_hooks_mem.h - PRIVATE to preload/: what the memory bodies share
 * (gmt_hooks_mem.c), and the bodies folded into their wrappers.
 *
 * A folded body is one of the two hottest: cuMemAlloc_v2 and cuMemFree_v2,
 * one of each per pair of events in a program that allocates through the
 * driver. It is defined here, static and always inlined, and the generated
 * wrappers (gmt_hooks_table.c, which includes this file) reach it by the
 * rename below: a wrapper's gmt_do_<body>, made by token pasting, is
 * rescanned and becomes gmt_fold_<body>. The wrapper's call record is then
 * a constant, and the body's call, frame and register saves go. So does the
 * body's frame on the stack: a folded body writes its events with
 * GMT_FOLDED_SKIP_FRAMES (the wrapper's frame only), so that its stacks
 * start at the program's call exactly as a body's do. Everything else
 * about a body (gmt_hooks_mem.c's top) holds for a folded one.
 */
#ifndef GMT_HOOKS_MEM_H
#define GMT_HOOKS_MEM_H

#include "gmt_preload.h"

GMT_HOT_INLINE uint64_t u64p(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Common tail of the allocation bodies. frames: GMT_BODY_SKIP_FRAMES in a
 * body itself (inlined there), GMT_FOLDED_SKIP_FRAMES in a folded body (the
 * event written right here: gmt_rec_skip), 0 for gmt_rec's out-of-line
 * call (the same stack as a body's). */
GMT_HOT_INLINE void
alloc_tail(CUresult r, const gmt_call_t *call, unsigned kind, int dev, uint64_t addr, uint64_t size,
	   uint64_t stream, uint64_t extra, int frames)
{
	uint64_t aux = gmt_aux(kind, call) | extra;
	if (r == CUDA_SUCCESS && frames != 0)
		gmt_rec_skip(GMT_EV_ALLOC, dev, addr, size, stream, aux, 1, frames);
	else if (r == CUDA_SUCCESS)
		gmt_rec(GMT_EV_ALLOC, dev, addr, size, stream, aux, 1);
	else
		gmt_rec_alloc_fail(dev, size, stream, aux, (int)r, frames != 0 ? frames : GMT_BODY_SKIP_FRAMES);
}

GMT_HOT_INLINE void
alloc_done_x(CUresult r, const gmt_call_t *call, unsigned kind, int dev, uint64_t addr, uint64_t size,
	     uint64_t stream, uint64_t extra)
{
	alloc_tail(r, call, kind, dev, addr, size, stream, extra, 0);
}

/* Only in a body itself (gmt_do_*). */
GMT_HOT_INLINE void
alloc_done(CUresult r, const gmt_call_t *call, unsigned kind, int dev, uint64_t addr, uint64_t size,
	   uint64_t stream)
{
	alloc_tail(r, call, kind, dev, addr, size, stream, 0, GMT_BODY_SKIP_FRAMES);
}

/* A free-like event before the real call; after it, the FREE_FAIL if needed
 * (no stack: any skip count gives the same event). */
GMT_HOT_INLINE void
free_fail(CUresult r, int dev, uint64_t addr, uint64_t size, uint64_t stream, uint64_t aux)
{
	if (r != CUDA_SUCCESS)
		gmt_rec(GMT_EV_FREE_FAIL, dev, addr, size, stream, GMT_AUX_WITH_RESULT(aux, r), 0);
}

/* ---- the folded bodies --------------------------------------------------- */

GMT_HOT_INLINE CUresult
gmt_fold_cuMemAlloc_v2(__typeof__(cuMemAlloc_v2) *real, const gmt_call_t *call, CUdeviceptr *dptr,
		       size_t bytesize)
{
	CUresult r;
	GMT_GUARD_ENTER();
	r = real(dptr, bytesize);
	/* alloc_tail's, with gmt_cur_device_ok's device described already. */
	if (GMT_LIKELY(r == CUDA_SUCCESS))
		gmt_rec_described(GMT_EV_ALLOC, gmt_cur_device_ok(), *dptr, bytesize, 0,
				  gmt_aux(GMT_KIND_PLAIN, call), 1, GMT_FOLDED_SKIP_FRAMES);
	else
		gmt_rec_alloc_fail(gmt_cur_device(), bytesize, 0, gmt_aux(GMT_KIND_PLAIN, call), (int)r,
				   GMT_FOLDED_SKIP_FRAMES);
	GMT_GUARD_LEAVE();
	return r;
}
#define gmt_do_cuMemAlloc_v2 gmt_fold_cuMemAlloc_v2

/* cuMemFree frees plain, managed and (synchronously) stream-ordered memory:
 * the kind is unknown here; the analyzer takes it from the allocation. */
GMT_HOT_INLINE CUresult
gmt_fold_cuMemFree_v2(__typeof__(cuMemFree_v2) *real, const gmt_call_t *call, CUdeviceptr dptr)
{
	uint64_t aux = gmt_aux(GMT_KIND_UNKNOWN, call);
	const int dev = -1;
	CUresult r;

	GMT_GUARD_ENTER();
	if (dptr != 0)
		gmt_rec_described(GMT_EV_FREE, dev, dptr, 0, 0, aux, 1, GMT_FOLDED_SKIP_FRAMES);
	r = real(dptr);
	if (dptr != 0)
		free_fail(r, dev, dptr, 0, 0, aux);
	GMT_GUARD_LEAVE();
	return r;
}
#define gmt_do_cuMemFree_v2 gmt_fold_cuMemFree_v2

#endif /* GMT_HOOKS_MEM_H */
