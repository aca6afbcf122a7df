#!/bin/sh
# A trace holds no more than it must: the file is mode 0600 whatever the
# umask, and GPUMEMTRACE_CMDLINE keeps the command line (full, the
# default), keeps only the program's name (redact: every later argument
# "<redacted>", their number kept) or leaves it out (none); a misspelt
# value fails closed (redact) with one warning. docs/trace-contents.md.
# A bad numeric setting is said once, too.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog=$BUILD/tests/robust_exit_how
cmdline() { # MODE: runs the program, prints the trace's command line as JSON
	rm -rf traces
	if [ "$1" = unset ]; then
		run_traced "$prog" return 0 2> err.txt || fail "exit status $?"
	else
		GPUMEMTRACE_CMDLINE=$1 run_traced "$prog" return 0 2> err.txt || fail "exit status $?"
	fi
	"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary ($1)"
	json_get s.json 'json.dumps(j["traces"][0]["process"]["cmdline"])'
}
umask 022
assert_eq "[\"$prog\", \"return\", \"0\"]" "$(cmdline unset)" "cmdline by default"
assert_eq 600 "$(stat -c %a "$(the_trace)")" "the trace file's mode"
assert_eq "[\"$prog\", \"return\", \"0\"]" "$(cmdline full)" "cmdline full"
assert_eq "[\"$prog\", \"<redacted>\", \"<redacted>\"]" "$(cmdline redact)" "cmdline redact"
assert_eq 0 "$(grep -c gpumemtrace: err.txt)" "messages"
assert_eq "[]" "$(cmdline none)" "cmdline none"
assert_eq "[\"$prog\", \"<redacted>\", \"<redacted>\"]" "$(cmdline nonee)" "cmdline misspelt"
assert_eq 1 "$(grep -c 'GPUMEMTRACE_CMDLINE=nonee: expected full, redact or none; using redact' err.txt)" "the warning, once"
# Bad settings are said once per process, not once per read of the
# environment (the preload and the tracer both read it).
rm -rf traces
GPUMEMTRACE_STACK_DEPTH=abc run_traced "$prog" return 0 2> err.txt || fail "exit status $?"
assert_eq "gpumemtrace: GPUMEMTRACE_STACK_DEPTH=abc is not a number; using 20" "$(cat err.txt)" "the warning, once"
exit 0
