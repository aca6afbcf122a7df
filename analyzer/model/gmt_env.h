/*
 * gmt_env.h - PRIVATE to analyzer/: what a run was, as key/value items
 * (`diff` compares them, `card` prints them): the host, the allow-listed
 * variables of the HEADER, each device's name, total bytes, driver and
 * UUID, the CUDA runtime and NCCL versions the preload recorded (META),
 * the companion's META (PyTorch version, allocator settings), every other
 * META key, and each loaded module (soname, file, build id). Apart, the
 * tested dimensions: the META keys the program recorded itself
 * (gpumemtrace_meta(), gpumemtrace.meta()) and the launcher's --meta lines
 * (GPUMEMTRACE_META in the HEADER). docs/analyzer.md, "diff" and "card".
 *
 * The caller runs the decoder and forwards module and META records to
 * gmt_env_module / gmt_env_meta, then adds the replay's summary.
 */
#ifndef GMT_ENV_H
#define GMT_ENV_H

#include <stddef.h>

#include "gmt_decode.h"

struct gmt_summary;

typedef struct gmt_env_item {
	char *key, *value;
	const char *source;        /* dimensions: "program" (its own META) or
				      "launcher" (--meta); NULL for items   */
} gmt_env_item_t;

typedef struct gmt_env {
	gmt_env_item_t *items; size_t n;   /* keys: "host", "env NAME",
					      "device N name|total_bytes|
					      driver_version|uuid",
					      "cuda_runtime_version (FILE)",
					      "nccl_version (FILE)", "meta KEY",
					      "module SONAME"              */
	gmt_env_item_t *dims; size_t n_dims;   /* file order; keys bare   */
} gmt_env_t;

/* Record forwarders; 0 or -ENOMEM. */
int gmt_env_module(gmt_env_t *e, const gmt_module_t *m);
int gmt_env_meta(gmt_env_t *e, const gmt_kv_t *kv, size_t n);
/* The header's and the devices' facts, and the launcher's --meta lines
 * (GPUMEMTRACE_META, split into dimensions). Variables that change from
 * run to run without meaning anything (GPUMEMTRACE_OUTPUT, LD_PRELOAD,
 * ...) are left out. 0 or -ENOMEM. */
int gmt_env_summary(gmt_env_t *e, const struct gmt_summary *s);
void gmt_env_free(gmt_env_t *e);

#endif /* GMT_ENV_H */
