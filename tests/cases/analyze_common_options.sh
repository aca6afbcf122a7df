#!/bin/sh
# Every command takes every common option (analyzer/cli/gmt_cli.c): -o FILE,
# --output FILE, --output=FILE and -oFILE write the same report to the file
# and nothing to stdout; --json writes a document of that command that the
# schema accepts; --stats adds one line on stderr with the trace's event
# count (57 in tests/golden/v1_3_basic.gmt) and leaves the report as it was;
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
	sed 's/ files, [0-9.]* s/ files, S s/' "$1" > same.1
	sed 's/ files, [0-9.]* s/ files, S s/' "$2" > same.2
	cmp -s same.1 same.2
}
for c in summary phases curves sites flamegraph; do
	"$ANALYZE" $c t.gmt > $c.base 2> $c.err || fail "$c exited $?"
	[ -s $c.base ] || fail "$c: empty report"
	i=0
	for form in "-o F" "--output F" "--output=F" "-oF"; do
		rm -f F
		# shellcheck disable=SC2086
		"$ANALYZE" $c $form t.gmt > out.txt 2> /dev/null || fail "$c $form exited $?"
		[ -s out.txt ] && fail "$c $form: report on stdout too"
		same $c.base F || fail "$c $form: the file differs from the report"
		i=$((i + 1))
	done
	"$ANALYZE" $c --stats t.gmt > out.txt 2> stats.txt || fail "$c --stats exited $?"
	same $c.base out.txt || fail "$c --stats changed the report"
	grep -q '^gpumemtrace-analyze stats: events=57 seconds=[0-9.]* events_per_s=[0-9]* peak_rss_bytes=[0-9]*$' stats.txt ||
		{ cat stats.txt >&2; fail "$c --stats line"; }
	"$ANALYZE" $c --json t.gmt > $c.json || fail "$c --json exited $?"
	"$ANALYZE" $c --debug-dir "$TESTDIR/nodebug" --debug-dir /nonexistent t.gmt > out.txt 2> /dev/null ||
		fail "$c --debug-dir exited $?"
	"$ANALYZE" $c --no-symbols t.gmt > $c.nosym 2> /dev/null || fail "$c --no-symbols exited $?"
	"$ANALYZE" $c --json --no-symbols t.gmt > $c.nosym.json || fail "$c --json --no-symbols exited $?"
	case $c in
	summary|phases|curves)
		same $c.base out.txt || fail "$c --debug-dir changed the report"
		same $c.base $c.nosym || fail "$c --no-symbols changed the report" ;;
	esac
	"$ANALYZE" $c --domain mylib t.gmt > $c.dom 2> /dev/null || fail "$c --domain exited $?"
	"$ANALYZE" $c --pattern 'l*' --all-depths t.gmt > $c.pat 2> /dev/null || fail "$c --pattern exited $?"
	"$ANALYZE" $c --json --domain mylib --pattern 'l*' --pattern 'i*' --all-depths t.gmt > $c.sel.json ||
		fail "$c --json with a selection exited $?"
	"$ANALYZE" $c t.gmt --json -- > $c.after.json 2> /dev/null || fail "$c with options after the trace exited $?"
	sed 's/"seconds":[0-9.]*/"seconds":S/' $c.json > a.json
	sed 's/"seconds":[0-9.]*/"seconds":S/' $c.after.json > b.json
	cmp -s a.json b.json || fail "$c: options after the trace"
done
same summary.base summary.dom || fail "--domain changed summary"
same summary.base summary.pat || fail "--pattern changed summary"
same sites.base sites.nosym && fail "sites --no-symbols changed nothing"
"$ANALYZE" sites --json --phase inner t.gmt > sites.inner0.json || fail "sites --phase inner"
"$ANALYZE" sites --json --phase inner --domain mylib t.gmt > sites.inner1.json || fail "sites --phase inner --domain"
"$ANALYZE" flamegraph --no-symbols --phase inner --domain mylib t.gmt > flame.inner 2> /dev/null ||
	fail "flamegraph --phase inner --domain"
[ -s flame.inner ] || fail "flamegraph --phase inner --domain mylib: no lines"
grep -qv '^inner #1;device 0;' flame.inner && fail "flamegraph --phase inner: a line of another root"
"$ANALYZE" flamegraph --no-symbols --phase inner t.gmt > flame.inner0 2> /dev/null || fail "flamegraph --phase inner"
[ -s flame.inner0 ] && fail "flamegraph --phase inner without --domain mylib: lines"
python3 - "$ROOT/schemas/report.schema.json" <<'PY' || fail "JSON checks"
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
def load(f):
    d = json.load(open(f))
    v.validate(d)
    return d
for c in ("summary", "phases", "curves", "sites", "flamegraph"):
    for suffix in ("json", "nosym.json", "sel.json", "after.json"):
        d = load("%s.%s" % (c, suffix))
        assert d["command"] == c, (c, suffix, d["command"])
        assert len(d["traces"]) == 1 and d["traces"][0]["file"] == "t.gmt", (c, suffix)
def names(f):
    return [p["name"] for p in load(f)["traces"][0]["phases"]]
assert names("phases.json") == ["load", "step"], names("phases.json")
assert names("phases.sel.json") == ["load", "inner"], names("phases.sel.json")
s = load("phases.sel.json")["selection"]
assert s == {"all_depths": True, "domains": ["mylib"], "patterns": ["l*", "i*"]}, s
s = load("curves.sel.json")["selection"]
assert s == {"all_depths": True, "domains": ["mylib"], "patterns": ["l*", "i*"]}, s
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
