/*
 * gmt_card_model.h - PRIVATE to analyzer/: the sizing card (`card`) as
 * plain data, in three parts that are never mixed:
 *   computed - the estimate from the options (answers/gmt_card.h): weights
 *              = parameters x bits / 8, the KV cache, an assumed reserve,
 *              their envelope; arithmetic, no trace involved;
 *   observed - per trace and device, each listed phase occurrence of the
 *              phase engine (requested view): ok or failed, allocated and
 *              reserved at start and end and their maxima, the coinciding
 *              peak of everything held (with allocated, reserved and
 *              outside at that instant: taken from the device), the maximum outside, device used
 *              at start and end; the tested dimensions the job recorded;
 *   assumed  - what neither covers: the reserve, each estimate input the
 *              run did not test, and the headroom of the worst observed
 *              phase against the device's reported total bytes (and
 *              against the device used sampled in that phase).
 * Plus the environment (model/gmt_env.h) and the trace it came from.
 * Built here (gmt_card_model.c), formatted by render/gmt_card_render.c.
 * docs/analyzer.md, "card".
 */
#ifndef GMT_CARD_MODEL_H
#define GMT_CARD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gmt_phase_engine.h"
#include "model/gmt_env.h"

/* ---- computed ---- */

typedef struct gmt_card_estimate {
	int has_weights;
	char parameters[96], bits[96];   /* as the card writes them */
	uint64_t weights;                /* parameters x bits / 8, bytes */
	int has_kv;
	char kv[6][96];                  /* layers, KV heads, head dimension,
					    tokens, bytes per value, sequences */
	uint64_t kv_cache;               /* 2 x the six, bytes */
	int has_reserve;
	char reserve_gib[96];
	uint64_t reserve;                /* R x 2^30 bytes: an ASSUMPTION */
	int has_envelope;                /* weights and reserve given */
	uint64_t envelope;               /* weights + kv_cache (when given) +
					    reserve */
} gmt_card_estimate_t;

/* The estimate from the options as typed (NULL: not given). parameters and
 * bits go together; reserve_gib needs them. 0, or -1 with err filled. */
int gmt_card_estimate(const char *parameters, const char *bits, const char *reserve_gib,
		      const char *kv, gmt_card_estimate_t *e, char *err, size_t errlen);

/* The inputs the card checks against the tested dimensions, in order:
 * "parameters", "bits", then the KV cache's "layers", "kv_heads",
 * "head_dim", "tokens", "bytes_per_value", "sequences". */
#define GMT_CARD_INPUTS 8
extern const char *const gmt_card_input_keys[GMT_CARD_INPUTS];

/* ---- observed ---- */

/* One phase occurrence on one device (pointers into the phase engine). */
typedef struct gmt_card_row {
	const char *name;
	const gmt_occ_t *occ;
	const gmt_pfig_t *fig;           /* requested view */
} gmt_card_row_t;

enum gmt_card_input_state {
	GMT_CARD_TESTED = 0,             /* a dimension of that key, same value */
	GMT_CARD_DIFFERS = 1,            /* recorded with another value */
	GMT_CARD_NOT_RECORDED = 2
};

typedef struct gmt_card_input {
	const char *key;                 /* gmt_card_input_keys[i] */
	const char *value;               /* the estimate's */
	unsigned state;                  /* enum gmt_card_input_state */
	const gmt_env_item_t *dim;       /* DIFFERS: the recorded one */
} gmt_card_input_t;

typedef struct gmt_card_dev {
	int ordinal;
	const struct gmt_dev_summary *d; /* NULL or !has_record: total unknown */
	gmt_card_row_t *rows; size_t n_rows;   /* by begin time */
	uint64_t not_listed;             /* occurrences beyond the listed ones,
					    all names */
	const gmt_card_row_t *worst;     /* the largest coinciding held peak
					    (the first of equal ones); NULL */
	int has_headroom;                /* worst and the total known */
	int64_t headroom;                /* total - worst held peak */
	int has_used;                    /* a device used sample in worst */
	uint64_t used;                   /* the largest device used of the
					    worst occurrence: at its start,
					    its end and the latest sample at
					    its held peak                  */
	int has_headroom_used;           /* has_headroom and has_used */
	int64_t headroom_used;           /* total - used                 */
} gmt_card_dev_t;

typedef struct gmt_card_trace {
	const char *file;
	gmt_decode_result_t res;
	gmt_phases_t *ph;                /* NULL only when out of memory */
	gmt_env_t env;
	gmt_card_dev_t *devs; size_t n_devs;
	gmt_card_input_t inputs[GMT_CARD_INPUTS]; size_t n_inputs;  /* the
					    estimate's inputs only        */
} gmt_card_trace_t;

/* Reads the trace (the phase engine with o, and one pass for the
 * environment). NULL only when out of memory; a trace that cannot be
 * read gives its res (and no devices). */
gmt_card_trace_t *gmt_card_trace_build(const char *file, const gmt_phase_opts_t *o,
				       const gmt_card_estimate_t *e);
void gmt_card_trace_free(gmt_card_trace_t *t);

#endif /* GMT_CARD_MODEL_H */
