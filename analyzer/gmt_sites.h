/*
 * gmt_sites.h - who holds the memory: call sites at each device's coinciding
 * peak, the sites that allocated most, the sites of failed allocations, and
 * the same live memory as folded stacks for flame graphs (private to
 * analyzer/). The rules are in docs/analyzer.md ("Call sites").
 */
#ifndef GMT_SITES_H
#define GMT_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_format.h"
#include "cli/gmt_cli.h"

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
 * anything else. */
enum gmt_stack_owner gmt_module_owner(const char *path);
const char *gmt_stack_owner_name(enum gmt_stack_owner o);

/* The options of sites and flamegraph. */
typedef struct gmt_sites_opts {
	int flamegraph;          /* folded stacks instead of the sites report */
	int framework;           /* --framework */
	unsigned top;            /* --top (sites) */
	const char *phase;       /* --phase NAME, or NULL */
} gmt_sites_opts_t;

/* Runs sites or flamegraph on c->files into out. Returns the exit status
 * (docs/analyzer.md). */
int gmt_sites_run(const gmt_sites_opts_t *so, const gmt_common_t *c, gmt_out_t *out);

#endif /* GMT_SITES_H */
