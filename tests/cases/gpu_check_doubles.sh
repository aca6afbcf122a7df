#!/bin/sh
# scripts/gpu-check.sh --doubles: the one prepared GPU script runs its
# self-test on the test doubles (rows 0, 1, 15, 16, 19, 20, 21 and 23 PASS, the
# PyTorch rows SKIP), and row 15's evaluator fails when the driver's measurement and the
# analyzer disagree (a driver that took the VMM allocation with the reset).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir -p out tmp
OUT="$TESTDIR/out" TMPDIR="$TESTDIR/tmp" BUILD="$BUILD" sh "$ROOT/scripts/gpu-check.sh" --doubles > console.txt 2>&1 ||
	{ cat console.txt >&2; fail "gpu-check.sh --doubles exit status $?"; }
[ -s out/rows.tsv ] || { cat console.txt >&2; fail "no rows.tsv"; }
status() { awk -F'\t' -v id="$1" '$1 == id { print $5 }' out/rows.tsv; }
for id in 0 1 15 16 19 20 21 23; do
	assert_eq PASS "$(status $id)" "row $id on the doubles: $(awk -F'\t' -v id=$id '$1 == id' out/rows.tsv)"
done
assert_eq SKIP "$(status 2)" "row 2 (PyTorch) on the doubles"
assert_eq SKIP "$(status 22)" "row 22 (PyTorch) on the doubles"
n=$(grep -c '^GMT_HOOK(DRV' "$ROOT/preload/hooks.def")
assert_eq "$n looked up, $n the exported symbol, 0 differ, 0 missing" \
	"$(awk -F'\t' '$1 == 19 { print $4 }' out/rows.tsv)" "row 19 measured"
assert_eq "same output (exit 0); 2 of 2 cudaMalloc named" \
	"$(awk -F'\t' '$1 == 21 { print $4 }' out/rows.tsv)" "row 21 measured"
# The doubles' one device: route_ctx_cache's one-device steps (19, and 3
# through libcuda's own cuCtxSetCurrent); the cache goes off at the look-up
# of glibc's dlsym and at cuGetExportTable.
assert_eq "routes: 19 of 19 steps, 0 wrong; bypass: 3 of 3 steps, 0 wrong, cache off at dlsym; export: 19 of 19 steps, 0 wrong, cache off at cuGetExportTable;" \
	"$(awk -F'\t' '$1 == 23 { print $4 }' out/rows.tsv)" "row 23 measured"
assert_eq "peak 320 MiB; reset released 256 MiB in 1 block(s); after it the analyzer holds 64 MiB, the driver 64 MiB (V); destroyed 1" \
	"$(awk -F'\t' '$1 == 15 { print $4 }' out/rows.tsv)" "row 15 measured"
assert_eq "program: reserved 96 MiB (high 96 MiB), used 32 MiB (high 96 MiB); trace: 96 MiB 96 MiB 32 MiB 96 MiB" \
	"$(awk -F'\t' '$1 == 16 { print $4 }' out/rows.tsv)" "row 16 measured"
# The same work directory, as if the driver had taken V with the reset.
W="$TESTDIR/tmp/gmt-gpu-check"
[ -d "$W/reset" ] || fail "no work directory $W/reset"
for f in plain.out traced.out; do
	sed -i 's/^V held after the reset: .*/V held after the reset: 0/' "$W/reset/$f"
done
: > "$W/rows.tsv"
python3 "$ROOT/tests/gpu/gpu_eval.py" reset "$W" "$BUILD" > eval.txt 2>&1 || { cat eval.txt >&2; fail "gpu_eval.py reset"; }
assert_eq FAIL "$(awk -F'\t' '{ print $5 }' "$W/rows.tsv")" "row 15 when the driver took V"
assert_contains "$W/rows.tsv" "device bytes right after the reset: the analyzer's = what V still held (measured by the program): expected 0 B, measured 64 MiB"
assert_contains "$W/rows.tsv" "change ev_ctx in analyzer/engines/gmt_replay.c"
exit 0
