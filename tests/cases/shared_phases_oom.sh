#!/bin/sh
# phases and oom of several traces group them by host and physical device
# as summary does (tests/routes/shared_workload.c N phases; numbers known
# by construction, MiB = 2^20 B): each phase occurrence matched across the
# ranks of the shared device, its coinciding peak in the window with what
# each rank had taken then and the most each took in its occurrence (their
# sum only a bound); each failure with what every process on the device
# had taken at its instant. Two ranks, then three ranks and a worker. JSON valid
# against the schema; the text says the same.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2 GMT_FAKE_CONTEXT_BYTES=67108864
for n in 2 3; do
	rm -rf traces
	run_traced "$BUILD/tests/shared_workload" $n phases > out$n.txt || fail "shared_workload $n phases"
	mkdir t$n && mv traces/*.gmt t$n/ || fail "no traces ($n)"
	"$ANALYZE" phases --json t$n/*.gmt > p$n.json 2> /dev/null || fail "phases --json ($n): exit $?"
	"$ANALYZE" phases t$n/*.gmt > p$n.txt 2> /dev/null || fail "phases ($n): exit $?"
	"$ANALYZE" oom --json --no-symbols t$n/*.gmt > o$n.json 2> /dev/null || fail "oom --json ($n): exit $?"
	"$ANALYZE" oom --no-symbols t$n/*.gmt > o$n.txt 2> /dev/null || fail "oom ($n): exit $?"
done
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "phases and failures across the ranks"
import json, sys, jsonschema
MiB = 1 << 20
schema = json.load(open(sys.argv[1]))
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
def load(f):
    d = json.load(open(f))
    jsonschema.Draft202012Validator(schema).validate(d)
    return d
for n, occ1, occ2, fail in (
        (2, ((300, 300), (300, 300), 600), ((300, 300), (300, 450), 600), ("1", "0", {"0": 100, "1": 450})),
        (3, ((300, 300, 50), (300, 300, 50), 650), ((300, 300, 50), (300, 450, 300), 650),
         ("2", "1", {"0": 100, "1": 450, "2": 50}))):
    p = load("p%d.json" % n)
    job = p["job"]
    shared = [d["id"] for d in job["devices"] if len(d["members"]) > 1]
    eq(1, len(shared), "%d: one shared device" % n)
    ph = job["phases"]
    eq([("step", 1), ("step", 2)], [(g["name"], g["occurrence"]) for g in ph], "%d: occurrences" % n)
    for (at, mx, peak), g in zip((occ1, occ2), ph):
        members = [m for m in g["members"] if m["own_max_taken_bytes"] is not None]
        ranks = sorted(members, key=lambda m: m["rank"])
        eq(n, len(ranks), "%d: ranks in #%d" % (n, g["occurrence"]))
        eq(list(at), [m["taken_at_peak_bytes"] // MiB for m in ranks], "%d #%d: each rank at the peak" % (n, g["occurrence"]))
        eq(list(mx), [m["own_max_taken_bytes"] // MiB for m in ranks], "%d #%d: own maxima" % (n, g["occurrence"]))
        eq(peak * MiB, g["coinciding_peak"]["taken_bytes"], "%d #%d: coinciding peak" % (n, g["occurrence"]))
        eq(sum(mx) * MiB, g["own_max_sum_bytes"], "%d #%d: the bound" % (n, g["occurrence"]))
        eq(sum(m["taken_at_peak_bytes"] for m in g["members"]), g["coinciding_peak"]["taken_bytes"],
           "%d #%d: the peak is the members' sum" % (n, g["occurrence"]))
        if g["occurrence"] == 2:    # the window's start: the values in force at the first begin
            eq(g["from_ts_ns"], g["coinciding_peak"]["ts_ns"], "%d #2: the peak at the window's start" % n)
        # each rank's own maximum is what `phases` gives its occurrence
        for m in ranks:
            t = p["traces"][m["trace"]]
            o = [x for x in t["phases"] if x["name"] == "step"][0]["listed"][g["occurrence"] - 1]
            dv = [x for x in o["devices"] if x["ordinal"] == 0][0]
            eq(dv["requested"]["max_taken"]["bytes"], m["own_max_taken_bytes"], "%d #%d: phases' max_taken" % (n, g["occurrence"]))
            if not (g["from_ts_ns"] <= o["begin_ts_ns"] and o["end_ts_ns"] <= g["to_ts_ns"]):
                sys.exit("%d: the window does not hold rank %s's occurrence" % (n, m["rank"]))
    if n == 3:
        worker = [m for m in ph[0]["members"] if m["own_max_taken_bytes"] is None]
        eq(1, len(worker), "3: the worker has no phases")
        eq(0, worker[0]["taken_at_peak_bytes"], "3: the worker took nothing")
    o = load("o%d.json" % n)
    fl = o["job"]["failures"]
    eq(1, len(fl), "%d: one failure" % n)
    f = fl[0]
    eq((fail[1], 1, "driver", 64 << 30, False, shared[0]),
       (f["rank"], f["failure"], f["source"], f["requested_bytes"], f["recovered"], f["device"]), "%d: the failure" % n)
    got = {}
    for m in f["members"]:
        if m["taken_bytes"] or m["failing"]:
            got[m["rank"]] = m["taken_bytes"] // MiB
    eq(fail[2], got, "%d: what each held at the failure" % n)
    eq([m["rank"] for m in f["members"] if m["failing"]], [fail[1]], "%d: the failing process" % n)
    eq(sum(fail[2].values()) * MiB, f["taken_by_all_bytes"], "%d: all together" % n)
    # the failure is the one the failing trace's own report lists
    t = o["traces"][f["trace"]]
    tf = t["failures"][0]
    eq((tf["ts_ns"], tf["request"]["bytes"], tf["device"]["held_bytes"]),
       (f["ts_ns"], f["requested_bytes"], fail[2][fail[1]] * MiB), "%d: the trace's own report of it" % n)
PY
grep -qF '  d0 "step" #1 (cold): ' p2.txt || fail "phases text: $(grep -F '"step"' p2.txt | head -3)"
grep -qF "    coinciding peak of what they took from it together: 629145600 B (600.00 MiB) at " p2.txt || fail "phases text: the peak"
grep -qF "    sum of the own maxima: 786432000 B (750.00 MiB) (a BOUND" p2.txt || fail "phases text: the bound"
grep -qF "    all 4 processes together had taken 629145600 B (600.00 MiB)" o3.txt || fail "oom text: $(grep -F together o3.txt)"
grep -qF "471859200 B (450.00 MiB) (the failing process)" o3.txt || fail "oom text: the failing process"
exit 0
