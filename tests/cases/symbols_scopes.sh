#!/bin/sh
# The scope index of analyzer/engines/gmt_symbols.c (each unit's DIE tree
# walked once) gives the frames dwarf_getscopes gives (its reference,
# GPUMEMTRACE_ANALYZE_SCOPES=libdw), inlined ones included: 400 stacks of
# depth 20 drawn from the analyzer's own code and the preload (built -O2 -g:
# many inlined functions), every site printed.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
"$BUILD/tests/tools/gen-bigstacks" big.gmt 400 20 "$BUILD/gpumemtrace-analyze" "$BUILD/libgpumemtrace.so" ||
	fail "gen-bigstacks"
"$ANALYZE" sites --json --top 100000 big.gmt > index.json || fail "sites (index)"
GPUMEMTRACE_ANALYZE_SCOPES=libdw "$ANALYZE" sites --json --top 100000 big.gmt > libdw.json ||
	fail "sites (libdw)"
python3 - index.json libdw.json <<'PY' || fail "the index and dwarf_getscopes disagree"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for j in (a, b):
    j.pop("symbolisation")
sites = [s for d in a["traces"][0]["devices"] for s in d["live_sites"]]
frames = [f for s in sites for f in s["frames"]]
inl = sum(1 for f in frames if f["inlined"])
lines = sum(1 for f in frames if f.get("line"))
assert len(sites) == 400, len(sites)
# enough of each kind that a wrong scope shows
assert inl >= 100 and lines >= 500, (inl, lines)
if a != b:
    for x, y in zip(json.dumps(a, indent=0).splitlines(), json.dumps(b, indent=0).splitlines()):
        if x != y:
            print("index:", x, "\nlibdw:", y)
            break
    sys.exit(1)
print(len(frames), "frames,", inl, "inlined: same")
PY
exit 0
