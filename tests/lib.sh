# Helpers for tests/cases/*.sh (POSIX sh). Sourced with . "$ROOT/tests/lib.sh".
# ROOT, BUILD and TESTDIR (a fresh empty working directory) are set by run.sh.
set -u
: "${ROOT:?run through tests/run.sh}" "${BUILD:?}" "${TESTDIR:=$(mktemp -d)}"
FAKE="$BUILD/fakecuda"
PRELOAD="$BUILD/libgpumemtrace.so"
ANALYZE="$BUILD/gpumemtrace-analyze"
fail() { echo "FAIL: $*" >&2; exit 1; }
# assert_eq EXPECTED ACTUAL [what]
assert_eq() { [ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"; }
# assert_contains FILE TEXT
assert_contains() { grep -qF -- "$2" "$1" || { sed 's/^/      /' "$1" >&2; fail "$1 lacks '$2'"; }; }
# run_fake CMD...: runs CMD on the test doubles without the preload.
run_fake() { LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
# run_traced CMD...: runs CMD on the test doubles with the preload; traces go
# to $TESTDIR/traces (created).
run_traced() {
	mkdir -p "$TESTDIR/traces"
	LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	GPUMEMTRACE_OUTPUT="$TESTDIR/traces" LD_PRELOAD="$PRELOAD" "$@"
}
# the_trace: path of the only trace in $TESTDIR/traces (fails otherwise)
the_trace() {
	set -- "$TESTDIR"/traces/*.gmt
	[ $# = 1 ] && [ -f "$1" ] || fail "expected exactly one trace, found: $*"
	echo "$1"
}
# json_get FILE EXPR: prints a value from a JSON file (python3 expression on j)
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
