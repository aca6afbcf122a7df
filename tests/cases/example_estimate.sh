#!/bin/sh
# The example's `estimate`: weight bytes = parameters x bits / 8, shown in B,
# GB (10^9 B) and GiB (2^30 B), and the envelope with an assumed reserve,
# labelled as an assumption. Figures worked out by hand:
#   7e9 x 16 bits = 14000000000 B = 14.00 GB = 13.0385... GiB; + 4 GiB
#     (4294967296 B) = 18294967296 B = 18.2949... GB = 17.0385... GiB
#   70e9 x 4 bits = 35000000000 B = 35.00 GB = 32.5962... GiB; + 8 GiB
#     (8589934592 B) = 43589934592 B = 43.5899... GB = 40.5962... GiB
# Bad input exits 2 with a message on stderr and nothing on stdout.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
EX="$ROOT/scripts/examples/gmt_example.py"

python3 "$EX" estimate --parameters 7e9 --bits 16 --reserve-gib 4 > a.txt 2> a.err ||
	fail "estimate 7e9 exit status $?"
assert_contains a.txt "weights:  7000000000 parameters x 16 bits = 14000000000 B = 14.00 GB = about 13.04 GiB"
assert_contains a.txt "reserve:  4 GiB = 4294967296 B  (ASSUMPTION: a guess"
assert_contains a.txt "envelope: 14000000000 B + 4294967296 B = 18294967296 B = about 18.29 GB = about 17.04 GiB  (ASSUMPTION: weights plus the assumed reserve, not a measurement)"
assert_contains a.txt "units:    B = bytes, GB = 10^9 B, GiB = 2^30 B"
assert_eq 4 "$(wc -l < a.txt | tr -d ' ')" "lines of the estimate"
[ -s a.err ] && fail "estimate wrote to stderr: $(cat a.err)"

python3 "$EX" estimate --parameters 7000000000 --bits 16 --reserve-gib 4 --json > a.json ||
	fail "estimate --json exit status $?"
python3 - a.json <<'PY' || fail "7e9 JSON"
import json, sys
j = json.load(open(sys.argv[1]))
def eq(want, got, what):
    if want != got or type(want) is not type(got):
        sys.exit("%s: expected %r, got %r" % (what, want, got))
eq("estimate", j["command"], "command")
eq(7000000000, j["parameters"], "parameters")
eq(16, j["bits"], "bits")
eq(14000000000, j["weights"]["bytes"], "weight bytes")
eq(14.0, j["weights"]["GB"], "weight GB")
eq(13.04, round(j["weights"]["GiB"], 2), "weight GiB")
eq(4, j["reserve"]["GiB"], "reserve GiB")
eq(4294967296, j["reserve"]["bytes"], "reserve bytes")
eq(True, j["reserve"]["assumption"], "reserve is an assumption")
eq(18294967296, j["envelope"]["bytes"], "envelope bytes")
eq(17.04, round(j["envelope"]["GiB"], 2), "envelope GiB")
eq(True, j["envelope"]["assumption"], "envelope is an assumption")
eq({"GB": 10**9, "GiB": 2**30}, j["units"], "units")
PY

python3 "$EX" estimate --parameters 70e9 --bits 4 --reserve-gib 8 > b.txt || fail "70e9 exit status $?"
assert_contains b.txt "weights:  70000000000 parameters x 4 bits = 35000000000 B = 35.00 GB = about 32.60 GiB"
assert_contains b.txt "reserve:  8 GiB = 8589934592 B"
assert_contains b.txt "envelope: 35000000000 B + 8589934592 B = 43589934592 B = about 43.59 GB = about 40.60 GiB"
python3 "$EX" estimate --parameters 70e9 --bits 4 --reserve-gib 8 --json > b.json || fail "70e9 --json"
assert_eq "35000000000 8589934592 43589934592 32.6 40.6" \
	"$(json_get b.json '"%d %d %d %.1f %.1f" % (j["weights"]["bytes"], j["reserve"]["bytes"], j["envelope"]["bytes"], j["weights"]["GiB"], j["envelope"]["GiB"])')" "70e9 JSON"

# Exact units need no "about"; fractional bits and reserves are fine when the
# bytes are whole: 2^30 parameters x 4.5 bits = 603979776 B = 0.5625 GiB;
# 0.5 GiB = 536870912 B; envelope 1140850688 B = 1.0625 GiB.
python3 "$EX" estimate --parameters 1073741824 --bits 4.5 --reserve-gib 0.5 > c.txt || fail "4.5 bits"
assert_contains c.txt "weights:  1073741824 parameters x 4.5 bits = 603979776 B = about 0.60 GB = about 0.56 GiB"
assert_contains c.txt "reserve:  0.5 GiB = 536870912 B"
assert_contains c.txt "envelope: 603979776 B + 536870912 B = 1140850688 B = about 1.14 GB = about 1.06 GiB"
python3 "$EX" estimate --parameters 2e9 --bits 8 > d.txt || fail "no reserve"
assert_contains d.txt "weights:  2000000000 parameters x 8 bits = 2000000000 B = 2.00 GB = about 1.86 GiB"
grep -q "envelope" d.txt && fail "an envelope without a reserve"
assert_eq "None None" "$(python3 "$EX" estimate --parameters 2e9 --bits 8 --json |
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["reserve"], j["envelope"])')" "no reserve in JSON"

bad() { # expected message, then arguments
	msg=$1; shift
	python3 "$EX" estimate "$@" > bad.out 2> bad.err; rc=$?
	assert_eq 2 "$rc" "exit status of estimate $*"
	[ -s bad.out ] && fail "estimate $* printed to stdout: $(cat bad.out)"
	assert_contains bad.err "$msg"
}
bad "--parameters: must be a whole number above 0, got -5" --parameters -5 --bits 16
bad "--parameters: must be a whole number above 0, got 0" --parameters 0 --bits 16
bad "--parameters: must be a whole number above 0, got 7.5" --parameters 7.5 --bits 16
bad "--parameters: not a number: 'seven'" --parameters seven --bits 16
bad "--parameters: not a finite number: 'inf'" --parameters inf --bits 16
bad "--bits: must be above 0, got 0" --parameters 7e9 --bits 0
bad "--bits: must be above 0, got -4" --parameters 7e9 --bits -4
bad "--bits: not a number: '16bit'" --parameters 7e9 --bits 16bit
bad "--reserve-gib: must be 0 or more, got -1" --parameters 7e9 --bits 16 --reserve-gib -1
bad "--reserve-gib: not a number: 'lots'" --parameters 7e9 --bits 16 --reserve-gib lots
bad "--reserve-gib 0.1 is not a whole number of bytes" --parameters 7e9 --bits 16 --reserve-gib 0.1
bad "3 parameters x 3 bits is not a whole number of bytes" --parameters 3 --bits 3
bad "the following arguments are required: --bits" --parameters 7e9

for sub in "" estimate environment measure; do
	python3 "$EX" $sub --help > help.txt 2>&1 || fail "$sub --help exit status"
	assert_contains help.txt "usage: gmt_example.py"
done
python3 "$EX" > none.txt 2>&1; assert_eq 2 $? "no subcommand"
exit 0
