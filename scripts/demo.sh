#!/bin/sh
# make demo: runs the bundled demo workload (tests/routes/demo_workload.c) on
# the CUDA/NCCL test doubles under the tracer, then prints the analysis.
# On a machine with a GPU, run a real job instead: build/gpumemtrace COMMAND.
set -eu
BUILD=${1:-build}
out="$BUILD/demo"
rm -rf "$out"; mkdir -p "$out"
echo "== running the demo workload on the test doubles under gpumemtrace"
LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -o "$out" "$BUILD/tests/demo_workload"
echo
echo "== gpumemtrace-analyze summary $out/*.gmt"
"$BUILD/gpumemtrace-analyze" summary "$out"/*.gmt

echo
echo "== phases: a toy caching allocator (tests/routes/phases_workload.c) with NVTX phases"
rm -rf "$out/phases"; mkdir -p "$out/phases"
GMT_FAKE_CONTEXT_BYTES=268435456 LD_LIBRARY_PATH="$BUILD/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BUILD/gpumemtrace" -q -o "$out/phases" "$BUILD/tests/phases_workload" >/dev/null
echo "== gpumemtrace-analyze phases --pattern step $out/phases/*.gmt"
"$BUILD/gpumemtrace-analyze" phases --pattern step "$out/phases"/*.gmt
