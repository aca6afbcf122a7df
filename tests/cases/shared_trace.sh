#!/bin/sh
# The processes the grouping tests join (tests/routes/shared_workload.c): one
# trace per rank, named by its rank, whose allocations and frees merged on
# CLOCK_MONOTONIC come in the script's order; the third rank's context on
# device 1 and the worker's context on device 0 without any allocation.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2 GMT_FAKE_CONTEXT_BYTES=67108864
for n in 2 3; do
	rm -rf traces
	run_traced "$BUILD/tests/shared_workload" $n > out$n.txt || fail "shared_workload $n"
	mkdir t$n && mv traces/*.gmt t$n/ || fail "no traces ($n)"
	for t in t$n/*.gmt; do "$BUILD/tests/tools/gmt-dump" "$t" > "$t.dump" || fail "dump $t"; done
done
assert_eq "gpumemtrace.shared_workload.rank0
gpumemtrace.shared_workload.rank1" "$(ls t2 | grep 'gmt$' | sed 's/\.[0-9]*\.gmt$//')" "2: trace names"
assert_eq "gpumemtrace.shared_workload.rank0
gpumemtrace.shared_workload.rank0
gpumemtrace.shared_workload.rank1
gpumemtrace.shared_workload.rank2" "$(ls t3 | grep 'gmt$' | sed 's/\.[0-9]*\.gmt$//')" "3: trace names"
python3 - t2 t3 <<'PY' || fail "merged order"
import glob, re, sys
MiB = 1 << 20
def merged(d):
    ev = []
    for f in glob.glob(d + "/*.dump"):
        rank = re.search(r"\.rank(\d+)\.", f).group(1)
        lines = open(f).read().split("\n")
        allocs = [l for l in lines if l.startswith("EV alloc ")]
        if not allocs:
            rank = "w"   # the worker: no allocation
        for l in lines:
            v = dict(x.split("=", 1) for x in l.split()[2:] if "=" in x)
            if l.startswith("EV alloc "):
                ev.append((int(v["ts"]), "r%s+%d" % (rank, int(v["size"]) // MiB)))
            elif l.startswith("EV free "):
                ev.append((int(v["ts"]), "r%s-" % rank))
            elif l.startswith("EV primary_retain "):
                ev.append((int(v["ts"]), "r%s ctx%s" % (rank, v["device"])))
    return [e for _, e in sorted(ev)]
want2 = ["r0+100", "r1+300", "r0+200", "r1-", "r0-", "r1+450"]
want3 = ["r2+50", "r0+100", "r1+300", "r0+200", "r1-", "r2+250", "r0-", "r2-", "r1+450"]
got2, got3 = merged(sys.argv[1]), merged(sys.argv[2])
# Contexts come up in any order, and the ranks free what they hold at the
# end in any order: compare the steps in order, the rest as sets.
steps2 = [e for e in got2 if "ctx" not in e]
if steps2[:len(want2)] != want2 or sorted(steps2[len(want2):]) != ["r0-", "r1-"]:
    sys.exit("2: %s" % got2)
steps3 = [e for e in got3 if "ctx" not in e]
if steps3[:len(want3)] != want3 or sorted(steps3[len(want3):]) != ["r0-", "r1-", "r2-"]:
    sys.exit("3: %s" % got3)
ctx3 = sorted(e for e in got3 if "ctx" in e)
if ctx3 != ["r0 ctx0", "r1 ctx0", "r2 ctx0", "r2 ctx1", "rw ctx0"]:
    sys.exit("3 contexts: %s" % ctx3)
PY
exit 0
