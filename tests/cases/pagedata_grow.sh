#!/bin/sh
# The page's data with levels that learn their extent from the instants
# (export/gmt_buckets.h GMT_BUCKETS_GROW, for a stream read once): the
# fixture of web_page built both ways (tests/tools/gmt-page-fixture) gives
# the same finest width and, over the grown extent (0.7 s, the last
# instant), the same buckets in every field; the synchronisations given
# while the levels were narrower are counted at the final width (1 at
# 0.1 s, 3 at 0.6 s).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
FX="$BUILD/tests/tools/gmt-page-fixture"
"$FX" fixed.json || fail "gmt-page-fixture exited $?"
"$FX" --grow grown.json || fail "gmt-page-fixture --grow exited $?"
ROOT="$ROOT" python3 - <<'PY' || fail "grown levels"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "tools"))
from pagedata import level, undelta
a = json.load(open("fixed.json"))["devices"][0]
b = json.load(open("grown.json"))["devices"][0]
assert (a["duration_ns"], b["duration_ns"]) == (1000000000, 700000000), (a["duration_ns"], b["duration_ns"])
la, lb = a["levels"][0], b["levels"][0]
assert la["bucket_ns"] == lb["bucket_ns"] == 262144, (la["bucket_ns"], lb["bucket_ns"])
n = lb["count"]
assert n == 700000000 // 262144 + 1, n
xa, xb = level(la), level(lb)
assert xa["at"][:n] == xb["at"][:n]
for k in ("top", "low"):
    assert xa[k][:n] == xb[k][:n], k
for g in ("stack", "line_max", "line_min"):
    for k in xa[g]:
        assert xa[g][k][:n] == xb[g][k][:n], (g, k)
for d in (a, b):
    s = d["syncs"]
    assert s["bucket_ns"] == 262144 and undelta(s["b"]) == [100000000 // 262144, 600000000 // 262144] \
        and s["n"] == [1, 3], s
PY
exit 0
