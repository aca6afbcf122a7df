#!/bin/sh
# make bench: hot-path cost, trace size and analyzer speed, side by side with
# heaptrack in the same run. Every figure is a median of RUNS runs; compare
# ratios, not absolute numbers (they drift from machine to machine).
#   BENCH_PAIRS (default 1000000), BENCH_DEPTH (20), BENCH_RUNS (5),
#   BENCH_BIG_PAIRS (5000000: the 10,000,000-event analyzer traces, and the
#   live blocks of the trace that holds them all at once),
#   BENCH_ANALYZER_RUNS (3: runs of each analyzer command and of
#   heaptrack_print; the run of median CPU time is reported),
#   BENCH_RATE_THREADS (8), BENCH_RATE (2000000: events/s per thread),
#   BENCH_TRACER_ONLY (set: stop after the tracer's sections),
#   BENCH_REPORT_PAIRS (unset: skipped; 50000000: the report of a
#   100M-event trace, scripts/bench_report.sh)
set -eu
BUILD=${1:-build}
PAIRS=${BENCH_PAIRS:-1000000}
DEPTH=${BENCH_DEPTH:-20}
RUNS=${BENCH_RUNS:-5}
BIG=${BENCH_BIG_PAIRS:-5000000}
ARUNS=${BENCH_ANALYZER_RUNS:-3}
B=$(cd "$BUILD" && pwd)
W=$(mktemp -d /tmp/gmt-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# middle_line: the middle line of sorted input (the run of median figure)
middle_line() { awk '{ a[NR] = $0 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "%.1f-%.1f", a[1], a[NR]}'; }
# fig LINE KEY: the KEY_per_event figure of a workload's output line
fig() { echo " $1" | sed -n "s/.* $2_per_event=\([0-9.]*\).*/\1/p"; }
# run_cfg NAME CMD...: one run of CMD in a fresh output directory; its wall,
# thread-CPU and process-CPU figures are appended to $W/NAME.{ns,thread_ns,cpu_ns}
run_cfg() {
	name=$1; shift
	rm -rf "$W/out"; mkdir -p "$W/out"
	line=$( (cd "$W/out" && "$@") 2>"$W/$name.err" | grep 'ns_per_event=') ||
		{ cat "$W/$name.err" >&2; exit 1; }
	for k in ns thread_ns cpu_ns; do fig "$line" $k >> "$W/$name.$k"; done
}
med() { median < "$W/$1.$2"; }
# one CONFIG (for the sections below): RUNS runs, the median thread-CPU ns
# per event (wall clock for a workload that reports only that)
measure() {
	name=$1; shift
	i=0; for k in ns thread_ns cpu_ns; do : > "$W/$name.$k"; done
	while [ $i -lt "$RUNS" ]; do run_cfg "$name" "$@"; i=$((i + 1)); done
	if grep -q . "$W/$name.thread_ns"; then med "$name" thread_ns; else med "$name" ns; fi
}
traced() { env GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$@"; }

echo "gpumemtrace bench: $PAIRS allocation/free pairs at call depth $DEPTH, median of $RUNS interleaved runs ($(date -u +%Y-%m-%d), $(nproc) cores)"
# The configurations of the hot-path table, one run of each in turn, RUNS
# times: a load that comes and goes hits them all alike. *_fp programs are
# built with frame pointers (tests/extra.mk), the others without.
HT=$(command -v heaptrack 2>/dev/null || true)
i=0
while [ $i -lt "$RUNS" ]; do
	run_cfg plain "$B/tests/bench_cuda_fp" "$PAIRS" "$DEPTH"
	run_cfg nostack traced env GPUMEMTRACE_STACK_DEPTH=0 "$B/tests/bench_cuda_fp" "$PAIRS" "$DEPTH"
	nostk_bytes=$(stat -c %s "$W"/out/*.gmt)
	run_cfg stack traced env GPUMEMTRACE_STACK_DEPTH="$DEPTH" "$B/tests/bench_cuda_fp" "$PAIRS" "$DEPTH"
	stk_bytes=$(stat -c %s "$W"/out/*.gmt)
	stk_drops=$("$B/gpumemtrace-analyze" summary --json "$W"/out/*.gmt | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(t["drops"]["events"] for t in j["traces"]))' 2>/dev/null || echo "?")
	run_cfg plain_nofp "$B/tests/bench_cuda" "$PAIRS" "$DEPTH"
	run_cfg stack_nofp traced env GPUMEMTRACE_STACK_DEPTH="$DEPTH" "$B/tests/bench_cuda" "$PAIRS" "$DEPTH"
	run_cfg mplain "$B/tests/bench_malloc_fp" "$PAIRS" "$DEPTH"
	if [ -n "$HT" ]; then
		run_cfg heaptrack heaptrack -r -o "$W/out/ht" "$B/tests/bench_malloc_fp" "$PAIRS" "$DEPTH"
	fi
	i=$((i + 1))
done
# A less compressible stream: a live set of 1024 blocks of varying sizes, each
# pair freeing a random one (bench_cuda's "mixed" mode).
mixed_bytes() { # depth
	rm -rf "$W/out"; mkdir -p "$W/out"
	(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH="$1" "$B/tests/bench_cuda_fp" "$PAIRS" "$DEPTH" mixed >/dev/null)
	stat -c %s "$W"/out/*.gmt
}
mixed_nostk_bytes=$(mixed_bytes 0)
mixed_stk_bytes=$(mixed_bytes "$DEPTH")
events=$((2 * PAIRS + 2000))
row() { # LABEL NAME BASE: wall, thread, process; overheads against BASE
	printf "| %s | %s | %s | %s | %s | %s |\n" "$1" "$(med "$2" ns)" "$(med "$2" thread_ns)" "$(med "$2" cpu_ns)" \
		"$( [ -n "$3" ] && awk -v a="$(med "$2" thread_ns)" -v b="$(med "$3" thread_ns)" 'BEGIN { printf "%.1f", a - b }')" \
		"$( [ -n "$3" ] && awk -v a="$(med "$2" cpu_ns)" -v b="$(med "$3" cpu_ns)" 'BEGIN { printf "%.1f", a - b }')"
}
printf "\nns per event (an allocation or a free); thread: CPU of the allocating thread; process: CPU of\n"
printf "the whole process until the trace is flushed (the writer thread included)\n\n"
printf "| configuration | wall | thread | process | overhead, thread | overhead, process |\n|---|---|---|---|---|---|\n"
row "doubles, plain (frame pointers)" plain ""
row "gpumemtrace, stacks off" nostack plain
row "gpumemtrace, stacks at depth $DEPTH" stack plain
row "doubles, plain (no frame pointers)" plain_nofp ""
row "gpumemtrace, stacks at depth $DEPTH, program without frame pointers (libunwind)" stack_nofp plain_nofp
row "malloc/free, plain" mplain ""
[ -n "$HT" ] && row "heaptrack -r (peer; its compressor runs in another process)" heaptrack mplain
o() { awk -v a="$(med "$1" "$3")" -v b="$(med "$2" "$3")" 'BEGIN { printf "%.1f", a - b }'; }
printf "\n| target | measured | target | ratio |\n|---|---|---|---|\n"
awk -v v="$(o nostack plain cpu_ns)" 'BEGIN { printf "| stacks off, overhead counting the writer | %.1f ns | <= 40 ns | %.2f |\n", v, v / 40 }'
if [ -n "$HT" ]; then
	awk -v v="$(o stack plain thread_ns)" -v h="$(o heaptrack mplain thread_ns)" 'BEGIN { printf "| stacks at depth '"$DEPTH"', allocating thread, vs heaptrack -r (%.1f ns) | %.1f ns | <= 0.5 x peer | %.2f |\n", h, v, v / h }'
	awk -v v="$(o stack_nofp plain_nofp thread_ns)" -v h="$(o heaptrack mplain thread_ns)" 'BEGIN { printf "| the same without frame pointers (libunwind) | %.1f ns | | %.2f |\n", v, v / h }'
fi
printf "spread of the %s runs, process overhead with stacks off: %s ns (raw %s)\n" "$RUNS" \
	"$(o nostack plain cpu_ns)" "$(spread < "$W/nostack.cpu_ns")"
awk -v nb="$nostk_bytes" -v sb="$stk_bytes" -v ev="$events" -v drops="$stk_drops" \
    -v mnb="$mixed_nostk_bytes" -v msb="$mixed_stk_bytes" 'BEGIN {
	printf "\n| trace | bytes/event | target |\n|---|---|---|\n"
	printf "| stacks off | %.2f | |\n", nb / ev
	printf "| stacks on (stack records included) | %.2f | |\n", sb / ev
	printf "| mixed sizes and addresses, stacks off | %.2f | |\n", mnb / ev
	printf "| mixed sizes and addresses, stacks on | %.2f | <= 6 |\n", msb / ev
	printf "events dropped in the traced runs with stacks: %s\n", drops
}'

# Is the writer ever the bottleneck? BENCH_RATE_THREADS (8) threads, each
# making pairs at BENCH_RATE (2,000,000) events a second for 2 s
# (tests/routes/bench_rate.c), default buffer; offered = what the program
# made (a thread that cannot keep its schedule on a loaded machine offers
# less: the achieved rate is printed), written and dropped from the trace.
RT=${BENCH_RATE_THREADS:-8}; RR=${BENCH_RATE:-2000000}
rate_run() { # STACK_DEPTH: appends "offered rate written dropped" to $W/rate.$1
	rm -rf "$W/out"; mkdir -p "$W/out"
	line=$( (cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH="$1" "$B/tests/bench_rate" "$RT" "$RR" 2) ) || exit 1
	"$B/gpumemtrace-analyze" summary --json "$W"/out/*.gmt 2>/dev/null | python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"][0]; b = t["events"]["by_type"]
f = dict(kv.split("=") for kv in sys.argv[1].split())
print(f["offered"], f["offered_per_s"], b["alloc"] + b["free"], t["drops"]["events"])' "$line" >> "$W/rate.$1"
}
: > "$W/rate.0"; : > "$W/rate.$DEPTH"
i=0; while [ $i -lt "$RUNS" ]; do rate_run 0; rate_run "$DEPTH"; i=$((i + 1)); done
printf "\noffered rate: %s threads x %s events/s, 2 s, default buffer\n\n" "$RT" "$RR"
printf "| stacks | each run: offered, achieved M events/s, written, dropped | dropped, median | offered = written + dropped |\n|---|---|---|---|\n"
for d in 0 "$DEPTH"; do
	runs=$(awk '{ printf "%s%d, %.1f, %d, %d", (NR > 1 ? "; " : ""), $1, $2 / 1e6, $3, $4 }' "$W/rate.$d")
	pct=$(awk '{ printf "%.2f\n", 100 * $4 / $1 }' "$W/rate.$d" | median)
	exact=$(awk '$1 != $3 + $4 { bad++ } END { print bad ? "NO" : "yes" }' "$W/rate.$d")
	printf "| %s | %s | %s%% | %s |\n" "$([ "$d" = 0 ] && echo off || echo "depth $d")" "$runs" "$pct" "$exact"
done

# Instructions per event (callgrind: the same on a loaded machine as on an
# idle one), 200,000 pairs, no drop (a large buffer, no backlog window):
# the allocating thread's overhead (traced minus plain), the writer's, and
# the compressor's (the writer's second thread, in a backlog: callgrind runs
# one thread at a time, so the writer falls behind and uses it).
if command -v valgrind >/dev/null 2>&1; then
	IP=200000
	cgtot() { [ -n "$1" ] && [ -f "$1" ] && callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' || echo 0; }
	icount() { # PRELOAD STACK_DEPTH MODE: "thread writer compressor events" (instructions; events of the trace)
		rm -rf "$W/cg" "$W/out"; mkdir -p "$W/cg" "$W/out"
		(cd "$W/out" && env GPUMEMTRACE_BUFFER_MS=0 GPUMEMTRACE_BUFFER_MB=2048 GPUMEMTRACE_STACK_DEPTH="$2" \
			LD_PRELOAD="$1" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$W/cg/cg.%p" \
			"$B/tests/bench_cuda_fp" $IP "$DEPTH" $3 >/dev/null 2>&1) || exit 1
		ev=0; [ -n "$1" ] && ev=$("$B/gpumemtrace-analyze" summary --json "$W"/out/*.gmt 2>/dev/null |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["traces"][0]["events"]["total"])')
		echo "$(cgtot "$(ls "$W"/cg/cg.*-01 2>/dev/null | head -1)") $(cgtot "$(ls "$W"/cg/cg.*-02 2>/dev/null | head -1)") $(cgtot "$(ls "$W"/cg/cg.*-03 2>/dev/null | head -1)") $ev"
	}
	printf "\ninstructions per event (callgrind, %s pairs; overhead = traced - plain, per event of the trace)\n\n" "$IP"
	printf "| configuration | allocating thread, overhead | writer thread | compressor thread | writer + compressor |\n|---|---|---|---|---|\n"
	for cfg in "0 same" "0 mixed" "$DEPTH mixed"; do
		set -- $cfg; d=$1; m=$2; [ "$m" = same ] && m=""
		base=$(icount "" 0 "$m" | cut -d' ' -f1)
		set -- $(icount "$B/libgpumemtrace.so" "$d" "$m")
		awk -v t="$1" -v w="$2" -v z="$3" -v e="$4" -v p="$base" -v d="$d" -v m="${m:-same few sizes}" 'BEGIN {
			printf "| stacks %s, %s | %.0f | %.0f | %.0f | %.0f |\n", (d == 0 ? "off" : "at depth " d), m, (t - p) / e, w / e, z / e, (w + z) / e }'
	done
fi
[ -n "${BENCH_TRACER_ONLY:-}" ] && exit 0

echo
echo "analyzer on a $((2 * BIG))-event trace (stacks off):"
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$BIG" 4 >/dev/null)
big=$(ls "$W"/out/*.gmt)
"$B/gpumemtrace-analyze" summary --stats "$big" >/dev/null 2>"$W/stats" || true
cat "$W/stats"
awk -v sz="$(stat -c %s "$big")" -v ev="$((2 * BIG))" 'BEGIN { printf "trace: %d bytes, %.2f bytes/event\n", sz, sz / ev }'

echo
echo "analyzer on a $((2 * BIG))-event trace of mixed sizes and addresses (stacks off):"
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$BIG" 4 mixed >/dev/null)
big=$(ls "$W"/out/*.gmt)
"$B/gpumemtrace-analyze" summary --stats "$big" >/dev/null 2>"$W/stats" || true
cat "$W/stats"
t0=$(date +%s.%N)
"$B/gpumemtrace-analyze" phases "$big" >/dev/null 2>&1 || true
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v ev="$((2 * BIG))" 'BEGIN { printf "phases: %.3f s, %.0f events/s (wall clock)\n", b - a, ev / (b - a) }'
# The HTML report of the same trace (issue 10): page size, the analyzer's
# time and memory, its temporary file, and the drawing time in headless
# Chromium (tests/tools/browser_check.py: the page's own clock from its
# script's start to every chart drawn; median of 3 loads).
"$B/gpumemtrace-analyze" report --stats -o "$W/big.html" "$big" 2>"$W/report.stats" || true
cat "$W/report.stats"
echo "report page: $(stat -c %s "$W/big.html") bytes (bound: 10 MiB)"
if command -v chromium >/dev/null 2>&1; then
	echo '[{"eval": "window.gmtReport.drawMs", "as": "draw"}, {"eval": "window.gmtReport.parseMs", "as": "parse"}]' > "$W/steps.json"
	for i in 1 2 3; do
		python3 "$(cd "$(dirname "$0")/.." && pwd)/tests/tools/browser_check.py" "$W/big.html" "$W/steps.json" "$W/draw$i.json" >/dev/null 2>&1 || true
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r["draw"], r["parse"])' "$W/draw$i.json" 2>/dev/null
	done | sort -n | awk '{a[NR]=$0} END {split(a[int((NR+1)/2)], m, " "); printf "report page drawn in %.0f ms (its data parsed in %.0f ms; median of %d; bound: 2000 ms)\n", m[1], m[2], NR}'
fi
awk -v sz="$(stat -c %s "$big")" -v ev="$((2 * BIG))" 'BEGIN { printf "trace: %d bytes, %.2f bytes/event\n", sz, sz / ev }'
# The same workload in phases of 1000 pairs: what phases costs with a phase
# open at every instant (each change is offered to the open occurrence).
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$BIG" 4 phases >/dev/null)
big=$(ls "$W"/out/*.gmt)
t0=$(date +%s.%N)
"$B/gpumemtrace-analyze" phases "$big" >/dev/null 2>&1 || true
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v ev="$((2 * BIG))" -v occ="$((BIG / 1000))" 'BEGIN { printf "phases, the same workload in %d phase occurrences: %.3f s, %.0f events/s (wall clock)\n", occ, b - a, ev / (b - a) }'

# st_once CMD FILE [OPTIONS]: "SECONDS PEAK_RSS_KB EVENTS CPU_SECONDS" from the
# analyzer's own --stats (wall clock) and /usr/bin/time (user + system CPU: on
# a shared machine the steadier figure)
st_once() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "cpu %U %S" -o "$W/st.time" "$B/gpumemtrace-analyze" "$1" --stats --no-symbols ${3:-} "$2" 2>"$W/st.err" >/dev/null || true
	else
		"$B/gpumemtrace-analyze" "$1" --stats --no-symbols ${3:-} "$2" 2>"$W/st.err" >/dev/null || true
		echo "cpu 0 0" > "$W/st.time"
	fi
	cpu=$(awk '/^cpu/ { print $2 + $3 }' "$W/st.time")
	sed -n 's/.* events=\([0-9]*\) seconds=\([0-9.]*\) .* peak_rss_bytes=\([0-9]*\).*/\2 \3 \1/p' "$W/st.err" |
		awk -v cpu="$cpu" '{ printf "%s %d %s %s\n", $1, $2 / 1024, $3, cpu }'
}
# st CMD FILE [OPTIONS]: st_once's line of the run of median CPU time among
# ARUNS runs (one run of a command on this machine strays by up to a fifth)
st() {
	: > "$W/st.runs"
	i=0; while [ $i -lt "$ARUNS" ]; do st_once "$@" >> "$W/st.runs"; i=$((i + 1)); done
	sort -k4,4n "$W/st.runs" | middle_line
}
# Every command on the mixed trace (wall clock, start-up included, the run
# of median CPU time of ARUNS; curves writes every row as CSV to /dev/null),
# target 25 M events/s.
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$BIG" 4 mixed >/dev/null)
big=$(ls "$W"/out/*.gmt)
echo
echo "every analyzer command on the $((2 * BIG))-event mixed trace (--stats: its own seconds and peak RSS; of $ARUNS runs each, the one of median CPU time):"
printf "\n| command | seconds | events/s | CPU seconds | events per CPU second | peak RSS | target | ratio (CPU) |\n|---|---|---|---|---|---|---|---|\n"
for c in summary phases sites curves oom; do
	st "$c" "$big" | awk -v c="$c" \
		'{ cps = $4 > 0 ? $3 / $4 : 0; printf "| `%s` | %.2f | %.1f M | %.2f | %.1f M | %.1f MB | >= 25 M/s | %.2f |\n", c, $1, $3 / $1 / 1e6, $4, cps / 1e6, $2 / 1024, cps / 25e6 }'
done
# curves' engine apart from its text: every row computed and kept in its
# temporary file, 1000 per device formatted
st curves "$big" "--max-rows 1000" | awk \
	'{ cps = $4 > 0 ? $3 / $4 : 0; printf "| `curves --max-rows 1000` (the engine; 1000 rows written) | %.2f | %.1f M | %.2f | %.1f M | %.1f MB | >= 25 M/s | %.2f |\n", $1, $3 / $1 / 1e6, $4, cps / 1e6, $2 / 1024, cps / 25e6 }'
# the page and the exports, written to /dev/null (their text is part of
# the cost; the memory-viz pickle of this trace is some 145 MB)
for c in "report|-o /dev/null" "export --format chrome|--format chrome -o /dev/null" \
	"export --format memory-viz|--format memory-viz -o /dev/null" "curves --json|--json -o /dev/null"; do
	label=${c%%|*}; opts=${c#*|}
	st "${label%% *}" "$big" "$opts" | awk -v c="$label" \
		'{ cps = $4 > 0 ? $3 / $4 : 0; printf "| `%s` | %.2f | %.1f M | %.2f | %.1f M | %.1f MB | >= 25 M/s | %.2f |\n", c, $1, $3 / $1 / 1e6, $4, cps / 1e6, $2 / 1024, cps / 25e6 }'
done
"$B/gpumemtrace-analyze" curves --no-symbols "$big" 2>/dev/null | wc -c | awk -v ev="$((2 * BIG))" \
	'{ printf "curves CSV: %d bytes for %d events (%.1f bytes an event: 25 M events/s would be %.2f GB/s of text)\n", $1, ev, $1 / ev, $1 / ev * 25e6 / 1e9 }'
# BIG blocks all live at once, then all freed: gpumemtrace's commands
# against heaptrack_print on heaptrack's trace of the same pattern (malloc),
# and the memory per live block (peak RSS / BIG; target <= 64 B).
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$BIG" 4 live >/dev/null)
live=$(ls "$W"/out/*.gmt)
echo
echo "$BIG live blocks ($((2 * BIG)) events: all allocated, then all freed; of $ARUNS runs each, the one of median CPU time; the peer by /usr/bin/time):"
printf "\n| command | seconds | events/s | CPU seconds | peak RSS | bytes per live block | rate vs heaptrack_print (>= 1: faster) | CPU rate vs heaptrack_print |\n|---|---|---|---|---|---|---|---|\n"
hp=""
if [ -n "$HT" ] && command -v heaptrack_print >/dev/null 2>&1 && [ -x /usr/bin/time ]; then
	heaptrack -o "$W/htlive" "$B/tests/bench_malloc" "$BIG" 4 live >/dev/null 2>&1 || true
	htf=$(ls "$W"/htlive* 2>/dev/null | head -n 1)
	if [ -n "$htf" ]; then
		i=0; : > "$W/hp.runs"
		while [ $i -lt "$ARUNS" ]; do
			/usr/bin/time -f "%e %M %U %S" heaptrack_print "$htf" 2>&1 >/dev/null | tail -n 1 >> "$W/hp.runs"
			i=$((i + 1))
		done
		hp=$(awk '{ print $3 + $4, $0 }' "$W/hp.runs" | sort -n | cut -d' ' -f2- | middle_line)
		echo "$hp" | awk -v ev="$((2 * BIG))" -v n="$BIG" \
			'{ printf "| heaptrack_print (peer) | %.2f | %.1f M | %.2f | %.1f MB | %.0f | 1.00 | 1.00 |\n", $1, ev / $1 / 1e6, $3 + $4, $2 / 1024, $2 * 1024 / n }'
	fi
fi
hpc=$(echo "$hp" | awk '{ if (NF >= 4) print $3 + $4 }')
for c in summary phases sites curves; do
	st "$c" "$live" | awk -v c="$c" -v n="$BIG" -v hp="${hp%% *}" -v hpc="$hpc" -v hev="$((2 * BIG))" \
		'{ printf "| `%s` | %.2f | %.1f M | %.2f | %.1f MB | %.0f | %s | %s |\n", c, $1, $3 / $1 / 1e6, $4, $2 / 1024, $2 * 1024 / n, hp ? sprintf("%.2f", ($3 / $1) / (hev / hp)) : "", (hpc && $4 > 0) ? sprintf("%.2f", ($3 / $4) / (hev / hpc)) : "" }'
done

# ---- stacks and symbolisation (issue 4) ------------------------------------
# Stack capture cost per event by GPUMEMTRACE_STACK_DEPTH (0 = stacks off) on
# a workload 64 calls deep, heaptrack -r at the same call depth; then the
# time `sites` reports for symbolisation, on the demo's trace and on a
# synthetic trace (tests/tools/gen-bigstacks.c) of BENCH_STACKS (10000)
# distinct stacks of depth 20 through large libraries (BENCH_LIBS: the CUDA
# libraries present, cuBLASLt, cuDNN, NCCL), and a million addresses through
# a library with full DWARF (below).
SDEEP=64
echo
echo "stack capture by GPUMEMTRACE_STACK_DEPTH, $PAIRS pairs at call depth $SDEEP, median of $RUNS runs (programs built with frame pointers):"
splain=$(measure splain "$B/tests/bench_cuda_fp" "$PAIRS" "$SDEEP")
printf "\n| configuration | ns/event, allocating thread CPU | overhead ns/event |\n|---|---|---|\n"
printf "| doubles, plain | %.1f | |\n" "$splain"
for d in 0 8 20 64; do
	t=$(measure "sdepth$d" env GPUMEMTRACE_STACK_DEPTH=$d GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$B/tests/bench_cuda_fp" "$PAIRS" "$SDEEP")
	awk -v t="$t" -v p="$splain" -v d="$d" 'BEGIN { printf "| gpumemtrace, GPUMEMTRACE_STACK_DEPTH=%d | %.1f | %.1f |\n", d, t, t - p }'
done
if command -v heaptrack >/dev/null 2>&1; then
	smp=$(measure smplain "$B/tests/bench_malloc_fp" "$PAIRS" "$SDEEP")
	printf "| malloc/free, plain | %.1f | |\n" "$smp"
	for d in 20 $SDEEP; do
		t=$(measure "ht$d" heaptrack -r -o "$W/out/ht" "$B/tests/bench_malloc_fp" "$PAIRS" "$d")
		m=$(measure "htp$d" "$B/tests/bench_malloc_fp" "$PAIRS" "$d")
		awk -v t="$t" -v p="$m" -v d="$d" 'BEGIN { printf "| heaptrack -r, call depth %d (it unwinds all) | %.1f | %.1f |\n", d, t, t - p }'
	done
else
	echo "(heaptrack not installed: no peer figures)"
fi

# Phase boundaries: each outermost NVTX range's begin and end may sample the
# device (docs/configuration.md, GPUMEMTRACE_BOUNDARY_SAMPLE_US).
echo
echo "phase boundaries: $PAIRS outermost NVTX ranges (push + pop), median of $RUNS runs:"
nplain=$(measure nvtx-plain "$B/tests/bench_nvtx" "$PAIRS")
printf "\n| configuration | ns per push + pop | overhead ns |\n|---|---|---|\n"
printf "| doubles, no tool | %.1f | |\n" "$nplain"
for v in off auto 0; do
	t=$(measure "nvtx-$v" env NVTX_INJECTION64_PATH="$B/libgpumemtrace.so" GPUMEMTRACE_BOUNDARY_SAMPLE_US=$v \
		GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$B/tests/bench_nvtx" "$PAIRS")
	printf "| gpumemtrace, GPUMEMTRACE_BOUNDARY_SAMPLE_US=%s | %.1f | %.1f |\n" "$v" "$t" \
		"$(echo "$t $nplain" | awk '{ print $1 - $2 }')"
done

symtime() { # TRACE: the seconds and counts `sites` reports for symbolisation
	t0=$(date +%s.%N)
	"$B/gpumemtrace-analyze" sites --json --top 5 "$1" > "$W/sites.json" 2>/dev/null || true
	t1=$(date +%s.%N)
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["symbolisation"]; print("%d distinct addresses, %d files: symbolisation %.3f s, sites %.3f s wall clock" % (s["addresses"], s["files"], s["seconds"], float(sys.argv[3]) - float(sys.argv[2])))' "$W/sites.json" "$t0" "$t1"
}
echo
echo "symbolisation (sites):"
rm -rf "$W/out"; mkdir -p "$W/out"
(cd "$W/out" && traced "$B/tests/demo_workload" >/dev/null 2>&1) || true
if ls "$W"/out/*.gmt >/dev/null 2>&1; then
	printf "  demo workload: "; symtime "$(ls "$W"/out/*.gmt | head -n 1)"
fi
CUDALIB=${CUDA_HOME:-/usr/local/cuda}/lib64
libs=""
for l in ${BENCH_LIBS:-$CUDALIB/libcublasLt.so.13 $CUDALIB/libcudnn_engines_precompiled.so.9 $CUDALIB/libcudnn_adv.so.9 $CUDALIB/libnccl.so.2}; do
	[ -f "$l" ] && libs="$libs $l"
done
if [ -n "$libs" ]; then
	# shellcheck disable=SC2086
	"$B/tests/tools/gen-bigstacks" "$W/big.gmt" "${BENCH_STACKS:-10000}" 20 $libs
	mb=$(du -cm $libs | tail -n 1 | cut -f1)
	printf "  %s stacks of depth 20 through %s MB of libraries (%s): " "${BENCH_STACKS:-10000}" "$mb" "$(for l in $libs; do basename "$l"; done | tr '\n' ' ')"
	symtime "$W/big.gmt"
else
	echo "  (no large libraries found: set BENCH_LIBS)"
fi
# Symbolisation at libtorch scale: BENCH_DWARF_STACKS (50000) stacks of depth
# 20 = about a million distinct addresses through one large C++ library with
# full symbols and DWARF (BENCH_DWARF_LIB; by default libjvm, whose DWARF
# Debian's openjdk-17-dbg installs under /usr/lib/debug/.build-id). Skipped
# when the library or its debug file is not installed.
DWLIB=${BENCH_DWARF_LIB:-/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so}
dwid=""
if [ -f "$DWLIB" ]; then
	dwid=$(readelf -n "$DWLIB" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1)
fi
dwdbg=/usr/lib/debug/.build-id/$(echo "$dwid" | cut -c1-2)/$(echo "$dwid" | cut -c3-).debug
if [ -n "$dwid" ] && [ -f "$dwdbg" ]; then
	"$B/tests/tools/gen-bigstacks" "$W/dwarf.gmt" "${BENCH_DWARF_STACKS:-50000}" 20 "$DWLIB"
	printf "  %s stacks of depth 20 through %s (%s MB, DWARF %s MB): " "${BENCH_DWARF_STACKS:-50000}" \
		"$(basename "$DWLIB")" "$(du -m "$DWLIB" | cut -f1)" "$(du -m "$dwdbg" | cut -f1)"
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S %M" -o "$W/dwarf.time" sh -c 'exec "$0" sites --json --top 5 "$1" > "$2" 2>/dev/null' \
			"$B/gpumemtrace-analyze" "$W/dwarf.gmt" "$W/sites.json" || true
		python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["symbolisation"]; u,k,m=open(sys.argv[2]).read().split()[:3]; print("%d distinct addresses: symbolisation %.3f s (wall clock), sites %.2f s CPU, peak RSS %.0f MB" % (s["addresses"], s["seconds"], float(u) + float(k), int(m) / 1024))' "$W/sites.json" "$W/dwarf.time"
	else
		symtime "$W/dwarf.gmt"
	fi
else
	echo "  (no large library with DWARF: install openjdk-17-dbg, or set BENCH_DWARF_LIB to a library whose debug file is under /usr/lib/debug/.build-id)"
fi

if [ -n "${BENCH_REPORT_PAIRS:-}" ]; then
	echo
	sh "$(cd "$(dirname "$0")" && pwd)/bench_report.sh" "$BUILD" "$BENCH_REPORT_PAIRS"
fi
