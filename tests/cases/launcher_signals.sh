#!/bin/sh
# The launcher on a batch system's terms: SIGTERM, SIGINT and SIGHUP sent to
# the launcher reach the job, whose trace is flushed and says which signal
# ended it, and the launcher exits 128+N (it used to die alone and leave the
# job running); with two jobs sharing an output directory at once, each
# launcher names only its own job's trace (it used to name every new file).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
L="$BUILD/gpumemtrace"
W="$BUILD/tests/robust_wait"
wait_ready() { # FILE: until the job said "ready"
	i=0
	while ! grep -q ready "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 500 ] || fail "the job never got ready"
		sleep 0.02
	done
}
for sig in TERM:15 INT:2 HUP:1; do
	name=${sig%:*}; n=${sig#*:}
	rm -rf "t$name"
	# A shell starts a background job with SIGINT ignored: give it back,
	# as a batch system's own process would have it.
	LD_LIBRARY_PATH="$FAKE" env --default-signal=INT,QUIT "$L" -o "t$name" "$W" pause > "out$name" 2> "err$name" &
	pid=$!
	wait_ready "out$name"
	kill -s "$name" $pid
	wait $pid
	assert_eq $((128 + n)) $? "the launcher's exit status after SIG$name"
	set -- "t$name"/*.gmt
	[ $# = 1 ] && [ -f "$1" ] || fail "SIG$name: traces: $*"
	"$BUILD/tests/tools/gmt-dump" "$1" > dump.txt || fail "gmt-dump"
	assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "SIG$name: trace status"
	assert_eq "EXIT how=signal value=$n" "$(grep '^EXIT ' dump.txt)" "SIG$name: END"
	assert_contains "err$name" "gpumemtrace: trace written to $(cd "t$name" && pwd)/$(basename "$1")"
done

# Two jobs, one directory: B runs start to end while A is running.
mkdir shared
LD_LIBRARY_PATH="$FAKE" "$L" -o shared "$W" go > outA 2> errA &
a=$!
wait_ready outA
LD_LIBRARY_PATH="$FAKE" "$L" -o shared "$W" . > outB 2> errB || fail "job B: $?"
touch go
wait $a || fail "job A: $?"
assert_eq 2 "$(ls shared | wc -l)" "traces in the shared directory"
assert_eq 1 "$(grep -c 'trace written to' errA)" "traces job A's launcher names"
assert_eq 1 "$(grep -c 'trace written to' errB)" "traces job B's launcher names"
ta=$(sed -n 's/.*trace written to //p' errA); tb=$(sed -n 's/.*trace written to //p' errB)
[ "$ta" != "$tb" ] || fail "both launchers name $ta"
for t in "$ta" "$tb"; do [ -f "$t" ] || fail "no file $t"; done
exit 0
