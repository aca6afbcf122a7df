/*
 * gmt_group.c - the coinciding peak of several processes on one device
 * (gmt_group.h): a k-way merge of their step functions on a binary heap
 * keyed by the next change's time. At each distinct instant every change at
 * that instant is applied first; then the touched processes' own peaks and
 * the sum are looked at. A new maximum of the sum copies every process's
 * value (O(processes), which is small).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_group.h"

typedef struct slot {
	gmt_step_t next;      /* the pending change */
	uint64_t cur;         /* value now          */
	uint64_t last_ts;
	int has_next, touched;
} slot_t;

typedef struct heap {
	size_t *idx;
	size_t n;
	const slot_t *slots;
} heap_t;

static int before(const heap_t *h, size_t a, size_t b)
{
	uint64_t ta = h->slots[a].next.ts, tb = h->slots[b].next.ts;
	return ta < tb || (ta == tb && a < b);
}

static void push(heap_t *h, size_t s)
{
	size_t i = h->n++;
	h->idx[i] = s;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(h, h->idx[i], h->idx[p]))
			break;
		size_t t = h->idx[p];
		h->idx[p] = h->idx[i];
		h->idx[i] = t;
		i = p;
	}
}

static size_t pop(heap_t *h)
{
	size_t top = h->idx[0], i = 0;
	h->idx[0] = h->idx[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && before(h, h->idx[l], h->idx[m]))
			m = l;
		if (r < h->n && before(h, h->idx[r], h->idx[m]))
			m = r;
		if (m == i)
			break;
		size_t t = h->idx[m];
		h->idx[m] = h->idx[i];
		h->idx[i] = t;
		i = m;
	}
	return top;
}

int gmt_group_array_next(void *ctx, gmt_step_t *out)
{
	gmt_group_array_t *a = ctx;
	if (a->i >= a->n)
		return 0;
	*out = a->steps[a->i++];
	return 1;
}

/* Fetches source s's next change, clamped so that it never goes back. */
static void fetch(const gmt_group_src_t *src, slot_t *sl)
{
	sl->has_next = src->next(src->ctx, &sl->next) == 1;
	if (sl->has_next && sl->next.ts < sl->last_ts)
		sl->next.ts = sl->last_ts;
}

int gmt_group_merge(const gmt_group_src_t *src, size_t n, gmt_group_member_t *members,
		    gmt_group_result_t *res)
{
	slot_t *slots = calloc(n ? n : 1, sizeof(*slots));
	size_t *idx = calloc(n ? n : 1, sizeof(*idx)), *touched = calloc(n ? n : 1, sizeof(*touched));
	heap_t h = { idx, 0, slots };
	uint64_t sum = 0;

	memset(res, 0, sizeof(*res));
	if (!slots || !idx || !touched) {
		free(slots);
		free(idx);
		free(touched);
		return -ENOMEM;
	}
	memset(members, 0, n * sizeof(*members));
	for (size_t i = 0; i < n; i++) {
		fetch(&src[i], &slots[i]);
		if (slots[i].has_next)
			push(&h, i);
	}
	while (h.n) {
		uint64_t t = slots[h.idx[0]].next.ts;
		size_t nt = 0;
		while (h.n && slots[h.idx[0]].next.ts == t) {
			size_t i = pop(&h);
			slot_t *sl = &slots[i];
			sum = sum - sl->cur + sl->next.bytes;
			sl->cur = sl->next.bytes;
			sl->last_ts = t;
			res->changes++;
			if (!sl->touched) {
				sl->touched = 1;
				touched[nt++] = i;
			}
			fetch(&src[i], sl);
			if (sl->has_next)
				push(&h, i);
		}
		for (size_t k = 0; k < nt; k++) {
			size_t i = touched[k];
			slots[i].touched = 0;
			members[i].last_ts = t;
			if (slots[i].cur > members[i].own_peak) {
				members[i].own_peak = slots[i].cur;
				members[i].own_peak_ts = t;
			}
		}
		if (sum > res->peak_bytes) {
			res->found = 1;
			res->peak_bytes = sum;
			res->peak_ts = t;
			for (size_t i = 0; i < n; i++)
				members[i].at_peak = slots[i].cur;
		}
	}
	for (size_t i = 0; i < n; i++)
		res->own_peak_sum += members[i].own_peak;
	free(slots);
	free(idx);
	free(touched);
	return 0;
}

static int zero_uuid(const uint8_t u[16])
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

int gmt_group_same_device(const char *host_a, const uint8_t uuid_a[16], int ordinal_a,
			  const char *name_a, const char *host_b, const uint8_t uuid_b[16],
			  int ordinal_b, const char *name_b)
{
	if (strcmp(host_a ? host_a : "", host_b ? host_b : ""))
		return 0;
	if (!zero_uuid(uuid_a) || !zero_uuid(uuid_b))
		return !memcmp(uuid_a, uuid_b, 16);
	return ordinal_a == ordinal_b && !strcmp(name_a ? name_a : "", name_b ? name_b : "");
}
