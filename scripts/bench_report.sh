#!/bin/sh
# bench_report.sh - the HTML report of a long trace (issue 10's target: a
# 100-million-event trace gives a page under 10 MB that draws in under 2 s),
# beside `phases` on the same trace (the peer: one run of the phase engine,
# which `report` runs once, then again for each device whose stream passed
# the temporary file's budget, at the end and to draw).
#
#   sh scripts/bench_report.sh [BUILD [PAIRS]]   (default build, 50000000
#                                                 pairs: 100M events)
#
# The trace: tests/bench_cuda PAIRS 4 mixed, traced with stacks off. Prints
# the trace's size, each command's wall and user CPU time and peak RSS
# (/usr/bin/time), report/phases as a ratio, the temporary file's bytes
# (--stats) against its budget, the page's size against 10 MiB and its
# drawing time in headless Chromium (tests/tools/browser_check.py: the
# page's own clock from its script's start to every chart drawn, median of
# 3 loads) against 2 s. Run by make bench when BENCH_REPORT_PAIRS is set.
set -eu
BUILD=${1:-build}
PAIRS=${2:-50000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$BUILD" && pwd)
W=$(mktemp -d /tmp/gmt-bench-report.XXXXXX)
export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/out"
echo "report of a $((2 * PAIRS))-event trace ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
(cd "$W/out" && env GPUMEMTRACE_OUTPUT="$W/out" LD_PRELOAD="$B/libgpumemtrace.so" GPUMEMTRACE_STACK_DEPTH=0 \
	GPUMEMTRACE_BUFFER_MB=1024 "$B/tests/bench_cuda" "$PAIRS" 4 mixed > /dev/null)
big=$(ls "$W"/out/*.gmt)
echo "trace: $(stat -c %s "$big") bytes"
timed() { # NAME CMD...: wall s, user s, peak RSS KiB into $W/NAME.time
	n=$1; shift
	/usr/bin/time -f '%e %U %M' -o "$W/$n.time" "$@" > /dev/null 2> "$W/$n.err" || { cat "$W/$n.err" >&2; return 1; }
}
timed phases "$B/gpumemtrace-analyze" phases "$big"
timed report "$B/gpumemtrace-analyze" report --stats -o "$W/big.html" "$big"
grep 'temporary_file_bytes' "$W/report.err" || true
read pw pu pm < "$W/phases.time"
read rw ru rm_ < "$W/report.time"
printf '| command | wall s | user s | peak RSS |\n|---|---|---|---|\n'
printf '| phases (peer) | %s | %s | %s KiB |\n| report | %s | %s | %s KiB |\n' "$pw" "$pu" "$pm" "$rw" "$ru" "$rm_"
awk -v a="$ru" -v b="$pu" 'BEGIN { printf "report / phases, user CPU: %.2f\n", a / b }'
tb=$(sed -n 's/.*temporary_file_bytes=\([0-9]*\).*/\1/p' "$W/report.err")
echo "temporary file: ${tb:-?} bytes (budget 268435456 plus a chunk per stream)"
echo "report page: $(stat -c %s "$W/big.html") bytes (bound: 10 MiB = 10485760)"
if command -v chromium > /dev/null 2>&1; then
	echo '[{"eval": "window.gmtReport.drawMs", "as": "draw"}, {"eval": "window.gmtReport.parseMs", "as": "parse"}]' > "$W/steps.json"
	for i in 1 2 3; do
		python3 "$ROOT/tests/tools/browser_check.py" "$W/big.html" "$W/steps.json" "$W/draw$i.json" > /dev/null 2>&1 || true
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["results"]["draw"], r["results"]["parse"], r["timing"]["load_ms"])' "$W/draw$i.json" 2> /dev/null
	done | sort -n | awk '{a[NR]=$0} END {split(a[int((NR+1)/2)], m, " "); printf "report page drawn in %.0f ms (data parsed in %.0f ms, load event %.0f ms; median of %d; bound: 2000 ms)\n", m[1], m[2], m[3], NR}'
fi
