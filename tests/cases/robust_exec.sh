#!/bin/sh
# What was traced before an exec is in the trace (tests/routes/robust_exec.c),
# whichever exec function replaced the process: all 300 allocations, EXEC
# as the last event and no END (the process image ended there), and before
# it a failed exec (ENOENT, as the program saw it) recorded as EXEC_FAILED
# with tracing going on; summary says the process ended by exec. Writer rounds every 100 ms, so without the flush
# the last allocations would still be buffered at the exec.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
export GPUMEMTRACE_FLUSH_MS=100
for how in execl execv execve execvp execlp execle; do
	rm -rf traces
	run_fake "$BUILD/tests/robust_exec" $how > plain.out 2>&1 || fail "$how without the preload: $?"
	run_traced "$BUILD/tests/robust_exec" $how > traced.out 2> traced.err || fail "$how with the preload: $?"
	cmp plain.out traced.out || fail "$how: the program's output changed"
	assert_contains traced.out "execl of a missing file: -1, errno ENOENT"
	assert_contains traced.out "the new image runs"
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump ($how)"
	assert_eq "STATUS ok cut" "$(tail -n 1 dump.txt)" "trace status ($how)"
	assert_eq 200 "$(grep -c '^EV alloc .* size=4096 ' dump.txt)" "allocations before the failed exec ($how)"
	assert_eq 100 "$(grep -c '^EV alloc .* size=8192 ' dump.txt)" "allocations after it ($how)"
	assert_eq 1 "$(grep -c '^EV exec_failed .* aux=2$' dump.txt)" "the failed exec, errno ENOENT ($how)"
	assert_eq exec "$(grep '^EV ' dump.txt | tail -n 1 | cut -d' ' -f2)" "the last event ($how)"
	assert_eq 2 "$(grep -c '^EV exec ' dump.txt)" "exec events ($how)"
	assert_eq 0 "$(grep -c '^END ' dump.txt)" "END records ($how)"
	"$ANALYZE" summary --json "$(the_trace)" > sum.json || fail "summary ($how)"
	assert_eq exec "$(json_get sum.json 'j["traces"][0]["process_end"]["how"]')" "summary: ended by exec ($how)"
done
exit 0
