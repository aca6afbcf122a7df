#!/bin/sh
# A trace is one process: the same trace given twice (the same file, a link
# or a copy: the same header, host, pid, ppid and clocks) is counted once in
# every grouping by physical device (summary's, phases' and oom's job
# section, report, export), said on stderr and in the job section; each
# argument is still reported in the order given. Before, demo.gmt given
# twice was two processes on its device: a coinciding peak of 4844421120 B,
# twice the process's own 2422210560 B.
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
K="$ROOT/tests/frozen/traces/demo.gmt"
cp "$K" copy.gmt
"$ANALYZE" summary "$K" copy.gmt > s.txt 2> s.err || { cat s.err; fail "summary exited $?"; }
assert_eq "gpumemtrace-analyze: copy.gmt (trace 2) records the same process as $K (trace 1: pid 8763, the same header): counted once, in that trace" \
	"$(grep 'same process' s.err)" "summary's note"
assert_eq 2 "$(grep -c '^Trace ' s.txt)" "traces reported"
assert_contains s.txt "  1 of them records the same process as an earlier one (the same header): counted once"
assert_contains s.txt "Physical device d0: Fake GPU 0, host vm, uuid 676d7466-616b-652d-0000-000000000000; 1 process"
assert_contains s.txt "  coinciding peak of what the processes took from it together: 2422210560 B (2.26 GiB)"
assert_contains s.txt "  pid 8763, devices none: the same process as trace 1, counted there"
"$ANALYZE" summary --json "$K" "$K" > s.json 2> /dev/null
assert_eq "1 2422210560 0 None" "$(json_get s.json '" ".join(str(x) for x in (len(j["job"]["devices"][0]["members"]), j["job"]["devices"][0]["peak"]["taken_bytes"], j["job"]["processes"][1]["same_process_as"], j["job"]["processes"][0]["same_process_as"]))')" \
	"summary --json: members, peak, same_process_as"
"$ANALYZE" report --json "$K" copy.gmt > r.json 2> r.err
assert_contains r.err "copy.gmt (trace 2) records the same process as"
assert_eq "1" "$(json_get r.json 'len(j["devices"][0]["members"])')" "report: members of the device"
"$ANALYZE" phases "$K" copy.gmt > p.txt 2> p.err
assert_contains p.txt "Physical device d0: Fake GPU 0, host vm, uuid 676d7466-616b-652d-0000-000000000000; 1 process"
# two different processes stay two (fork children: their own pid and header)
"$ANALYZE" summary "$ROOT/tests/frozen/traces/demo_fork_1.gmt" "$ROOT/tests/frozen/traces/demo_fork_2.gmt" > f.txt 2> f.err
grep -q 'same process' f.err f.txt && fail "two processes taken for one"
exit 0
