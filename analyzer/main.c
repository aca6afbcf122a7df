/*
 * main.c - gpumemtrace-analyze: the program is its command line
 * (analyzer/cli/gmt_cli.c, the table of commands in analyzer/commands/).
 * Commands and exit codes are described in docs/analyzer.md.
 */
#include "cli/gmt_cli.h"

int main(int argc, char **argv)
{
	return gmt_cli_main(argc, argv);
}
