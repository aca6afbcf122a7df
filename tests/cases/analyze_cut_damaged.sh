#!/bin/sh
# A trace cut by SIGKILL (no END record: status cut, exit 0, everything
# flushed before is reported); the same scenario with its file truncated
# inside the last frame (damaged: exit 1, a message naming the file and the
# offset, the prefix still analysed); and no crash on any prefix or on
# corrupted bytes (exit 0, 1 or 2, never a signal).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
# The sanitizer trees build no test tools: fall back to the normal build's.
GEN="$BUILD/tests/tools/gen-known"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/gen-known"
[ -x "$GEN" ] || fail "gen-known is not built (make build/tests/tools/gen-known)"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" cut && fail "gen-known cut survived"
t=$(the_trace)
"$ANALYZE" summary "$t" > cut.txt 2> err.txt || fail "cut trace: exit $?"
assert_contains cut.txt "cut: no end record; the process was killed or is still running"
assert_contains cut.txt "Peak device bytes held by live allocations: 3222274048 B (3.00 GiB)"
"$ANALYZE" summary --json -o cut.json "$t" || fail "cut trace json: exit $?"
assert_eq cut "$(json_get cut.json "j['traces'][0]['status']")" "status"
assert_eq None "$(json_get cut.json "j['traces'][0]['end']")" "end record"
assert_eq 1 "$(json_get cut.json "j['traces'][0]['failed_allocations']['total']")" "failures"

rm -rf traces; mkdir traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" known || fail "gen-known exited $?"
t=$(the_trace)
size=$(wc -c < "$t")
head -c $((size - 3)) "$t" > damaged.gmt
rc=0; "$ANALYZE" summary damaged.gmt > dmg.txt 2> err.txt || rc=$?
assert_eq 1 "$rc" "damaged trace exit"
assert_contains err.txt "damaged.gmt"
assert_contains err.txt "offset"
assert_contains dmg.txt "DAMAGED: damaged.gmt"
assert_contains dmg.txt "Peak device bytes held by live allocations: 3222274048 B (3.00 GiB)"
rc=0; "$ANALYZE" summary --json damaged.gmt > dmg.json 2>/dev/null || rc=$?
assert_eq 1 "$rc" "damaged trace json exit"
python3 - "$ROOT/schemas/report.schema.json" dmg.json <<'PY' || fail "damaged JSON"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(j)
t = j["traces"][0]
assert t["status"] == "damaged", t["status"]
assert "damaged.gmt" in t["decode"]["message"] and "offset" in t["decode"]["message"], t["decode"]["message"]
assert t["devices"][0]["peak"]["bytes"] == 3 * 2**30 + 2**20
assert t["end"] is None
PY
# A damaged trace and a clean one: both reported, in order, exit 1.
rc=0; "$ANALYZE" summary --json damaged.gmt "$t" > two.json 2>/dev/null || rc=$?
assert_eq 1 "$rc" "damaged + clean exit"
assert_eq "damaged clean" "$(json_get two.json "' '.join(x['status'] for x in j['traces'])")" "statuses"

# Never a crash: every prefix, and bytes overwritten every 7 bytes.
i=0
while [ $i -lt "$size" ]; do
	head -c $i "$t" > p.gmt
	rc=0; "$ANALYZE" summary --json p.gmt > "p.$i.json" 2>/dev/null || rc=$?
	[ $rc -le 2 ] || fail "prefix of $i bytes: exit $rc"
	i=$((i + 1 + i / 64))
done
python3 - "$ROOT/schemas/report.schema.json" p.*.json <<'PY' || fail "prefix reports"
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
for f in sys.argv[2:]:
    v.validate(json.load(open(f)))
PY
i=16
while [ $i -lt "$size" ]; do
	cp "$t" c.gmt
	printf '\377\000\200' | dd of=c.gmt bs=1 seek=$i conv=notrunc 2>/dev/null
	rc=0; "$ANALYZE" summary c.gmt > /dev/null 2>&1 || rc=$?
	[ $rc -le 2 ] || fail "corrupted at $i: exit $rc"
	i=$((i + 7))
done
echo ok
