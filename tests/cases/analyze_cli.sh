#!/bin/sh
# gpumemtrace-analyze's command line: --version, --help, usage errors and
# unreadable or refused input (exit 2, a message naming the file).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"

"$ANALYZE" --version > v.out || fail "--version exited $?"
assert_contains v.out "gpumemtrace-analyze $(cat "$ROOT/VERSION")"
"$ANALYZE" --help > h.out || fail "--help exited $?"
assert_contains h.out "usage: gpumemtrace-analyze summary"
assert_contains h.out "1  a trace was damaged"

rc=0; "$ANALYZE" frobnicate x 2> e.out || rc=$?
assert_eq 2 "$rc" "unknown command exit"
assert_contains e.out "unknown command 'frobnicate'"
rc=0; "$ANALYZE" 2> e.out || rc=$?
assert_eq 2 "$rc" "no command exit"
rc=0; "$ANALYZE" summary 2> e.out || rc=$?
assert_eq 2 "$rc" "no trace exit"
assert_contains e.out "no trace given"
rc=0; "$ANALYZE" summary --frob x.gmt 2> e.out || rc=$?
assert_eq 2 "$rc" "unknown option exit"
assert_contains e.out "unknown option '--frob'"

rc=0; "$ANALYZE" summary missing.gmt > o.out 2> e.out || rc=$?
assert_eq 2 "$rc" "missing file exit"
assert_contains e.out "missing.gmt"

printf 'this is not a trace, just text\n' > text.gmt
rc=0; "$ANALYZE" summary --json text.gmt > o.json 2> e.out || rc=$?
assert_eq 2 "$rc" "not a trace exit"
assert_contains e.out "text.gmt"
assert_eq refused "$(json_get o.json "j['traces'][0]['status']")" "status of a non-trace"

: > empty.gmt
rc=0; "$ANALYZE" summary empty.gmt > o.out 2> e.out || rc=$?
assert_eq 2 "$rc" "empty file exit"
assert_contains e.out "empty.gmt"
rc=0; "$ANALYZE" summary -o /nonexistent-dir/x.txt empty.gmt 2> e.out || rc=$?
assert_eq 2 "$rc" "unwritable output exit"
assert_contains e.out "/nonexistent-dir/x.txt"
# -o - (and --output=-) is standard output, not a file named '-'
G="$ROOT/tests/golden/v1_3_basic.gmt"
"$ANALYZE" summary --json "$G" > plain.out || fail "summary exited $?"
"$ANALYZE" summary --json -o - "$G" > dash.out || fail "summary -o - exited $?"
"$ANALYZE" summary --json --output=- "$G" > dash2.out || fail "summary --output=- exited $?"
[ -s plain.out ] || fail "summary wrote nothing"
cmp -s plain.out dash.out || fail "-o - differs from standard output"
cmp -s plain.out dash2.out || fail "--output=- differs from standard output"
[ ! -e ./- ] || fail "-o - made a file named '-'"
"$ANALYZE" summary --json -o ./- "$G" > none.out || fail "summary -o ./- exited $?"
cmp -s plain.out ./- || fail "-o ./- is not the file '-'"
[ ! -s none.out ] || fail "-o ./- wrote to standard output"
echo ok
