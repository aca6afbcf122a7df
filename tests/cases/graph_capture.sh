#!/bin/sh
# CUDA graphs' memory nodes (tests/routes/graph_capture.c, values known by
# construction, see its header): the stream-ordered allocations made on a
# stream being captured carry the CAPTURED flag and count in no device
# total; the device's graph memory pool is sampled (GRAPH_MEM) once a
# capture was seen, here right before each of the four phase boundaries;
# the summary reports both.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
MiB=1048576
route_run graph_capture
assert_eq 0 "$ROUTE_RC" "exit status"
# The allocations: A and B captured (flags=2), C plain; the frees of A (in
# the graph) and B (after it) match them.
assert_eq "alloc a $((8 * MiB)) stream_ordered 2
alloc b $((4 * MiB)) stream_ordered 2
free a
free b
alloc c $MiB plain 0
free c" "$(route_events | awk '$1 == "alloc" || $1 == "free" {
	split($3, a, "="); split($4, z, "="); split($6, k, "="); split($9, f, "=")
	if ($1 == "alloc") print $1, a[2], z[2], k[2], f[2]; else print $1, a[2] }')" "allocations and frees"
# The pool right before each boundary: reserved, its high, in use, its high
# (during the capture twice: nothing yet; after the graph ran, with B freed,
# after the trim twice). The samples during the capture did not invalidate
# it (the program checks cuStreamEndCapture).
python3 - dump.txt > pool.txt <<'PY'
import sys
prev = None
for line in open(sys.argv[1]):
    w = line.split()
    if not w or w[0] != "EV":
        continue
    f = dict(x.split("=", 1) for x in w[2:] if "=" in x)
    if w[1] in ("range_begin", "range_end") and prev:
        print(w[1], prev)
    prev = None
    if w[1] == "graph_mem":
        prev = "%d %d %d %d" % (int(f["addr"], 0), int(f["size"]), int(f["stream"], 0), int(f["aux"]))
PY
assert_eq "range_begin 0 0 0 0
range_end 0 0 0 0
range_begin $((12 * MiB)) $((12 * MiB)) $((4 * MiB)) $((12 * MiB))
range_end $((12 * MiB)) $((12 * MiB)) 0 $((12 * MiB))
range_begin 0 $((12 * MiB)) 0 $((12 * MiB))
range_end 0 $((12 * MiB)) 0 $((12 * MiB))" "$(cat pool.txt)" "graph pool samples at the boundaries"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary --json"
"$ANALYZE" summary "$(the_trace)" > s.txt || fail "summary"
python3 - "$ROOT/schemas/report.schema.json" s.json <<'PY' || fail "summary JSON"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
t = json.load(open(sys.argv[2]))["traces"][0]
MiB = 1 << 20
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
d = t["devices"][0]
g = d["graph_memory"]
eq((2, 12 * MiB), (g["captured_allocations"], g["captured_bytes"]), "captured")
eq({"reserved_bytes": 0, "reserved_high_bytes": 12 * MiB, "used_bytes": 0, "used_high_bytes": 12 * MiB},
   {k: g["latest"][k] for k in ("reserved_bytes", "reserved_high_bytes", "used_bytes", "used_high_bytes")},
   "latest pool sample")
# C alone: the captured allocations are in no total
eq((MiB, MiB, 0), (d["peak"]["bytes"], d["peak"]["by_kind"]["plain"], d["peak"]["by_kind"]["stream_ordered"]), "peak")
eq(0, d["independent_maxima"]["by_kind"]["stream_ordered"]["bytes"], "stream-ordered maximum")
eq(0, d["counts"]["stream_ordered"]["allocations"], "stream-ordered allocations counted")
eq(0, t["anomalies"]["unmatched_frees"], "unmatched frees")
PY
assert_contains s.txt "  CUDA graph memory: 2 allocations captured into graphs (12582912 B (12.00 MiB)), in none of the figures above: the driver backs them from the graph memory pool when a graph runs"
assert_contains s.txt "reserved 0 B (high 12582912 B (12.00 MiB)), in use 0 B (high 12582912 B (12.00 MiB))"
exit 0
