/*
 * gmt_sites_folded.c - flamegraph: the folded lines of the sites model
 * (model/gmt_sites_model.h) as text ("STACK BYTES", flamegraph.pl and
 * speedscope) or as JSON (schemas/report.schema.json, "flamegraph_report").
 */
#include <inttypes.h>

#include "model/gmt_sites_model.h"
#include "render/gmt_render.h"

void gmt_sites_folded(FILE *o, const gmt_sites_model_t *m)
{
	for (size_t i = 0; i < m->n_folded; i++)
		fprintf(o, "%s %" PRIu64 "\n", m->folded[i].text, m->folded[i].bytes);
}

void gmt_sites_folded_json(gmt_json_t *j, const gmt_sites_model_t *m)
{
	gmt_json_obj_begin(j);
	gmt_json_kv_str(j, "file", m->file);
	gmt_json_kv_str(j, "status", m->status_key);
	gmt_report_gaps_json_read(j, &m->gaps, &m->res);
	gmt_missing_json_res(j, NULL, &m->res);
	gmt_json_kv_arr_begin(j, "stacks");
	for (size_t i = 0; i < m->n_folded; i++) {
		gmt_json_obj_begin(j);
		gmt_json_kv_str(j, "folded", m->folded[i].text);
		gmt_json_kv_u64(j, "bytes", m->folded[i].bytes);
		gmt_json_obj_end(j);
	}
	gmt_json_arr_end(j);
	gmt_json_obj_end(j);
}

void gmt_sites_folded_end(const gmt_sites_totals_t *t)
{
	fprintf(stderr, "gpumemtrace-analyze: symbolisation: %" PRIu64 " distinct addresses, %" PRIu64
		" files, %.3f s\n", t->addresses, t->files, t->seconds);
}
