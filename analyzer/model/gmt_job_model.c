/*
 * gmt_job_model.c - several processes of one job (gmt_job_model.h): shares
 * of each physical device's coinciding peak, the skew table, stray
 * contexts, from the finished report model.
 */
#include <stdlib.h>
#include <string.h>

#include "model/gmt_job_model.h"

static const char *env_of(const gmt_summary_t *s, const char *key)
{
	for (size_t i = 0; s && i < s->n_env; i++)
		if (!strcmp(s->env_keys[i], key))
			return s->env_values[i];
	return NULL;
}

/* The innermost listed phase occurrence of member mi on device dv open at
 * ts: the latest begun that contains it. */
static const gmt_rm_phase_t *phase_at(const gmt_rm_device_t *dv, size_t mi, uint64_t ts)
{
	const gmt_rm_phase_t *best = NULL;
	for (size_t i = 0; i < dv->n_phases; i++) {
		const gmt_rm_phase_t *p = &dv->phases[i];
		if (p->member != mi || p->begin_ts > ts || p->end_ts < ts)
			continue;
		if (!best || p->begin_ts >= best->begin_ts)
			best = p;
	}
	return best;
}

void gmt_job_model_free(gmt_job_model_t *m)
{
	if (!m)
		return;
	for (size_t d = 0; m->share && d < m->rm->n_devices; d++)
		free(m->share[d]);
	free(m->share);
	for (size_t i = 0; i < m->n_procs; i++)
		free(m->procs[i].devs);
	free(m->procs);
	free(m->strays);
	free(m);
}

gmt_job_model_t *gmt_job_model_build(const gmt_report_model_t *rm)
{
	gmt_job_model_t *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->rm = rm;
	m->share = calloc(rm->n_devices ? rm->n_devices : 1, sizeof(*m->share));
	m->procs = calloc(rm->n_traces ? rm->n_traces : 1, sizeof(*m->procs));
	if (!m->share || !m->procs)
		goto oom;
	m->n_procs = rm->n_traces;
	for (size_t t = 0; t < rm->n_traces; t++) {
		gmt_job_proc_t *p = &m->procs[t];
		const gmt_summary_t *s = rm->traces[t].s;
		p->trace = t;
		p->pid = s ? s->pid : 0;
		p->rank = env_of(s, "RANK");
		p->local_rank = env_of(s, "LOCAL_RANK");
	}
	for (size_t d = 0; d < rm->n_devices; d++) {
		const gmt_rm_device_t *dv = &rm->devices[d];
		if (!(m->share[d] = calloc(dv->n_members ? dv->n_members : 1, sizeof(double))))
			goto oom;
		for (size_t k = 0; k < dv->n_members; k++) {
			const gmt_rm_member_t *mb = &dv->members[k];
			if (dv->has_peak && dv->peak.held)
				m->share[d][k] = (double)mb->at_peak / (double)dv->peak.held;
			gmt_job_proc_t *p = &m->procs[mb->trace];
			size_t *nd = realloc(p->devs, (p->n_devs + 1) * sizeof(*nd));
			if (!nd)
				goto oom;
			p->devs = nd;
			p->devs[p->n_devs++] = d;
			if (mb->own_peak && (!p->has_peak || mb->own_peak > p->own_peak)) {
				const gmt_summary_t *s = rm->traces[mb->trace].s;
				p->has_peak = 1;
				p->peak_dev = d;
				p->own_peak = mb->own_peak;
				p->own_peak_ts = mb->own_peak_ts;
				p->own_peak_s = s ? (double)(int64_t)(mb->own_peak_ts - s->first_ts) / 1e9 : 0;
				const gmt_rm_phase_t *ph = phase_at(dv, k, mb->own_peak_ts);
				p->in_phase = ph != NULL;
				p->phase = ph ? ph->name : NULL;
				p->phase_k = ph ? ph->k : 0;
			}
			if (!mb->own_peak) {
				gmt_job_stray_t *ns = realloc(m->strays, (m->n_strays + 1) * sizeof(*ns));
				if (!ns)
					goto oom;
				m->strays = ns;
				m->strays[m->n_strays++] = (gmt_job_stray_t){ .proc = mb->trace, .dev = d,
									      .ordinal = mb->ordinal };
			}
		}
	}
	size_t held = 0;
	for (size_t i = 0; i < m->n_procs; i++) {
		const gmt_job_proc_t *p = &m->procs[i];
		if (!p->has_peak)
			continue;
		if (!held++) {
			m->skew_max = m->skew_min = i;
			continue;
		}
		if (p->own_peak > m->procs[m->skew_max].own_peak)
			m->skew_max = i;
		if (p->own_peak < m->procs[m->skew_min].own_peak)
			m->skew_min = i;
	}
	m->has_skew = held >= 2;
	if (m->has_skew)
		m->skew_spread = m->procs[m->skew_max].own_peak - m->procs[m->skew_min].own_peak;
	return m;
oom:
	gmt_job_model_free(m);
	return NULL;
}
