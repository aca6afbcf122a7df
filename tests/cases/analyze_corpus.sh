# Every analyzer command (the analyzer's own table, --commands: a command
# added later is covered at once), as text and --json, and a few options,
# over every file of the fuzz corpus and the golden traces (and cut copies
# of a real trace): a report or a clear refusal, exit status 0, 1 or 2,
# never a crash (run under ASan/UBSan by make asan). The same corpus seeds
# the libFuzzer targets (make fuzz, make fuzz-analyze).
. "$ROOT/tests/lib.sh"
n=0
"$ANALYZE" --commands | awk '{ print $1; print $1 " --json" }' > "$TESTDIR/cmds.txt"
printf '%s\n' "curves --csv" "sites --framework --json" >> "$TESTDIR/cmds.txt"
[ "$(wc -l < "$TESTDIR/cmds.txt")" -ge 16 ] || fail "commands: $(cat "$TESTDIR/cmds.txt")"
check() { # file
	while read -r cmd; do
		# shellcheck disable=SC2086
		"$ANALYZE" $cmd --no-symbols "$1" > out.txt 2> err.txt < /dev/null
		rc=$?
		case $rc in 0|1|2) ;; *) cat err.txt >&2; fail "$cmd $1: exit status $rc" ;; esac
		if grep -q "AddressSanitizer\|runtime error" err.txt; then cat err.txt >&2; fail "$cmd $1: sanitizer report"; fi
		n=$((n + 1))
	done < "$TESTDIR/cmds.txt"
}
for f in "$ROOT"/tests/fuzz/corpus/* "$ROOT"/tests/golden/*.gmt; do
	check "$f"
done
# A real trace with phases, framework and side-stream events, cut short at a
# few offsets (gen-phases writes it through the tracer's own writer).
gen="$BUILD/tests/tools/gen-phases"
[ -x "$gen" ] || gen="$ROOT/build/tests/tools/gen-phases"
[ -x "$gen" ] || fail "gen-phases is not built"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$gen" > /dev/null || fail "gen-phases exited $?"
whole=$(the_trace)
size=$(stat -c %s "$whole")
for cut in 20 100 $((size / 3)) $((size / 2)) $((size - 1)); do
	head -c "$cut" "$whole" > cut.gmt
	check cut.gmt
done
check "$whole"
[ $n -gt 100 ] || fail "only $n runs"
