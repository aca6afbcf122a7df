#!/bin/sh
# What the driver takes that no allocation call names, placed in time, and
# graph memory nodes added with the graph API (tests/routes/
# route_driver_self.c; modules and libraries take 1 MiB each on the double):
#   - the graph's two allocation nodes are captured allocations (flags 18 =
#     captured | added with the graph API, stream = the graph), the free node
#     a captured free; none is in a device total; the graph pool's samples
#     follow (4 MiB reserved when the graph ran);
#   - cuCtxSetLimit is a CTX_LIMIT (limit 2 = the malloc heap, the value
#     asked for and the one the driver reports), then a sample: 64 MiB less;
#   - cuModuleLoadData and cuLibraryLoadData are MODULE_LOADs (aux 2, 5), each
#     followed by a sample (1 MiB less each), the unloads MODULE_UNLOADs (7, 8).
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export GMT_FAKE_MODULE_BYTES=1048576
route_run route_driver_self
assert_eq 0 "$ROUTE_RC" "exit status"
O='api=driver owner=application'
cat > expected.txt <<EOT
alloc device=0 addr=a size=3145728 stream=g kind=stream_ordered $O flags=18 result=0
alloc device=0 addr=b size=1048576 stream=g kind=stream_ordered $O flags=18 result=0
free device=-1 addr=b size=0 stream=g kind=stream_ordered $O flags=18 result=0
free device=-1 addr=a size=0 stream=s kind=stream_ordered $O flags=0 result=0
EOT
route_events | grep -E '^(alloc|free) ' > events.txt
diff expected.txt events.txt >&2 || fail "memory nodes (< expected, > trace)"
# The events of the driver's own memory, with aux, and the sample after each.
awk '$1 == "EV" && ($2 ~ /^(ctx_limit|module_load|module_unload)$/ || ($2 == "meminfo" && $NF == "aux=0")) {
	print $2, $5, $6, $7, $8, $NF }' dump.txt | sed -n '/^ctx_limit/,/^module_unload/p' | grep -v '^module_unload' > self.txt
mod=$(awk '$2 == "mod" { print $3 }' names.txt) lib=$(awk '$2 == "lib" { print $3 }' names.txt)
cat > self.expected <<EOT
ctx_limit device=0 addr=0x2 size=67108864 stream=0x4000000 aux=0
meminfo device=0 addr=0x3fc000000 size=17179869184 stream=0x0 aux=0
module_load device=0 addr=$mod size=0 stream=0x0 aux=2
meminfo device=0 addr=0x3fbf00000 size=17179869184 stream=0x0 aux=0
module_load device=0 addr=$lib size=0 stream=0x0 aux=5
meminfo device=0 addr=0x3fbe00000 size=17179869184 stream=0x0 aux=0
EOT
diff self.expected self.txt >&2 || fail "limits and modules (< expected, > trace)"
assert_eq "module_unload $mod aux=7
module_unload $lib aux=8" "$(awk '$2 == "module_unload" { print $2, substr($6, 6), $NF }' dump.txt)" "unloads"
# The graph pool, sampled once the device had a graph memory node: 4 MiB
# reserved, 3 MiB in use (the node that outlived the graph) after it ran.
assert_eq "graph_mem device=0 addr=0x400000 size=4194304 stream=0x300000" \
	"$(route_events -a | awk '$1 == "graph_mem" { print $1, $2, $3, $4, $5; exit }')" "graph pool after the run"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary"
D='j["traces"][0]["devices"][0]'
assert_eq "0 2 4194304 0" "$(json_get s.json "' '.join(str(v) for v in ($D['peak']['bytes'],
	$D['graph_memory']['captured_allocations'], $D['graph_memory']['captured_bytes'],
	j['traces'][0]['anomalies']['unmatched_frees']))")" "peak, captured allocations and bytes, unmatched frees"
exit 0
