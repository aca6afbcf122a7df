#!/bin/sh
# What `oom` needs is in the trace, for each failure of oom_workload
# (tests/routes/lib/oom_main.c, numbers known by construction): the failed
# 2 GiB request and, right after it, the device's free bytes (1.75 GiB); in
# a forked child's own trace; after SIGKILL (the trace cut, the failure and
# its sample on disk); and with a caching allocator that recovers from the
# first failure by releasing its cache and retrying (FW_SEGMENT_FREE, the
# retried allocation) and then gives up (FW_OOM), with its own counts
# (FW_RETRIES).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
W="$BUILD/tests/oom_workload"
GiB=1073741824
export GMT_FAKE_MEM_BYTES=$((8 * GiB)) GMT_FAKE_CONTEXT_BYTES=268435456
# EV lines as "type size [free]" (samples' and FW_OOM's addr in decimal).
events() {
	"$BUILD/tests/tools/gmt-dump" "$1" > "$2.dump" || [ "$2" = kill ] || fail "$2: gmt-dump"
	python3 - "$2.dump" <<'PY'
import sys
for l in open(sys.argv[1]):
    f = l.split()
    if f[0] != "EV" or f[1] not in ("alloc", "alloc_fail", "free", "meminfo", "fw_segment_free",
                                    "fw_segment_alloc", "fw_oom", "fw_retries"):
        continue
    v = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    print(f[1], v["size"], *([int(v["addr"], 16)] if f[1] in ("meminfo", "fw_oom", "fw_retries") else []))
PY
}
for mode in oom fork kill retry; do
	rm -rf traces
	run_traced "$W" $mode > $mode.out 2> $mode.err
	rc=$?
	if [ $mode = kill ]; then assert_eq 137 $rc "$mode: exit status"; else assert_eq 1 $rc "$mode: exit status"; fi
	events "$(the_trace)" $mode > $mode.ev
done
# The failure and the sample taken right after it (not an older one).
for mode in oom fork kill; do
	assert_eq "alloc_fail $((2 * GiB))
meminfo 8589934592 1879048192" "$(grep -A1 '^alloc_fail' $mode.ev)" "$mode: failure and its sample"
done
assert_eq "STATUS ok cut" "$(tail -n 1 kill.dump)" "kill: the trace is cut"
assert_eq "STATUS ok clean" "$(tail -n 1 oom.dump)" "oom: the trace ended"
# retry: fail, release C, retried alloc works; fail twice more, the
# allocator's own cudaMemGetInfo (a MEMINFO of the program's), FW_OOM.
assert_eq "alloc_fail $((2 * GiB))
meminfo 8589934592 1879048192
fw_segment_free $((2 * GiB))
free 0
alloc $((2 * GiB))
fw_retries 0 1
fw_segment_alloc $((2 * GiB))
alloc_fail $((2 * GiB))
meminfo 8589934592 1879048192
alloc_fail $((2 * GiB))
meminfo 8589934592 1879048192
meminfo 8589934592 1879048192
fw_oom $((2 * GiB)) 1879048192
fw_retries 1 1" "$(sed -n '/^alloc_fail/,/^fw_retries 1 1/p' retry.ev)" "retry: failures, release, retry"
assert_contains retry.out "oom_workload: recovered after releasing 1 segment(s)"
exit 0
