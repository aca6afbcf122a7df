#!/bin/sh
# `curves` writes every row's CSV as the rows are made when its output can
# be taken back (a regular file) or keeps nothing (/dev/null), and holds it
# otherwise (a pipe): the same bytes every way. The trace of
# tests/tools/gen-late.c has its earliest event in a LATE record, after rows
# were made, so every time_s counts from a first time the rows did not know
# yet (the file: taken back and the trace run again; the pipe: the held
# text refitted); the values are known by construction (see that file).
# Two traces: the second's rows are taken back to where they began, after
# the first's. The committed trace of gen-phases (tests/frozen/traces/) has
# a side stream: its first pass is voided by the second.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
x="$BUILD/tests/tools/gen-late"
[ -x "$x" ] || fail "gen-late is not built (make $x)"
mkdir -p gen-late
GPUMEMTRACE_OUTPUT="$TESTDIR/gen-late" "$x" || fail "gen-late exited $?"
late=$(ls gen-late/*.gmt)
side="$ROOT/tests/frozen/traces/gen_phases.gmt"
"$BUILD/tests/tools/gmt-dump" "$late" > dump.txt || fail "gmt-dump"
assert_eq 1 "$(grep -c ' late$' dump.txt)" "events in a LATE record"

head='trace,device,ts_ns,time_s,phase,allocated_bytes,reserved_bytes,outside_bytes,device_used_bytes,taken_bytes,live_bytes'
rows() { # the rows of gen-late as trace $1
	cat <<EOT
$1,0,1010000000,0.005000000,,,,1048576,,1048576,1048576
$1,0,1020000000,0.015000000,,,,3145728,,3145728,3145728
$1,0,1005000000,0.000000000,,,,7340032,,7340032,7340032
$1,0,1030000000,0.025000000,,,,6291456,,6291456,6291456
EOT
}
{ echo "$head"; rows 0; } > want1.csv
{ echo "$head"; rows 0; rows 1; } > want2.csv

"$ANALYZE" curves "$late" > file.csv 2> err.txt || { cat err.txt; fail "curves > file exited $?"; }
diff -u want1.csv file.csv || fail "curves to a file (< expected, > actual)"
[ -s err.txt ] && { cat err.txt; fail "stderr not empty"; }
"$ANALYZE" curves "$late" | cat > pipe.csv || fail "curves | cat"
diff -u want1.csv pipe.csv || fail "curves through a pipe (< expected, > actual)"
"$ANALYZE" curves -o out.csv "$late" || fail "curves -o exited $?"
diff -u want1.csv out.csv || fail "curves -o FILE (< expected, > actual)"
"$ANALYZE" curves -o /dev/null "$late" || fail "curves -o /dev/null exited $?"
# appended to what the file held: only this run's rows are taken back
echo "kept" > app.csv
"$ANALYZE" curves "$late" >> app.csv || fail "curves >> file exited $?"
{ echo kept; cat want1.csv; } | diff -u - app.csv || fail "curves >> file (< expected, > actual)"

"$ANALYZE" curves "$late" "$late" > file2.csv || fail "curves, two traces, exited $?"
diff -u want2.csv file2.csv || fail "two traces to a file (< expected, > actual)"
"$ANALYZE" curves "$late" "$late" | cat > pipe2.csv || fail "curves, two traces, | cat"
diff -u want2.csv pipe2.csv || fail "two traces through a pipe (< expected, > actual)"

# a side stream (two passes: the file's first-pass rows are truncated
# away), then the late trace; gen-phases' rows are
# tests/expected/analyze_curves.csv's (analyze_curves.sh; the frozen
# outputs hold them too)
{ cat "$ROOT/tests/expected/analyze_curves.csv"; rows 1; } > want_side.csv
"$ANALYZE" curves "$side" "$late" > side_file.csv || fail "curves, side stream, > file exited $?"
diff -u want_side.csv side_file.csv || fail "a side stream, then the late trace, to a file (< expected, > actual)"
"$ANALYZE" curves "$side" "$late" | cat > side_pipe.csv || fail "curves, side stream, | cat"
diff -u want_side.csv side_pipe.csv || fail "a side stream, then the late trace, through a pipe (< expected, > actual)"
