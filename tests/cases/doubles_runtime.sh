#!/bin/sh
# The runtime double alone (tests/routes/double_runtime.c).
. "$ROOT/tests/lib.sh"
GMT_FAKE_DEVICES=2 GMT_FAKE_MEM_BYTES=1073741824 GMT_FAKE_CONTEXT_BYTES=3145728 \
	run_fake "$BUILD/tests/double_runtime" || fail "double_runtime"
# The versions the doubles say, as a test sets them; a runtime newer than
# the driver refuses it (cudaErrorInsufficientDriver = 35), as the real one.
V="$BUILD/tests/double_versions"
run_fake "$V" > v0.txt || fail "double_versions"
nccl=$(sed -n 's/^nccl.h //p' v0.txt)
assert_eq "runtime 13000 driver 13000 nccl $nccl init 0" "$(head -n 1 v0.txt)" "default versions"
GMT_FAKE_RUNTIME_VERSION=13010 GMT_FAKE_DRIVER_VERSION=13020 GMT_FAKE_NCCL_VERSION=22703 run_fake "$V" > v1.txt
assert_eq "runtime 13010 driver 13020 nccl 22703 init 0" "$(head -n 1 v1.txt)" "set versions"
GMT_FAKE_RUNTIME_VERSION=13020 GMT_FAKE_DRIVER_VERSION=13010 run_fake "$V" > v2.txt
assert_eq "runtime 13020 driver 13010 nccl $nccl init 35" "$(head -n 1 v2.txt)" "runtime newer than the driver"
