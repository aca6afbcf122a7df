#!/bin/sh
# Owners of driver allocations (tests/routes/lib/owners_main.c): the
# application's cudaMalloc (1 MiB); a cuBLAS stand-in named libcublasLt.so.13
# whose static-runtime-style dlopen + dlsym("cuGetProcAddress_v2") makes it
# known, allocating with cuMemAlloc from its own text (8 MiB kept); a cuDNN
# stand-in named libcudnn.so.9 calling the dynamic runtime's cudaMalloc from
# its own text (4 MiB kept; the driver call under it comes from libcudart);
# ncclMemAlloc (2 MiB). Each library's small transient workspace and every
# free carry the library too; the application's cudaMalloc after cuDNN's is
# the application's again. The peak, at the end of the phase "owners", has
# all four at once.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_owners
assert_eq 0 "$ROUTE_RC" "exit status"
# NCCL's own handle and reservation, named by order (V1 is nm, ncclMemAlloc's pointer).
awk '$1 == "EV" && ($2 == "vmm_create" || $2 == "vmm_reserve") {
	split($6, a, "="); n[$2]++
	print "addr", ($2 == "vmm_create" ? "H" : "V") n[$2], a[2] }' dump.txt >> names.txt
route_events | grep -Ev '^(primary_retain|range_begin|range_end) ' > events.txt
R='flags=0 result=0'
cat > expected.txt <<EOT
alloc device=0 addr=app size=1048576 stream=0x0 kind=plain api=cudaMalloc owner=application $R
alloc device=0 addr=blas_tmp size=65536 stream=0x0 kind=plain api=driver owner=cublas $R
free device=-1 addr=blas_tmp size=0 stream=0x0 kind=unknown api=driver owner=cublas $R
alloc device=0 addr=dnn_tmp size=32768 stream=0x0 kind=plain api=cudaMalloc owner=cudnn $R
free device=-1 addr=dnn_tmp size=0 stream=0x0 kind=unknown api=cudaFree owner=cudnn $R
alloc device=0 addr=blas_ws size=8388608 stream=0x0 kind=plain api=driver owner=cublas $R
alloc device=0 addr=dnn_ws size=4194304 stream=0x0 kind=plain api=cudaMalloc owner=cudnn $R
nccl_begin device=-1 addr=0x0 size=2097152 stream=0x0 kind=imported api=driver owner=application $R
vmm_create device=0 addr=H1 size=2097152 stream=0x0 kind=vmm_physical api=ncclMemAlloc owner=nccl $R
vmm_reserve device=-1 addr=V1 size=2097152 stream=0x0 kind=unknown api=driver owner=application $R
vmm_map device=0 addr=V1 size=2097152 stream=H1 kind=unknown api=driver owner=application $R
nccl_end device=-1 addr=V1 size=2097152 stream=0x0 kind=imported api=driver owner=application $R
free device=-1 addr=blas_ws size=0 stream=0x0 kind=unknown api=driver owner=cublas $R
alloc device=0 addr=small size=4096 stream=0x0 kind=plain api=cudaMalloc owner=application $R
free device=-1 addr=small size=0 stream=0x0 kind=unknown api=cudaFree owner=application $R
free device=-1 addr=dnn_ws size=0 stream=0x0 kind=unknown api=cudaFree owner=cudnn $R
EOT
# The rest (ncclMemFree's release and unmap, the last cudaFree) is
# route_nccl's and route_runtime's business; compare up to dnn_ws's free.
n=$(wc -l < expected.txt)
head -n "$n" events.txt > got.txt
diff expected.txt got.txt >&2 || fail "events differ (< expected, > trace)"
grep -q '^free device=-1 addr=app .* api=cudaFree owner=application ' events.txt || fail "the application's cudaFree"
# The analyzer: the summary's peak and the phase "owners" (which ends at the
# peak) hold all four owners, exactly; every outside allocation is listed
# with its owner. Both documents validate against the schema.
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary --json"
"$ANALYZE" phases --json "$(the_trace)" > p.json || fail "phases --json"
python3 - "$ROOT/schemas/report.schema.json" s.json p.json <<'PY' || fail "analyzer JSON"
import json, sys, jsonschema
MiB, KiB = 1 << 20, 1 << 10
schema = json.load(open(sys.argv[1]))
s, p = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for doc in (s, p):
    jsonschema.Draft202012Validator(schema).validate(doc)
def eq(want, got, what):
    assert want == got, "%s: expected %r, got %r" % (what, want, got)
owners = {"application": MiB, "nccl": 2 * MiB, "cublas": 8 * MiB, "cudnn": 4 * MiB, "other": 0}
d = s["traces"][0]["devices"][0]
eq(15 * MiB, d["peak"]["bytes"], "peak bytes")
eq(owners, d["peak"]["by_owner"], "peak by owner")
eq(0, d["final"]["bytes"], "final bytes")
t = p["traces"][0]
occ = [ph for ph in t["phases"] if ph["name"] == "owners"][0]["listed"][0]
pd = occ["devices"][0]
for view in ("requested", "held"):
    eq(owners, pd[view]["end"]["outside_by_owner"], view + ": end outside by owner")
    eq(owners, pd[view]["max_taken"]["values"]["outside_by_owner"], view + ": max held by owner")
od = [x for x in t["devices"] if x["ordinal"] == 0][0]["outside_allocations"]
eq({"application": 2, "nccl": 1, "cublas": 2, "cudnn": 2, "other": 0}, od["count_by_owner"], "outside counts")
eq([(8 * MiB, "cublas"), (4 * MiB, "cudnn"), (2 * MiB, "nccl"), (MiB, "application"),
    (64 * KiB, "cublas"), (32 * KiB, "cudnn"), (4 * KiB, "application")],
   [(x["bytes"], x["owner"]) for x in od["largest"]], "outside list")
PY
"$ANALYZE" summary "$(the_trace)" > s.txt || fail "summary"
assert_contains s.txt "by owner: application 1048576 B (1.00 MiB), nccl 2097152 B (2.00 MiB), cublas 8388608 B (8.00 MiB), cudnn 4194304 B (4.00 MiB)"
"$ANALYZE" phases "$(the_trace)" > p.txt || fail "phases"
assert_contains p.txt "(application 2, nccl 1, cublas 2, cudnn 2)"
grep -Eq '^ +of it cublas +8388608 B \(8.00 MiB\) +8388608 B' p.txt || fail "phases text: no cublas row"
grep -Eq '^ +of it cudnn +4194304 B \(4.00 MiB\) +4194304 B' p.txt || fail "phases text: no cudnn row"
exit 0
