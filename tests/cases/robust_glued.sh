#!/bin/sh
# Two trace files joined into one (cat a.gmt b.gmt) are not read as one
# clean trace (the second process's events used to count under the first
# one's pid): the reader stops at the second GMTRACE preamble, says so at
# its offset (the first file's size), and summary reports the first trace
# exactly as alone, marked damaged (exit status 1). A second HEADER record
# inside a file is refused the same way (reader/gmt_decode.c).
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
F="$ROOT/tests/frozen/traces"
cat "$F/demo_fork_1.gmt" "$F/demo_fork_2.gmt" > glued.gmt
n=$(wc -c < "$F/demo_fork_1.gmt")
"$ANALYZE" summary --json glued.gmt > g.json 2> g.err
assert_eq 1 $? "summary's exit status (1: a damaged trace)"
"$ANALYZE" summary --json "$F/demo_fork_1.gmt" > a.json || fail "summary of the first file"
python3 - g.json a.json "$n" <<'PY' || fail "summary --json"
import json, sys
g = json.load(open(sys.argv[1]))["traces"][0]
a = json.load(open(sys.argv[2]))["traces"][0]
n = int(sys.argv[3])
assert g["status"] == "damaged", g["status"]
assert g["decode"]["bytes_ok"] == n, g["decode"]
want = "glued.gmt: offset %d: a second trace starts here (another GMTRACE preamble: trace files joined into one?); split the file at this offset to read it" % n
assert g["decode"]["message"] == want, g["decode"]["message"]
for k in ("process", "events", "devices", "failed_allocations", "drops", "end"):
    assert g[k] == a[k], "%s differs from the first file alone" % k
PY
assert_contains g.err "offset $n: a second trace starts here"
"$ANALYZE" summary glued.gmt > g.txt 2>/dev/null
assert_eq 1 $? "summary's exit status (text)"
assert_contains g.txt "DAMAGED: glued.gmt: offset $n: a second trace starts here"
exit 0
