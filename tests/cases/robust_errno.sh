#!/bin/sh
# Every hook leaves errno as the program set it (tests/routes/robust_errno.c):
# the driver's first stack capture (libunwind's memory probe used to leave
# EAGAIN), the runtime, samples, a failed allocation's wait, NCCL, NVTX
# ranges through the injection and the public API.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export NVTX_INJECTION64_PATH="$PRELOAD"
route_run robust_errno
assert_eq 0 "$ROUTE_RC" "exit status"
assert_eq 0 "$(grep -c CHANGED traced.out)" "calls that changed errno"
assert_eq 29 "$(grep -c 'errno kept' traced.out)" "calls checked"
# The calls were traced (not passed through untouched).
assert_eq 2 "$(grep -c '^EV range_begin ' dump.txt)" "phase begins in the trace"
grep -q '^EV alloc_fail ' dump.txt || fail "no failed allocation in the trace"
exit 0
