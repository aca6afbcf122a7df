#!/bin/sh
# The drops caveat is in the JSON of every command (the list from
# gpumemtrace-analyze --commands): each trace object carries
# "missing_events" {count, first_ts_ns, last_ts_ns, without_time} (diff:
# missing_events_a and _b), the numbers of the stderr caveat.
# tests/frozen/traces/known_drops.gmt is gen-known's scenario whose 4th
# write failed (ENOSPC): its one DROPS record says 6 events, ts 3 s to
# 5.1 s (gen-known's explicit times), and END says 6 dropped; known.gmt,
# the same scenario written whole, says 0 and null. The report page says
# it in its status and in a row of its own (first event at 1 s: the drops
# are from +2 s to +4.1 s).
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
D="$ROOT/tests/frozen/traces/known_drops.gmt"
K="$ROOT/tests/frozen/traces/known.gmt"
"$BUILD/tests/tools/gmt-dump" "$D" > dump.txt || fail "gmt-dump"
assert_eq "DROPS count=6 first_ts=3000000000 last_ts=5100000000 reason=write_error errno=28" \
	"$(grep '^DROPS' dump.txt)" "the committed trace's DROPS record"
assert_contains dump.txt "dropped=6"
"$ANALYZE" --commands > cmds.txt || fail "--commands exited $?"
n=0
while read -r c ops; do
	for T in "$D" "$K"; do
		set -- "$T"
		[ "$ops" = "A B" ] && set -- "$T" "$K"
		"$ANALYZE" $c --json --no-symbols "$@" > "$c.json" 2> "$c.err" < /dev/null
		[ $? -le 1 ] || { cat "$c.err"; fail "$c --json $*: exit status"; }
		python3 - "$ROOT/schemas/report.schema.json" "$c.json" "$c" "$(basename "$T")" <<'PY' || fail "$c --json on $T"
import json, sys, jsonschema
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(doc)
cmd, trace = sys.argv[3], sys.argv[4]
drops = {"count": 6, "first_ts_ns": 3000000000, "last_ts_ns": 5100000000, "without_time": 0}
none = {"count": 0, "first_ts_ns": None, "last_ts_ns": None, "without_time": 0}
want = drops if trace == "known_drops.gmt" else none
found = []
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k.startswith("missing_events"):
                found.append((k, v))
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(doc)
if cmd == "diff":
    assert found == [("missing_events_a", want), ("missing_events_b", none)], found
else:
    assert len(doc["traces"]) == 1, len(doc["traces"])
    assert found == [("missing_events", want)], found
PY
		n=$((n + 1))
	done
done < cmds.txt
[ $n -ge 18 ] || fail "only $n command/trace pairs checked"
# The text status says it too (summary, and report's first lines).
"$ANALYZE" summary "$D" > s.txt 2> s.err || fail "summary exited $?"
assert_contains s.txt "ended cleanly (END record), but 6 events are missing (dropped) between ts 3000000000 and 5100000000 ns: the numbers below may be off either way (a lost allocation makes them low, a lost free high)"
assert_contains s.err "gpumemtrace-analyze: $D: 6 events missing (dropped by the tracer) between ts 3000000000 and 5100000000 ns: results from that time on may be off either way (a lost allocation makes them low, a lost free high)"
# The report page (headless Chromium, with and without its scripts): the
# status row and the missing_events row of "What this trace could not see".
command -v chromium >/dev/null || fail "chromium is not installed (.ci/run installs it)"
"$ANALYZE" report -o drops.html "$D" 2> /dev/null || fail "report exited $?"
cat > steps.json <<'EOF'
[{"eval": "document.querySelector('section.trace table.limits td[data-status]').textContent", "as": "status"},
 {"eval": "[...document.querySelectorAll('#t0-missing td')].map(td => [td.dataset.count ?? td.dataset.ts ?? null, td.textContent])", "as": "missing"}]
EOF
for js in "" --no-js; do
	python3 "$ROOT/tests/tools/browser_check.py" $js drops.html steps.json page.json || fail "browser_check $js exited $?"
	python3 - page.json <<'PY' || fail "report page $js"
import json, sys
r = json.load(open(sys.argv[1]))["results"]
want = ("ended cleanly: shutdown, but 6 events are missing (dropped by the tracer) from +2.000 s to "
        "+4.100 s after the first event: the numbers on this page from that time on may be off either way (a lost allocation makes them low, a lost free high)")
assert r["status"] == want, r["status"]
assert r["missing"] == [["6", "6"], ["3000000000", "from +2.000000000 s"], ["5100000000", "to +4.100000000 s"]], r["missing"]
PY
done
exit 0
