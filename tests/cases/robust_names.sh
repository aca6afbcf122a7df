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
# Then the analyzer's own memory for those names (many_names N alloc: the
# same names with a device, a 64 MiB block in n0500000, a failed 1 PiB
# request there, and the 128 MiB peak in occurrence 2 of n0000000): the
# commands that list no phase (summary, curves, oom, sites, flamegraph,
# sites --phase) keep only what the open occurrences need; what grows
# with the names is the trace's string table (analyzer/support/
# gmt_strtab.h): 8 B per STRING id (~2,000,000 ids here: a dense array
# grown to 2^21 entries, 16 MiB), per distinct text (1,000,001) a 24-byte
# record (24 MiB) and an 8-byte index slot (2^21 slots, 16 MiB, 24 MiB
# while it grows): at most 64 MiB + the program's own ~8 MiB; the bound
# is 96 MiB. phases, which lists every name, at most 384 MiB here (about
# 290 B a name: docs/analyzer.md). Before, every name kept its aggregate and listed
# occurrence with its per-device figures: 6.3 GB for each of these
# commands (553 MB without a device). Outputs exact: each command places
# the peak and the failure in their occurrences.
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

# peak_kib OUT CMD...: runs CMD (stdout to OUT, stderr to OUT.err), prints
# its peak resident size in KiB (getrusage's ru_maxrss of the child)
peak_kib() {
	python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "w") as o, open(sys.argv[1] + ".err", "w") as e:
    rc = subprocess.call(sys.argv[2:], stdout=o, stderr=e)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc in (0, 1) else "rc%d" % rc)' "$@"
}
# phases lists every name: its record, the one occurrence listed and the
# string table, about 290 B a name here (docs/analyzer.md); 553 MB before
kib=$(peak_kib phases.out "$ANALYZE" phases --max-occurrences 1 "$T")
case $kib in rc*) cat phases.out.err; fail "phases exited ${kib#rc}" ;; esac
[ "$kib" -le $((384 * 1024)) ] || fail "phases: peak resident size $kib KiB > 384 MiB for $N distinct names"
sed -n 's/^Phase "\(.*\)": \([0-9]*\) occurrences*$/\1 \2/p' phases.out > got.txt
rm -f phases.out   # 175 MB
awk -v n=$N 'BEGIN { print "start 1"; for (i = 0; i < n; i++) printf "n%07d %d\n", i, (i == 0 || i == n - 1) ? 2 : 1 }' > want.txt
cmp -s want.txt got.txt || { diff want.txt got.txt | head -5 >&2; fail "phases does not name every phase exactly ($(wc -l < got.txt) lines)"; }

mkdir alloc && cd alloc
GPUMEMTRACE_BUFFER_MB=8 GPUMEMTRACE_BUFFER_MS=0 GPUMEMTRACE_OUTPUT="$TESTDIR/alloc" \
	LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$PRELOAD" \
	"$BUILD/tests/many_names" $N alloc > out.txt 2> err.txt || { cat err.txt; fail "many_names alloc exited $?"; }
set -- "$TESTDIR"/alloc/*.gmt
[ $# = 1 ] && [ -f "$1" ] || fail "expected one trace of many_names alloc: $*"
T2=$1
bound=$((96 * 1024))
for cmd in summary curves oom sites flamegraph "sites --phase n0500000" "flamegraph --phase n0000000"; do
	f=$(echo "$cmd" | tr ' ' _)
	kib=$(peak_kib "$f.out" "$ANALYZE" $cmd "$T2")
	case $kib in rc*) cat "$f.out.err"; fail "$cmd exited ${kib#rc}" ;; esac
	[ "$kib" -le $bound ] || fail "$cmd: peak resident size $kib KiB > $bound KiB for $N distinct names"
done
peak='    in phase "n0000000" occurrence 2 (warm), begun at'
grep -q "^$peak" summary.out || fail "summary does not place the peak in occurrence 2 of n0000000"
grep -A1 '^Failed allocations: 1$' summary.out | grep -q '^  at ts' || fail "summary: no failure"
grep -q '^    in phase "n0500000" occurrence 1 (cold), begun at' summary.out || fail "summary does not place the failure in n0500000"
grep -q '^  Peak device bytes held by live allocations: 134217728 B (128.00 MiB)$' summary.out || fail "summary's peak"
grep -q ', in phase "n0500000" #1 (cold)$' oom.out || fail "oom does not place the failure in n0500000"
grep -q '^  request      1125899906842624 B (1024.00 TiB) on device 0' oom.out || fail "oom's request"
grep -q '^  in phase "n0000000" occurrence 2 (warm)$' sites.out || fail "sites does not place the peak"
# curves: every phase with the device names its rows (the N names, not
# "start", over before the context; the header and the rows outside any
# phase add 2), and the rows holding memory
# are exactly these (phase, outside, taken, live; consecutive repeats,
# the device's used samples, merged)
n=$(cut -d, -f5 curves.out | sort -u | wc -l)
assert_eq $((N + 2)) "$n" "distinct phase column values in curves"
cut -d, -f5,8,10,11 curves.out | grep -v ',0,0,0$' | uniq > held.txt
printf '%s\n' phase,outside_bytes,taken_bytes,live_bytes n0500000,67108864,67108864,67108864 \
	,67108864,67108864,67108864 n0500001,67108864,67108864,67108864 \
	n0000000,134217728,134217728,134217728 > want_held.txt
cmp -s want_held.txt held.txt || { diff want_held.txt held.txt >&2; fail "curves' rows with memory"; }
rm -f curves.out
# sites --phase: the named phase's occurrences only (1 of n0500000: the
# 64 MiB block at its peak)
sed -n '/^phase n0500000: /,/^  device 0: peak/p' sites_--phase_n0500000.out | sed 's/(ts [0-9]* to [0-9]* ns)/(ts)/; s/ at ts [0-9]* ns/ at ts/' > got_phase.txt
printf '%s\n' 'phase n0500000: 1 occurrence' '  occurrence 1 (ts)' \
	'  device 0: peak in the occurrence 67108864 B (64.00 MiB) at ts (1 site):' > want_phase.txt
cmp -s want_phase.txt got_phase.txt || { diff want_phase.txt got_phase.txt >&2; fail "sites --phase n0500000"; }
# flamegraph --phase: occurrence 2 of n0000000 holds the 128 MiB block
grep -q '^n0000000 #2;device 0;.* 134217728$' flamegraph_--phase_n0000000.out ||
	{ cat flamegraph_--phase_n0000000.out; fail "flamegraph --phase n0000000"; }
exit 0
