#!/bin/sh
# Drops qualify every result: the demo with the first write of events in
# its trace failing (ENOSPC) loses what that frame held, counted in DROPS records
# and END. Every command (the list from the analyzer's own usage) then says
# on stderr how many events are missing and from when to when, exactly as
# the trace's DROPS records say (gmt-dump), and that the results from
# that time on may be off either way; summary's status line says it too instead of
# a bare "ended cleanly", and its JSON keeps the numbers.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
# The first write of a frame that holds events fails (the hook's "events"
# form: which frames hold events depends on the writer's timing).
rm -rf traces
GPUMEMTRACE_SYNC_SAMPLE_MS=0 GPUMEMTRACE_TEST_FAIL_WRITES=1:ENOSPC:1:events run_traced "$BUILD/tests/demo_workload" > out.txt 2> err.txt ||
	fail "demo_workload: $?"
T=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$T" > dump.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
# The expected numbers, from the records themselves.
set -- $(awk '/^DROPS /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	n += v["count"]; if (f == "" || v["first_ts"] < f) f = v["first_ts"]; if (v["last_ts"] > l) l = v["last_ts"] }
	END { print n + 0, (f == "" ? "-" : f), (l == "" ? "-" : l) }' dump.txt)
n=$1 first=$2 last=$3
[ "$n" -gt 0 ] || fail "no events were dropped: $(grep -c '^DROPS' dump.txt) DROPS records"
assert_eq "$n" "$(sed -n 's/^END .*dropped=\([0-9]*\).*/\1/p' dump.txt)" "END's dropped"
want="gpumemtrace-analyze: $T: $n events missing (dropped by the tracer) between ts $first and $last ns: results from that time on may be off either way (a lost allocation makes them low, a lost free high)"
"$ANALYZE" --help 2>&1 | sed -n 's/^ *\(usage:\)\{0,1\} *gpumemtrace-analyze \([a-z]*\) \[COMMON.*/\2/p' > commands.txt
[ "$(wc -l < commands.txt)" -ge 7 ] || fail "commands: $(cat commands.txt)"
while read -r c; do
	# diff takes two runs: the trace against itself, said once per trace
	if [ "$c" = diff ]; then set -- "$T" "$T"; k=2; else set -- "$T"; k=1; fi
	"$ANALYZE" "$c" --no-symbols "$@" > "$c.out" 2> "$c.err"
	assert_eq 0 $? "$c: exit status"
	assert_eq $k "$(grep -cxF "$want" "$c.err")" "$c: the caveat on stderr ($(cat "$c.err"))"
done < commands.txt
assert_contains summary.out "  ended cleanly (END record), but $n events are missing (dropped) between ts $first and $last ns: the numbers below may be off either way (a lost allocation makes them low, a lost free high)"
# Without drops, no caveat.
rm -rf traces
run_traced "$BUILD/tests/demo_workload" > /dev/null 2>&1 || fail "demo_workload, no failures"
"$ANALYZE" summary "$(the_trace)" > clean.out 2> clean.err || fail "summary"
grep -q "missing" clean.err clean.out && fail "a caveat without drops"
exit 0
