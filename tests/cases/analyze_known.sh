#!/bin/sh
# End to end: a trace written through the real tracer core by
# tests/tools/gen-known.c, whose peak and composition are known by
# construction (see that file), analysed as text (compared with
# tests/expected/analyze_known.txt after masking what depends on the run:
# path, pid, host, clock) and as JSON (exact values, validated against the
# schema). Several traces are reported in the order given.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
# The sanitizer trees build no test tools: fall back to the normal build's.
GEN="$BUILD/tests/tools/gen-known"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/gen-known"
[ -x "$GEN" ] || fail "gen-known is not built (make build/tests/tools/gen-known)"
mkdir -p traces
GPUMEMTRACE_OUTPUT="$TESTDIR/traces" "$GEN" known || fail "gen-known exited $?"
t=$(the_trace)

# Masks the lines that depend on the run, not on the events.
normalise() {
	sed -e 's|^Trace .*|Trace TRACE|' \
	    -e 's|^  pid [0-9]*, ppid [0-9]*, host .*|  pid PID, ppid PPID, host HOST|' \
	    -e 's|^  exe .*|  exe EXE|' -e 's|^  cmdline .*|  cmdline CMDLINE|' \
	    -e 's|^  gpumemtrace .*, trace format|  gpumemtrace VERSION, trace format|' \
	    -e 's|^  started .*|  started TIME|' \
	    -e 's| ([0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9:.]*Z)||' \
	    -e '/^  environment (allow-listed):/,/^  duration/{/^  duration/!d;}' "$1"
}

"$ANALYZE" summary "$t" > report.txt 2> err.txt || { cat err.txt; fail "summary exited $?"; }
normalise report.txt > got.txt
diff -u "$ROOT/tests/expected/analyze_known.txt" got.txt || fail "text report differs from tests/expected/analyze_known.txt"
[ -s err.txt ] && { cat err.txt; fail "stderr not empty"; }

# --stats: one line on stderr; -o writes the report to a file.
"$ANALYZE" summary --stats -o two.txt "$t" "$t" 2> stats.txt || fail "--stats exited $?"
grep -q '^gpumemtrace-analyze stats: events=28 seconds=[0-9.]* events_per_s=[0-9]* peak_rss_bytes=[0-9]*$' stats.txt ||
	{ cat stats.txt; fail "--stats line"; }
assert_eq 2 "$(grep -c '^Trace ' two.txt)" "traces in the text report"

"$ANALYZE" summary --json -o report.json "$t" "$t" || fail "summary --json exited $?"
python3 - "$ROOT/schemas/report.schema.json" report.json <<'PY' || fail "JSON checks"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(j)
GiB, MiB = 1 << 30, 1 << 20
T0 = 1000000000
assert len(j["traces"]) == 2, len(j["traces"])
t = j["traces"][0]
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
eq("clean", t["status"], "status")
eq(14, t["events"]["total"], "events")
eq(14, t["end"]["written"], "end.written")
eq(0, t["drops"]["events"], "drops")
eq(6500000000, t["time"]["duration_ns"], "duration")
d = [x for x in t["devices"] if x["ordinal"] == 0]
eq(1, len(d), "device 0 present"); d = d[0]
eq("Fake GPU 0", d["record"]["name"], "device name")
eq("GPU-12345678-9abc-def0-0102-030405060708", d["record"]["uuid"], "uuid")
eq(150754820096, d["record"]["total_bytes"], "total bytes")
eq("9.0", d["record"]["compute_capability"], "cc")
p = d["peak"]
eq(3 * GiB + MiB, p["bytes"], "peak")
eq(T0 + 2000000000, p["ts_ns"], "peak ts")
eq(2.0, p["since_first_event_s"], "peak seconds")
eq({"unknown": 0, "plain": 2 * GiB, "stream_ordered": GiB, "vmm_physical": MiB, "managed": 0, "array": 0}, p["by_kind"], "peak by kind")
eq({"application": 3 * GiB, "nccl": MiB, "cublas": 0, "cudnn": 0, "other": 0}, p["by_owner"], "peak by owner")
m = d["independent_maxima"]
eq(2 * GiB, m["by_kind"]["stream_ordered"]["bytes"], "async max")
eq(T0 + 4000000000, m["by_kind"]["stream_ordered"]["ts_ns"], "async max ts")
eq(4 * GiB + MiB, m["sum_bytes"], "sum of maxima")
assert m["sum_bytes"] > p["bytes"]
eq(2 * GiB + MiB, d["final"]["bytes"], "final")
eq({"allocations": 2, "frees": 0, "failed": 1}, d["counts"]["stream_ordered"], "async counts")
eq({"allocations": 1, "frees": 1, "failed": 0}, d["counts"]["plain"], "plain counts")
eq(137 * GiB, d["meminfo"]["latest"]["free_bytes"], "latest meminfo")
eq(2, d["meminfo"]["samples"], "meminfo samples")
f = t["failed_allocations"]
eq(1, f["total"], "fails")
f = f["items"][0]
eq(200 * GiB, f["requested_bytes"], "fail size")
eq("CUDA_ERROR_OUT_OF_MEMORY", f["result_name"], "fail result")
eq("cudaMallocAsync", f["api"], "fail api")
eq(0xabc, f["stream"], "fail stream")
eq(2 * GiB + MiB, f["live_on_device"]["bytes"], "live at the failure")
eq(140 * GiB, f["meminfo_free_bytes"], "meminfo before the failure")
eq(64 * MiB, t["host_pinned"]["peak_bytes"], "host pinned peak")
eq(8 * GiB, t["address_space"]["reserved_peak_bytes"], "reserved")
eq(1, t["anomalies"]["unmatched_frees"], "unmatched frees")
eq([{"pool": 0x900, "device": 0, "created": False, "destroyed": False, "trims": 0, "samples": 2,
     "reserved_current_bytes": 3 * GiB, "reserved_high_bytes": 3 * GiB, "used_current_bytes": 2 * GiB,
     "used_high_bytes": 2 * GiB, "last_sample_ts_ns": T0 + 4100000000}], t["pools"], "pools")
eq(t, j["traces"][1], "the same trace twice")
PY
echo ok
