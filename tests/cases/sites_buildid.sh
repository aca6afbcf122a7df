#!/bin/sh
# A library rebuilt between trace and analysis: sites_workload dlopen()s a
# copy of libsites_lib.so; after the run the copy is replaced by a rebuild
# with other code and another build id. Its frame must say "build id
# mismatch" (never a name from the new file), the others still symbolise.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir lib && cp "$BUILD/tests/libsites_lib.so" lib/ || fail "copy"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_workload" "$TESTDIR/lib/libsites_lib.so" > out.txt ||
	fail "sites_workload"
cp "$BUILD/tests/sites_rebuilt/libsites_lib.so" lib/libsites_lib.so || fail "swap"
"$ANALYZE" sites --json "$(the_trace)" > s.json || fail "sites --json"
python3 - s.json "$TESTDIR/lib/libsites_lib.so" <<'PY' || fail "build id mismatch"
import json, sys
d = json.load(open(sys.argv[1]))["traces"][0]["devices"][0]
c = d["live_sites"][0]
assert c["bytes"] == 4 << 20, c["bytes"]
f = [x for x in c["frames"] if x["module"] == sys.argv[2]]
assert len(f) == 1, c["frames"]
f = f[0]
assert f["status"] == "build_id_mismatch", f
assert f["function"] is None and f["file"] is None and f["line"] == 0, f
assert f["label"] == "[build id mismatch: %s]" % sys.argv[2], f["label"]
main = [x for x in c["frames"] if x["function"] == "main"]
assert len(main) == 1 and main[0]["status"] == "ok", c["frames"]
a = d["live_sites"][1]
assert [x["function"] for x in a["frames"]][1:3] == ["site_a", "main"], a["frames"]
PY
"$ANALYZE" sites "$(the_trace)" > s.txt || fail "sites"
assert_contains s.txt "[build id mismatch: $TESTDIR/lib/libsites_lib.so]"
# The file gone altogether: module and offset.
rm lib/libsites_lib.so
"$ANALYZE" sites "$(the_trace)" > m.txt || fail "sites, file missing"
grep -q "\[$TESTDIR/lib/libsites_lib.so+0x[0-9a-f]*\]" m.txt || fail "missing file label"
exit 0
