#!/bin/sh
# sites --framework on tests/routes/fw_stacks.c, whose framework blocks and
# text stacks are known by construction: device 0 peaks at 7680 bytes at
# t0+3000 (S2 4096 in 1 block, S1 3072 in 2, none 512 in 1), device 1 at
# 300 bytes (S1) at the time of its now-event. Also: TEXT_STACK records in
# the dump, ids from 0x80000000, the same frames interned once, and nothing
# at all without the preload.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
run_fake "$BUILD/tests/fw_stacks" > plain.out 2> plain.err || fail "fw_stacks without the preload"
assert_eq "preload no" "$(cat plain.out)" "without the preload"
run_traced "$BUILD/tests/fw_stacks" > traced.out 2> traced.err ||
	{ cat traced.out traced.err >&2; fail "fw_stacks with the preload"; }
cat > expected.out <<EOT
preload yes
text ids: yes
same frames, same id: yes
distinct: yes
null frames: 0
past: 0
now: 0
flush: 0
EOT
diff expected.out traced.out >&2 || fail "program output (< expected, > actual)"
T=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$T" > dump.txt || { cat dump.txt >&2; fail "gmt-dump"; }
assert_eq "TEXTSTACK id=2147483648 depth=2
TEXTSTACK id=2147483649 depth=1" "$(grep '^TEXTSTACK' dump.txt)" "TEXT_STACK records"
assert_eq "HEADER" "$(grep -o '^HEADER' dump.txt)" "header"
minor=$(sed -n 's/^#define GMT_FORMAT_MINOR *\([0-9]*\).*/\1/p' "$ROOT/tracer/gmt_format.h")
grep -q "major=1 minor=$minor " dump.txt || fail "format 1.$minor (the tracer's) expected"
t0=$(sed -n 's/^t0 //p' traced.err)
ts1=$(awk '/^EV fw_alloc .*device=1 addr=0x7000/ { sub("ts=", "", $3); print $3 }' dump.txt)
[ -n "$t0" ] && [ -n "$ts1" ] || fail "no t0 or device 1 event"
"$ANALYZE" sites --framework --json "$T" > s.json || fail "sites --framework --json"
"$ANALYZE" sites --framework "$T" > s.txt || fail "sites --framework"
"$ANALYZE" summary --json "$T" > sum.json || fail "summary --json"
python3 - "$ROOT/schemas/report.schema.json" s.json "$t0" "$ts1" sum.json <<'PY' || fail "sites --framework JSON"
import json, sys, time, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(doc)
t0, ts1 = int(sys.argv[3]), int(sys.argv[4])
# Each peak's instant: seconds after the trace's first event, and UTC from
# the header's clock pair (summary --json gives both); no phases: null.
sm = json.load(open(sys.argv[5]))["traces"][0]
first = sm["time"]["first_event_ts_ns"]
def utc(ts):
    sec, ns = divmod(ts + sm["process"]["clock_realtime_ns"] - sm["process"]["clock_monotonic_ns"], 10**9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%09dZ" % ns
def when(ts):
    return {"peak_since_first_event_s": (ts - first) / 1e9, "peak_utc": utc(ts), "peak_phase": None}
S1, S2 = 0x80000000, 0x80000001
F1 = [{"text": "forward (/w/model.py:12)"}, {"text": "step (/w/train.py:40)"}]
F2 = [{"text": "step (/w/train.py:41)"}]
def site(b, c, peak, sid, kind, frames):
    return {"bytes": b, "count": c, "share": b / peak, "stack_id": sid, "stack_kind": kind,
            "frames": frames}
want = [
    {"ordinal": 0, "peak_bytes": 7680, "peak_ts_ns": t0 + 3000, **when(t0 + 3000), "live_sites_total": 3,
     "live_sites": [site(4096, 1, 7680, S2, "text", F2), site(3072, 2, 7680, S1, "text", F1),
                    site(512, 1, 7680, 0, "none", [])]},
    {"ordinal": 1, "peak_bytes": 300, "peak_ts_ns": ts1, **when(ts1), "live_sites_total": 1,
     "live_sites": [site(300, 1, 300, S1, "text", F1)]},
]
got = doc["traces"][0]["framework_sites"]
if got != want:
    print("got  %s\nwant %s" % (json.dumps(got), json.dumps(want)), file=sys.stderr)
    sys.exit(1)
PY
assert_contains s.txt "device 0: framework peak 7680 B (7.50 KiB) allocated at ts $((t0 + 3000)) ns"
assert_contains s.txt "    #2  3072 B (3.00 KiB)  2 blocks  40.00% of the peak  stack 2147483648"
assert_contains s.txt "          forward (/w/model.py:12)"
# Without --framework: no framework_sites key.
"$ANALYZE" sites --json "$T" > plain.json || fail "sites --json"
assert_eq "False" "$(json_get plain.json '"framework_sites" in j["traces"][0]')" "framework_sites without --framework"
# The same from Python (gpumemtrace._framework.stack, 7-tuples), in a
# directory of its own; without the preload: 0 and -1, no file.
rm -f "$TESTDIR"/traces/*.gmt
mkdir py && cd py
cat > t.py <<'EOT'
import gpumemtrace._framework as f
fw = f.fw_register("pytorch")
s = f.stack(["a (x.py:1)", "b (y.py:2)"])
print(hex(s), f.stack(["a (x.py:1)", "b (y.py:2)"]) == s)
print(f.fw_events(fw, [(f.FW_ALLOC, 0, 0x1000, 64, 0, 0, s), (f.FW_ALLOC, 0, 0x2000, 32, 0, 0)]))
EOT
PYTHONPATH="$ROOT/python" python3 t.py > plain.out || fail "t.py without the preload"
assert_eq "0x0 True
-1" "$(cat plain.out)" "python without the preload"
PYTHONPATH="$ROOT/python" run_traced python3 t.py > traced.out || fail "t.py with the preload"
assert_eq "0x80000000 True
0" "$(cat traced.out)" "python with the preload"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump (python)"
assert_eq "TEXTSTACK id=2147483648 depth=2" "$(grep '^TEXTSTACK' dump.txt)" "python TEXT_STACK"
assert_eq "0x1000 stack=2147483648
0x2000 stack=0" "$(awk '/^EV fw_alloc/ { print substr($6, 6), $9 }' dump.txt)" "python events' stacks"
exit 0
