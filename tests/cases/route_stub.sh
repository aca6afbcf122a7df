#!/bin/sh
# NVIDIA's stub libcuda (the toolkit's lib64/stubs/libcuda.so, a link stub
# that answers every call with CUDA_ERROR_STUB_LIBRARY, 34) first on the
# library path, as happens when a job finds the toolkit's stubs before the
# driver: tests/routes/route_stub.c prints the same with and without the
# preload; the preload says once on stderr which file is the stub, records
# DRIVER_STUB and writes no device record (the failed cuMemCreate names
# device 0); summary says "no GPU" in its text, on stderr and in JSON.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
STUB="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so"
[ -f "$STUB" ] || fail "no $STUB (the CUDA toolkit's stub libcuda)"
mkdir -p drv traces
ln -s "$STUB" drv/libcuda.so.1
prog="$BUILD/tests/route_stub"
LD_LIBRARY_PATH="$TESTDIR/drv:$FAKE" "$prog" > plain.out 2> plain.err
rc1=$?
LD_LIBRARY_PATH="$TESTDIR/drv:$FAKE" GPUMEMTRACE_OUTPUT="$TESTDIR/traces" LD_PRELOAD="$PRELOAD" \
	"$prog" > traced.out 2> traced.err
rc2=$?
printf '%s\n' "cuDriverGetVersion 34 -1" "cuInit 34" "cuDeviceGet 34" "cuMemAlloc 34" "cuMemCreate 34" > expected.out
diff expected.out plain.out >&2 || fail "the stub's answers (< expected, > without the preload)"
diff plain.out traced.out >&2 || fail "output differs with the preload (< without, > with)"
assert_eq 0 "$rc1" "exit status without the preload"
assert_eq "$rc1" "$rc2" "exit status with the preload"
assert_eq "gpumemtrace: $TESTDIR/drv/libcuda.so.1 is NVIDIA's stub libcuda (CUDA_ERROR_STUB_LIBRARY), not a CUDA driver: no GPU is usable in this process (is the driver installed, and its libcuda.so.1 on the library path before the toolkit's stubs directory?)" \
	"$(cat traced.err)" "the preload's stderr"
t=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$t" > dump.txt || fail "gmt-dump"
assert_eq 0 "$(grep -c '^DEVICE' dump.txt)" "device records"
assert_eq "driver_stub device=-1
alloc_fail device=-1 result=34
alloc_fail device=0 result=34" "$(awk '$1 == "EV" { r = ""; for (i = 3; i <= NF; i++) if ($i ~ /^result=/ && $2 == "alloc_fail") r = " " $i; print $2, $5 r }' dump.txt)" "events"
assert_eq "STRING id=1 text=$TESTDIR/drv/libcuda.so.1" "$(grep "^STRING id=1 " dump.txt)" "the stub's file (DRIVER_STUB addr 0x1)"
NOTE="no GPU: the process loaded NVIDIA's stub libcuda (the toolkit's link stub, CUDA_ERROR_STUB_LIBRARY), not a CUDA driver: every driver call failed"
"$ANALYZE" summary "$t" > s.txt 2> s.err || fail "summary"
assert_contains s.txt "  $NOTE"
assert_eq "gpumemtrace-analyze: $t: $NOTE" "$(cat s.err)" "summary's stderr"
"$ANALYZE" summary --json "$t" > s.json 2>/dev/null || fail "summary --json"
assert_eq "True False False 0 1 [None, None]" "$(json_get s.json "' '.join(str(v) for v in (lambda t: (t['completeness']['driver_stub'],
	t['completeness']['incomplete'], t['completeness']['cuda_activity_without_allocations'],
	t['devices'][0]['ordinal'], len(t['completeness']['notes']),
	[d['record'] for d in t['devices']]))(j['traces'][0]))")" "JSON: stub, incomplete, no-allocation note, device 0, notes, records (device 0 and the events that named none)"
exit 0
