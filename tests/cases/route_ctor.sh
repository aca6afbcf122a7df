#!/bin/sh
# Route 7: CUDA used from a shared library's constructor, which runs before
# the preload's own constructor (checked with LD_DEBUG=libs): the hooks
# initialise themselves on first use, through the exported symbols, the
# runtime's start-up (dlopen + dlsym + cuGetProcAddress_v2) and dlsym on a
# handle alike.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_ctor
assert_eq 0 "$ROUTE_RC" "exit status"
route_events | grep -v '^primary_retain' > events.txt
A='owner=application flags=0 result=0'
cat > expected.txt <<EOT
alloc device=0 addr=plain size=503808 stream=0x0 kind=plain api=driver $A
alloc device=0 addr=runtime size=65536 stream=0x0 kind=plain api=cudaMalloc $A
alloc device=0 addr=managed size=8192 stream=0x0 kind=managed api=driver $A
free device=-1 addr=runtime size=0 stream=0x0 kind=unknown api=cudaFree $A
free device=-1 addr=plain size=0 stream=0x0 kind=unknown api=driver $A
free device=-1 addr=managed size=0 stream=0x0 kind=unknown api=driver $A
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
assert_eq 1 "$(grep -c '^EV primary_retain ' dump.txt)" "primary context retains"
# The scenario is the one intended: the library's initialiser ran first.
rm -rf "$TESTDIR/traces"
LD_DEBUG=libs LD_DEBUG_OUTPUT="$TESTDIR/ld" run_traced "$BUILD/tests/route_ctor" > /dev/null 2>&1 ||
	fail "route_ctor under LD_DEBUG"
cat "$TESTDIR"/ld.* | sed -n 's/.*calling init: //p' > inits
lib=$(grep -n 'libroute_ctor.so$' inits | cut -d: -f1)
pre=$(grep -n 'libgpumemtrace.so$' inits | cut -d: -f1)
[ -n "$lib" ] && [ -n "$pre" ] && [ "$lib" -lt "$pre" ] ||
	{ cat inits >&2; fail "libroute_ctor's constructor did not run before the preload's"; }
exit 0
