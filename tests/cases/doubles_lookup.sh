#!/bin/sh
# cuGetProcAddress(_v2) of the driver double: versioned answers, per-thread
# variants, statuses, pointers equal to dlsym of the exact name; and with
# GMT_FAKE_DRIVER_VERSION=12080 the 13.0 entries are absent.
. "$ROOT/tests/lib.sh"
run_fake "$BUILD/tests/double_lookup" || fail "double_lookup at 13000"
GMT_FAKE_DRIVER_VERSION=12080 run_fake "$BUILD/tests/double_lookup" || fail "double_lookup at 12080"
