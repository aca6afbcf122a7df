#!/bin/sh
# Route 2: the runtime API through the runtime double (dlopen libcuda +
# dlsym cuGetProcAddress_v2 + versioned look-ups). Every allocation appears
# once, at driver level, named with the runtime call (api=), the _ptsz
# exports reach the driver's _ptsz variants (flags=1), cudaDeviceSynchronize
# reaches cuCtxSynchronize_v2 (the look-up at 13000).
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_runtime
assert_eq 0 "$ROUTE_RC" "exit status"
route_events > events.txt
O='owner=application'
R='result=0'
cat > expected.txt <<EOT
primary_retain device=0 addr=pctx size=0 stream=0x0 kind=unknown api=driver $O flags=0 $R
alloc device=0 addr=d size=1048576 stream=0x0 kind=plain api=cudaMalloc $O flags=0 $R
alloc device=0 addr=p size=10240 stream=0x0 kind=plain api=cudaMallocPitch $O flags=0 $R
alloc device=0 addr=m size=4096 stream=0x0 kind=managed api=cudaMallocManaged $O flags=0 $R
alloc device=0 addr=h size=8192 stream=0x0 kind=host_pinned api=cudaMallocHost $O flags=0 $R
alloc device=0 addr=h2 size=4096 stream=0x0 kind=host_pinned api=cudaHostAlloc $O flags=0 $R
alloc device=0 addr=as size=3000 stream=s kind=stream_ordered api=cudaMallocAsync $O flags=0 $R
free device=-1 addr=as size=0 stream=s kind=stream_ordered api=cudaFreeAsync $O flags=0 $R
alloc device=0 addr=as2 size=1000 stream=0x0 kind=stream_ordered api=cudaMallocAsync $O flags=1 $R
free device=-1 addr=as2 size=0 stream=0x0 kind=stream_ordered api=cudaFreeAsync $O flags=1 $R
sync device=0 size=0 stream=s sync=stream api=driver $O flags=0 $R
pool_create device=0 addr=0x0 size=0 stream=pool kind=unknown api=driver $O flags=0 $R
alloc device=0 addr=pa size=5000 stream=s kind=stream_ordered api=cudaMallocFromPoolAsync $O flags=0 $R
free device=-1 addr=pa size=0 stream=s kind=stream_ordered api=cudaFreeAsync $O flags=0 $R
sync device=0 size=0 stream=0x0 sync=context api=driver $O flags=0 $R
pool_destroy device=0 addr=0x0 size=0 stream=pool kind=unknown api=driver $O flags=0 $R
free device=-1 addr=d size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 $R
free device=-1 addr=p size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 $R
free device=-1 addr=m size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 $R
free device=-1 addr=h size=0 stream=0x0 kind=host_pinned api=cudaFreeHost $O flags=0 $R
free device=-1 addr=h2 size=0 stream=0x0 kind=host_pinned api=cudaFreeHost $O flags=0 $R
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
# The first synchronisation samples the default pool: the per-thread
# stream's 1000-byte block (1024) is still pending, the stream's 3072 freed.
route_events -a | grep -A3 '^sync .*sync=stream' | tail -2 > s.txt
cat > s.expected <<EOT
pool_reserved device=0 addr=0x200000 size=2097152 stream=defpool kind=unknown api=driver $O flags=0 $R
pool_used device=0 addr=0x400 size=4096 stream=defpool kind=unknown api=driver $O flags=0 $R
EOT
diff s.expected s.txt >&2 || fail "pool samples at the first synchronisation"
exit 0
