#!/bin/sh
# The phase API (gpumemtrace_phase_begin/_end, gpumemtrace_mark), called
# through dlsym(RTLD_DEFAULT) and weak symbols (tests/routes/phase_api.c):
# without the preload both are absent and the program runs the same; with it
# each call is one event of source 1 (the API) in the domain "gpumemtrace",
# with the thread's nesting depth, names interned (UTF-8 kept), "" and NULL
# names ignored for begin and mark, NULL allowed for end (name id 0), an end
# with nothing open recorded at depth 0, no stacks.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog="$BUILD/tests/phase_api"
run_fake "$prog" > plain.out 2> plain.err || { cat plain.out plain.err >&2; fail "without the preload"; }
assert_eq "preload no" "$(cat plain.err)" "without the preload"
run_traced "$prog" > traced.out 2> traced.err || { cat traced.out traced.err >&2; fail "with the preload"; }
assert_eq "preload yes" "$(cat traced.err)" "with the preload"
diff plain.out traced.out >&2 || fail "stdout differs with the preload"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
awk -f "$ROOT/tests/routes/phase_ranges.awk" dump.txt > ranges.txt
cat > expected.txt <<'EOT'
range_begin t0 depth=0 src=1 id=0 name=load domain=gpumemtrace
mark t0 depth=1 src=1 id=0 name=ckpt domain=gpumemtrace
range_begin t0 depth=1 src=1 id=0 name=step domain=gpumemtrace
range_end t0 depth=1 src=1 id=0 name=step domain=gpumemtrace
range_begin t0 depth=1 src=1 id=0 name=step domain=gpumemtrace
range_end t0 depth=1 src=1 id=0 name=- domain=gpumemtrace
range_begin t0 depth=1 src=1 id=0 name=phase é domain=gpumemtrace
range_begin t1 depth=0 src=1 id=0 name=worker domain=gpumemtrace
range_end t1 depth=0 src=1 id=0 name=worker domain=gpumemtrace
range_end t0 depth=1 src=1 id=0 name=phase é domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=load domain=gpumemtrace
range_end t0 depth=0 src=1 id=0 name=- domain=gpumemtrace
EOT
diff expected.txt ranges.txt >&2 || fail "range events (< expected, > actual)"
# Nothing else was recorded, no stacks were taken, each name is one STRING.
assert_eq 12 "$(grep -c '^EV' dump.txt)" "events in the trace"
assert_eq 0 "$(grep '^EV' dump.txt | grep -vc ' stack=0 ')" "events with a stack"
assert_eq 0 "$(grep -c '^STACK' dump.txt)" "STACK records"
assert_eq 1 "$(grep -c '^STRING id=[0-9]* text=step$' dump.txt)" "STRING records of 'step'"
assert_eq 6 "$(grep -c '^STRING' dump.txt)" "STRING records (the domain and 5 names)"
exit 0
