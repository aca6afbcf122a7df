# Through the preload: a fork leaves the parent's events in the parent's
# trace only and the child's in its own; a disk that fails (injected ENOSPC)
# never changes what the program does, and the trace says what was lost.
. "$ROOT/tests/lib.sh"
MiB=1048576
run_traced "$BUILD/tests/demo_fork" > out.txt || fail "demo_fork exit status $?"
assert_contains out.txt "child exit 0"
set -- traces/*.gmt
assert_eq 2 "$#" "traces (parent and child)"
for t in "$@"; do
	"$BUILD/tests/tools/gmt-dump" "$t" > "$(basename "$t").dump" || fail "dump $t"
done
parent=""; child=""
for d in *.dump; do
	if grep -q "^EV alloc .* size=$((4 * MiB)) " "$d"; then child=$d; else parent=$d; fi
done
[ -n "$parent" ] && [ -n "$child" ] || fail "cannot tell the parent's trace from the child's"
assert_eq 4 "$(grep -c '^EV alloc ' "$parent")" "allocations in the parent's trace"
assert_eq 3 "$(grep -c "^EV alloc .* size=$MiB " "$parent")" "1 MiB allocations in the parent's trace"
assert_eq 1 "$(grep -c "^EV alloc .* size=$((2 * MiB)) " "$parent")" "2 MiB allocation in the parent's trace"
assert_eq 1 "$(grep -c '^EV alloc ' "$child")" "allocations in the child's trace"
ppid_child=$(sed -n 's/^HEADER pid=[0-9]* ppid=\([0-9]*\).*/\1/p' "$child")
pid_parent=$(sed -n 's/^HEADER pid=\([0-9]*\) .*/\1/p' "$parent")
assert_eq "$pid_parent" "$ppid_child" "the child's header names the parent"
assert_contains "$parent" "STATUS ok clean"
assert_contains "$child" "STATUS ok clean"

# Injected ENOSPC on the 2nd and 3rd write(): the demo runs exactly as
# without the tracer; the trace still decodes cleanly and accounts for every
# event: those written plus those it says it dropped make the clean run's
# count. (Which events fall into the lost frames depends on timing; the
# exact counts per frame are unit_tracer_drops'.) The device is sampled at
# every synchronisation and phase boundary, not at most every 10 ms: a run
# slowed by a loaded machine would otherwise take more samples than the
# other, and the counts would differ by them.
export GPUMEMTRACE_SYNC_SAMPLE_MS=0 GPUMEMTRACE_BOUNDARY_SAMPLE_US=0
rm -rf traces
run_fake "$BUILD/tests/demo_workload" > plain.txt || fail "demo without the preload"
run_traced "$BUILD/tests/demo_workload" > clean.txt || fail "demo traced"
"$ANALYZE" summary --json "$(the_trace)" > clean.json || fail "summary of the clean run"
n_clean=$(json_get clean.json 'j["traces"][0]["end"]["written"]')
rm -rf traces
GPUMEMTRACE_TEST_FAIL_WRITES=2:ENOSPC:2 run_traced "$BUILD/tests/demo_workload" > traced.txt 2> err.txt ||
	fail "demo under a failing disk: exit status $?"
cmp plain.txt traced.txt || fail "the program's output changed under a failing disk"
assert_eq 1 "$(grep -c 'No space left on device' err.txt)" "one warning on stderr"
trace=$(the_trace)
"$ANALYZE" summary --json "$trace" > s.json || fail "summary exit status $?"
python3 - s.json "$n_clean" <<'PY' || fail "drops"
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
n_clean = int(sys.argv[2])
d, end = t["drops"], t["end"]
assert t["status"] == "clean", t["status"]
assert end["written"] + end["dropped"] == n_clean, (end, n_clean)
assert d["events"] == end["dropped"], (d, end)
assert t["events"]["total"] == end["written"], (t["events"]["total"], end)
assert all(x["reason"] == "write_error" and x["errno"] == 28 for x in d["listed"]), d
PY
