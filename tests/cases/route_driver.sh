#!/bin/sh
# Route 1: a program linked against libcuda calls the exported driver
# symbols. Same output and status with and without the preload; the trace
# holds exactly the program's calls, in order, with kinds, sizes (pitch *
# height for a pitched allocation), streams, pools and VMM handles.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_driver
assert_eq 0 "$ROUTE_RC" "exit status"
# (uniq: the 3000 synchronisations in a row are one line here, counted below)
route_events | uniq > events.txt
A='api=driver owner=application flags=0 result=0'
cat > expected.txt <<EOT
ctx_create device=0 addr=ctx size=0 stream=0x0 kind=unknown $A
alloc device=0 addr=a size=1048576 stream=0x0 kind=plain $A
alloc device=0 addr=p size=10240 stream=0x0 kind=plain $A
alloc device=0 addr=m size=4096 stream=0x0 kind=managed $A
alloc device=0 addr=h size=8192 stream=0x0 kind=host_pinned $A
alloc device=0 addr=h2 size=4096 stream=0x0 kind=host_pinned $A
alloc device=0 addr=as size=3000 stream=s kind=stream_ordered $A
free device=-1 addr=as size=0 stream=s kind=stream_ordered $A
sync device=0 size=0 stream=s sync=stream $A
pool_create device=0 addr=0x0 size=0 stream=pool kind=unknown $A
alloc device=0 addr=pa size=5000 stream=s kind=stream_ordered $A
free device=-1 addr=pa size=0 stream=s kind=stream_ordered $A
sync device=0 size=0 stream=e sync=event $A
pool_trim device=0 addr=0x0 size=0 stream=pool kind=unknown $A
pool_destroy device=0 addr=0x0 size=0 stream=pool kind=unknown $A
sync device=0 size=0 stream=0x0 sync=context $A
sync device=0 size=0 stream=s sync=stream $A
vmm_create device=0 addr=hdl size=2097152 stream=0x0 kind=vmm_physical $A
vmm_reserve device=-1 addr=va size=4194304 stream=0x0 kind=unknown $A
vmm_map device=0 addr=va size=2097152 stream=hdl kind=unknown $A
vmm_unmap device=0 addr=va size=2097152 stream=0x0 kind=unknown $A
vmm_addr_free device=-1 addr=va size=4194304 stream=0x0 kind=unknown $A
vmm_release device=0 addr=hdl size=0 stream=0x0 kind=vmm_physical $A
free device=-1 addr=a size=0 stream=0x0 kind=unknown $A
free device=-1 addr=p size=0 stream=0x0 kind=unknown $A
free device=-1 addr=m size=0 stream=0x0 kind=unknown $A
free device=-1 addr=h size=0 stream=0x0 kind=host_pinned $A
free device=-1 addr=h2 size=0 stream=0x0 kind=host_pinned $A
ctx_destroy device=0 addr=ctx size=0 stream=0x0 kind=unknown $A
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
# The device record, once; and the samples that do not depend on timing: at
# the context creation (nothing held: free = total = 16 GiB) and at the first
# synchronisation (1 MiB + 10240 + 4096 held; the default pool emptied and
# trimmed: reserved 0, high 2 MiB; used 0, high 3072; the pool is the
# device's default pool, the one cuMemAllocAsync used).
assert_eq 1 "$(grep -c '^DEVICE ordinal=0 name=Fake GPU 0 total=17179869184$' dump.txt)" "device record"
route_events -a > all.txt
grep -A1 '^ctx_create' all.txt | tail -1 > s1
assert_eq "meminfo device=0 addr=0x400000000 size=17179869184 stream=0x0 kind=unknown $A" "$(cat s1)" "sample at context creation"
grep -m1 -A3 '^sync .*stream=s sync=stream' all.txt | tail -3 > s2
cat > s2.expected <<EOT
meminfo device=0 addr=0x3ffefc800 size=17179869184 stream=0x0 kind=unknown $A
pool_reserved device=0 addr=0x0 size=2097152 stream=defpool kind=unknown $A
pool_used device=0 addr=0x0 size=3072 stream=defpool kind=unknown $A
EOT
diff s2.expected s2 >&2 || fail "samples at the first synchronisation"
# Every synchronisation is recorded; samples at most one per 10 ms: over the
# span of the 3000 (T ns), at most T / 10 ms + 1 meminfo samples.
route_events -a | awk '/^sync .*stream=s sync=stream/ { n++ } END { print n }' > nsync
assert_eq 3001 "$(cat nsync)" "stream synchronisations"
awk '$1 == "EV" && $2 == "sync" { s++; if (s == 4) first = substr($3, 4) }
     $1 == "EV" && $2 == "sync" { last = substr($3, 4) }
     $1 == "EV" && $2 == "meminfo" && s >= 4 { m++ }
     END { limit = int((last - first) / 10000000) + 1; print (m <= limit ? "ok" : "too many"), m, limit }' dump.txt > rate
case $(cat rate) in ok*) ;; *) fail "samples at synchronisation points: $(cat rate)" ;; esac
# Allocations carry a stack, frees do not (GPUMEMTRACE_FREE_STACKS unset).
grep '^EV alloc ' dump.txt | grep -q ' stack=0 ' && fail "an allocation without a stack"
grep '^EV free ' dump.txt | grep -vq ' stack=0 ' && fail "a free with a stack"
exit 0
