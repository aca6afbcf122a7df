/*
 * gmt_card_model.c - builds the sizing card (gmt_card_model.h).
 *
 * The computed part is answers/gmt_card.h's exact arithmetic. The observed
 * part points into one run of the phase engine (the same figures `phases`
 * prints, requested view), so every observed number is one `phases` has.
 * The worst phase of a device is the occurrence whose coinciding peak of
 * held bytes (reserved + outside at one instant) is the largest; its
 * headroom is the device's total as its DEVICE record reports it minus
 * that peak, and minus the largest device used sampled in that occurrence
 * (start, end, the latest sample at the peak: it also counts the context
 * and other processes, but a sample is not the peak's instant).
 */
#include "model/gmt_card_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "gmt_card.h"

const char *const gmt_card_input_keys[GMT_CARD_INPUTS] = {
	"parameters", "bits", "layers", "kv_heads", "head_dim", "tokens", "bytes_per_value", "sequences",
};

int gmt_card_estimate(const char *parameters, const char *bits, const char *reserve_gib,
		      const char *kv, gmt_card_estimate_t *e, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	if (!parameters != !bits) {
		snprintf(err, errlen, "--parameters and --bits go together (weights = parameters x bits / 8)");
		return -1;
	}
	if (reserve_gib && !parameters) {
		snprintf(err, errlen, "--reserve-gib needs --parameters and --bits (the envelope is weights + reserve)");
		return -1;
	}
	if (parameters) {
		if (gmt_card_weights(parameters, bits, &e->weights, err, errlen))
			return -1;
		gmt_card_plain(parameters, e->parameters);
		gmt_card_plain(bits, e->bits);
		e->has_weights = 1;
	}
	if (kv) {
		if (gmt_card_kv(kv, &e->kv_cache, e->kv, err, errlen))
			return -1;
		e->has_kv = 1;
	}
	if (reserve_gib) {
		if (gmt_card_reserve(reserve_gib, &e->reserve, err, errlen))
			return -1;
		gmt_card_plain(reserve_gib, e->reserve_gib);
		e->has_reserve = 1;
		unsigned __int128 sum = (unsigned __int128)e->weights + e->reserve + (e->has_kv ? e->kv_cache : 0);
		if (sum > UINT64_MAX) {
			snprintf(err, errlen, "the envelope (weights + KV cache + reserve) does not fit in 64 bits");
			return -1;
		}
		e->envelope = (uint64_t)sum;
		e->has_envelope = 1;
	}
	return 0;
}

/* ---- observed ---------------------------------------------------------------- */

static int by_begin(const void *pa, const void *pb)
{
	const gmt_card_row_t *a = pa, *b = pb;
	if (a->occ->begin_ts != b->occ->begin_ts)
		return a->occ->begin_ts < b->occ->begin_ts ? -1 : 1;
	return a < b ? -1 : a > b;   /* qsort is not stable: keep the name order */
}

static int dev_rows(gmt_card_trace_t *t, gmt_card_dev_t *cd)
{
	size_t n_names, cap = 0;
	const gmt_phase_name_t *names = gmt_phases_names(t->ph, &n_names);
	for (size_t i = 0; i < n_names; i++) {
		cd->not_listed += names[i].not_listed;
		for (size_t k = 0; k < names[i].n_listed; k++) {
			const gmt_occ_t *o = names[i].listed[k];
			if ((size_t)cd->ordinal >= o->n_dev || o->dev[cd->ordinal].ordinal != cd->ordinal)
				continue;
			if (cd->n_rows == cap) {
				cap = cap ? 2 * cap : 16;
				gmt_card_row_t *r = realloc(cd->rows, cap * sizeof(*r));
				if (!r)
					return -ENOMEM;
				cd->rows = r;
			}
			const char *nm = gmt_phases_string(t->ph, names[i].name_id);
			cd->rows[cd->n_rows++] = (gmt_card_row_t){
				.name = nm ? nm : "", .occ = o, .fig = &o->dev[cd->ordinal].fig[GMT_VIEW_REQUESTED],
			};
		}
	}
	if (cd->n_rows > 1)
		qsort(cd->rows, cd->n_rows, sizeof(*cd->rows), by_begin);
	for (size_t i = 0; i < cd->n_rows; i++) {
		const gmt_moment_t *m = &cd->rows[i].fig->max_held;
		if (m->valid && (!cd->worst || m->v.held > cd->worst->fig->max_held.v.held))
			cd->worst = &cd->rows[i];
	}
	if (cd->worst) {
		const gmt_pfig_t *x = cd->worst->fig;
		const gmt_lv_vals_t *at[3] = { x->has_start ? &x->start : NULL, &x->end, &x->max_held.v };
		for (int i = 0; i < 3; i++)
			if (at[i] && at[i]->has_used && (!cd->has_used || at[i]->used > cd->used)) {
				cd->has_used = 1;
				cd->used = at[i]->used;
			}
	}
	if (cd->worst && cd->d && cd->d->has_record && cd->d->total_bytes) {
		cd->has_headroom = 1;
		cd->headroom = (int64_t)(cd->d->total_bytes - cd->worst->fig->max_held.v.held);
		cd->has_headroom_used = cd->has_used;
		cd->headroom_used = (int64_t)(cd->d->total_bytes - cd->used);
	}
	return 0;
}

static void check_inputs(gmt_card_trace_t *t, const gmt_card_estimate_t *e)
{
	const char *vals[GMT_CARD_INPUTS] = { NULL };
	if (e->has_weights) {
		vals[0] = e->parameters;
		vals[1] = e->bits;
	}
	for (int i = 0; e->has_kv && i < 6; i++)
		vals[2 + i] = e->kv[i];
	for (int i = 0; i < GMT_CARD_INPUTS; i++) {
		if (!vals[i])
			continue;
		gmt_card_input_t *in = &t->inputs[t->n_inputs++];
		in->key = gmt_card_input_keys[i];
		in->value = vals[i];
		in->state = GMT_CARD_NOT_RECORDED;
		/* the latest recording of the key decides */
		for (size_t d = t->env.n_dims; d-- > 0;) {
			if (strcmp(t->env.dims[d].key, in->key))
				continue;
			int same = gmt_card_same(t->env.dims[d].value, in->value);
			in->state = same ? GMT_CARD_TESTED : GMT_CARD_DIFFERS;
			in->dim = &t->env.dims[d];
			break;
		}
	}
}

static int v_module(void *ctx, const gmt_module_t *m)
{
	gmt_card_trace_t *t = ctx;
	return gmt_env_module(&t->env, m) ? 1 : 0;
}

static int v_meta(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	gmt_card_trace_t *t = ctx;
	(void)ts;
	return gmt_env_meta(&t->env, kv, n) ? 1 : 0;
}

gmt_card_trace_t *gmt_card_trace_build(const char *file, const gmt_phase_opts_t *o,
				       const gmt_card_estimate_t *e)
{
	gmt_card_trace_t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->file = file;
	gmt_phases_run(file, o, NULL, &t->ph, &t->res);
	if (!t->ph || t->res.status == GMT_DECODE_STOPPED)
		goto oom;
	check_inputs(t, e);
	if (t->res.status != GMT_DECODE_OK && t->res.status != GMT_DECODE_DAMAGED)
		return t;
	gmt_visitor_t v = { .ctx = t, .module = v_module, .meta = v_meta };
	gmt_decode_result_t res;
	gmt_decode_file(file, &v, &res);
	if (res.status == GMT_DECODE_STOPPED)
		goto oom;
	const gmt_summary_t *s = gmt_phases_summary(t->ph);
	if (gmt_env_summary(&t->env, s))
		goto oom;
	t->n_inputs = 0;
	check_inputs(t, e);   /* now with the dimensions */
	int ords[256];
	size_t n = gmt_phases_devices(t->ph, ords, sizeof(ords) / sizeof(ords[0]));
	if (n > sizeof(ords) / sizeof(ords[0]))
		n = sizeof(ords) / sizeof(ords[0]);
	if (n && !(t->devs = calloc(n, sizeof(*t->devs))))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		gmt_card_dev_t *cd = &t->devs[t->n_devs++];
		cd->ordinal = ords[i];
		cd->d = gmt_summary_device(s, ords[i]);
		if (dev_rows(t, cd))
			goto oom;
	}
	return t;
oom:
	gmt_card_trace_free(t);
	return NULL;
}

void gmt_card_trace_free(gmt_card_trace_t *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_devs; i++)
		free(t->devs[i].rows);
	free(t->devs);
	gmt_env_free(&t->env);
	gmt_phases_free(t->ph);
	free(t);
}
