#!/bin/sh
# summary of several traces groups them by host and physical device
# (tests/routes/shared_workload.c, numbers known by construction, MiB =
# 2^20 B): two ranks on one device: the coinciding peak 600 MiB (300 + 300),
# own peaks 300 and 450, their sum 750 only a bound; three ranks and a
# worker: 650 MiB (300 + 300 + 50 + 0), own peaks 300, 450, 300, sum 1050;
# the skew (largest 450, smallest 300, spread 150); the stray contexts: the
# worker's on device 0 and rank 2's on device 1, where they hold nothing.
# JSON valid against the schema; the text says the same.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2 GMT_FAKE_CONTEXT_BYTES=67108864
for n in 2 3; do
	rm -rf traces
	run_traced "$BUILD/tests/shared_workload" $n > out$n.txt || fail "shared_workload $n"
	mkdir t$n && mv traces/*.gmt t$n/ || fail "no traces ($n)"
	"$ANALYZE" summary --json t$n/*.gmt > s$n.json 2> /dev/null || fail "summary --json ($n): exit $?"
	"$ANALYZE" summary t$n/*.gmt > s$n.txt 2> /dev/null || fail "summary ($n): exit $?"
done
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "the job's grouping"
import json, sys, jsonschema
MiB = 1 << 20
schema = json.load(open(sys.argv[1]))
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
def job(n):
    d = json.load(open("s%d.json" % n))
    jsonschema.Draft202012Validator(schema).validate(d)
    return d["job"]
def who(j, m):
    p = j["processes"][m["trace"]]
    return (p["rank"], p["own_peak"]["bytes"] // MiB if p["own_peak"] else 0)

j = job(2)
eq(1, len(j["devices"]), "2: one physical device")
d = j["devices"][0]
eq(600 * MiB, d["peak"]["taken_bytes"], "2: coinciding peak")
eq(750 * MiB, d["own_peak_sum_bytes"], "2: sum of own peaks (a bound)")
eq(sorted([("0", 300, 300, 0.5), ("1", 300, 450, 0.5)]),
   sorted((m["rank"], m["taken_at_peak_bytes"] // MiB, m["own_peak_bytes"] // MiB, m["share_of_peak"])
          for m in d["members"]), "2: each one's share")
eq([], j["stray_contexts"], "2: no stray context")
ranks = {p["trace"]: p["rank"] for p in j["processes"]}
eq(("1", "0", 150 * MiB), (ranks[j["skew"]["largest_trace"]], ranks[j["skew"]["smallest_trace"]],
   j["skew"]["spread_bytes"]), "2: skew")

j = job(3)
eq(2, len(j["devices"]), "3: two physical devices")
d0, d1 = j["devices"]
eq((0, 1), (d0["ordinal"], d1["ordinal"]), "3: ordinals")
eq(650 * MiB, d0["peak"]["taken_bytes"], "3: coinciding peak")
eq(1050 * MiB, d0["own_peak_sum_bytes"], "3: sum of own peaks")
eq(sorted([("0", 300, 300), ("0", 0, 0), ("1", 300, 450), ("2", 50, 300)]),
   sorted((m["rank"], m["taken_at_peak_bytes"] // MiB, m["own_peak_bytes"] // MiB) for m in d0["members"]),
   "3: each one's share")
eq(None, d1["peak"], "3: device 1 held nothing")
pid = {p["trace"]: p["pid"] for p in j["processes"]}
held = {p["trace"]: p["own_peak"] for p in j["processes"]}
strays = sorted((s["rank"], s["device"], held[s["trace"]] is None) for s in j["stray_contexts"])
eq([("0", "d0", True), ("2", "d1", False)], strays, "3: stray contexts (the worker, rank 2 on device 1)")
for p in j["processes"]:
    if p["own_peak"]:
        eq(("d0", None), (p["own_peak"]["device"], p["own_peak"]["phase"]), "3: own peak's device and phase")
PY
assert_contains s2.txt "  coinciding peak of what the processes took from it together: 629145600 B (600.00 MiB)"
assert_contains s2.txt "  sum of the processes' own peaks: 786432000 B (750.00 MiB) (a BOUND: reached at no instant unless"
assert_contains s3.txt "Stray contexts (a process on a device it never took a byte from): 2"
assert_contains s3.txt "spread 157286400 B (150.00 MiB)"
# One trace: no grouping section.
"$ANALYZE" summary --json "$(ls t2/*.gmt | head -n 1)" > one.json || fail "summary of one trace"
assert_eq False "$(json_get one.json '"job" in j')" "one trace: no job member"
exit 0
