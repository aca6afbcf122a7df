#!/bin/sh
# A program linked to no CUDA library reaches the preload's driver exports
# through dlsym(RTLD_DEFAULT): with no driver loaded a hook answers "not
# found" (CUDA_ERROR_NOT_FOUND 500), leaves the out-parameter alone and does
# not crash; the runtime's and NCCL's names are absent, as without the
# preload (tests/cases/route_rtlocal.sh probes them all); once libcuda is
# dlopen'ed (RTLD_LOCAL) the same exports find it and are traced. The public
# API: version, no trace path before the first event, flush; after
# gpumemtrace_flush() the file on disk, read while the program runs, holds
# every event so far.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
run_fake "$BUILD/tests/route_nocuda" > plain.out || fail "route_nocuda without the preload"
printf 'preload no\ncudaMalloc absent, ncclMemAlloc absent\n' > plain.expected
diff plain.expected plain.out >&2 || fail "without the preload (< expected, > actual)"
ROUTE_DUMP="$BUILD/tests/tools/gmt-dump" run_traced "$BUILD/tests/route_nocuda" > traced.out 2> traced.err ||
	{ cat traced.err >&2; fail "route_nocuda with the preload"; }
cat > expected.txt <<EOT
preload yes
cudaMalloc absent, ncclMemAlloc absent
version $(cat "$ROOT/VERSION")
path before any event: null
flush before any event: 0
cuMemAlloc_v2 without a driver: 500 d=0x1234
cuMemAlloc_v2 with the driver: 0
cuMemAlloc_v2 again: 0
cuMemFree_v2: 0
flush: 0
path: set
dump while running: 0
EOT
diff expected.txt traced.out >&2 || fail "output (< expected, > actual)"
# Missing libraries are not worth a warning (only an old driver is).
[ -s traced.err ] && { cat traced.err >&2; fail "unexpected messages"; }
grep '^EV' dump-running.txt | cut -d' ' -f2 | tr '\n' ' ' > running.txt
assert_eq "ctx_create meminfo ctx_current alloc alloc free " "$(cat running.txt)" "events on disk before exit"
assert_eq "STATUS ok cut" "$(tail -n 1 dump-running.txt)" "status while running"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "status after exit"
exit 0
