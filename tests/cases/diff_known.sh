#!/bin/sh
# `gpumemtrace-analyze diff` on the two runs of diff_workload that
# diff_trace.sh pins (tests/routes/lib/diff_main.c): A on driver 13000 with
# NCCL_BUFFSIZE 4 MiB, a 256 MiB context and libdiffws.so as built; B on
# driver 13010 (NCCL 22903) with 8 MiB, 512 MiB and the library rebuilt
# (another build id, its function at another offset). Exact: the
# environment's differences (driver, NCCL_BUFFSIZE, NCCL version, the
# library's build id) and nothing else; the context +256 MiB; the peak
# +32 MiB; per phase occurrence the coinciding peak (+32 MiB in both steps,
# load unchanged) and outside by owner (nccl +4 MiB); per site at the peak
# the workspace +28 MiB, matched across the rebuilt library by its
# function, and NCCL's buffers +4 MiB; --fail-above both ways (exit 3 above,
# 0 below); directories of one job's traces paired by RANK; a run against
# itself: nothing changes. JSON valid against the schema.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
MiB=1048576
mkdir A B
cp "$BUILD/tests/diff_v1/libdiffws.so" A/ && cp "$BUILD/tests/diff_v2/libdiffws.so" B/ || fail "copy"
: > listA; : > listB  # the launcher's list differs every run: never a difference
NCCL_BUFFSIZE=$((4 * MiB)) GMT_FAKE_CONTEXT_BYTES=$((256 * MiB)) RANK=0 GPUMEMTRACE_STACK_DEPTH=32 \
	GPUMEMTRACE_TRACE_LIST="$TESTDIR/listA" run_traced "$BUILD/tests/diff_workload" "$TESTDIR/A/libdiffws.so" > a.out || fail "run A"
mv "$(the_trace)" A/ || fail "move A"
NCCL_BUFFSIZE=$((8 * MiB)) GMT_FAKE_CONTEXT_BYTES=$((512 * MiB)) GMT_FAKE_DRIVER_VERSION=13010 \
	GMT_FAKE_NCCL_VERSION=22903 RANK=0 GPUMEMTRACE_STACK_DEPTH=32 GPUMEMTRACE_TRACE_LIST="$TESTDIR/listB" \
	run_traced "$BUILD/tests/diff_workload" "$TESTDIR/B/libdiffws.so" > b.out || fail "run B"
mv "$(the_trace)" B/ || fail "move B"
TA=$(ls A/*.gmt) TB=$(ls B/*.gmt)
"$ANALYZE" diff --json --fail-above 2 "$TA" "$TB" > above.json; assert_eq 3 $? "--fail-above 2: exit status"
"$ANALYZE" diff --json --fail-above 3 "$TA" "$TB" > below.json; assert_eq 0 $? "--fail-above 3: exit status"
"$ANALYZE" diff --json A B > dirs.json; assert_eq 0 $? "directories: exit status"
"$ANALYZE" diff --json "$TA" "$TA" > same.json; assert_eq 0 $? "a run against itself"
"$ANALYZE" diff --fail-above 2 "$TA" "$TB" > above.txt; assert_eq 3 $? "text: exit status"
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "diff reports"
import json, sys, jsonschema
MiB = 1 << 20
schema = json.load(open(sys.argv[1]))
def load(name):
    d = json.load(open(name))
    jsonschema.Draft202012Validator(schema).validate(d)
    return d
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
def ab(n):
    return (n["a"], n["b"], n["delta"], n["percent"])
above = load("above.json")
eq((True, "2"), (above["exceeded"], above["fail_above"]), "above: exceeded")
p = above["pairs"][0]
diffs = {e["key"]: (e["a"], e["b"]) for e in p["environment"] if e["differs"]}
eq({"device 0 driver_version", "env NCCL_BUFFSIZE", "nccl_version (libnccl.so.2)", "module libdiffws.so"},
   set(diffs), "environment differences")
eq(("13000", "13010"), diffs["device 0 driver_version"], "driver")
eq((str(4 * MiB), str(8 * MiB)), diffs["env NCCL_BUFFSIZE"], "NCCL_BUFFSIZE")
eq(("22809", "22903"), diffs["nccl_version (libnccl.so.2)"], "NCCL version")
if "build id 0123456789abcdef0123456789abcdef01234567" not in diffs["module libdiffws.so"][1]:
    sys.exit("the rebuilt library's build id: %r" % (diffs["module libdiffws.so"],))
d = p["devices"][0]
eq((256 * MiB, 512 * MiB, 256 * MiB, "+100.0"), ab(d["context_bytes"]), "context")
A1, B1 = (1024 + 2 + 256 + 4 + 64 + 4) * MiB + 4096, (1024 + 2 + 256 + 32 + 64 + 8) * MiB + 4096
A2, B2 = (1024 + 2 + 4 + 4 + 256) * MiB + 4096, (1024 + 2 + 32 + 8 + 256) * MiB + 4096
eq((A1, B1, 32 * MiB, "+2.4"), ab(d["peak_bytes"]), "device peak")
eq(True, d["peak_bytes"]["above_fail_above"], "device peak above 2 %")
ph = {(x["name"], x["occurrence"]): x for x in p["phases"]}
eq({("load", 1), ("step", 1), ("step", 2)}, set(ph), "phase occurrences matched")
eq((1026 * MiB, 1026 * MiB, 0, "0.0"), ab(ph[("load", 1)]["taken_bytes"]), "load")
eq(False, ph[("load", 1)]["taken_bytes"]["above_fail_above"], "load not above")
eq((A1, B1, 32 * MiB, "+2.4"), ab(ph[("step", 1)]["taken_bytes"]), "step #1 (cold)")
eq((A2, B2, 32 * MiB, "+2.5"), ab(ph[("step", 2)]["taken_bytes"]), "step #2 (warm)")
eq(("cold", "warm"), (ph[("step", 1)]["temperature"], ph[("step", 2)]["temperature"]), "temperatures")
eq((6 * MiB, 10 * MiB, 4 * MiB), ab(ph[("step", 2)]["outside_by_owner"]["nccl"])[:3], "step #2 outside nccl")
eq(((A2 - 6 * MiB), (B2 - 10 * MiB), 28 * MiB), ab(ph[("step", 2)]["outside_by_owner"]["application"])[:3],
   "step #2 outside application")
eq(3, p["above_fail_above"], "peaks above 2 %")
sites = p["sites_at_peak"][0]["sites"]
top = sites[0]
eq((4 * MiB, 32 * MiB, 28 * MiB, "+700.0"), ab(top["bytes"]), "the workspace site")
if "libdiffws.so:diffws_workspace" not in top["frames"] or top["unsymbolised"]:
    sys.exit("the workspace site's frames: %s" % top["frames"])
eq((4 * MiB, 8 * MiB, 4 * MiB), ab(sites[1]["bytes"])[:3], "NCCL's buffers")
if not any(f.startswith("libnccl.so.2:") for f in sites[1]["frames"]):
    sys.exit("NCCL's site frames: %s" % sites[1]["frames"])
rest = [ab(s["bytes"])[2] for s in sites[2:]]
eq([0] * len(rest), rest, "the other sites unchanged")
eq(7, len(sites), "sites at the peak")
alloc = p["sites_allocated"][0]["sites"]
eq((4 * MiB, 32 * MiB, 28 * MiB), ab(alloc[0]["bytes"])[:3], "allocated over the run: the workspace")
fw = [s for s in alloc if "diff_workload:forward" in s["frames"]]
eq((512 * MiB, 512 * MiB, 0), ab(fw[0]["bytes"])[:3], "allocated over the run: two forwards")
below = load("below.json")
eq(False, below["exceeded"], "below: not exceeded")
eq(0, below["pairs"][0]["above_fail_above"], "below: none above 3 %")
dirs = load("dirs.json")
eq(1, len(dirs["pairs"]), "directories: one pair")
eq(32 * MiB, dirs["pairs"][0]["devices"][0]["peak_bytes"]["delta"], "directories: the pair by RANK")
same = load("same.json")
changed = [e["key"] for e in same["pairs"][0]["environment"] if e["differs"]]
eq([], changed, "against itself: environment")
deltas = [x["taken_bytes"]["delta"] for x in same["pairs"][0]["phases"]]
eq([0, 0, 0], deltas, "against itself: phases")
PY
# Two jobs of two ranks each: paired by RANK, not by file name.
for j in X Y; do
	rm -rf traces
	GMT_FAKE_DEVICES=2 run_traced "$BUILD/tests/shared_workload" 2 > $j.out || fail "shared_workload ($j)"
	mkdir $j && mv traces/*.gmt $j/ || fail "no traces ($j)"
done
"$ANALYZE" diff --json X Y > ranks.json || fail "diff of two jobs"
assert_eq "rank0 rank0
rank1 rank1" "$(json_get ranks.json '"\n".join(" ".join(__import__("re").search(r"\.(rank\d+)\.", f).group(1) for f in (p["a"], p["b"])) for p in j["pairs"])')" "pairs by RANK"
assert_contains above.txt "* device 0 driver_version: 13000  ->  13010"
assert_contains above.txt "--fail-above 2%: 3 peaks grew by more than that (exit status 3)"
"$ANALYZE" diff "$TA" 2> one.err; assert_eq 2 $? "one run: usage"
assert_contains one.err "needs two runs"
"$ANALYZE" diff --fail-above x "$TA" "$TB" 2> bad.err; assert_eq 2 $? "--fail-above x: usage"
exit 0
