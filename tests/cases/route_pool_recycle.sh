#!/bin/sh
# A pool created with the handle of a destroyed one is a new pool
# (tests/routes/route_pool_recycle.c, values known by construction, see its
# header): the preload's per-thread memory of "this pool is marked as serving
# stream-ordered allocations" ends with the destruction, so the new pool is
# marked again, and the synchronisation that trims it is followed by its
# sample. summary's taken from the device follows, to the byte.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
MiB=1048576
export GMT_FAKE_POOL_RECYCLE=1 GPUMEMTRACE_SYNC_SAMPLE_MS=3600000
route_run route_pool_recycle
assert_eq 0 "$ROUTE_RC" "exit status"
grep -q '^P2 has P.s handle = 1$' traced.out || fail "the double did not recycle P's handle"
route_events -a > events.txt
O='api=driver owner=application flags=0 result=0'
# The 3rd synchronisation (P2's threshold at 0) trims P2: its sample says 0.
assert_eq "sync device=0 size=0 stream=s sync=stream $O
pool_reserved device=0 addr=0x0 size=4194304 stream=p kind=unknown $O" \
	"$(awk '$1 == "sync" && ++n == 3 { print; getline; print }' events.txt)" \
	"the trimming synchronisation and P2's sample"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary --json"
python3 - s.json <<'PY' || fail "summary JSON"
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
MiB = 1 << 20
g = t["devices"][0]["taken_from_device"]
# P's and then P2's 4 MiB; Y (3 MiB) after P2 was trimmed: 7 MiB if the
# trim went unseen.
want = (4 * MiB, 3 * MiB, 0)
got = (g["peak"]["bytes"], g["final"]["bytes"], g["final"]["pool_reserve_bytes"])
if want != got:
    sys.exit("device 0 taken peak, final, final reserve: expected %r, got %r" % (want, got))
PY
exit 0
