/*
 * gmt_leads.c - phase names to the measurement protocol's leads
 * (gmt_leads.h).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "gmt_leads.h"

static const char *const keys[GMT_LEAD_COUNT] = {
	[GMT_LEAD_EVALUATION] = "evaluation",
	[GMT_LEAD_LOADING] = "loading",
	[GMT_LEAD_GENERATION] = "generation",
	[GMT_LEAD_BACKWARD] = "backward",
};

static const char *const texts[GMT_LEAD_COUNT] = {
	[GMT_LEAD_EVALUATION] = "in evaluation, look at the evaluation batch size",
	[GMT_LEAD_LOADING] = "while loading, look at the weights: their format (dtype, quantisation) "
			     "and a temporary copy held while loading (a state dict beside the model, "
			     "a conversion)",
	[GMT_LEAD_GENERATION] = "while generating, look at context length and concurrency: the KV "
				"cache grows with tokens x concurrent sequences",
	[GMT_LEAD_BACKWARD] = "in the backward pass, look at the microbatch size, the activations "
			      "kept for the backward pass and activation checkpointing",
};

static const char *const defaults[GMT_LEAD_COUNT] = {
	[GMT_LEAD_EVALUATION] = "*eval*,*valid*,*test*",
	[GMT_LEAD_LOADING] = "*load*,*weight*,*checkpoint*,*restore*,*init*",
	[GMT_LEAD_GENERATION] = "*generat*,*decod*,*prefill*,*infer*,*sampl*,*serv*",
	[GMT_LEAD_BACKWARD] = "*backward*,*train*,*step*,*optim*,*grad*",
};

static int set(gmt_leads_t *l, int cat, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	l->n[cat] = 0;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len) {
			if (l->n[cat] == GMT_LEADS_MAX_GLOBS || len >= sizeof(l->globs[cat][0])) {
				snprintf(err, errlen, "--lead %s: at most %d patterns of at most %zu characters",
					 keys[cat], GMT_LEADS_MAX_GLOBS, sizeof(l->globs[cat][0]) - 1);
				return -1;
			}
			memcpy(l->globs[cat][l->n[cat]], p, len);
			l->globs[cat][l->n[cat]++][len] = 0;
		}
		p += len + (comma != NULL);
	}
	return 0;
}

void gmt_leads_default(gmt_leads_t *l)
{
	memset(l, 0, sizeof(*l));
	for (int c = 0; c < GMT_LEAD_COUNT; c++)
		set(l, c, defaults[c], NULL, 0);
}

int gmt_leads_rule(gmt_leads_t *l, const char *rule, char *err, size_t errlen)
{
	const char *eq = rule ? strchr(rule, '=') : NULL;

	if (eq) {
		for (int c = 0; c < GMT_LEAD_COUNT; c++)
			if (strlen(keys[c]) == (size_t)(eq - rule) && !strncmp(rule, keys[c], (size_t)(eq - rule)))
				return set(l, c, eq + 1, err, errlen);
	}
	snprintf(err, errlen, "--lead: expected CATEGORY=GLOB[,GLOB...] with CATEGORY one of "
		 "evaluation, loading, generation, backward; got '%s'", rule ? rule : "");
	return -1;
}

int gmt_leads_classify(const gmt_leads_t *l, const char *phase)
{
	if (!phase || !*phase)
		return GMT_LEAD_NONE;
	for (int c = 0; c < GMT_LEAD_COUNT; c++)
		for (int i = 0; i < l->n[c]; i++)
			if (fnmatch(l->globs[c][i], phase, FNM_CASEFOLD) == 0)
				return c;
	return GMT_LEAD_NONE;
}

const char *gmt_lead_key(int lead)
{
	return lead >= 0 && lead < GMT_LEAD_COUNT ? keys[lead] : "none";
}

const char *gmt_lead_text(int lead)
{
	return lead >= 0 && lead < GMT_LEAD_COUNT ? texts[lead] : NULL;
}
