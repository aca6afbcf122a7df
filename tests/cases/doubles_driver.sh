#!/bin/sh
# The driver double alone: devices, contexts, exact cuMemGetInfo accounting,
# the out-of-memory boundary, address reuse across threads, two devices,
# virtual memory (tests/routes/double_driver.c).
. "$ROOT/tests/lib.sh"
GMT_FAKE_DEVICES=2 GMT_FAKE_MEM_BYTES=1073741824 GMT_FAKE_CONTEXT_BYTES=3145728 \
	run_fake "$BUILD/tests/double_driver" || fail "double_driver"
