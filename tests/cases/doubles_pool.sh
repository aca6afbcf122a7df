#!/bin/sh
# Stream-ordered allocations of the driver double: pool attributes and
# cuMemGetInfo exact across alloc, free-async, synchronisation and trim.
. "$ROOT/tests/lib.sh"
GMT_FAKE_MEM_BYTES=1073741824 run_fake "$BUILD/tests/double_pool" || fail "double_pool"
