#!/bin/sh
# Every command of the table (gpumemtrace-analyze --commands, so a new
# command is checked without a line here) takes every common option
# (analyzer/cli/gmt_cli.c): -o FILE, --output FILE, --output=FILE and -oFILE
# write the same report to the file and nothing to stdout (with --json too);
# --json writes a document of that command that the schema accepts; --stats
# adds one line on stderr with the traces' event count (57 in each
# tests/golden/v1_3_basic.gmt) and leaves the report as it was;
# --no-symbols turns symbolisation off (sites: every frame "off") and
# --debug-dir is accepted; the phase selection (--domain, --pattern,
# --all-depths) chooses the phases of phases, curves, sites --phase and
# flamegraph --phase, and changes nothing in summary. Options may come after
# the trace, and -- ends them.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
cp "$ROOT/tests/golden/v1_3_basic.gmt" t.gmt
# same A B: the reports are equal but for the seconds symbolisation took.
same() {
	sed 's/ files, [0-9.]* s/ files, S s/; s/"seconds":[0-9.]*/"seconds":S/' "$1" > same.1
	sed 's/ files, [0-9.]* s/ files, S s/; s/"seconds":[0-9.]*/"seconds":S/' "$2" > same.2
	cmp -s same.1 same.2
}
# The commands come from the analyzer's own table (--commands: NAME
# OPERANDS), so a new command is checked here without a line of this file;
# each operand word gets the trace (diff A B: t.gmt t.gmt).
"$ANALYZE" --commands > cmds.txt || fail "--commands exited $?"
[ "$(wc -l < cmds.txt)" -ge 6 ] || fail "--commands: fewer than 6 commands"
# the usage lists the same commands, in the same order (one table)
"$ANALYZE" --help | sed -n 's/^\(usage:\)* *gpumemtrace-analyze \([a-z0-9_-]*\) \[COMMON OPTIONS\].*/\2/p' > usage.names
cut -d' ' -f1 cmds.txt > cmds.names
cmp -s usage.names cmds.names || { diff usage.names cmds.names >&2; fail "--help and --commands list other commands"; }
: > checked.txt
while read -r c ops <&3; do
	set --
	for w in $ops; do set -- "$@" t.gmt; done
	[ $# -ge 1 ] || fail "$c: no operand"
	k=$#
	"$ANALYZE" $c "$@" > $c.base 2> $c.err < /dev/null || fail "$c exited $?"
	[ -s $c.base ] || fail "$c: empty report"
	"$ANALYZE" $c --help > $c.help < /dev/null || fail "$c --help exited $?"
	grep -q '^Common options (every command):$' $c.help || fail "$c --help: no common options"
	for form in "-o F" "--output F" "--output=F" "-oF"; do
		rm -f F
		# shellcheck disable=SC2086
		"$ANALYZE" $c $form "$@" > out.txt 2> /dev/null < /dev/null || fail "$c $form exited $?"
		[ -s out.txt ] && fail "$c $form: report on stdout too"
		same $c.base F || fail "$c $form: the file differs from the report"
	done
	"$ANALYZE" $c --stats "$@" > out.txt 2> stats.txt < /dev/null || fail "$c --stats exited $?"
	same $c.base out.txt || fail "$c --stats changed the report"
	grep -q "^gpumemtrace-analyze stats: events=$((57 * k)) seconds=[0-9.]* events_per_s=[0-9]* peak_rss_bytes=[0-9]*\$" stats.txt ||
		{ cat stats.txt >&2; fail "$c --stats line (57 events a trace, $k traces)"; }
	"$ANALYZE" $c --json "$@" > $c.json < /dev/null || fail "$c --json exited $?"
	rm -f F
	"$ANALYZE" $c --json -o F "$@" > out.txt < /dev/null || fail "$c --json -o F exited $?"
	[ -s out.txt ] && fail "$c --json -o F: JSON on stdout too"
	same $c.json F || fail "$c --json -o F: the file differs from the JSON on stdout"
	"$ANALYZE" $c --debug-dir "$TESTDIR/nodebug" --debug-dir /nonexistent "$@" > $c.dbg 2> /dev/null < /dev/null ||
		fail "$c --debug-dir exited $?"
	"$ANALYZE" $c --no-symbols "$@" > $c.nosym 2> /dev/null < /dev/null || fail "$c --no-symbols exited $?"
	"$ANALYZE" $c --json --no-symbols "$@" > $c.nosym.json < /dev/null || fail "$c --json --no-symbols exited $?"
	"$ANALYZE" $c --domain mylib "$@" > $c.dom 2> /dev/null < /dev/null || fail "$c --domain exited $?"
	"$ANALYZE" $c --pattern 'l*' --all-depths "$@" > $c.pat 2> /dev/null < /dev/null || fail "$c --pattern exited $?"
	"$ANALYZE" $c --json --domain mylib --domain gpumemtrace --pattern 'l*' --pattern 'i*' --all-depths "$@" > $c.sel.json < /dev/null ||
		fail "$c --json with a selection exited $?"
	"$ANALYZE" $c "$@" --json -- > $c.after.json 2> /dev/null < /dev/null || fail "$c with options after the trace exited $?"
	same $c.json $c.after.json || fail "$c: options after the trace"
	"$ANALYZE" $c --json -- "$@" > $c.dashdash.json 2> /dev/null < /dev/null || fail "$c -- TRACE exited $?"
	same $c.json $c.dashdash.json || fail "$c: -- before the trace"
	echo "$c $k" >> checked.txt
done 3< cmds.txt
cut -d' ' -f1 checked.txt > checked.names
cmp -s cmds.names checked.names || fail "not every command was checked"
for c in summary phases curves; do
	same $c.base $c.dbg || fail "$c --debug-dir changed the report"
	same $c.base $c.nosym || fail "$c --no-symbols changed the report"
done
# summary uses the selection only to name the phase of a peak or failure.
for x in dom pat; do
	grep -v '^    in \(phase\|no phase\)' summary.base > a.txt
	grep -v '^    in \(phase\|no phase\)' summary.$x > b.txt
	same a.txt b.txt || fail "the phase selection ($x) changed summary beyond the phase names"
done
same sites.base sites.nosym && fail "sites --no-symbols changed nothing"
"$ANALYZE" sites --json --phase inner t.gmt > sites.inner0.json 2> /dev/null
assert_eq 2 $? "sites --phase inner without --domain mylib: exit status (no such phase)"
"$ANALYZE" sites --json --phase inner --domain mylib t.gmt > sites.inner1.json || fail "sites --phase inner --domain"
"$ANALYZE" flamegraph --no-symbols --phase inner --domain mylib t.gmt > flame.inner 2> /dev/null ||
	fail "flamegraph --phase inner --domain"
[ -s flame.inner ] || fail "flamegraph --phase inner --domain mylib: no lines"
grep -qv '^inner #1;device 0;' flame.inner && fail "flamegraph --phase inner: a line of another root"
"$ANALYZE" flamegraph --no-symbols --phase inner t.gmt > flame.inner0 2> /dev/null
assert_eq 2 $? "flamegraph --phase inner without --domain mylib: exit status (no such phase)"
[ -s flame.inner0 ] && fail "flamegraph --phase inner without --domain mylib: lines"
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "JSON checks"
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
def load(f):
    d = json.load(open(f))
    v.validate(d)
    return d
checked = [l.split() for l in open("checked.txt")]
for c, k in checked:
    for suffix in ("json", "nosym.json", "sel.json", "after.json", "dashdash.json"):
        d = load("%s.%s" % (c, suffix))
        assert d["command"] == c, (c, suffix, d["command"])
        if k == "1":
            assert len(d["traces"]) == 1 and d["traces"][0]["file"] == "t.gmt", (c, suffix)
def names(f):
    return [p["name"] for p in load(f)["traces"][0]["phases"]]
assert names("phases.json") == ["load", "step"], names("phases.json")
assert names("phases.sel.json") == ["load", "inner"], names("phases.sel.json")
s = load("phases.sel.json")["selection"]
assert s == {"all_depths": True, "domains": ["mylib", "gpumemtrace"], "patterns": ["l*", "i*"]}, s
s = load("curves.sel.json")["selection"]
assert s == {"all_depths": True, "domains": ["mylib", "gpumemtrace"], "patterns": ["l*", "i*"]}, s
rows = load("curves.sel.json")["traces"][0]["rows"]
assert {r[3] for r in rows} == {None, "load", "inner"}, {r[3] for r in rows}
def frames(d):
    out = []
    for t in d["traces"]:
        for dev in t["devices"]:
            for site in dev["live_sites"] + dev["most_allocated"]:
                out += [f["status"] for f in site["frames"]]
        for f in t["failed_allocations"]:
            out += [x["status"] for x in f["frames"]]
    return out
st = frames(load("sites.nosym.json"))
assert st and set(st) == {"off"}, set(st)
assert load("sites.nosym.json")["symbolisation"]["enabled"] is False
assert load("sites.json")["symbolisation"]["enabled"] is True
assert "off" not in frames(load("sites.json"))
assert load("sites.inner0.json")["traces"][0]["phase"]["occurrences_total"] == 0
assert load("sites.inner1.json")["traces"][0]["phase"]["occurrences_total"] == 1
fl = load("flamegraph.json")["traces"][0]["stacks"]
text = open("flamegraph.base").read().splitlines()
assert ["%s %d" % (x["folded"], x["bytes"]) for x in fl] == text, (fl, text)
PY
