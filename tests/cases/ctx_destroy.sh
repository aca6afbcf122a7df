#!/bin/sh
# A destroyed context takes its allocations with it (tests/routes/ctx_destroy.c,
# values known by construction, see its header): cuDevicePrimaryCtxReset,
# cuCtxDestroy, the primary context's last release, and cudaDeviceReset
# through the runtime's cuGetProcAddress table. The program prints the same
# with and without the preload; the trace says which context went (CTX_DESTROY
# aux: 3 reset, 1 last release, 0 created); each thread's current context
# (CTX_CURRENT) tells which context a block was made under, and a
# destruction releases exactly those blocks, also beside another context of
# the same device; VMM handles stay; the held view drops the stream-ordered
# free still waiting for its stream.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
MiB=1048576
export GMT_FAKE_DEVICES=2
run_fake "$BUILD/tests/ctx_destroy" > plain.txt || { cat plain.txt >&2; fail "without the preload"; }
run_traced "$BUILD/tests/ctx_destroy" > traced.txt || { cat traced.txt >&2; fail "with the preload"; }
cmp plain.txt traced.txt || fail "the program's output changed under the tracer"
T=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$T" > dump.txt || fail "gmt-dump"
assert_eq "device=0 addr=0x0 aux=3
device=1 aux=0
device=0 aux=0
device=0 addr=0x0 aux=1
device=0 aux=0" "$(awk '$2 == "ctx_destroy" { a = $6 == "addr=0x0" ? " addr=0x0" : ""; print $5 a, $NF }' dump.txt)" \
	"CTX_DESTROY events"
# The instants of the reset, of C3's destruction (the 3rd) and of the
# primary context's last release (the 4th).
t_reset=$(awk '$2 == "ctx_destroy" { print substr($3, 4); exit }' dump.txt)
# The program's own cuMemGetInfo right before the reset (MEMINFO aux=1; the
# samples the preload takes after the reset come before its record).
t_pre=$(awk '$2 == "ctx_destroy" { exit } $2 == "meminfo" && $NF == "aux=1" { t = substr($3, 4) } END { print t }' dump.txt)
t_c3=$(awk '$2 == "ctx_destroy" && ++n == 3 { print substr($3, 4) }' dump.txt)
t_last=$(awk '$2 == "ctx_destroy" && ++n == 4 { print substr($3, 4) }' dump.txt)
# A thread's current context is written when a traced call finds it
# changed: P, P again after the reset (a context went: all are looked at
# anew), C1, C3, P (the program's own cuMemGetInfo after C3 went), C4.
P=$(awk '$2 == "primary_retain" { print $6; exit }' dump.txt)
assert_eq "device=0 $P
device=0 $P
device=1 $(awk '$2 == "ctx_create" && $5 == "device=1" { print $6 }' dump.txt)
device=0 $(awk '$2 == "ctx_create" && $5 == "device=0" { print $6; exit }' dump.txt)
device=0 $P
device=0 $(awk '$2 == "ctx_create" && $5 == "device=0" { a = $6 } END { print a }' dump.txt)" \
	"$(awk '$2 == "ctx_current" { print $5, $6 }' dump.txt)" "CTX_CURRENT events"
"$ANALYZE" summary --json "$T" > s.json || fail "summary --json"
"$ANALYZE" summary "$T" > s.txt || fail "summary"
python3 - "$ROOT/schemas/report.schema.json" s.json "$t_last" <<'PY' || fail "summary JSON"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
t = json.load(open(sys.argv[2]))["traces"][0]
t_last = int(sys.argv[3])
MiB, KiB = 1 << 20, 1 << 10
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
d0, d1 = t["devices"][0], t["devices"][1]
# Device 0: B 3 MiB + E 512 KiB + V 2 MiB at the peak (A went with the reset:
# 6.5 MiB if it had stayed); V alone at the end.
eq(5 * MiB + 512 * KiB, d0["peak"]["bytes"], "device 0 peak")
eq({"unknown": 0, "plain": 3 * MiB + 512 * KiB, "stream_ordered": 0, "vmm_physical": 2 * MiB, "managed": 0, "array": 0},
   d0["peak"]["by_kind"], "device 0 peak by kind")
eq(2 * MiB, d0["final"]["bytes"], "device 0 final (V)")
eq({"destroyed": 4, "released_blocks": 4, "released_bytes": MiB + 3 * MiB + 512 * KiB, "last_release_ts_ns": t_last},
   d0["contexts"], "device 0 contexts (A, H, B, E)")
eq({"destroyed": 1, "released_blocks": 1, "released_bytes": 4 * MiB}, {k: d1["contexts"][k] for k in
   ("destroyed", "released_blocks", "released_bytes")}, "device 1 contexts (D)")
eq((4 * MiB, 0), (d1["peak"]["bytes"], d1["final"]["bytes"]), "device 1 peak, final")
h = t["host_pinned"]
eq((64 * KiB, 0, 0, 64 * KiB), (h["peak_bytes"], h["final_bytes"], h["frees"], h["released_with_contexts_bytes"]),
   "host pinned H")
eq(0, t["anomalies"]["ambiguous_ctx_destroys"], "ambiguous destructions (C3 beside P: told apart)")
eq(0, t["anomalies"]["unmatched_frees"], "unmatched frees")
PY
assert_contains s.txt "  Contexts destroyed: 4; with them the driver released 4718592 B (4.50 MiB) in 4 blocks the program had not freed"
assert_contains s.txt "  released with destroyed contexts: 65536 B (64.00 KiB)"
grep -q "contexts destroyed while another context" s.txt && fail "an ambiguous destruction reported"
# The held view: S's free waits for its stream (5 MiB held: A, S, V) until
# the reset takes it with A (2 MiB: V).
"$ANALYZE" curves --csv --view held "$T" > held.csv || fail "curves --view held"
assert_eq "$((5 * MiB))" "$(awk -F, -v t="$t_pre" '$2 == 0 && $3 <= t { h = $10 } END { print h }' held.csv)" \
	"held before the reset"
assert_eq "$((2 * MiB))" "$(awk -F, -v t="$t_reset" '$2 == 0 && $3 == t { print $10 }' held.csv)" \
	"held at the reset"
# C3's destruction takes E (512 KiB) and leaves B and V (5 MiB).
assert_eq "$((5 * MiB))" "$(awk -F, -v t="$t_c3" '$2 == 0 && $3 == t { print $10 }' held.csv)" \
	"held right after C3 went"

# cudaDeviceReset: 8 MiB go with it; the runtime's release after the reset
# destroys nothing more.
rm -f traces/*.gmt
run_fake "$BUILD/tests/ctx_destroy" runtime > rplain.txt || { cat rplain.txt >&2; fail "runtime, without the preload"; }
run_traced "$BUILD/tests/ctx_destroy" runtime > rtraced.txt || { cat rtraced.txt >&2; fail "runtime, with the preload"; }
cmp rplain.txt rtraced.txt || fail "runtime: the program's output changed under the tracer"
R=$(the_trace)
"$BUILD/tests/tools/gmt-dump" "$R" > rdump.txt || fail "gmt-dump runtime"
assert_eq "aux=3" "$(awk '$2 == "ctx_destroy" { print $NF }' rdump.txt)" "runtime: one destruction, a reset"
"$ANALYZE" summary --json "$R" > r.json || fail "summary runtime"
assert_eq "8388608 0 1 1 8388608" "$(json_get r.json '" ".join(str(x) for d in [j["traces"][0]["devices"][0]] for x in (d["peak"]["bytes"], d["final"]["bytes"], d["contexts"]["destroyed"], d["contexts"]["released_blocks"], d["contexts"]["released_bytes"]))')" \
	"runtime: peak, final, destroyed, released"
exit 0
