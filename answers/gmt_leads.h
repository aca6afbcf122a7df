/*
 * gmt_leads.h - from a phase's name to where the measurement protocol says
 * to look when memory ran out in it: loading points at the weights (their
 * format, a temporary copy), generating at context length and concurrency
 * (the KV cache), the backward pass at the microbatch, activations and
 * checkpointing, evaluation at the evaluation batch. A lead, never a
 * verdict: the oom report prints it beside the numbers that support it.
 *
 * Rules are case-insensitive shell patterns (fnmatch) per category, tried
 * in the order of the categories below; the first match wins. Defaults
 * (docs/analyzer.md lists them):
 *   evaluation  *eval* *valid* *test*
 *   loading     *load* *weight* *checkpoint* *restore* *init*
 *   generation  *generat* *decod* *prefill* *infer* *sampl* *serv*
 *   backward    *backward* *train* *step* *optim* *grad*
 * A rule "CATEGORY=GLOB,GLOB..." (the analyzer's --lead option) replaces a
 * category's patterns; "CATEGORY=" turns it off.
 */
#ifndef GMT_LEADS_H
#define GMT_LEADS_H

#include <stddef.h>

enum gmt_lead {
	GMT_LEAD_EVALUATION = 0,
	GMT_LEAD_LOADING,
	GMT_LEAD_GENERATION,
	GMT_LEAD_BACKWARD,
	GMT_LEAD_COUNT,
	GMT_LEAD_NONE = -1
};

#define GMT_LEADS_MAX_GLOBS 16

typedef struct gmt_leads {
	char globs[GMT_LEAD_COUNT][GMT_LEADS_MAX_GLOBS][64];
	int n[GMT_LEAD_COUNT];
} gmt_leads_t;

/* The default rules. */
void gmt_leads_default(gmt_leads_t *l);

/* Applies one "CATEGORY=GLOB[,GLOB...]" rule. 0, or -1 with err. */
int gmt_leads_rule(gmt_leads_t *l, const char *rule, char *err, size_t errlen);

/* The category of a phase name, or GMT_LEAD_NONE. */
int gmt_leads_classify(const gmt_leads_t *l, const char *phase);

/* The category's key ("loading") and its lead, one sentence saying where
 * to look (the report adds the numbers). */
const char *gmt_lead_key(int lead);
const char *gmt_lead_text(int lead);

#endif /* GMT_LEADS_H */
