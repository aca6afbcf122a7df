#!/bin/sh
# Which NVTX domains are recorded (tests/routes/phase_nvtx.c; its default
# run is nvtx_ranges.sh): GPUMEMTRACE_PHASE_DOMAINS=x,custom adds the domain
# "custom" (created with a wide name, and used by both NVTX instances: one
# domain, levels shared), "*" adds every domain ("other" too); the default
# domain and "gpumemtrace" are always there. GPUMEMTRACE_NVTX=0 declines the
# injection (NVTX then is a no-op: no trace). NVTX_INJECTION64_PATH without
# LD_PRELOAD (NVTX dlopen()s the preload) records the same ranges.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog="$BUILD/tests/phase_nvtx"
lib="$BUILD/tests/libphase_nvtx.so"
[ -f "$lib" ] || fail "no $lib (make all builds it)"
# ranges NAME [VAR=VALUE...]: runs preloaded, with the injection and the
# settings given (LD_PRELOAD= drops the preload), writes NAME.txt (range
# events), NAME.dump and NAME.out (stdout).
ranges() {
	n=$1; shift
	rm -rf traces && mkdir traces
	env LD_LIBRARY_PATH="$FAKE" GPUMEMTRACE_OUTPUT="$TESTDIR/traces" LD_PRELOAD="$PRELOAD" \
		NVTX_INJECTION64_PATH="$PRELOAD" "$@" "$prog" "$lib" > "$n.out" 2>&1 ||
		{ cat "$n.out" >&2; fail "run $n"; }
	"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > "$n.dump" || fail "gmt-dump $n"
	assert_eq "STATUS ok clean" "$(tail -n 1 "$n.dump")" "trace status of $n"
	awk -f "$ROOT/tests/routes/phase_ranges.awk" "$n.dump" > "$n.txt"
}
ranges custom GPUMEMTRACE_PHASE_DOMAINS=x,custom
cat > expected-custom.txt <<'EOT'
range_begin t0 depth=0 src=2 id=0 name=outer domain=-
range_begin t0 depth=1 src=2 id=0 name=wide é中 domain=-
range_begin t0 depth=2 src=2 id=0 name=registered domain=gpumemtrace
mark t0 depth=3 src=2 id=0 name=gmark domain=gpumemtrace
range_end t0 depth=2 src=2 id=0 name=- domain=gpumemtrace
range_end t0 depth=1 src=2 id=0 name=- domain=-
range_begin t0 depth=1 src=2 id=0 name=c1 domain=custom
mark t0 depth=2 src=2 id=0 name=cmark domain=custom
range_begin t0 depth=0 src=3 id=1 name=cse domain=custom
range_end t0 depth=0 src=3 id=1 name=- domain=custom
range_begin t0 depth=2 src=2 id=0 name=lib domain=-
range_begin t0 depth=3 src=2 id=0 name=lib_c domain=custom
mark t0 depth=4 src=2 id=0 name=lib_mark domain=-
range_begin t0 depth=0 src=3 id=2 name=lib_se domain=-
range_end t0 depth=3 src=2 id=0 name=- domain=custom
range_end t0 depth=2 src=2 id=0 name=- domain=-
range_end t0 depth=1 src=2 id=0 name=- domain=custom
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
diff expected-custom.txt custom.txt >&2 || fail "GPUMEMTRACE_PHASE_DOMAINS=x,custom (< expected, > actual)"
assert_eq 1 "$(grep -c '^STRING id=[0-9]* text=custom$' custom.dump)" "STRING records of 'custom'"

ranges all GPUMEMTRACE_PHASE_DOMAINS='*'
sed '/^range_end t0 depth=0 src=3 id=1 /a\
mark t0 depth=2 src=2 id=0 name=omark domain=other' expected-custom.txt > expected-all.txt
diff expected-all.txt all.txt >&2 || fail "GPUMEMTRACE_PHASE_DOMAINS='*' (< expected, > actual)"
# The program sees the same levels and ids whatever is recorded.
diff custom.out all.out >&2 || fail "stdout differs between selections"

# The default selection, preloaded or only injected, records the same.
ranges default
ranges injected LD_PRELOAD=
diff default.txt injected.txt >&2 || fail "NVTX_INJECTION64_PATH alone (< preloaded, > injected)"
assert_eq 25 "$(wc -l < default.txt)" "range events by default"
grep -q 'domain=custom\|domain=other' default.txt && fail "a domain recorded that was not selected"

# Declined: NVTX turns every call into a no-op, nothing reaches the trace.
rm -rf traces
NVTX_INJECTION64_PATH="$PRELOAD" GPUMEMTRACE_NVTX=0 run_traced "$prog" "$lib" > declined.out 2>&1 ||
	{ cat declined.out >&2; fail "GPUMEMTRACE_NVTX=0"; }
assert_eq "-2" "$(sed -n 's/^push outer = //p' declined.out)" "push level when declined"
[ -z "$(ls traces)" ] || fail "GPUMEMTRACE_NVTX=0 left a trace"
exit 0
