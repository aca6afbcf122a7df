#!/bin/sh
# Symbolised sites and flamegraph output frozen (the committed traces of
# analyze_frozen run with --no-symbols: their modules are the recording
# machine's). sites_workload and sites_phase_workload run live under the
# preload; what changes between runs and machines is masked by
# tests/frozen/live_mask.py; the rest must equal tests/frozen/live/*.
# A change that is meant: UPDATE=1 sh tests/run.sh build sites_frozen.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_workload" "$BUILD/tests/libsites_lib.so" > out.txt ||
	fail "sites_workload"
T=$(the_trace); mv "$T" w.gmt; rm -rf traces
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_phase_workload" > out.txt || fail "sites_phase_workload"
T=$(the_trace); mv "$T" p.gmt
bad=0
check() { # NAME MODE ANALYZER-ARGS...
	name=$1; mode=$2; shift 2
	"$ANALYZE" "$@" > raw.out 2> raw.err || fail "$* exited $?"
	python3 "$ROOT/tests/frozen/live_mask.py" "$mode" raw.out > "$name" || fail "masking $*"
	exp="$ROOT/tests/frozen/live/$name"
	if [ "${UPDATE:-0}" = 1 ]; then cp "$name" "$exp"; return; fi
	[ -f "$exp" ] || fail "no $exp (UPDATE=1 writes it)"
	if ! cmp -s "$exp" "$name"; then
		diff -u "$exp" "$name" | head -40 >&2
		echo "FAIL: $* differs from tests/frozen/live/$name" >&2; bad=1
	fi
}
check sites.txt text sites w.gmt
check sites.json json sites --json w.gmt
check sites_top1.txt text sites --top 1 w.gmt
check flamegraph.folded folded flamegraph w.gmt
check phase_sites.txt text sites --phase step p.gmt
check phase_sites.json json sites --json --phase step p.gmt
check phase_flamegraph.folded folded flamegraph --phase step p.gmt
[ $bad = 0 ] || fail "symbolised output changed"
