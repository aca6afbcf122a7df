#!/bin/sh
# The program's view of its signal dispositions is unchanged by the
# tracer's flush handlers (tests/routes/robust_signals.c): the nine
# queries answer "default", a library chaining to the previous handler
# finds none and the process goes on (it used to die of SIGINT, 130),
# signal() returns what was there. A disposition set back to the default
# gets the flush back: dying of SIGTERM then, the trace says so.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run robust_signals
assert_eq 0 "$ROUTE_RC" "exit status"
assert_eq 9 "$(grep -c ': default, flags 0, mask empty$' traced.out)" "queries answering the default"
assert_contains traced.out "SIGINT: seen 1, chained 0"
assert_contains traced.out "the library found default before it"
assert_contains traced.out "SIGTERM now has default"
assert_eq "EXIT how=exit value=0" "$(grep '^EXIT ' dump.txt)" "how the process ended"

rm -rf traces
run_fake "$BUILD/tests/robust_signals" die > plain2.out 2>/dev/null
rc1=$?
run_traced "$BUILD/tests/robust_signals" die > traced2.out 2>/dev/null
rc2=$?
assert_eq 143 "$rc1" "exit status without the preload (SIGTERM)"
assert_eq 143 "$rc2" "exit status with the preload (SIGTERM)"
cmp plain2.out traced2.out || fail "output differs"
"$DUMP" "$(the_trace)" > dump2.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump2.txt)" "trace status"
assert_eq "EXIT how=signal value=15" "$(grep '^EXIT ' dump2.txt)" "how the process ended"
assert_eq 2 "$(grep -c '^EV \(alloc\|free\) ' dump2.txt)" "the allocation and its free"
exit 0
