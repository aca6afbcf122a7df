# golden_dump: gmt-dump of every golden trace matches its .dump byte for byte.
. "$ROOT/tests/lib.sh"
DUMP="$BUILD/tests/tools/gmt-dump"
[ -x "$DUMP" ] || fail "missing $DUMP"
n=0
for g in "$ROOT"/tests/golden/*.gmt; do
	[ -f "$g" ] || continue
	exp="${g%.gmt}.dump"
	[ -f "$exp" ] || fail "missing $exp"
	"$DUMP" "$g" > "$TESTDIR/out.dump" || fail "gmt-dump $g exited $?"
	if ! cmp -s "$exp" "$TESTDIR/out.dump"; then
		diff -u "$exp" "$TESTDIR/out.dump" | head -40 >&2
		fail "$(basename "$g"): dump differs from $(basename "$exp")"
	fi
	n=$((n + 1))
done
[ $n -ge 1 ] || fail "no golden traces"
