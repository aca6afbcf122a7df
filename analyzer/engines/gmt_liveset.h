/*
 * gmt_liveset.h - PRIVATE to analyzer/: the live set by stack at chosen
 * instants. The engine of `sites` (each device's peak, each occurrence's
 * peak), and the one for any report that asks "what was live then, by call
 * site": the live set at each failed allocation (an OOM post-mortem), two
 * runs' live sets at their peaks (a comparison), the page's snapshots.
 *
 * One replay (gmt_replay.h) of the trace, observed: every live device block
 * and VMM handle is kept with the stack of the event that made it live (a
 * FREE undone by FREE_FAIL gets its allocation's stack back) and its
 * recorded owner. At each instant asked for, the live bytes of that
 * instant's device are summed by stack id. On request, the same pass also
 * finds each device's peak (the first instant its total reached its
 * maximum, as the replay's summary has it) and the live set then, exactly,
 * without knowing the peak beforehand (gmt_liveset.c says how). Memory is
 * proportional to what is live (and to the stacks), never to the trace;
 * nothing is printed.
 *
 * Instants are named by main-stream event number: the events of EVENTS
 * records without the SIDE flag, in file order (LATE ones where they
 * stand), counted from 1 as the replay applies them. "After event N" is
 * the state once event N is applied; N = 0 is before any event. A pass
 * that wants to name an instant counts the same way (gmt_liveset_counts
 * says which events count).
 */
#ifndef GMT_LIVESET_H
#define GMT_LIVESET_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"
#include "engines/gmt_replay.h"

/* Live bytes of one device with one stack id. */
typedef struct gmt_live_group {
	uint32_t stack;          /* 0: no stack recorded                      */
	unsigned owner;          /* the lowest recorded owner (format owner)
				    among its blocks                          */
	uint64_t bytes, count;   /* live bytes and blocks (VMM handles count
				    as blocks)                                */
} gmt_live_group_t;

enum gmt_instant_kind {
	GMT_AT_EVENT = 0,        /* after main-stream event number seq        */
	GMT_AT_PEAK = 1          /* after the first event at which the
				    device's peak of bytes held (the
				    summary's peak.total) reaches bytes       */
};

/* One instant asked for, and what the engine found there. */
typedef struct gmt_instant {
	/* in */
	enum gmt_instant_kind kind;
	int ordinal;             /* the device whose live set is taken        */
	uint64_t seq;            /* GMT_AT_EVENT                              */
	uint64_t bytes;          /* GMT_AT_PEAK                               */
	/* out */
	int taken;               /* the instant came (else groups are empty)  */
	uint64_t at_seq, at_ts;  /* the event it was taken after (at_seq 0:
				    before any; at_ts then 0)                 */
	gmt_live_group_t *groups;   /* by stack, largest first (bytes, then
				       count, then stack id); owned          */
	size_t n_groups;
} gmt_instant_t;

/* Replays the trace at path and fills every instant in at[] (which may be
 * in any order; several may name the same moment). Decoding stops at the
 * trace's end or damage; instants never reached stay untaken. Returns 0,
 * or -ENOMEM (then res->status is GMT_DECODE_STOPPED); res gets the
 * decoder's outcome. */
int gmt_liveset_run(const char *path, gmt_instant_t *const *at, size_t n, gmt_decode_result_t *res);

/* The same inside a caller's own pass: the engine observes the replay rp
 * (its observer, until gmt_liveset_free) and the caller hands every
 * decoded batch of events to gmt_liveset_events instead of the replay's
 * events callback (which it calls). maxima: also find every device's peak
 * (gmt_liveset_finish). NULL when out of memory. */
typedef struct gmt_liveset gmt_liveset_t;
gmt_liveset_t *gmt_liveset_new(gmt_replay_t *rp, gmt_instant_t *const *at, size_t n, int maxima);
/* Returns what the replay's events callback returns (nonzero: stop). */
int gmt_liveset_events(gmt_liveset_t *l, const gmt_devent_t *ev, size_t n, unsigned flags);
/* After the last event: with maxima, one instant per device of ordinal
 * >= 0 whose peak is above 0, by ordinal, kind GMT_AT_PEAK with bytes =
 * the peak and the live set at it (an array the caller frees, and each
 * instant's groups with gmt_instant_clear). A device whose peak rose more
 * than gmt_liveset_max_rises times (a block's generation is 32 bits) is
 * left out: the caller takes its peak by the bytes, in another pass.
 * Returns 0 or -ENOMEM. */
int gmt_liveset_finish(gmt_liveset_t *l, gmt_instant_t **maxima, size_t *n_maxima);
void gmt_liveset_free(gmt_liveset_t *l);

/* UINT32_MAX - 1; tests lower it to exercise the other way. */
extern uint32_t gmt_liveset_max_rises;

/* Whether an event of an EVENTS record with these flags counts as a
 * main-stream event for instants. */
static inline int gmt_liveset_counts(unsigned flags)
{
	return !(flags & GMT_EVENTS_SIDE);
}

/* Frees an instant's groups (the instant itself is the caller's). */
void gmt_instant_clear(gmt_instant_t *at);

#endif /* GMT_LIVESET_H */
