#!/bin/sh
# sites --phase and grouping by symbolised stack, on sites_phase_workload
# (tests/routes/lib/sites_phase.c), whose holders are known by construction:
# phase "step" #1 peaks at 10 MiB (site S, called twice on one line: two
# stacks, one site of 8 MiB; site K, 2 MiB), #2 at 6 MiB (V 3, K 2, U 1);
# the whole run at 18 MiB (W 16, K 2), between the two. Lines from the marker
# comments of the source.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
W="$BUILD/tests/sites_phase_workload"
run_fake "$W" > plain.txt || fail "untraced run"
assert_contains plain.txt "sites_phase_workload done (phases off)"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$W" > out.txt || fail "traced run"
assert_contains out.txt "sites_phase_workload done (phases on)"
T=$(the_trace)
"$ANALYZE" sites --json --phase step "$T" > s.json || fail "sites --phase --json"
"$ANALYZE" sites --json --no-symbols --phase step "$T" > n.json || fail "sites --phase --no-symbols"
"$ANALYZE" sites --json --phase nosuch "$T" > x.json 2> x.err
assert_eq 2 $? "sites --phase nosuch: exit status"
line() { grep -n "/\* $1 \*/" "$ROOT/tests/routes/lib/sites_phase.c" | cut -d: -f1; }
for m in SITE_ALLOC SITE_S MAIN_K MAIN_SS MAIN_W MAIN_U MAIN_V MAIN_O; do echo "$m $(line $m)"; done > lines.txt
python3 - "$ROOT/schemas/report.schema.json" s.json n.json x.json lines.txt <<'PY' || fail "sites --phase JSON"
import json, sys, jsonschema
MiB = 1 << 20
schema = json.load(open(sys.argv[1]))
docs = [json.load(open(p)) for p in sys.argv[2:5]]
for d in docs:
    jsonschema.Draft202012Validator(schema).validate(d)
doc, nos, none = docs
L = {k: int(v) for k, v in (l.split() for l in open(sys.argv[5]))}
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
def frames(site):
    # (function, line) from the runtime's cudaMalloc out to main
    out = []
    for f in site["frames"]:
        eq("ok", f["status"], "frame status of %s" % f["label"])
        out.append((f["function"], f["line"]))
        if f["function"] == "main":
            break
    eq("cudaMalloc", out[0][0], "innermost frame")
    return out[1:]
A = ("site_alloc", L["SITE_ALLOC"])
def main_at(m):
    return [A, ("main", L[m])]
S = [A, ("site_s", L["SITE_S"]), ("main", L["MAIN_SS"])]
def sites(dev):
    return [(s["bytes"], s["count"], s["share"], len(s["stack_ids"])) for s in dev["live_sites"]]
t = doc["traces"][0]
eq("clean", t["status"], "status")
d = t["devices"][0]
eq(18 * MiB, d["peak_bytes"], "whole-run peak")
eq([(16 * MiB, 1, 16 / 18, 1), (2 * MiB, 1, 2 / 18, 1)], sites(d), "whole-run sites")
eq([main_at("MAIN_W"), main_at("MAIN_K")], [frames(s) for s in d["live_sites"]], "whole-run frames")
top = d["most_allocated"]
eq([(16 * MiB, 1), (8 * MiB, 2), (3 * MiB, 1), (2 * MiB, 1), (1 * MiB, 1), (1 * MiB, 1)],
   [(s["bytes"], s["count"]) for s in top], "most allocated (S grouped)")
eq(S, frames(top[1]), "most allocated: site S")
eq(2, len(top[1]["stack_ids"]), "site S: two stacks")
eq(sorted(top[1]["stack_ids"]), top[1]["stack_ids"], "stack ids ascending")
eq(top[1]["stack_ids"][0], top[1]["stack_id"], "stack_id is the first merged")
eq(sorted([frames(s)[-1][1] for s in top[4:]]), sorted([L["MAIN_U"], L["MAIN_O"]]), "U and O apart")
p = t["phase"]
eq(("step", 2), (p["name"], p["occurrences_total"]), "phase")
o1, o2 = p["occurrences"]
eq((1, True, 2, True), (o1["occurrence"], o1["ended"], o2["occurrence"], o2["ended"]), "occurrences")
assert o1["end_ts_ns"] < d["peak_ts_ns"] < o2["begin_ts_ns"], "the whole-run peak lies between them"
for o, peak, want, fr in ((o1, 10, [(8 * MiB, 2, 0.8, 2), (2 * MiB, 1, 0.2, 1)], [S, main_at("MAIN_K")]),
                          (o2, 6, [(3 * MiB, 1, 0.5, 1), (2 * MiB, 1, 2 / 6, 1), (1 * MiB, 1, 1 / 6, 1)],
                           [main_at("MAIN_V"), main_at("MAIN_K"), main_at("MAIN_U")])):
    eq(1, len(o["devices"]), "devices of occurrence %d" % o["occurrence"])
    od = o["devices"][0]
    eq((0, peak * MiB, len(want)), (od["ordinal"], od["peak_bytes"], od["live_sites_total"]),
       "occurrence %d: ordinal, peak, sites" % o["occurrence"])
    assert o["begin_ts_ns"] <= od["peak_ts_ns"] <= o["end_ts_ns"], o
    eq(want, sites(od), "occurrence %d sites" % o["occurrence"])
    eq(fr, [frames(s) for s in od["live_sites"]], "occurrence %d frames" % o["occurrence"])
eq(o1["devices"][0]["live_sites"][0]["stack_ids"], top[1]["stack_ids"], "the same two stacks")
# --no-symbols groups by module and offset: the two calls on one line return
# to different offsets of main, so S stays two sites
n1 = nos["traces"][0]["phase"]["occurrences"][0]["devices"][0]
eq([(4 * MiB, 1, 0.4, 1), (4 * MiB, 1, 0.4, 1), (2 * MiB, 1, 0.2, 1)], sites(n1), "--no-symbols occurrence 1")
eq(sorted(s["stack_id"] for s in n1["live_sites"][:2]), top[1]["stack_ids"], "--no-symbols: the two stacks")
eq({"name": "nosuch", "occurrences_total": 0, "occurrences": []}, none["traces"][0]["phase"], "unknown phase")
PY
"$ANALYZE" sites --phase step "$T" > s.txt || fail "sites --phase"
assert_contains s.txt "phase step: 2 occurrences"
assert_contains s.txt "device 0: peak in the occurrence 10485760 B (10.00 MiB) at ts"
assert_contains s.txt "#1  8388608 B (8.00 MiB)  2 blocks  80.00% of the peak  owner application (stack: application)  stacks "
assert_contains s.txt "site_s at sites_phase.c:$(line SITE_S) in sites_phase_workload"
# flame graph per occurrence: frames from main inwards (function names
# only: U, V and K, all called from main, make one line of 6 MiB)
"$ANALYZE" flamegraph --phase step "$T" > f.txt 2>/dev/null || fail "flamegraph --phase"
sed 's/;device 0;.*;main;/;device 0;...;main;/' f.txt > f2.txt
cat > f.want <<'EOT'
step #1;device 0;...;main;site_alloc;cudaMalloc 2097152
step #1;device 0;...;main;site_s;site_alloc;cudaMalloc 8388608
step #2;device 0;...;main;site_alloc;cudaMalloc 6291456
EOT
cmp f.want f2.txt || { diff f.want f2.txt >&2; fail "flamegraph --phase lines"; }
"$ANALYZE" sites --phase 2>/dev/null; assert_eq 2 $? "--phase without a name"
# The whole run's peak (18 MiB, site W) is between the phases: in none;
# every failure-free peak names its time. A peak inside a phase:
# phases_workload's 198 MiB in "step" #1 (tests/frozen/expected).
assert_eq True "$(json_get s.json 'j["traces"][0]["phases_looked_up"]')" "phases looked up"
assert_eq "18874368 None" "$(json_get s.json 'str(j["traces"][0]["devices"][0]["peak_bytes"]) + " " + str(j["traces"][0]["devices"][0]["peak_phase"])')" "the peak between the phases"
"$ANALYZE" sites "$T" > w.txt || fail "sites"
assert_contains w.txt "  in no phase occurrence"
exit 0
