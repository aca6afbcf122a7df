#!/bin/sh
# --domain is ONE rule for every command with a phase selection
# (analyzer/engines/gmt_phase_engine.c, selected; docs/analyzer.md "Which
# ranges are phases"): with --domain, only the ranges of the domains named
# are phases. tests/golden/v1_3_basic.gmt has by construction "load" (our
# API), "step" (NVTX default domain, push/pop at depth 0 and a start/end
# range) and "inner" (NVTX domain mylib, nested in step).
#   - phases --json names exactly, per selection, the phases listed below;
#   - sites/flamegraph --phase step --domain nodomain: no such phase under
#     the selection (stderr), exit 2, no folded line (it found step before);
#   - every command of the table (--commands), text and --json: a domain
#     no range has gives the report of a selection of nothing (--pattern
#     'zz*'), and --domain gpumemtrace --domain default the default report
#     (the selection's own echo and symbolisation seconds aside).
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
cp "$ROOT/tests/golden/v1_3_basic.gmt" t.gmt

names() {
	"$ANALYZE" phases --json "$@" t.gmt > n.json || fail "phases --json $* exited $?"
	json_get n.json '" ".join(p["name"] for p in j["traces"][0]["phases"])'
}
assert_eq "load step" "$(names)" "no --domain"
assert_eq "" "$(names --domain nodomain)" "--domain nodomain"
assert_eq "inner" "$(names --domain mylib)" "--domain mylib"
assert_eq "load" "$(names --domain gpumemtrace)" "--domain gpumemtrace"
assert_eq "step" "$(names --domain default)" "--domain default"
assert_eq "step inner" "$(names --domain default --domain mylib)" "--domain default --domain mylib"
assert_eq "load step inner" "$(names --domain '*')" "--domain '*'"
assert_eq "load step" "$(names --domain gpumemtrace --domain default)" "the default set named"
assert_eq "inner" "$(names --domain '*' --pattern 'i*')" "--domain '*' --pattern 'i*'"

for c in sites flamegraph; do
	"$ANALYZE" $c --no-symbols --phase step t.gmt > found.txt 2> /dev/null || fail "$c --phase step exited $?"
	[ -s found.txt ] || fail "$c --phase step: empty"
	"$ANALYZE" $c --no-symbols --phase step --domain nodomain t.gmt > out.txt 2> err.txt
	assert_eq 2 $? "$c --phase step --domain nodomain: exit status"
	assert_contains err.txt 'no phase "step" under the phase selection'
	if [ $c = flamegraph ]; then
		[ -s out.txt ] && fail "flamegraph --phase step --domain nodomain printed stacks"
	fi
	"$ANALYZE" $c --no-symbols --phase step --domain gpumemtrace t.gmt > /dev/null 2>&1
	assert_eq 2 $? "$c --phase step --domain gpumemtrace (step is the default domain's): exit status"
	"$ANALYZE" $c --no-symbols --phase step --domain default t.gmt > dflt.txt 2> /dev/null ||
		fail "$c --phase step --domain default exited $?"
	# the symbolisation line's seconds are measured, not a figure of the input
	[ "$(sed 's/ files, [0-9.]* s/ files, S s/' found.txt)" = "$(sed 's/ files, [0-9.]* s/ files, S s/' dflt.txt)" ] ||
		fail "$c --phase step: --domain default differs from no --domain"
done

# norm FILE: the report without the selection's echo and the seconds.
norm() {
	sed 's/"selection":{[^}]*},//; s/ files, [0-9.]* s/ files, S s/; s/"seconds":[0-9.]*/"seconds":S/' "$1"
}
n=0
"$ANALYZE" --commands > cmds.txt || fail "--commands exited $?"
while read -r c ops; do
	set -- t.gmt
	[ "$ops" = "A B" ] && set -- t.gmt t.gmt
	for J in "" --json; do
		"$ANALYZE" $c $J --domain nodomain "$@" > a.out 2> /dev/null < /dev/null
		"$ANALYZE" $c $J --pattern 'zz*' "$@" > b.out 2> /dev/null < /dev/null
		norm a.out > a.n; norm b.out > b.n
		cmp -s a.n b.n || { diff a.n b.n | head -5 >&2; fail "$c $J: --domain nodomain is not 'no phase'"; }
		"$ANALYZE" $c $J "$@" > c.out 2> /dev/null < /dev/null
		"$ANALYZE" $c $J --domain gpumemtrace --domain default "$@" > d.out 2> /dev/null < /dev/null
		norm c.out > c.n; norm d.out > d.n
		cmp -s c.n d.n || { diff c.n d.n | head -5 >&2; fail "$c $J: the default set named differs from the default"; }
		n=$((n + 1))
	done
done < cmds.txt
[ $n -ge 18 ] || fail "only $n command/format pairs checked"
exit 0
