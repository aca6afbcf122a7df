#!/bin/sh
# sites and flamegraph --framework --phase on tests/routes/fw_phase_stacks.c,
# whose framework blocks, text stacks and phases are known by construction
# (see its header): per occurrence of "step", each device's framework peak
# within it (the bytes held at its begin included) and the blocks then live
# by stack; flamegraph --framework, whole run and per occurrence.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
run_fake "$BUILD/tests/fw_phase_stacks" > plain.out || fail "without the preload"
assert_eq "preload no" "$(cat plain.out)" "without the preload"
run_traced "$BUILD/tests/fw_phase_stacks" > traced.out || fail "with the preload"
assert_eq "preload yes" "$(cat traced.out)" "with the preload"
T=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$T" > dump.txt || fail "gmt-dump"
# The times the expectations need: B's and C's allocations, D's (device 1),
# and every range begin and end.
ts_of() { awk -v a="$1" '$1 == "EV" && $2 == "fw_alloc" && $6 == "addr=" a { print substr($3, 4) }' dump.txt; }
tB=$(ts_of 0xb000); tC=$(ts_of 0xc000); tD=$(ts_of 0xd000)
awk '$1 == "EV" && ($2 == "range_begin" || $2 == "range_end") { print substr($3, 4) }' dump.txt > ranges
assert_eq 6 "$(wc -l < ranges)" "range events"
"$ANALYZE" sites --framework --phase step --json "$T" > s.json || fail "sites --json"
"$ANALYZE" sites --framework --phase step "$T" > s.txt || fail "sites"
"$ANALYZE" summary --json "$T" > sum.json || fail "summary --json"
python3 - "$ROOT/schemas/report.schema.json" s.json "$tB" "$tC" "$tD" ranges sum.json <<'PY' || fail "JSON"
import json, sys, time, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(doc)
tB, tC, tD = (int(x) for x in sys.argv[3:6])
r = [int(x) for x in open(sys.argv[6])]
S1, S2 = 0x80000000, 0x80000001
F1 = [{"text": "fwd (/w/m.py:3)"}, {"text": "step (/w/t.py:9)"}]
F2 = [{"text": "bwd (/w/m.py:7)"}]
def site(b, c, peak, sid, frames):
    return {"bytes": b, "count": c, "share": b / peak, "stack_id": sid, "stack_kind": "text", "frames": frames}
# Each peak's instant: seconds after the trace's first event and UTC from the
# header's clock pair (summary --json gives both); over the whole run also
# the occurrence of "step" it fell in (none within an occurrence: it is that one).
sm = json.load(open(sys.argv[7]))["traces"][0]
first = sm["time"]["first_event_ts_ns"]
def utc(ts):
    sec, ns = divmod(ts + sm["process"]["clock_realtime_ns"] - sm["process"]["clock_monotonic_ns"], 10**9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%09dZ" % ns
def dev(o, peak, ts, sites, in_occ=None):
    d = {"ordinal": o, "peak_bytes": peak, "peak_ts_ns": ts,
         "peak_since_first_event_s": (ts - first) / 1e9, "peak_utc": utc(ts)}
    if in_occ is not None:
        k, begin = in_occ
        d["peak_phase"] = None if k is None else {"name": "step", "occurrence": k, "begin_ts_ns": begin,
                                                  "begin_since_first_event_s": (begin - first) / 1e9}
    d.update({"live_sites_total": len(sites), "live_sites": sites})
    return d
t = doc["traces"][0]
def eq(want, got, what):
    if want != got:
        sys.exit("%s:\n got  %s\n want %s" % (what, json.dumps(got), json.dumps(want)))
eq([dev(0, 4000, tB, [site(3000, 1, 4000, S2, F2), site(1000, 1, 4000, S1, F1)], (1, r[0])),
    dev(1, 200, tD, [site(200, 1, 200, S1, F1)], (2, r[2]))], t["framework_sites"], "whole run")
ph = t["phase"]
eq(("step", 3), (ph["name"], ph["occurrences_total"]), "phase")
occ = ph["occurrences"]
eq([(1, r[0], r[1], True), (2, r[2], r[3], True), (3, r[4], r[5], True)],
   [(o["occurrence"], o["begin_ts_ns"], o["end_ts_ns"], o["ended"]) for o in occ], "occurrences")
late = [site(1000, 1, 1500, S1, F1), site(500, 1, 1500, S2, F2)]
eq([dev(0, 4000, tB, [site(3000, 1, 4000, S2, F2), site(1000, 1, 4000, S1, F1)])],
   occ[0]["framework_devices"], "occurrence 1")
eq([dev(0, 1500, tC, late), dev(1, 200, tD, [site(200, 1, 200, S1, F1)])],
   occ[1]["framework_devices"], "occurrence 2")
# Nothing happens in occurrence 3: what was held at its begin, at the begin.
eq([dev(0, 1500, r[4], late), dev(1, 200, r[4], [site(200, 1, 200, S1, F1)])],
   occ[2]["framework_devices"], "occurrence 3")
PY
assert_contains s.txt "  device 0: framework peak in the occurrence 4000 B (3.91 KiB) allocated at ts $tB ns (2 sites):"
assert_contains s.txt "  device 1: framework peak in the occurrence 200 B (0.20 KiB) allocated at ts $tD ns (1 site):"
# Without --framework the occurrences carry no framework_devices.
"$ANALYZE" sites --phase step --json "$T" > d.json || fail "sites --phase --json"
assert_eq "False" "$(json_get d.json '"framework_devices" in j["traces"][0]["phase"]["occurrences"][0]')" \
	"framework_devices without --framework"
"$ANALYZE" flamegraph --framework "$T" > whole.folded 2>/dev/null || fail "flamegraph --framework"
cat > whole.expected <<'EOT'
device 0;bwd (/w/m.py:7) 3000
device 0;step (/w/t.py:9);fwd (/w/m.py:3) 1000
device 1;step (/w/t.py:9);fwd (/w/m.py:3) 200
EOT
diff whole.expected whole.folded >&2 || fail "flamegraph --framework (< expected, > actual)"
"$ANALYZE" flamegraph --framework --phase step "$T" > phase.folded 2>/dev/null || fail "flamegraph --framework --phase"
cat > phase.expected <<'EOT'
step #1;device 0;bwd (/w/m.py:7) 3000
step #1;device 0;step (/w/t.py:9);fwd (/w/m.py:3) 1000
step #2;device 0;bwd (/w/m.py:7) 500
step #2;device 0;step (/w/t.py:9);fwd (/w/m.py:3) 1000
step #2;device 1;step (/w/t.py:9);fwd (/w/m.py:3) 200
step #3;device 0;bwd (/w/m.py:7) 500
step #3;device 0;step (/w/t.py:9);fwd (/w/m.py:3) 1000
step #3;device 1;step (/w/t.py:9);fwd (/w/m.py:3) 200
EOT
diff phase.expected phase.folded >&2 || fail "flamegraph --framework --phase (< expected, > actual)"
exit 0
