/*
 * gmt_treap.h - PRIVATE to analyzer/: THE ordered map of the analyzer's
 * engines, a treap over the caller's own node array (nodes are indexes,
 * 0 the null node), as a macro that makes the operations for the caller's
 * node struct; the nodes carry their payload, the tree links are intrusive.
 * Tested in tests/unit/unit_map.c.
 *
 *   GMT_TREAP_DEFINE(prefix, node_t)
 *
 * node_t has members uint64_t key; uint32_t left, right, prio (prio: a
 * random number the caller draws once per node, so that no input can make
 * the tree deep; the heap order keeps larger priorities above). Keys in
 * one tree are distinct. Every function takes the node array N and works
 * on the tree whose root index the caller keeps:
 *   void     prefix_insert(N, uint32_t *root, x)   links node x (key absent)
 *   uint32_t prefix_find(N, root, key)             the node of key, or 0
 *   uint32_t prefix_unlink(N, uint32_t *root, key) unlinks the node of key
 *                                                  and returns it (0: none)
 *   uint32_t prefix_lower(N, root, key)            smallest key >= key, or 0
 *   uint32_t prefix_pred(N, root, key)             greatest key < key, or 0
 *   prefix_split / prefix_merge                    the two primitives
 * No recursion; every operation walks one path: O(log n) expected.
 */
#ifndef GMT_TREAP_H
#define GMT_TREAP_H

#include <stdint.h>

#define GMT_TREAP_DEFINE(P, node_t)                                                             \
/* Keys < key go to *l, the others to *r. */                                                    \
static inline __attribute__((unused)) void P##_split(node_t *N, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)     \
{                                                                                               \
	while (t) {                                                                             \
		if (N[t].key < key) {                                                           \
			*l = t;                                                                 \
			l = &N[t].right;                                                        \
			t = N[t].right;                                                         \
		} else {                                                                        \
			*r = t;                                                                 \
			r = &N[t].left;                                                         \
			t = N[t].left;                                                          \
		}                                                                               \
	}                                                                                       \
	*l = *r = 0;                                                                            \
}                                                                                               \
                                                                                                \
/* a's keys all below b's. */                                                                   \
static inline __attribute__((unused)) uint32_t P##_merge(node_t *N, uint32_t a, uint32_t b)                             \
{                                                                                               \
	uint32_t root, *link = &root;                                                           \
	while (a && b) {                                                                        \
		if (N[a].prio > N[b].prio) {                                                    \
			*link = a;                                                              \
			link = &N[a].right;                                                     \
			a = N[a].right;                                                         \
		} else {                                                                        \
			*link = b;                                                              \
			link = &N[b].left;                                                      \
			b = N[b].left;                                                          \
		}                                                                               \
	}                                                                                       \
	*link = a ? a : b;                                                                      \
	return root;                                                                            \
}                                                                                               \
                                                                                                \
static inline __attribute__((unused)) void P##_insert(node_t *N, uint32_t *root, uint32_t x)                            \
{                                                                                               \
	uint32_t *link = root;                                                                  \
	while (*link && N[*link].prio >= N[x].prio)                                             \
		link = N[x].key < N[*link].key ? &N[*link].left : &N[*link].right;              \
	P##_split(N, *link, N[x].key, &N[x].left, &N[x].right);                                 \
	*link = x;                                                                              \
}                                                                                               \
                                                                                                \
static inline __attribute__((unused)) uint32_t P##_find(const node_t *N, uint32_t t, uint64_t key)                      \
{                                                                                               \
	while (t && N[t].key != key)                                                            \
		t = key < N[t].key ? N[t].left : N[t].right;                                    \
	return t;                                                                               \
}                                                                                               \
                                                                                                \
static inline __attribute__((unused)) uint32_t P##_unlink(node_t *N, uint32_t *root, uint64_t key)                      \
{                                                                                               \
	uint32_t *link = root;                                                                  \
	while (*link && N[*link].key != key)                                                    \
		link = key < N[*link].key ? &N[*link].left : &N[*link].right;                   \
	uint32_t t = *link;                                                                     \
	if (t)                                                                                  \
		*link = P##_merge(N, N[t].left, N[t].right);                                    \
	return t;                                                                               \
}                                                                                               \
                                                                                                \
static inline __attribute__((unused)) uint32_t P##_lower(const node_t *N, uint32_t t, uint64_t key)                     \
{                                                                                               \
	uint32_t best = 0;                                                                      \
	while (t) {                                                                             \
		if (N[t].key >= key) {                                                          \
			best = t;                                                               \
			t = N[t].left;                                                          \
		} else {                                                                        \
			t = N[t].right;                                                         \
		}                                                                               \
	}                                                                                       \
	return best;                                                                            \
}                                                                                               \
                                                                                                \
static inline __attribute__((unused)) uint32_t P##_pred(const node_t *N, uint32_t t, uint64_t key)                      \
{                                                                                               \
	uint32_t best = 0;                                                                      \
	while (t) {                                                                             \
		if (N[t].key < key) {                                                           \
			best = t;                                                               \
			t = N[t].right;                                                         \
		} else {                                                                        \
			t = N[t].left;                                                          \
		}                                                                               \
	}                                                                                       \
	return best;                                                                            \
}

#endif /* GMT_TREAP_H */
