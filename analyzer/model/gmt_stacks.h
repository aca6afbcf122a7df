/*
 * gmt_stacks.h - PRIVATE to analyzer/: the stack catalogue of one trace,
 * for every report that names call sites (sites, flamegraph, oom, diff):
 * the STACK, TEXT_STACK and MODULE records a pass meets, each stack's view
 * (symbolised once per id: frames innermost first, the preload's own left
 * out, the owner by the stack rule), and sites (bytes by stack id) merged
 * when their stacks symbolise to the same frames with the same recorded
 * owner (docs/analyzer.md, "Call sites"). Symbolisation happens only for
 * the stacks asked for. The catalogue owns what it returns;
 * gmt_stacks_free frees it all.
 */
#ifndef GMT_STACKS_H
#define GMT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"
#include "engines/gmt_liveset.h"
#include "engines/gmt_symbols.h"

/* Owner decided from a stack: the format's owners (tracer/gmt_format.def),
 * then two more. */
enum gmt_stack_owner {
#define GMT_OWNER(name, number, key) GMT_SOWNER_##name = (number),
#include "gmt_format.def"
	GMT_SOWNER_FRAMEWORK = GMT_OWNER_MAX + 1, /* libc10_cuda, libtorch*   */
	GMT_SOWNER_UNKNOWN                        /* no frame outside the CUDA
						     libraries and ours        */
};

/* The owner named by a module's file name (a path or a base name):
 * framework, nccl, cublas, cudnn; GMT_SOWNER_UNKNOWN for libcuda,
 * libcudart and the preload (frames skipped by the rule); application for
 * anything else (engines/gmt_stackowner.c). */
enum gmt_stack_owner gmt_module_owner(const char *path);
const char *gmt_stack_owner_name(enum gmt_stack_owner o);

/* One frame as printed. A native frame (text NULL) comes from a return
 * address, symbolised; an address in inlined code gives several frames,
 * the innermost first. A text frame (a TEXT_STACK's, e.g. Python's) has
 * only text. */
typedef struct gmt_frame {
	const char *text;        /* a text stack's frame as recorded; NULL:
				    native                                    */
	uint64_t addr;           /* the return address as recorded            */
	uint64_t offset;         /* addr - load bias                          */
	const char *status;      /* "ok", "no_module", "missing",
				    "build_id_mismatch", "off"                */
	int symbolised;          /* status is "ok"                             */
	const char *module;      /* the module's path; NULL: none              */
	const char *module_base; /* its base name; NULL: none                  */
	const char *function;    /* NULL: no symbol                            */
	const char *file;        /* source file; NULL: none                    */
	const char *file_base;   /* its base name                              */
	unsigned line;           /* 0: none                                    */
	int inlined;             /* inlined into the next frame                */
	const char *label;       /* one line naming the address (symbols.h)   */
	const char *name;        /* the frame's name: the function when
				    symbolised, else the label; a text frame's
				    text                                      */
} gmt_frame_t;

enum gmt_stack_kind { GMT_STACK_NONE = 0, GMT_STACK_NATIVE = 1, GMT_STACK_TEXT = 2 };

/* A stack as printed: frames innermost first, the preload's own frames
 * left out. */
typedef struct gmt_stack_view {
	uint32_t id;
	enum gmt_stack_kind kind;  /* NONE: no record of that id (or id 0)   */
	const char *kind_key;      /* "none", "native", "text"                */
	const gmt_frame_t *frames;
	size_t n;
	int recorded;              /* a record with at least one frame        */
	enum gmt_stack_owner owner;  /* the stack rule (native frames)        */
	const char *owner_key;
} gmt_stack_view_t;

/* The bytes live (or allocated) with one stack, or with several stacks
 * that symbolise the same. */
typedef struct gmt_site {
	uint64_t bytes, count;
	int has_share;             /* listed against a peak                   */
	double share;              /* bytes / peak                            */
	double percent;            /* 100 * bytes / peak                      */
	unsigned owner;            /* recorded (format) owner                 */
	const char *owner_key;
	uint32_t stack;            /* the group's smallest stack id           */
	const uint32_t *ids;       /* every stack id merged, ascending; NULL
				      (n_ids 0) when just stack              */
	size_t n_ids;
	const gmt_stack_view_t *st;  /* set for the sites the report lists   */
} gmt_site_t;

/* A list of sites and how much of it the report shows. */
typedef struct gmt_site_list {
	gmt_site_t *sites;         /* all, largest first                      */
	size_t n;                  /* all of them                             */
	size_t n_listed;           /* the first ones listed: min(n, top)      */
	int more;                  /* n > top                                 */
	size_t not_listed;         /* n - n_listed                            */
} gmt_site_list_t;

typedef struct gmt_stacks gmt_stacks_t;

/* A catalogue symbolising with debug_dirs (symbols 0: --no-symbols). NULL
 * when out of memory. */
gmt_stacks_t *gmt_stacks_new(const char *const *debug_dirs, size_t n_dirs, int symbols);
void gmt_stacks_free(gmt_stacks_t *c);
gmt_symtab_t *gmt_stacks_symtab(gmt_stacks_t *c);

/* The records, as a pass meets them (the visitor's module, stack and
 * text_stack callbacks): 0, or 1 when out of memory. A repeated id keeps
 * the first. */
int gmt_stacks_module(gmt_stacks_t *c, const gmt_module_t *m);
int gmt_stacks_stack(gmt_stacks_t *c, uint32_t id, const uint64_t *frames, size_t n);
int gmt_stacks_text_stack(gmt_stacks_t *c, uint32_t id, const char *const *frames, size_t n);

/* The view of stack id: a native stack symbolised; with text = 1 (a
 * framework's blocks) a TEXT_STACK id gives its text frames. NULL only
 * when out of memory. */
const gmt_stack_view_t *gmt_stacks_view(gmt_stacks_t *c, uint32_t id, int text);

/* Sites from the live set engine's groups (by stack id). 0 or -ENOMEM. */
int gmt_site_list_of(gmt_site_list_t *l, const gmt_live_group_t *g, size_t n);
void gmt_site_list_free(gmt_site_list_t *l);

/* Merges the sites (fresh: ids NULL) whose stacks symbolise to the same
 * frames and whose recorded owner is the same, then sorts them largest
 * first. A stack id without a STACK record merges with nothing. 0 or
 * -ENOMEM. */
int gmt_stacks_group(gmt_stacks_t *c, gmt_site_t *a, size_t *n);

/* What a listed site shows: share of peak (peak 0: none), names, and (views
 * set) the view of the stacks of the first top (text: a framework's,
 * TEXT_STACK ids allowed). 0 or -ENOMEM. */
int gmt_stacks_list(gmt_stacks_t *c, gmt_site_list_t *l, uint64_t peak, size_t top, int text,
		    int views);

#endif /* GMT_STACKS_H */
