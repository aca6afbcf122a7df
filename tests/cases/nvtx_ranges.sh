#!/bin/sh
# NVTX through the toolkit's real NVTX3 headers (tests/routes/phase_nvtx.c and
# the second NVTX instance libphase_nvtx.so it dlopen()s) reaches the preload
# as an injection library when NVTX_INJECTION64_PATH names it: push/pop with
# the levels NVTX returns (per domain and thread, shared by both instances),
# start/end with process-wide ids (ended on another thread, or by the other
# instance), marks; ASCII, wide (UTF-8 in the trace), Ex and registered
# messages; the default domain and "gpumemtrace" recorded, other domains not
# (nvtx_domains.sh selects them). Without the injection NVTX is a no-op and
# the program runs the same; LD_PRELOAD alone does not reach NVTX (no trace:
# nothing else is traced in this program).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog="$BUILD/tests/phase_nvtx"
lib="$BUILD/tests/libphase_nvtx.so"
[ -f "$lib" ] || fail "no $lib (make all builds it)"
cat > expected-plain.txt <<'EOT'
push outer = -2
push wide = -2
gpumemtrace push registered = -2
gpumemtrace pop = -2
pop = -2
custom push c1 = -2
custom start cse = 0
lib push lib = -2
lib push custom lib_c = -2
lib start lib_se = 0
lib pop custom = -2
lib pop = -2
custom pop = -2
start async = 0
t1 push t1 = -2
t1 start wstart = 0
t1 pop = -2
push ex_w = -2
pop = -2
start ex_se = 0
pop outer = -2
pop nothing = -2
gpumemtrace pop nothing = -2
EOT
run_fake "$prog" "$lib" > plain.out 2>&1 || { cat plain.out >&2; fail "without the preload"; }
diff expected-plain.txt plain.out >&2 || fail "output without the preload (< expected, > actual)"
run_traced "$prog" "$lib" > preload-only.out 2>&1 || { cat preload-only.out >&2; fail "LD_PRELOAD alone"; }
diff expected-plain.txt preload-only.out >&2 || fail "output with LD_PRELOAD alone (< expected, > actual)"
[ -z "$(ls traces)" ] || fail "LD_PRELOAD alone left a trace: $(ls traces)"

NVTX_INJECTION64_PATH="$PRELOAD" run_traced "$prog" "$lib" > traced.out 2>&1 ||
	{ cat traced.out >&2; fail "with the injection"; }
cat > expected-traced.txt <<'EOT'
push outer = 0
push wide = 1
gpumemtrace push registered = 0
gpumemtrace pop = 0
pop = 1
custom push c1 = 0
custom start cse = 1
lib push lib = 1
lib push custom lib_c = 1
lib start lib_se = 2
lib pop custom = 1
lib pop = 1
custom pop = 0
start async = 3
t1 push t1 = 0
t1 start wstart = 4
t1 pop = 0
push ex_w = 1
pop = 1
start ex_se = 5
pop outer = 0
pop nothing = -1
gpumemtrace pop nothing = -1
EOT
diff expected-traced.txt traced.out >&2 || fail "output with the injection (< expected, > actual)"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "gmt-dump"
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
awk -f "$ROOT/tests/routes/phase_ranges.awk" dump.txt > ranges.txt
cat > expected.txt <<'EOT'
range_begin t0 depth=0 src=2 id=0 name=outer domain=-
range_begin t0 depth=1 src=2 id=0 name=wide é中 domain=-
range_begin t0 depth=2 src=2 id=0 name=registered domain=gpumemtrace
mark t0 depth=3 src=2 id=0 name=gmark domain=gpumemtrace
range_end t0 depth=2 src=2 id=0 name=- domain=gpumemtrace
range_end t0 depth=1 src=2 id=0 name=- domain=-
range_begin t0 depth=1 src=2 id=0 name=lib domain=-
mark t0 depth=2 src=2 id=0 name=lib_mark domain=-
range_begin t0 depth=0 src=3 id=2 name=lib_se domain=-
range_end t0 depth=1 src=2 id=0 name=- domain=-
range_begin t0 depth=0 src=3 id=3 name=async domain=-
range_end t1 depth=0 src=3 id=3 name=- domain=-
range_begin t1 depth=0 src=2 id=0 name=t1 domain=-
range_begin t1 depth=0 src=3 id=4 name=wstart domain=-
range_end t1 depth=0 src=2 id=0 name=- domain=-
range_end t0 depth=0 src=3 id=4 name=- domain=-
range_end t0 depth=0 src=3 id=2 name=- domain=-
mark t0 depth=1 src=2 id=0 name=m_a domain=-
mark t0 depth=1 src=2 id=0 name=m_w domain=-
mark t0 depth=1 src=2 id=0 name=m_ex domain=-
range_begin t0 depth=1 src=2 id=0 name=ex_w domain=-
range_end t0 depth=1 src=2 id=0 name=- domain=-
range_begin t0 depth=0 src=3 id=5 name=ex_se domain=-
range_end t0 depth=0 src=3 id=5 name=- domain=-
range_end t0 depth=0 src=2 id=0 name=- domain=-
EOT
diff expected.txt ranges.txt >&2 || fail "range events (< expected, > actual)"
assert_eq 25 "$(grep -c '^EV' dump.txt)" "events in the trace"
assert_eq 0 "$(grep -c '^STACK' dump.txt)" "STACK records"
# Domains that are not recorded leave no string behind.
grep -E '^STRING id=[0-9]+ text=(custom|other|c1|cmark|cse|omark|lib_c)$' dump.txt &&
	fail "strings of a domain that is not recorded"
exit 0
