#!/bin/sh
# 8 threads x 20000 allocation/free pairs reusing each other's addresses:
# every call is in the trace once, and replayed in file order no address is
# allocated while live or freed while not live (frees are recorded before
# the real free, allocations after the real allocation).
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
# 320,000 events in a burst of a few tens of ms: on a loaded machine the
# writer may need more than GPUMEMTRACE_BUFFER_MS (100 ms) of its own work
# to write them, and the tracer then drops and counts the excess, by design
# (unit_tracer_backlog). What this test checks is order and completeness
# under concurrency: the byte cap alone.
export GPUMEMTRACE_BUFFER_MS=0
route_run route_threads
assert_eq 0 "$ROUTE_RC" "exit status"
awk '$1 == "EV" && ($2 == "alloc" || $2 == "free") {
	split($6, a, "="); addr = a[2]
	if ($2 == "alloc") { n_a++; if (live[addr]) bad++; live[addr] = 1 }
	else { n_f++; if (!live[addr]) bad++; delete live[addr] }
	th[$4] = 1
}
$1 == "EV" && $NF == "late" { late++ }
END {
	for (k in live) left++
	for (k in th) nth++
	printf "allocs=%d frees=%d out_of_order=%d live=%d threads=%d late=%d\n", n_a, n_f, bad, left, nth, late
}' dump.txt > replay.txt
assert_eq "allocs=160000 frees=160000 out_of_order=0 live=0 threads=8 late=0" "$(cat replay.txt)" "replay"
grep -q '^END written=[0-9]* dropped=0 late=0$' dump.txt || fail "drops or late events: $(grep '^END' dump.txt)"
exit 0
