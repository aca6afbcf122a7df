#!/bin/sh
# The runtime double alone (tests/routes/double_runtime.c).
. "$ROOT/tests/lib.sh"
GMT_FAKE_DEVICES=2 GMT_FAKE_MEM_BYTES=1073741824 GMT_FAKE_CONTEXT_BYTES=3145728 \
	run_fake "$BUILD/tests/double_runtime" || fail "double_runtime"
