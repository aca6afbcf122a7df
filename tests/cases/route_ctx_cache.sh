#!/bin/sh
# The preload keeps each thread's current context (and its device) from the
# driver's last answer while nothing can have changed it
# (gmt_cur_device_ok in preload/gmt_preload.h). tests/routes/route_ctx_cache.c
# changes the context between allocations of distinct sizes by every route
# the cache must notice: cuCtxSetCurrent, Push/PopCurrent (exported, through
# cuGetProcAddress, dlsym'd, legacy names), cuCtxCreate/Destroy, the
# runtime's cudaSetDevice, a primary context's reset and release, another
# thread. Every allocation must name the device the program itself sees,
# and CTX_CURRENT must come exactly where the context changed (or a context
# went), with the context's handle: as when the driver is asked at every
# call. A change the preload cannot see (libcuda's own cuCtxSetCurrent
# found through glibc's dlsym) and cuGetExportTable turn the cache off: the
# trace stays exact.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2
# events MODE: "ctx_current thread device P0|P1|C" and "alloc thread device size"
events() {
	rm -rf traces
	run_fake "$BUILD/tests/route_ctx_cache" "$1" > plain.$1.txt 2>/dev/null ||
		{ cat plain.$1.txt >&2; fail "$1: without the preload"; }
	GPUMEMTRACE_LOG=3 run_traced "$BUILD/tests/route_ctx_cache" "$1" > traced.$1.txt 2> err.$1.txt ||
		{ cat traced.$1.txt err.$1.txt >&2; fail "$1: with the preload"; }
	cmp plain.$1.txt traced.$1.txt || fail "$1: the program's output changed under the tracer"
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.$1.txt || fail "gmt-dump"
	awk -v p0="$(awk '$1 == "addr" && $2 == "P0" { print $3 }' err.$1.txt)" \
	    -v p1="$(awk '$1 == "addr" && $2 == "P1" { print $3 }' err.$1.txt)" \
	    -v c="$(awk '$1 == "addr" && $2 == "C" { print $3 }' err.$1.txt)" '
		$2 == "ctx_current" { a = substr($6, 6); print "ctx_current", $4, $5, (a == p0 ? "P0" : a == p1 ? "P1" : a == c ? "C" : a) }
		$2 == "alloc" { print "alloc", $4, $5, $7 }' dump.$1.txt
}
# Each ALLOC with the CTX_CURRENT right before it on its thread, in the
# order of the steps (the threads' events interleave by time in the trace).
sort_steps() {
	awk '{ split($2, t, "="); if ($1 == "ctx_current") { pend[t[2]] = $0; next }
	       split($4, z, "="); k = z[2] / 1024; line[k] = (t[2] in pend ? pend[t[2]] "\n" : "") $0; delete pend[t[2]]; if (k > max) max = k }
	     END { for (k = 1; k <= max; k++) if (k in line) print line[k] }'
}
# The program's own view of each step (by construction; see its header).
own="1 KiB device=0 ctx=P0
2 KiB device=0 ctx=P0
3 KiB device=1 ctx=P1
4 KiB device=0 ctx=P0
5 KiB device=1 ctx=P1
6 KiB device=0 ctx=C
7 KiB device=1 ctx=P1
8 KiB device=0 ctx=P0
9 KiB device=1 ctx=P1
10 KiB device=0 ctx=P0
11 KiB device=1 ctx=P1
12 KiB device=0 ctx=P0
13 KiB device=1 ctx=P1
14 KiB device=0 ctx=P0
15 KiB device=0 ctx=P0
16 KiB device=0 ctx=P0
17 KiB device=1 ctx=P1
18 KiB device=0 ctx=P0
19 KiB device=1 ctx=P1"
# Step 2 keeps the context (no CTX_CURRENT); 15 and 16 keep it too, but a
# context went before each (the reset, the release): written again; 17 is
# the other thread; 18 is this thread's context, unchanged by the other's;
# 19 is the other thread's again, after this one released a primary context.
want="ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=1024
alloc thread=0 device=0 size=2048
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=3072
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=4096
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=5120
ctx_current thread=0 device=0 C
alloc thread=0 device=0 size=6144
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=7168
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=8192
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=9216
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=10240
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=11264
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=12288
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=13312
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=14336
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=15360
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=16384
ctx_current thread=1 device=1 P1
alloc thread=1 device=1 size=17408
alloc thread=0 device=0 size=18432
ctx_current thread=1 device=1 P1
alloc thread=1 device=1 size=19456"
got=$(events routes)
assert_eq "$own" "$(grep ' KiB ' traced.routes.txt | sort -n)" "the program's own view"
assert_eq "$want" "$(echo "$got" | sort_steps)" "routes: CTX_CURRENT and ALLOC events"
# Every route above is followed: the cache stayed on.
if grep -q 'asked of the driver' err.routes.txt; then
	cat err.routes.txt >&2; fail "routes: the context cache was turned off"
fi

# The private tables asked for first: off from the start, the same trace.
got=$(events export)
assert_contains err.export.txt "gpumemtrace: cuGetExportTable: the current context is asked of the driver at every call from now on"
assert_eq "$want" "$(echo "$got" | sort_steps)" "export: CTX_CURRENT and ALLOC events"

# libcuda's own cuCtxSetCurrent, called where the preload never sees it.
got=$(events bypass)
assert_contains err.bypass.txt "gpumemtrace: dlsym: the current context is asked of the driver at every call from now on"
assert_eq "1 KiB device=0 ctx=P0
2 KiB device=1 ctx=P1
3 KiB device=0 ctx=P0" "$(grep ' KiB ' traced.bypass.txt)" "bypass: the program's own view"
assert_eq "ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=1024
ctx_current thread=0 device=1 P1
alloc thread=0 device=1 size=2048
ctx_current thread=0 device=0 P0
alloc thread=0 device=0 size=3072" "$got" "bypass: CTX_CURRENT and ALLOC events"
exit 0
