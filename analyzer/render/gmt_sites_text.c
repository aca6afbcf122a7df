/*
 * gmt_sites_text.c - the sites model (model/gmt_sites_model.h) as text.
 */
#include <inttypes.h>

#include "model/gmt_sites_model.h"
#include "render/gmt_render.h"

void gmt_render_frame_text(FILE *o, const gmt_frame_t *f)
{
	fputs("          ", o);
	gmt_text_str(o, f->text ? f->text : f->name);
	if (f->text) {
		fputc('\n', o);
		return;
	}
	if (f->file) {
		fprintf(o, " at ");
		gmt_text_str(o, f->file_base);
		fprintf(o, ":%u", f->line);
	}
	if (f->inlined)
		fputs(" (inlined)", o);
	if (f->module && f->symbolised) {
		fputs(" in ", o);
		gmt_text_str(o, f->module_base);
	}
	fputc('\n', o);
}

static void t_frames(FILE *o, const gmt_stack_view_t *st)
{
	for (size_t i = 0; i < st->n; i++)
		gmt_render_frame_text(o, &st->frames[i]);
}

static void t_site(FILE *o, const gmt_site_t *s, size_t rank)
{
	char b[64];
	fprintf(o, "    #%zu  %s  %" PRIu64 " %s", rank, gmt_fmt_bytes(b, sizeof(b), s->bytes), s->count,
		s->count == 1 ? "block" : "blocks");
	if (s->has_share)
		fprintf(o, "  %.2f%% of the peak", s->percent);
	fprintf(o, "  owner %s (stack: %s)", s->owner_key, s->st->owner_key);
	for (size_t i = 0; i < s->n_ids; i++)
		fprintf(o, "%s%u", i ? "+" : "  stacks ", s->ids[i]);
	fputc('\n', o);
	if (!s->st->recorded) {
		fprintf(o, "          (no stack recorded)\n");
		return;
	}
	t_frames(o, s->st);
}

/* A framework site: its stack as text frames (a TEXT_STACK), or
 * symbolised (a native STACK), or none. */
static void t_fw_site(FILE *o, const gmt_site_t *s, size_t rank)
{
	char b[64];
	fprintf(o, "    #%zu  %s  %" PRIu64 " %s  %.2f%% of the peak", rank,
		gmt_fmt_bytes(b, sizeof(b), s->bytes), s->count, s->count == 1 ? "block" : "blocks",
		s->percent);
	if (s->stack)
		fprintf(o, "  stack %u", s->stack);
	fputc('\n', o);
	if (!s->st->recorded) {
		fprintf(o, "          (no stack recorded)\n");
		return;
	}
	t_frames(o, s->st);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* lead, "+S s after the first event (UTC)", a newline, and the phase line
 * when the trace's phases were looked up. */
static void t_when(FILE *o, const gmt_sites_model_t *m, const gmt_sites_when_t *w, const char *lead,
		   const char *indent)
{
	char b[64];
	fprintf(o, "%s%+.9f s after the first event", lead, w->since_s);
	if (w->has_utc)
		fprintf(o, " (%s)", gmt_fmt_utc(b, sizeof(b), w->utc_ns));
	fputc('\n', o);
	if (!m->phases_looked_up)
		return;
	if (!w->phase.in_phase) {
		fprintf(o, "%sin no phase occurrence\n", indent);
		return;
	}
	fprintf(o, "%sin phase \"", indent);
	gmt_text_str(o, w->phase.name);
	fprintf(o, "\" occurrence %" PRIu64 " (%s)\n", w->phase.k, w->phase.k == 1 ? "cold" : "warm");
}

void gmt_sites_text(FILE *o, const gmt_sites_model_t *m)
{
	char b[64];
	fputs("trace ", o);
	gmt_text_str(o, m->file);
	fprintf(o, " (%s)\n", m->status_key);
	if (m->framework && !m->n_fwdevs)
		fputs("  the framework held no block (no FW_ALLOC events)\n", o);
	for (size_t k = 0; k < m->n_fwdevs; k++) {
		const gmt_sites_dev_t *d = &m->fwdevs[k];
		fprintf(o, "\ndevice %d: framework peak %s allocated at ts %" PRIu64 " ns", d->ordinal,
			gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts);
		t_when(o, m, &d->when, ", ", "  ");
		fprintf(o, "  framework blocks live at the peak, by stack (%zu site%s%s):\n", d->live.n,
			plural(d->live.n), d->live.more ? ", largest listed" : "");
		for (size_t i = 0; i < d->live.n_listed; i++)
			t_fw_site(o, &d->live.sites[i], i + 1);
	}
	if (!m->n_devs && !m->framework)
		fputs("  no device memory was held\n", o);
	for (size_t k = 0; k < m->n_devs && !m->framework; k++) {
		const gmt_sites_dev_t *d = &m->devs[k];
		fprintf(o, "\ndevice %d: peak %s at ts %" PRIu64 " ns", d->ordinal,
			gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts);
		t_when(o, m, &d->when, ", ", "  ");
		fprintf(o, "  live at the peak, by call site (%zu site%s%s):\n", d->live.n,
			plural(d->live.n), d->live.more ? ", largest listed" : "");
		for (size_t i = 0; i < d->live.n_listed; i++)
			t_site(o, &d->live.sites[i], i + 1);
		fputs("  allocated most over the run:\n", o);
		for (size_t i = 0; i < d->top.n_listed; i++)
			t_site(o, &d->top.sites[i], i + 1);
	}
	if (m->phase) {
		fputs("\nphase ", o);
		gmt_text_str(o, m->phase);
		fprintf(o, ": %" PRIu64 " occurrence%s%s\n", m->occ_total, m->occ_total == 1 ? "" : "s",
			m->occ_more ? " (first ones listed)" : "");
	}
	for (size_t i = 0; i < m->n_occs; i++) {
		const gmt_sites_occ_t *oc = &m->occs[i];
		if (m->framework) {
			fprintf(o, "  occurrence %" PRIu64 " (ts %" PRIu64 " to %" PRIu64 " ns%s)%s\n", oc->k,
				oc->begin_ts, oc->end_ts, oc->ended ? "" : ", unterminated",
				oc->n_fwdevs ? "" : ": the framework held no block");
			for (size_t k = 0; k < oc->n_fwdevs; k++) {
				const gmt_sites_dev_t *d = &oc->fwdevs[k];
				fprintf(o, "  device %d: framework peak in the occurrence %s allocated at ts %" PRIu64
					" ns (%zu site%s%s):\n", d->ordinal, gmt_fmt_bytes(b, sizeof(b), d->peak),
					d->peak_ts, d->live.n, plural(d->live.n), d->live.more ? ", largest listed" : "");
				for (size_t q = 0; q < d->live.n_listed; q++)
					t_fw_site(o, &d->live.sites[q], q + 1);
			}
			continue;
		}
		fprintf(o, "  occurrence %" PRIu64 " (ts %" PRIu64 " to %" PRIu64 " ns%s)%s\n", oc->k,
			oc->begin_ts, oc->end_ts, oc->ended ? "" : ", unterminated",
			oc->n_devs ? "" : ": no device memory was held");
		for (size_t k = 0; k < oc->n_devs; k++) {
			const gmt_sites_dev_t *d = &oc->devs[k];
			fprintf(o, "  device %d: peak in the occurrence %s at ts %" PRIu64 " ns (%zu site%s%s):\n",
				d->ordinal, gmt_fmt_bytes(b, sizeof(b), d->peak), d->peak_ts, d->live.n,
				plural(d->live.n), d->live.more ? ", largest listed" : "");
			for (size_t q = 0; q < d->live.n_listed; q++)
				t_site(o, &d->live.sites[q], q + 1);
		}
	}
	fprintf(o, "\nfailed allocations: %" PRIu64 "%s\n", m->fails_total,
		m->fails_more ? " (first ones listed)" : "");
	for (size_t i = 0; i < m->n_fails; i++) {
		const gmt_sites_fail_t *f = &m->fails[i];
		const char *res = f->result_name;
		fprintf(o, "    ts %" PRIu64 " ns  device %d  %s  %s  result %u%s%s%s  owner %s (stack: %s)\n",
			f->ts, f->device, gmt_fmt_bytes(b, sizeof(b), f->size), f->api_key, f->result,
			res ? " (" : "", res ? res : "", res ? ")" : "", f->owner_key, f->st->owner_key);
		t_when(o, m, &f->when, "      at ", "      ");
		if (f->st->kind == GMT_STACK_NATIVE)
			t_frames(o, f->st);
	}
}

void gmt_sites_text_end(FILE *o, const gmt_sites_totals_t *t)
{
	fprintf(o, "\nsymbolisation: %" PRIu64 " distinct addresses, %" PRIu64 " files, %.3f s%s\n",
		t->addresses, t->files, t->seconds, t->symbols ? "" : " (off: --no-symbols)");
}
