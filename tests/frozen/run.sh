#!/bin/sh
# run.sh - the analyzer's frozen outputs: every line of commands.txt run on
# its traces, compared byte for byte with expected/NAME.txt.
#   sh tests/frozen/run.sh BUILD check DIR   compare; scratch files go to DIR
#   sh tests/frozen/run.sh BUILD update      rewrite expected/ (then read the
#                                            diff before committing it)
# expected/NAME.txt holds, per command line of that trace, a section
#   === ARGUMENTS
#   stdout
#   --- stderr            (only when not empty)
#   --- FILE              (a file the command wrote with -o, when any)
#   --- exit N
# What depends on the machine running the analyzer (the seconds that
# symbolisation and --stats take, peak RSS, events per second, and how many
# of the traces' module files exist there: symbolisation opens them to learn
# their layout even with --no-symbols) is masked;
# everything else is fixed by the committed traces. The traces are linked
# into one scratch directory under their base names, so a report names a
# trace as NAME.gmt wherever the repository is. JSON outputs are also
# validated against schemas/report.schema.json, and every path the schema
# describes must be in some output (or in schema_uncovered.txt).
set -eu
BUILD=$1
MODE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
ANALYZE="$BUILD/gpumemtrace-analyze"
[ -x "$ANALYZE" ] || { echo "run.sh: no $ANALYZE" >&2; exit 2; }
if [ "$MODE" = update ]; then
	SCRATCH=$(mktemp -d /tmp/gmt-frozen.XXXXXX)
	OUTDIR="$HERE/expected"
	rm -f "$OUTDIR"/*.txt
else
	SCRATCH=$3
	OUTDIR="$SCRATCH/got"
fi
mkdir -p "$SCRATCH/t" "$SCRATCH/json" "$OUTDIR"
# Every trace once, as SET/NAME in sets.txt.
: > "$SCRATCH/sets.txt"
for pair in "golden:$ROOT/tests/golden/*.gmt" "frozen:$HERE/traces/*.gmt" "corpus:$ROOT/tests/fuzz/corpus/*"; do
	set=${pair%%:*}
	for f in ${pair#*:}; do
		[ -f "$f" ] || continue
		case $f in *.bin) continue ;; esac
		n=$(basename "$f")
		ln -sf "$f" "$SCRATCH/t/$n"
		echo "$set/$n" >> "$SCRATCH/sets.txt"
	done
done
# No pathname expansion from here on: patterns and arguments are literal.
set -f
mask() {
	sed -e 's/"tool":"gpumemtrace-analyze","tool_version":"[^"]*"/"tool":"gpumemtrace-analyze","tool_version":"V"/' \
	    -e 's/^\(symbolisation: [0-9]* distinct addresses\), [0-9]* files, [0-9.]* s/\1, F files, S s/' \
	    -e 's/^\(gpumemtrace-analyze: symbolisation: [0-9]* distinct addresses\), [0-9]* files, [0-9.]* s/\1, F files, S s/' \
	    -e 's/"files":[0-9]*,"seconds":[0-9.e+-]*/"files":F,"seconds":S/g' \
	    -e 's/ seconds=[0-9.]* events_per_s=[0-9]* peak_rss_bytes=[0-9]*$/ seconds=S events_per_s=R peak_rss_bytes=M/' "$1"
}
nj=0
# run_line OUT TRACE ARGS: one section of OUT (TRACE empty: no trace).
run_line() {
	out=$1; tr=$2; args=$3
	# shellcheck disable=SC2086
	set -- $args
	if [ -n "$tr" ]; then
		has=0
		for a in "$@"; do [ "$a" = "{}" ] && has=1; done
		[ $has = 1 ] || set -- "$@" "{}"
		n=$#; i=0
		while [ $i -lt $n ]; do
			a=$1; shift
			[ "$a" = "{}" ] && a=$tr
			set -- "$@" "$a"
			i=$((i + 1))
		done
	fi
	rm -f "$SCRATCH/t/out.txt"
	rc=0
	(cd "$SCRATCH/t" && "$ANALYZE" "$@") > "$SCRATCH/stdout" 2> "$SCRATCH/stderr" || rc=$?
	{
		echo "=== $args"
		mask "$SCRATCH/stdout"
		if [ -s "$SCRATCH/stderr" ]; then echo "--- stderr"; mask "$SCRATCH/stderr"; fi
		if [ -f "$SCRATCH/t/out.txt" ]; then echo "--- out.txt"; mask "$SCRATCH/t/out.txt"; fi
		echo "--- exit $rc"
	} >> "$out"
	case " $args " in
	*" --json "*)
		if [ $rc -lt 2 ] && [ -s "$SCRATCH/stdout" ]; then
			nj=$((nj + 1)); cp "$SCRATCH/stdout" "$SCRATCH/json/$nj.json"
			echo "$out: $args" > "$SCRATCH/json/$nj.what"
		fi ;;
	esac
}
grep -v '^#' "$HERE/commands.txt" | grep -v '^[[:space:]]*$' > "$SCRATCH/lines.txt"
# Traces without a command line, then every trace's sections in file order.
while IFS='|' read -r globs args; do
	globs=$(echo "$globs" | sed -e "s/^ *//" -e "s/ *$//")
	args=$(echo "$args" | sed -e 's/^ *//' -e 's/ *$//')
	if [ "$globs" = "-" ]; then
		run_line "$OUTDIR/usage.txt" "" "$args"
		continue
	fi
	while read -r st; do
		hit=0
		oldifs=$IFS; IFS=,
		for g in $globs; do
			# shellcheck disable=SC2254
			case $st in $g) hit=1 ;; esac
		done
		IFS=$oldifs
		[ $hit = 1 ] || continue
		n=${st#*/}
		run_line "$OUTDIR/${n%.*}.txt" "$n" "$args"
	done < "$SCRATCH/sets.txt"
done < "$SCRATCH/lines.txt"
# JSON: every document parses and follows the schema.
python3 - "$ROOT/schemas/report.schema.json" "$SCRATCH/json" <<'PY'
import json, os, sys, jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator(schema)
d = sys.argv[2]; bad = 0
for f in sorted(x for x in os.listdir(d) if x.endswith(".json")):
    what = open(os.path.join(d, f[:-5] + ".what")).read().strip()
    try:
        v.validate(json.load(open(os.path.join(d, f))))
    except Exception as e:
        bad += 1
        print("JSON of %s: %s" % (what, str(e).splitlines()[0]), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# Every path the schema describes is printed by some frozen output (or
# listed in schema_uncovered.txt, which only shrinks): schema_paths.py.
"$BUILD/tests/unit_report" --dump "$SCRATCH/unit_report.json" > /dev/null
set +f
python3 "$HERE/schema_paths.py" "$ROOT/schemas/report.schema.json" "$HERE/schema_uncovered.txt" "$MODE" \
	"$SCRATCH"/json/*.json "$HERE"/live/*.json "$SCRATCH/unit_report.json" > "$SCRATCH/paths.txt" || paths_bad=1
if [ "$MODE" = update ]; then
	rm -rf "$SCRATCH"
	echo "run.sh: rewrote $(ls "$OUTDIR" | wc -l) files in $OUTDIR"
	exit 0
fi
bad=${paths_bad:-0}
for f in "$HERE"/expected/*.txt; do
	n=$(basename "$f")
	[ -f "$OUTDIR/$n" ] || { echo "frozen: $n: no output now (a trace or its lines removed?)" >&2; bad=1; continue; }
done
for f in "$OUTDIR"/*.txt; do
	n=$(basename "$f")
	if [ ! -f "$HERE/expected/$n" ]; then
		echo "frozen: $n: not in tests/frozen/expected/ (run: sh tests/frozen/run.sh BUILD update)" >&2; bad=1
	elif ! cmp -s "$HERE/expected/$n" "$f"; then
		echo "frozen: $n differs from tests/frozen/expected/$n:" >&2
		diff -u "$HERE/expected/$n" "$f" | head -30 >&2
		bad=1
	fi
done
exit $bad
