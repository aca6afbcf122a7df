#!/bin/sh
# Runs the test suite against a build directory.
#   tests/run.sh BUILD [--unit-only] [--analyzer-only] [PATTERN]
# Unit tests are $BUILD/tests/unit_*; case scripts are tests/cases/*.sh
# (analyze_*.sh are the analyzer's, and so is any script with a line
# "# analyzer-only": it needs the analyzer and the test tools, no preload,
# no test doubles; --analyzer-only keeps just those, as `make asan` runs
# them).
# Each test is one line "ok NAME" or "FAIL NAME" (its output follows on
# failure); the last line is "N passed, N failed".
BUILD=${1:-build}; shift
unit_only=0; analyzer_only=0; pattern=""
for a in "$@"; do
	case $a in
	--unit-only) unit_only=1 ;;
	--analyzer-only) analyzer_only=1 ;;
	*) pattern=$a ;;
	esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd) || { echo "no build directory" >&2; exit 2; }
export ROOT BUILD
pass=0; fail=0; failed=""
TMPROOT=$(mktemp -d /tmp/gmt-tests.XXXXXX)
run_one() { # name, command...
	name=$1; shift
	case $name in *"$pattern"*) ;; *) return ;; esac
	out="$TMPROOT/$name.out"
	dir="$TMPROOT/$name.d"; mkdir -p "$dir"
	if (cd "$dir" && TESTDIR="$dir" timeout 600 "$@") >"$out" 2>&1; then
		pass=$((pass + 1)); echo "ok $name"
	else
		fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name"
		sed 's/^/    /' "$out" | tail -n 60
	fi
}
for t in "$BUILD"/tests/unit_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
if [ $unit_only = 0 ] || [ $analyzer_only = 1 ]; then
	for c in "$ROOT"/tests/cases/*.sh; do
		[ -f "$c" ] || continue
		n=$(basename "$c" .sh)
		if [ $analyzer_only = 1 ]; then
			case $n in analyze_*) ;; *) grep -qx '# analyzer-only' "$c" || continue ;; esac
		fi
		run_one "$n" sh "$c"
	done
fi
rm -rf "$TMPROOT"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ $fail = 0 ] && [ $pass -gt 0 ]
