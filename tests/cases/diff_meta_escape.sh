#!/bin/sh
# GPUMEMTRACE_META holds KEY=VALUE lines (gpumemtrace --meta): diff and
# summary show a value of several lines on one line with what it cannot
# show escaped visibly (\n, \t, \\, \xNN), never as '?' (which made
# "a\nb" and "a\tb" look the same).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
for r in A B; do
	v=8; [ $r = B ] && v=16
	mkdir $r
	GPUMEMTRACE_META="$(printf 'batch=%s\nseq=128\tx\\y\001' $v)" GPUMEMTRACE_OUTPUT="$TESTDIR/$r" \
		LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$PRELOAD" \
		"$BUILD/tests/many_names" 2 > /dev/null 2> $r.err || { cat $r.err; fail "many_names $r"; }
done
"$ANALYZE" diff A/*.gmt B/*.gmt > diff.txt 2> diff.err || { cat diff.err; fail "diff exited $?"; }
assert_eq '* env GPUMEMTRACE_META: batch=8\nseq=128\tx\\y\x01  ->  batch=16\nseq=128\tx\\y\x01' \
	"$(grep 'env GPUMEMTRACE_META' diff.txt)" "diff's line"
"$ANALYZE" summary A/*.gmt > summary.txt 2> summary.err
assert_eq '    GPUMEMTRACE_META=batch=8\nseq=128\tx\\y\x01' "$(grep 'GPUMEMTRACE_META=' summary.txt)" "summary's line"
exit 0
