#!/bin/sh
# sites at the coinciding peak of sites_workload (tests/routes/lib/sites_main.c),
# whose holders are known by construction: site C (4 MiB, in a library
# dlopen()ed after start), site A (3 x 1 MiB), site B (2 MiB, from a function
# forced inline) make the 9 MiB peak; site D (8 MiB, freed before) allocated
# most; site E failed (1 TiB). Function names, inlined frames, file names and
# lines (from the marker comments of the sources) are asserted exactly for
# the frames from main inwards, down to the runtime's cudaMalloc.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_workload" "$BUILD/tests/libsites_lib.so" > out.txt ||
	fail "sites_workload"
T=$(the_trace)
"$ANALYZE" sites --json "$T" > s.json || fail "sites --json"
"$ANALYZE" sites "$T" > s.txt || fail "sites"
line() { grep -n "/\* $2 \*/" "$ROOT/tests/routes/lib/$1" | cut -d: -f1; }
cat > lines.txt <<EOT
A $(line sites_main.c SITE_A)
B $(line sites_main.c SITE_B)
BC $(line sites_main.c SITE_B_CALL)
C $(line sites_lib.c SITE_C)
D $(line sites_main.c SITE_D)
E $(line sites_main.c SITE_E)
MA $(line sites_main.c MAIN_A)
MB $(line sites_main.c MAIN_B)
MC $(line sites_main.c MAIN_C)
MD $(line sites_main.c MAIN_D)
ME $(line sites_main.c MAIN_E)
EOT
python3 - "$ROOT/schemas/report.schema.json" s.json lines.txt <<'PY' || fail "sites JSON"
import json, sys, jsonschema
MiB = 1 << 20
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(schema).validate(doc)
L = {k: int(v) for k, v in (l.split() for l in open(sys.argv[3]))}
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
def ours(site):
    # (function, file base name, line, inlined) from main inwards to cudaMalloc
    out = []
    for f in site["frames"]:
        eq("ok", f["status"], "frame status of %s" % f["label"])
        out.append((f["function"], (f["file"] or "").rsplit("/", 1)[-1], f["line"], f["inlined"]))
        if f["function"] == "main":
            break
    return out
rt = ("cudaMalloc", "fake_runtime.c")
def frames(site):
    o = ours(site)
    eq(rt, o[0][:2], "innermost frame (the runtime double)")
    return o[1:]
t = doc["traces"][0]
eq("clean", t["status"], "status")
eq(1, len(t["devices"]), "devices")
d = t["devices"][0]
eq(0, d["ordinal"], "ordinal")
eq(9 * MiB, d["peak_bytes"], "peak")
eq(3, d["live_sites_total"], "live sites")
live = d["live_sites"]
eq([(4 * MiB, 1, 4 / 9), (3 * MiB, 3, 3 / 9), (2 * MiB, 1, 2 / 9)],
   [(s["bytes"], s["count"], s["share"]) for s in live], "live sites: bytes, count, share")
for s in live:
    eq(("application", "application"), (s["owner"], s["stack_owner"]), "owners")
eq([("sites_lib_alloc", "sites_lib.c", L["C"], False), ("main", "sites_main.c", L["MC"], False)],
   frames(live[0]), "site C (dlopen()ed library)")
eq("libsites_lib.so", live[0]["frames"][1]["module"].rsplit("/", 1)[-1], "site C module")
eq([("site_a", "sites_main.c", L["A"], False), ("main", "sites_main.c", L["MA"], False)],
   frames(live[1]), "site A")
eq([("site_b_inner", "sites_main.c", L["B"], True), ("site_b", "sites_main.c", L["BC"], False),
    ("main", "sites_main.c", L["MB"], False)], frames(live[2]), "site B (inlined)")
eq(live[2]["frames"][1]["addr"], live[2]["frames"][2]["addr"], "inlined frames share an address")
top = d["most_allocated"]
eq([8 * MiB, 4 * MiB, 3 * MiB, 2 * MiB], [s["bytes"] for s in top], "most allocated")
eq([("site_d", "sites_main.c", L["D"], False), ("main", "sites_main.c", L["MD"], False)],
   frames(top[0]), "site D")
eq(1, t["failed_allocations_total"], "failures")
f = t["failed_allocations"][0]
eq((0, 1 << 40, "CUDA_ERROR_OUT_OF_MEMORY", "cudaMalloc"), (f["device"], f["bytes"], f["result_name"], f["api"]), "failure")
eq([("site_e", "sites_main.c", L["E"], False), ("main", "sites_main.c", L["ME"], False)], frames(f), "site E")
s = doc["symbolisation"]
assert s["enabled"] and s["addresses"] > 0 and s["seconds"] >= 0, s
PY
A=$(line sites_main.c SITE_A); B=$(line sites_main.c SITE_B); BC=$(line sites_main.c SITE_B_CALL)
assert_contains s.txt "device 0: peak 9437184 B (9.00 MiB)"
assert_contains s.txt "#2  3145728 B (3.00 MiB)  3 blocks  33.33% of the peak  owner application (stack: application)"
assert_contains s.txt "site_a at sites_main.c:$A in sites_workload"
assert_contains s.txt "site_b_inner at sites_main.c:$B (inlined) in sites_workload"
assert_contains s.txt "site_b at sites_main.c:$BC in sites_workload"
assert_contains s.txt "failed allocations: 1"
grep -Eq '^symbolisation: [0-9]+ distinct addresses, [0-9]+ files, [0-9.]+ s$' s.txt || fail "symbolisation time line"
grep -q gmt_do_cudaMalloc s.txt && fail "the preload's own frames are shown"
# --no-symbols: modules and offsets only, same sites
"$ANALYZE" sites --json --no-symbols "$T" > n.json || fail "sites --no-symbols"
python3 - n.json <<'PY' || fail "sites --no-symbols JSON"
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["traces"][0]["devices"][0]
assert [s["bytes"] for s in dev["live_sites"]] == [4 << 20, 3 << 20, 2 << 20]
fr = dev["live_sites"][0]["frames"]
assert all(f["function"] is None and f["status"] in ("off", "no_module") for f in fr), fr
assert any(f["label"].endswith("libsites_lib.so+0x%x]" % f["offset"]) for f in fr), fr
assert d["symbolisation"]["enabled"] is False
PY
# usage errors
"$ANALYZE" sites 2>/dev/null; assert_eq 2 $? "sites without a trace"
"$ANALYZE" sites --top x "$T" 2>/dev/null; assert_eq 2 $? "sites --top x"
exit 0
