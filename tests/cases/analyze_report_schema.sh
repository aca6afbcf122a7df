#!/bin/sh
# The JSON rendering of a known replay (unit_report --dump) validates against
# schemas/report.schema.json, and the schema rejects what it must (a byte
# field as a float, a missing field).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
python3 -c 'import jsonschema' || fail "python3 jsonschema is missing (Debian: python3-jsonschema)"
"$BUILD/tests/unit_report" --dump doc.json || fail "unit_report --dump"
python3 - "$ROOT/schemas/report.schema.json" doc.json <<'PY' || fail "schema check"
import json, sys, copy, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
doc = json.load(open(sys.argv[2]))
v.validate(doc)
assert len(doc["traces"]) == 2
bad = copy.deepcopy(doc); bad["traces"][0]["devices"][0]["peak"]["bytes"] = 3.5
assert not v.is_valid(bad), "a float byte count passed"
bad = copy.deepcopy(doc); del bad["traces"][0]["devices"][0]["independent_maxima"]
assert not v.is_valid(bad), "a missing field passed"
bad = copy.deepcopy(doc); bad["traces"][0]["status"] = "fine"
assert not v.is_valid(bad), "an unknown status passed"
print("schema ok")
PY
echo ok
