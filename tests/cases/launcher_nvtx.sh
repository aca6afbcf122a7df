#!/bin/sh
# The launcher never silently replaces another tool's NVTX injection
# library (NVTX takes one): with NVTX_INJECTION64_PATH naming another file,
# the job runs with ours and that is said (even with -q);
# --keep-nvtx-injection keeps the other one, said too; ours already there
# (by another path to the same file) or nothing set: nothing said.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
L="$BUILD/gpumemtrace"
LIB="$BUILD/libgpumemtrace.so"
show='echo "$NVTX_INJECTION64_PATH"'
OTHER=/opt/othertool/libinject.so
NVTX_INJECTION64_PATH=$OTHER "$L" -q sh -c "$show" > out.txt 2> err.txt || fail "replace: exit status"
assert_eq "$LIB" "$(cat out.txt)" "replaced: the job's NVTX_INJECTION64_PATH"
assert_eq "gpumemtrace: NVTX_INJECTION64_PATH named another injection library, $OTHER: the job runs with gpumemtrace's instead, so that library sees no NVTX calls (--keep-nvtx-injection keeps it, and then no NVTX range is recorded)" \
	"$(cat err.txt)" "replaced: said, even with -q"
NVTX_INJECTION64_PATH=$OTHER "$L" -q --keep-nvtx-injection sh -c "$show" > out.txt 2> err.txt || fail "keep: exit status"
assert_eq "$OTHER" "$(cat out.txt)" "kept: the job's NVTX_INJECTION64_PATH"
assert_eq "gpumemtrace: keeping NVTX_INJECTION64_PATH=$OTHER (--keep-nvtx-injection): NVTX ranges go to that library and are not recorded" \
	"$(cat err.txt)" "kept: said"
# The job still has the preload when the injection is kept.
NVTX_INJECTION64_PATH=$OTHER "$L" -q --keep-nvtx-injection sh -c 'echo "$LD_PRELOAD"' > out.txt 2>/dev/null
assert_eq "$LIB" "$(cat out.txt)" "kept: LD_PRELOAD"
ln -s "$LIB" same.so
NVTX_INJECTION64_PATH="$TESTDIR/same.so" "$L" -q sh -c "$show" > out.txt 2> err.txt || fail "same: exit status"
assert_eq "$LIB" "$(cat out.txt)" "ours by another path"
assert_eq "" "$(cat err.txt)" "ours by another path: nothing said"
env -u NVTX_INJECTION64_PATH "$L" -q sh -c "$show" > out.txt 2> err.txt || fail "unset: exit status"
assert_eq "$LIB" "$(cat out.txt)" "unset: set to ours"
assert_eq "" "$(cat err.txt)" "unset: nothing said"
exit 0
