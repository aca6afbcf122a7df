/*
 * gmt_diff_model.h - PRIVATE to analyzer/: the report of `diff` for two
 * runs (each one trace), as plain data: what each run was (environment,
 * library versions), what it cost before its first allocation and at the
 * end, its device peaks and each phase occurrence's coinciding peaks, and
 * the call sites at its peaks and over the run, matched between the runs;
 * the change in bytes and percent of every matched number, and which
 * peaks grew by more than --fail-above. Computed here (gmt_diff_model.c,
 * with answers/gmt_diff.h), formatted by render/gmt_diff_render.c.
 * docs/analyzer.md, "diff".
 */
#ifndef GMT_DIFF_MODEL_H
#define GMT_DIFF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"
#include "engines/gmt_replay.h"

/* One number of both runs. */
typedef struct gmt_dnum {
	int has_a, has_b;
	uint64_t a, b;
	int64_t delta;             /* b - a (a missing side counts as 0)      */
	char percent[32];          /* one decimal, "+2.5"; "new"              */
	int checked;               /* a peak --fail-above looks at            */
	int exceeds;               /* it grew by more than --fail-above       */
} gmt_dnum_t;

typedef struct gmt_denv {
	char *key;
	const char *a, *b;         /* NULL: absent from that run              */
	int differs;
} gmt_denv_t;

typedef struct gmt_ddev {
	int ordinal;
	gmt_dnum_t context;        /* device used at its first sample before
				      the first allocation                    */
	gmt_dnum_t end_used;       /* device used at the last sample          */
	gmt_dnum_t peak;           /* the coinciding peak of bytes held       */
} gmt_ddev_t;

typedef struct gmt_dphase {
	char *name;
	uint64_t k;
	int device;
	gmt_dnum_t held;           /* the coinciding peak of everything held  */
	gmt_dnum_t allocated, reserved, outside;   /* at each run's own instant
				      of that peak                            */
	gmt_dnum_t outside_owner[6];
} gmt_dphase_t;

typedef struct gmt_dsite {
	char *key;                 /* frames "file:function" / "file+0xoff",
				      innermost first, '\n' between          */
	int unsymbolised;          /* a frame without a function              */
	gmt_dnum_t bytes;
	gmt_dnum_t count;
} gmt_dsite_t;

typedef struct gmt_dsites {
	int device;
	gmt_dsite_t *rows; size_t n;   /* growth largest first              */
} gmt_dsites_t;

typedef struct gmt_diff_model {
	const char *file_a, *file_b;
	gmt_decode_result_t res_a, res_b;
	gmt_gaps_t gaps_a, gaps_b;  /* what each run's trace may lack        */
	uint64_t events;
	gmt_denv_t *env; size_t n_env, n_env_differ;
	gmt_ddev_t *devs; size_t n_devs;
	gmt_dphase_t *phases; size_t n_phases;
	gmt_dsites_t *at_peak; size_t n_at_peak;      /* per device           */
	gmt_dsites_t *allocated; size_t n_allocated;  /* per device           */
	const char *fail_above;    /* NULL: not asked                          */
	size_t n_exceeded;         /* peaks above it                           */
	void *priv;
} gmt_diff_model_t;

typedef struct gmt_diff_model_opts {
	int symbols;
	const char *const *debug_dirs; size_t n_debug_dirs;
	const char *const *domains; size_t n_domains;
	const char *const *patterns; size_t n_patterns;
	int all_depths;
	const char *fail_above;
	unsigned top;              /* site rows per device and list            */
} gmt_diff_model_opts_t;

/* The traces to compare: a and b are each a trace or a directory holding
 * one job's traces (*.gmt). Directories are paired by the RANK of each
 * trace's header, else, when both hold the same number, by file name.
 * *pa and *pb get n malloc'ed paths each (free with gmt_diff_pairs_free);
 * returns n, or -1 with err filled. */
long gmt_diff_pairs(const char *a, const char *b, char ***pa, char ***pb, char *err, size_t errlen);
void gmt_diff_pairs_free(char **pa, char **pb, long n);

/* NULL only when out of memory; a run that cannot be read gives its res. */
gmt_diff_model_t *gmt_diff_model_build(const char *a, const char *b, const gmt_diff_model_opts_t *o);
void gmt_diff_model_free(gmt_diff_model_t *m);

#endif /* GMT_DIFF_MODEL_H */
