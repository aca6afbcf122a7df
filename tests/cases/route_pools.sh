#!/bin/sh
# Stream-ordered allocations in the right place (tests/routes/route_pools.c,
# two devices, device 0's context current): an allocation on a stream of
# device 1 belongs to device 1, one from a pool of device 1 on a stream of
# device 0 to device 1; a pool located in host memory gives host memory, a
# managed pool managed memory, neither on a device's stream-ordered bytes.
# Each allocation that may have grown a device pool is followed by that
# pool's samples (its reserve, not only at synchronisations); a
# synchronisation of device 1's stream samples device 1. The program's own
# cuMemGetInfo calls are samples (MEMINFO aux=1). A failed ncclMemAlloc
# that made no driver call is a failed allocation (api ncclMemAlloc, owner
# nccl, result ncclInvalidArgument 4). summary tells the bytes held by live
# allocations from those taken from the device, the pools' reserve included.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2
route_run route_pools
assert_eq 0 "$ROUTE_RC" "exit status"
O='api=driver owner=application flags=0 result=0'
cat > expected.txt <<EOT
alloc device=1 addr=a size=3145728 stream=s1 kind=stream_ordered $O
pool_reserved device=1 addr=0x400000 size=4194304 stream=def1 kind=unknown $O
pool_used device=1 addr=0x300000 size=3145728 stream=def1 kind=unknown $O
pool_create device=1 addr=0x0 size=0 stream=q1 kind=unknown $O
alloc device=1 addr=b size=1048576 stream=s0 kind=stream_ordered $O
pool_reserved device=1 addr=0x200000 size=2097152 stream=q1 kind=unknown $O
pool_used device=1 addr=0x100000 size=1048576 stream=q1 kind=unknown $O
pool_create device=-1 addr=0x0 size=0 stream=h kind=plain $O
alloc device=0 addr=c size=5000 stream=s0 kind=host_pinned $O
pool_create device=-1 addr=0x0 size=0 stream=m kind=stream_ordered $O
alloc device=0 addr=d size=3145728 stream=s0 kind=managed $O
alloc_fail device=0 addr=0x0 size=4096 stream=0x0 kind=unknown api=ncclMemAlloc owner=nccl flags=0 result=4
EOT
# Up to the first synchronisation (pool_create's aux is the pool's flags:
# 1 host, 2 managed, which the dump shows as a kind).
route_events -a | awk '$1 == "sync" { exit } $1 ~ /^(alloc|alloc_fail|pool_create|pool_reserved|pool_used)$/' > events.txt
diff expected.txt events.txt >&2 || fail "events (< expected, > trace)"
# The synchronisation of device 1's stream is device 1's, with its samples:
# A's 3 MiB back, the default pool trimmed to 0, B's pool still 2 MiB.
# (The pools in any order.)
assert_eq "meminfo device=1 addr=0x3ffe00000 size=17179869184 stream=0x0 kind=unknown $O
pool_reserved device=1 addr=0x0 size=4194304 stream=def1 kind=unknown $O
pool_reserved device=1 addr=0x200000 size=2097152 stream=q1 kind=unknown $O
sync device=1 size=0 stream=s1 sync=stream $O" \
	"$(route_events -a | grep -A5 '^sync .*stream=s1' | grep -v '^pool_used' | sort)" "device 1's synchronisation"
# The program read cuMemGetInfo three times: device 0 (16 GiB free),
# device 1 (16 GiB - 6 MiB), device 1 at the end (16 GiB).
assert_eq "device=0 addr=0x400000000
device=1 addr=0x3ffa00000
device=1 addr=0x400000000" "$(awk '$2 == "meminfo" && $NF == "aux=1" { print $5, $6 }' dump.txt)" \
	"the program's own cuMemGetInfo samples"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary"
D0='j["traces"][0]["devices"][0]'
D1='j["traces"][0]["devices"][1]'
assert_eq "0 3145728 4194304 4194304 5000 0" "$(json_get s.json "' '.join(str(v) for v in (
	$D0['peak']['by_kind']['stream_ordered'], $D0['peak']['by_kind']['managed'],
	$D1['peak']['bytes'], $D1['peak']['by_kind']['stream_ordered'],
	j['traces'][0]['host_pinned']['peak_bytes'], j['traces'][0]['anomalies']['unmatched_frees']))")" \
	"device 0 stream-ordered and managed, device 1 peak and stream-ordered, host, unmatched frees"
# Taken from the device (live + the pools' reserve beyond it): device 1's
# peak is A's 3 MiB + B's 1 MiB live in 4 + 2 MiB of pool reserve = 6 MiB
# (held by live allocations: 4 MiB); at the end nothing: the default pool
# was trimmed to 0 at the synchronisation and B's pool destroyed.
assert_eq "6291456 4194304 2097152 0 0" "$(json_get s.json "' '.join(str(v) for v in (lambda t: (t['peak']['bytes'],
	t['peak']['live_bytes'], t['peak']['pool_reserve_bytes'], t['final']['bytes'],
	t['final']['pool_reserve_bytes']))($D1['taken_from_device']))")" \
	"device 1 taken from the device: peak, live then, pools' reserve then, final, final reserve"
assert_eq "ncclMemAlloc nccl 4 4096" "$(json_get s.json "' '.join(str(v) for v in (lambda f: (f['api'], f['owner'], f['result'], f['requested_bytes']))(j['traces'][0]['failed_allocations']['items'][0]))")" \
	"the failed ncclMemAlloc"
exit 0
