#!/bin/sh
# Route 5: cudaGetDriverEntryPoint(ByVersion) reach the driver through our
# cuGetProcAddress_v2 wrapper: versioned and per-thread answers are our
# wrappers of the driver's choice, and the VMM calls made through them (the
# expandable-segments route) are in the trace.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_entrypoint
assert_eq 0 "$ROUTE_RC" "exit status"
cat > lookups.expected <<EOT
cuMemAlloc@0 flags=0 -> 0 status=0 cuMemAlloc_v2
cuMemFree@0 flags=0 -> 0 status=0 cuMemFree_v2
cuCtxSynchronize@12000 flags=0 -> 0 status=0 cuCtxSynchronize
cuCtxSynchronize@13000 flags=0 -> 0 status=0 cuCtxSynchronize_v2
cuMemAllocAsync@13000 flags=2 -> 0 status=0 cuMemAllocAsync_ptsz
cuMemFreeAsync@13000 flags=2 -> 0 status=0 cuMemFreeAsync_ptsz
cuMemCreate@0 flags=0 -> 0 status=0 cuMemCreate
cuMemAddressReserve@12000 flags=0 -> 0 status=0 cuMemAddressReserve
cuMemMap@12000 flags=0 -> 0 status=0 cuMemMap
cuMemUnmap@12000 flags=0 -> 0 status=0 cuMemUnmap
cuMemRelease@12000 flags=0 -> 0 status=0 cuMemRelease
cuMemAddressFree@12000 flags=0 -> 0 status=0 cuMemAddressFree
cuNotAThing@0 flags=0 -> 0 status=1 (null)
EOT
grep -e '->' traced.out | diff lookups.expected - >&2 || fail "entry points"
route_events | grep -v '^primary_retain' > events.txt
A='api=driver owner=application'
cat > expected.txt <<EOT
alloc device=0 addr=a size=3145728 stream=0x0 kind=plain $A flags=0 result=0
alloc device=0 addr=x size=100 stream=0x0 kind=stream_ordered $A flags=1 result=0
free device=-1 addr=x size=0 stream=0x0 kind=stream_ordered $A flags=1 result=0
sync device=0 size=0 stream=0x0 sync=context $A flags=0 result=0
vmm_create device=0 addr=hdl size=4194304 stream=0x0 kind=vmm_physical $A flags=0 result=0
vmm_reserve device=-1 addr=va size=8388608 stream=0x0 kind=unknown $A flags=0 result=0
vmm_map device=0 addr=va size=4194304 stream=hdl kind=unknown $A flags=0 result=0
vmm_unmap device=0 addr=va size=4194304 stream=0x0 kind=unknown $A flags=0 result=0
vmm_release device=0 addr=hdl size=0 stream=0x0 kind=vmm_physical $A flags=0 result=0
vmm_addr_free device=-1 addr=va size=8388608 stream=0x0 kind=unknown $A flags=0 result=0
free device=-1 addr=a size=0 stream=0x0 kind=unknown $A flags=0 result=0
sync device=0 size=0 stream=0x0 sync=context $A flags=0 result=0
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
exit 0
