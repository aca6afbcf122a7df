#!/bin/sh
# The PyTorch companion at out-of-memory, on the FAKE torch's caching
# allocator driving the runtime double (tests/companion/e2e_workload.py
# "retry"): the history's cache release and the retried segment of the
# failure PyTorch recovered from, then the "oom" entry of the one it did not
# (request 256 MiB, 128 MiB free), moved into the trace beside the driver
# level's failed cudaMalloc calls (one for the recovered request, two, the
# attempt and the retry, for the last), and the allocator's own retry and
# OOM counts (FW_RETRIES).
# Three times: as it runs; preempted for 5 ms right after the first
# CLOCK_REALTIME reading of each function call (tests/companion/preempted.py),
# as a loaded machine may do, which must not move the history at all (the
# companion's clock offset once came from one such pair of readings); and
# with the history's times 0.5 ms late (tests/companion/late_clock.py), which
# the analyzer must put right by the driver events (docs/analyzer.md,
# "Anchors"). Each time the history's events land on the right side of the
# driver's failed cudaMalloc: C's free before it, the release of C's cache
# after it.
. "$ROOT/tests/lib.sh"
TOP=$TESTDIR
command -v python3 > /dev/null || fail "python3 is needed"
MiB=1048576
PY="$ROOT/python"
# check NAME [LAUNCHER...]: one traced run of the workload and its checks.
check() {
	RUN=$1; TESTDIR=$TOP/$1; shift
	mkdir -p "$TESTDIR" && cd "$TESTDIR" || fail "no directory $TESTDIR"
	GMT_FAKE_MEM_BYTES=1073741824 FAKE_TORCH_CUDART="$FAKE/libcudart.so.13" \
		PYTHONPATH="$PY/gpumemtrace_companion:$PY:$ROOT/tests/companion/fake_torch" \
		run_traced python3 "$@" "$ROOT/tests/companion/e2e_workload.py" retry > out.txt 2> err.txt
	assert_eq 1 $? "$RUN: exit status"
	[ -s err.txt ] && fail "$RUN: stderr: $(cat err.txt)"
	assert_contains out.txt "recovered: retries=1"
	assert_contains out.txt "out of memory: CUDA out of memory. Tried to allocate $((256 * MiB)) bytes (fake torch); ooms=1"
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "$RUN: gmt-dump"
	python3 - dump.txt <<'PY' || fail "$RUN: events"
import sys
MiB = 1 << 20
side, fails = [], []
for l in open(sys.argv[1]):
    f = l.split()
    if f[0] != "EV":
        continue
    v = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    size = int(v["size"]) // MiB
    if f[-1] == "side":
        side.append("%s %d%s" % (f[1], size, " free=%d" % (int(v["addr"], 16) // MiB)
                                 if f[1] == "fw_oom" else ""))
    elif f[1] == "alloc_fail":
        fails.append(size)
want = ["fw_segment_alloc 512", "fw_alloc 512",
        "fw_segment_alloc 256", "fw_alloc 256", "fw_free_requested 256", "fw_free_completed 256",
        "fw_segment_free 256", "fw_segment_alloc 384", "fw_alloc 384",
        "fw_oom 256 free=128"]
if side != want:
    sys.exit("side events:\n  got  %s\n  want %s" % (side, want))
if fails != [384, 256, 256]:
    sys.exit("driver failures: %s" % fails)
PY
	# The allocator's own counts (memory_stats), recorded when they change: at
	# the OOM observer, one retry (the recovered request) and one OOM.
	assert_eq "EV fw_retries device=0 addr=0x1 size=1" \
		"$(grep '^EV fw_retries ' dump.txt | sed 's/ ts=[0-9]* thread=[0-9]*//; s/ stream=.*//')" "$RUN: retry counts"
	# The oom report of it: the first failure recovered (384 MiB: failed, then
	# succeeded after the history's release of C's 256 MiB segment), the second
	# given up (FW_OOM: 256 MiB asked, 128 MiB free as torch saw it; the sample
	# at the failure says the same), the framework's own counts.
	"$ANALYZE" oom --json "$(the_trace)" > oom.json || fail "$RUN: oom --json"
	python3 - oom.json "$ROOT/schemas/report.schema.json" <<'PY' || fail "$RUN: oom report"
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
eq(("train", 256 * MiB, 256 * MiB), (a["phase"]["name"], a["device"]["free_bytes"], a["device"]["framework"]["cache_bytes"]),
   "the recovered failure's device")
eq((False, True, 256 * MiB, 128 * MiB, 128 * MiB, 128 * MiB),
   (b["recovered"], b["gave_up"], b["framework_oom"]["request_bytes"], b["framework_oom"]["free_bytes"],
    b["device"]["free_bytes"], b["shortfall_bytes"]), "the failure given up")
eq({"alloc_retries": 1, "ooms": 1}, {k: b["framework_counts"][k] for k in ("alloc_retries", "ooms")},
   "the framework's counts")
eq(((512 + 384) * MiB, 1), (b["device"]["framework"]["allocated_bytes"], len(b["framework_holders"])),
   "the framework's blocks at the second")
PY
}
check plain
check preempted "$ROOT/tests/companion/preempted.py"
check late "$ROOT/tests/companion/late_clock.py"
exit 0
