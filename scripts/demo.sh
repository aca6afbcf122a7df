#!/bin/sh
# make demo: runs the bundled demo workload (tests/routes/demo_workload.c) on
# the CUDA/NCCL test doubles under the tracer, then shows what each command
# of the analyzer says about it: summary, sites, flamegraph, oom, report;
# then phases on a toy caching allocator with NVTX phases
# (tests/routes/phases_workload.c), its report, both processes on one page,
# the exports (build/demo/*.html, trace.json, phases/snapshot.pickle), an
# out-of-memory post-mortem of a training step (tests/routes/lib/oom_main.c)
# and two runs compared (tests/routes/lib/diff_main.c). Everything it prints
# is known by construction (the workloads' top comments give the numbers).
# On a machine with a GPU, run a real job instead: build/gpumemtrace COMMAND.
#   sh scripts/demo.sh [BUILD [OUTDIR]]   (default build, BUILD/demo)
set -eu
BUILD=${1:-build}
out=${2:-$BUILD/demo}
A="$BUILD/gpumemtrace-analyze"
rm -rf "$out"; mkdir -p "$out/run"
echo "== running the demo workload on the test doubles under gpumemtrace"
LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -o "$out/run" "$BUILD/tests/demo_workload"
set -- "$out/run"/*.gmt
t=$1
echo
echo "== gpumemtrace-analyze summary $t"
echo "   (the peak and its exact composition; the per-kind maxima add up to a moment that never happened)"
"$A" summary "$t"
echo
echo "== gpumemtrace-analyze sites --top 3 $t"
echo "   (who holds the bytes at the peak: call sites, symbolised offline)"
"$A" sites --top 3 "$t"
echo
echo "== gpumemtrace-analyze flamegraph $t   (first lines; pipe into flamegraph.pl or speedscope)"
"$A" flamegraph "$t" 2>/dev/null | head -n 4
echo
echo "== gpumemtrace-analyze oom $t"
echo "   (the 64 GiB request the demo makes on purpose: what was live when it failed)"
"$A" oom "$t"
echo
echo "== gpumemtrace-analyze report -o $out/report.html $t   (one HTML page, opens offline)"
"$A" report -o "$out/report.html" "$t"
echo "   written: $out/report.html"

echo
echo "== phases: a toy caching allocator (tests/routes/phases_workload.c) with NVTX phases"
mkdir -p "$out/phases"
GMT_FAKE_CONTEXT_BYTES=268435456 LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -q -o "$out/phases" "$BUILD/tests/phases_workload" >/dev/null
echo "== gpumemtrace-analyze phases --pattern step $out/phases/*.gmt"
echo "   The one DISAGREE line below is there on purpose: inside step 2 the toy"
echo "   allocator's own counter says 512 B more allocated than its allocation"
echo "   events add up to. The analyzer rebuilds allocated and reserved from the"
echo "   framework's events and checks them against its counters at every"
echo "   checkpoint; with a real framework, a DISAGREE means events went missing"
echo "   or the framework counts memory it never reported, so its view of that"
echo "   moment cannot be trusted to the byte."
"$A" phases --pattern step "$out/phases"/*.gmt

echo
echo "== gpumemtrace-analyze report: the phases workload, and both traces on one page"
"$A" report -o "$out/phases/report.html" "$out/phases"/*.gmt
"$A" report -o "$out/both.html" "$t" "$out/phases"/*.gmt
echo "   written: $out/phases/report.html, $out/both.html (one device: both processes on one time axis)"
echo "== exports: $out/trace.json (Perfetto's UI, chrome://tracing), $out/phases/snapshot.pickle (pytorch.org/memory_viz)"
"$A" export --format chrome -o "$out/trace.json" "$t" "$out/phases"/*.gmt
"$A" export --format memory-viz -o "$out/phases/snapshot.pickle" "$out/phases"/*.gmt

echo
echo "== oom: a training step that runs out of memory (tests/routes/lib/oom_main.c, an 8 GiB device)"
mkdir -p "$out/oom"
GMT_FAKE_MEM_BYTES=8589934592 GMT_FAKE_CONTEXT_BYTES=268435456 \
	LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -q -o "$out/oom" "$BUILD/tests/oom_workload" oom >/dev/null || true
echo "== its post-mortem: gpumemtrace-analyze oom $out/oom/*.gmt"
"$A" oom "$out/oom"/*.gmt

echo
echo "== diff: one job on two driver versions, NCCL_BUFFSIZE 4 and 8 MiB, its library rebuilt"
echo "   (tests/routes/lib/diff_main.c)"
mkdir -p "$out/diff_a" "$out/diff_b"
NCCL_BUFFSIZE=4194304 GMT_FAKE_CONTEXT_BYTES=268435456 \
	LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -q -o "$out/diff_a" "$BUILD/tests/diff_workload" "$BUILD/tests/diff_v1/libdiffws.so" >/dev/null
NCCL_BUFFSIZE=8388608 GMT_FAKE_CONTEXT_BYTES=536870912 GMT_FAKE_DRIVER_VERSION=13010 GMT_FAKE_NCCL_VERSION=22903 \
	LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -q -o "$out/diff_b" "$BUILD/tests/diff_workload" "$BUILD/tests/diff_v2/libdiffws.so" >/dev/null
echo "== gpumemtrace-analyze diff --fail-above 2 $out/diff_a $out/diff_b"
"$A" diff --fail-above 2 "$out/diff_a" "$out/diff_b" || \
	echo "(exit status $?: a matched peak grew by more than 2 %, as a CI gate would see it)"
