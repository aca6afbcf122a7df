/*
 * gmt_sites_model.c - builds the sites/flamegraph model of one trace
 * (gmt_sites_model.h).
 *
 *  1. A replay as for `summary` gives each device's coinciding peak (the
 *     first instant its total reached the maximum), and the live set engine
 *     (gmt_liveset.h) observing it gives, in the same pass, the live bytes
 *     by stack at each of those peaks and at the instants asked for
 *     (opts.at); on the way STACK, TEXT_STACK and MODULE records are kept,
 *     the bytes allocated per (device, stack) summed, failed allocations
 *     listed, and with --phase each occurrence's device peaks found, named
 *     by main-stream event number as gmt_liveset.h counts them.
 *  2. --phase: the live set engine takes the live bytes by stack right
 *     after each occurrence's peaks (a second pass).
 *  3. --framework: the framework's peaks engine (gmt_fwpeaks.h), for the
 *     whole run and each occurrence's window.
 *  4. Sites are merged by symbolised stack (gmt_stacks.h), listed, and the
 *     stacks of what is listed symbolised into views (gmt_stack_view_t);
 *     with GMT_SITES_FOLDED the folded lines are made and summed.
 * Symbolisation (gmt_symbols.c) happens only for the stacks reported (and
 * those compared when merging).
 */
#include "model/gmt_sites_model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_fwpeaks.h"
#include "engines/gmt_liveset.h"
#include "engines/gmt_phase_engine.h"
#include "engines/gmt_replay.h"
#include "engines/gmt_symbols.h"
#include "model/gmt_results.h"
#include "support/gmt_strbuf.h"
#include "support/gmt_u64map.h"

static int when_all(gmt_sites_model_t *m);

#define MAX_FAILS_LISTED 1000
#define MAX_PHASE_OCC 1000

/* ---- what the model owns ------------------------------------------------- */

/* A device of pass 1, and the instant its sites are taken at. */
typedef struct dev_work {
	gmt_sites_dev_t *d;
	uint64_t peak_seq;       /* occurrences: after main-stream event
				    number peak_seq                          */
	gmt_instant_t at;
} dev_work_t;

/* An occurrence being filled in pass 1. */
typedef struct occ_work {
	int started;
	dev_work_t *devs; size_t n_devs, cap_devs;
} occ_work_t;

struct gmt_sites_model_priv {
	const gmt_sites_model_opts_t *o;
	gmt_stacks_t *cat;       /* stacks, modules, views, merging          */
	/* pass 1 */
	gmt_replay_t *rp;
	gmt_visitor_t inner;
	gmt_liveset_t *ls;       /* the live sets at the peaks, same pass    */
	gmt_instant_t *asked;    /* opts.at's instants                       */
	gmt_u64map_t totals;     /* (dev + 1) << 32 | stack -> a bytes, b count | owner << 56 */
	uint64_t last_key;       /* the totals' slot of the latest key ...    */
	gmt_u64map_slot_t *last; /* ... (valid until the next new key)       */
	size_t cap_fails;
	occ_work_t *ow;          /* per occurrence                           */
	size_t occ_lo;           /* occurrences before it are over           */
	uint64_t seq;            /* main-stream events applied               */
	int oom;
	int at_only;             /* GMT_SITES_AT_ONLY                        */
	int all_taken;           /* ... and every instant asked for is taken:
				    the decoding was stopped                 */
};

/* ---- pass 1: the replay, stacks, totals, failures, occurrence peaks ------ */

static int p1_text_stack(void *ctx, uint32_t id, const char *const *frames, size_t n)
{
	return gmt_stacks_text_stack(((gmt_sites_model_t *)ctx)->priv->cat, id, frames, n);
}

static int p1_module(void *ctx, const gmt_module_t *mod)
{
	return gmt_stacks_module(((gmt_sites_model_t *)ctx)->priv->cat, mod);
}

static int p1_stack(void *ctx, uint32_t id, const uint64_t *frames, size_t n)
{
	return gmt_stacks_stack(((gmt_sites_model_t *)ctx)->priv->cat, id, frames, n);
}

static dev_work_t *occ_dev(occ_work_t *o, int ordinal)
{
	for (size_t i = 0; i < o->n_devs; i++)
		if (o->devs[i].d->ordinal == ordinal)
			return &o->devs[i];
	if (o->n_devs == o->cap_devs) {
		size_t c = o->cap_devs ? o->cap_devs * 2 : 4;
		dev_work_t *nd = realloc(o->devs, c * sizeof(*nd));
		if (!nd)
			return NULL;
		o->devs = nd;
		o->cap_devs = c;
	}
	dev_work_t *w = &o->devs[o->n_devs];
	memset(w, 0, sizeof(*w));
	if (!(w->d = calloc(1, sizeof(*w->d))))
		return NULL;
	w->d->ordinal = ordinal;
	o->n_devs++;
	return w;
}

/* --phase, around main-stream event e: before it (after = 0), an
 * occurrence whose window [begin, end] it is the first to enter starts
 * with each device's bytes then (held since before the begin); after it,
 * each open occurrence's device maxima are raised. A maximum is the first
 * moment the value was reached, named by the number of main-stream events
 * applied then (p->seq), as the live set engine counts them. */
static int occ_update(gmt_sites_model_t *m, const gmt_devent_t *e, int after)
{
	gmt_sites_model_priv_t *p = m->priv;
	const gmt_summary_t *s = gmt_replay_summary(p->rp);
	while (p->occ_lo < m->n_occs && m->occs[p->occ_lo].end_ts < e->ts)
		p->occ_lo++;
	for (size_t i = p->occ_lo; i < m->n_occs && m->occs[i].begin_ts <= e->ts; i++) {
		gmt_sites_occ_t *o = &m->occs[i];
		occ_work_t *w = &p->ow[i];
		if (o->end_ts < e->ts || (!after && w->started))
			continue;
		w->started = 1;
		for (size_t k = 0; k < s->n_dev; k++) {
			const gmt_dev_summary_t *ds = s->dev[k];
			if (!ds || ds->ordinal < 0 || !ds->live.total)
				continue;
			dev_work_t *d = occ_dev(w, ds->ordinal);
			if (!d)
				return -ENOMEM;
			if (ds->live.total > d->d->peak) {
				d->d->peak = ds->live.total;
				d->d->peak_ts = after ? e->ts : o->begin_ts;
				d->peak_seq = p->seq;
			}
		}
	}
	return 0;
}

static int p1_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	gmt_sites_model_t *m = ctx;
	gmt_sites_model_priv_t *p = m->priv;
	if (!gmt_liveset_counts(flags))
		return p->inner.events(p->inner.ctx, ev, n, flags);
	if (p->at_only) {
		/* the instants asked for only: read no further than the last */
		int rc = gmt_liveset_events(p->ls, ev, n, flags);
		if (rc)
			return rc;
		for (size_t i = 0; i < p->o->n_at; i++)
			if (!p->asked[i].taken)
				return 0;
		p->all_taken = 1;
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const gmt_devent_t *e = &ev[i];
		unsigned kind = GMT_AUX_KIND(e->aux);
		/* graph memory nodes (captured) hold no device memory */
		if ((e->type == GMT_EV_ALLOC && kind != GMT_KIND_HOST && kind != GMT_KIND_IMPORTED &&
		     !(GMT_AUX_FLAGS(e->aux) & GMT_FLAG_CAPTURED)) ||
		    (e->type == GMT_EV_VMM_CREATE && kind != GMT_KIND_IMPORTED && kind != GMT_KIND_MULTICAST)) {
			int existed;
			uint64_t key = (uint64_t)(uint16_t)(e->device + 1) << 32 | e->stack;
			gmt_u64map_slot_t *s = p->last;
			if (!s || key != p->last_key) {
				if (!(s = gmt_u64map_put(&p->totals, key, &existed)))
					return 1;
				if (!existed)
					s->b = (uint64_t)GMT_AUX_OWNER(e->aux) << 56;
				p->last = s;
				p->last_key = key;
			}
			s->a += e->size;
			s->b++;
		} else if (e->type == GMT_EV_ALLOC_FAIL && kind != GMT_KIND_HOST && kind != GMT_KIND_IMPORTED) {
			m->fails_total++;
			if (m->n_fails >= MAX_FAILS_LISTED)
				continue;
			if (m->n_fails == p->cap_fails) {
				size_t c = p->cap_fails ? p->cap_fails * 2 : 16;
				gmt_sites_fail_t *nf = realloc(m->fails, c * sizeof(*nf));
				if (!nf)
					return 1;
				m->fails = nf;
				p->cap_fails = c;
			}
			gmt_sites_fail_t *f = &m->fails[m->n_fails++];
			memset(f, 0, sizeof(*f));
			f->ts = e->ts;
			f->size = e->size;
			f->device = e->device;
			f->owner = GMT_AUX_OWNER(e->aux);
			f->result = GMT_AUX_RESULT(e->aux);
			f->kind_key = gmt_kind_name(kind);
			f->api_key = gmt_api_name(GMT_AUX_API(e->aux));
			f->stack = e->stack;
		}
	}
	if (m->n_occs) {
		for (size_t i = 0; i < n; i++) {
			if (occ_update(m, &ev[i], 0))
				return 1;
			int rc = gmt_liveset_events(p->ls, &ev[i], 1, flags);
			if (rc)
				return rc;
			flags &= ~(unsigned)GMT_EVENTS_IDS_RESET;   /* the record's first event's */
			p->seq++;
			if (occ_update(m, &ev[i], 1))
				return 1;
		}
		return 0;
	}
	return gmt_liveset_events(p->ls, ev, n, flags);
}

/* The replay's other callbacks, behind ours. */
static int p1_header(void *ctx, const gmt_header_t *h)
{
	gmt_sites_model_priv_t *p = ((gmt_sites_model_t *)ctx)->priv;
	return p->inner.header ? p->inner.header(p->inner.ctx, h) : 0;
}

static int p1_device(void *ctx, const gmt_device_rec_t *d)
{
	gmt_sites_model_priv_t *p = ((gmt_sites_model_t *)ctx)->priv;
	return p->inner.device ? p->inner.device(p->inner.ctx, d) : 0;
}

static int p1_drops(void *ctx, const gmt_drops_t *d)
{
	gmt_sites_model_priv_t *p = ((gmt_sites_model_t *)ctx)->priv;
	return p->inner.drops ? p->inner.drops(p->inner.ctx, d) : 0;
}

static int p1_end(void *ctx, const gmt_end_t *e)
{
	gmt_sites_model_priv_t *p = ((gmt_sites_model_t *)ctx)->priv;
	return p->inner.end ? p->inner.end(p->inner.ctx, e) : 0;
}

static int cmp_occ(const void *a, const void *b)
{
	const gmt_sites_occ_t *x = a, *y = b;
	if (x->begin_ts != y->begin_ts)
		return x->begin_ts < y->begin_ts ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* --phase: the occurrences of the phase named o->phase, chosen and paired
 * by the phase engine with the selection. Returns 0 or -ENOMEM. */
static int load_phase(gmt_sites_model_t *m)
{
	const gmt_sites_model_opts_t *o = m->priv->o;
	gmt_phase_opts_t po = { .max_listed = MAX_PHASE_OCC, .top_n = GMT_PHASES_DEFAULT_TOP,
				.domains = o->domains, .n_domains = o->n_domains,
				.patterns = o->patterns, .n_patterns = o->n_patterns,
				.all_depths = o->all_depths,
				/* only that phase is folded: memory follows
				 * the open occurrences, not the names */
				.open_only = 1, .fold_only = o->phase };
	gmt_phases_t *ph = NULL;
	gmt_decode_result_t res;
	gmt_phases_run(m->file, &po, NULL, &ph, &res);
	if (!ph)
		return -ENOMEM;
	int rc = res.status == GMT_DECODE_STOPPED ? -ENOMEM : 0;
	size_t nn = 0, n_first = 0;
	const gmt_phase_name_t *names = gmt_phases_names(ph, &nn);
	const uint32_t *first;
	gmt_strbuf_t hint = { 0 };
	m->phase_names = gmt_phases_first_names(ph, &first, &n_first);
	for (size_t i = 0; i < n_first; i++) {
		const char *nm = gmt_phases_string(ph, first[i]);
		if (nm) {
			if (hint.len)
				gmt_strbuf_put(&hint, ", ", 2);
			gmt_strbuf_put(&hint, "\"", 1);
			for (size_t c = 0; nm[c] && c < 40; c++)
				gmt_strbuf_put(&hint, (unsigned char)nm[c] < 0x20 ? "?" : &nm[c], 1);
			gmt_strbuf_put(&hint, "\"", 1);
		}
	}
	for (size_t i = 0; i < nn && !rc; i++) {
		const char *nm = gmt_phases_string(ph, names[i].name_id);
		if (!nm || strcmp(nm, o->phase))
			continue;
		m->occ_total += names[i].occurrences;
		gmt_sites_occ_t *no = realloc(m->occs, (m->n_occs + names[i].n_listed + 1) * sizeof(*no));
		if (!no) {
			rc = -ENOMEM;
			break;
		}
		m->occs = no;
		for (size_t k = 0; k < names[i].n_listed; k++) {
			const gmt_occ_t *oc = names[i].listed[k];
			if (!oc)
				continue;
			m->occs[m->n_occs++] = (gmt_sites_occ_t){ .k = oc->k, .begin_ts = oc->begin_ts,
								  .end_ts = oc->end_ts, .ended = oc->ended };
		}
	}
	if (m->n_occs)
		qsort(m->occs, m->n_occs, sizeof(*m->occs), cmp_occ);
	if (hint.oom && !rc)
		rc = -ENOMEM;
	m->phase_names_hint = hint.b;
	gmt_phases_free(ph);
	return rc;
}

/* ---- stack views ---------------------------------------------------------- */

/* ---- folded lines ---------------------------------------------------------- */

/* A frame's name in folded form: ';' separates frames and the last space
 * separates the count, so ';' becomes ':' and a name never ends the line. */
static void fold_name(gmt_strbuf_t *f, const char *name)
{
	for (const char *q = name; *q; q++) {
		char c = *q == ';' ? ':' : (*q == '\n' || *q == '\r') ? ' ' : *q;
		gmt_strbuf_put(f, &c, 1);
	}
}

/* One folded line: root (NULL: none), "device N", then the stack's frames
 * outermost first; "[no stack]" without one. */
static int fold_line(gmt_sites_model_priv_t *p, const char *root, int ordinal, uint32_t stack, char **line)
{
	const gmt_stack_view_t *v = gmt_stacks_view(p->cat, stack, 1);
	if (!v)
		return -ENOMEM;
	gmt_strbuf_t f = { 0 };
	char head[32];
	if (root) {
		fold_name(&f, root);
		gmt_strbuf_put(&f, ";", 1);
	}
	snprintf(head, sizeof(head), "device %d", ordinal);
	gmt_strbuf_put(&f, head, strlen(head));
	if (!v->recorded)
		gmt_strbuf_put(&f, ";[no stack]", 11);
	for (size_t q = v->n; q-- > 0;) {
		gmt_strbuf_put(&f, ";", 1);
		fold_name(&f, v->frames[q].name);
	}
	if (f.oom || !f.b) {
		free(f.b);
		return -ENOMEM;
	}
	*line = f.b;
	return 0;
}

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const gmt_folded_t *)a)->text, ((const gmt_folded_t *)b)->text);
}

/* Appends the lines of one device's sites: equal lines summed, sorted. */
static int fold_sites(gmt_sites_model_t *m, const char *root, int ordinal, const gmt_site_list_t *l)
{
	gmt_folded_t *lines = calloc(l->n ? l->n : 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < l->n && !rc; i++) {
		rc = fold_line(m->priv, root, ordinal, l->sites[i].stack, &lines[i].text);
		lines[i].bytes = l->sites[i].bytes;
	}
	gmt_folded_t *nf = rc ? NULL : realloc(m->folded, (m->n_folded + l->n + 1) * sizeof(*nf));
	if (!rc && !nf)
		rc = -ENOMEM;
	if (!rc && l->n) {
		m->folded = nf;
		qsort(lines, l->n, sizeof(*lines), cmp_folded);
		for (size_t i = 0; i < l->n;) {
			size_t j = i;
			uint64_t sum = 0;
			while (j < l->n && !strcmp(lines[j].text, lines[i].text))
				sum += lines[j++].bytes;
			m->folded[m->n_folded++] = (gmt_folded_t){ .text = lines[i].text, .bytes = sum };
			lines[i].text = NULL;
			i = j;
		}
	} else if (nf) {
		m->folded = nf;
	}
	for (size_t i = 0; i < l->n; i++)
		free(lines[i].text);
	free(lines);
	return rc;
}

/* Whole run: rooted at "device N"; --phase: at "NAME #K;device N". */
static int fold_all(gmt_sites_model_t *m)
{
	int rc = 0;
	if (m->framework && !m->phase) {
		for (size_t k = 0; k < m->n_fwdevs && !rc; k++)
			rc = fold_sites(m, NULL, m->fwdevs[k].ordinal, &m->fwdevs[k].live);
		return rc;
	}
	if (!m->phase) {
		for (size_t k = 0; k < m->n_devs && !rc; k++)
			rc = fold_sites(m, NULL, m->devs[k].ordinal, &m->devs[k].live);
		return rc;
	}
	size_t len = strlen(m->phase) + 32;
	char *root = malloc(len);
	if (!root)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_occs && !rc; i++) {
		gmt_sites_occ_t *o = &m->occs[i];
		snprintf(root, len, "%s #%" PRIu64, m->phase, o->k);
		gmt_sites_dev_t *ds = m->framework ? o->fwdevs : o->devs;
		size_t nd = m->framework ? o->n_fwdevs : o->n_devs;
		for (size_t k = 0; k < nd && !rc; k++)
			rc = fold_sites(m, root, ds[k].ordinal, &ds[k].live);
	}
	free(root);
	return rc;
}

/* ---- the build ----------------------------------------------------------------- */

static int cmp_dev(const void *a, const void *b)
{
	const dev_work_t *x = a, *y = b;
	return x->d->ordinal - y->d->ordinal;
}

/* Pass 1 and the devices with a peak; the sites allocated most. */
static int pass1(gmt_sites_model_t *m)
{
	gmt_sites_model_priv_t *p = m->priv;
	if (m->phase && load_phase(m))
		return -ENOMEM;
	if (m->n_occs && !(p->ow = calloc(m->n_occs, sizeof(*p->ow))))
		return -ENOMEM;
	p->rp = gmt_replay_new(m->file);
	if (!p->rp)
		return -ENOMEM;
	/* the instants asked for by event number, taken on the way */
	size_t n_at = p->o->n_at;
	p->asked = calloc(n_at ? n_at : 1, sizeof(*p->asked));
	gmt_instant_t **at = calloc(n_at ? n_at : 1, sizeof(*at));
	if (!p->asked || !at) {
		free(at);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_at; i++) {
		p->asked[i] = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = p->o->at[i].ordinal,
					       .seq = p->o->at[i].seq };
		at[i] = &p->asked[i];
	}
	p->at_only = (p->o->what & GMT_SITES_AT_ONLY) && n_at && !m->phase;
	p->ls = gmt_liveset_new(p->rp, at, n_at, !p->at_only);
	free(at);
	if (!p->ls)
		return -ENOMEM;
	gmt_visitor_t v;
	gmt_replay_visitor(p->rp, &p->inner);
	v = p->inner;
	v.ctx = m;
	v.header = p1_header;
	v.device = p1_device;
	v.drops = p1_drops;
	v.end = p1_end;
	v.module = p1_module;
	v.stack = p1_stack;
	v.text_stack = p1_text_stack;
	v.events = p1_events;
	gmt_decode_file(m->file, &v, &m->res);
	if (m->res.status == GMT_DECODE_STOPPED && !p->all_taken)
		return -ENOMEM;
	const gmt_summary_t *s = gmt_replay_finish(p->rp, &m->res);
	m->events = s->events;
	m->gaps = s->gaps;
	gmt_instant_t *peaks = NULL;
	size_t n_peaks = 0;
	int rc = gmt_liveset_finish(p->ls, &peaks, &n_peaks);
	gmt_liveset_free(p->ls);
	p->ls = NULL;
	if (rc)
		return -ENOMEM;

	m->devs = calloc(s->n_dev ? s->n_dev : 1, sizeof(*m->devs));
	if (!m->devs)
		rc = -ENOMEM;
	/* the devices with a peak, and the live set at it as the live set
	 * engine found it (by ordinal); a device it left out (more rises
	 * than a block's generation counts) is taken by its peak's bytes in
	 * a second pass */
	size_t q = 0, n_again = 0;
	gmt_instant_t *again = calloc(s->n_dev ? s->n_dev : 1, sizeof(*again));
	size_t *again_dev = calloc(s->n_dev ? s->n_dev : 1, sizeof(*again_dev));
	if (!again || !again_dev)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && !p->at_only && i < s->n_dev; i++) {
		const gmt_dev_summary_t *d = s->dev[i];
		if (!d || d->ordinal < 0 || !d->peak.total)
			continue;
		gmt_sites_dev_t *x = &m->devs[m->n_devs++];
		x->ordinal = d->ordinal;
		x->peak = d->peak.total;
		x->peak_ts = d->peak_ts;
		while (q < n_peaks && peaks[q].ordinal < d->ordinal)
			q++;
		if (q < n_peaks && peaks[q].ordinal == d->ordinal && peaks[q].bytes == d->peak.total &&
		    peaks[q].at_ts == d->peak_ts) {
			rc = gmt_site_list_of(&x->live, peaks[q].groups, peaks[q].n_groups);
			q++;
		} else {
			again[n_again] = (gmt_instant_t){ .kind = GMT_AT_PEAK, .ordinal = d->ordinal,
							  .bytes = d->peak.total };
			again_dev[n_again++] = m->n_devs - 1;
		}
	}
	for (size_t i = 0; i < n_peaks; i++)
		gmt_instant_clear(&peaks[i]);
	free(peaks);
	if (!rc && n_again) {
		gmt_instant_t **ap = calloc(n_again, sizeof(*ap));
		gmt_decode_result_t res2;
		rc = ap ? 0 : -ENOMEM;
		for (size_t i = 0; ap && i < n_again; i++)
			ap[i] = &again[i];
		if (!rc)
			rc = gmt_liveset_run(m->file, ap, n_again, &res2);
		for (size_t i = 0; !rc && i < n_again; i++)
			rc = gmt_site_list_of(&m->devs[again_dev[i]].live, again[i].groups, again[i].n_groups);
		free(ap);
	}
	for (size_t i = 0; again && i < n_again; i++)
		gmt_instant_clear(&again[i]);
	free(again);
	free(again_dev);
	for (size_t i = 0; !rc && i < m->n_devs; i++)
		rc = gmt_stacks_group(p->cat, m->devs[i].live.sites, &m->devs[i].live.n);
	if (rc)
		return rc;
	/* the instants asked for */
	m->ats = calloc(n_at ? n_at : 1, sizeof(*m->ats));
	if (!m->ats)
		return -ENOMEM;
	for (size_t i = 0; i < n_at; i++) {
		gmt_sites_dev_t *d = &m->ats[m->n_ats++];
		gmt_instant_t *a = &p->asked[i];
		d->ordinal = a->ordinal;
		d->peak_ts = a->at_ts;
		for (size_t g = 0; g < a->n_groups; g++)
			d->peak += a->groups[g].bytes;
		if (gmt_site_list_of(&d->live, a->groups, a->n_groups) ||
		    gmt_stacks_group(p->cat, d->live.sites, &d->live.n))
			return -ENOMEM;
	}
	/* sites that allocated most, per device */
	for (size_t i = 0; i < p->totals.cap; i++) {
		gmt_u64map_slot_t *t = &p->totals.s[i];
		if (t->key == UINT64_MAX)
			continue;
		int dev = (int)(t->key >> 32) - 1;
		for (size_t k = 0; k < m->n_devs; k++) {
			gmt_sites_dev_t *d = &m->devs[k];
			if (d->ordinal != dev)
				continue;
			gmt_site_t *ns = realloc(d->top.sites, (d->top.n + 1) * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			d->top.sites = ns;
			d->top.sites[d->top.n++] = (gmt_site_t){ .stack = (uint32_t)t->key, .bytes = t->a,
								  .count = t->b & ((1ull << 56) - 1),
								  .owner = (unsigned)(t->b >> 56) };
		}
	}
	for (size_t k = 0; k < m->n_devs; k++) {
		gmt_site_list_t *l = &m->devs[k].top;
		if (gmt_stacks_group(p->cat, l->sites, &l->n))
			return -ENOMEM;
		while (l->n > p->o->top)
			free((void *)l->sites[--l->n].ids);
	}
	gmt_u64map_clear(&p->totals);
	return 0;
}

/* Pass 2 (--phase): the live set at each occurrence's device peaks, named
 * by event number in pass 1. */
static int pass2(gmt_sites_model_t *m)
{
	gmt_sites_model_priv_t *p = m->priv;
	size_t n = 0;
	for (size_t i = 0; i < m->n_occs; i++) {
		if (p->ow[i].n_devs)
			qsort(p->ow[i].devs, p->ow[i].n_devs, sizeof(dev_work_t), cmp_dev);
		n += p->ow[i].n_devs;
	}
	if (!n)
		return 0;
	gmt_instant_t **at = calloc(n, sizeof(*at));
	int rc = !at ? -ENOMEM : 0;
	size_t k = 0;
	for (size_t i = 0; !rc && i < m->n_occs; i++)
		for (size_t q = 0; q < p->ow[i].n_devs; q++) {
			dev_work_t *w = &p->ow[i].devs[q];
			w->at = (gmt_instant_t){ .kind = GMT_AT_EVENT, .ordinal = w->d->ordinal,
						 .seq = w->peak_seq };
			at[k++] = &w->at;
		}
	gmt_decode_result_t res;
	if (!rc)
		rc = gmt_liveset_run(m->file, at, n, &res);
	/* the occurrences' devices, moved into the model */
	for (size_t i = 0; !rc && i < m->n_occs; i++) {
		occ_work_t *w = &p->ow[i];
		gmt_sites_occ_t *o = &m->occs[i];
		o->devs = calloc(w->n_devs ? w->n_devs : 1, sizeof(*o->devs));
		if (!o->devs) {
			rc = -ENOMEM;
			break;
		}
		for (size_t q = 0; q < w->n_devs && !rc; q++) {
			gmt_sites_dev_t *d = &o->devs[o->n_devs++];
			*d = *w->devs[q].d;
			rc = gmt_site_list_of(&d->live, w->devs[q].at.groups, w->devs[q].at.n_groups);
			if (!rc)
				rc = gmt_stacks_group(p->cat, d->live.sites, &d->live.n);
		}
	}
	free(at);
	return rc;
}

/* Pass 3 (--framework): the framework's peaks, whole run and occurrences. */
static int pass3(gmt_sites_model_t *m)
{
	gmt_sites_model_priv_t *p = m->priv;
	gmt_fw_window_t *win = calloc(m->n_occs ? m->n_occs : 1, sizeof(*win));
	if (!win)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_occs; i++)
		win[i] = (gmt_fw_window_t){ .begin_ts = m->occs[i].begin_ts, .end_ts = m->occs[i].end_ts };
	gmt_fw_peak_t *peaks = NULL;
	size_t n_peaks = 0;
	gmt_decode_result_t res;
	int rc = gmt_fwpeaks_run(m->file, &peaks, &n_peaks, win, m->n_occs, &res);
	/* into the model: devices by ordinal, their sites merged */
	m->fwdevs = calloc(n_peaks ? n_peaks : 1, sizeof(*m->fwdevs));
	if (!m->fwdevs)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < n_peaks; i++) {
		gmt_sites_dev_t *d = &m->fwdevs[m->n_fwdevs++];
		d->ordinal = peaks[i].ordinal;
		d->peak = peaks[i].peak;
		d->peak_ts = peaks[i].peak_ts;
		rc = gmt_site_list_of(&d->live, peaks[i].groups, peaks[i].n_groups);
		if (!rc)
			rc = gmt_stacks_group(p->cat, d->live.sites, &d->live.n);
	}
	for (size_t i = 0; !rc && i < m->n_occs; i++) {
		gmt_sites_occ_t *o = &m->occs[i];
		o->fwdevs = calloc(win[i].n_peaks ? win[i].n_peaks : 1, sizeof(*o->fwdevs));
		if (!o->fwdevs) {
			rc = -ENOMEM;
			break;
		}
		for (size_t q = 0; q < win[i].n_peaks && !rc; q++) {
			gmt_sites_dev_t *d = &o->fwdevs[o->n_fwdevs++];
			d->ordinal = win[i].peaks[q].ordinal;
			d->peak = win[i].peaks[q].peak;
			d->peak_ts = win[i].peaks[q].peak_ts;
			rc = gmt_site_list_of(&d->live, win[i].peaks[q].groups, win[i].peaks[q].n_groups);
			if (!rc)
				rc = gmt_stacks_group(p->cat, d->live.sites, &d->live.n);
		}
	}
	gmt_fw_peaks_free(peaks, n_peaks);
	for (size_t i = 0; i < m->n_occs; i++)
		gmt_fw_peaks_free(win[i].peaks, win[i].n_peaks);
	free(win);
	return rc;
}

/* What the report lists, and its stacks' views. */
static int listing(gmt_sites_model_t *m)
{
	gmt_sites_model_priv_t *p = m->priv;
	size_t top = p->o->top;
	int rc = 0;
	for (size_t k = 0; k < m->n_fwdevs && !rc; k++)
		rc = gmt_stacks_list(p->cat, &m->fwdevs[k].live, m->fwdevs[k].peak, top, 1,
				     (p->o->what & GMT_SITES_REPORT) != 0);
	for (size_t k = 0; k < m->n_ats && !rc; k++)
		rc = gmt_stacks_list(p->cat, &m->ats[k].live, m->ats[k].peak, top, 0,
				     (p->o->what & GMT_SITES_REPORT) != 0);
	for (size_t k = 0; k < m->n_devs && !rc; k++) {
		rc = gmt_stacks_list(p->cat, &m->devs[k].live, m->devs[k].peak, top, 0,
				     (p->o->what & GMT_SITES_REPORT) != 0);
		if (!rc)
			rc = gmt_stacks_list(p->cat, &m->devs[k].top, 0, m->devs[k].top.n, 0,
				     (p->o->what & GMT_SITES_REPORT) != 0);
	}
	for (size_t i = 0; i < m->n_occs && !rc; i++) {
		gmt_sites_occ_t *o = &m->occs[i];
		for (size_t k = 0; k < o->n_fwdevs && !rc; k++)
			rc = gmt_stacks_list(p->cat, &o->fwdevs[k].live, o->fwdevs[k].peak, top, 1,
				     (p->o->what & GMT_SITES_REPORT) != 0);
		for (size_t k = 0; k < o->n_devs && !rc; k++)
			rc = gmt_stacks_list(p->cat, &o->devs[k].live, o->devs[k].peak, top, 0,
				     (p->o->what & GMT_SITES_REPORT) != 0);
	}
	m->occ_more = m->occ_total > m->n_occs;
	m->fails_more = m->fails_total > m->n_fails;
	for (size_t i = 0; i < m->n_fails && !rc; i++) {
		gmt_sites_fail_t *f = &m->fails[i];
		f->result_name = gmt_curesult_name(f->result);
		f->owner_key = gmt_owner_name(f->owner);
		if ((p->o->what & GMT_SITES_REPORT) && !(f->st = gmt_stacks_view(p->cat, f->stack, 0)))
			rc = -ENOMEM;
	}
	return rc;
}

static const char *status_of(const gmt_decode_result_t *res)
{
	switch (res->status) {
	case GMT_DECODE_OK: return res->ended_cleanly ? "clean" : "cut";
	case GMT_DECODE_DAMAGED: return "damaged";
	case GMT_DECODE_REFUSED: return "refused";
	case GMT_DECODE_IO: return "unreadable";
	default: return "stopped";
	}
}

gmt_sites_model_t *gmt_sites_model_build(const char *file, const gmt_sites_model_opts_t *o)
{
	gmt_sites_model_t *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->priv = calloc(1, sizeof(*m->priv));
	if (!m->priv) {
		free(m);
		return NULL;
	}
	gmt_sites_model_priv_t *p = m->priv;
	p->o = o;
	m->file = file;
	m->framework = o->framework;
	m->phase = o->phase;
	m->symbols = o->symbols;
	p->cat = gmt_stacks_new(o->debug_dirs, o->n_debug_dirs, o->symbols);
	int rc = p->cat ? pass1(m) : -ENOMEM;
	if (!rc)
		rc = pass2(m);
	if (!rc && o->framework)
		rc = pass3(m);
	if (!rc)
		rc = listing(m);
	if (!rc && (o->what & GMT_SITES_FOLDED))
		rc = fold_all(m);
	if (!rc)
		rc = when_all(m);
	m->status_key = status_of(&m->res);
	if (!rc)
		gmt_symtab_stats(gmt_stacks_symtab(p->cat), &m->sym_addresses, &m->sym_files, &m->sym_seconds);
	/* what only the build needed */
	gmt_liveset_free(p->ls);
	p->ls = NULL;
	gmt_replay_free(p->rp);
	p->rp = NULL;
	for (size_t i = 0; p->asked && i < o->n_at; i++)
		gmt_instant_clear(&p->asked[i]);
	free(p->asked);
	p->asked = NULL;
	for (size_t i = 0; p->ow && i < m->n_occs; i++) {
		for (size_t q = 0; q < p->ow[i].n_devs; q++) {
			gmt_instant_clear(&p->ow[i].devs[q].at);
			free(p->ow[i].devs[q].d);
		}
		free(p->ow[i].devs);
	}
	free(p->ow);
	p->ow = NULL;
	gmt_u64map_clear(&p->totals);
	if (rc) {
		gmt_sites_model_free(m);
		return NULL;
	}
	return m;
}

static void devs_free(gmt_sites_dev_t *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++) {
		gmt_phase_at_clear(&d[i].when.phase, 1);
		gmt_site_list_free(&d[i].live);
		gmt_site_list_free(&d[i].top);
	}
	free(d);
}

/* The time of every whole-run peak and failure in seconds and UTC, and,
 * when the trace has ranges, its phase occurrence (one more pass). */
static void when_of(const gmt_summary_t *s, uint64_t ts, gmt_sites_when_t *w)
{
	w->since_s = (double)(int64_t)(ts - s->first_ts) / 1e9;
	w->has_utc = s->has_header;
	w->utc_ns = ts + (s->clock_realtime_ns - s->clock_monotonic_ns);
}

static int when_all(gmt_sites_model_t *m)
{
	gmt_sites_model_priv_t *p = m->priv;
	const gmt_summary_t *s = gmt_replay_summary(p->rp);
	size_t n = m->n_devs + m->n_fwdevs + m->n_fails, i = 0;
	for (size_t k = 0; k < m->n_devs; k++)
		when_of(s, m->devs[k].peak_ts, &m->devs[k].when);
	for (size_t k = 0; k < m->n_fwdevs; k++)
		when_of(s, m->fwdevs[k].peak_ts, &m->fwdevs[k].when);
	for (size_t k = 0; k < m->n_fails; k++)
		when_of(s, m->fails[k].ts, &m->fails[k].when);
	for (size_t q = 0; q < m->n_occs; q++) {
		for (size_t k = 0; k < m->occs[q].n_devs; k++)
			when_of(s, m->occs[q].devs[k].peak_ts, &m->occs[q].devs[k].when);
		for (size_t k = 0; k < m->occs[q].n_fwdevs; k++)
			when_of(s, m->occs[q].fwdevs[k].peak_ts, &m->occs[q].fwdevs[k].when);
	}
	if (!n || !s->by_type[GMT_EV_RANGE_BEGIN] ||
	    (m->res.status != GMT_DECODE_OK && m->res.status != GMT_DECODE_DAMAGED))
		return 0;
	uint64_t *ts = calloc(n, sizeof(*ts));
	gmt_phase_at_t *at = calloc(n, sizeof(*at));
	if (!ts || !at) {
		free(ts);
		free(at);
		return -ENOMEM;
	}
	for (size_t k = 0; k < m->n_devs; k++)
		ts[i++] = m->devs[k].peak_ts;
	for (size_t k = 0; k < m->n_fwdevs; k++)
		ts[i++] = m->fwdevs[k].peak_ts;
	for (size_t k = 0; k < m->n_fails; k++)
		ts[i++] = m->fails[k].ts;
	const gmt_sites_model_opts_t *o = p->o;
	gmt_phase_opts_t po = { .max_listed = GMT_PHASES_DEFAULT_LISTED, .top_n = GMT_PHASES_DEFAULT_TOP,
				.domains = o->domains, .n_domains = o->n_domains,
				.patterns = o->patterns, .n_patterns = o->n_patterns,
				.all_depths = o->all_depths, .open_only = 1 };
	gmt_decode_result_t res;
	int rc = gmt_phase_at_run(m->file, &po, ts, n, at, &res);
	free(ts);
	if (rc == -ENOMEM) {
		free(at);
		return rc;
	}
	m->phases_looked_up = 1;
	i = 0;
	gmt_sites_when_t *w;
	for (size_t k = 0; k < n; k++) {
		if (k < m->n_devs)
			w = &m->devs[k].when;
		else if (k < m->n_devs + m->n_fwdevs)
			w = &m->fwdevs[k - m->n_devs].when;
		else
			w = &m->fails[k - m->n_devs - m->n_fwdevs].when;
		w->phase = at[k];
		w->phase_begin_s = (double)(int64_t)(at[k].begin_ts - s->first_ts) / 1e9;
	}
	free(at);
	return 0;
}

void gmt_sites_model_free(gmt_sites_model_t *m)
{
	if (!m)
		return;
	gmt_sites_model_priv_t *p = m->priv;
	devs_free(m->devs, m->n_devs);
	devs_free(m->fwdevs, m->n_fwdevs);
	devs_free(m->ats, m->n_ats);
	for (size_t i = 0; i < m->n_occs; i++) {
		devs_free(m->occs[i].devs, m->occs[i].n_devs);
		devs_free(m->occs[i].fwdevs, m->occs[i].n_fwdevs);
	}
	free(m->occs);
	free(m->phase_names_hint);
	for (size_t i = 0; i < m->n_fails; i++)
		gmt_phase_at_clear(&m->fails[i].when.phase, 1);
	free(m->fails);
	for (size_t i = 0; i < m->n_folded; i++)
		free(m->folded[i].text);
	free(m->folded);
	if (p) {
		gmt_u64map_clear(&p->totals);
		gmt_liveset_free(p->ls);
		gmt_replay_free(p->rp);
		gmt_stacks_free(p->cat);
		free(p);
	}
	free(m);
}
