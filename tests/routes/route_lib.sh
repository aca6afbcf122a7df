# Helpers of tests/cases/route_*.sh (POSIX sh), sourced after tests/lib.sh.
#
# route_run PROG [ARGS]: runs $BUILD/tests/PROG on the doubles without and
#   with the preload (environment as set by the caller); fails unless both
#   print the same stdout and exit with the same status. Leaves in the
#   current directory: plain.out traced.out traced.err, names.txt (the
#   program's "addr NAME 0xHEX" lines), dump.txt (gmt-dump of the trace,
#   which must have ended cleanly). Sets ROUTE_RC to the exit status.
# route_events [-a]: the trace's events, one line each, with addresses and
#   handles replaced by the program's names and the fields that change from
#   run to run (ts, thread, stack, aux) left out. Without -a the samples
#   (meminfo, pool_reserved, pool_used), whose number depends on timing, and
#   the threads' current contexts (ctx_current) are left out too.
DUMP="$BUILD/tests/tools/gmt-dump"

route_run() {
	prog="$BUILD/tests/$1"; shift
	[ -x "$prog" ] || fail "no $prog"
	rm -rf "$TESTDIR/traces"
	run_fake "$prog" "$@" > plain.out 2> plain.err
	rc1=$?
	run_traced "$prog" "$@" > traced.out 2> traced.err
	rc2=$?
	if ! diff plain.out traced.out > out.diff; then
		sed 's/^/      /' out.diff >&2
		sed 's/^/      err: /' traced.err >&2
		fail "$prog: output differs with the preload (< without, > with)"
	fi
	assert_eq "$rc1" "$rc2" "$prog: exit status without and with the preload"
	ROUTE_RC=$rc1
	grep '^addr ' traced.err > names.txt
	"$DUMP" "$(the_trace)" > dump.txt || { tail -3 dump.txt >&2; fail "gmt-dump failed"; }
	assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
}

route_events() {
	all=0
	[ "${1:-}" = -a ] && all=1
	awk -v all=$all '
	FNR == NR { name[$3] = $2; next }
	$1 != "EV" { next }
	{
		t = $2
		if (!all && (t == "meminfo" || t == "pool_reserved" || t == "pool_used" || t == "ctx_current")) next
		line = t
		for (i = 3; i <= NF; i++) {
			split($i, kv, "=")
			k = kv[1]; v = substr($i, length(k) + 2)
			if (k == "ts" || k == "thread" || k == "stack" || k == "aux") continue
			if (t == "sync" && k == "addr") continue
			if ((k == "addr" || k == "stream") && (v in name)) v = name[v]
			# A sync packs its kind where allocations keep theirs.
			if (t == "sync" && k == "kind") {
				k = "sync"
				v = v == "plain" ? "stream" : v == "stream_ordered" ? "context" : v == "vmm_physical" ? "event" : v
			}
			line = line " " k "=" v
		}
		print line
	}' names.txt dump.txt
}
