#!/bin/sh
# Two CUDA runtime majors in one process, both in the global scope: the
# program calls runtime 13, libmajors12.so (loaded RTLD_GLOBAL after start)
# calls runtime 12 (the doubles'
# two builds, whose symbols differ only by version node, as the real
# libcudart.so.12 and .so.13 do). Each call reaches its caller's runtime
# (the failed call of each sets only its own runtime's last error), the
# output is the same with and without the preload, and every allocation is
# named with its runtime call.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_majors "$BUILD/tests/libmajors12.so"
assert_eq 0 "$ROUTE_RC" "exit status"
cat > expected.out <<EOT
rt13 cudaRuntimeGetVersion 0 13000
rt13 cudaMalloc 0
rt12 cudaRuntimeGetVersion 0 12080
rt12 cudaMalloc 0
rt12 cudaMalloc 2^62 2
rt12 cudaGetLastError 2
rt12 cudaFree 0
rt13 cudaGetLastError 0
rt13 cudaFree 0
EOT
diff expected.out traced.out >&2 || fail "output (< expected, > actual)"
O='owner=application'
cat > expected.txt <<EOT
alloc device=0 addr=rt13_d size=1048576 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
alloc device=0 addr=rt12_d size=2097152 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
alloc_fail device=0 addr=0x0 size=4611686018427387904 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=2
free device=-1 addr=rt12_d size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
free device=-1 addr=rt13_d size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
EOT
route_events | grep -E '^(alloc|alloc_fail|free) ' > events.txt
diff expected.txt events.txt >&2 || fail "events (< expected, > trace)"
exit 0
