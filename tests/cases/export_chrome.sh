#!/bin/sh
# `export --format chrome` on the demo, on the phases workload and on two
# demos run one after the other (two processes of one device: one track):
# - the file parses (json.load), every event has the fields its phase needs;
# - per device track (pid above every traced pid, named after the device
#   and its processes) the counters' highest held equals the report model's
#   coinciding peak (`report --json`) to the byte; with one process, the
#   highest allocated, reserved, outside and device used equal those of
#   `curves --json` (the same engine's values); with the two demos the
#   highest held is one demo's own peak (they never ran at once), not the
#   sum of both (the first one's bytes end with it);
# - the same within a budget of 60 counter events: at most 60, downsampled
#   (otherData says so, and a process label), the maxima unchanged;
# - every listed phase occurrence of the model is one slice ("X") on its
#   process and thread, with its name, occurrence, begin and duration;
# - every failed allocation an instant with its requested bytes;
# - chrome is the default format, and --json gives the same file's keys
#   inside the command's document (schema: export_report).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir -p demo phases demo2
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/demo" "$BUILD/tests/demo_workload" > /dev/null ||
	fail "demo exited $?"
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/demo2" "$BUILD/tests/demo_workload" > /dev/null ||
	fail "demo 2 exited $?"
GMT_FAKE_CONTEXT_BYTES=268435456 LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/phases" \
	"$BUILD/tests/phases_workload" > /dev/null || fail "phases workload exited $?"
# chrome is the default; --json puts the same keys in the command's document
"$ANALYZE" export -o default.json demo/*.gmt || fail "export without --format exited $?"
"$ANALYZE" export --json -o doc.json demo/*.gmt || fail "export --json exited $?"
python3 - <<'PY' || fail "export's default and --json"
import json
d, j = json.load(open("default.json")), json.load(open("doc.json"))
assert set(d) == {"traceEvents", "displayTimeUnit", "otherData"}, set(d)
assert j["command"] == "export" and j["format"] == "chrome", j.keys()
assert {k: j[k] for k in d} == d, "--json differs from the file"
assert [t["file"] for t in j["traces"]] == [__import__("glob").glob("demo/*.gmt")[0]], j["traces"]
PY
"$ANALYZE" export --format memory-viz --json demo/*.gmt > /dev/null 2> mvjson.err && fail "memory-viz --json accepted"
assert_contains mvjson.err "--encoding json"
for w in demo phases both; do
	if [ $w = both ]; then set -- demo/*.gmt demo2/*.gmt; else set -- "$w"/*.gmt; fi
	"$ANALYZE" export --format chrome -o "$w.json" "$@" || fail "export $w exited $?"
	"$ANALYZE" export --format chrome --max-events 60 -o "$w.small.json" "$@" || fail "export --max-events $w exited $?"
	"$ANALYZE" report --json -o "$w.report.json" "$@" || fail "report $w"
	"$ANALYZE" curves --json -o "$w.curves.json" "$1" || fail "curves $w"
	python3 - "$w" <<'PY' || fail "chrome export of $w"
import json, sys
w = sys.argv[1]
rep = json.load(open(w + ".report.json"))
curves = json.load(open(w + ".curves.json"))
cols = {k: i for i, k in enumerate(curves["columns"])}
rows = curves["traces"][0]["rows"]
pids = [t["pid"] for t in rep["traces"]]
base = (max(pids) // 1000000 + 1) * 1000000
errs = []
def check(c, what):
    if not c:
        errs.append(what)
for name, budget in ((w + ".json", None), (w + ".small.json", 60)):
    doc = json.load(open(name))
    ev = doc["traceEvents"]
    for e in ev:
        check(all(k in e for k in ("ph", "pid", "name")), "event lacks fields: %s" % e)
        if e["ph"] in ("C", "X", "i"):
            check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, "bad ts %s" % e)
    C = [e for e in ev if e["ph"] == "C"]
    meta = {(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    if budget:
        check(len(C) <= budget, "%s: %d counter events over %d" % (name, len(C), budget))
        check(all(c["downsampled"] for c in doc["otherData"]["counters"]), "%s: %s" % (name, doc["otherData"]))
        check(any(e["name"] == "process_labels" for e in ev), "%s: no label says downsampled" % name)
    else:
        check(not any(c["downsampled"] for c in doc["otherData"]["counters"]), "%s downsampled" % name)
    check(len(rep["devices"]) == 1, "%d devices" % len(rep["devices"]))
    for i, dv in enumerate(rep["devices"]):
        pid = base + i
        names = [n for p, n in meta if p == pid]
        check(len(names) == 1 and names[0].startswith("device %d: %s" % (dv["ordinal"], dv["name"])), "track name %s" % names)
        for t in rep["traces"]:
            check("pid %d" % t["pid"] in names[0], "track %s lacks pid %d" % (names[0], t["pid"]))
        def top(cname):
            got = [e["args"]["value"] for e in C if e["pid"] == pid and e["name"] == cname]
            return max(got) if got else None
        check(top("taken (bytes)") == dv["peak"]["taken_bytes"], "%s: held max %s != model peak %s" % (name, top("taken (bytes)"), dv["peak"]["taken_bytes"]))
        if w == "both":
            own = [m["own_peak_taken_bytes"] for m in dv["members"]]
            check(len(own) == 2 and top("taken (bytes)") == max(own) and max(own) < sum(own), "two demos: %s vs %s" % (top("taken (bytes)"), own))
        else:
            for cname, col in (("allocated (bytes)", "allocated_bytes"), ("reserved (bytes)", "reserved_bytes"),
                               ("device used (bytes)", "device_used_bytes"), ("taken (bytes)", "taken_bytes")):
                want = [r[cols[col]] for r in rows if r[cols["device"]] == dv["ordinal"] and r[cols[col]] is not None]
                check(top(cname) == (max(want) if want else None), "%s %s: %s != curves %s" % (name, cname, top(cname), max(want) if want else None))
            outside = [e for e in C if e["pid"] == pid and e["name"].startswith("outside ")]
            # at each instant the owners add up to curves' outside: the highest sum
            want = max(r[cols["outside_bytes"]] for r in rows if r[cols["device"]] == dv["ordinal"])
            if not budget:
                cur, best = {}, 0
                for e in sorted(outside, key=lambda e: e["ts"]):
                    cur[e["name"]] = e["args"]["value"]
                    best = max(best, sum(cur.values()))
                check(best == want, "%s outside: %s != curves %s" % (name, best, want))
    X = [e for e in ev if e["ph"] == "X"]
    occ = []
    for dv in rep["devices"]:
        for p in dv["phases"]:
            k = (dv["members"][p["member"]]["trace"], p["name_index"], p["occurrence"])
            if k not in [o[0] for o in occ]:
                occ.append((k, p))
    check(len(X) == len(occ), "%s: %d slices, %d occurrences" % (name, len(X), len(occ)))
    if w == "phases":
        check(len(occ) >= 4, "only %d occurrences" % len(occ))
    if X:
        origin = min(x["ts"] * 1000 - p["begin_ts_ns"] for x, (k, p) in zip(X, occ))
    for x, (k, p) in zip(X, occ):
        check(x["name"] == p["name"] and x["args"]["occurrence"] == "%d (%s)" % (p["occurrence"], "cold" if p["cold"] else "warm"), "slice %s != %s" % (x, p))
        check(x["pid"] == rep["traces"][k[0]]["pid"], "slice on pid %s" % x["pid"])
        check(abs(x["dur"] * 1000 - (p["end_ts_ns"] - p["begin_ts_ns"])) < 1, "dur %s != %s" % (x["dur"], p))
        check(abs(x["ts"] * 1000 - p["begin_ts_ns"] - origin) < 1, "slices' begins not on one origin")
    I = sorted(e["args"]["bytes"] for e in ev if e["ph"] == "i")
    want = sorted(f["requested_bytes"] for dv in rep["devices"] for f in dv["failures"])
    check(I == want, "%s: instants %s != failures %s" % (name, I, want))
    if w != "phases":
        check(I == [64 << 30] * (2 if w == "both" else 1), "the demo's failures: %s" % I)
if errs:
    print("\n".join(errs))
    sys.exit(1)
PY
done
exit 0
