#!/bin/sh
# A full disk under every kind of output the analyzer writes (/dev/full:
# every write fails with ENOSPC): the text and JSON reports on stdout, the
# CSV of curves through -o, the HTML page, the chrome export, and the
# memory-viz export as pickles (buffered in 64 KiB blocks) and as JSON.
# Each command exits 2 and names the write error on stderr; none crashes
# or says it succeeded.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
[ -w /dev/full ] || { echo "skip: no /dev/full"; exit 0; }
t="$ROOT/tests/frozen/traces/phases_workload.gmt"
check() { # WHAT COMMAND...: exit 2, "write error" or EIO on stderr
	what=$1; shift
	"$@" > /dev/null 2> err.txt
	rc=$?
	[ $rc -eq 2 ] || { cat err.txt; fail "$what: exit $rc, expected 2"; }
	grep -q "write error\|Input/output error" err.txt || { cat err.txt; fail "$what: no write error on stderr"; }
	if grep -q "Segmentation\|Aborted\|AddressSanitizer" err.txt; then cat err.txt; fail "$what: crashed"; fi
}
out() { "$ANALYZE" "$@" > /dev/full; }
check "summary" out summary --no-symbols "$t"
check "summary --json" out summary --json --no-symbols "$t"
check "phases --json" out phases --json --no-symbols "$t"
check "curves (CSV, -o)" "$ANALYZE" curves --no-symbols -o /dev/full "$t"
check "curves --json" out curves --json --no-symbols "$t"
check "report" "$ANALYZE" report --no-symbols -o /dev/full "$t"
check "export chrome" "$ANALYZE" export --format chrome --no-symbols -o /dev/full "$t"
for e in pickle pickle2 json; do
	check "export memory-viz $e" "$ANALYZE" export --format memory-viz --encoding $e --no-symbols -o /dev/full "$t"
done
exit 0
