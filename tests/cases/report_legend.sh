#!/bin/sh
# The report page names the source of "allocated" per device
# (docs/analyzer.md "Held and taken"): a framework's (FW_ALLOC events) or,
# with no framework, the driver's stream-ordered allocations, whose
# "reserved, not allocated" is the pools' reserve, not a framework's cache.
# The demo (stream-ordered, no framework) said "framework allocated".
# Checked in the peak table and in the chart's series (the page data).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
T="$ROOT/tests/frozen/traces"
rows() { grep -o '<tr data-key="\(allocated\|cache\)"><td>[^<]*\|id="d[0-9]*-peak"' "$1" | sed 's/^<tr data-key="[a-z]*"><td>//; s/^id="\(d[0-9]*\)-peak"/\1/'; }
series() { grep -o '"key":"\(allocated\|cache\)","label":"[^"]*"' "$1"; }
"$ANALYZE" report --no-symbols -o demo.html "$T/demo.gmt" 2> demo.err || { cat demo.err; fail "report demo"; }
printf '%s\n' d0 'allocated (the driver&#39;s stream-ordered allocations: no framework)' \
	'reserved, not allocated (the stream-ordered pools&#39; reserve)' > want.txt
rows demo.html > got.txt
cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "demo's peak table"; }
printf '%s\n' '"key":"allocated","label":"allocated (the driver'"'"'s stream-ordered allocations: no framework)"' \
	'"key":"cache","label":"reserved, not allocated (the stream-ordered pools'"'"' reserve)"' > want.txt
series demo.html > got.txt
cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "demo's chart series"; }
# a framework's: as before
"$ANALYZE" report --no-symbols -o fw.html "$T/fw_api.gmt" 2> fw.err || { cat fw.err; fail "report fw_api"; }
assert_eq "$(printf '%s\n' d0 'framework allocated' 'reserved, not allocated (the framework&#39;s cache)' \
	d1 'framework allocated' 'reserved, not allocated (the framework&#39;s cache)')" "$(rows fw.html)" "fw_api's peak tables"
# one process, two devices, one source each
"$ANALYZE" report --no-symbols -o two.html "$T/ctx_destroy.gmt" 2> two.err || { cat two.err; fail "report ctx_destroy"; }
assert_eq "$(printf '%s\n' d0 'allocated (the driver&#39;s stream-ordered allocations: no framework)' \
	'reserved, not allocated (the stream-ordered pools&#39; reserve)' d1 'framework allocated' \
	'reserved, not allocated (the framework&#39;s cache)')" "$(rows two.html)" "ctx_destroy's peak tables"
exit 0
