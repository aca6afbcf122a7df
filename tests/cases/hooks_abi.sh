#!/bin/sh
# The driver hooks' versions (hooks.def's minver) are the ABI versions of
# cudaTypedefs.h: a cuGetProcAddress result that is no exported symbol is
# traced through the hook whose minver is the newest not newer than the
# version asked for (preload/gmt_interpose.c by_prototype), so for every
# hooked name each PFN_<name>_v<version> typedef from the oldest hooked
# version on must be one of our hooks, with the same per-thread-stream
# variant; else a look-up at that version would be traced with an older,
# wrong prototype. (Versions below the oldest hooked one are the legacy
# 32-bit entry points: never hooked, never traced by prototype.)
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
TYPEDEFS="${CUDA_HOME:-/usr/local/cuda}/include/cudaTypedefs.h"
[ -f "$TYPEDEFS" ] || fail "no $TYPEDEFS"
printf '#define GMT_HOOK(lib, name, ret, params, args, minver, body, flags, req) GMT_ROW lib name minver flags\n#include "hooks.def"\n' |
	${CC:-cc} -E -P -I"$ROOT/preload" -DGMT_FLAG_PTSZ=1 - | grep -o 'GMT_ROW DRV [A-Za-z0-9_]* [0-9]* [A-Z_0-9]*' > rows.txt
[ "$(wc -l < rows.txt)" -ge 40 ] || fail "only $(wc -l < rows.txt) driver hooks"
python3 - "$TYPEDEFS" rows.txt <<'PY'
import re, sys
pfn = {}
for m in re.finditer(r'\bPFN_(cu[A-Za-z0-9]+?)_v(\d+)(_ptsz|_ptds)?\b', open(sys.argv[1]).read()):
    pfn.setdefault(m.group(1), set()).add((int(m.group(2)), m.group(3) is not None))
hooks = {}
for line in open(sys.argv[2]):
    _, _, name, ver, flags = line.split()
    base = re.sub(r'(_v\d+)?(_ptsz|_ptds)?$', '', name)
    hooks.setdefault(base, set()).add((int(ver), 'PTSZ' in flags or flags == '1', name))
bad = []
for base, hs in sorted(hooks.items()):
    abis = pfn.get(base)
    if not abis:
        bad.append("%s: no PFN_%s_v<version> in cudaTypedefs.h" % (base, base)); continue
    have = {(v, p) for v, p, _ in hs}
    for v, p, n in hs:
        if (v, p) not in abis:
            bad.append("%s: minver %d%s is no ABI version of %s (%s)" % (n, v, " ptsz" if p else "", base,
                       sorted(abis)))
    for p in (False, True):
        mine = [v for v, q in have if q == p]
        if not mine:
            continue
        for v, q in sorted(abis):
            if q == p and v >= min(mine) and (v, q) not in have:
                bad.append("%s: ABI version %d%s has no hook" % (base, v, " ptsz" if p else ""))
if bad:
    sys.exit("\n".join(bad))
print("ok: %d hooked names" % len(hooks))
PY
