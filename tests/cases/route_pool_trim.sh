#!/bin/sh
# A pool's reserve leaves "taken from the device" when the driver gives it
# back (tests/routes/route_pool_trim.c, values known by construction, see its
# header): cuMemPoolTrimTo is followed by the pool's sample at once, and a
# synchronisation that takes no full sample (GPUMEMTRACE_SYNC_SAMPLE_MS
# period) still reads the pools that keep a reserve, which a release
# threshold may have trimmed; a stream-ordered block from an explicit pool
# is the current context's (CTX_CURRENT before it), so cuCtxDestroy takes
# it. summary's taken from the device and the phases engine's taken (curves)
# follow, to the byte; a pool's reserve never counts less than its live
# blocks.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
MiB=1048576
export GMT_FAKE_DEVICES=2 GPUMEMTRACE_SYNC_SAMPLE_MS=3600000
route_run route_pool_trim
assert_eq 0 "$ROUTE_RC" "exit status"
route_events -a > events.txt
O='api=driver owner=application flags=0 result=0'
# The trim, then P's reserve at once (0: the trim gave back its 4 MiB).
assert_eq "pool_trim device=0 addr=0x0 size=0 stream=p kind=unknown $O
pool_reserved device=0 addr=0x0 size=4194304 stream=p kind=unknown $O" \
	"$(grep -A1 '^pool_trim ' events.txt | grep -v '^pool_used')" "the trim and P's sample"
# The synchronisation after the threshold went to 0 (device 0's 3rd: no full
# sample, no MEMINFO), then P's reserve: 0, trimmed by that synchronisation.
assert_eq "sync device=0 size=0 stream=s0 sync=stream $O
pool_reserved device=0 addr=0x0 size=4194304 stream=p kind=unknown $O" \
	"$(awk '$1 == "sync" && ++n == 3 { print; getline; print }' events.txt)" \
	"the trimming synchronisation and P's sample"
# B is C's: the thread's current context is written before it.
assert_eq "ctx_current device=1 addr=c size=0 stream=0x0 kind=unknown $O
alloc device=1 addr=b size=2097152 stream=s1 kind=stream_ordered $O" \
	"$(grep -B1 '^alloc device=1 addr=b ' events.txt)" "B's context"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary --json"
python3 - "$ROOT/schemas/report.schema.json" s.json <<'PY' || fail "summary JSON"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
t = json.load(open(sys.argv[2]))["traces"][0]
MiB = 1 << 20
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
d0, d1 = t["devices"][0], t["devices"][1]
g0, g1 = d0["taken_from_device"], d1["taken_from_device"]
# Device 0: P's 4 MiB at the first allocation (3 MiB live + 1 MiB of P's
# reserve beyond it); X and Y (3 MiB each) each came after a trim: 7 MiB if
# either trim counted late. At the end Y alone.
eq((4 * MiB, 3 * MiB, MiB), (g0["peak"]["bytes"], g0["peak"]["live_bytes"], g0["peak"]["pool_reserve_bytes"]),
   "device 0 taken peak, live then, reserve then")
eq((3 * MiB, 0), (g0["final"]["bytes"], g0["final"]["pool_reserve_bytes"]), "device 0 taken final")
eq((3 * MiB, 3 * MiB), (d0["peak"]["bytes"], d0["final"]["bytes"]), "device 0 held by live allocations: peak, final")
# Device 1: B's 2 MiB, gone with C (3 MiB with Z if it had stayed); Z at the end.
eq((2 * MiB, MiB, 0), (g1["peak"]["bytes"], g1["final"]["bytes"], g1["final"]["pool_reserve_bytes"]),
   "device 1 taken peak, final, final reserve")
eq({"destroyed": 1, "released_blocks": 1, "released_bytes": 2 * MiB},
   {k: d1["contexts"][k] for k in ("destroyed", "released_blocks", "released_bytes")}, "device 1 contexts (B)")
eq(0, t["anomalies"]["ambiguous_ctx_destroys"], "ambiguous destructions")
PY
# The phases engine: the most and the last held per device, and never less
# than the stream-ordered bytes a pool's reserve holds.
"$ANALYZE" curves --csv "$(the_trace)" > c.csv || fail "curves"
assert_eq "0 4194304 3145728 3145728 3145728
1 2097152 1048576 2097152 1048576" "$(awk -F, 'NR > 1 { if ($10 + 0 > m[$2] + 0) m[$2] = $10; last[$2] = $10
	if ($11 + 0 > l[$2] + 0) l[$2] = $11; ll[$2] = $11
	if ($6 != "" && $6 + 0 > $10 + 0) bad++ }
	END { for (d in m) print d, m[d], last[d], l[d], ll[d]; if (bad) print "taken below allocated:", bad }' c.csv | sort)" \
	"curves: max and last taken, max and last held by live allocations, per device"
exit 0
