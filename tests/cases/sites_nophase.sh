#!/bin/sh
# --phase NAME that a trace does not have (a typo) is an error, never an
# empty output and exit 0: flamegraph and sites say which phases the trace
# has, and exit 2 when no trace has NAME; with several traces, one that has
# it keeps the exit status 0 and the others are named.
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
P="$ROOT/tests/frozen/traces/sites_phase.gmt"
K="$ROOT/tests/frozen/traces/known.gmt"
"$ANALYZE" flamegraph --no-symbols --phase nosuchphase "$P" > f.txt 2> f.err
assert_eq 2 $? "flamegraph's exit status"
assert_eq "" "$(cat f.txt)" "flamegraph's output"
assert_eq "gpumemtrace-analyze: $P: no phase \"nosuchphase\"; its phases: \"step\", \"other\"" \
	"$(grep -v symbolisation f.err)" "flamegraph's message"
"$ANALYZE" sites --no-symbols --phase step "$K" > /dev/null 2> s.err
assert_eq 2 $? "sites' exit status, a trace without phases"
assert_eq "gpumemtrace-analyze: $K: no phase \"step\"; it has no phases" "$(cat s.err)" "sites' message"
"$ANALYZE" sites --no-symbols --phase step --json "$K" "$P" > two.json 2> two.err
assert_eq 0 $? "sites' exit status, one trace of two has the phase"
assert_eq "gpumemtrace-analyze: $K: no phase \"step\"; it has no phases" "$(cat two.err)" "sites' message (two traces)"
assert_eq "0 2" "$(json_get two.json '" ".join(str(t["phase"]["occurrences_total"]) for t in j["traces"])')" \
	"occurrences per trace"
exit 0
