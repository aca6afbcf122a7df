# End to end for phases: tests/routes/phases_workload.c on the doubles with
# the real NVTX3 headers (NVTX_INJECTION64_PATH), a toy caching allocator
# reporting through the framework API (with its own counters before every
# phase boundary: the checkpoints), NCCL and a stream-ordered workspace.
# The values are known by construction: see the workload's header comment.
. "$ROOT/tests/lib.sh"
MiB=1048576
export GMT_FAKE_CONTEXT_BYTES=$((256 * MiB))
run_fake "$BUILD/tests/phases_workload" > plain.txt || fail "untraced: exit status $?"
mkdir -p traces
# Every phase boundary samples the device (GPUMEMTRACE_BOUNDARY_SAMPLE_US=0:
# no spacing), so device used at every start and end is exact.
GPUMEMTRACE_BOUNDARY_SAMPLE_US=0 LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/traces" \
	"$BUILD/tests/phases_workload" > traced.txt || fail "under the launcher: exit status $?"
cmp plain.txt traced.txt || fail "the program's output changed under the tracer"
trace=$(the_trace)
"$ANALYZE" phases --json "$trace" > p.json || fail "phases exit status $?"
"$ANALYZE" phases "$trace" > p.txt || fail "phases (text) exit status $?"
assert_contains p.txt 'Phase "step": 2 occurrences'
assert_contains p.txt "BOUND lines: a sum or difference of maxima reached at different instants"
python3 - "$ROOT/schemas/report.schema.json" p.json <<'PY' || fail "phases JSON"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
MiB = 1 << 20
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
t = j["traces"][0]
eq("clean", t["status"], "status")
eq(["load", "comm", "step", "teardown"], [p["name"] for p in t["phases"]], "phases")
ph = {p["name"]: p for p in t["phases"]}
eq(2, ph["step"]["occurrences"], "step occurrences")
def dev0(occ, view):
    return [d for d in occ["devices"] if d["ordinal"] == 0][0][view]
def vals(v, a, r, o, what):
    eq((a * MiB, r * MiB, o * MiB, (r + o) * MiB),
       (v["allocated_bytes"], v["reserved_bytes"], v["outside_bytes"], v["taken_bytes"]), what)

vals(dev0(ph["load"]["listed"][0], "requested")["end"], 40, 64, 0, "load end")
c = dev0(ph["comm"]["listed"][0], "requested")
vals(c["end"], 40, 64, 6, "comm end")
eq({"application": 0, "nccl": 6 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, c["end"]["outside_by_owner"], "comm outside owners")

s1, s2 = ph["step"]["listed"]
eq(["cold", "warm"], [s1["temperature"], s2["temperature"]], "temperatures")
r, h = dev0(s1, "requested"), dev0(s1, "held")
vals(r["start"], 40, 64, 6, "step 1 start")
vals(r["end"], 40, 192, 6, "step 1 end")
vals(h["end"], 40, 192, 6, "step 1 end (held)")
eq("framework events", r["end"]["allocated_source"], "allocated source")
eq("framework segments", r["end"]["reserved_source"], "reserved source")
eq(454 * MiB, r["end"]["device_used_bytes"], "device used at the end of step 1")
# Device used (the context's 256 MiB + what the driver handed out) at every
# boundary, each read by a sample taken at that boundary: load 64, NCCL 6,
# segment B 128 (the workspace's pool is trimmed at its stream's sync).
want_used = {("load", 0): (256, 320), ("comm", 0): (320, 326), ("step", 0): (326, 454),
             ("step", 1): (454, 454), ("teardown", 0): (454, 256)}
prev_end = 0
for (n, k), (u0, u1) in want_used.items():
    occ = ph[n]["listed"][k]
    d = dev0(occ, "requested")
    eq((u0 * MiB, u1 * MiB), (d["start"]["device_used_bytes"], d["end"]["device_used_bytes"]),
       "device used at %s %d start, end" % (n, k + 1))
    # The start's sample is taken after the previous phase ended, the end's
    # after the last checkpoint inside the phase: both at the boundary.
    assert prev_end < d["start"]["device_used_sample_ts_ns"] <= occ["begin_ts_ns"], (n, k)
    assert d["end"]["device_used_sample_ts_ns"] <= occ["end_ts_ns"], (n, k)
    prev_end = occ["end_ts_ns"]
eq(256 * MiB, r["end"]["untraced_estimate_bytes"], "untraced (the context) at the end of step 1")
eq(156 * MiB, r["max_allocated"]["bytes"], "max allocated")
vals(r["max_allocated"]["values"], 156, 192, 6, "at max allocated")
vals(h["max_allocated"]["values"], 156, 192, 54, "at max allocated (held: workspace not yet synchronised)")
eq(192 * MiB, r["max_reserved"]["bytes"], "max reserved")
vals(r["max_reserved"]["values"], 40, 192, 6, "at max reserved")
eq(198 * MiB, r["max_taken"]["bytes"], "max taken (requested)")
eq(246 * MiB, h["max_taken"]["bytes"], "max taken (held view)")
eq(152 * MiB, r["max_gap"]["bytes"], "max gap")
eq(54 * MiB, r["max_outside"]["bytes"], "max outside")
eq({"application": 48 * MiB, "nccl": 6 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, r["max_outside"]["values"]["outside_by_owner"], "owners at max outside")
b = r["bounds"]
eq(246 * MiB, b["max_reserved_plus_max_outside_bytes"], "bound: max reserved + max outside")
eq(36 * MiB, b["max_reserved_minus_max_allocated_bytes"], "bound: max reserved - max allocated")
assert b["max_reserved_plus_max_outside_bytes"] != r["max_taken"]["bytes"]
assert b["max_reserved_minus_max_allocated_bytes"] != r["max_gap"]["bytes"]

w = dev0(s2, "requested")
eq(140 * MiB, w["max_allocated"]["bytes"], "warm max allocated")
vals(w["max_allocated"]["values"], 140, 192, 6, "at warm max allocated")
vals(w["end"], 40, 192, 6, "step 2 end")
vals(dev0(ph["teardown"]["listed"][0], "requested")["end"], 0, 0, 0, "teardown end")

d = [x for x in t["devices"] if x["ordinal"] == 0][0]
eq({"application": 1, "nccl": 2, "cublas": 0, "cudnn": 0, "other": 0}, d["outside_allocations"]["count_by_owner"], "outside allocations")
eq([(48 * MiB, "application"), (4 * MiB, "nccl"), (2 * MiB, "nccl")],
   [(x["bytes"], x["owner"]) for x in d["outside_allocations"]["largest"]], "outside list")

# Checkpoints (the workload's own counters before every boundary): the
# first precedes every framework event; one inside step 2 is 512 B off.
ck = d["checkpoints"]
K = ("count", "agree", "disagree", "rebuilt_unknown", "not_comparable")
eq((11, 9, 1, 1, 0), tuple(ck["allocated"][k] for k in K), "allocated checkpoints")
eq((11, 10, 0, 1, 0), tuple(ck["reserved"][k] for k in K), "reserved checkpoints")
eq(1, len(ck["disagreements"]), "disagreements listed"); eq(0, ck["disagreements_not_listed"], "not listed")
x = ck["disagreements"][0]
c = x["checkpoint"]
eq(("allocated", "disagree", "toycache", 140 * MiB + 512, 140 * MiB, 512, 156 * MiB),
   (x["quantity"], c["state"], c["framework"], c["framework_current_bytes"], c["rebuilt_bytes"],
    c["difference_bytes"], c["framework_own_peak_bytes"]), "the wrong checkpoint")
nb = x["nearest_boundary"]
eq(("step", 2), (nb["phase"], nb["occurrence"]), "nearest boundary (inside step 2)")
assert nb["edge"] in ("begin", "end") and nb["checkpoint_minus_boundary_ns"] == c["ts_ns"] - nb["ts_ns"]
eq((0, 0), (ck["allocated"]["latest"]["framework_current_bytes"], ck["reserved"]["latest"]["framework_current_bytes"]), "latest")
eq((156 * MiB, 192 * MiB), (ck["allocated"]["latest"]["framework_own_peak_bytes"],
   ck["reserved"]["latest"]["framework_own_peak_bytes"]), "the framework's own peaks")

def pair(occ, which):
    return [x for x in occ["devices"] if x["ordinal"] == 0][0]["checkpoint_at_" + which]
p = pair(ph["load"]["listed"][0], "start")
eq(("rebuilt_unknown", "rebuilt_unknown", None), (p["allocated"]["state"], p["reserved"]["state"],
   p["allocated"]["rebuilt_bytes"]), "load start: before any framework event")
want = {("load", 0, "end"): (40, 64), ("comm", 0, "start"): (40, 64), ("comm", 0, "end"): (40, 64),
        ("step", 0, "start"): (40, 64), ("step", 0, "end"): (40, 192), ("step", 1, "start"): (40, 192),
        ("step", 1, "end"): (40, 192), ("teardown", 0, "start"): (40, 192), ("teardown", 0, "end"): (0, 0)}
for (n, k, which), (a, r) in want.items():
    occ = ph[n]["listed"][k]
    p = pair(occ, which)
    for q, v in (("allocated", a), ("reserved", r)):
        got = p[q]
        eq(("agree", v * MiB, v * MiB, 0), (got["state"], got["framework_current_bytes"], got["rebuilt_bytes"],
           got["difference_bytes"]), "%s %d %s %s" % (n, k + 1, which, q))
        assert got["ts_ns"] <= occ[which == "start" and "begin_ts_ns" or "end_ts_ns"], (n, which, q)
eq(156 * MiB, pair(ph["step"]["listed"][0], "end")["allocated"]["framework_own_peak_bytes"], "own peak at step 1 end")
eq(None, [x for x in ph["step"]["warm"]["devices"] if x["ordinal"] == 0][0]["checkpoint_at_start"], "warm: no pairing")
PY
assert_contains p.txt "allocated: 11 checkpoints, 9 agree to the byte, 1 DISAGREE, 1 with the rebuilt value unknown"
assert_contains p.txt "DISAGREE by 512 B"

"$ANALYZE" curves --csv "$trace" > c.csv || fail "curves exit status $?"
head -1 c.csv | grep -q "allocated" || fail "curves header: $(head -1 c.csv)"

# Boundary samples: one before each of the 10 boundaries (a MEMINFO, then
# the pool samples once the default pool served an allocation, right before
# the RANGE event). With a spacing of one hour only the first boundary is
# sampled; "off": none.
boundary_samples() {
	"$BUILD/tests/tools/gmt-dump" "$1" | awk '$1 == "EV" {
		if (($2 == "range_begin" || $2 == "range_end") && (prev == "meminfo" || prev == "pool_used")) n++
		prev = $2 } END { print n + 0 }'
}
assert_eq 10 "$(boundary_samples "$trace")" "boundary samples, no spacing"
for v in 3600000000:1 off:0; do
	rm -rf traces; mkdir traces
	GPUMEMTRACE_BOUNDARY_SAMPLE_US=${v%:*} LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/traces" \
		"$BUILD/tests/phases_workload" > /dev/null || fail "spacing ${v%:*}: exit status $?"
	assert_eq "${v#*:}" "$(boundary_samples "$(the_trace)")" "boundary samples, spacing ${v%:*}"
done
rm -rf traces; mkdir traces
GPUMEMTRACE_BOUNDARY_SAMPLE_US=-5 LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -o "$TESTDIR/traces" \
	"$BUILD/tests/phases_workload" > /dev/null 2> bad.err || fail "a bad spacing: exit status $?"
assert_contains bad.err "GPUMEMTRACE_BOUNDARY_SAMPLE_US=-5: not auto, off, nor a number of microseconds from 0 to 3600000000; using auto"
