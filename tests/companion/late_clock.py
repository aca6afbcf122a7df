"""Runs a script (argv[1], with the arguments after it) with every
CLOCK_REALTIME reading made through time.clock_gettime_ns 0.5 ms behind:
the companion then puts each moved history entry 0.5 ms after the moment
PyTorch stamped (within the analyzer's 1 ms for its anchors), as an error
in PyTorch's own conversion of its stamps to time_us would
(tests/cases/companion_oom.sh)."""

import runpy
import sys
import time

_read = time.clock_gettime_ns


def _late(clock):
    v = _read(clock)
    return v - 500000 if clock == time.CLOCK_REALTIME else v


time.clock_gettime_ns = _late
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
