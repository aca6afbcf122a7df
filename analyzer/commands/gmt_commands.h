/*
 * gmt_commands.h - PRIVATE to analyzer/: the rows of the command table
 * (analyzer/cli/gmt_cli.c lists them), one per file of analyzer/commands/.
 * A command file wires engine -> model -> renderer and nothing else.
 */
#ifndef GMT_COMMANDS_H
#define GMT_COMMANDS_H

#include "cli/gmt_cli.h"

extern const gmt_cmd_t gmt_cmd_summary;     /* gmt_cmd_summary.c  */
extern const gmt_cmd_t gmt_cmd_phases;      /* gmt_cmd_timeline.c */
extern const gmt_cmd_t gmt_cmd_curves;      /* gmt_cmd_timeline.c */
extern const gmt_cmd_t gmt_cmd_sites;       /* gmt_cmd_sites.c    */
extern const gmt_cmd_t gmt_cmd_flamegraph;  /* gmt_cmd_sites.c    */
extern const gmt_cmd_t gmt_cmd_oom;         /* gmt_cmd_oom.c      */

#endif /* GMT_COMMANDS_H */
