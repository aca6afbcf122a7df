/*
 * gmt_memviz.h - a writer of the snapshot PyTorch's memory viewer reads
 * (`torch.cuda.memory._snapshot()`'s structure, docs/exports.md): the
 * device traces, then the segments live at the end, as JSON (through
 * writers/gmt_json.h) or as a pickle of protocol 2 to 4 (gmt_pickle.h).
 *
 * The caller gives entries per device, in device index order and time
 * order within a device, and the segments live at the end with their live
 * blocks; the writer lays each segment's blocks end to end in address order
 * with the free space between them as `inactive` blocks (the viewer gives a
 * block its address by adding up the sizes before it), and sums
 * `allocated_size` and `active_size` from them.
 */
#ifndef GMT_MEMVIZ_H
#define GMT_MEMVIZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GMT_MEMVIZ_JSON 0  /* else the pickle protocol: 2, 3 or 4 */

typedef struct gmt_memviz_frame {
	const char *filename, *name;
	uint64_t line;
} gmt_memviz_frame_t;

typedef struct gmt_memviz_entry {
	const char *action;      /* alloc, free_requested, free_completed, segment_alloc, ... oom */
	uint64_t addr, size, stream;
	uint64_t time_us;        /* wall-clock microseconds since the epoch */
	const gmt_memviz_frame_t *frames;  /* innermost first */
	size_t n_frames;
	uint64_t device_free;    /* oom: free bytes the device reported; else ignored */
	const char *category;    /* NULL: none */
} gmt_memviz_entry_t;

typedef struct gmt_memviz_block {
	uint64_t address, size, requested_size;
	const char *state;       /* active_allocated or active_pending_free */
	const gmt_memviz_frame_t *frames;
	size_t n_frames;
} gmt_memviz_block_t;

typedef struct gmt_memviz_segment {
	unsigned device;
	uint64_t address, total_size, stream;
	const char *segment_type;  /* large or small */
	const gmt_memviz_block_t *blocks;  /* the live ones, in address order, inside the segment */
	size_t n_blocks;
	const gmt_memviz_frame_t *frames;  /* the segment's own (where it was allocated) */
	size_t n_frames;
} gmt_memviz_segment_t;

typedef struct gmt_memviz gmt_memviz_t;

/* Starts a snapshot on out, as JSON or a pickle; NULL when out of memory
   or the format is another (errno EINVAL). Every string given to the
   calls below (actions, categories, states, segment types, frames' file
   names and names) must stay allocated and unchanged until
   gmt_memviz_close: the pickle's memo finds a string again by its
   address. */
gmt_memviz_t *gmt_memviz_open(FILE *out, int format);

/* device_traces: one list per device index, 0 first. */
void gmt_memviz_device_begin(gmt_memviz_t *m);
void gmt_memviz_entry(gmt_memviz_t *m, const gmt_memviz_entry_t *e);
void gmt_memviz_device_end(gmt_memviz_t *m);

/* segments (after every device's trace). Returns 0, or -EINVAL when a block
   lies outside its segment or blocks overlap (nothing written then). */
int gmt_memviz_segment(gmt_memviz_t *m, const gmt_memviz_segment_t *s);

/* Ends the snapshot and frees m. Returns 0, -EINVAL or -EIO. */
int gmt_memviz_close(gmt_memviz_t *m);

#ifdef __cplusplus
}
#endif

#endif
