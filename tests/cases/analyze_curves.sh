#!/bin/sh
# End to end: `curves` on the trace of tests/tools/gen-phases.c (see that
# file for the values by construction). CSV rows are compared exactly with
# tests/expected/analyze_curves.csv (view requested) and
# analyze_curves_held.csv (view held: frees leave at FW_FREE_COMPLETED or at
# the synchronisation that covers their stream); --max-rows keeps per bucket
# the row with the most bytes taken; the JSON validates against the schema
# and holds the same rows.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/gen-phases"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/gen-phases"
[ -x "$GEN" ] || fail "gen-phases is not built (make build/tests/tools/gen-phases)"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" || fail "gen-phases exited $?"
t=$(the_trace)

"$ANALYZE" curves "$t" > req.csv 2> err.txt || { cat err.txt; fail "curves exited $?"; }
diff -u "$ROOT/tests/expected/analyze_curves.csv" req.csv || fail "CSV differs from tests/expected/analyze_curves.csv"
[ -s err.txt ] && { cat err.txt; fail "stderr not empty"; }
"$ANALYZE" curves --csv --view held -o held.csv "$t" || fail "curves --view held exited $?"
diff -u "$ROOT/tests/expected/analyze_curves_held.csv" held.csv || fail "CSV differs from tests/expected/analyze_curves_held.csv"

# --max-rows 3: device 0 has 37 rows (buckets of 13, 13, 11), device 1 has
# 25 (9, 9, 7); each bucket keeps its first row with the most bytes taken
# (device 0's peak, 1728053248 at 0.341 s, is one of them). Device 0's
# driver allocations that no segment claims count as outside 1 ms after
# them (gen-phases.c): rows at 0.031 s, 0.181 s and 0.341 s; at 0.030 s,
# 0.180 s and 0.340 s only live_bytes changed (they are live allocations).
"$ANALYZE" curves --max-rows 3 "$t" > small.csv || fail "--max-rows exited $?"
cat > want.csv <<'CSV'
trace,device,ts_ns,time_s,phase,allocated_bytes,reserved_bytes,outside_bytes,device_used_bytes,taken_bytes,live_bytes
0,1,1016000000,0.016000000,load,268435456,536870912,41943040,314572800,578813952,310378496
0,0,1031000000,0.031000000,load,268435456,1073741824,100663296,524288000,1174405120,1174405120
0,1,1115000000,0.115000000,step,402653184,536870912,41943040,314572800,578813952,444596224
0,0,1341000000,0.341000000,step,268435456,1610612736,117440512,524288000,1728053248,1728053248
0,0,1350000000,0.350000000,step,268435456,1610612736,100663296,524288000,1711276032,1711276032
0,1,1450000000,0.450000000,,268435456,536870912,41943040,314572800,578813952,310378496
CSV
diff -u want.csv small.csv || fail "--max-rows 3 rows"

"$ANALYZE" curves --json "$t" "$t" > c.json || fail "curves --json exited $?"
python3 - "$ROOT/schemas/report.schema.json" c.json req.csv <<'PY' || fail "JSON checks"
import csv, json, sys, jsonschema
schema = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(j)
rows = list(csv.reader(open(sys.argv[3])))[1:]
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
eq("curves", j["command"], "command"); eq("requested", j["view"], "view")
t = j["traces"][0]
eq(len(rows), len(t["rows"]), "rows"); eq(len(rows), t["rows_total"], "rows_total")
eq([37, 25], [d["rows"] for d in t["devices"]], "rows per device")
eq({"allocated": "driver stream-ordered events", "reserved": "pool attributes", "device_used": "cuMemGetInfo samples"},
   t["devices"][1]["sources"], "device 1 sources")
for c, r in zip(rows, t["rows"]):
    want = [int(c[1]), int(c[2]), float(c[3]), c[4] or None] + [int(x) if x else None for x in c[5:]]
    eq(want, r, "row")
eq(t, j["traces"][1], "the same trace twice")
# Held by live allocations (the last column), by construction: on device 1
# (no framework) allocated + outside; on device 0 reserved + outside (its
# segments are live driver allocations), plus the allocation that waits for
# its segment at t30 (32 MiB), t180 (128 MiB) and t340 (16 MiB).
MiB = 1 << 20
waits = {1030000000: 32 * MiB, 1180000000: 128 * MiB, 1340000000: 16 * MiB}
for r in t["rows"]:
    dev, ts, alloc, res, out, taken, live = r[0], r[1], r[4], r[5], r[6], r[8], r[9]
    if dev == 1:
        eq((alloc or 0) + out, live, "device 1 live at %d" % ts)
    else:
        eq(taken + waits.get(ts, 0), live, "device 0 live at %d" % ts)
eq(len(waits), sum(1 for r in t["rows"] if r[0] == 0 and r[9] != r[8]), "device 0 rows where live differs from taken")
PY
rc=0; "$ANALYZE" curves --csv --json "$t" > /dev/null 2> e.out || rc=$?
assert_eq 2 "$rc" "--csv with --json"
rc=0; "$ANALYZE" curves --view sideways "$t" > /dev/null 2> e.out || rc=$?
assert_eq 2 "$rc" "bad --view"
assert_contains e.out "requested or held"
rc=0; "$ANALYZE" curves --max-rows 0 "$t" > /dev/null 2> e.out || rc=$?
assert_eq 2 "$rc" "--max-rows 0"
echo ok
