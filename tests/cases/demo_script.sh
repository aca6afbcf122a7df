#!/bin/sh
# make demo teaches (scripts/demo.sh, run here into $TESTDIR, the build dir
# given relative as make gives it): every command runs (summary, sites,
# flamegraph, oom, report, phases) and exits 0; the runtime's frames are
# named although the doubles were found through a relative path; the one
# DISAGREE checkpoint of the phases workload is there, and explained; the
# oom and diff workloads' numbers as the README shows them (shortfall
# 256 MiB in "train" #1; the environment's differences, the peak above
# --fail-above 2), the launcher's trace list never marked as a difference.
. "$ROOT/tests/lib.sh"
cd "$ROOT"
rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1]))' "$BUILD")
sh scripts/demo.sh "$rel" "$TESTDIR/demo" > "$TESTDIR/demo.out" 2>&1 || { tail -20 "$TESTDIR/demo.out" >&2; fail "demo: $?"; }
cd "$TESTDIR"
for c in summary "sites --top 3" flamegraph oom "report -o" "phases --pattern step"; do
	assert_eq 1 "$(grep -c "^== gpumemtrace-analyze $c " demo.out)" "the demo runs $c"
done
assert_contains demo.out "  Peak device bytes held by live allocations: 2153775104 B (2.01 GiB)"
# Taken from the device is the same: the synchronisation of step 2 trims the
# pool to 0 and the preload reads it there, whatever the sampling period (a
# stale 512 MiB reserve made it 2310 MiB in runs fast enough to skip it).
assert_contains demo.out "  Peak device bytes taken from the device, pools' reserve included: 2153775104 B (2.01 GiB)"
assert_contains demo.out "    live allocations 2153775104 B (2.01 GiB) + pools' reserve beyond them 0 B"
assert_contains demo.out "          cudaMalloc at fake_runtime.c:"
grep -q "fakecuda/libcudart.so.13+0x" demo.out && fail "a runtime frame was not named"
assert_contains demo.out "  1 out-of-memory failure, 0 recovered"
[ -s demo/report.html ] || fail "no report.html"
assert_contains demo.out "  allocated: 11 checkpoints, 9 agree to the byte, 1 DISAGREE,"
assert_contains demo.out "DISAGREE by 512 B (0.50 KiB)"
assert_contains demo.out "   The one DISAGREE line below is there on purpose: inside step 2 the toy"
# the post-mortem and the comparison the README shows
assert_contains demo.out "    shortfall      268435456 B (request - free)"
assert_contains demo.out "in phase \"train\" #1 (cold)"
assert_contains demo.out "* env NCCL_BUFFSIZE: 4194304  ->  8388608"
assert_contains demo.out "* device 0 driver_version: 13000  ->  13010"
assert_contains demo.out "+33554432 B    +2.4%  ABOVE --fail-above"
assert_contains demo.out "(exit status 3: a matched peak grew by more than 2 %, as a CI gate would see it)"
grep -q '^\* env GPUMEMTRACE_TRACE_LIST' demo.out && fail "the launcher's trace list marked as a difference"
exit 0
