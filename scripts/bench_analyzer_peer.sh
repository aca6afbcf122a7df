#!/bin/sh
# bench_analyzer_peer.sh PEER_BUILD [BUILD]: the analyzer of BUILD (default
# build/) side by side with the analyzer of PEER_BUILD (an older build of
# this repository: make -C WORKTREE build/gpumemtrace-analyze
# build/libgpumemtrace.so build/fakecuda/libcuda.so.1
# build/fakecuda/libcudart.so.13 build/fakecuda/libnccl.so.2
# build/tests/bench_cuda), for a change of the analyzer that must not make
# it slower. The traces are written by the PEER's tracer, so both analyzers
# read them whatever format version each knows: BENCH_BIG_PAIRS (5000000)
# allocation/free pairs (10,000,000 events, stacks off), uniform and of
# mixed sizes and addresses, as make bench's analyzer rows. Each command
# runs BENCH_RUNS (5) times per analyzer, the two interleaved, pinned to
# one core when taskset exists; the table gives the median wall seconds and
# BUILD / PEER (below 1: faster).
set -eu
PEER=$(cd "$1" && pwd)
B=$(cd "${2:-build}" && pwd)
BIG=${BENCH_BIG_PAIRS:-5000000}
RUNS=${BENCH_RUNS:-5}
W=$(mktemp -d /tmp/gmt-bench-peer.XXXXXX)
trap 'rm -rf "$W"' EXIT
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c $(($(nproc) - 1))"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# wall seconds of one run of CMD... (output discarded; a failure stops it)
wall() {
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	$PIN "$@" > /dev/null 2> "$W/err" || { cat "$W/err" >&2; echo "bench_analyzer_peer: $* failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }'
}
for shape in uniform mixed; do
	mkdir -p "$W/$shape"
	arg=""; [ $shape = mixed ] && arg=mixed
	# shellcheck disable=SC2086
	(cd "$W/$shape" && LD_LIBRARY_PATH="$PEER/fakecuda" GPUMEMTRACE_OUTPUT="$W/$shape" \
		GPUMEMTRACE_STACK_DEPTH=0 GPUMEMTRACE_BUFFER_MB=1024 LD_PRELOAD="$PEER/libgpumemtrace.so" \
		"$PEER/tests/bench_cuda" "$BIG" 4 $arg > /dev/null)
done
echo "analyzer $B beside $PEER: $((2 * BIG))-event traces written by the peer's tracer, median of $RUNS interleaved runs, wall seconds ($(date -u +%Y-%m-%d), $(nproc) cores${PIN:+, one core})"
printf "\n| trace | command | peer s | this s | this / peer |\n|---|---|---|---|---|\n"
for shape in uniform mixed; do
	t=$(ls "$W/$shape"/*.gmt)
	for cmd in "summary" "phases" "curves" "sites --no-symbols"; do
		: > "$W/p"; : > "$W/n"
		i=0
		while [ $i -lt "$RUNS" ]; do
			# shellcheck disable=SC2086
			wall "$PEER/gpumemtrace-analyze" $cmd "$t" >> "$W/p"
			# shellcheck disable=SC2086
			wall "$B/gpumemtrace-analyze" $cmd "$t" >> "$W/n"
			i=$((i + 1))
		done
		p=$(median < "$W/p"); n=$(median < "$W/n")
		echo "$shape $cmd $p $n" | awk '{ c = $2; for (i = 3; i < NF - 1; i++) c = c " " $i;
			printf "| %s | %s | %.3f | %.3f | %.2f |\n", $1, c, $(NF - 1), $NF, $NF / $(NF - 1) }'
	done
done
