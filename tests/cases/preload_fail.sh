#!/bin/sh
# Failed allocations and a failed free (64 MiB device): the program sees the
# same errors and out-parameters with and without the preload; each failed
# allocation is an alloc_fail with the requested size, kind, API, stream and
# the driver's result (2 = CUDA_ERROR_OUT_OF_MEMORY, 1 = INVALID_VALUE),
# followed by a meminfo sample; the bogus free is a free voided by a
# free_fail with the driver's result. Killed right after a failure
# (SIGKILL), the trace on disk already holds the failure and its sample.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export GMT_FAKE_MEM_BYTES=67108864
route_run route_fail
assert_eq 0 "$ROUTE_RC" "exit status"
route_events -a > events.txt
O='owner=application flags=0'
M='meminfo device=0 addr=0x3000000 size=67108864 stream=0x0 kind=unknown api=driver'
cat > expected.txt <<EOT
ctx_create device=0 addr=$(awk '$2 == "ctx_create" { sub("addr=", "", $6); print $6 }' dump.txt) size=0 stream=0x0 kind=unknown api=driver $O result=0
meminfo device=0 addr=0x4000000 size=67108864 stream=0x0 kind=unknown api=driver $O result=0
ctx_current device=0 addr=$(awk '$2 == "ctx_create" { sub("addr=", "", $6); print $6 }' dump.txt) size=0 stream=0x0 kind=unknown api=driver $O result=0
alloc device=0 addr=b size=16777216 stream=0x0 kind=plain api=driver $O result=0
alloc_fail device=0 addr=0x0 size=134217728 stream=0x0 kind=plain api=driver $O result=2
$M $O result=0
alloc_fail device=0 addr=0x0 size=104857600 stream=0x0 kind=plain api=cudaMalloc $O result=2
$M $O result=0
alloc_fail device=0 addr=0x0 size=62914560 stream=s kind=stream_ordered api=driver $O result=2
$M $O result=0
alloc_fail device=0 addr=0x0 size=67108864 stream=0x0 kind=vmm_physical api=driver $O result=2
$M $O result=0
alloc_fail device=0 addr=0x0 size=1048576 stream=0x0 kind=vmm_physical api=driver $O result=1
$M $O result=0
free device=-1 addr=0xdead000 size=0 stream=0x0 kind=unknown api=driver $O result=0
free_fail device=-1 addr=0xdead000 size=0 stream=0x0 kind=unknown api=driver $O result=1
free device=-1 addr=b size=0 stream=0x0 kind=unknown api=driver $O result=0
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
assert_contains traced.out "cuMemFree of a bogus pointer = 1"
grep '^EV alloc_fail' dump.txt | grep -q ' stack=0 ' && fail "a failed allocation without a stack"

# SIGKILL right after the first failure: same status both ways, and the
# failure with its sample is already on disk.
rm -rf "$TESTDIR/traces"
run_fake "$BUILD/tests/route_fail" kill > plain.out 2>&1
rc1=$?
run_traced "$BUILD/tests/route_fail" kill > traced.out 2> traced.err
rc2=$?
assert_eq 137 "$rc1" "killed without the preload"
assert_eq "$rc1" "$rc2" "killed with the preload"
"$DUMP" "$(the_trace)" > dump.txt
assert_eq "STATUS ok cut" "$(tail -n 1 dump.txt)" "status of the killed trace"
grep '^EV' dump.txt | tail -n 2 | cut -d' ' -f2,7 > last.txt
printf 'alloc_fail size=134217728\nmeminfo size=67108864\n' > last.expected
diff last.expected last.txt >&2 || fail "the killed trace does not end with the failure and its sample"
exit 0
