#!/bin/sh
# How the process ended is in the trace (END how/value, format 1.4), for
# every way of ending (tests/routes/robust_exit_how.c): return from main,
# exit, _exit, _Exit, a fatal signal of default disposition, _exit from a
# signal handler. And _exit from a handler that interrupted a thread
# anywhere in the tracer never hangs (tests/routes/robust_exit_signal.c,
# RUNS runs: before the fix 7 of 360 runs hung for ever).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
RUNS=${RUNS:-40}
prog=$BUILD/tests/robust_exit_how
for way in "return 5:exit 5:5" "exit 3:exit 3:3" "exit 256:exit 0:0" "_exit 4:_exit 4:4" \
	"_Exit 6:_exit 6:6" "kill 15:signal 15:143" "kill 6:signal 6:134" "handler 9:_exit 9:9"; do
	args=${way%%:*}; rest=${way#*:}; want=${rest%%:*}; rc_want=${rest#*:}
	rm -rf traces
	# shellcheck disable=SC2086
	run_traced "$prog" $args 2> err.txt
	rc=$?
	assert_eq "$rc_want" "$rc" "exit status of '$args'"
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump ($args)"
	assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status ($args)"
	assert_eq "EXIT how=${want% *} value=${want#* }" "$(grep '^EXIT ' dump.txt)" "END of '$args'"
	assert_eq 1 "$(grep -c '^EV alloc ' dump.txt)" "the allocation ($args)"
done

hung=0; ended=0; i=0
while [ $i -lt "$RUNS" ]; do
	i=$((i + 1))
	rm -rf traces
	run_traced timeout -s KILL 10 "$BUILD/tests/robust_exit_signal" $(( (i * 7919) % 30000 + 1000 )) 2>/dev/null
	rc=$?
	[ $rc = 137 ] && hung=$((hung + 1))
	[ $rc = 137 ] || assert_eq 7 "$rc" "exit status of run $i"
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt
	case $(tail -n 1 dump.txt) in
	"STATUS ok clean")
		ended=$((ended + 1))
		assert_eq "EXIT how=_exit value=7" "$(grep '^EXIT ' dump.txt)" "END of run $i" ;;
	"STATUS ok cut") ;;   # the writer was stuck behind the handler's own lock
	*) fail "run $i: $(tail -n 1 dump.txt)" ;;
	esac
done
assert_eq 0 "$hung" "runs that hung (of $RUNS)"
echo "$ended of $RUNS runs wrote END"
exit 0
