#!/bin/sh
# The tracer's descriptors stay out of a daemon-style program's way
# (tests/routes/robust_fds.c): after the program closed every descriptor
# above 2 and opened a pipe and a file of its own on the freed numbers, its
# file holds its 13 bytes, its pipe its 5, the writer does not spin, and the
# trace goes on (the file reopened by its path, said once) with every one
# of the 53 allocations. If the trace file was removed as well, the tracer
# says once that it stops, and the program still runs exactly as without it.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run robust_fds
assert_eq 0 "$ROUTE_RC" "exit status"
assert_contains traced.out 'pipe holds "hello"'
assert_contains traced.out 'cpu while asleep: low'
assert_eq 53 "$(grep -c '^EV alloc ' dump.txt)" "allocations in the trace"
assert_eq 53 "$(grep -c '^EV free ' dump.txt)" "frees in the trace"
grep -q '^END written=[0-9]* dropped=0 late=0$' dump.txt || fail "drops: $(grep '^END' dump.txt)"
assert_eq 1 "$(grep -c 'closed the trace file.s descriptor .* was reopened' traced.err)" "warnings"
assert_eq 1 "$(grep -c gpumemtrace: traced.err)" "messages of ours"
# The trace file and libunwind's pipe were close-on-exec and high.
fd=$(sed -n "s/.*descriptor \([0-9]*\);.*/\1/p" traced.err)
[ "$fd" -ge 900 ] || fail "the trace file's descriptor was $fd"

rm -rf traces
run_fake "$BUILD/tests/robust_fds" unlink > plain2.out 2>&1 || fail "without the preload: $?"
run_traced "$BUILD/tests/robust_fds" unlink > traced2.out 2> traced2.err || fail "with the preload: $?"
cmp plain2.out traced2.out || fail "the program's output changed"
assert_eq 1 "$(grep -c 'cannot be reopened (No such file or directory): tracing stops here' traced2.err)" "warnings"
assert_eq 1 "$(grep -c gpumemtrace: traced2.err)" "messages of ours"
exit 0
