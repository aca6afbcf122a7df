#!/bin/sh
# The selection that phases and curves --json write back (a bug until the
# JSON writer: the selection went through a 4 KiB buffer, and 150 long
# --domain values made phases --json exit 0 with JSON that did not parse).
# Long names with quotes, backslashes, control characters and invalid UTF-8
# come back exactly (invalid bytes as U+FFFD), and the documents follow the
# schema.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
T="$ROOT/tests/golden/v1_3_basic.gmt"
set --
i=0
while [ $i -lt 150 ]; do
	set -- "$@" --domain "dom$i-$(printf '%0200d' $i)\"q\\b$(printf '\001\377')"
	i=$((i + 1))
done
"$ANALYZE" phases --json "$@" --pattern 'st*' "$T" > p.json || fail "phases --json exited $?"
"$ANALYZE" curves --json "$@" "$T" > c.json || fail "curves --json exited $?"
python3 - "$ROOT/schemas/report.schema.json" p.json c.json <<'PY' || fail "selection JSON"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for f in sys.argv[2:]:
    d = json.load(open(f, encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(d)
    want = ["dom%d-%s\"q\\b\x01\ufffd" % (i, "%0200d" % i) for i in range(150)]
    assert d["selection"]["domains"] == want, (f, d["selection"]["domains"][:2])
    assert d["selection"]["all_depths"] is False
    assert len(d["traces"]) == 1 and d["traces"][0]["status"] == "clean", f
assert json.load(open("p.json"))["selection"]["patterns"] == ["st*"]
PY
