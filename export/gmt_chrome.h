/*
 * gmt_chrome.h - a writer of Chrome's trace event JSON (docs/exports.md),
 * which Perfetto's UI and chrome://tracing open: `{"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {...}}`.
 *
 * Counters keep every extreme within an event budget: a device's series are
 * written instant by instant when that fits the budget, and otherwise
 * through time buckets (export/gmt_buckets.h) of which each writes, per
 * series, its lowest, highest and last value at their own times. What was
 * downsampled is said in otherData and as a label of the process. Times
 * are ns after an origin the caller chooses (the same for the whole file),
 * written as microseconds with three decimals.
 */
#ifndef GMT_CHROME_H
#define GMT_CHROME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gmt_chrome gmt_chrome_t;
typedef struct gmt_chrome_counters gmt_chrome_counters_t;

/* Starts the document on out; NULL when out of memory. */
gmt_chrome_t *gmt_chrome_open(FILE *out);
/* The same as members of an object the caller has open in j (its own keys
 * beside them: viewers ignore keys they do not know); gmt_chrome_close then
 * leaves the object open and j unclosed. */
struct gmt_json;
gmt_chrome_t *gmt_chrome_open_in(struct gmt_json *j);

/* Metadata: the names the viewers show for a process and a thread. */
void gmt_chrome_process_name(gmt_chrome_t *c, uint64_t pid, const char *name);
void gmt_chrome_thread_name(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name);

/* A complete slice ("X") and an instant ("i", thread scope), each with
   args given as n (key, value) string pairs, and bytes when not
   UINT64_MAX (the "bytes" arg). */
void gmt_chrome_slice(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name,
		      uint64_t ts_ns, uint64_t dur_ns, const char *const *kv, size_t n);
void gmt_chrome_instant(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name,
			uint64_t ts_ns, uint64_t bytes, const char *const *kv, size_t n);

/*
 * The counters of one process (a device): n named series over
 * [origin_ns, origin_ns + duration_ns], of which the caller will give
 * `instants` instants, within `budget` counter events. NULL when out of
 * memory or n or budget is 0.
 */
gmt_chrome_counters_t *gmt_chrome_counters_begin(gmt_chrome_t *c, uint64_t pid,
						 const char *const *names, unsigned n,
						 uint64_t origin_ns, uint64_t duration_ns,
						 uint64_t instants, size_t budget);
/* One instant (ns after the origin, in time order): each series' value and
   whether it is known. Returns 0 or -EINVAL (out of order or range). */
int gmt_chrome_counters_add(gmt_chrome_counters_t *cc, uint64_t t_ns, const uint64_t *value,
			    const uint8_t *known);
/* Writes what was kept and frees cc; returns the number of counter events
   written. */
size_t gmt_chrome_counters_end(gmt_chrome_counters_t *cc);

/* Ends the document (otherData with the downsampling of each process) and
   frees c. Returns 0, -EINVAL or -EIO. Does not close out. */
int gmt_chrome_close(gmt_chrome_t *c);

#ifdef __cplusplus
}
#endif

#endif
