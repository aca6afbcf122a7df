#!/bin/sh
# Every path to a Markdown file that the repository's Markdown names (a
# link target, or a `path/with/slashes.md` in backquotes) exists, relative
# to the naming file or to the repository root. (The doubles' README used
# to point at a notes file outside the repository.)
. "$ROOT/tests/lib.sh"
cd "$ROOT"
git ls-files '*.md' > "$TESTDIR/files.txt" 2> /dev/null || find . -name '*.md' -not -path './build*' | sed 's|^\./||' > "$TESTDIR/files.txt"
[ -s "$TESTDIR/files.txt" ] || fail "no Markdown files found"
: > "$TESTDIR/bad.txt"
while read -r f; do
	d=$(dirname "$f")
	grep -o '`[^` ]*/[^` ]*\.md`\|](\([^)#]*\.md\)' "$f" | sed 's/^`//; s/`$//; s/^](//; s/)$//' | sort -u |
	while read -r p; do
		case $p in http://* | https://*) continue ;; esac
		[ -e "$d/$p" ] || [ -e "$p" ] || echo "$f: $p" >> "$TESTDIR/bad.txt"
	done
done < "$TESTDIR/files.txt"
[ -s "$TESTDIR/bad.txt" ] && { cat "$TESTDIR/bad.txt" >&2; fail "Markdown names files that do not exist"; }
exit 0
