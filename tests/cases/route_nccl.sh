#!/bin/sh
# Route 6: NCCL (its own dlopen + cuGetProcAddress_v2; cuMemCreate, reserve,
# map). Communicator set-up (inside ncclCommInitRank), the transport buffers
# of the first collective (outside any wrapped NCCL call, on another thread:
# attributed by the caller's address in libnccl) and ncclMemAlloc carry owner
# nccl; the program's cudaMalloc stays the application's. Sizes from
# tests/fakecuda/README.md: 2 MiB per communicator, 4 MiB of transport
# buffers (NCCL_BUFFSIZE default), ncclMemAlloc(1000) -> 2 MiB. A handle
# retained and released twice: vmm_retain, then two vmm_release.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
unset NCCL_BUFFSIZE
route_run route_nccl
assert_eq 0 "$ROUTE_RC" "exit status"
# Handles and reservations NCCL made itself: named by the order they appear.
awk '$1 == "EV" && ($2 == "vmm_create" || $2 == "vmm_reserve") {
	split($6, a, "="); n[$2]++
	print "addr", ($2 == "vmm_create" ? "H" : "V") n[$2], a[2] }' dump.txt >> names.txt
route_events > events.txt
R='flags=0 result=0'
cat > expected.txt <<EOT
primary_retain device=0 addr=0x7fffffffffff size=0 stream=0x0 kind=unknown api=driver owner=application $R
alloc device=0 addr=buf size=1048576 stream=0x0 kind=plain api=cudaMalloc owner=application $R
nccl_begin device=-1 addr=0x0 size=0 stream=0x0 kind=plain api=driver owner=application $R
vmm_create device=0 addr=H1 size=2097152 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_reserve device=-1 addr=V1 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
vmm_map device=0 addr=V1 size=2097152 stream=H1 kind=unknown api=driver owner=application $R
nccl_end device=-1 addr=comm size=0 stream=0x0 kind=plain api=driver owner=application $R
vmm_create device=0 addr=H2 size=4194304 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_reserve device=-1 addr=V2 size=4194304 stream=0x0 kind=unknown api=driver owner=application $R
vmm_map device=0 addr=V2 size=4194304 stream=H2 kind=unknown api=driver owner=application $R
nccl_begin device=-1 addr=0x0 size=1000 stream=0x0 kind=imported api=driver owner=application $R
vmm_create device=0 addr=H3 size=2097152 stream=0x0 kind=vmm_physical api=ncclMemAlloc owner=nccl $R
vmm_reserve device=-1 addr=V3 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
vmm_map device=0 addr=V3 size=2097152 stream=H3 kind=unknown api=driver owner=application $R
nccl_end device=-1 addr=V3 size=1000 stream=0x0 kind=imported api=driver owner=application $R
nccl_begin device=-1 addr=V3 size=0 stream=0x0 kind=multicast api=driver owner=application $R
vmm_retain device=0 addr=H3 size=0 stream=V3 kind=vmm_physical api=ncclMemFree owner=nccl $R
vmm_release device=0 addr=H3 size=0 stream=0x0 kind=vmm_physical api=ncclMemFree owner=nccl $R
vmm_unmap device=0 addr=V3 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
vmm_release device=0 addr=H3 size=0 stream=0x0 kind=vmm_physical api=ncclMemFree owner=nccl $R
vmm_addr_free device=-1 addr=V3 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
nccl_end device=-1 addr=V3 size=0 stream=0x0 kind=multicast api=driver owner=application $R
nccl_begin device=-1 addr=comm size=0 stream=0x0 kind=host_pinned api=driver owner=application $R
vmm_retain device=0 addr=H2 size=0 stream=V2 kind=vmm_physical api=driver owner=nccl $R
vmm_release device=0 addr=H2 size=0 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_unmap device=0 addr=V2 size=4194304 stream=0x0 kind=unknown api=driver owner=application $R
vmm_release device=0 addr=H2 size=0 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_addr_free device=-1 addr=V2 size=4194304 stream=0x0 kind=unknown api=driver owner=application $R
vmm_retain device=0 addr=H1 size=0 stream=V1 kind=vmm_physical api=driver owner=nccl $R
vmm_release device=0 addr=H1 size=0 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_unmap device=0 addr=V1 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
vmm_release device=0 addr=H1 size=0 stream=0x0 kind=vmm_physical api=driver owner=nccl $R
vmm_addr_free device=-1 addr=V1 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
nccl_end device=-1 addr=comm size=0 stream=0x0 kind=host_pinned api=driver owner=application $R
free device=-1 addr=buf size=0 stream=0x0 kind=unknown api=cudaFree owner=application $R
EOT
# (nccl_* pack the call where allocations keep their kind: 1 init rank,
# 5 destroy, 7/8 ncclMemAlloc/Free.) The primary context's address is the
# runtime's: replace it before comparing.
sed -i '1s/addr=0x[0-9a-f]*/addr=0x7fffffffffff/' events.txt
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
# ncclMemAlloc's pointer is the third reservation NCCL made.
assert_eq "$(awk '$2 == "nm" { print $3 }' names.txt)" "$(awk '$2 == "V3" { print $3 }' names.txt)" "ncclMemAlloc pointer"
# The transport buffers were allocated on the collective's own thread.
t_init=$(awk '$2 == "vmm_create" { print $4; exit }' dump.txt)
t_coll=$(awk '$2 == "vmm_create" { n++; if (n == 2) { print $4; exit } }' dump.txt)
[ "$t_init" != "$t_coll" ] || fail "the collective's allocation was not on another thread"
exit 0
