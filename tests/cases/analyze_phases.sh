#!/bin/sh
# End to end: `phases` on a trace written through the real tracer core by
# tests/tools/gen-phases.c (API phases, NVTX ranges of three kinds, a
# framework history in the side stream, a stream-ordered pool on a second
# device, NCCL memory outside the framework, cuMemGetInfo samples, an
# out-of-memory inside a phase, an unterminated phase). Every number is
# known by construction (see that file). The text is compared with
# tests/expected/analyze_phases.txt (the trace's path masked); the JSON is
# validated against the schema and checked field by field, including the
# coinciding peaks against the independent maxima, which differ.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/gen-phases"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/gen-phases"
[ -x "$GEN" ] || fail "gen-phases is not built (make build/tests/tools/gen-phases)"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" || fail "gen-phases exited $?"
t=$(the_trace)

"$ANALYZE" phases "$t" > report.txt 2> err.txt || { cat err.txt; fail "phases exited $?"; }
sed -e 's|^Trace .*|Trace TRACE|' report.txt > got.txt
diff -u "$ROOT/tests/expected/analyze_phases.txt" got.txt || fail "text differs from tests/expected/analyze_phases.txt"
[ -s err.txt ] && { cat err.txt; fail "stderr not empty"; }

"$ANALYZE" phases --json -o report.json "$t" "$t" || fail "phases --json exited $?"
"$ANALYZE" phases --json --domain gpumemtrace --domain default --domain mylib --all-depths "$t" > all.json || fail "phases --domain exited $?"
"$ANALYZE" phases --json --pattern 'st*' --pattern eval "$t" > pat.json || fail "phases --pattern exited $?"
"$ANALYZE" summary --json "$t" > summary.json || fail "summary exited $?"
python3 - "$ROOT/schemas/report.schema.json" report.json all.json pat.json summary.json <<'PY' || fail "JSON checks"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
docs = [json.load(open(f)) for f in sys.argv[2:]]
for d in docs:
    jsonschema.Draft202012Validator(schema).validate(d)
j, alld, pat, summ = docs
MiB, GiB = 1 << 20, 1 << 30
T = lambda ms: 1000000000 + ms * 1000000
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
eq(2, len(j["traces"]), "traces"); eq(j["traces"][0], j["traces"][1], "the same trace twice")
t = j["traces"][0]
eq("clean", t["status"], "status")
eq(64, t["events"]["total"], "events"); eq(16, t["events"]["side"], "side events")
eq(T(0), t["events"]["first_ts_ns"], "first ts")
eq(["load", "train", "step", "prefetch", "sync_point", "eval"], [p["name"] for p in t["phases"]], "default phases")
eq(["load", "train", "io", "step", "aten::mm", "prefetch", "sync_point", "eval"],
   [p["name"] for p in alld["traces"][0]["phases"]], "--domain gpumemtrace --domain default --domain mylib --all-depths")
eq(["step", "eval"], [p["name"] for p in pat["traces"][0]["phases"]], "--pattern")
eq(16, summ["traces"][0]["events"]["side"], "summary counts side events")
eq(64, summ["traces"][0]["events"]["total"], "summary total")
eq(5, summ["traces"][0]["events"]["by_type"]["fw_alloc"], "summary fw_alloc")

ph = {p["name"]: p for p in t["phases"]}
def dev(occ, o):
    return [d for d in occ["devices"] if d["ordinal"] == o][0]
def vals(v, a, r, out, held, live=None):
    eq(a, v["allocated_bytes"], "allocated"); eq(r, v["reserved_bytes"], "reserved")
    eq(out, v["outside_bytes"], "outside"); eq(held, v["taken_bytes"], "taken")
    # held by live allocations: with framework segments (device 0) the
    # segments are the live driver allocations, so taken unless said
    eq(held if live is None else live, v["live_bytes"], "live")

# load: starts before the framework's first event (allocated unknown)
load = ph["load"]["listed"][0]
eq("api", load["source"], "load source"); eq("gpumemtrace", load["domain"], "load domain")
d0 = dev(load, 0)["requested"]
vals(d0["start"], None, None, 64 * MiB, 64 * MiB)
eq(None, d0["start"]["allocated_source"], "load start source")
vals(d0["end"], 256 * MiB, GiB, 96 * MiB, GiB + 96 * MiB)
eq("framework events", d0["end"]["allocated_source"], "source")
eq("framework segments", d0["end"]["reserved_source"], "source")
eq({"application": 32 * MiB, "nccl": 64 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, d0["end"]["outside_by_owner"], "owners")
# The segment (side stream) and its cudaMalloc (main) share ts 10 ms: side
# first, so the 1 GiB never counts as outside.
eq(96 * MiB, d0["max_outside"]["bytes"], "load max outside")

step = ph["step"]
eq(3, step["occurrences"], "step occurrences"); eq(1, step["failed"], "step failed")
s1, s2, s3 = step["listed"]
eq(["cold", "warm", "warm"], [s["temperature"] for s in step["listed"]], "temperatures")
for view in ("requested", "held"):
    f = dev(s1, 0)[view]
    vals(f["start"], 256 * MiB, GiB, 96 * MiB, GiB + 96 * MiB)
    vals(f["end"], 256 * MiB, 1536 * MiB, 96 * MiB, 1632 * MiB)
    m = f["max_allocated"]; eq(896 * MiB, m["bytes"], "max allocated"); eq(T(120), m["ts_ns"], "at")
    vals(m["values"], 896 * MiB, GiB, 96 * MiB, GiB + 96 * MiB)
    m = f["max_reserved"]; eq(1536 * MiB, m["bytes"], "max reserved"); eq(T(190), m["ts_ns"], "at")
    vals(m["values"], 256 * MiB, 1536 * MiB, 96 * MiB, 1632 * MiB)
    m = f["max_taken"]; eq(1632 * MiB, m["bytes"], "max held"); eq(T(190), m["ts_ns"], "at")
    m = f["max_gap"]; eq(1280 * MiB, m["bytes"], "max gap"); eq(T(190), m["ts_ns"], "at")
    # NCCL's handle (t180) waits 1 ms for a segment that never claims it
    # (gen-phases.c): outside from t181
    m = f["max_outside"]; eq(224 * MiB, m["bytes"], "max outside"); eq(T(181), m["ts_ns"], "at")
    eq({"application": 32 * MiB, "nccl": 192 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, m["values"]["outside_by_owner"], "owners")
    b = f["bounds"]
    eq(1760 * MiB, b["max_reserved_plus_max_outside_bytes"], "bound sum")
    eq(640 * MiB, b["max_reserved_minus_max_allocated_bytes"], "bound difference")
    assert b["max_reserved_plus_max_outside_bytes"] != f["max_taken"]["bytes"]
    assert b["max_reserved_minus_max_allocated_bytes"] != f["max_gap"]["bytes"]
# requested vs held on device 0: the 512 MiB block's free was requested at
# 130 ms and completed at 170 ms
# device 1 (cudaMallocAsync shape): a free at 190 ms on stream C is held
# until the stream sync at 250 ms
r, h = dev(s1, 1)["requested"], dev(s1, 1)["held"]
eq("driver stream-ordered events", r["end"]["allocated_source"], "dev1 source")
eq("pool attributes", r["end"]["reserved_source"], "dev1 reserved source")
vals(r["end"], 256 * MiB, 512 * MiB, 40 * MiB, 552 * MiB, live=296 * MiB)  # live: allocated + outside
vals(h["end"], 384 * MiB, 512 * MiB, 40 * MiB, 552 * MiB, live=424 * MiB)  # + the free waiting
eq(384 * MiB, r["max_allocated"]["bytes"], "dev1 max allocated"); eq(T(115), r["max_allocated"]["ts_ns"], "at")
eq({"application": 8 * MiB, "nccl": 32 * MiB, "cublas": 0, "cudnn": 0, "other": 0}, r["end"]["outside_by_owner"], "dev1 owners")

eq(None, s1["failure"], "step 1 did not fail")
eq({"event": "fw_oom", "ts_ns": T(520), "since_first_event_s": 0.52, "device": 0,
    "requested_bytes": 2 * GiB}, s3["failure"], "step 3 failure")
vals(dev(s3, 0)["requested"]["at_failure"], 1024 * MiB, 1536 * MiB, 96 * MiB, 1632 * MiB)
w = step["warm"]
eq(2, w["occurrences"], "warm occurrences"); eq(1, w["failed"], "warm failed")
wd = dev(w, 0)["requested"]
eq(1024 * MiB, wd["max_allocated"]["bytes"], "warm max allocated"); eq(3, wd["max_allocated"]["occurrence"], "occ")
eq(1648 * MiB, wd["max_taken"]["bytes"], "warm max held"); eq(2, wd["max_taken"]["occurrence"], "occ")
eq(T(341), wd["max_taken"]["ts_ns"], "warm max held at")   # the 16 MiB waits 1 ms
eq(112 * MiB, wd["max_taken"]["values"]["outside_bytes"], "warm held outside")

pre = ph["prefetch"]["listed"][0]
eq("nvtx_start_end", pre["source"], "prefetch source"); eq(None, pre["domain"], "default domain")
eq(T(260), pre["end_ts_ns"], "prefetch paired by id")
eq("nvtx_push_pop", ph["train"]["listed"][0]["source"], "train source")
eq(T(450), ph["train"]["listed"][0]["end_ts_ns"], "train paired by nesting")

ev = ph["eval"]
eq(1, ev["unterminated"], "eval unterminated"); eq(1, ev["failed"], "eval failed")
e = ev["listed"][0]
eq(False, e["terminated"], "terminated"); eq(T(720), e["end_ts_ns"], "last event")
eq("alloc_fail", e["failure"]["event"], "eval failure"); eq(1, e["failure"]["device"], "device")
e0, e1 = dev(e, 0)["requested"]["end"], dev(e, 1)["requested"]["end"]
eq(3000 * MiB, e0["device_used_bytes"], "used"); eq(T(710), e0["device_used_sample_ts_ns"], "sample ts")
eq(1368 * MiB, e0["untraced_estimate_bytes"], "untraced dev 0")
eq(348 * MiB, e1["untraced_estimate_bytes"], "untraced dev 1")

d = {x["ordinal"]: x for x in t["devices"]}
eq({"application": 2, "nccl": 2, "cublas": 0, "cudnn": 0, "other": 0}, d[0]["outside_allocations"]["count_by_owner"], "outside counts")
big = d[0]["outside_allocations"]["largest"]
eq([(128 * MiB, "nccl", T(180), T(185)), (64 * MiB, "nccl", T(1), None), (32 * MiB, "application", T(30), None),
    (16 * MiB, "application", T(340), T(350))],
   [(x["bytes"], x["owner"], x["ts_ns"], x["freed_ts_ns"]) for x in big], "outside list")
eq(0x52, big[0]["handle"], "handle"); eq(0x7f1000000000, big[2]["address"], "address")
eq({"application": 1, "nccl": 1, "cublas": 0, "cudnn": 0, "other": 0}, d[1]["outside_allocations"]["count_by_owner"], "dev1 outside counts")
eq({"unmatched_ends": 0, "name_mismatches": 0, "dropped_ranges": 0}, t["range_anomalies"], "range anomalies")
PY
"$ANALYZE" phases --top 1 --max-occurrences 1 --json "$t" > small.json || fail "--top"
assert_eq 1 "$(json_get small.json "len(j['traces'][0]['devices'][0]['outside_allocations']['largest'])")" "--top 1"
assert_eq 2 "$(json_get small.json "[p for p in j['traces'][0]['phases'] if p['name']=='step'][0]['not_listed']")" "--max-occurrences 1"
# A trace cut inside a frame (side stream included): what came before.
head -c 1500 "$t" > cut.gmt
rc=0; "$ANALYZE" phases --json cut.gmt > cut.json 2> e.out || rc=$?
assert_eq 1 "$rc" "cut trace exit"
assert_contains e.out "cut.gmt: offset"
assert_eq damaged "$(json_get cut.json "j['traces'][0]['status']")" "cut trace status"
python3 -c "import json,sys,jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))" \
	"$ROOT/schemas/report.schema.json" cut.json || fail "cut trace JSON"
rc=0; "$ANALYZE" phases --top x "$t" > /dev/null 2> e.out || rc=$?
assert_eq 2 "$rc" "bad --top"
rc=0; "$ANALYZE" phases 2> e.out || rc=$?
assert_eq 2 "$rc" "no trace"
assert_contains e.out "no trace given"
echo ok
