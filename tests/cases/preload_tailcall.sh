#!/bin/sh
# Our dlsym and dlvsym pass RTLD_NEXT / RTLD_DEFAULT look-ups on as a tail
# call (glibc resolves those relative to the caller's return address): the
# path must end in an indirect jmp through glibc's function, never a call.
# route_rtld_next checks the behaviour; this checks the code.
. "$ROOT/tests/lib.sh"
command -v objdump >/dev/null || { echo "skip: no objdump"; exit 0; }
for f in dlsym dlvsym; do
	objdump -d --no-show-raw-insn "$PRELOAD" | awk -v f="<$f>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' > "$TESTDIR/$f.s"
	[ -s "$TESTDIR/$f.s" ] || fail "$f not found in the disassembly"
	grep -Eq 'jmp +\*%r[a-z0-9]+$' "$TESTDIR/$f.s" || { cat "$TESTDIR/$f.s" >&2; fail "$f: no tail jmp"; }
	# The pass-through compares the handle with RTLD_NEXT (-1) and RTLD_DEFAULT (0)
	# before anything else: at most a few instructions before the first branch.
	first_branch=$(grep -nE '^ *[0-9a-f]+:\s+j' "$TESTDIR/$f.s" | head -1 | cut -d: -f1)
	[ -n "$first_branch" ] && [ "$first_branch" -le 10 ] || { cat "$TESTDIR/$f.s" >&2; fail "$f: the handle test is not first"; }
done
echo "ok: dlsym and dlvsym tail-call glibc for RTLD_NEXT/RTLD_DEFAULT"
