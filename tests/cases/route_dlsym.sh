#!/bin/sh
# Route 3: dlsym (and dlvsym) on a dlopen'ed libcuda handle. Hooked names become
# our wrappers of the same implementation (dladdr names are printed by the
# program and must match the run without the preload), everything else is
# passed through; the calls made through the wrappers are in the trace.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_dlsym
assert_eq 0 "$ROUTE_RC" "exit status"
cat > names.expected <<EOT
dlsym cuInit -> cuInit
dlsym cuCtxCreate_v4 -> cuCtxCreate_v4
dlsym cuMemAlloc_v2 -> cuMemAlloc_v2
dlsym cuMemFree_v2 -> cuMemFree_v2
dlsym cuStreamSynchronize -> cuStreamSynchronize
dlsym cuCtxDestroy_v2 -> cuCtxDestroy_v2
dlsym cuMemFree -> cuMemFree
dlsym cuMemGetInfo_v2 -> cuMemGetInfo_v2
dlsym cuMemAlloc_v2x -> (null)
dlsym cuMemAlloc_v -> (null)
dlsym cublasCreate_v2 -> (null)
dlsym cuMemAllocManaged -> cuMemAllocManaged
dlvsym malloc -> malloc
dlvsym cuMemAllocManaged -> (null)
EOT
grep '^dl[sv]' traced.out | diff names.expected - >&2 || fail "look-up answers"
route_events > events.txt
A='api=driver owner=application flags=0 result=0'
cat > expected.txt <<EOT
ctx_create device=0 addr=ctx size=0 stream=0x0 kind=unknown $A
alloc device=0 addr=a size=65536 stream=0x0 kind=plain $A
alloc device=0 addr=m size=8192 stream=0x0 kind=managed $A
sync device=0 size=0 stream=0x0 sync=stream $A
free device=-1 addr=a size=0 stream=0x0 kind=unknown $A
free device=-1 addr=m size=0 stream=0x0 kind=unknown $A
ctx_destroy device=0 addr=ctx size=0 stream=0x0 kind=unknown $A
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
# The wrappers really stood in: without them the look-ups above would be the
# driver's, and the trace would hold no allocation.
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TESTDIR/ld" run_traced "$BUILD/tests/route_dlsym" > /dev/null 2>&1
cat "$TESTDIR"/ld.* > bindings
grep -q "binding file [^ ]*route_dlsym .* to [^ ]*libgpumemtrace.so .*\`dlsym'" bindings ||
	fail "the program's dlsym was not bound to the preload"
exit 0
