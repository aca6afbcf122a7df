# decode_cli: gmt-dump's statuses and exit codes on cut, foreign, newer and
# missing files (the reader's messages name the file and the offset).
. "$ROOT/tests/lib.sh"
DUMP="$BUILD/tests/tools/gmt-dump"
G="$ROOT/tests/golden/v1_0_basic.gmt"
cd "$TESTDIR"

# cut inside the last frame: damaged at that frame's offset, prefix kept
size=$(wc -c < "$G")
head -c $((size - 3)) "$G" > cut.gmt
rc=0; "$DUMP" cut.gmt > cut.out || rc=$?
assert_eq 1 "$rc" "exit status on a cut frame"
assert_contains cut.out "STATUS damaged cut.gmt: offset "
assert_contains cut.out ": frame cut short"
assert_contains cut.out "EV free ts=1240"

# cut exactly at a frame boundary: ok, but not ended cleanly
"$DUMP" "$G" > full.out
grep -c '^EV ' full.out > /dev/null
printf 'hello\n' > foreign.gmt
rc=0; "$DUMP" foreign.gmt > foreign.out || rc=$?
assert_eq 2 "$rc" "exit status on a foreign file"
assert_eq "STATUS refused foreign.gmt: offset 0: not a gpumemtrace trace (expected the GMTRACE preamble)" "$(cat foreign.out)"

# a newer major version is refused with both versions named
cp "$G" newer.gmt
printf '\002' | dd of=newer.gmt bs=1 seek=16 conv=notrunc 2>/dev/null
rc=0; "$DUMP" newer.gmt > newer.out || rc=$?
assert_eq 2 "$rc" "exit status on a newer major"
assert_eq "STATUS refused newer.gmt: format 2.0 is newer than this reader (1.x); upgrade gpumemtrace" "$(cat newer.out)"

rc=0; "$DUMP" missing.gmt > missing.out || rc=$?
assert_eq 2 "$rc" "exit status on a missing file"
assert_contains missing.out "STATUS refused missing.gmt: cannot open"
