#!/bin/sh
# Bounded memory for distinct phase names (issue 11): a program pushing
# 1,000,000 distinct names (tests/routes/many_names.c) under an 8 MiB buffer
# cap. The tracer keeps names up to its names' budget (an eighth of the
# cap) and writes the rest BY VALUE (a STRING at each use, held in the
# events' buffer until written), so:
#   - its own counters (its stderr line at exit): the budget 1048576 bytes,
#     at most that kept, every use of a name beyond the budget written by
#     value (2 per name: begin and end; the program waits for the writer
#     every 10,000 names, so the buffer never fills), 0 lost, and at most
#     the cap buffered when one was queued;
#   - the program's peak resident size grows by at most the cap and the
#     writer's own buffers (8 + 4 MiB), whatever the number of names;
#   - the analyzer names every phase exactly: "start", then n0000000 to
#     n0999999 in order, n0000000 and n0999999 twice (a name by value used
#     again is the same phase).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
N=1000000
GPUMEMTRACE_BUFFER_MB=8 GPUMEMTRACE_BUFFER_MS=0 run_traced "$BUILD/tests/many_names" $N > out.txt 2> err.txt ||
	{ cat err.txt; fail "many_names exited $?"; }
T=$(the_trace)
assert_contains err.txt "more distinct names than the trace buffer keeps (GPUMEMTRACE_BUFFER_MB / 8): further new names are written with each use"
line=$(grep '^gpumemtrace: names: ' err.txt) || { cat err.txt; fail "no names line from the tracer"; }
set -- $(echo "$line" | sed -n "s/^gpumemtrace: names: \([0-9]*\) bytes of the names' budget of \([0-9]*\) kept, \([0-9]*\) written by value, \([0-9]*\) lost (the buffer was full); at most \([0-9]*\) bytes buffered when one was queued$/\1 \2 \3 \4 \5/p")
[ $# = 5 ] || fail "names line: $line"
kept=$1 budget=$2 byval=$3 lost=$4 buffered=$5
assert_eq 1048576 "$budget" "the names' budget (8 MiB / 8)"
[ "$kept" -le "$budget" ] || fail "kept $kept bytes > budget $budget"
assert_eq 0 "$lost" "names lost"
# every name costs the same (name_cost of 8 characters: 3 * 9 + 2 * 24 + 64
# = 139 bytes), so the kept ones are the first budget / 139 (with "start",
# 139 too, and the domain "gpumemtrace", 3 * 12 + 112 = 148)
k=$(( (budget - 148) / 139 ))
assert_eq $(( 2 * (N + 1 - k) + 2 )) "$byval" "uses written by value (2 per name beyond the budget, the last name twice more)"
[ "$buffered" -le $((8 << 20)) ] || fail "buffered $buffered bytes > the cap"
grew=$(sed -n 's/^hwm_grew_kib=//p' out.txt)
[ -n "$grew" ] && [ "$grew" -le $(( (8 + 4) * 1024 )) ] || fail "peak resident size grew by $grew KiB (cap 8 MiB)"

"$ANALYZE" phases --max-occurrences 1 "$T" 2> a.err |
	sed -n 's/^Phase "\(.*\)": \([0-9]*\) occurrences*$/\1 \2/p' > got.txt
awk -v n=$N 'BEGIN { print "start 1"; for (i = 0; i < n; i++) printf "n%07d %d\n", i, (i == 0 || i == n - 1) ? 2 : 1 }' > want.txt
cmp -s want.txt got.txt || { diff want.txt got.txt | head -5 >&2; fail "phases does not name every phase exactly ($(wc -l < got.txt) lines)"; }
exit 0
