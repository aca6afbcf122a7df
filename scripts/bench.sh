#!/bin/sh
# make bench: hot-path cost, trace size and analyzer speed, side by side with
# heaptrack in the same run. Every figure is a median of RUNS runs; compare
# ratios, not absolute numbers (they drift from machine to machine).
#   BENCH_PAIRS (default 1000000), BENCH_DEPTH (20), BENCH_RUNS (3),
#   BENCH_BIG_PAIRS (5000000: the 10,000,000-event analyzer trace)
set -eu
BUILD=${1:-build}
PAIRS=${BENCH_PAIRS:-1000000}
DEPTH=${BENCH_DEPTH:-20}
RUNS=${BENCH_RUNS:-3}
BIG=${BENCH_BIG_PAIRS:-5000000}
B=$(cd "$BUILD" && pwd)
W=$(mktemp -d /tmp/gmt-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
nspe() { sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p'; }
# one CONFIG: runs the workload RUNS times, prints the median ns per event
measure() {
	name=$1; shift
	i=0; : > "$W/$name.times"
	while [ $i -lt "$RUNS" ]; do
		rm -rf "$W/out"; mkdir -p "$W/out"
		(cd "$W/out" && "$@") 2>"$W/$name.err" | nspe >> "$W/$name.times" ||
			{ cat "$W/$name.err" >&2; exit 1; }
		i=$((i + 1))
	done
	median < "$W/$name.times"
}
traced() { env GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$@"; }

echo "gpumemtrace bench: $PAIRS allocation/free pairs at call depth $DEPTH, median of $RUNS runs ($(date -u +%Y-%m-%d), $(nproc) cores)"
plain=$(measure plain "$B/tests/bench_cuda" "$PAIRS" "$DEPTH")
nostk=$(measure nostack env GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$B/tests/bench_cuda" "$PAIRS" "$DEPTH")
nostk_bytes=$(stat -c %s "$W"/out/*.gmt)
stk=$(measure stack env GPUMEMTRACE_STACK_DEPTH=$DEPTH GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" "$B/tests/bench_cuda" "$PAIRS" "$DEPTH")
stk_bytes=$(stat -c %s "$W"/out/*.gmt)
stk_drops=$("$B/gpumemtrace-analyze" summary --json "$W"/out/*.gmt | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(t["drops"]["events"] for t in j["traces"]))' 2>/dev/null || echo "?")
# A less compressible stream: a live set of 1024 blocks of varying sizes, each
# pair freeing a random one (bench_cuda's "mixed" mode).
mixed_bytes() { # depth
	rm -rf "$W/out"; mkdir -p "$W/out"
	(cd "$W/out" && traced env GPUMEMTRACE_STACK_DEPTH="$1" "$B/tests/bench_cuda" "$PAIRS" "$DEPTH" mixed >/dev/null)
	stat -c %s "$W"/out/*.gmt
}
mixed_nostk_bytes=$(mixed_bytes 0)
mixed_stk_bytes=$(mixed_bytes "$DEPTH")
mplain=$(measure mplain "$B/tests/bench_malloc" "$PAIRS" "$DEPTH")
if command -v heaptrack >/dev/null 2>&1; then
	ht=$(measure heaptrack heaptrack -r -o "$W/out/ht" "$B/tests/bench_malloc" "$PAIRS" "$DEPTH")
else
	ht=""
fi
events=$((2 * PAIRS + 2000))
awk -v p="$plain" -v n="$nostk" -v s="$stk" -v mp="$mplain" -v h="$ht" \
    -v nb="$nostk_bytes" -v sb="$stk_bytes" -v ev="$events" -v drops="$stk_drops" \
    -v mnb="$mixed_nostk_bytes" -v msb="$mixed_stk_bytes" 'BEGIN {
	printf "\n| configuration | ns/event in the loop | overhead ns/event | target | ratio |\n|---|---|---|---|---|\n"
	printf "| doubles, plain | %.1f | | | |\n", p
	printf "| gpumemtrace, stacks off | %.1f | %.1f | <= 60 | %.2f |\n", n, n - p, (n - p) / 60
	if (h != "") {
		printf "| malloc/free, plain | %.1f | | | |\n", mp
		printf "| heaptrack -r (peer) | %.1f | %.1f | | |\n", h, h - mp
		printf "| gpumemtrace, stacks at depth %d | %.1f | %.1f | <= heaptrack | %.2f |\n", '"$DEPTH"', s, s - p, (s - p) / (h - mp)
	} else {
		printf "| gpumemtrace, stacks at depth %d | %.1f | %.1f | heaptrack not installed | |\n", '"$DEPTH"', s, s - p
	}
	printf "\n| trace | bytes/event | target |\n|---|---|---|\n"
	printf "| stacks off | %.2f | <= 8 |\n", nb / ev
	printf "| stacks on (stack records included) | %.2f | <= 8 |\n", sb / ev
	printf "| mixed sizes and addresses, stacks off | %.2f | <= 8 |\n", mnb / ev
	printf "| mixed sizes and addresses, stacks on | %.2f | <= 8 |\n", msb / ev
	printf "events dropped in the traced runs with stacks: %s\n", drops
}'

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
awk -v sz="$(stat -c %s "$big")" -v ev="$((2 * BIG))" 'BEGIN { printf "trace: %d bytes, %.2f bytes/event\n", sz, sz / ev }'
