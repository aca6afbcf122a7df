/*
 * gmt_env.c - what a run was (gmt_env.h), from its records: modules, META,
 * the HEADER's variables and the DEVICE records (through the summary).
 */
#include "model/gmt_env.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/gmt_replay.h"

static int add(gmt_env_item_t **a, size_t *n, const char *key, size_t key_len, const char *value,
	       size_t value_len, const char *source)
{
	gmt_env_item_t *x = realloc(*a, (*n + 1) * sizeof(**a));
	if (!x)
		return -ENOMEM;
	*a = x;
	x[*n].key = strndup(key, key_len);
	x[*n].value = strndup(value ? value : "", value ? value_len : 0);
	x[*n].source = source;
	if (!x[*n].key || !x[*n].value) {
		free(x[*n].key);
		free(x[*n].value);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

static int item(gmt_env_t *e, const char *key, const char *value)
{
	return add(&e->items, &e->n, key, strlen(key), value, value ? strlen(value) : 0, NULL);
}

static const char *base_of(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p ? p : "";
}

int gmt_env_module(gmt_env_t *e, const gmt_module_t *m)
{
	char key[512], val[1024], bid[96];
	size_t n = 0;
	for (size_t i = 0; i < m->build_id_len && n + 3 < sizeof(bid); i++)
		n += (size_t)snprintf(bid + n, sizeof(bid) - n, "%02x", m->build_id[i]);
	bid[n] = 0;
	if (!strcmp(m->path, "[vdso]"))
		return 0;
	snprintf(key, sizeof(key), "module %s", m->soname && *m->soname ? m->soname : base_of(m->path));
	snprintf(val, sizeof(val), "file %s, build id %s", m->file && *m->file ? base_of(m->file) : base_of(m->path),
		 n ? bid : "none");
	return item(e, key, val);
}

/* META keys gpumemtrace writes itself (schemas/trace-format.md, "META
 * keys"); every other key is a dimension the program recorded. */
static int own_key(const char *k)
{
	static const char *const own[] = { "torch_version", "torch_cuda_version", "allocator_backend",
					   "pytorch_cuda_alloc_conf", "companion_history", "companion_warning" };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

int gmt_env_meta(gmt_env_t *e, const gmt_kv_t *kv, size_t n)
{
	char key[512];
	const char *rt_file = NULL, *rt_ver = NULL, *nc_file = NULL, *nc_ver = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "cuda_runtime_file"))
			rt_file = kv[i].value;
		else if (!strcmp(kv[i].key, "cuda_runtime_version"))
			rt_ver = kv[i].value;
		else if (!strcmp(kv[i].key, "nccl_file"))
			nc_file = kv[i].value;
		else if (!strcmp(kv[i].key, "nccl_version"))
			nc_ver = kv[i].value;
	}
	if (rt_ver) {
		snprintf(key, sizeof(key), "cuda_runtime_version (%s)", base_of(rt_file));
		return item(e, key, rt_ver);
	}
	if (nc_ver) {
		snprintf(key, sizeof(key), "nccl_version (%s)", base_of(nc_file));
		return item(e, key, nc_ver);
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "companion_warning"))
			continue;
		snprintf(key, sizeof(key), "meta %s", kv[i].key);
		if (item(e, key, kv[i].value))
			return -ENOMEM;
		if (!own_key(kv[i].key) &&
		    add(&e->dims, &e->n_dims, kv[i].key, strlen(kv[i].key), kv[i].value,
			strlen(kv[i].value), "program"))
			return -ENOMEM;
	}
	return 0;
}

/* Variables that change from run to run without meaning anything. */
static int volatile_var(const char *k)
{
	static const char *const v[] = { "GPUMEMTRACE_OUTPUT", "LD_PRELOAD", "NVTX_INJECTION64_PATH",
					 "MASTER_PORT", "GPUMEMTRACE_TEST_FAIL_WRITES", "GPUMEMTRACE_TRACE_LIST" };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(k, v[i]))
			return 1;
	return 0;
}

/* GPUMEMTRACE_META: KEY=VALUE lines (scripts/gpumemtrace.in --meta). */
static int launcher_dims(gmt_env_t *e, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (len && add(&e->dims, &e->n_dims, p, eq ? (size_t)(eq - p) : len, eq ? eq + 1 : "",
			       eq ? len - (size_t)(eq + 1 - p) : 0, "launcher"))
			return -ENOMEM;
		p += len + (nl != NULL);
	}
	return 0;
}

int gmt_env_summary(gmt_env_t *e, const gmt_summary_t *s)
{
	char key[512], val[256];
	int rc = item(e, "host", s->host);
	for (size_t i = 0; !rc && i < s->n_env; i++) {
		if (!strcmp(s->env_keys[i], "GPUMEMTRACE_META"))
			rc = launcher_dims(e, s->env_values[i]);
		if (rc || volatile_var(s->env_keys[i]))
			continue;
		snprintf(key, sizeof(key), "env %s", s->env_keys[i]);
		rc = item(e, key, s->env_values[i]);
	}
	for (size_t i = 0; !rc && i < s->n_dev; i++) {
		const gmt_dev_summary_t *d = s->dev[i];
		if (!d || d->ordinal < 0 || !d->has_record)
			continue;
		snprintf(key, sizeof(key), "device %d name", d->ordinal);
		rc = item(e, key, d->name);
		snprintf(key, sizeof(key), "device %d total_bytes", d->ordinal);
		snprintf(val, sizeof(val), "%" PRIu64, d->total_bytes);
		rc = rc ? rc : item(e, key, val);
		snprintf(key, sizeof(key), "device %d driver_version", d->ordinal);
		snprintf(val, sizeof(val), "%d", d->driver_version);
		rc = rc ? rc : item(e, key, val);
		snprintf(key, sizeof(key), "device %d uuid", d->ordinal);
		size_t n = 0;
		for (int b = 0; b < 16; b++)
			n += (size_t)snprintf(val + n, sizeof(val) - n, "%02x", d->uuid[b]);
		rc = rc ? rc : item(e, key, val);
	}
	return rc;
}

void gmt_env_free(gmt_env_t *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->items[i].key);
		free(e->items[i].value);
	}
	for (size_t i = 0; i < e->n_dims; i++) {
		free(e->dims[i].key);
		free(e->dims[i].value);
	}
	free(e->items);
	free(e->dims);
	memset(e, 0, sizeof(*e));
}
