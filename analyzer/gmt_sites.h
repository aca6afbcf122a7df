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

/* Owner decided from a stack, beyond the format's owners. */
enum gmt_stack_owner {
	GMT_SOWNER_APPLICATION = 0,
	GMT_SOWNER_NCCL,
	GMT_SOWNER_CUBLAS,
	GMT_SOWNER_CUDNN,
	GMT_SOWNER_FRAMEWORK,   /* libc10_cuda, libtorch*                       */
	GMT_SOWNER_UNKNOWN      /* no frame outside the CUDA libraries and ours */
};

/* The owner named by a module's file name (a path or a base name):
 * framework, nccl, cublas, cudnn; GMT_SOWNER_UNKNOWN for libcuda,
 * libcudart and the preload (frames skipped by the rule); application for
 * anything else. */
enum gmt_stack_owner gmt_module_owner(const char *path);
const char *gmt_stack_owner_name(enum gmt_stack_owner o);

/* `gpumemtrace-analyze sites|flamegraph ARGS...` (argv after the command).
 * Returns the exit status (docs/analyzer.md). */
int gmt_sites_main(const char *cmd, int argc, char **argv);

#endif /* GMT_SITES_H */
