#!/bin/sh
# Every file name is unique in the tree for what is compiled or included:
# C/C++ sources and headers, assembly, .def tables, make fragments (the
# build searches several -I folders, so two gmt_phases.h would be a silent
# choice). Python's fixed names (__init__.py, sitecustomize.py) are not of
# this kind. The product's C files are named by role with the gmt_ prefix
# (but main.c, the public gpumemtrace.h and hooks.def).
. "$ROOT/tests/lib.sh"
cd "$ROOT"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard > "$TESTDIR/files.txt"
else
	find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune -o -type f -print |
		sed 's|^\./||' > "$TESTDIR/files.txt"
fi
[ -s "$TESTDIR/files.txt" ] || fail "no files listed"
grep -E '\.(c|h|cc|cpp|S|def|inc|mk)$' "$TESTDIR/files.txt" | grep -v '^build' > "$TESTDIR/code.txt"
[ "$(wc -l < "$TESTDIR/code.txt")" -gt 100 ] || fail "fewer than 100 source files found"
sed 's|.*/||' "$TESTDIR/code.txt" | sort | uniq -d > "$TESTDIR/dups.txt"
if [ -s "$TESTDIR/dups.txt" ]; then
	while read -r n; do grep -E "(^|/)$n\$" "$TESTDIR/code.txt" >&2; done < "$TESTDIR/dups.txt"
	fail "file names used twice: $(tr '\n' ' ' < "$TESTDIR/dups.txt")"
fi
grep -E '^(preload|tracer|reader|writers|analyzer|web|export|answers)/.*\.(c|h|S|def)$' "$TESTDIR/code.txt" |
	grep -v '/gmt_' | grep -vxE 'analyzer/main\.c|preload/gpumemtrace\.h|preload/hooks\.def' > "$TESTDIR/unprefixed.txt"
[ -s "$TESTDIR/unprefixed.txt" ] && { cat "$TESTDIR/unprefixed.txt" >&2; fail "product files without the gmt_ prefix"; }
echo ok
