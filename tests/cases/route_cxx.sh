#!/bin/sh
# Route 9: a C++ program throwing and catching 3000 exceptions (three types,
# ten frames deep, plus a rethrow) after CUDA calls made the tracer capture
# stacks (loading its libunwind) runs unchanged under the preload, and its
# exceptions unwind through libgcc_s, never through libunwind or the preload.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
[ -x "$BUILD/tests/route_cxx_throw" ] || { echo "skip: no C++ compiler"; exit 0; }
route_run route_cxx_throw
assert_eq 0 "$ROUTE_RC" "exit status"
assert_eq "caught runtime=1000 int=1000 other=1000 sum=1511128" "$(tail -n 1 traced.out)" "exceptions"
grep -q '^EV alloc .* size=4096 .* stack=[1-9]' dump.txt || fail "no allocation with a stack: libunwind was not exercised"
rm -rf "$TESTDIR/traces"
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TESTDIR/ld" run_traced "$BUILD/tests/route_cxx_throw" > /dev/null 2>&1 ||
	fail "route_cxx_throw under LD_DEBUG"
cat "$TESTDIR"/ld.* > bindings
grep -q "libstdc++.so.6 .* to [^ ]*libgcc_s.so.1 .*_Unwind_RaiseException" bindings ||
	fail "LD_DEBUG output not as expected (the next check would prove nothing)"
if grep "binding file [^ ]*\(libstdc++\|route_cxx_throw\)[^ ]* .* to [^ ]*\(libunwind\|libgpumemtrace\)[^ ]* .*_Unwind_" bindings; then
	fail "C++ unwinding bound to libunwind or the preload"
fi
exit 0
