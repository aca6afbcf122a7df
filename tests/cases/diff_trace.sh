#!/bin/sh
# The two runs the diff tests compare (tests/routes/lib/diff_main.c): A on
# driver 13000 with NCCL_BUFFSIZE 4 MiB and libdiffws.so as built, B on
# driver 13010 with 8 MiB and the library rebuilt (other code: its function
# at another offset, another build id). Pinned here: each step's peak of
# everything held, to the byte (phases --json), the versions recorded, and
# the rebuilt library's function at another offset.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
MiB=1048576
mkdir A B
cp "$BUILD/tests/diff_v1/libdiffws.so" A/ && cp "$BUILD/tests/diff_v2/libdiffws.so" B/ || fail "copy"
off() { nm "$1" | awk '$3 == "diffws_workspace" { print $1 }'; }
[ "$(off A/libdiffws.so)" != "$(off B/libdiffws.so)" ] || fail "the rebuilt library's function did not move"
NCCL_BUFFSIZE=$((4 * MiB)) GMT_FAKE_CONTEXT_BYTES=$((256 * MiB)) \
	run_traced "$BUILD/tests/diff_workload" "$TESTDIR/A/libdiffws.so" > a.out || fail "run A"
mv "$(the_trace)" A/ || fail "move A"
NCCL_BUFFSIZE=$((8 * MiB)) GMT_FAKE_CONTEXT_BYTES=$((512 * MiB)) \
	GMT_FAKE_DRIVER_VERSION=13010 GMT_FAKE_NCCL_VERSION=22903 \
	run_traced "$BUILD/tests/diff_workload" "$TESTDIR/B/libdiffws.so" > b.out || fail "run B"
mv "$(the_trace)" B/ || fail "move B"
for r in A B; do
	"$ANALYZE" phases --json $r/*.gmt > $r.json || fail "phases $r"
	"$BUILD/tests/tools/gmt-dump" $r/*.gmt | grep '^META nccl' > $r.meta
done
peaks() {
	json_get "$1" '" ".join(str(o["devices"][0]["requested"]["max_taken"]["bytes"]) for p in j["traces"][0]["phases"] for o in p["listed"])'
}
# load: 1 GiB + 2 MiB; step 1: + 256 + W + 64 + 4 KiB + B; step 2: + W + B + 256 + 4 KiB
assert_eq "$(((1024 + 2) * MiB)) $(((1024 + 2 + 256 + 4 + 64 + 4) * MiB + 4096)) $(((1024 + 2 + 4 + 4 + 256) * MiB + 4096))" \
	"$(peaks A.json)" "A: peaks of load, step 1, step 2"
assert_eq "$(((1024 + 2) * MiB)) $(((1024 + 2 + 256 + 32 + 64 + 8) * MiB + 4096)) $(((1024 + 2 + 32 + 8 + 256) * MiB + 4096))" \
	"$(peaks B.json)" "B: peaks of load, step 1, step 2"
assert_eq "META nccl_version=22903 nccl_file=$FAKE/libnccl.so.2" "$(cat B.meta)" "B: NCCL version"
"$ANALYZE" summary --json B/*.gmt > Bs.json || fail "summary B"
assert_eq 13010 "$(json_get Bs.json 'j["traces"][0]["devices"][0]["record"]["driver_version"]')" "B: driver version"
exit 0
