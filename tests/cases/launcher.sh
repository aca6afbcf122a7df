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
assert_contains none.txt "gpumemtrace: no trace written (the command made no traced call"
[ ! -e "$TESTDIR/none" ] || fail "files for a command without a traced call: $(ls "$TESTDIR/none")"
# -o means what GPUMEMTRACE_OUTPUT means, launcher or not: a name ending in
# .gmt (or with %) is the trace's file, in a directory created if missing;
# any other name is a directory, created if missing.
for how in launcher env; do
	for o in "$how/one.gmt" "$how/pat/%n.gmt" "$how/dir"; do
		if [ $how = launcher ]; then
			LD_LIBRARY_PATH="$FAKE" "$L" -q -o "$TESTDIR/$o" "$BUILD/tests/demo_workload" > /dev/null ||
				fail "-o $o: $?"
		else
			LD_LIBRARY_PATH="$FAKE" GPUMEMTRACE_OUTPUT="$TESTDIR/$o" LD_PRELOAD="$PRELOAD" \
				"$BUILD/tests/demo_workload" > /dev/null || fail "GPUMEMTRACE_OUTPUT=$o: $?"
		fi
	done
	[ -f "$TESTDIR/$how/one.gmt" ] || fail "$how: no file one.gmt"
	[ -f "$TESTDIR/$how/pat/demo_workload.gmt" ] || fail "$how: no file pat/demo_workload.gmt"
	set -- "$TESTDIR/$how/dir"/gpumemtrace.demo_workload.*.gmt
	[ -f "$1" ] || fail "$how: no trace in the directory dir"
done
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
