#!/bin/sh
# How the runtime and NCCL doubles reach the driver: never linked to it
# (no NEEDED libcuda or libcudart), dlopen + dlsym("cuGetProcAddress_v2") at
# run time, so no symbol of theirs is bound to libcuda by the loader.
. "$ROOT/tests/lib.sh"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needed "$FAKE/libcudart.so.13" > cudart.needed
needed "$FAKE/libnccl.so.2" > nccl.needed
grep -q libcuda cudart.needed && fail "libcudart double links libcuda: $(cat cudart.needed)"
grep -q 'libcuda\|libcudart' nccl.needed && fail "libnccl double links CUDA: $(cat nccl.needed)"
# The sonames are the ones programs and dlopen look for.
readelf -d "$FAKE/libcuda.so.1" | grep -q 'SONAME.*\[libcuda.so.1\]' || fail "libcuda soname"
readelf -d "$FAKE/libcudart.so.13" | grep -q 'SONAME.*\[libcudart.so.13\]' || fail "libcudart soname"
readelf -d "$FAKE/libnccl.so.2" | grep -q 'SONAME.*\[libnccl.so.2\]' || fail "libnccl soname"
# Every exported driver function has an address of its own, so dladdr() on a
# cuGetProcAddress answer names exactly one symbol (an optimiser merging two
# identical bodies would break that).
nm -D --defined-only "$FAKE/libcuda.so.1" | awk '{print $1}' | sort | uniq -d > dup
[ -s dup ] && fail "libcuda double: symbols sharing an address: $(cat dup)"
# At run time: the runtime and NCCL bind dlsym from libc and nothing from
# libcuda (LD_DEBUG=bindings lists every symbol the loader binds).
GMT_FAKE_DEVICES=2 GMT_FAKE_MEM_BYTES=1073741824 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TESTDIR/ld" \
	run_fake "$BUILD/tests/double_nccl" > /dev/null || fail "double_nccl under LD_DEBUG"
cat "$TESTDIR"/ld.* > bindings
grep -q 'binding file [^ ]*libcudart.so.13 .* to [^ ]*libc.so.6 .*`dlsym' bindings ||
	fail "libcudart did not bind dlsym"
grep -q 'binding file [^ ]*libnccl.so.2 .* to [^ ]*libc.so.6 .*`dlsym' bindings ||
	fail "libnccl did not bind dlsym"
grep 'binding file [^ ]*\(libcudart.so.13\|libnccl.so.2\) .* to [^ ]*libcuda.so.1' bindings > direct
[ -s direct ] && { cat direct >&2; fail "a runtime or NCCL symbol was bound to libcuda directly"; }
# Only the route programs (linked with -lcuda) bind driver symbols directly.
grep -q 'binding file [^ ]*double_nccl .* to [^ ]*libcuda.so.1 .*`cuPointerGetAttribute' bindings ||
	fail "LD_DEBUG output not as expected (the check above would prove nothing)"
exit 0
