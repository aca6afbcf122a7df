#!/bin/sh
# The Python package (python/gpumemtrace): under the preload, phase() as a
# context manager (also left by an exception) and as a decorator (on two
# threads), nesting, phase_begin/phase_end (with and without a name), mark,
# str (UTF-8) and bytes names, "" ignored; flush(), version(), trace_path()
# (None until the first traced call: python3 itself touches no CUDA, so the
# first phase creates the file). Without the preload every call is a silent
# no-op and the script runs the same.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
command -v python3 > /dev/null || fail "python3 is needed"
cat > script.py <<'EOT'
import sys
import threading

import gpumemtrace as g

print("active", g.active())
print("path before", g.trace_path())
with g.phase("warmup"):
    g.mark("inside")


@g.phase("step")
def step(i):
    with g.phase("inner"):
        return i * 2


print("step", step(1), step(2), step.__name__)
g.phase_begin("manual")
g.phase_end("manual")
g.phase_begin("\u00e9\u4e2d")
g.phase_end()
try:
    with g.phase(b"boom"):
        raise ValueError("x")
except ValueError:
    print("raised through")
g.phase_begin("")
g.mark("")
t = threading.Thread(target=step, args=(3,))
t.start()
t.join()
print("flush", g.flush())
print("version", g.version())
print("path after", g.trace_path() is not None)
EOT
PYTHONPATH="$ROOT/python" python3 script.py > plain.out 2>&1 || { cat plain.out >&2; fail "without the preload"; }
cat > expected-plain.txt <<'EOT'
active False
path before None
step 2 4 step
raised through
flush True
version None
path after False
EOT
diff expected-plain.txt plain.out >&2 || fail "without the preload (< expected, > actual)"

PYTHONPATH="$ROOT/python" run_traced python3 script.py > traced.out 2>&1 || { cat traced.out >&2; fail "with the preload"; }
sed -e 's/^active False/active True/' -e "s/^version None/version $(cat "$ROOT/VERSION")/" \
	-e 's/^path after False/path after True/' expected-plain.txt > expected-traced.txt
diff expected-traced.txt traced.out >&2 || fail "with the preload (< expected, > actual)"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
awk -f "$ROOT/tests/routes/phase_ranges.awk" dump.txt > ranges.txt
cat > expected.txt <<'EOT'
range_begin t0 depth=0 src=1 id=0 name=warmup domain=gpumemtrace
mark t0 depth=1 src=1 id=0 name=inside domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=warmup domain=gpumemtrace
range_begin t0 depth=0 src=1 id=0 name=step domain=gpumemtrace
range_begin t0 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t0 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=step domain=gpumemtrace
range_begin t0 depth=0 src=1 id=0 name=step domain=gpumemtrace
range_begin t0 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t0 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=step domain=gpumemtrace
range_begin t0 depth=0 src=1 id=0 name=manual domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=manual domain=gpumemtrace
range_begin t0 depth=0 src=1 id=0 name=é中 domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=- domain=gpumemtrace
range_begin t0 depth=0 src=1 id=0 name=boom domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=boom domain=gpumemtrace
range_begin t1 depth=0 src=1 id=0 name=step domain=gpumemtrace
range_begin t1 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t1 depth=1 src=1 id=0 name=inner domain=gpumemtrace
range_end t1 depth=0 src=1 id=0 name=step domain=gpumemtrace
EOT
diff expected.txt ranges.txt >&2 || fail "range events (< expected, > actual)"
assert_eq 21 "$(grep -c '^EV' dump.txt)" "events in the trace"
exit 0
