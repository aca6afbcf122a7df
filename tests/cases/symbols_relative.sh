#!/bin/sh
# Symbols of a library the loader found by a RELATIVE path: robust_chdir is
# started in $BUILD with LD_LIBRARY_PATH=fakecuda (the runtime double is
# "fakecuda/libcudart.so.13" to the loader) and changes directory before
# its first CUDA call. The trace's MODULE names the file the kernel mapped
# (tracer/gmt_modules.c; realpath() of the relative path, after the chdir,
# finds nothing), and sites, run from yet another directory, names the
# runtime's frame (cudaMalloc in fake_runtime.c) instead of reporting
# "[fakecuda/libcudart.so.13+0x...]" missing.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir -p traces elsewhere
real=$(cd "$BUILD" && pwd -P)
# fakecuda first (relative: the runtime, at start); the absolute entry finds
# the driver, which the runtime dlopen()s after the chdir.
(cd "$BUILD" && LD_LIBRARY_PATH="fakecuda:$BUILD/fakecuda" GPUMEMTRACE_OUTPUT="$TESTDIR/traces" \
	LD_PRELOAD="$PRELOAD" ./tests/robust_chdir "$TESTDIR/elsewhere") > out.txt 2> err.txt ||
	{ cat err.txt >&2; fail "robust_chdir: $?"; }
assert_eq ok "$(cat out.txt)" "the program's output"
T=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$T" > dump.txt || fail "gmt-dump"
assert_eq "path=fakecuda/libcudart.so.13 soname=libcudart.so.13 file=$real/fakecuda/libcudart.so.13" \
	"$(sed -n 's/^MODULE .* \(path=fakecuda.*\)/\1/p' dump.txt)" "the runtime's MODULE"
cd elsewhere
"$ANALYZE" sites --json "$T" > ../s.json || fail "sites --json"
cd ..
python3 - s.json <<'PY' || fail "sites JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
site, = doc["traces"][0]["devices"][0]["live_sites"]
assert site["bytes"] == 1 << 20, site["bytes"]
f = site["frames"][0]
got = (f["module"], f["status"], f["function"], (f["file"] or "").rsplit("/", 1)[-1])
want = ("fakecuda/libcudart.so.13", "ok", "cudaMalloc", "fake_runtime.c")
assert got == want, "innermost frame: expected %r, got %r" % (want, got)
PY
exit 0
