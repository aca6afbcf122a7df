#!/bin/sh
# The Python module installs with pip (python/pyproject.toml, the version
# from VERSION through the python/VERSION link): into a fresh venv, offline
# (--no-index, --no-build-isolation: the build uses the environment's
# setuptools), `import gpumemtrace` works outside the launcher and the
# source tree, every call does nothing without the tracer, and the same
# installed module records phases when the preload is loaded.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
unset PYTHONPATH   # only what pip installed
# pip builds offline with the environment's setuptools and wheel
# (python/pyproject.toml): the first python3 that has both, the one on PATH
# first (a pyenv python may lack wheel; Debian's has python3-wheel).
PY=""
for p in "$(command -v python3 2>/dev/null)" /usr/bin/python3; do
	[ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import setuptools, wheel' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || fail "no python3 with setuptools and wheel (apt-get install python3-setuptools python3-wheel)"
# pip builds in the tree it is given: a copy (the link followed), never the source.
cp -rL "$ROOT/python" src || fail "copy of python/"
"$PY" -m venv --system-site-packages --without-pip venv || fail "python3 -m venv"
venv/bin/python -m pip install -q --no-index --no-build-isolation ./src > pip.out 2>&1 ||
	{ cat pip.out >&2; fail "pip install"; }
rm -rf src
cat > check.py <<'EOT'
import importlib.metadata
import os
import sys

import gpumemtrace as g

print("from venv", g.__file__.startswith(os.path.join(sys.prefix, "lib")))
print("version", importlib.metadata.version("gpumemtrace"))
print("active", g.active())
with g.phase("warmup"):
    g.mark("inside")


@g.phase("step")
def step(i):
    return i * 2


print("step", step(21))
g.phase_begin("manual")
g.phase_end("manual")
print("flush", g.flush())
print("tracer", g.version())
EOT
mkdir elsewhere && cd elsewhere
../venv/bin/python ../check.py > ../plain.out 2>&1 || { cat ../plain.out >&2; fail "without the preload"; }
cd ..
v=$(cat "$ROOT/VERSION")
cat > expected-plain.txt <<EOT
from venv True
version $v
active False
step 42
flush True
tracer None
EOT
diff expected-plain.txt plain.out >&2 || fail "without the preload (< expected, > actual)"
run_traced venv/bin/python check.py > traced.out 2>&1 || { cat traced.out >&2; fail "with the preload"; }
sed -e 's/^active False/active True/' -e "s/^tracer None/tracer $v/" expected-plain.txt > expected-traced.txt
diff expected-traced.txt traced.out >&2 || fail "with the preload (< expected, > actual)"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
awk -f "$ROOT/tests/routes/phase_ranges.awk" dump.txt | sed 's/ depth=.*name=/ /; s/ domain=.*//' > ranges.txt
cat > expected.txt <<'EOT'
range_begin t0 warmup
mark t0 inside
range_end t0 warmup
range_begin t0 step
range_end t0 step
range_begin t0 manual
range_end t0 manual
EOT
diff expected.txt ranges.txt >&2 || fail "phases in the trace (< expected, > actual)"
exit 0
