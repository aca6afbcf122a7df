/*
 * gmt_cmd_sites.c - `sites` and `flamegraph`: who holds the memory at each
 * device's peak, by call site, as a report or as folded stacks
 * (gmt_sites.h). docs/analyzer.md, "Call sites".
 */
#include <string.h>

#include "commands/gmt_commands.h"
#include "gmt_sites.h"

static void sites_init(void *st)
{
	gmt_sites_opts_t *o = st;
	o->top = 20;
}

static void flame_init(void *st)
{
	gmt_sites_opts_t *o = st;
	sites_init(st);
	o->flamegraph = 1;
}

static const gmt_cmd_opt_t sites_opts[] = {
	{ "top", "N", "sites listed per device and list (default 20)\n" },
	{ "phase", "NAME", "also the sites at each device's peak within each occurrence of\n"
			   "phase NAME (phases chosen by the selection)\n" },
	{ "framework", NULL, "the framework's own blocks (allocated, the requested view) at the\n"
			     "peak of each device's (with --phase: of each occurrence's), by\n"
			     "stack (Python frames from the companion shown as text), instead\n"
			     "of the driver-level blocks\n" },
	{ NULL, NULL, NULL },
};

static const gmt_cmd_opt_t flame_opts[] = {
	{ "phase", "NAME", "only the stacks at each device's peak within each occurrence of\n"
			   "phase NAME, rooted at \"NAME #K\"\n" },
	{ "framework", NULL, "the framework's own blocks by stack (as sites --framework)\n" },
	{ NULL, NULL, NULL },
};

static int sites_option(void *st, size_t i, const char *v)
{
	gmt_sites_opts_t *o = st;
	unsigned long long x;
	/* flamegraph's list is sites' without --top */
	if (o->flamegraph)
		i++;
	switch (i) {
	case 0:
		if (gmt_cli_number(&gmt_cmd_sites, "--top", v, 1000000, &x))
			return -1;
		o->top = (unsigned)x;
		return 0;
	case 1:
		o->phase = v;
		return 0;
	default:
		o->framework = 1;
		return 0;
	}
}

static int run(void *st, const gmt_common_t *c, gmt_out_t *out)
{
	return gmt_sites_run(st, c, out);
}

const gmt_cmd_t gmt_cmd_sites = {
	.name = "sites",
	.operands = "TRACE...",
	.help = "Per device, at its coinciding peak: the call sites holding the live bytes\n"
		"(bytes, blocks, share, recorded and stack owner, the symbolised stack), the\n"
		"sites that allocated most over the run, and the stack of every failed\n"
		"allocation.\n",
	.opts = sites_opts,
	.state_size = sizeof(gmt_sites_opts_t),
	.init = sites_init,
	.option = sites_option,
	.run = run,
};

const gmt_cmd_t gmt_cmd_flamegraph = {
	.name = "flamegraph",
	.operands = "TRACE",
	.max_traces = 1,
	.help = "The memory live at each device's peak as folded stacks (flamegraph.pl,\n"
		"speedscope), rooted at \"device N\"; with --json, the same lines as\n"
		"{\"folded\", \"bytes\"} objects.\n",
	.opts = flame_opts,
	.state_size = sizeof(gmt_sites_opts_t),
	.init = flame_init,
	.option = sites_option,
	.run = run,
};
