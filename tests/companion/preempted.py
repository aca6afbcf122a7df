"""Runs a script (argv[1], with the arguments after it) as a loaded machine
may run it: the thread is preempted for 5 ms right after the first
CLOCK_REALTIME reading that each function call makes through
time.clock_gettime_ns (the companion reads it when it puts the allocator's
history on the tracer's clock; tests/cases/companion_oom.sh). A second
reading in the same call is not preempted. The clocks themselves are not
changed: only when the next reading happens."""

import runpy
import sys
import time

_read = time.clock_gettime_ns
_last = [None]    # the frame of the call whose first reading was preempted


def _preempted(clock):
    v = _read(clock)
    if clock == time.CLOCK_REALTIME:
        caller = sys._getframe(1)
        if caller is not _last[0]:
            _last[0] = caller
            time.sleep(0.005)
    return v


time.clock_gettime_ns = _preempted
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
