/*
 * gmt_chrome.c - the Chrome trace writer of gmt_chrome.h, through the one
 * JSON writer (writers/gmt_json.h). A downsampled bucket writes, for each
 * series, its lowest, highest and last value at the instants that set them
 * (in time order, each instant once); a value held from before the bucket
 * was written by an earlier bucket already, as its last.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_buckets.h"
#include "gmt_chrome.h"
#include "gmt_digits.h"
#include "gmt_json.h"

#define NO_TID UINT64_MAX

struct sampling {
	uint64_t pid, instants, bucket_ns;
	size_t events, budget;
	int downsampled;
};

struct gmt_chrome {
	gmt_json_t *j;           /* &own, or the caller's open document */
	gmt_json_t own;
	struct sampling *s;
	size_t n_s, cap_s;
};

struct gmt_chrome_counters {
	gmt_chrome_t *c;
	uint64_t pid, origin, last_t;
	char **names;
	char **prefix;         /* each series' event up to its ts value:
				  {"ph":"C","name":...,"pid":N,"ts": */
	size_t *prefix_len;
	unsigned n;
	gmt_buckets_t *b;      /* NULL: every instant is written */
	uint64_t *prev;        /* the values written last, for instant by instant */
	uint8_t *prev_known;
	int started;
	struct sampling info;
};

gmt_chrome_t *gmt_chrome_open(FILE *out)
{
	gmt_chrome_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->j = &c->own;
	gmt_json_init(c->j, out);
	gmt_json_obj_begin(c->j);
	gmt_json_key(c->j, "traceEvents");
	gmt_json_arr_begin(c->j);
	return c;
}

gmt_chrome_t *gmt_chrome_open_in(gmt_json_t *j)
{
	gmt_chrome_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->j = j;
	gmt_json_key(c->j, "traceEvents");
	gmt_json_arr_begin(c->j);
	return c;
}

/* ns as microseconds with 3 decimals, printf's "%.3f" of ns / 1000 (from
 * the integer below 2^52 ns). */
static void us(gmt_json_t *j, uint64_t ns)
{
	if (ns < (1ull << 52))
		gmt_json_scaled(j, (int64_t)ns, 3);
	else
		gmt_json_fixed(j, (double)ns / 1000.0, 3);
}

static void ts(gmt_json_t *j, uint64_t ns)
{
	gmt_json_key(j, "ts");
	us(j, ns);
}

static void event_begin(gmt_chrome_t *c, const char *ph, const char *name, uint64_t pid,
			uint64_t tid)
{
	gmt_json_t *j = c->j;
	gmt_json_obj_begin(j);
	gmt_json_key(j, "ph");
	gmt_json_str(j, ph);
	gmt_json_key(j, "name");
	gmt_json_str(j, name);
	gmt_json_key(j, "pid");
	gmt_json_u64(j, pid);
	if (tid != NO_TID) {
		gmt_json_key(j, "tid");
		gmt_json_u64(j, tid);
	}
}

static void name_meta(gmt_chrome_t *c, const char *what, uint64_t pid, uint64_t tid,
		      const char *key, const char *value)
{
	event_begin(c, "M", what, pid, tid);
	gmt_json_key(c->j, "args");
	gmt_json_obj_begin(c->j);
	gmt_json_key(c->j, key);
	gmt_json_str(c->j, value);
	gmt_json_obj_end(c->j);
	gmt_json_obj_end(c->j);
}

void gmt_chrome_process_name(gmt_chrome_t *c, uint64_t pid, const char *name)
{
	name_meta(c, "process_name", pid, NO_TID, "name", name);
}

void gmt_chrome_thread_name(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name)
{
	name_meta(c, "thread_name", pid, tid, "name", name);
}

static void args(gmt_json_t *j, uint64_t bytes, const char *const *kv, size_t n)
{
	gmt_json_key(j, "args");
	gmt_json_obj_begin(j);
	if (bytes != UINT64_MAX) {
		gmt_json_key(j, "bytes");
		gmt_json_u64(j, bytes);
	}
	for (size_t i = 0; i < n; i++) {
		gmt_json_key(j, kv[2 * i]);
		gmt_json_str(j, kv[2 * i + 1]);
	}
	gmt_json_obj_end(j);
}

void gmt_chrome_slice(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name,
		      uint64_t ts_ns, uint64_t dur_ns, const char *const *kv, size_t n)
{
	event_begin(c, "X", name, pid, tid);
	ts(c->j, ts_ns);
	gmt_json_key(c->j, "dur");
	us(c->j, dur_ns);
	args(c->j, UINT64_MAX, kv, n);
	gmt_json_obj_end(c->j);
}

void gmt_chrome_instant(gmt_chrome_t *c, uint64_t pid, uint64_t tid, const char *name,
			uint64_t ts_ns, uint64_t bytes, const char *const *kv, size_t n)
{
	event_begin(c, "i", name, pid, tid);
	gmt_json_key(c->j, "s");
	gmt_json_str(c->j, "t");
	ts(c->j, ts_ns);
	args(c->j, bytes, kv, n);
	gmt_json_obj_end(c->j);
}

static void counter(gmt_chrome_counters_t *cc, unsigned s, uint64_t t_ns, uint64_t v)
{
	gmt_json_t *j = cc->c->j;
	const uint64_t at = cc->origin + t_ns;
	char b[512], *p;
	if (cc->prefix && cc->prefix_len[s] <= sizeof(b) - 96 && at < (1ull << 52)) {
		/* one value of text (the same as the tokens below: a token at
		   a time was a fifth of the export) */
		memcpy(b, cc->prefix[s], cc->prefix_len[s]);
		p = gmt_put_scaled(b + cc->prefix_len[s], (int64_t)at, 3);
		if (p) {
			memcpy(p, ",\"args\":{\"value\":", 17);
			p = gmt_put_dec(p + 17, v);
			*p++ = '}';
			*p++ = '}';
			gmt_json_raw(j, b, (size_t)(p - b));
			cc->info.events++;
			return;
		}
	}
	event_begin(cc->c, "C", cc->names[s], cc->pid, NO_TID);
	ts(j, cc->origin + t_ns);
	gmt_json_key(j, "args");
	gmt_json_obj_begin(j);
	gmt_json_key(j, "value");
	gmt_json_u64(j, v);
	gmt_json_obj_end(j);
	gmt_json_obj_end(j);
	cc->info.events++;
}

static void prefixes_free(gmt_chrome_counters_t *cc)
{
	for (unsigned s = 0; cc->prefix && s < cc->n; s++)
		free(cc->prefix[s]);
	free(cc->prefix);
	free(cc->prefix_len);
	cc->prefix = NULL;
	cc->prefix_len = NULL;
}

static void counters_free(gmt_chrome_counters_t *cc)
{
	for (unsigned s = 0; cc->names && s < cc->n; s++)
		free(cc->names[s]);
	free(cc->names);
	prefixes_free(cc);
	gmt_buckets_free(cc->b);
	free(cc->prev);
	free(cc->prev_known);
	free(cc);
}

/* Each series' counter event up to its ts value, as the writer's tokens
   make it (the name escaped once); none when out of memory (the tokens
   then). */
static void prefixes(gmt_chrome_counters_t *cc)
{
	cc->prefix = calloc(cc->n, sizeof(*cc->prefix));
	cc->prefix_len = calloc(cc->n, sizeof(*cc->prefix_len));
	int ok = cc->prefix && cc->prefix_len;
	for (unsigned s = 0; ok && s < cc->n; s++) {
		size_t len = 0;
		FILE *f = open_memstream(&cc->prefix[s], &len);
		if (!f) {
			ok = 0;
			break;
		}
		gmt_json_t j;
		gmt_json_init(&j, f);
		gmt_json_obj_begin(&j);
		gmt_json_kv_str(&j, "ph", "C");
		gmt_json_kv_str(&j, "name", cc->names[s]);
		gmt_json_kv_u64(&j, "pid", cc->pid);
		gmt_json_key(&j, "ts");
		ok = !gmt_json_flush(&j);
		ok = !fclose(f) && ok;
		cc->prefix_len[s] = len;
	}
	if (!ok)
		prefixes_free(cc);
}

gmt_chrome_counters_t *gmt_chrome_counters_begin(gmt_chrome_t *c, uint64_t pid,
						 const char *const *names, unsigned n,
						 uint64_t origin_ns, uint64_t duration_ns,
						 uint64_t instants, size_t budget)
{
	if (!n || !budget) {
		errno = EINVAL;
		return NULL;
	}
	gmt_chrome_counters_t *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	*cc = (gmt_chrome_counters_t){ .c = c, .pid = pid, .origin = origin_ns, .n = n };
	cc->info = (struct sampling){ .pid = pid, .instants = instants, .budget = budget };
	cc->names = calloc(n, sizeof(*cc->names));
	cc->prev = calloc(n, sizeof(*cc->prev));
	cc->prev_known = calloc(n, 1);
	if (!cc->names || !cc->prev || !cc->prev_known)
		goto nomem;
	for (unsigned s = 0; s < n; s++)
		if (!(cc->names[s] = strdup(names[s])))
			goto nomem;
	prefixes(cc);
	if (instants > budget / n) {
		/* three events per series and bucket at most */
		size_t buckets = budget / (3 * (size_t)n);
		cc->b = gmt_buckets_new(n, duration_ns, buckets ? buckets : 1, 0, 1);
		if (!cc->b)
			goto nomem;
		cc->info.downsampled = 1;
		cc->info.bucket_ns = gmt_buckets_level(cc->b, 0)->bucket_ns;
	}
	return cc;
nomem:
	counters_free(cc);
	errno = ENOMEM;
	return NULL;
}

int gmt_chrome_counters_add(gmt_chrome_counters_t *cc, uint64_t t_ns, const uint64_t *value,
			    const uint8_t *known)
{
	if (cc->started && t_ns < cc->last_t)
		return -EINVAL;
	if (cc->b) {
		int rc = gmt_buckets_add(cc->b, t_ns, value, known, 0);
		if (rc)
			return rc;
	} else {
		for (unsigned s = 0; s < cc->n; s++) {
			if (!known[s] || (cc->prev_known[s] && cc->prev[s] == value[s]))
				continue;
			counter(cc, s, t_ns, value[s]);
			cc->prev[s] = value[s];
			cc->prev_known[s] = 1;
		}
	}
	cc->started = 1;
	cc->last_t = t_ns;
	return 0;
}

size_t gmt_chrome_counters_end(gmt_chrome_counters_t *cc)
{
	if (cc->b) {
		gmt_buckets_finish(cc->b);
		const gmt_bucket_level_t *l = gmt_buckets_level(cc->b, 0);
		for (size_t i = 0; i < l->count; i++) {
			uint64_t start = i * l->bucket_ns;
			for (unsigned s = 0; s < cc->n; s++) {
				const gmt_bucket_series_t *x = &l->series[s];
				if (!x->has[i])
					continue;
				struct { int64_t at; uint64_t v; } e[3] = {
					{ x->min_at[i], x->min[i] }, { x->max_at[i], x->max[i] },
					{ x->last_at[i], x->last[i] },
				};
				/* time order; an instant once; none held from before */
				for (int a = 0; a < 3; a++)
					for (int b = a + 1; b < 3; b++)
						if (e[b].at < e[a].at) {
							__typeof__(e[0]) t = e[a];
							e[a] = e[b];
							e[b] = t;
						}
				for (int k = 0; k < 3; k++) {
					if (e[k].at == GMT_BUCKET_BEFORE || (k && e[k].at == e[k - 1].at))
						continue;
					counter(cc, s, start + (uint64_t)e[k].at, e[k].v);
				}
			}
		}
	}
	gmt_chrome_t *c = cc->c;
	size_t events = cc->info.events;
	if (c->n_s == c->cap_s) {
		size_t cap = c->cap_s ? 2 * c->cap_s : 8;
		struct sampling *p = realloc(c->s, cap * sizeof(*p));
		if (p) {
			c->s = p;
			c->cap_s = cap;
		}
	}
	if (c->n_s < c->cap_s)  /* else otherData lacks it: out of memory */
		c->s[c->n_s++] = cc->info;
	counters_free(cc);
	return events;
}

int gmt_chrome_close(gmt_chrome_t *c)
{
	gmt_json_t *j = c->j;
	char label[256];
	for (size_t i = 0; i < c->n_s; i++) {
		const struct sampling *s = &c->s[i];
		if (!s->downsampled)
			continue;
		snprintf(label, sizeof(label),
			 "memory counters downsampled: %" PRIu64 " instants into buckets of %" PRIu64
			 " ns, each keeping every series' lowest, highest and last value (%zu events)",
			 s->instants, s->bucket_ns, s->events);
		name_meta(c, "process_labels", s->pid, NO_TID, "labels", label);
	}
	gmt_json_arr_end(j);
	gmt_json_key(j, "displayTimeUnit");
	gmt_json_str(j, "ns");
	gmt_json_key(j, "otherData");
	gmt_json_obj_begin(j);
	gmt_json_key(j, "generator");
	gmt_json_str(j, "gpumemtrace-analyze export --format chrome");
	gmt_json_key(j, "counters");
	gmt_json_arr_begin(j);
	for (size_t i = 0; i < c->n_s; i++) {
		const struct sampling *s = &c->s[i];
		gmt_json_obj_begin(j);
		gmt_json_key(j, "pid");
		gmt_json_u64(j, s->pid);
		gmt_json_key(j, "instants");
		gmt_json_u64(j, s->instants);
		gmt_json_key(j, "budget");
		gmt_json_u64(j, s->budget);
		gmt_json_key(j, "events");
		gmt_json_u64(j, s->events);
		gmt_json_key(j, "downsampled");
		gmt_json_bool(j, s->downsampled);
		gmt_json_key(j, "bucket_ns");
		if (s->downsampled)
			gmt_json_u64(j, s->bucket_ns);
		else
			gmt_json_null(j);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
	int rc = 0;
	if (j == &c->own) {
		gmt_json_obj_end(j);
		rc = gmt_json_close(j);
	}
	free(c->s);
	free(c);
	return rc;
}
