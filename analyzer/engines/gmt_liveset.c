/*
 * gmt_liveset.c - the live set by stack at chosen instants (gmt_liveset.h).
 *
 * The replay's observer (gmt_replay_observe) gives each live block its
 * stack, kept by the replay with the block (gmt_obs_t.cookie: no map of
 * our own), and keeps each live handle: key -> a = size, b = stack | owner
 * << 32 | (device + 1) << 40. After every main-stream event, the instants
 * due are taken: those named by event number (sorted, so each is looked at
 * once) and those named by a device's peak (the replay's summary says when
 * the peak reaches them). Once every instant is taken, the observer goes
 * and events are handed to the replay in batches again; the decoding still
 * runs to the end, for the outcome.
 */
#include "engines/gmt_liveset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_replay.h"
#include "support/gmt_u64map.h"

#define PACK(stack, owner, dev) ((uint64_t)(stack) | (uint64_t)((owner) & 0xff) << 32 | \
				 (uint64_t)(uint16_t)((dev) + 1) << 40)
#define P_STACK(b) ((uint32_t)(b))
#define P_OWNER(b) ((unsigned)(((b) >> 32) & 0xff))
#define P_DEV(b)   ((int)(((b) >> 40) & 0xffff) - 1)

/* Frees recorded lately, for a FREE_FAIL that brings a block back. */
#define RECENT 16

typedef struct ls {
	gmt_replay_t *rp;
	gmt_visitor_t inner;          /* the replay's own callbacks */
	gmt_u64map_t handles;         /* key -> a size, b packed */
	struct { uint64_t addr; uint32_t stack, valid; } recent[RECENT];
	unsigned recent_next;
	gmt_instant_t **by_seq;       /* GMT_AT_EVENT, by seq */
	size_t n_seq, next_seq;
	gmt_instant_t **by_peak;      /* GMT_AT_PEAK */
	size_t n_peak;
	size_t pending;               /* instants not yet taken */
	uint64_t seq, ts;
} ls_t;

static int observe(void *ctx, const gmt_devent_t *cause, const gmt_obs_t *o)
{
	ls_t *l = ctx;
	if (o->op == GMT_OBS_BLOCK_ADD) {
		uint32_t stack = cause ? cause->stack : 0;
		if (cause && cause->type == GMT_EV_FREE_FAIL) {
			/* A free undone: the block keeps its allocation's stack. */
			stack = 0;
			for (unsigned i = 0; i < RECENT; i++)
				if (l->recent[i].addr == o->key && l->recent[i].valid)
					stack = l->recent[i].stack;
		}
		*o->cookie = stack;
		return 0;
	}
	if (o->op == GMT_OBS_BLOCK_DEL) {
		unsigned k = l->recent_next++ % RECENT;
		l->recent[k].addr = o->key;
		l->recent[k].stack = *o->cookie;
		l->recent[k].valid = 1;
		return 0;
	}
	if (o->op != GMT_OBS_HANDLE_ADD && o->op != GMT_OBS_HANDLE_DEL)
		return 0;
	gmt_u64map_t *m = &l->handles;
	int existed;
	if (o->op == GMT_OBS_HANDLE_ADD) {
		gmt_u64map_slot_t *s = gmt_u64map_put(m, o->key, &existed);
		if (!s)
			return -ENOMEM;
		s->a = o->size;
		s->b = PACK(cause ? cause->stack : 0, o->owner, o->dev);
	} else {
		gmt_u64map_slot_t *s = gmt_u64map_find(m, o->key);
		if (s)
			gmt_u64map_del(m, s);
	}
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const gmt_live_group_t *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

typedef struct take_ctx {
	gmt_instant_t *at;
	gmt_u64map_t by;   /* stack -> index in groups */
	size_t cap;
} take_ctx_t;

static int add_block(void *ctx, uint64_t addr, uint64_t size, int dev, unsigned kind,
		     unsigned owner, uint32_t stack)
{
	take_ctx_t *t = ctx;
	gmt_instant_t *at = t->at;
	(void)addr;
	(void)kind;
	if (dev != at->ordinal)
		return 0;
	int existed;
	gmt_u64map_slot_t *x = gmt_u64map_put(&t->by, stack, &existed);
	if (!x)
		return -ENOMEM;
	if (!existed) {
		if (at->n_groups == t->cap) {
			size_t c = t->cap ? t->cap * 2 : 16;
			gmt_live_group_t *ng = realloc(at->groups, c * sizeof(*ng));
			if (!ng)
				return -ENOMEM;
			at->groups = ng;
			t->cap = c;
		}
		x->a = at->n_groups;
		at->groups[at->n_groups++] = (gmt_live_group_t){ .stack = stack, .owner = owner };
	}
	at->groups[x->a].bytes += size;
	at->groups[x->a].count++;
	return 0;
}

/* Sums the live blocks and handles of the instant's device by stack. */
static int take(ls_t *l, gmt_instant_t *at)
{
	take_ctx_t t = { .at = at };
	int rc = l->rp ? gmt_replay_each_block(l->rp, add_block, &t) : 0;
	const gmt_u64map_t *m = &l->handles;
	for (size_t i = 0; !rc && i < m->cap; i++) {
		const gmt_u64map_slot_t *s = &m->s[i];
		if (s->key != UINT64_MAX)
			rc = add_block(&t, s->key, s->a, P_DEV(s->b), 0, P_OWNER(s->b), P_STACK(s->b));
	}
	gmt_u64map_clear(&t.by);
	if (rc)
		return -ENOMEM;
	if (at->n_groups)
		qsort(at->groups, at->n_groups, sizeof(*at->groups), cmp_group);
	at->taken = 1;
	at->at_seq = l->seq;
	at->at_ts = l->ts;
	l->pending--;
	if (!l->pending)
		gmt_replay_observe(l->rp, NULL, NULL);   /* nothing more to keep */
	return 0;
}

/* The instants due after event number l->seq. */
static int take_due(ls_t *l)
{
	while (l->next_seq < l->n_seq && l->by_seq[l->next_seq]->seq <= l->seq)
		if (take(l, l->by_seq[l->next_seq++]))
			return -ENOMEM;
	if (!l->n_peak)
		return 0;
	const gmt_summary_t *s = gmt_replay_summary(l->rp);
	for (size_t k = 0; k < l->n_peak; k++) {
		gmt_instant_t *at = l->by_peak[k];
		if (at->taken)
			continue;
		const gmt_dev_summary_t *ds = gmt_summary_device(s, at->ordinal);
		if (ds && ds->peak.total >= at->bytes && take(l, at))
			return -ENOMEM;
	}
	return 0;
}

static int events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	ls_t *l = ctx;
	if (!gmt_liveset_counts(flags) || !l->pending)
		return l->inner.events(l->inner.ctx, ev, n, flags);
	for (size_t i = 0; i < n; i++) {
		int rc = l->inner.events(l->inner.ctx, &ev[i], 1, flags);
		if (rc)
			return rc;
		l->seq++;
		l->ts = ev[i].ts;
		if (l->pending && take_due(l))
			return 1;
	}
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const gmt_instant_t *x = *(gmt_instant_t *const *)a, *y = *(gmt_instant_t *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int gmt_liveset_run(const char *path, gmt_instant_t *const *at, size_t n, gmt_decode_result_t *res)
{
	ls_t l;
	int rc = 0;
	memset(&l, 0, sizeof(l));
	memset(res, 0, sizeof(*res));
	l.by_seq = calloc(n ? n : 1, sizeof(*l.by_seq));
	l.by_peak = calloc(n ? n : 1, sizeof(*l.by_peak));
	l.rp = gmt_replay_new(path);
	if (!l.by_seq || !l.by_peak || !l.rp) {
		rc = -ENOMEM;
		res->status = GMT_DECODE_STOPPED;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		gmt_instant_clear(at[i]);
		if (at[i]->kind == GMT_AT_PEAK)
			l.by_peak[l.n_peak++] = at[i];
		else
			l.by_seq[l.n_seq++] = at[i];
	}
	l.pending = n;
	if (l.n_seq)
		qsort(l.by_seq, l.n_seq, sizeof(*l.by_seq), cmp_seq);
	/* instants before any event */
	while (l.next_seq < l.n_seq && !l.by_seq[l.next_seq]->seq)
		if ((rc = take(&l, l.by_seq[l.next_seq++])))
			goto out;
	if (l.pending)
		gmt_replay_observe(l.rp, observe, &l);
	gmt_replay_visitor(l.rp, &l.inner);
	/* Only events change the live set. */
	gmt_visitor_t v;
	memset(&v, 0, sizeof(v));
	v.ctx = &l;
	v.events = events;
	gmt_decode_file(path, &v, res);
	if (res->status == GMT_DECODE_STOPPED)
		rc = -ENOMEM;
out:
	gmt_replay_free(l.rp);
	gmt_u64map_clear(&l.handles);
	free(l.by_seq);
	free(l.by_peak);
	return rc;
}

void gmt_instant_clear(gmt_instant_t *at)
{
	free(at->groups);
	at->groups = NULL;
	at->n_groups = 0;
	at->taken = 0;
	at->at_seq = at->at_ts = 0;
}
