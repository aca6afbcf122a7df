#!/bin/sh
# The preload exports exactly the DRIVER hooks of preload/hooks.def, dlsym,
# dlvsym, NVTX's InitializeInjectionNvtx2, the public API and the C library
# functions of preload/gmt_libc.c (nothing of the tracer, zstd, msgpack-c or
# libunwind; no runtime or NCCL name: those hooks are reached through the
# callers' GOT, preload/gmt_bind.c, so that presence probes answer as
# without the preload), and the version script the build generates from
# hooks.def and preload/exports.map.in ($BUILD/gen/exports.map) lists the
# same set.
# Also run directly by `make check-exports` (without tests/run.sh).
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${BUILD:=$ROOT/build}"
. "$ROOT/tests/lib.sh"
[ -f "$PRELOAD" ] || fail "no $PRELOAD"
cd "$TESTDIR"
# The hook names, by expanding the table itself; the driver's are exported.
printf '#define GMT_HOOK(lib, name, ...) GMT_NAME lib name\n#include "hooks.def"\n' |
	${CC:-cc} -E -P -I"$ROOT/preload" - | grep -o 'GMT_NAME [A-Z]* [A-Za-z0-9_]*' > libs.txt
awk '{ print $3 }' libs.txt > all_hooks.txt
awk '$2 == "DRV" { print $3 }' libs.txt > hooks.txt
n=$(wc -l < all_hooks.txt)
[ "$n" -ge 60 ] || fail "only $n hooks expanded from hooks.def"
[ "$(wc -l < hooks.txt)" -ge 40 ] || fail "only $(wc -l < hooks.txt) driver hooks"
# The rest: the names of the version script's template.
sed -n '/global:/,/local:/p' "$ROOT/preload/exports.map.in" | grep -o '^ *[A-Za-z0-9_]*;' |
	tr -d ' ;' > rest.txt
[ "$(wc -l < rest.txt)" -ge 10 ] || fail "only $(wc -l < rest.txt) names in exports.map.in"
grep -q '^@DRIVER_HOOKS@$' "$ROOT/preload/exports.map.in" || fail "exports.map.in lacks @DRIVER_HOOKS@"
cat hooks.txt rest.txt |
	sort > expected.txt
nm -D --defined-only "$PRELOAD" | awk '{ print $3 }' | sed 's/@.*//' | sort > actual.txt
diff expected.txt actual.txt > diff.txt || { cat diff.txt >&2; fail "nm -D differs from hooks.def (< missing, > extra)"; }
# The version script says the same (it is what makes the set exact).
sed -n '/global:/,/local:/p' "$BUILD/gen/exports.map" | grep -o '^ *[A-Za-z0-9_]*;' |
	tr -d ' ;' | sort > map.txt
diff expected.txt map.txt > diff2.txt || { cat diff2.txt >&2; fail "$BUILD/gen/exports.map differs from hooks.def and exports.map.in"; }
# Nothing of the unwinder, compressor or encoder is defined for others to bind.
if grep -E '^(_Unwind_|backtrace|unw_|_U|ZSTD_|ZDICT_|msgpack_)' actual.txt; then
	fail "the preload exports library internals"
fi
# No runtime or NCCL name at all (a weak reference would bind to it).
if grep -E '^(cuda|nccl)' actual.txt; then
	fail "the preload exports runtime or NCCL names"
fi
# Every hook name is unique in the table.
[ "$(sort -u all_hooks.txt | wc -l)" = "$n" ] || fail "a hook appears twice in hooks.def"
# Coverage: every hook exists in the test double of its library, so the
# route tests can reach each one the way a program reaches the real library.
for lib in DRV:libcuda.so.1 RT:libcudart.so.13 NCCL:libnccl.so.2; do
	nm -D --defined-only "$FAKE/${lib#*:}" | awk '{ print $3 }' | sed 's/@.*//' | sort > have.txt
	awk -v l="${lib%%:*}" '$2 == l { print $3 }' libs.txt | sort | comm -23 - have.txt > missing.txt
	[ -s missing.txt ] && fail "hooks not in the ${lib#*:} double: $(tr '\n' ' ' < missing.txt)"
done
echo "ok: $(wc -l < hooks.txt) driver hooks of $n + $(($(wc -l < expected.txt) - $(wc -l < hooks.txt))) exported, nothing else"
