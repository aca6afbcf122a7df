#!/bin/sh
# NVTX-only loading: NVTX_INJECTION64_PATH names the preload but LD_PRELOAD
# does not (tests/routes/phase_nvtx.c with its second NVTX instance). NVTX
# dlopen()s the library, so its ranges are recorded, but its driver hooks
# are not the process's: the preload says so once on stderr and in the
# trace (NVTX_ONLY, first event), and the analyzer calls the trace
# incomplete. With LD_PRELOAD as well (nvtx_ranges.sh) nothing is said.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog="$BUILD/tests/phase_nvtx"
lib="$BUILD/tests/libphase_nvtx.so"
mkdir -p traces
NVTX_INJECTION64_PATH="$PRELOAD" GPUMEMTRACE_OUTPUT="$TESTDIR/traces" run_fake "$prog" "$lib" > out.txt 2> err.txt ||
	{ cat err.txt >&2; fail "exit status"; }
assert_eq "push outer = 0" "$(head -n 1 out.txt)" "NVTX reached the injection (level 0)"
assert_eq "gpumemtrace: loaded only as an NVTX injection (NVTX_INJECTION64_PATH), not through LD_PRELOAD: NVTX ranges are recorded, allocations are NOT (run the program under the launcher, gpumemtrace COMMAND, or with LD_PRELOAD naming this library)" \
	"$(cat err.txt)" "stderr: said once"
t=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$t" > dump.txt || fail "gmt-dump"
assert_eq "nvtx_only" "$(awk '$1 == "EV" { print $2; exit }' dump.txt)" "the first event"
assert_eq 1 "$(grep -c '^EV nvtx_only' dump.txt)" "NVTX_ONLY events"
assert_eq 25 "$(grep -c '^EV range_\|^EV mark' dump.txt)" "ranges and marks recorded"
INC="trace incomplete: the preload was loaded only as an NVTX injection (NVTX_INJECTION64_PATH without LD_PRELOAD): phases are recorded, allocations are not (run the program under the launcher, gpumemtrace COMMAND)"
# 10 range begins and 5 marks are CUDA activity; no allocation.
NOALLOC="no allocation: the trace holds CUDA activity (15 events: contexts, synchronisations, ranges, samples) but no allocation of any route"
"$ANALYZE" summary "$t" > s.txt 2> s.err || fail "summary"
assert_contains s.txt "  $INC"
assert_contains s.txt "  $NOALLOC"
printf 'gpumemtrace-analyze: %s: %s\n' "$t" "$INC" "$t" "$NOALLOC" > expected.err
diff expected.err s.err >&2 || fail "summary's stderr (< expected, > actual)"
# Every command says it too, on stderr and in JSON.
for cmd in summary phases curves sites flamegraph oom report export; do
	"$ANALYZE" $cmd --json --no-symbols "$t" > $cmd.json 2> $cmd.err || fail "$cmd --json"
	diff expected.err $cmd.err >&2 || fail "$cmd's stderr"
	assert_eq "True True False 0 15 True 2" "$(json_get $cmd.json "' '.join(str(v) for v in (lambda c: (c['incomplete'],
		c['nvtx_injection_only'], c['driver_stub'], c['untraced_entry_points'], c['cuda_activity_events'],
		c['cuda_activity_without_allocations'], len(c['notes'])))(j['traces'][0]['completeness']))")" \
		"$cmd --json completeness"
done
"$ANALYZE" diff --json --no-symbols "$t" "$t" > diff.json 2> diff.err || fail "diff --json"
cat expected.err expected.err > diff.expected
diff diff.expected diff.err >&2 || fail "diff's stderr: both runs said"
assert_eq "True True 15 2
True True 15 2" "$(json_get diff.json "'\\n'.join(' '.join(str(v) for v in (c['incomplete'], c['nvtx_injection_only'],
	c['cuda_activity_events'], len(c['notes']))) for c in (j['pairs'][0]['completeness'][r] for r in 'ab'))")" \
	"diff --json completeness of both runs"
exit 0
