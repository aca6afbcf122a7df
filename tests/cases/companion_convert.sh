#!/bin/sh
# The PyTorch companion's conversion of allocator snapshots into framework
# events (python/gpumemtrace_companion/convert.py), from the hand-made
# fixtures in the documented snapshot format (tests/companion/README.md):
# exact events and times, dedup across overlapping rings whose times moved,
# shared time_us, repeating runs, overflow and restart detection, OOM.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
python3 "$ROOT/tests/companion/test_convert.py" > out.txt 2>&1 || { cat out.txt >&2; fail "test_convert.py"; }
grep -q '^OK$' out.txt || { cat out.txt >&2; fail "no OK from unittest"; }
exit 0
