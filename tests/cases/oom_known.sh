#!/bin/sh
# `gpumemtrace-analyze oom` on oom_workload (tests/routes/lib/oom_main.c) and
# the companion's fake torch, numbers known by construction (8 GiB device,
# 256 MiB context): the failing 2 GiB request in phase "train" #1, free
# 1.75 GiB from the sample taken at the failure, shortfall 256 MiB, the three
# holders (load_weights 3 GiB, make_activations 2 GiB, alloc_workspace 1 GiB)
# by function, the rest 256 MiB (the context, an estimate), the partial
# peak before 6.5 GiB, how the process ended, the lead; the same in a forked
# child's own trace and after SIGKILL (reported from the last frame); a
# caching allocator that recovers from the first failure by releasing its
# cache and retrying, then gives up (largest free block 512 MiB, smaller
# than the request); a trace without failures: one line, exit 0. Every JSON
# document is valid against schemas/report.schema.json.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
W="$BUILD/tests/oom_workload"
GiB=1073741824
MiB=1048576
for mode in oom fork kill retry; do
	rm -rf traces
	GMT_FAKE_MEM_BYTES=$((8 * GiB)) GMT_FAKE_CONTEXT_BYTES=$((256 * MiB)) GPUMEMTRACE_STACK_DEPTH=32 \
		run_traced "$W" $mode > $mode.out 2> $mode.err
	mkdir $mode.t && mv traces/*.gmt $mode.t/ || fail "$mode: no trace"
	"$ANALYZE" oom --json $mode.t/*.gmt > $mode.json || fail "$mode: oom --json exit $?"
	"$ANALYZE" oom $mode.t/*.gmt > $mode.txt || fail "$mode: oom exit $?"
done
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "oom reports"
import json, sys, jsonschema
GiB, MiB = 1 << 30, 1 << 20
schema = json.load(open(sys.argv[1]))
def load(mode):
    d = json.load(open(mode + ".json"))
    jsonschema.Draft202012Validator(schema).validate(d)
    assert len(d["traces"]) == 1, mode
    return d["traces"][0]
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
def funcs(site):
    return [f.get("function") for f in site["frames"]]
def check_plain(mode, t, end):
    eq((1, 0), (t["failures_total"], t["recovered_total"]), mode + ": failures")
    eq(end, t["process_end"], mode + ": how it ended")
    f = t["failures"][0]
    eq(("driver", False, False), (f["source"], f["recovered"], f["gave_up"]), mode + ": kind")
    r = f["request"]
    eq((2 * GiB, 0, "cudaMalloc", "plain", "application", 2, "CUDA_ERROR_OUT_OF_MEMORY"),
       (r["bytes"], r["device"], r["api"], r["kind"], r["owner"], r["result"], r["result_name"]),
       mode + ": request")
    if "grow_cache" not in funcs(r):
        sys.exit("%s: the request's stack lacks grow_cache: %s" % (mode, funcs(r)))
    eq(("train", 1, "cold"), (f["phase"]["name"], f["phase"]["occurrence"], f["phase"]["temperature"]),
       mode + ": phase")
    eq(3 * GiB, f["phase"]["taken_at_start_bytes"], mode + ": taken at the phase's start")
    d = f["device"]
    eq((8 * GiB, 1879048192, 6 * GiB, 256 * MiB), (d["total_bytes"], d["free_bytes"], d["held_bytes"],
       d["rest_estimate_bytes"]), mode + ": device")
    if d["free_sample_ts_ns"] < f["ts_ns"]:
        sys.exit("%s: the free sample is older than the failure" % mode)
    eq(6 * GiB, d["held_by_kind"]["plain"], mode + ": held by kind")
    eq(6 * GiB, d["held_by_owner"]["application"], mode + ": held by owner")
    eq(256 * MiB, f["shortfall_bytes"], mode + ": shortfall")
    hs = [(h["bytes"], h["count"], round(h["share"], 4), funcs(h)[1:3]) for h in f["holders"]]
    eq([(3 * GiB, 1, 0.5, ["device_alloc", "load_weights"]),
        (2 * GiB, 1, 0.3333, ["device_alloc", "make_activations"]),
        (1 * GiB, 1, 0.1667, ["device_alloc", "alloc_workspace"])], hs, mode + ": holders")
    eq(3, f["holders_total"], mode + ": holders total")
    eq([(2 * GiB, False)], [(a["bytes"], a["ok"]) for a in f["attempts"]], mode + ": attempts")
    eq(6 * GiB + 512 * MiB, f["peak_before"]["bytes"], mode + ": peak before")
    eq("backward", f["lead"]["category"], mode + ": lead")
    return t
check_plain("oom", load("oom"), {"how": "exit", "value": 1})
child = check_plain("fork", load("fork"), {"how": "_exit", "value": 1})
check_plain("kill", load("kill"), {"how": "cut", "value": 0})

t = load("retry")
eq((2, 1), (t["failures_total"], t["recovered_total"]), "retry: failures")
a, b = t["failures"]
eq((True, False), (a["recovered"], a["gave_up"]), "retry: the first recovered")
eq([(2 * GiB, False), (2 * GiB, True)], [(x["bytes"], x["ok"]) for x in a["attempts"]], "retry: its attempts")
eq([(2 * GiB, "framework segment")], [(x["bytes"], x["what"]) for x in a["releases"]], "retry: its release")
fw = a["device"]["framework"]
eq((3 * GiB + 512 * MiB, 6 * GiB, 2 * GiB + 512 * MiB, 2 * GiB, False),
   (fw["allocated_bytes"], fw["reserved_bytes"], fw["cache_bytes"], fw["largest_free_block_bytes"],
    fw["largest_free_block_below_request"]), "retry: the framework at the first")
eq({"alloc_retries": 1, "ooms": 0}, {k: a["framework_counts"][k] for k in ("alloc_retries", "ooms")},
   "retry: the framework's counts after the first")
eq((False, True), (b["recovered"], b["gave_up"]), "retry: the second gave up")
eq({"request_bytes": 2 * GiB, "free_bytes": 1879048192},
   {k: b["framework_oom"][k] for k in ("request_bytes", "free_bytes")}, "retry: FW_OOM")
eq([False, False], [x["ok"] for x in b["attempts"]], "retry: the second's attempts")
eq([], b["releases"], "retry: nothing to release the second time")
fw = b["device"]["framework"]
eq((5 * GiB + 512 * MiB, 6 * GiB, 512 * MiB, 512 * MiB, True),
   (fw["allocated_bytes"], fw["reserved_bytes"], fw["cache_bytes"], fw["largest_free_block_bytes"],
    fw["largest_free_block_below_request"]), "retry: the framework at the second")
eq({"alloc_retries": 1, "ooms": 1}, {k: b["framework_counts"][k] for k in ("alloc_retries", "ooms")},
   "retry: the framework's counts after the second")
eq(256 * MiB, b["shortfall_bytes"], "retry: shortfall")
eq(5 * GiB + 512 * MiB, b["framework_held_bytes"], "retry: the framework's blocks")
PY
# The child's trace names its parent; the text says what the JSON says.
ppid=$(json_get fork.json 'j["traces"][0]["ppid"]')
[ "$ppid" != 0 ] || fail "fork: no parent pid"
assert_contains oom.txt "free           1879048192 B (1.75 GiB) (the sample taken at the failure)"
assert_contains oom.txt "shortfall      268435456 B (request - free)"
assert_contains oom.txt "the rest       268435456 B = total - free - held: the context and other processes, an ESTIMATE from samples"
assert_contains oom.txt "in phase \"train\" #1 (cold)"
assert_contains kill.txt "the trace has no END record"
assert_contains retry.txt "RECOVERED: a later attempt succeeded"
assert_contains retry.txt "largest free   536870912 B (512.00 MiB), the largest block free in the framework's segments, smaller than the request"
# --lead: the rule moves "train" to another lead, or turns the lead off
"$ANALYZE" oom --json --lead evaluation=train oom.t/*.gmt > lead.json || fail "oom --lead"
assert_eq evaluation "$(json_get lead.json 'j["traces"][0]["failures"][0]["lead"]["category"]')" "--lead evaluation=train"
"$ANALYZE" oom --json --lead backward= oom.t/*.gmt > nolead.json || fail "oom --lead backward="
assert_eq None "$(json_get nolead.json 'j["traces"][0]["failures"][0]["lead"]')" "--lead backward="
# A trace without failures: one line, exit 0.
rm -rf traces
run_traced "$BUILD/tests/diff_workload" "$BUILD/tests/diff_v1/libdiffws.so" > /dev/null || fail "diff_workload"
"$ANALYZE" oom "$(the_trace)" > none.txt; assert_eq 0 $? "no failure: exit status"
assert_eq "  no out-of-memory failure" "$(sed -n 2p none.txt)" "no failure: the line"
assert_eq 2 "$(wc -l < none.txt | tr -d ' ')" "no failure: nothing else"
# summary names the phase of the peak and of the failure, and how the
# process ended: the peak 6.5 GiB and the failure both in "train" #1.
for mode in oom kill; do
	"$ANALYZE" summary --json $mode.t/*.gmt > sum_$mode.json || fail "$mode: summary --json exit $?"
	"$ANALYZE" summary $mode.t/*.gmt > sum_$mode.txt || fail "$mode: summary exit $?"
done
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "summary: phases and end"
import json, sys, jsonschema
GiB, MiB = 1 << 30, 1 << 20
schema = json.load(open(sys.argv[1]))
for mode, end in (("oom", {"how": "exit", "value": 1}), ("kill", {"how": "cut", "value": 0})):
    d = json.load(open("sum_%s.json" % mode))
    jsonschema.Draft202012Validator(schema).validate(d)
    t = d["traces"][0]
    if t["process_end"] != end or t["phases_looked_up"] is not True:
        sys.exit("%s: process_end %r, phases_looked_up %r" % (mode, t["process_end"], t["phases_looked_up"]))
    p = t["devices"][0]["peak"]
    got = (p["bytes"], p["phase"]["name"], p["phase"]["occurrence"])
    if got != (6 * GiB + 512 * MiB, "train", 1):
        sys.exit("%s: peak %r" % (mode, got))
    if not p["phase"]["begin_ts_ns"] <= p["ts_ns"]:
        sys.exit("%s: the phase begins after the peak" % mode)
    fl = t["failed_allocations"]["items"]
    got = [(x["requested_bytes"], x["phase"]["name"], x["phase"]["occurrence"]) for x in fl]
    if got != [(2 * GiB, "train", 1)]:
        sys.exit("%s: failures %r" % (mode, got))
PY
assert_contains sum_oom.txt "    in phase \"train\" occurrence 1 (cold), begun at +"
assert_contains sum_oom.txt "Process end: exit with status 1"
assert_contains sum_kill.txt "cut: no end record"
exit 0
