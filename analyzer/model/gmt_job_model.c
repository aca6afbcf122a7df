/*
 * gmt_job_model.c - several processes of one job (gmt_job_model.h): shares
 * of each physical device's coinciding peak, the skew table, stray
 * contexts, from the finished report model.
 */
#include <errno.h>
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
	for (size_t i = 0; i < m->n_phases; i++) {
		free(m->phases[i].present);
		free(m->phases[i].own);
		free(m->phases[i].at);
	}
	free(m->phases);
	for (size_t i = 0; i < m->n_fails; i++)
		free(m->fails[i].at);
	free(m->fails);
	free(m);
}

static int same_name(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static int by_dev_begin(const void *pa, const void *pb)
{
	const gmt_job_phase_t *a = pa, *b = pb;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

int gmt_job_phases_build(gmt_job_model_t *m)
{
	const gmt_report_model_t *rm = m->rm;
	size_t cap = 0;
	m->phases_built = 1;
	for (size_t d = 0; d < rm->n_devices; d++) {
		const gmt_rm_device_t *dv = &rm->devices[d];
		size_t first = m->n_phases, nm = dv->n_members;
		if (nm < 2)
			continue;
		for (size_t i = 0; i < dv->n_phases; i++) {
			const gmt_rm_phase_t *p = &dv->phases[i];
			gmt_job_phase_t *g = NULL;
			for (size_t k = first; k < m->n_phases && !g; k++)
				if (m->phases[k].k == p->k && same_name(m->phases[k].name, p->name))
					g = &m->phases[k];
			if (!g) {
				if (m->n_phases == cap) {
					cap = cap ? 2 * cap : 16;
					gmt_job_phase_t *x = realloc(m->phases, cap * sizeof(*x));
					if (!x)
						return -ENOMEM;
					m->phases = x;
				}
				g = &m->phases[m->n_phases];
				memset(g, 0, sizeof(*g));
				g->present = calloc(nm, 1);
				g->own = calloc(nm, sizeof(*g->own));
				g->at = calloc(nm, sizeof(*g->at));
				m->n_phases++;
				if (!g->present || !g->own || !g->at)
					return -ENOMEM;
				g->dev = d;
				g->name = p->name;
				g->k = p->k;
				g->from = p->begin_ts;
				g->to = p->end_ts;
			}
			if (p->begin_ts < g->from)
				g->from = p->begin_ts;
			if (p->end_ts > g->to)
				g->to = p->end_ts;
			if (!g->present[p->member]) {
				g->present[p->member] = 1;
				g->n_present++;
			}
			/* one process's several occurrences of one number cannot
			   happen (numbers count per trace); keep the largest */
			if (p->max_held > g->own[p->member]) {
				g->own_sum += p->max_held - g->own[p->member];
				g->own[p->member] = p->max_held;
			}
		}
	}
	if (m->n_phases > 1)
		qsort(m->phases, m->n_phases, sizeof(*m->phases), by_dev_begin);
	for (size_t i = 0; i < m->n_phases; i++) {
		gmt_job_phase_t *g = &m->phases[i];
		int rc = gmt_report_window_peak(rm, g->dev, g->from, g->to, &g->peak, g->at);
		if (rc)
			return rc;
	}
	return 0;
}

int gmt_job_failures_build(gmt_job_model_t *m, const gmt_job_fail_in_t *in, size_t n)
{
	const gmt_report_model_t *rm = m->rm;
	m->fails_built = 1;
	if (!n)
		return 0;
	if (!(m->fails = calloc(n, sizeof(*m->fails))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		gmt_job_fail_t *f = &m->fails[m->n_fails++];
		f->in = in[i];
		for (size_t d = 0; d < rm->n_devices && !f->found; d++)
			for (size_t k = 0; k < rm->devices[d].n_members && !f->found; k++) {
				const gmt_rm_member_t *mb = &rm->devices[d].members[k];
				if (mb->trace == in[i].trace && mb->ordinal == in[i].ordinal) {
					f->found = 1;
					f->dev = d;
					f->member = k;
				}
			}
		if (!f->found)
			continue;
		if (!(f->at = calloc(rm->devices[f->dev].n_members, sizeof(*f->at))))
			return -ENOMEM;
		gmt_rm_window_t w;
		int rc = gmt_report_window_peak(rm, f->dev, in[i].ts, in[i].ts, &w, f->at);
		if (rc)
			return rc;
		f->held_all = w.held;
	}
	return 0;
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
