#!/bin/sh
# The report model's temporary file has a budget (--temp-max BYTES): beyond
# it the streams still growing are given up and their traces read again
# when the devices are drawn. The results do not depend on it: for every
# trace of the repository (frozen, golden, the fuzz corpus: damaged ones
# too), all the frozen traces together (processes sharing devices), a long
# trace (gen-known many) and two processes at once (gen-known shared),
# `report`, `report --json` and `export` (chrome) write the same bytes, the
# same stderr and the same exit status with --temp-max 0 (no stream kept:
# every device read by a run of its traces; of two processes sharing a
# device the smaller is spooled again) as with the default; --stats says
# the file stayed within the budget: 0 bytes for one process, at most one
# chunk per stream with --temp-max 1 (64 KiB: raw, the file being below
# GMT_SPOOL_RAW_FIRST), against the long trace's
# 100 KB and more by default.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/gen-known"
mkdir -p long shared
GPUMEMTRACE_OUTPUT="$TESTDIR/long" "$GEN" many 400000 || fail "gen-known many exited $?"
GPUMEMTRACE_OUTPUT="$TESTDIR/shared" "$GEN" shared a || fail "gen-known shared a exited $?"
GPUMEMTRACE_OUTPUT="$TESTDIR/shared" "$GEN" shared b || fail "gen-known shared b exited $?"
n=0
same() {  # same BUDGET CMD TRACE...: the outputs with and without the budget
	b=$1 c=$2; shift 2
	"$ANALYZE" $c -o d.out "$@" > /dev/null 2> d.err; rd=$?
	"$ANALYZE" $c --temp-max "$b" -o t.out "$@" > /dev/null 2> t.err; rt=$?
	[ $rd = $rt ] || fail "$c $*: exit $rd, with --temp-max $b $rt"
	cmp -s d.out t.out || fail "$c $*: the output differs with --temp-max $b"
	cmp -s d.err t.err || { diff d.err t.err; fail "$c $*: stderr differs with --temp-max $b"; }
	n=$((n + 1))
}
for t in $(cd "$ROOT" && git ls-files '*.gmt' 2>/dev/null || ls tests/*/*.gmt tests/*/*/*.gmt); do
	for c in report "report --json" export; do
		same 0 "$c" "$ROOT/$t"
	done
done
[ $n -ge 100 ] || fail "only $n comparisons"
set -- "$ROOT"/tests/frozen/traces/*.gmt
for c in report "report --json" export; do
	same 0 "$c" "$@"
	same 0 "$c" long/*.gmt
	same 1 "$c" long/*.gmt
	same 0 "$c" shared/*.gmt
done
bytes() { sed -n 's/.*temporary_file_bytes=\([0-9]*\).*/\1/p' "$1"; }
"$ANALYZE" report --stats -o /dev/null long/*.gmt 2> s.def || fail "report --stats"
"$ANALYZE" report --stats --temp-max 0 -o /dev/null long/*.gmt 2> s.0 || fail "report --stats --temp-max 0"
"$ANALYZE" report --stats --temp-max 1 -o /dev/null long/*.gmt 2> s.1 || fail "report --stats --temp-max 1"
[ "$(bytes s.def)" -gt 100000 ] || fail "the long trace's file by default: $(bytes s.def) bytes"
assert_eq 0 "$(bytes s.0)" "temporary file with --temp-max 0"
[ "$(bytes s.1)" -gt 0 ] && [ "$(bytes s.1)" -le 70000 ] || fail "temporary file with --temp-max 1: $(bytes s.1) bytes"
"$ANALYZE" report --temp-max x long/*.gmt 2> bad.err && fail "--temp-max x accepted"
assert_contains bad.err "--temp-max"
exit 0
