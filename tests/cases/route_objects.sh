#!/bin/sh
# Device memory that is no plain allocation, each of its own kind
# (tests/routes/route_objects.c): CUDA arrays (kind array; flags 4 = size
# from the descriptor, 8 = deferred mapping: its memory requirements, none
# of its own), a runtime array named cudaMallocArray; memory another
# process or handle owns opened here (kind imported: IPC handle, pool
# pointer, shareable handle), kept apart from the device totals, every
# close and release matched; a multicast object (kind multicast) with
# memory bound into it. Exact bytes in summary --json.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_objects
assert_eq 0 "$ROUTE_RC" "exit status"
O='owner=application'
cat > expected.txt <<EOT
alloc device=0 addr=a1 size=400000 stream=0x0 kind=array api=driver $O flags=4 result=0
alloc device=0 addr=a2 size=262144 stream=0x0 kind=array api=driver $O flags=8 result=0
alloc device=0 addr=m1 size=5376 stream=0x0 kind=array api=driver $O flags=4 result=0
alloc device=0 addr=r1 size=20000 stream=0x0 kind=array api=cudaMallocArray $O flags=4 result=0
free device=-1 addr=r1 size=0 stream=0x0 kind=array api=cudaFreeArray $O flags=0 result=0
free device=-1 addr=m1 size=0 stream=0x0 kind=array api=driver $O flags=0 result=0
free device=-1 addr=a2 size=0 stream=0x0 kind=array api=driver $O flags=0 result=0
free device=-1 addr=a1 size=0 stream=0x0 kind=array api=driver $O flags=0 result=0
alloc device=0 addr=opened size=1048576 stream=0x0 kind=imported api=driver $O flags=0 result=0
alloc device=0 addr=qopened size=3145728 stream=0x0 kind=imported api=driver $O flags=0 result=0
free device=-1 addr=opened size=0 stream=0x0 kind=imported api=driver $O flags=0 result=0
vmm_create device=0 addr=vi size=0 stream=0x0 kind=imported api=driver $O flags=0 result=0
vmm_map device=0 addr=va size=2097152 stream=vi kind=unknown api=driver $O flags=0 result=0
vmm_create device=-1 addr=mc size=2097152 stream=0x0 kind=multicast api=driver $O flags=0 result=0
multicast_bind device=0 addr=mc size=2097152 stream=v kind=plain api=driver $O flags=0 result=0
multicast_unbind device=0 addr=mc size=2097152 stream=0x0 kind=unknown api=driver $O flags=0 result=0
vmm_release device=-1 addr=mc size=0 stream=0x0 kind=vmm_physical api=driver $O flags=0 result=0
vmm_release device=0 addr=vi size=0 stream=0x0 kind=vmm_physical api=driver $O flags=0 result=0
EOT
route_events | grep -E ' (kind=array|kind=imported|kind=multicast|addr=mc|addr=vi|stream=vi) ' > events.txt
diff expected.txt events.txt >&2 || fail "events (< expected, > trace)"
# Arrays: A1 + M1 + R1 live at once (425376 B; A2 holds none of its own);
# imported: 1 + 3 MiB open at once, in no device total (the device's peak
# is P 1 MiB + Q 3 MiB); nothing unmatched.
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary"
D='j["traces"][0]["devices"][0]'
T='j["traces"][0]'
assert_eq "425376 4 4 4194304 1048576 3145728 0" "$(json_get s.json "' '.join(str(v) for v in (
	$D['independent_maxima']['by_kind']['array']['bytes'], $D['counts']['array']['allocations'],
	$D['counts']['array']['frees'], $D['peak']['bytes'], $D['peak']['by_kind']['plain'],
	$D['peak']['by_kind']['stream_ordered'], $D['final']['bytes']))")" \
	"array maximum, array allocations and frees, device peak (plain, stream-ordered), final"
assert_eq "4194304 0 2 2 1 1 1" "$(json_get s.json "' '.join(str(v) for v in (
	$T['imported']['peak_bytes'], $T['imported']['final_bytes'], $T['imported']['opens'],
	$T['imported']['closes'], $T['imported']['handles'], $T['multicast']['objects'], $T['multicast']['binds']))")" \
	"imported peak, final, opens, closes, handles; multicast objects and binds"
assert_eq "0" "$(json_get s.json "sum($T['anomalies'].values())")" "anomalies"
"$ANALYZE" summary "$(the_trace)" > s.txt || fail "summary text"
assert_contains s.txt "Imported memory (another process's or handle's, opened here; never in device totals)"
assert_contains s.txt "  opened 2, closed 2, imported handles 1"
assert_contains s.txt "Multicast objects: 1, 1 bindings (the memory bound to them is counted where it was allocated)"
exit 0
