#!/bin/sh
# The lists of tracer/gmt_format.def (event types, kinds, APIs, owners):
# within each list, numbers and keys unique, keys plain identifiers; and the
# keys that schemas/report.schema.json requires are the table's (by_type:
# every event type but none, plus unknown; by_kind: the device kinds, i.e.
# every kind but host_pinned, imported and multicast; by_owner: every owner
# plus other).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
printf '%s\n' '#define GMT_EV(n, v, k) ROW ev n v k' '#define GMT_KIND(n, v, k) ROW kind n v k' \
	'#define GMT_API(n, v, k) ROW api n v k' '#define GMT_OWNER(n, v, k) ROW owner n v k' \
	'#include "gmt_format.def"' | ${CC:-cc} -E -P -I"$ROOT/tracer" - | grep '^ROW ' > rows.txt ||
	fail "expanding gmt_format.def"
python3 - rows.txt "$ROOT/schemas/report.schema.json" <<'PY' || fail "format table"
import json, re, sys
rows = [l.split(None, 4)[1:] for l in open(sys.argv[1])]
lists = {}
for lst, name, num, key in rows:
    lists.setdefault(lst, []).append((name, int(num), json.loads(key)))
bad = []
for lst, r in lists.items():
    nums = [x[1] for x in r]; keys = [x[2] for x in r]; names = [x[0] for x in r]
    for what, seq in (("number", nums), ("key", keys), ("name", names)):
        d = sorted(set(x for x in seq if seq.count(x) > 1))
        if d: bad.append("%s: %s given twice: %s" % (lst, what, d))
    if nums != sorted(nums): bad.append("%s: numbers not ascending" % lst)
    for k in keys:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k): bad.append("%s: key %r" % (lst, k))
assert len(lists.get("ev", [])) >= 40, lists.keys()
s = json.load(open(sys.argv[2]))
D = s["$defs"]
def req(o): return o["required"]
want = {
    "by_type": [k for _, n, k in lists["ev"] if n] + ["unknown"],
    "by_kind": [k for _, n, k in lists["kind"] if k not in ("host_pinned", "imported", "multicast")],
    "by_owner": [k for _, n, k in lists["owner"]] + ["other"],
}
got = {
    "by_type": req(D["trace"]["properties"]["events"]["properties"]["by_type"]),
    "by_kind": req(D["by_kind"]),
    "by_owner": req(D["by_owner"]),
}
for k in want:
    if want[k] != got[k]:
        bad.append("schemas/report.schema.json %s: table %s, schema %s" % (k, want[k], got[k]))
for o in ("owner_bytes", "owner_counts"):
    if req(D[o]) != want["by_owner"]: bad.append("schema %s: %s" % (o, req(D[o])))
dev = D["trace"]["properties"]["devices"]["items"]["properties"]
for o in ("counts",):
    if req(dev[o]) != want["by_kind"]: bad.append("schema devices.%s: %s" % (o, req(dev[o])))
if req(dev["independent_maxima"]["properties"]["by_kind"]) != want["by_kind"]:
    bad.append("schema independent_maxima.by_kind")
if bad:
    sys.exit("\n".join(bad))
PY
