/*
 * gmt_memviz.c - the memory viewer's snapshot of gmt_memviz.h, written once
 * for both encodings: each value goes to the JSON writer or the pickle
 * writer, which take the same shapes (dicts with string keys, lists,
 * strings, integers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_json.h"
#include "gmt_memviz.h"
#include "gmt_pickle.h"

struct gmt_memviz {
	int json;
	gmt_json_t j;
	gmt_pickle_t *p;
	int in_segments;
};

static void dict_begin(gmt_memviz_t *m) { if (m->json) gmt_json_obj_begin(&m->j); else gmt_pickle_dict_begin(m->p); }
static void dict_end(gmt_memviz_t *m) { if (m->json) gmt_json_obj_end(&m->j); else gmt_pickle_dict_end(m->p); }
static void list_begin(gmt_memviz_t *m) { if (m->json) gmt_json_arr_begin(&m->j); else gmt_pickle_list_begin(m->p); }
static void list_end(gmt_memviz_t *m) { if (m->json) gmt_json_arr_end(&m->j); else gmt_pickle_list_end(m->p); }
/* k: a literal (the pickle finds it in its memo by address) */
static void key(gmt_memviz_t *m, const char *k) { if (m->json) gmt_json_key(&m->j, k); else gmt_pickle_str_static(m->p, k); }
/* (every string given to this file stays as it is until gmt_memviz_close:
   the pickle's memo finds it by its address) */
static void str(gmt_memviz_t *m, const char *s) { if (m->json) gmt_json_str(&m->j, s); else gmt_pickle_str_static(m->p, s); }
static void u64(gmt_memviz_t *m, uint64_t v) { if (m->json) gmt_json_u64(&m->j, v); else gmt_pickle_uint(m->p, v); }

static void kv_u64(gmt_memviz_t *m, const char *k, uint64_t v)
{
	key(m, k);
	u64(m, v);
}

static void kv_str(gmt_memviz_t *m, const char *k, const char *v)
{
	key(m, k);
	str(m, v);
}

gmt_memviz_t *gmt_memviz_open(FILE *out, int format)
{
	if (format != GMT_MEMVIZ_JSON && (format < 2 || format > 4)) {
		errno = EINVAL;
		return NULL;
	}
	gmt_memviz_t *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->json = format == GMT_MEMVIZ_JSON;
	if (m->json) {
		gmt_json_init(&m->j, out);
	} else if (!(m->p = gmt_pickle_open(out, format))) {
		free(m);
		return NULL;
	}
	dict_begin(m);
	key(m, "device_traces");
	list_begin(m);
	return m;
}

static void frames(gmt_memviz_t *m, const gmt_memviz_frame_t *f, size_t n)
{
	key(m, "frames");
	list_begin(m);
	for (size_t i = 0; i < n; i++) {
		dict_begin(m);
		kv_str(m, "filename", f[i].filename ? f[i].filename : "");
		kv_u64(m, "line", f[i].line);
		kv_str(m, "name", f[i].name ? f[i].name : "");
		dict_end(m);
	}
	list_end(m);
}

void gmt_memviz_device_begin(gmt_memviz_t *m)
{
	list_begin(m);
}

void gmt_memviz_device_end(gmt_memviz_t *m)
{
	list_end(m);
}

void gmt_memviz_entry(gmt_memviz_t *m, const gmt_memviz_entry_t *e)
{
	dict_begin(m);
	kv_str(m, "action", e->action);
	kv_u64(m, "addr", e->addr);
	kv_u64(m, "size", e->size);
	kv_u64(m, "stream", e->stream);
	kv_u64(m, "time_us", e->time_us);
	frames(m, e->frames, e->n_frames);
	if (!strcmp(e->action, "oom"))
		kv_u64(m, "device_free", e->device_free);
	if (e->category)
		kv_str(m, "category", e->category);
	dict_end(m);
}

static void segments_begin(gmt_memviz_t *m)
{
	if (m->in_segments)
		return;
	list_end(m);  /* device_traces */
	key(m, "segments");
	list_begin(m);
	m->in_segments = 1;
}

static void block(gmt_memviz_t *m, uint64_t size, uint64_t requested, const char *state,
		  const gmt_memviz_frame_t *f, size_t n)
{
	dict_begin(m);
	kv_u64(m, "size", size);
	kv_u64(m, "requested_size", requested);
	kv_str(m, "state", state);
	frames(m, f, n);
	dict_end(m);
}

int gmt_memviz_segment(gmt_memviz_t *m, const gmt_memviz_segment_t *s)
{
	uint64_t at = s->address, end = s->address + s->total_size;
	uint64_t allocated = 0, active = 0, requested = 0;
	for (size_t i = 0; i < s->n_blocks; i++) {
		const gmt_memviz_block_t *b = &s->blocks[i];
		if (b->address < at || b->address > end || b->size > end - b->address)
			return -EINVAL;
		at = b->address + b->size;
		active += b->size;
		requested += b->requested_size;
		if (!strcmp(b->state, "active_allocated"))
			allocated += b->size;
	}
	segments_begin(m);
	dict_begin(m);
	kv_u64(m, "device", s->device);
	kv_u64(m, "address", s->address);
	kv_u64(m, "total_size", s->total_size);
	kv_u64(m, "stream", s->stream);
	kv_str(m, "segment_type", s->segment_type ? s->segment_type : "large");
	kv_u64(m, "allocated_size", allocated);
	kv_u64(m, "active_size", active);
	kv_u64(m, "requested_size", requested);
	frames(m, s->frames, s->n_frames);
	key(m, "blocks");
	list_begin(m);
	at = s->address;
	for (size_t i = 0; i < s->n_blocks; i++) {
		const gmt_memviz_block_t *b = &s->blocks[i];
		if (b->address > at)
			block(m, b->address - at, 0, "inactive", NULL, 0);
		block(m, b->size, b->requested_size, b->state, b->frames, b->n_frames);
		at = b->address + b->size;
	}
	if (at < end)
		block(m, end - at, 0, "inactive", NULL, 0);
	list_end(m);
	dict_end(m);
	return 0;
}

int gmt_memviz_close(gmt_memviz_t *m)
{
	segments_begin(m);
	list_end(m);
	dict_end(m);
	int rc = m->json ? gmt_json_close(&m->j) : gmt_pickle_close(m->p);
	free(m);
	return rc;
}
