#!/bin/sh
# Owner from the stack (docs/analyzer.md, "Owner from the stack"): in
# route_owners, the allocations made from the cuBLAS stand-in (named
# libcublasLt.so.13), the cuDNN stand-in, the NCCL double and the
# application are attributed by their first frame outside libcuda, libcudart
# and the preload; the rule confirms the recorded (calling-library) owner.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/route_owners" > out.txt 2> err.txt || fail "route_owners"
"$ANALYZE" sites --json "$(the_trace)" > s.json || fail "sites --json"
python3 - "$ROOT/schemas/report.schema.json" s.json <<'PY' || fail "owners from stacks"
import json, sys, jsonschema
MiB = 1 << 20
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(doc)
d = doc["traces"][0]["devices"][0]
got = [(s["bytes"], s["owner"], s["stack_owner"]) for s in d["live_sites"]]
want = [(8 * MiB, "cublas", "cublas"), (4 * MiB, "cudnn", "cudnn"), (2 * MiB, "nccl", "nccl"),
        (MiB, "application", "application")]
assert got == want, got
PY
exit 0
