/*
 * gmt_memviz_model.h - PRIVATE to analyzer/: `export --format memory-viz`
 * as plain data (docs/exports.md): one trace's memory as the snapshot
 * PyTorch's memory viewer reads. Per device (ordinals below
 * GMT_MV_MAX_DEVICES) its entries in time order:
 * - the framework's own events (FW_SEGMENT_ALLOC/MAP, FW_ALLOC,
 *   FW_FREE_REQUESTED/COMPLETED, FW_SEGMENT_FREE/UNMAP, FW_OOM; both
 *   streams merged by the time line);
 * - every driver-level allocation that never lay inside a framework
 *   segment (the levels engine's rule, engines/gmt_levels.h: what the page
 *   stacks as "outside the framework"), as a segment of its own holding one
 *   block of its whole size, labelled by its owner (nccl, cublas, cudnn,
 *   application, other): segment_alloc + alloc at its allocation,
 *   free_requested + free_completed + segment_free at its free;
 * and the segments live at the end with their live blocks. Each entry
 * names its stack (frames from the stack catalogue, model/gmt_stacks.h).
 *
 * Memory: the framework's entries go to a temporary file (support/
 * gmt_spool.h, 29 bytes or less an entry), what is live sits in maps; the
 * outside allocations are kept in memory (48 bytes each), at most
 * GMT_MV_MAX_OUTSIDE per trace (more are counted, not listed).
 */
#ifndef GMT_MEMVIZ_MODEL_H
#define GMT_MEMVIZ_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gmt_levels.h"
#include "model/gmt_stacks.h"

#define GMT_MV_MAX_DEVICES 64
#define GMT_MV_MAX_OUTSIDE (1u << 20)

/* What an entry is. */
enum gmt_mv_action {
	GMT_MV_SEGMENT_ALLOC, GMT_MV_SEGMENT_MAP, GMT_MV_ALLOC, GMT_MV_FREE_REQUESTED,
	GMT_MV_FREE_COMPLETED, GMT_MV_SEGMENT_FREE, GMT_MV_SEGMENT_UNMAP, GMT_MV_OOM,
	GMT_MV_ACTIONS
};

typedef struct gmt_mv_entry {
	uint8_t action;          /* enum gmt_mv_action                          */
	uint8_t outside;         /* 1: a driver-level allocation outside the
				    framework; owner says whose                */
	uint8_t owner;           /* report owner index (GMT_DOWNERS)           */
	uint8_t is_handle;       /* outside: a VMM handle (addr is the handle)  */
	uint32_t stack;          /* 0: none                                     */
	uint64_t ts;             /* CLOCK_MONOTONIC ns                          */
	uint64_t addr, size, stream;
	uint64_t device_free;    /* oom: the free bytes the framework saw       */
} gmt_mv_entry_t;

/* A segment live at the end, and its live blocks (address order). */
typedef struct gmt_mv_block {
	uint64_t addr, size;
	int pending_free;        /* free requested, not completed               */
	uint32_t stack;
} gmt_mv_block_t;

typedef struct gmt_mv_segment {
	int device;
	uint64_t addr, size, stream;
	uint32_t stack;
	int outside;             /* an outside allocation: owner, is_handle     */
	unsigned owner;
	int is_handle;
	gmt_mv_block_t *blocks;
	size_t n_blocks;
} gmt_mv_segment_t;

typedef struct gmt_mv_priv gmt_mv_priv_t;

typedef struct gmt_memviz_model {
	const char *file;
	gmt_decode_result_t res;
	const gmt_summary_t *s;
	int n_devices;           /* device traces: ordinals 0 .. n_devices - 1  */
	uint64_t wall_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC (header)  */
	uint64_t fw_entries, outside_allocations;
	uint64_t outside_left_out;    /* beyond GMT_MV_MAX_OUTSIDE            */
	uint64_t blocks_outside_segments;  /* live blocks in no live segment:
					      left out of the segments        */
	gmt_mv_segment_t *segments;   /* the live ones, device then address   */
	size_t n_segments;
	gmt_stacks_t *stacks;
	gmt_mv_priv_t *priv;
} gmt_memviz_model_t;

/* Runs the trace at path (kept by pointer); stacks symbolised as the
 * common options say. Returns the model (its res says how the trace was
 * read) or NULL when out of memory or the temporary file failed (errno). */
gmt_memviz_model_t *gmt_memviz_model_build(const char *path, const char *const *debug_dirs,
					   size_t n_dirs, int symbols);
void gmt_memviz_model_free(gmt_memviz_model_t *m);

/* Calls fn for every entry of a device in time order (outside allocations
 * merged with the framework's; on equal times the framework's first).
 * Returns 0, the first nonzero fn, or -EIO / -ENOMEM. */
int gmt_memviz_each_entry(const gmt_memviz_model_t *m, int device,
			  int (*fn)(void *ctx, const gmt_mv_entry_t *e), void *ctx);

const char *gmt_mv_action_key(unsigned a);

#endif /* GMT_MEMVIZ_MODEL_H */
