/*
 * gmt_sites.c - the sites and flamegraph commands.
 *
 * Two passes over a trace, memory proportional to what is live:
 *  1. The replay engine runs as for `summary` and gives each device's
 *     coinciding peak (the first instant its total reached the maximum);
 *     on the way, STACK and MODULE records are kept, the bytes allocated
 *     per (device, stack) summed, and failed allocations listed.
 *  2. The replay runs again with an observer that keeps every live block
 *     and VMM handle with the stack of the event that made it live. Right
 *     after the event that brings a device's peak to the total found in
 *     pass 1 (the same event, the replay being deterministic), the blocks
 *     of that device are summed by stack: the sites at the peak.
 * Symbolisation (gmt_symbols.c) comes last, only for the stacks reported.
 *
 * --framework adds a third pass over the merged time line (gmt_timeline.h:
 * the framework's history arrives in the side stream): the framework's own
 * blocks, live from FW_ALLOC to FW_FREE_REQUESTED (the "requested" view),
 * summed per (device, stack) as they change. At the first instant of each
 * device's maximum those sums are the sites; they are copied lazily, just
 * before the device's next change (the state at a peak lasts until then),
 * so a run that climbs for long copies only when it turns. With --phase,
 * each occurrence of the phase keeps such peaks of its own: the state after
 * an instant lasts until the next one, so it counts for every occurrence
 * whose window meets that interval (at the later of the instant and the
 * occurrence's begin). Pending copies are listed (fw_pend) and all taken
 * before their device's next change. Their stacks are usually TEXT_STACK
 * records (Python frames from the companion), shown as their text.
 */
#include "gmt_sites.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_phases.h"
#include "gmt_replay.h"
#include "gmt_symbols.h"
#include "gmt_timeline.h"

#ifndef GMT_VERSION
#define GMT_VERSION "0.0.0"
#endif

enum { EXIT_OK = 0, EXIT_DAMAGED = 1, EXIT_USAGE = 2 };

#define DEFAULT_TOP 20
#define MAX_FAILS_LISTED 1000
#define MAX_PHASE_OCC 1000

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* ---- data --------------------------------------------------------------- */

typedef struct stack_rec {
	uint64_t *frames;
	size_t n;
} stack_rec_t;

typedef struct site {
	uint32_t stack;          /* the group's smallest stack id             */
	unsigned owner;          /* format owner (recorded)                   */
	uint64_t bytes, count;
	uint32_t *ids;           /* after grouping: every stack id merged,
				    ascending (NULL: just stack)              */
	size_t n_ids;
} site_t;

typedef struct text_stack_rec {
	char **frames;
	size_t n;
} text_stack_rec_t;

/* --framework: one device's framework blocks. */
typedef struct fwdev_rec {
	int ordinal;
	uint64_t live, peak, peak_ts;
	int pending;             /* live is a new peak not copied yet */
	site_t *sites; size_t n_sites;
} fwdev_rec_t;

typedef struct fail_rec {
	uint64_t ts, size;
	int device;
	uint32_t stack;
	unsigned owner, result, kind, api;
} fail_rec_t;

typedef struct dev_rec {
	int ordinal;
	uint64_t peak, peak_ts;
	uint64_t peak_seq;       /* phases: the peak is right after main-stream
				    event number peak_seq (1-based)           */
	int snapped;
	site_t *live; size_t n_live;
	site_t *top; size_t n_top;
} dev_rec_t;

/* One occurrence of the phase asked for (--phase), its window and the
 * devices that held bytes in it. */
typedef struct occ_rec {
	uint64_t k, begin_ts, end_ts;
	int ended, started;
	dev_rec_t *devs; size_t n_devs, cap_devs;
	fwdev_rec_t *fwdevs; size_t n_fwdevs;   /* --framework */
} occ_rec_t;

/* A framework record whose sites are still to be copied: -1 for the whole
 * run, else an index in occs; and the device. */
typedef struct fw_pend {
	long occ;
	int ordinal;
} fw_pend_t;

typedef struct sites_run {
	const char *file;
	gmt_symtab_t *sym;
	gmt_u64map_t stack_ix;   /* stack id -> a: index in stacks           */
	stack_rec_t *stacks; size_t n_stacks, cap_stacks;
	gmt_u64map_t totals;     /* (dev + 1) << 32 | stack -> a bytes, b count | owner << 56 */
	fail_rec_t *fails; size_t n_fails, cap_fails;
	uint64_t fails_total;
	dev_rec_t *devs; size_t n_devs;
	size_t unsnapped;
	/* --phase, chosen by the selection of sel */
	const char *phase;
	const gmt_common_t *sel;
	occ_rec_t *occs; size_t n_occs;
	uint64_t occ_total;      /* occurrences of the name (n_occs: listed) */
	size_t occ_lo;           /* occurrences before it are over            */
	uint64_t seq;            /* main-stream events applied                */
	dev_rec_t **targets; size_t n_targets, next_target;
	/* pass 2 */
	gmt_replay_t *rp;
	gmt_visitor_t inner;
	gmt_u64map_t live_blocks, live_handles;  /* key -> a size, b packed */
	struct { uint64_t addr, b; } recent[16];
	unsigned recent_next;
	int oom;
	gmt_decode_result_t res;
	const gmt_summary_t *sum;
	/* --framework */
	int framework;
	gmt_u64map_t tstack_ix;  /* text stack id -> a: index in tstacks     */
	text_stack_rec_t *tstacks; size_t n_tstacks, cap_tstacks;
	fwdev_rec_t *fwdevs; size_t n_fwdevs;
	gmt_u64map_t fw_blocks;  /* block key -> a size, b stack            */
	gmt_u64map_t fw_agg;     /* (dev + 1) << 32 | stack -> a bytes, b count */
	uint64_t fw_ts;
	int fw_any;
	size_t fw_occ_lo;        /* occurrences before it ended before fw_ts  */
	fw_pend_t *fw_pend; size_t n_fw_pend, cap_fw_pend;
} sites_run_t;

#define PACK(stack, owner, dev) ((uint64_t)(stack) | (uint64_t)((owner) & 0xff) << 32 | \
				 (uint64_t)(uint16_t)((dev) + 1) << 40)
#define P_STACK(b) ((uint32_t)(b))
#define P_OWNER(b) ((unsigned)(((b) >> 32) & 0xff))
#define P_DEV(b)   ((int)(((b) >> 40) & 0xffff) - 1)

/* ---- pass 1 --------------------------------------------------------------- */

static int p1_text_stack(void *ctx, uint32_t id, const char *const *frames, size_t n)
{
	sites_run_t *r = ctx;
	int existed;
	gmt_u64map_slot_t *s = gmt_u64map_put(&r->tstack_ix, id, &existed);
	if (!s)
		return 1;
	if (existed)
		return 0;  /* ids are unique; keep the first */
	if (r->n_tstacks == r->cap_tstacks) {
		size_t c = r->cap_tstacks ? r->cap_tstacks * 2 : 16;
		text_stack_rec_t *ns = realloc(r->tstacks, c * sizeof(*ns));
		if (!ns)
			return 1;
		r->tstacks = ns;
		r->cap_tstacks = c;
	}
	text_stack_rec_t *st = &r->tstacks[r->n_tstacks];
	st->n = 0;
	st->frames = calloc(n ? n : 1, sizeof(char *));
	if (!st->frames)
		return 1;
	s->a = r->n_tstacks++;
	for (size_t i = 0; i < n; i++) {
		if (!(st->frames[i] = strdup(frames[i])))
			return 1;
		st->n++;
	}
	return 0;
}

static int p1_module(void *ctx, const gmt_module_t *m)
{
	sites_run_t *r = ctx;
	return gmt_symtab_module(r->sym, m) ? 1 : 0;
}

static int p1_stack(void *ctx, uint32_t id, const uint64_t *frames, size_t n)
{
	sites_run_t *r = ctx;
	int existed;
	gmt_u64map_slot_t *s = gmt_u64map_put(&r->stack_ix, id, &existed);
	if (!s)
		return 1;
	if (existed)
		return 0;  /* ids are unique; keep the first */
	if (r->n_stacks == r->cap_stacks) {
		size_t c = r->cap_stacks ? r->cap_stacks * 2 : 64;
		stack_rec_t *ns = realloc(r->stacks, c * sizeof(*ns));
		if (!ns)
			return 1;
		r->stacks = ns;
		r->cap_stacks = c;
	}
	stack_rec_t *st = &r->stacks[r->n_stacks];
	st->n = n;
	st->frames = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!st->frames)
		return 1;
	memcpy(st->frames, frames, n * sizeof(uint64_t));
	s->a = r->n_stacks++;
	return 0;
}

static dev_rec_t *occ_dev(occ_rec_t *o, int ordinal)
{
	for (size_t i = 0; i < o->n_devs; i++)
		if (o->devs[i].ordinal == ordinal)
			return &o->devs[i];
	if (o->n_devs == o->cap_devs) {
		size_t c = o->cap_devs ? o->cap_devs * 2 : 4;
		dev_rec_t *nd = realloc(o->devs, c * sizeof(*nd));
		if (!nd)
			return NULL;
		o->devs = nd;
		o->cap_devs = c;
	}
	dev_rec_t *d = &o->devs[o->n_devs++];
	memset(d, 0, sizeof(*d));
	d->ordinal = ordinal;
	return d;
}

/* --phase, pass 1, around main-stream event e: before it (after = 0), an
 * occurrence whose window [begin, end] it is the first to enter starts
 * with each device's bytes then (held since before the begin); after it,
 * each open occurrence's device maxima are raised. A maximum is the first
 * moment the value was reached, named by the number of main-stream events
 * applied then (r->seq), which pass 2 counts the same way. */
static int occ_update(sites_run_t *r, const gmt_devent_t *e, int after)
{
	const gmt_summary_t *s = gmt_replay_summary(r->rp);
	while (r->occ_lo < r->n_occs && r->occs[r->occ_lo].end_ts < e->ts)
		r->occ_lo++;
	for (size_t i = r->occ_lo; i < r->n_occs && r->occs[i].begin_ts <= e->ts; i++) {
		occ_rec_t *o = &r->occs[i];
		if (o->end_ts < e->ts || (!after && o->started))
			continue;
		o->started = 1;
		for (size_t k = 0; k < s->n_dev; k++) {
			const gmt_dev_summary_t *ds = s->dev[k];
			if (!ds || ds->ordinal < 0 || !ds->live.total)
				continue;
			dev_rec_t *d = occ_dev(o, ds->ordinal);
			if (!d)
				return -ENOMEM;
			if (ds->live.total > d->peak) {
				d->peak = ds->live.total;
				d->peak_ts = after ? e->ts : o->begin_ts;
				d->peak_seq = r->seq;
			}
		}
	}
	return 0;
}

static int p1_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	sites_run_t *r = ctx;
	if (!(flags & GMT_EVENTS_SIDE)) {
		for (size_t i = 0; i < n; i++) {
			const gmt_devent_t *e = &ev[i];
			unsigned kind = GMT_AUX_KIND(e->aux);
			/* graph memory nodes (captured) hold no device memory */
			if ((e->type == GMT_EV_ALLOC && kind != GMT_KIND_HOST &&
			     !(GMT_AUX_FLAGS(e->aux) & GMT_FLAG_CAPTURED)) ||
			    e->type == GMT_EV_VMM_CREATE) {
				int existed;
				uint64_t key = (uint64_t)(uint16_t)(e->device + 1) << 32 | e->stack;
				gmt_u64map_slot_t *s = gmt_u64map_put(&r->totals, key, &existed);
				if (!s)
					return 1;
				if (!existed)
					s->b = (uint64_t)GMT_AUX_OWNER(e->aux) << 56;
				s->a += e->size;
				s->b++;
			} else if (e->type == GMT_EV_ALLOC_FAIL && kind != GMT_KIND_HOST) {
				r->fails_total++;
				if (r->n_fails >= MAX_FAILS_LISTED)
					continue;
				if (r->n_fails == r->cap_fails) {
					size_t c = r->cap_fails ? r->cap_fails * 2 : 16;
					fail_rec_t *nf = realloc(r->fails, c * sizeof(*nf));
					if (!nf)
						return 1;
					r->fails = nf;
					r->cap_fails = c;
				}
				fail_rec_t *f = &r->fails[r->n_fails++];
				f->ts = e->ts;
				f->size = e->size;
				f->device = e->device;
				f->stack = e->stack;
				f->owner = GMT_AUX_OWNER(e->aux);
				f->result = GMT_AUX_RESULT(e->aux);
				f->kind = kind;
				f->api = GMT_AUX_API(e->aux);
			}
		}
		if (r->n_occs) {
			for (size_t i = 0; i < n; i++) {
				if (occ_update(r, &ev[i], 0))
					return 1;
				int rc = r->inner.events(r->inner.ctx, &ev[i], 1, flags);
				if (rc)
					return rc;
				r->seq++;
				if (occ_update(r, &ev[i], 1))
					return 1;
			}
			return 0;
		}
	}
	return r->inner.events(r->inner.ctx, ev, n, flags);
}

/* The replay's other callbacks, behind ours. */
static int fw_header(void *ctx, const gmt_header_t *h)
{
	sites_run_t *r = ctx;
	return r->inner.header ? r->inner.header(r->inner.ctx, h) : 0;
}

static int fw_device(void *ctx, const gmt_device_rec_t *d)
{
	sites_run_t *r = ctx;
	return r->inner.device ? r->inner.device(r->inner.ctx, d) : 0;
}

static int fw_drops(void *ctx, const gmt_drops_t *d)
{
	sites_run_t *r = ctx;
	return r->inner.drops ? r->inner.drops(r->inner.ctx, d) : 0;
}

static int fw_end(void *ctx, const gmt_end_t *e)
{
	sites_run_t *r = ctx;
	return r->inner.end ? r->inner.end(r->inner.ctx, e) : 0;
}

/* ---- pass 2 --------------------------------------------------------------- */

static int p2_observe(void *ctx, const gmt_devent_t *cause, const gmt_obs_t *o)
{
	sites_run_t *r = ctx;
	gmt_u64map_t *m;
	if (o->op == GMT_OBS_BLOCK_ADD || o->op == GMT_OBS_BLOCK_DEL)
		m = &r->live_blocks;
	else if (o->op == GMT_OBS_HANDLE_ADD || o->op == GMT_OBS_HANDLE_DEL)
		m = &r->live_handles;
	else
		return 0;
	int existed;
	if (o->op == GMT_OBS_BLOCK_ADD || o->op == GMT_OBS_HANDLE_ADD) {
		gmt_u64map_slot_t *s = gmt_u64map_put(m, o->key, &existed);
		if (!s)
			return -ENOMEM;
		uint32_t stack = cause ? cause->stack : 0;
		if (cause && cause->type == GMT_EV_FREE_FAIL) {
			/* A free undone: the block keeps its allocation's stack. */
			stack = 0;
			for (unsigned i = 0; i < 16; i++)
				if (r->recent[i].addr == o->key && r->recent[i].b)
					stack = P_STACK(r->recent[i].b);
		}
		s->a = o->size;
		s->b = PACK(stack, o->owner, o->dev);
	} else {
		gmt_u64map_slot_t *s = gmt_u64map_find(m, o->key);
		if (s) {
			if (m == &r->live_blocks) {
				r->recent[r->recent_next % 16].addr = o->key;
				r->recent[r->recent_next % 16].b = s->b;
				r->recent_next++;
			}
			gmt_u64map_del(m, s);
		}
	}
	return 0;
}

static int cmp_site(const void *a, const void *b)
{
	const site_t *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Sums the live blocks and handles of device d by stack. */
static int snapshot(sites_run_t *r, dev_rec_t *d)
{
	gmt_u64map_t by;  /* stack -> index */
	memset(&by, 0, sizeof(by));
	size_t cap = 0;
	gmt_u64map_t *maps[2] = { &r->live_blocks, &r->live_handles };
	for (int k = 0; k < 2; k++) {
		gmt_u64map_t *m = maps[k];
		for (size_t i = 0; i < m->cap; i++) {
			gmt_u64map_slot_t *s = &m->s[i];
			if (s->key == UINT64_MAX || P_DEV(s->b) != d->ordinal)
				continue;
			int existed;
			gmt_u64map_slot_t *x = gmt_u64map_put(&by, P_STACK(s->b), &existed);
			if (!x)
				goto oom;
			if (!existed) {
				if (d->n_live == cap) {
					size_t c = cap ? cap * 2 : 16;
					site_t *ns = realloc(d->live, c * sizeof(*ns));
					if (!ns)
						goto oom;
					d->live = ns;
					cap = c;
				}
				x->a = d->n_live;
				d->live[d->n_live++] = (site_t){ .stack = P_STACK(s->b), .owner = P_OWNER(s->b) };
			}
			d->live[x->a].bytes += s->a;
			d->live[x->a].count++;
		}
	}
	gmt_u64map_clear(&by);
	if (d->n_live)
		qsort(d->live, d->n_live, sizeof(site_t), cmp_site);
	d->snapped = 1;
	return 0;
oom:
	gmt_u64map_clear(&by);
	return -ENOMEM;
}

static int p2_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	sites_run_t *r = ctx;
	if ((flags & GMT_EVENTS_SIDE) || !r->unsnapped)
		return r->inner.events(r->inner.ctx, ev, n, flags);
	for (size_t i = 0; i < n; i++) {
		int rc = r->inner.events(r->inner.ctx, &ev[i], 1, flags);
		if (rc)
			return rc;
		r->seq++;
		while (r->next_target < r->n_targets && r->targets[r->next_target]->peak_seq <= r->seq) {
			dev_rec_t *d = r->targets[r->next_target++];
			if (snapshot(r, d))
				return 1;
			r->unsnapped--;
		}
		if (!r->unsnapped)
			continue;
		const gmt_summary_t *s = gmt_replay_summary(r->rp);
		for (size_t k = 0; k < r->n_devs; k++) {
			dev_rec_t *d = &r->devs[k];
			if (d->snapped)
				continue;
			const gmt_dev_summary_t *ds = gmt_summary_device(s, d->ordinal);
			if (ds && ds->peak.total >= d->peak) {
				if (snapshot(r, d))
					return 1;
				r->unsnapped--;
			}
		}
	}
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

static void sites_free(site_t *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		free(a[i].ids);
	free(a);
}

static void run_free(sites_run_t *r)
{
	for (size_t i = 0; i < r->n_stacks; i++)
		free(r->stacks[i].frames);
	free(r->stacks);
	gmt_u64map_clear(&r->stack_ix);
	for (size_t i = 0; i < r->n_tstacks; i++) {
		for (size_t k = 0; k < r->tstacks[i].n; k++)
			free(r->tstacks[i].frames[k]);
		free(r->tstacks[i].frames);
	}
	free(r->tstacks);
	gmt_u64map_clear(&r->tstack_ix);
	for (size_t i = 0; i < r->n_fwdevs; i++)
		sites_free(r->fwdevs[i].sites, r->fwdevs[i].n_sites);
	free(r->fwdevs);
	gmt_u64map_clear(&r->fw_blocks);
	gmt_u64map_clear(&r->fw_agg);
	gmt_u64map_clear(&r->totals);
	gmt_u64map_clear(&r->live_blocks);
	gmt_u64map_clear(&r->live_handles);
	free(r->fails);
	for (size_t i = 0; i < r->n_devs; i++) {
		sites_free(r->devs[i].live, r->devs[i].n_live);
		sites_free(r->devs[i].top, r->devs[i].n_top);
	}
	free(r->devs);
	for (size_t i = 0; i < r->n_occs; i++) {
		for (size_t k = 0; k < r->occs[i].n_devs; k++)
			sites_free(r->occs[i].devs[k].live, r->occs[i].devs[k].n_live);
		free(r->occs[i].devs);
		for (size_t k = 0; k < r->occs[i].n_fwdevs; k++)
			sites_free(r->occs[i].fwdevs[k].sites, r->occs[i].fwdevs[k].n_sites);
		free(r->occs[i].fwdevs);
	}
	free(r->occs);
	free(r->fw_pend);
	free(r->targets);
	gmt_symtab_free(r->sym);
	gmt_replay_free(r->rp);
}

static int cmp_occ(const void *a, const void *b)
{
	const occ_rec_t *x = a, *y = b;
	if (x->begin_ts != y->begin_ts)
		return x->begin_ts < y->begin_ts ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* --phase: the occurrences of the phase named r->phase, chosen and paired
 * by the phase engine exactly as `phases` does with its default selection.
 * Returns 0 or -ENOMEM. */
static int load_phase(sites_run_t *r)
{
	gmt_phase_opts_t po = { .max_listed = MAX_PHASE_OCC, .top_n = GMT_PHASES_DEFAULT_TOP,
				.domains = r->sel->domains, .n_domains = r->sel->n_domains,
				.patterns = r->sel->patterns, .n_patterns = r->sel->n_patterns,
				.all_depths = r->sel->all_depths };
	gmt_phases_t *ph = NULL;
	gmt_decode_result_t res;
	gmt_phases_run(r->file, &po, NULL, &ph, &res);
	if (!ph)
		return -ENOMEM;
	int rc = res.status == GMT_DECODE_STOPPED ? -ENOMEM : 0;
	size_t nn = 0;
	const gmt_phase_name_t *names = gmt_phases_names(ph, &nn);
	for (size_t i = 0; i < nn && !rc; i++) {
		const char *nm = gmt_phases_string(ph, names[i].name_id);
		if (!nm || strcmp(nm, r->phase))
			continue;
		r->occ_total += names[i].occurrences;
		occ_rec_t *no = realloc(r->occs, (r->n_occs + names[i].n_listed + 1) * sizeof(*no));
		if (!no) {
			rc = -ENOMEM;
			break;
		}
		r->occs = no;
		for (size_t k = 0; k < names[i].n_listed; k++) {
			const gmt_occ_t *oc = names[i].listed[k];
			if (!oc)
				continue;
			r->occs[r->n_occs++] = (occ_rec_t){ .k = oc->k, .begin_ts = oc->begin_ts,
							    .end_ts = oc->end_ts, .ended = oc->ended };
		}
	}
	if (r->n_occs)
		qsort(r->occs, r->n_occs, sizeof(*r->occs), cmp_occ);
	gmt_phases_free(ph);
	return rc;
}

static int cmp_target(const void *a, const void *b)
{
	const dev_rec_t *x = *(dev_rec_t *const *)a, *y = *(dev_rec_t *const *)b;
	return x->peak_seq < y->peak_seq ? -1 : x->peak_seq > y->peak_seq;
}

static int cmp_dev(const void *a, const void *b)
{
	const dev_rec_t *x = a, *y = b;
	return x->ordinal - y->ordinal;
}

static int group_sites(sites_run_t *r, site_t *a, size_t *n);

/* Runs both passes; r->res holds pass 1's outcome. Returns 0 or -ENOMEM. */
/* ---- --framework ------------------------------------------------------------ */

/* Blocks of different devices never share an address under unified
 * addressing, but traces from test doubles may: the device goes in the key. */
static uint64_t fw_key(int dev, uint64_t addr)
{
	return (addr & 0x00ffffffffffffffull) ^ (uint64_t)(dev & 0xff) << 56;
}

/* The record of device ordinal in *recs (created when missing). */
static fwdev_rec_t *fw_rec(fwdev_rec_t **recs, size_t *n, int ordinal)
{
	for (size_t i = 0; i < *n; i++)
		if ((*recs)[i].ordinal == ordinal)
			return &(*recs)[i];
	fwdev_rec_t *nr = realloc(*recs, (*n + 1) * sizeof(*nr));
	if (!nr)
		return NULL;
	*recs = nr;
	memset(&nr[*n], 0, sizeof(*nr));
	nr[*n].ordinal = ordinal;
	return &nr[(*n)++];
}

static fwdev_rec_t *fw_pend_rec(sites_run_t *r, const fw_pend_t *p)
{
	return p->occ < 0 ? fw_rec(&r->fwdevs, &r->n_fwdevs, p->ordinal) :
			    fw_rec(&r->occs[p->occ].fwdevs, &r->occs[p->occ].n_fwdevs, p->ordinal);
}

/* A new peak of record d (of occurrence occ, -1: the whole run): its sites
 * are copied before the device's blocks next change. */
static int fw_new_peak(sites_run_t *r, fwdev_rec_t *d, long occ, uint64_t live, uint64_t ts)
{
	d->peak = live;
	d->peak_ts = ts;
	if (d->pending)
		return 0;
	if (r->n_fw_pend == r->cap_fw_pend) {
		size_t c = r->cap_fw_pend ? r->cap_fw_pend * 2 : 16;
		fw_pend_t *np = realloc(r->fw_pend, c * sizeof(*np));
		if (!np)
			return -ENOMEM;
		r->fw_pend = np;
		r->cap_fw_pend = c;
	}
	r->fw_pend[r->n_fw_pend++] = (fw_pend_t){ occ, d->ordinal };
	d->pending = 1;
	return 0;
}

/* The state after the events at r->fw_ts holds until next_ts (UINT64_MAX:
 * the end): a device above a peak has a new one, for the whole run at
 * fw_ts, for each occurrence whose window [begin, end] meets [fw_ts,
 * next_ts) at the later of fw_ts and its begin. */
static int fw_close_instant(sites_run_t *r, uint64_t next_ts)
{
	for (size_t i = 0; i < r->n_fwdevs; i++) {
		fwdev_rec_t *d = &r->fwdevs[i];
		if (d->live > d->peak && fw_new_peak(r, d, -1, d->live, r->fw_ts))
			return -ENOMEM;
	}
	while (r->fw_occ_lo < r->n_occs && r->occs[r->fw_occ_lo].end_ts < r->fw_ts)
		r->fw_occ_lo++;
	for (size_t i = r->fw_occ_lo; i < r->n_occs && r->occs[i].begin_ts < next_ts; i++) {
		occ_rec_t *o = &r->occs[i];
		if (o->end_ts < r->fw_ts)
			continue;
		for (size_t k = 0; k < r->n_fwdevs; k++) {
			const uint64_t live = r->fwdevs[k].live;
			if (!live)
				continue;
			fwdev_rec_t *d = fw_rec(&o->fwdevs, &o->n_fwdevs, r->fwdevs[k].ordinal);
			if (!d)
				return -ENOMEM;
			if (live > d->peak &&
			    fw_new_peak(r, d, (long)i, live, o->begin_ts > r->fw_ts ? o->begin_ts : r->fw_ts))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Copies device d's sums by stack: the sites at its peak. */
static int fw_take(sites_run_t *r, fwdev_rec_t *d)
{
	sites_free(d->sites, d->n_sites);
	d->sites = NULL;
	d->n_sites = 0;
	d->pending = 0;
	size_t cap = 0;
	for (size_t i = 0; i < r->fw_agg.cap; i++) {
		const gmt_u64map_slot_t *t = &r->fw_agg.s[i];
		if (t->key == UINT64_MAX || (int)(t->key >> 32) - 1 != d->ordinal || !t->b)
			continue;
		if (d->n_sites == cap) {
			cap = cap ? cap * 2 : 16;
			site_t *ns = realloc(d->sites, cap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			d->sites = ns;
		}
		d->sites[d->n_sites++] = (site_t){ .stack = (uint32_t)t->key, .bytes = t->a, .count = t->b };
	}
	return 0;
}

/* Copies the sites of every pending record of device ordinal (-1: all). */
static int fw_take_pending(sites_run_t *r, int ordinal)
{
	size_t m = 0;
	for (size_t i = 0; i < r->n_fw_pend; i++) {
		fw_pend_t p = r->fw_pend[i];
		if (ordinal >= 0 && p.ordinal != ordinal) {
			r->fw_pend[m++] = p;
			continue;
		}
		fwdev_rec_t *d = fw_pend_rec(r, &p);
		if (!d || fw_take(r, d))
			return -ENOMEM;
	}
	r->n_fw_pend = m;
	return 0;
}

static int fw_agg_add(sites_run_t *r, int dev, uint32_t stack, uint64_t size, int sign)
{
	int existed;
	gmt_u64map_slot_t *a = gmt_u64map_put(&r->fw_agg, (uint64_t)(dev + 1) << 32 | stack, &existed);
	if (!a)
		return -ENOMEM;
	if (sign > 0) {
		a->a += size;
		a->b++;
	} else {
		a->a -= size;
		if (--a->b == 0)
			gmt_u64map_del(&r->fw_agg, a);
	}
	return 0;
}

static void fw_recs_free(fwdev_rec_t **recs, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		sites_free((*recs)[i].sites, (*recs)[i].n_sites);
	free(*recs);
	*recs = NULL;
	*n = 0;
}

static int fw_reset(void *ctx, int pass)
{
	sites_run_t *r = ctx;
	(void)pass;
	fw_recs_free(&r->fwdevs, &r->n_fwdevs);
	for (size_t i = 0; i < r->n_occs; i++)
		fw_recs_free(&r->occs[i].fwdevs, &r->occs[i].n_fwdevs);
	gmt_u64map_clear(&r->fw_blocks);
	gmt_u64map_clear(&r->fw_agg);
	r->fw_any = 0;
	r->fw_occ_lo = 0;
	r->n_fw_pend = 0;
	return 0;
}

static int fw_event(void *ctx, const gmt_devent_t *e, int side)
{
	sites_run_t *r = ctx;
	(void)side;
	if ((e->type != GMT_EV_FW_ALLOC && e->type != GMT_EV_FW_FREE_REQUESTED) || e->device < 0)
		return 0;
	if (r->fw_any && e->ts != r->fw_ts && fw_close_instant(r, e->ts))
		return -ENOMEM;
	r->fw_ts = e->ts;
	r->fw_any = 1;
	/* The device's blocks change: the peaks waiting for its sites first. */
	if (fw_take_pending(r, e->device))
		return -ENOMEM;
	fwdev_rec_t *d = fw_rec(&r->fwdevs, &r->n_fwdevs, e->device);
	if (!d)
		return -ENOMEM;
	int existed;
	gmt_u64map_slot_t *b = e->type == GMT_EV_FW_ALLOC ?
		gmt_u64map_put(&r->fw_blocks, fw_key(e->device, e->addr), &existed) :
		gmt_u64map_find(&r->fw_blocks, fw_key(e->device, e->addr));
	if (e->type == GMT_EV_FW_ALLOC && !b)
		return -ENOMEM;
	if (b && (e->type == GMT_EV_FW_FREE_REQUESTED || existed)) {
		/* a free, or an allocation over a live block (which it replaces) */
		uint64_t size = b->a;
		uint32_t stack = (uint32_t)b->b;
		d->live -= size;
		if (e->type == GMT_EV_FW_FREE_REQUESTED)
			gmt_u64map_del(&r->fw_blocks, b);
		if (fw_agg_add(r, e->device, stack, size, -1))
			return -ENOMEM;
	}
	if (e->type == GMT_EV_FW_ALLOC) {
		b = gmt_u64map_put(&r->fw_blocks, fw_key(e->device, e->addr), &existed);
		if (!b)
			return -ENOMEM;
		b->a = e->size;
		b->b = e->stack;
		d->live += e->size;
		if (fw_agg_add(r, e->device, e->stack, e->size, 1))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_fwdev(const void *a, const void *b)
{
	const fwdev_rec_t *x = a, *y = b;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Records with a peak, their sites grouped, by ordinal; the others out. */
static int fw_finish(sites_run_t *r, fwdev_rec_t **recs, size_t *n)
{
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		fwdev_rec_t *d = &(*recs)[i];
		if (!d->peak) {
			sites_free(d->sites, d->n_sites);
			continue;
		}
		if (group_sites(r, d->sites, &d->n_sites)) {
			/* the records not yet moved still own their sites */
			for (size_t q = i; q < *n; q++)
				(*recs)[m++] = (*recs)[q];
			*n = m;
			return -ENOMEM;
		}
		(*recs)[m++] = *d;
	}
	*n = m;
	if (m)
		qsort(*recs, m, sizeof(**recs), cmp_fwdev);
	return 0;
}

/* The framework pass (see the top of the file). Devices whose framework
 * never held a byte are left out, and so are they in each occurrence. */
static int run_framework(sites_run_t *r)
{
	gmt_timeline_sink_t sink = { .ctx = r, .reset = fw_reset, .event = fw_event };
	gmt_decode_result_t res;
	gmt_timeline_run(r->file, &sink, &res, NULL);
	if (res.status == GMT_DECODE_STOPPED)
		return -ENOMEM;
	if (r->fw_any && fw_close_instant(r, UINT64_MAX))
		return -ENOMEM;
	if (fw_take_pending(r, -1) || fw_finish(r, &r->fwdevs, &r->n_fwdevs))
		return -ENOMEM;
	for (size_t i = 0; i < r->n_occs; i++)
		if (fw_finish(r, &r->occs[i].fwdevs, &r->occs[i].n_fwdevs))
			return -ENOMEM;
	gmt_u64map_clear(&r->fw_blocks);
	gmt_u64map_clear(&r->fw_agg);
	return 0;
}

static int run_trace(sites_run_t *r, unsigned top)
{
	if (r->phase && load_phase(r))
		return -ENOMEM;
	r->rp = gmt_replay_new(r->file);
	if (!r->rp)
		return -ENOMEM;
	gmt_visitor_t v;
	gmt_replay_visitor(r->rp, &r->inner);
	v = r->inner;
	v.ctx = r;
	v.header = fw_header;
	v.device = fw_device;
	v.drops = fw_drops;
	v.end = fw_end;
	v.module = p1_module;
	v.stack = p1_stack;
	v.text_stack = p1_text_stack;
	v.events = p1_events;
	gmt_decode_file(r->file, &v, &r->res);
	if (r->res.status == GMT_DECODE_STOPPED)
		return -ENOMEM;
	r->sum = gmt_replay_finish(r->rp, &r->res);
	const gmt_summary_t *s = r->sum;

	/* devices with a peak */
	r->devs = calloc(s->n_dev ? s->n_dev : 1, sizeof(dev_rec_t));
	if (!r->devs)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_dev; i++) {
		const gmt_dev_summary_t *d = s->dev[i];
		if (!d || d->ordinal < 0 || !d->peak.total)
			continue;
		dev_rec_t *x = &r->devs[r->n_devs++];
		x->ordinal = d->ordinal;
		x->peak = d->peak.total;
		x->peak_ts = d->peak_ts;
	}
	/* sites that allocated most, per device */
	for (size_t i = 0; i < r->totals.cap; i++) {
		gmt_u64map_slot_t *t = &r->totals.s[i];
		if (t->key == UINT64_MAX)
			continue;
		int dev = (int)(t->key >> 32) - 1;
		for (size_t k = 0; k < r->n_devs; k++) {
			dev_rec_t *d = &r->devs[k];
			if (d->ordinal != dev)
				continue;
			site_t *ns = realloc(d->top, (d->n_top + 1) * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			d->top = ns;
			d->top[d->n_top++] = (site_t){ .stack = (uint32_t)t->key, .bytes = t->a,
						       .count = t->b & ((1ull << 56) - 1),
						       .owner = (unsigned)(t->b >> 56) };
		}
	}
	for (size_t k = 0; k < r->n_devs; k++) {
		dev_rec_t *d = &r->devs[k];
		if (group_sites(r, d->top, &d->n_top))
			return -ENOMEM;
		while (d->n_top > top)
			free(d->top[--d->n_top].ids);
	}
	gmt_u64map_clear(&r->totals);

	/* the phase's peaks, in the order pass 2 meets them */
	size_t nt = 0;
	for (size_t i = 0; i < r->n_occs; i++) {
		occ_rec_t *o = &r->occs[i];
		if (o->n_devs)
			qsort(o->devs, o->n_devs, sizeof(dev_rec_t), cmp_dev);
		nt += o->n_devs;
	}
	r->targets = calloc(nt ? nt : 1, sizeof(dev_rec_t *));
	if (!r->targets)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_occs; i++)
		for (size_t k = 0; k < r->occs[i].n_devs; k++)
			r->targets[r->n_targets++] = &r->occs[i].devs[k];
	if (r->n_targets)
		qsort(r->targets, r->n_targets, sizeof(dev_rec_t *), cmp_target);

	/* pass 2: a fresh replay, observed; stop once every peak is taken */
	if (!r->n_devs && !r->n_targets)
		return 0;
	gmt_replay_t *rp2 = gmt_replay_new(r->file);
	if (!rp2)
		return -ENOMEM;
	gmt_replay_t *rp1 = r->rp;
	r->rp = rp2;
	r->unsnapped = r->n_devs + r->n_targets;
	r->seq = 0;
	gmt_replay_observe(rp2, p2_observe, r);
	gmt_replay_visitor(rp2, &r->inner);
	/* Only events change the live set. */
	gmt_visitor_t v3;
	memset(&v3, 0, sizeof(v3));
	v3.ctx = r;
	v3.events = p2_events;
	gmt_decode_result_t res2;
	gmt_decode_file(r->file, &v3, &res2);
	r->rp = rp1;
	gmt_replay_free(rp2);
	gmt_u64map_clear(&r->live_blocks);
	gmt_u64map_clear(&r->live_handles);
	if (res2.status == GMT_DECODE_STOPPED)
		return -ENOMEM;
	for (size_t k = 0; k < r->n_devs; k++)
		if (group_sites(r, r->devs[k].live, &r->devs[k].n_live))
			return -ENOMEM;
	for (size_t i = 0; i < r->n_targets; i++)
		if (group_sites(r, r->targets[i]->live, &r->targets[i]->n_live))
			return -ENOMEM;
	return 0;
}

/* ---- rendering ------------------------------------------------------------ */

static const stack_rec_t *stack_get(const sites_run_t *r, uint32_t id)
{
	gmt_u64map_slot_t *s = gmt_u64map_find(&r->stack_ix, id);
	return s ? &r->stacks[s->a] : NULL;
}

/* The stack rule (docs/analyzer.md, "Owner from the stack"). */
static enum gmt_stack_owner owner_of_stack(sites_run_t *r, const stack_rec_t *st)
{
	if (!st)
		return GMT_SOWNER_UNKNOWN;
	for (size_t i = 0; i < st->n; i++) {
		const char *path = gmt_symtab_module_of(r->sym, st->frames[i]);
		if (!path)
			continue;
		enum gmt_stack_owner o = gmt_module_owner(path);
		if (o != GMT_SOWNER_UNKNOWN)
			return o;
	}
	return GMT_SOWNER_UNKNOWN;
}

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static const char *status_name(enum gmt_sym_status s)
{
	switch (s) {
	case GMT_SYM_OK: return "ok";
	case GMT_SYM_NO_MODULE: return "no_module";
	case GMT_SYM_MISSING: return "missing";
	case GMT_SYM_MISMATCH: return "build_id_mismatch";
	default: return "off";
	}
}

/* The preload's own frames (its hooks) are not shown: they are the same
 * in every stack and say nothing about the caller. */
static int own_frame(const gmt_sym_t *sym)
{
	const char *b = base_name(sym->module);
	return b && prefix(b, "libgpumemtrace");
}

/* Calls fn for each source frame of a stack, innermost first. */
typedef void (*frame_fn)(void *ctx, const gmt_sym_t *sym, const gmt_symframe_t *f, int first);

static int each_frame(sites_run_t *r, const stack_rec_t *st, frame_fn fn, void *ctx)
{
	int first = 1;
	for (size_t i = 0; st && i < st->n; i++) {
		const gmt_sym_t *sym = gmt_symtab_lookup(r->sym, st->frames[i], i > 0);
		if (!sym)
			return -ENOMEM;
		if (own_frame(sym))
			continue;
		for (size_t k = 0; k < sym->n; k++) {
			fn(ctx, sym, &sym->frames[k], first);
			first = 0;
		}
	}
	return 0;
}

static void text_frame(void *ctx, const gmt_sym_t *sym, const gmt_symframe_t *f, int first)
{
	FILE *o = ctx;
	fputs("          ", o);
	if (f->function && sym->status == GMT_SYM_OK)
		gmt_text_str(o, f->function);
	else
		gmt_text_str(o, sym->label);
	if (f->file) {
		fprintf(o, " at ");
		gmt_text_str(o, base_name(f->file));
		fprintf(o, ":%u", f->line);
	}
	if (f->inlined)
		fputs(" (inlined)", o);
	if (sym->module && sym->status == GMT_SYM_OK) {
		fputs(" in ", o);
		gmt_text_str(o, base_name(sym->module));
	}
	fputc('\n', o);
}

static int text_site(FILE *o, sites_run_t *r, const site_t *s, uint64_t peak, size_t rank)
{
	char b[64];
	const stack_rec_t *st = stack_get(r, s->stack);
	fprintf(o, "    #%zu  %s  %" PRIu64 " %s", rank, gmt_fmt_bytes(b, sizeof(b), s->bytes), s->count,
		s->count == 1 ? "block" : "blocks");
	if (peak)
		fprintf(o, "  %.2f%% of the peak", 100.0 * (double)s->bytes / (double)peak);
	fprintf(o, "  owner %s (stack: %s)", gmt_owner_name(s->owner),
		gmt_stack_owner_name(owner_of_stack(r, st)));
	for (size_t i = 0; i < s->n_ids; i++)
		fprintf(o, "%s%u", i ? "+" : "  stacks ", s->ids[i]);
	fputc('\n', o);
	if (!st || !st->n) {
		fprintf(o, "          (no stack recorded)\n");
		return 0;
	}
	return each_frame(r, st, text_frame, o);
}

static void json_frame(void *ctx, const gmt_sym_t *sym, const gmt_symframe_t *f, int first)
{
	gmt_json_t *j = ctx;
	char b[32];
	snprintf(b, sizeof(b), "0x%" PRIx64, sym->addr);
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "addr", b);
	gmt_json_kv_str(j, "status", status_name(sym->status));
	gmt_json_kv_str(j, "module", sym->module);
	gmt_json_kv_u64(j, "offset", sym->offset);
	gmt_json_kv_str(j, "function", f->function);
	gmt_json_kv_str(j, "file", f->file);
	gmt_json_kv_u64(j, "line", f->line);
	gmt_json_kv_bool(j, "inlined", f->inlined);
	gmt_json_kv_str(j, "label", sym->label ? sym->label : "");
	gmt_json_obj_end(j);
}

/* "stack_id", "owner", "stack_owner", "frames" of a site or failure. */
static int json_stack(gmt_json_t *j, sites_run_t *r, uint32_t stack, unsigned owner)
{
	const stack_rec_t *st = stack_get(r, stack);
	gmt_json_kv_u64(j, "stack_id", stack);
	gmt_json_kv_str(j, "owner", gmt_owner_name(owner));
	gmt_json_kv_str(j, "stack_owner", gmt_stack_owner_name(owner_of_stack(r, st)));
	gmt_json_kv_arr_begin(j, "frames");
	int rc = each_frame(r, st, json_frame, j);
	gmt_json_arr_end(j);
	return rc;
}

static int json_site(gmt_json_t *j, sites_run_t *r, const site_t *s, uint64_t peak)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "bytes", s->bytes);
	gmt_json_kv_u64(j, "count", s->count);
	if (peak)
		gmt_json_kv_double(j, "share", (double)s->bytes / (double)peak);
	gmt_json_kv_arr_begin(j, "stack_ids");
	if (!s->n_ids)
		gmt_json_u64(j, s->stack);
	for (size_t i = 0; i < s->n_ids; i++)
		gmt_json_u64(j, s->ids[i]);
	gmt_json_arr_end(j);
	int rc = json_stack(j, r, s->stack, s->owner);
	gmt_json_obj_end(j);
	return rc;
}

static const text_stack_rec_t *text_stack_get(const sites_run_t *r, uint32_t id)
{
	gmt_u64map_slot_t *s = gmt_u64map_find(&r->tstack_ix, id);
	return s ? &r->tstacks[s->a] : NULL;
}

/* A framework site: its stack as text frames (a TEXT_STACK), or symbolised
 * (a native STACK), or none. */
static int text_fw_site(FILE *o, sites_run_t *r, const site_t *s, uint64_t peak, size_t rank)
{
	char b[64];
	fprintf(o, "    #%zu  %s  %" PRIu64 " %s  %.2f%% of the peak", rank,
		gmt_fmt_bytes(b, sizeof(b), s->bytes), s->count, s->count == 1 ? "block" : "blocks",
		peak ? 100.0 * (double)s->bytes / (double)peak : 0.0);
	if (s->stack)
		fprintf(o, "  stack %u", s->stack);
	fputc('\n', o);
	const text_stack_rec_t *ts = GMT_STACK_IS_TEXT(s->stack) ? text_stack_get(r, s->stack) : NULL;
	const stack_rec_t *st = GMT_STACK_IS_TEXT(s->stack) ? NULL : stack_get(r, s->stack);
	if (ts && ts->n) {
		for (size_t i = 0; i < ts->n; i++) {
			fputs("          ", o);
			gmt_text_str(o, ts->frames[i]);
			fputc('\n', o);
		}
		return 0;
	}
	if (!st || !st->n) {
		fprintf(o, "          (no stack recorded)\n");
		return 0;
	}
	return each_frame(r, st, text_frame, o);
}

static int json_fw_site(gmt_json_t *j, sites_run_t *r, const site_t *s, uint64_t peak)
{
	const int text = GMT_STACK_IS_TEXT(s->stack);
	const text_stack_rec_t *ts = text ? text_stack_get(r, s->stack) : NULL;
	const stack_rec_t *st = text ? NULL : stack_get(r, s->stack);
	gmt_json_obj_begin(j);
	gmt_json_kv_u64(j, "bytes", s->bytes);
	gmt_json_kv_u64(j, "count", s->count);
	gmt_json_kv_double(j, "share", peak ? (double)s->bytes / (double)peak : 0.0);
	gmt_json_kv_u64(j, "stack_id", s->stack);
	gmt_json_kv_str(j, "stack_kind", ts ? "text" : st ? "native" : "none");
	gmt_json_kv_arr_begin(j, "frames");
	int rc = 0;
	if (ts) {
		for (size_t i = 0; i < ts->n; i++) {
			gmt_json_obj_begin(j);
			gmt_json_kv_str(j, "text", ts->frames[i] ? ts->frames[i] : "");
			gmt_json_obj_end(j);
		}
	} else if (st) {
		rc = each_frame(r, st, json_frame, j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	return rc;
}

/* A JSON array of framework devices (framework_sites, framework_devices). */
static int json_fw_devs(gmt_json_t *j, sites_run_t *r, const fwdev_rec_t *devs, size_t n, unsigned top)
{
	int rc = 0;
	gmt_json_arr_begin(j);
	for (size_t k = 0; k < n && !rc; k++) {
		const fwdev_rec_t *d = &devs[k];
		gmt_json_obj_begin(j);
		gmt_json_kv_i64(j, "ordinal", d->ordinal);
		gmt_json_kv_u64(j, "peak_bytes", d->peak);
		gmt_json_kv_u64(j, "peak_ts_ns", d->peak_ts);
		gmt_json_kv_u64(j, "live_sites_total", d->n_sites);
		gmt_json_kv_arr_begin(j, "live_sites");
		for (size_t i = 0; i < d->n_sites && i < top && !rc; i++)
			rc = json_fw_site(j, r, &d->sites[i], d->peak);
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	return rc;
}

static const char *status_key(const gmt_decode_result_t *res)
{
	switch (res->status) {
	case GMT_DECODE_OK: return res->ended_cleanly ? "clean" : "cut";
	case GMT_DECODE_DAMAGED: return "damaged";
	case GMT_DECODE_REFUSED: return "refused";
	case GMT_DECODE_IO: return "unreadable";
	default: return "stopped";
	}
}

/* "ordinal", "peak_bytes", "peak_ts_ns", "live_sites_total", "live_sites" of
 * a device (the whole run's or an occurrence's). */
static int json_dev_head(gmt_json_t *j, sites_run_t *r, dev_rec_t *d, unsigned top)
{
	int rc = 0;
	gmt_json_kv_i64(j, "ordinal", d->ordinal);
	gmt_json_kv_u64(j, "peak_bytes", d->peak);
	gmt_json_kv_u64(j, "peak_ts_ns", d->peak_ts);
	gmt_json_kv_u64(j, "live_sites_total", d->n_live);
	gmt_json_kv_arr_begin(j, "live_sites");
	for (size_t i = 0; i < d->n_live && i < top && !rc; i++)
		rc = json_site(j, r, &d->live[i], d->peak);
	gmt_json_arr_end(j);
	return rc;
}

static int report_json(gmt_json_t *j, sites_run_t *r, unsigned top)
{
	int rc = 0;
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", r->file);
	gmt_json_kv_str(j, "status", status_key(&r->res));
	gmt_json_kv_arr_begin(j, "devices");
	for (size_t k = 0; k < r->n_devs && !rc; k++) {
		dev_rec_t *d = &r->devs[k];
		gmt_json_obj_begin(j);
		rc = json_dev_head(j, r, d, top);
		gmt_json_kv_arr_begin(j, "most_allocated");
		for (size_t i = 0; i < d->n_top && !rc; i++)
			rc = json_site(j, r, &d->top[i], 0);
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	if (r->framework && !rc) {
		gmt_json_key(j, "framework_sites");
		rc = json_fw_devs(j, r, r->fwdevs, r->n_fwdevs, top);
	}
	if (r->phase && !rc) {
		gmt_json_kv_obj_begin(j, "phase");
		gmt_json_kv_str(j, "name", r->phase);
		gmt_json_kv_u64(j, "occurrences_total", r->occ_total);
		gmt_json_kv_arr_begin(j, "occurrences");
		for (size_t i = 0; i < r->n_occs && !rc; i++) {
			occ_rec_t *oc = &r->occs[i];
			gmt_json_obj_begin(j);
			gmt_json_kv_u64(j, "occurrence", oc->k);
			gmt_json_kv_u64(j, "begin_ts_ns", oc->begin_ts);
			gmt_json_kv_u64(j, "end_ts_ns", oc->end_ts);
			gmt_json_kv_bool(j, "ended", oc->ended);
			gmt_json_kv_arr_begin(j, "devices");
			for (size_t k = 0; k < oc->n_devs && !rc; k++) {
				gmt_json_obj_begin(j);
				rc = json_dev_head(j, r, &oc->devs[k], top);
				gmt_json_obj_end(j);
			}
			gmt_json_arr_end(j);
			if (r->framework && !rc) {
				gmt_json_key(j, "framework_devices");
				rc = json_fw_devs(j, r, oc->fwdevs, oc->n_fwdevs, top);
			}
			gmt_json_obj_end(j);
		}
		gmt_json_arr_end(j);
		gmt_json_obj_end(j);
	}
	gmt_json_kv_u64(j, "failed_allocations_total", r->fails_total);
	gmt_json_kv_arr_begin(j, "failed_allocations");
	for (size_t i = 0; i < r->n_fails && !rc; i++) {
		fail_rec_t *f = &r->fails[i];
		gmt_json_obj_begin(j);
		gmt_json_kv_u64(j, "ts_ns", f->ts);
		gmt_json_kv_i64(j, "device", f->device);
		gmt_json_kv_u64(j, "bytes", f->size);
		gmt_json_kv_str(j, "kind", gmt_kind_name(f->kind));
		gmt_json_kv_str(j, "api", gmt_api_name(f->api));
		gmt_json_kv_u64(j, "result", f->result);
		gmt_json_kv_str(j, "result_name", gmt_curesult_name(f->result));
		rc = json_stack(j, r, f->stack, f->owner);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	return rc;
}

static int report_text(FILE *o, sites_run_t *r, unsigned top)
{
	char b[64];
	int rc = 0;
	fputs("trace ", o);
	gmt_text_str(o, r->file);
	fprintf(o, " (%s)\n", status_key(&r->res));
	if (r->framework && !r->n_fwdevs)
		fputs("  the framework held no block (no FW_ALLOC events)\n", o);
	for (size_t k = 0; k < r->n_fwdevs && !rc; k++) {
		fwdev_rec_t *d = &r->fwdevs[k];
		fprintf(o, "\ndevice %d: framework peak %s allocated at ts %" PRIu64 " ns\n", d->ordinal,
			gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts);
		fprintf(o, "  framework blocks live at the peak, by stack (%zu site%s%s):\n", d->n_sites,
			d->n_sites == 1 ? "" : "s", d->n_sites > top ? ", largest listed" : "");
		for (size_t i = 0; i < d->n_sites && i < top && !rc; i++)
			rc = text_fw_site(o, r, &d->sites[i], d->peak, i + 1);
	}
	if (!r->n_devs && !r->framework)
		fputs("  no device memory was held\n", o);
	for (size_t k = 0; k < r->n_devs && !rc && !r->framework; k++) {
		dev_rec_t *d = &r->devs[k];
		fprintf(o, "\ndevice %d: peak %s at ts %" PRIu64 " ns\n", d->ordinal,
			gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts);
		fprintf(o, "  live at the peak, by call site (%zu site%s%s):\n", d->n_live,
			d->n_live == 1 ? "" : "s", d->n_live > top ? ", largest listed" : "");
		for (size_t i = 0; i < d->n_live && i < top && !rc; i++)
			rc = text_site(o, r, &d->live[i], d->peak, i + 1);
		fputs("  allocated most over the run:\n", o);
		for (size_t i = 0; i < d->n_top && !rc; i++)
			rc = text_site(o, r, &d->top[i], 0, i + 1);
	}
	if (r->phase && !rc) {
		fputs("\nphase ", o);
		gmt_text_str(o, r->phase);
		fprintf(o, ": %" PRIu64 " occurrence%s%s\n", r->occ_total, r->occ_total == 1 ? "" : "s",
			r->occ_total > r->n_occs ? " (first ones listed)" : "");
	}
	for (size_t i = 0; i < r->n_occs && !rc; i++) {
		occ_rec_t *oc = &r->occs[i];
		if (r->framework) {
			fprintf(o, "  occurrence %" PRIu64 " (ts %" PRIu64 " to %" PRIu64 " ns%s)%s\n", oc->k,
				oc->begin_ts, oc->end_ts, oc->ended ? "" : ", unterminated",
				oc->n_fwdevs ? "" : ": the framework held no block");
			for (size_t k = 0; k < oc->n_fwdevs && !rc; k++) {
				fwdev_rec_t *d = &oc->fwdevs[k];
				fprintf(o, "  device %d: framework peak in the occurrence %s allocated at ts %" PRIu64
					" ns (%zu site%s%s):\n", d->ordinal, gmt_fmt_bytes(b, sizeof(b), d->peak),
					d->peak_ts, d->n_sites, d->n_sites == 1 ? "" : "s",
					d->n_sites > top ? ", largest listed" : "");
				for (size_t q = 0; q < d->n_sites && q < top && !rc; q++)
					rc = text_fw_site(o, r, &d->sites[q], d->peak, q + 1);
			}
			continue;
		}
		fprintf(o, "  occurrence %" PRIu64 " (ts %" PRIu64 " to %" PRIu64 " ns%s)%s\n", oc->k,
			oc->begin_ts, oc->end_ts, oc->ended ? "" : ", unterminated",
			oc->n_devs ? "" : ": no device memory was held");
		for (size_t k = 0; k < oc->n_devs && !rc; k++) {
			dev_rec_t *d = &oc->devs[k];
			fprintf(o, "  device %d: peak in the occurrence %s at ts %" PRIu64 " ns (%zu site%s%s):\n",
				d->ordinal, gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts, d->n_live,
				d->n_live == 1 ? "" : "s", d->n_live > top ? ", largest listed" : "");
			for (size_t q = 0; q < d->n_live && q < top && !rc; q++)
				rc = text_site(o, r, &d->live[q], d->peak, q + 1);
		}
	}
	fprintf(o, "\nfailed allocations: %" PRIu64 "%s\n", r->fails_total,
		r->fails_total > r->n_fails ? " (first ones listed)" : "");
	for (size_t i = 0; i < r->n_fails && !rc; i++) {
		fail_rec_t *f = &r->fails[i];
		const char *res = gmt_curesult_name(f->result);
		fprintf(o, "    ts %" PRIu64 " ns  device %d  %s  %s  result %u%s%s%s  owner %s (stack: %s)\n",
			f->ts, f->device, gmt_fmt_bytes(b, sizeof(b), f->size), gmt_api_name(f->api),
			f->result, res ? " (" : "", res ? res : "", res ? ")" : "", gmt_owner_name(f->owner),
			gmt_stack_owner_name(owner_of_stack(r, stack_get(r, f->stack))));
		const stack_rec_t *st = stack_get(r, f->stack);
		if (st)
			rc = each_frame(r, st, text_frame, o);
	}
	return rc;
}

/* Folded stacks: one line per distinct symbolised stack, outermost first. */
typedef struct fold {
	char *buf;
	size_t len, cap;
	int oom;
} fold_t;

static void fold_put(fold_t *f, const char *s, size_t n)
{
	if (f->oom)
		return;
	if (f->len + n + 1 > f->cap) {
		size_t c = f->cap ? f->cap : 256;
		while (c < f->len + n + 1)
			c *= 2;
		char *nb = realloc(f->buf, c);
		if (!nb) {
			f->oom = 1;
			return;
		}
		f->buf = nb;
		f->cap = c;
	}
	memcpy(f->buf + f->len, s, n);
	f->len += n;
	f->buf[f->len] = 0;
}

/* A frame's name in folded form: ';' separates frames and the last space
 * separates the count, so ';' becomes ':' and a name never ends the line. */
static void fold_name(fold_t *f, const char *name)
{
	for (const char *p = name; *p; p++) {
		char c = *p == ';' ? ':' : (*p == '\n' || *p == '\r') ? ' ' : *p;
		fold_put(f, &c, 1);
	}
}

/* ---- grouping by symbolised stack ---------------------------------------- */

/* A frame's identity: function, file, line and inlined when symbolised
 * (either of the first two known), else module and offset, else the
 * address. Fields end in 0x1f, frames in 0x1e (neither is in a name). */
static void key_frame(void *ctx, const gmt_sym_t *sym, const gmt_symframe_t *f, int first)
{
	fold_t *k = ctx;
	char b[64];
	(void)first;
	if (sym->status == GMT_SYM_OK && (f->function || f->file)) {
		fold_put(k, "F", 1);
		if (f->function)
			fold_put(k, f->function, strlen(f->function));
		fold_put(k, "\x1f", 1);
		if (f->file)
			fold_put(k, f->file, strlen(f->file));
		snprintf(b, sizeof(b), "\x1f%u\x1f%d\x1e", f->line, f->inlined);
	} else if (sym->module) {
		fold_put(k, "M", 1);
		fold_put(k, sym->module, strlen(sym->module));
		snprintf(b, sizeof(b), "\x1f%" PRIx64 "\x1e", sym->offset);
	} else {
		snprintf(b, sizeof(b), "A%" PRIx64 "\x1e", sym->addr);
	}
	fold_put(k, b, strlen(b));
}

typedef struct keyed {
	char *key;
	site_t s;
} keyed_t;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed_t *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->s.stack < y->s.stack ? -1 : x->s.stack > y->s.stack;
}

/* Merges the sites (fresh: ids NULL) whose stacks symbolise to the same
 * frames (the preload's own frames left out, as shown) and whose recorded
 * owner is the same, then sorts them largest first. A stack id without a
 * STACK record merges with nothing. Returns 0 or -ENOMEM. */
static int group_sites(sites_run_t *r, site_t *a, size_t *n)
{
	if (*n < 2)
		return 0;
	keyed_t *k = calloc(*n, sizeof(*k));
	if (!k)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < *n && !rc; i++) {
		fold_t f = { 0 };
		char b[64];
		const stack_rec_t *st = stack_get(r, a[i].stack);
		snprintf(b, sizeof(b), "%u\x1e", a[i].owner);
		fold_put(&f, b, strlen(b));
		if (!st) {
			snprintf(b, sizeof(b), "S%u", a[i].stack);
			fold_put(&f, b, strlen(b));
		} else {
			rc = each_frame(r, st, key_frame, &f);
		}
		if (f.oom || !f.buf)
			rc = -ENOMEM;
		k[i].key = f.buf;
		k[i].s = a[i];
	}
	size_t m = 0;
	if (!rc) {
		qsort(k, *n, sizeof(*k), cmp_keyed);
		for (size_t i = 0; i < *n;) {
			size_t j = i + 1;
			site_t g = k[i].s;
			while (j < *n && !strcmp(k[j].key, k[i].key)) {
				g.bytes += k[j].s.bytes;
				g.count += k[j].s.count;
				j++;
			}
			if (j - i > 1) {
				g.ids = malloc((j - i) * sizeof(uint32_t));
				if (!g.ids) {
					rc = -ENOMEM;
					break;
				}
				g.n_ids = j - i;
				for (size_t q = i; q < j; q++)
					g.ids[q - i] = k[q].s.stack;
			}
			a[m++] = g;
			i = j;
		}
	}
	for (size_t i = 0; i < *n; i++)
		free(k[i].key);
	free(k);
	if (rc) {
		/* the first m entries own their ids; the rest are plain */
		for (size_t i = m; i < *n; i++)
			a[i].ids = NULL;
		return rc;
	}
	*n = m;
	qsort(a, m, sizeof(site_t), cmp_site);
	return 0;
}

typedef struct fline {
	char *text;
	uint64_t bytes;
} fline_t;

static int cmp_fline(const void *a, const void *b)
{
	return strcmp(((const fline_t *)a)->text, ((const fline_t *)b)->text);
}

/* Appends name to *names (a growing array). */
static int push_name(const char ***names, size_t *nn, size_t *cap, const char *name)
{
	if (*nn == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		const char **nw = realloc(*names, c * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		*names = nw;
		*cap = c;
	}
	(*names)[(*nn)++] = name;
	return 0;
}

/* One folded line: root (NULL: none), "device N", then the stack's frames
 * outermost first (a native stack symbolised, our own frames left out; a
 * text stack's frames as they are); "[no stack]" without one. */
static int flame_line(sites_run_t *r, const char *root, int ordinal, uint32_t stack, char **line)
{
	const int text = GMT_STACK_IS_TEXT(stack);
	const text_stack_rec_t *ts = text ? text_stack_get(r, stack) : NULL;
	const stack_rec_t *st = text ? NULL : stack_get(r, stack);
	const char **names = NULL;
	size_t nn = 0, cap = 0;
	int rc = 0;
	/* frames innermost first, reversed below */
	for (size_t j = 0; ts && j < ts->n && !rc; j++)
		rc = push_name(&names, &nn, &cap, ts->frames[j]);
	for (size_t j = 0; st && j < st->n && !rc; j++) {
		const gmt_sym_t *sym = gmt_symtab_lookup(r->sym, st->frames[j], j > 0);
		if (!sym) {
			rc = -ENOMEM;
			break;
		}
		if (own_frame(sym))
			continue;
		for (size_t q = 0; q < sym->n && !rc; q++)
			rc = push_name(&names, &nn, &cap,
				       sym->status == GMT_SYM_OK && sym->frames[q].function ?
				       sym->frames[q].function : sym->label);
	}
	fold_t f = { 0 };
	char head[32];
	if (root) {
		fold_name(&f, root);
		fold_put(&f, ";", 1);
	}
	snprintf(head, sizeof(head), "device %d", ordinal);
	fold_put(&f, head, strlen(head));
	if (!(ts && ts->n) && !(st && st->n))
		fold_put(&f, ";[no stack]", 11);
	for (size_t q = nn; q-- > 0;) {
		fold_put(&f, ";", 1);
		fold_name(&f, names[q]);
	}
	free(names);
	if (rc || f.oom || !f.buf) {
		free(f.buf);
		return rc ? rc : -ENOMEM;
	}
	*line = f.buf;
	return 0;
}

/* Where folded lines go: text lines "STACK BYTES" (f), or JSON objects
 * {"folded", "bytes"} (j). */
typedef struct fold_out {
	FILE *f;
	gmt_json_t *j;
} fold_out_t;

static void fold_emit(const fold_out_t *o, const char *text, uint64_t bytes)
{
	if (o->j) {
		gmt_json_obj_begin(o->j);
		gmt_json_kv_str(o->j, "folded", text);
		gmt_json_kv_u64(o->j, "bytes", bytes);
		gmt_json_obj_end(o->j);
	} else {
		fprintf(o->f, "%s %" PRIu64 "\n", text, bytes);
	}
}

/* The lines of one device's sites, equal lines summed, sorted. */
static int flame_sites(const fold_out_t *o, sites_run_t *r, const char *root, int ordinal,
		       const site_t *sites, size_t n)
{
	fline_t *lines = calloc(n ? n : 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = flame_line(r, root, ordinal, sites[i].stack, &lines[i].text);
		lines[i].bytes = sites[i].bytes;
	}
	if (!rc && n) {
		qsort(lines, n, sizeof(*lines), cmp_fline);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			uint64_t sum = 0;
			while (j < n && !strcmp(lines[j].text, lines[i].text))
				sum += lines[j++].bytes;
			fold_emit(o, lines[i].text, sum);
			i = j;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return rc;
}

/* The lines of devs, each rooted at root (NULL: none) then "device N". */
static int flame_devs(const fold_out_t *o, sites_run_t *r, dev_rec_t *devs, size_t n_devs, const char *root)
{
	int rc = 0;
	for (size_t k = 0; k < n_devs && !rc; k++)
		rc = flame_sites(o, r, root, devs[k].ordinal, devs[k].live, devs[k].n_live);
	return rc;
}

/* Whole run: rooted at "device N"; --phase: at "NAME #K;device N". */
static int flame_lines(const fold_out_t *o, sites_run_t *r)
{
	if (r->framework && !r->phase) {
		int rc = 0;
		for (size_t k = 0; k < r->n_fwdevs && !rc; k++)
			rc = flame_sites(o, r, NULL, r->fwdevs[k].ordinal, r->fwdevs[k].sites,
					 r->fwdevs[k].n_sites);
		return rc;
	}
	if (!r->phase)
		return flame_devs(o, r, r->devs, r->n_devs, NULL);
	size_t len = strlen(r->phase) + 32;
	char *root = malloc(len);
	if (!root)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < r->n_occs && !rc; i++) {
		snprintf(root, len, "%s #%" PRIu64, r->phase, r->occs[i].k);
		if (r->framework)
			for (size_t k = 0; k < r->occs[i].n_fwdevs && !rc; k++)
				rc = flame_sites(o, r, root, r->occs[i].fwdevs[k].ordinal,
						 r->occs[i].fwdevs[k].sites, r->occs[i].fwdevs[k].n_sites);
		else
			rc = flame_devs(o, r, r->occs[i].devs, r->occs[i].n_devs, root);
	}
	free(root);
	return rc;
}

static int flame(FILE *f, sites_run_t *r)
{
	fold_out_t o = { .f = f };
	return flame_lines(&o, r);
}

/* flamegraph --json: the trace and its folded lines as objects. */
static int flame_json(gmt_json_t *j, sites_run_t *r)
{
	fold_out_t o = { .j = j };
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", r->file);
	gmt_json_kv_str(j, "status", status_key(&r->res));
	gmt_json_kv_arr_begin(j, "stacks");
	int rc = flame_lines(&o, r);
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	return rc;
}

/* ---- command line ----------------------------------------------------------- */

int gmt_sites_run(const gmt_sites_opts_t *so, const gmt_common_t *c, gmt_out_t *out)
{
	int rc = EXIT_OK;
	gmt_json_t *j = out->json;
	/* No network lookups of debug information from here. */
	unsetenv("DEBUGINFOD_URLS");

	double sym_s = 0;
	uint64_t sym_addrs = 0, sym_files = 0;
	if (j) {
		if (!so->flamegraph)
			gmt_json_kv_u64(j, "top", so->top);
		gmt_json_kv_arr_begin(j, "traces");
	}
	for (size_t i = 0; i < c->n_files; i++) {
		sites_run_t r;
		memset(&r, 0, sizeof(r));
		r.file = c->files[i];
		r.phase = so->phase;
		r.sel = c;
		r.sym = gmt_symtab_new(c->debug_dirs, c->n_debug_dirs, c->symbols);
		r.framework = so->framework;
		int e = r.sym ? run_trace(&r, so->top) : -ENOMEM;
		if (!e && so->framework)
			e = run_framework(&r);
		if (!e) {
			out->events += r.sum ? r.sum->events : 0;
			int drc = gmt_cli_outcome(c->files[i], &r.res);
			if (drc > rc)
				rc = drc;
			if (so->flamegraph && j)
				e = flame_json(j, &r);
			else if (so->flamegraph)
				e = flame(out->f, &r);
			else if (j)
				e = report_json(j, &r, so->top);
			else {
				if (i)
					gmt_cli_separator(out->f);
				e = report_text(out->f, &r, so->top);
			}
			if (r.sym) {
				uint64_t a, f;
				double sec;
				gmt_symtab_stats(r.sym, &a, &f, &sec);
				sym_addrs += a;
				sym_files += f;
				sym_s += sec;
			}
		}
		run_free(&r);
		if (e) {
			fprintf(stderr, "gpumemtrace-analyze: %s: out of memory\n", c->files[i]);
			rc = EXIT_USAGE;
			break;
		}
	}
	if (j) {
		gmt_json_arr_end(j);
		gmt_json_kv_obj_begin(j, "symbolisation");
		gmt_json_kv_bool(j, "enabled", c->symbols);
		gmt_json_kv_u64(j, "addresses", sym_addrs);
		gmt_json_kv_u64(j, "files", sym_files);
		gmt_json_kv_fixed(j, "seconds", sym_s, 6);
		gmt_json_obj_end(j);
	} else if (!so->flamegraph) {
		fprintf(out->f, "\nsymbolisation: %" PRIu64 " distinct addresses, %" PRIu64 " files, %.3f s%s\n",
			sym_addrs, sym_files, sym_s, c->symbols ? "" : " (off: --no-symbols)");
	} else {
		fprintf(stderr, "gpumemtrace-analyze: symbolisation: %" PRIu64 " distinct addresses, %" PRIu64
			" files, %.3f s\n", sym_addrs, sym_files, sym_s);
	}
	return rc;
}
