#!/bin/sh
# flamegraph: the memory live at the coinciding peak of sites_workload as
# folded stacks, outermost first under a "device 0" root, exactly (the frames
# below main, which belong to libc, are cut).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_workload" "$BUILD/tests/libsites_lib.so" > out.txt ||
	fail "sites_workload"
"$ANALYZE" flamegraph "$(the_trace)" > f.txt 2> err.txt || fail "flamegraph"
grep -Eq '^gpumemtrace-analyze: symbolisation: [0-9]+ distinct addresses, [0-9]+ files, [0-9.]+ s$' err.txt ||
	fail "symbolisation time on stderr"
sed 's/^device 0;.*;main;/device 0;main;/' f.txt > got.txt
cat > expected.txt <<EOT
device 0;main;site_a;cudaMalloc 3145728
device 0;main;site_b;site_b_inner;cudaMalloc 2097152
device 0;main;sites_lib_alloc;cudaMalloc 4194304
EOT
diff expected.txt got.txt >&2 || fail "folded stacks differ (< expected, > got)"
"$ANALYZE" flamegraph "$(the_trace)" "$(the_trace)" 2>/dev/null; assert_eq 2 $? "two traces"
exit 0
