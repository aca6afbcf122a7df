# The launcher: creates the output directory, says where each trace went,
# passes the command's exit status through (128+N for a signal), writes no
# trace for a command that makes no traced call, and refuses bad options.
. "$ROOT/tests/lib.sh"
L="$BUILD/gpumemtrace"
LD_LIBRARY_PATH="$FAKE" "$L" -o "$TESTDIR/new/dir" "$BUILD/tests/demo_workload" > out.txt 2> err.txt ||
	fail "demo under the launcher: exit status $?"
set -- "$TESTDIR"/new/dir/gpumemtrace.demo_workload.*.gmt
[ -f "$1" ] || fail "no trace in the created directory"
assert_contains err.txt "gpumemtrace: trace written to $1"
assert_contains err.txt "summary $1"
"$L" -q -o "$TESTDIR/x" sh -c 'exit 3'; assert_eq 3 $? "exit status passed through"
"$L" -q -o "$TESTDIR/x" sh -c 'kill -TERM $$'; assert_eq 143 $? "killed by SIGTERM: 128 + 15"
"$L" -o "$TESTDIR/none" true 2> none.txt || fail "true under the launcher"
assert_contains none.txt "gpumemtrace: no trace written in $TESTDIR/none"
assert_eq "" "$(ls "$TESTDIR/none")" "files for a command without a traced call"
"$L" --version > v.txt; assert_eq "gpumemtrace $(cat "$ROOT/VERSION")" "$(cat v.txt)" "version"
"$L" --bogus true 2> bad.txt; assert_eq 2 $? "unknown option"
assert_contains bad.txt "unknown option --bogus"
"$L" 2> usage.txt; assert_eq 2 $? "no command"
assert_contains usage.txt "gpumemtrace [options] [--] COMMAND [ARGS...]"
# The launcher's environment: the preload, NVTX injection, the Python side.
"$L" -q sh -c 'printf "%s\n%s\n%s\n" "$LD_PRELOAD" "$NVTX_INJECTION64_PATH" "$PYTHONPATH"' > env.txt
assert_eq "$BUILD/libgpumemtrace.so" "$(sed -n 1p env.txt)" "LD_PRELOAD"
assert_eq "$BUILD/libgpumemtrace.so" "$(sed -n 2p env.txt)" "NVTX_INJECTION64_PATH"
assert_eq "$BUILD/python/gpumemtrace_companion:$BUILD/python" "$(sed -n 3p env.txt | cut -d: -f1-2)" "PYTHONPATH"
"$L" -q --no-companion sh -c 'printf "%s\n" "$PYTHONPATH"' > env2.txt
assert_eq "$BUILD/python" "$(cut -d: -f1 env2.txt)" "PYTHONPATH without the companion"
