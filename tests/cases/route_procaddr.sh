#!/bin/sh
# Route 4: cuGetProcAddress_v2 / cuGetProcAddress, by version and with the
# per-thread flag: the program gets our wrapper of exactly the implementation
# the driver chose (same dladdr names as without the preload) and the
# semantics of that implementation (cuCtxSynchronize at 13000 takes a
# context; the _ptsz variant is recorded with flags=1).
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2
route_run route_procaddr
assert_eq 0 "$ROUTE_RC" "exit status"
cat > lookups.expected <<EOT
cuMemAllocAsync@13000 flags=2 -> 0 status=0 cuMemAllocAsync_ptsz
cuMemAllocAsync@13000 flags=1 -> 0 status=0 cuMemAllocAsync
cuMemFreeAsync@13000 flags=2 -> 0 status=0 cuMemFreeAsync_ptsz
cuStreamSynchronize@13000 flags=2 -> 0 status=0 cuStreamSynchronize_ptsz
cuCtxSynchronize@13000 flags=0 -> 0 status=0 cuCtxSynchronize_v2
cuCtxSynchronize@12000 flags=0 -> 0 status=0 cuCtxSynchronize
cuCtxCreate@11000 flags=0 -> 0 status=0 cuCtxCreate_v2
cuMemAlloc@2000 flags=0 -> 0 status=0 cuMemAlloc
cuMemGetInfo@13000 flags=0 -> 0 status=0 cuMemGetInfo_v2
cuBogus@13000 flags=0 -> 500 status=1 (null)
cuGetProcAddress@13000 flags=0 -> 0 status=0 cuGetProcAddress_v2
cuMemFree@13000 flags=0 -> 0 status=0 cuMemFree_v2
legacy cuMemAlloc@13000 -> 0 cuMemAlloc_v2
EOT
grep -e '->' traced.out | diff lookups.expected - >&2 || fail "look-up answers"
route_events > events.txt
O='owner=application'
cat > expected.txt <<EOT
ctx_create device=1 addr=ctx1 size=0 stream=0x0 kind=unknown api=driver $O flags=0 result=0
ctx_create device=0 addr=ctx0 size=0 stream=0x0 kind=unknown api=driver $O flags=0 result=0
alloc device=0 addr=x1 size=1000 stream=0x0 kind=stream_ordered api=driver $O flags=1 result=0
alloc device=0 addr=x2 size=2000 stream=0x0 kind=stream_ordered api=driver $O flags=0 result=0
free device=-1 addr=x1 size=0 stream=0x0 kind=stream_ordered api=driver $O flags=1 result=0
free device=-1 addr=x2 size=0 stream=0x0 kind=stream_ordered api=driver $O flags=0 result=0
sync device=0 size=0 stream=0x0 sync=stream api=driver $O flags=0 result=0
alloc device=1 addr=y size=4096 stream=s1 kind=stream_ordered api=driver $O flags=0 result=0
free device=-1 addr=y size=0 stream=s1 kind=stream_ordered api=driver $O flags=0 result=0
sync device=1 size=0 stream=0x0 sync=context api=driver $O flags=0 result=0
sync device=0 size=0 stream=0x0 sync=context api=driver $O flags=0 result=0
alloc device=0 addr=z size=512 stream=0x0 kind=plain api=driver $O flags=0 result=0
free device=-1 addr=z size=0 stream=0x0 kind=unknown api=driver $O flags=0 result=0
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
exit 0
