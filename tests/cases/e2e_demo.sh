# End to end: the demo workload (tests/routes/demo_workload.c) allocates
# through the runtime, the driver's cuGetProcAddress_v2 with the per-thread
# flag, cudaGetDriverEntryPointByVersion + virtual memory, NCCL and a second
# thread. Its peak and composition are known by construction (see the
# workload's header comment); its independent per-kind maxima add up to more
# than the true peak, and the analyzer must report the true one.
. "$ROOT/tests/lib.sh"
MiB=1048576
run_fake "$BUILD/tests/demo_workload" > plain.out; rc_plain=$?
mkdir -p traces
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -o "$TESTDIR/traces" "$BUILD/tests/demo_workload" \
	> traced.out 2> launcher.err; rc_traced=$?
assert_eq 0 "$rc_plain" "exit status without the preload"
assert_eq 0 "$rc_traced" "exit status under the launcher"
cmp plain.out traced.out || fail "the program's output changed under the tracer"
assert_contains plain.out "step3  device used 2054 MiB"
trace=$(the_trace)
assert_contains launcher.err "gpumemtrace: trace written to $TESTDIR/traces/"
assert_contains launcher.err "summary $TESTDIR/traces/"

"$ANALYZE" summary "$trace" > summary.txt || fail "summary exit status $?"
assert_contains summary.txt "ended cleanly (END record)"
assert_contains summary.txt "Peak device bytes held by live allocations: $((2054 * MiB)) B (2.01 GiB)"
assert_contains summary.txt "by kind: plain 0 B, stream_ordered $((1280 * MiB)) B (1.25 GiB), vmm_physical $((774 * MiB)) B (774.00 MiB), managed 0 B, array 0 B"
assert_contains summary.txt "by owner: application $((2048 * MiB)) B (2.00 GiB), nccl $((6 * MiB)) B (6.00 MiB)"
assert_contains summary.txt "sum of the maxima: $((3078 * MiB)) B (3.01 GiB) (a bound, not a moment)"
assert_contains summary.txt "requested 68719476736 B (64.00 GiB), plain via cudaMalloc, owner application, stream 0x0, result 2 CUDA_ERROR_OUT_OF_MEMORY"
assert_contains summary.txt "peak $((64 * MiB)) B (64.00 MiB)"
if grep -q " GB\b" summary.txt; then fail "a bare GB in the report"; fi

"$ANALYZE" summary --json "$trace" > summary.json || fail "summary --json exit status $?"
python3 - "$ROOT/schemas/report.schema.json" summary.json <<'PY' || fail "JSON values"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2]))
jsonschema.validate(j, schema)
MiB = 1 << 20
t = j["traces"][0]
def eq(exp, act, what):
    if exp != act:
        sys.exit(f"{what}: expected {exp!r}, got {act!r}")
eq("clean", t["status"], "status")
d = t["devices"][0]
p = d["peak"]
eq(2054 * MiB, p["bytes"], "peak")
eq({"unknown": 0, "plain": 0, "stream_ordered": 1280 * MiB, "vmm_physical": 774 * MiB, "managed": 0, "array": 0}, p["by_kind"], "peak by kind")
eq({"application": 2048 * MiB, "nccl": 6 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, p["by_owner"], "peak by owner")
m = d["independent_maxima"]["by_kind"]
eq(1024 * MiB, m["plain"]["bytes"], "max plain")
eq(1280 * MiB, m["stream_ordered"]["bytes"], "max stream-ordered")
eq(774 * MiB, m["vmm_physical"]["bytes"], "max vmm")
eq(3078 * MiB, d["independent_maxima"]["sum_bytes"], "sum of maxima")
eq(0, d["final"]["bytes"], "final")
f = t["failed_allocations"]
eq(1, f["total"], "failed allocations")
eq(64 * 1024 * MiB, f["items"][0]["requested_bytes"], "failed request")
eq(2, f["items"][0]["result"], "failed result")
eq(2054 * MiB, f["items"][0]["live_on_device"]["bytes"], "live at the failure")
eq(64 * MiB, t["host_pinned"]["peak_bytes"], "host pinned peak")
eq(0, sum(t["anomalies"].values()), "anomalies")
eq(0, t["drops"]["events"], "dropped events")
PY
