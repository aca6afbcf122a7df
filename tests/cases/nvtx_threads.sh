#!/bin/sh
# Phase boundaries read the device only on a thread that makes CUDA calls
# itself: tests/routes/nvtx_threads.c opens a range on a thread that only
# made the context current (as the driver's host-function thread, where no
# CUDA call is allowed), then on the main thread. With every boundary
# sampled (GPUMEMTRACE_BOUNDARY_SAMPLE_US=0): a sample right before each of
# "main"'s two RANGE events, none before "worker"'s.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
NVTX_INJECTION64_PATH="$PRELOAD" GPUMEMTRACE_BOUNDARY_SAMPLE_US=0 run_traced "$BUILD/tests/nvtx_threads" > out.txt ||
	{ cat out.txt >&2; fail "exit status $?"; }
assert_eq "done" "$(cat out.txt)" "program output"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump"
main=$(sed -n 's/^STRING id=\([0-9]*\) text=main$/\1/p' dump.txt)
worker=$(sed -n 's/^STRING id=\([0-9]*\) text=worker$/\1/p' dump.txt)
[ -n "$main" ] && [ -n "$worker" ] || fail "range names not in the trace"
# Per range event: its name (the begin's; a pop names none, so the
# thread's open range) and whether a sample of the same thread came right
# before it.
awk '$1 == "EV" {
	split($4, th, "="); t = th[2]
	if ($2 == "range_begin" || $2 == "range_end") {
		split($NF, a, "="); name = a[2] % 4294967296
		if ($2 == "range_begin") open[t] = name; else name = open[t]
		print $2, name, (prev[t] == "meminfo" || prev[t] == "pool_used") ? "sampled" : "not"
	}
	prev[t] = $2 }' dump.txt > ranges.txt
assert_eq "range_begin $worker not
range_end $worker not
range_begin $main sampled
range_end $main sampled" "$(cat ranges.txt)" "samples before the boundaries"
exit 0
