# tests/gpu/gpu_eval.py's phase comparisons (the GPU check's rows A-D), on
# real `phases --json` documents from the test doubles: phases_workload
# traced through the launcher (as e2e_phases does) and gen-phases' trace.
# tests/gpu/test_gpu_eval.py asserts PASS or FAIL exactly; standard library.
. "$ROOT/tests/lib.sh"
[ -x "$BUILD/tests/tools/gen-phases" ] || fail "gen-phases is not built (make build/tests/tools/gen-phases)"
export GMT_FAKE_CONTEXT_BYTES=268435456
mkdir -p traces gen
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/traces" "$BUILD/tests/phases_workload" > out.txt ||
	fail "phases_workload under the launcher: exit status $?"
trace=$(the_trace)
"$ANALYZE" phases --json "$trace" > p.json || fail "phases (workload) exit status $?"
GPUMEMTRACE_OUTPUT="$TESTDIR/gen" "$BUILD/tests/tools/gen-phases" || fail "gen-phases exit status $?"
set -- "$TESTDIR"/gen/*.gmt
[ $# = 1 ] || fail "expected one gen-phases trace, found: $*"
"$ANALYZE" phases --json "$1" > g.json || fail "phases (gen-phases) exit status $?"
GMT_P_WORKLOAD=p.json GMT_P_GEN=g.json GMT_BUILD="$BUILD" GMT_TRACE="$trace" \
	python3 "$ROOT/tests/gpu/test_gpu_eval.py" > unittest.txt 2>&1 || { cat unittest.txt; fail "test_gpu_eval.py"; }
grep -q '^OK$' unittest.txt || { cat unittest.txt; fail "test_gpu_eval.py did not say OK"; }
grep -q 'skipped' unittest.txt && { cat unittest.txt; fail "tests were skipped"; }
exit 0
