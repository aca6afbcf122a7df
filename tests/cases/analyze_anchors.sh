#!/bin/sh
# End to end: a framework history stamped on the wrong side of the driver
# events it surrounds (tests/tools/gen-anchors.c: a first move 150 us late,
# a second 60 us early) is put where the driver events say it happened
# (analyzer/engines/gmt_timeline.h, "Anchors"): C's free before the failed
# cudaMalloc (the framework's cache at it: 256 MiB), C's release between
# the failure and its retry (a release of that failure), the OOM after the
# second failure's last attempt (one failure of two attempts, not two), a
# segment with its cudaMalloc (no instant where it is reserved before the
# driver gave it, none where the driver holds it outside any segment). A
# merge by the stamps alone gets every one of these wrong. Every number is
# known by construction (see that file).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/gen-anchors"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/gen-anchors"
[ -x "$GEN" ] || fail "gen-anchors is not built (make build/tests/tools/gen-anchors)"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" || fail "gen-anchors exited $?"
t=$(the_trace)

"$ANALYZE" oom --json "$t" > oom.json 2> err.txt || { cat err.txt; fail "oom --json exited $?"; }
python3 - oom.json "$ROOT/schemas/report.schema.json" <<'PY' || fail "oom report"
import json, sys, jsonschema
MiB = 1 << 20
d = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[2]))).validate(d)
t = d["traces"][0]
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
eq((2, 1), (t["failures_total"], t["recovered_total"]), "failures")
a, b = t["failures"]
eq((True, [(384 * MiB, False), (384 * MiB, True)], [(256 * MiB, "framework segment")]),
   (a["recovered"], [(x["bytes"], x["ok"]) for x in a["attempts"]],
    [(x["bytes"], x["what"]) for x in a["releases"]]), "the recovered failure")
fw = a["device"]["framework"]
eq((256 * MiB, 512 * MiB, 768 * MiB, 256 * MiB),
   (a["device"]["free_bytes"], fw["allocated_bytes"], fw["reserved_bytes"], fw["cache_bytes"]),
   "the recovered failure's device")
eq((False, True, [(256 * MiB, False), (256 * MiB, False)], 256 * MiB, 128 * MiB),
   (b["recovered"], b["gave_up"], [(x["bytes"], x["ok"]) for x in b["attempts"]],
    b["framework_oom"]["request_bytes"], b["framework_oom"]["free_bytes"]), "the failure given up")
fw = b["device"]["framework"]
eq((896 * MiB, 896 * MiB, 0), (fw["allocated_bytes"], fw["reserved_bytes"], fw["cache_bytes"]),
   "the framework at the second")
PY

# The curves: one row per instant where a value changed (allocated,
# reserved, outside, device used, taken, live). MiB: A 512 at t100 with its
# segment; C 256 at t200 with its segment and A's block; the sample at t251
# (used 768); C released with its cudaFree at t300; R1 384 with its segment
# at t350, its block at t502 (no anchor: as stamped); the sample at t601
# (used 896); D 64 with its segment and block at t800.
"$ANALYZE" curves --csv "$t" > curves.csv 2> err.txt || { cat err.txt; fail "curves exited $?"; }
M=1048576
row() { # us allocated reserved used taken live (MiB; "-": none)
	a=$2; [ "$a" = - ] && a= || a=$(($2 * M))
	r=$3; [ "$r" = - ] && r= || r=$(($3 * M))
	printf '0,0,%d,%s,,%s,%s,0,%d,%d,%d\n' $((1000000000 + $1 * 1000)) \
		"$(printf '0.%06d000' "$1")" "$a" "$r" $(($4 * M)) $(($5 * M)) $(($6 * M))
}
{
	echo "trace,device,ts_ns,time_s,phase,allocated_bytes,reserved_bytes,outside_bytes,device_used_bytes,taken_bytes,live_bytes"
	row 0 - - 0 0 0
	row 100 0 512 0 512 512
	row 200 512 768 0 768 768
	row 251 512 768 768 768 768
	row 300 512 512 768 512 512
	row 350 512 896 768 896 896
	row 502 896 896 768 896 896
	row 601 896 896 896 896 896
	row 800 960 960 896 960 960
} > want.csv
cmp -s want.csv curves.csv || { diff want.csv curves.csv >&2; fail "curves (< expected, > actual)"; }
exit 0
