#!/bin/sh
# The report page names the source of "allocated" per device
# (docs/analyzer.md "Held and taken"): a framework's (FW_ALLOC events) or,
# with no framework, the driver's stream-ordered allocations, whose
# "reserved, not allocated" is the pools' reserve, not a framework's cache.
# The demo (stream-ordered, no framework) said "framework allocated".
# With no framework the outside series say what they hold then: every
# driver-level byte but the stream-ordered ones (which are the allocated),
# or every driver-level byte; "outside the framework" they said before.
# With neither a framework nor stream-ordered allocations, allocated and
# its reserve are unknown (they said "framework allocated" and "the
# framework's cache" before). Checked in the peak table and in the chart's
# series (the page data).
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
T="$ROOT/tests/frozen/traces"
rows() { grep -o '<tr data-key="\(allocated\|cache\|outside_[a-z]*\)"><td>[^<]*\|id="d[0-9]*-peak"' "$1" | sed 's/^<tr data-key="[a-z_]*"><td>//; s/^id="\(d[0-9]*\)-peak"/\1/'; }
series() { grep -o '"key":"\(allocated\|cache\|outside_[a-z]*\)","label":"[^"]*"' "$1"; }
# owners PREFIX: the five outside series' labels
owners() { for o in application nccl cublas cudnn other; do echo "$1: $o"; done; }
OUT_FW="outside the framework"
OUT_ST="driver-level, not stream-ordered (no framework)"
OUT_DRV="driver-level (no framework)"
"$ANALYZE" report --no-symbols -o demo.html "$T/demo.gmt" 2> demo.err || { cat demo.err; fail "report demo"; }
{ printf '%s\n' d0 'allocated (the driver&#39;s stream-ordered allocations: no framework)' \
	'reserved, not allocated (the stream-ordered pools&#39; reserve)'; owners "$OUT_ST"; } > want.txt
rows demo.html > got.txt
cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "demo's peak table"; }
{ printf '%s\n' '"key":"allocated","label":"allocated (the driver'"'"'s stream-ordered allocations: no framework)"' \
	'"key":"cache","label":"reserved, not allocated (the stream-ordered pools'"'"' reserve)"'
  grep -o '"key":"outside_[a-z]*"' demo.html | sort -u | sed 's/"key":"outside_\([a-z]*\)"/"key":"outside_\1","label":"'"$OUT_ST"': \1"/'; } > want.txt
series demo.html | sort -u > got.txt
sort -o want.txt want.txt
cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "demo's chart series"; }
# a framework's: as before
"$ANALYZE" report --no-symbols -o fw.html "$T/fw_api.gmt" 2> fw.err || { cat fw.err; fail "report fw_api"; }
assert_eq "$(printf '%s\n' d0 'framework allocated' 'reserved, not allocated (the framework&#39;s cache)'
	owners "$OUT_FW"
	printf '%s\n' d1 'framework allocated' 'reserved, not allocated (the framework&#39;s cache)'
	owners "$OUT_FW")" "$(rows fw.html)" "fw_api's peak tables"
# one process, two devices: stream-ordered allocations on d0, plain
# cudaMalloc only on d1
"$ANALYZE" report --no-symbols -o two.html "$T/ctx_destroy.gmt" 2> two.err || { cat two.err; fail "report ctx_destroy"; }
assert_eq "$(printf '%s\n' d0 'allocated (the driver&#39;s stream-ordered allocations: no framework)' \
	'reserved, not allocated (the stream-ordered pools&#39; reserve)'
	owners "$OUT_ST"
	printf '%s\n' d1 'allocated (unknown: no framework, no stream-ordered allocations)' \
	'reserved, not allocated (unknown: no framework, no pools)'
	owners "$OUT_DRV")" "$(rows two.html)" "ctx_destroy's peak tables"
exit 0
