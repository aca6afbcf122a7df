#!/bin/sh
# The example's `measure` on the fake torch of tests/examples/fake_torch,
# whose allocator counts are known by construction (see its docstring):
# 512-byte blocks, reserved in 4096-byte segments here (GMT_FAKE_TORCH_SEGMENT).
# Network: --width 8 --layers 1 --dtype float32, input (2, 3, 8):
#   parameters  Linear(8,32): weight 256 x 4 B = 1024 B, bias 32 x 4 = 128 -> 512
#               Linear(32,8): weight 1024 B, bias 8 x 4 = 32 -> 512
#               552 parameters, 2208 B, 3072 B in blocks; reserved 4096
#   inputs      2x3x8 x 4 B = 192 B -> 512; allocated 3584
#   a forward   h = (2,3,32) 768 -> 1024, GELU(h) 1024 while h lives:
#               peak 3584 + 2048 = 5632 (reserved 8192), output freed: 3584
# With GMT_FAKE_TORCH_LIMIT=5000 the GELU output of cold_forward cannot be
# allocated: the phase fails with the out-of-memory message at peak 4608
# (3584 + h), h is released (3584 after), and the run stops there, exit 1.
# The call log checks the protocol's order for every phase: synchronize,
# reset peaks, NVTX push, gpumemtrace.phase entry, run, synchronize, exit,
# pop, synchronize.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
EX="$ROOT/scripts/examples/gmt_example.py"
unset PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF PYTORCH_HIP_ALLOC_CONF GMT_FAKE_TORCH_LIMIT GMT_FAKE_TORCH_GPUS GMT_FAKE_TORCH_TOTAL
export GMT_FAKE_TORCH=1 GMT_FAKE_TORCH_SEGMENT=4096
export PYTHONPATH="$ROOT/tests/examples/fake_torch:$ROOT/tests/examples/fake_gmt"
ARGS="--batch 2 --context 3 --width 8 --layers 1 --dtype float32 --warmup 2 --repeats 2"

PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True GMT_FAKE_TORCH_LOG="$TESTDIR/ok.log" \
	python3 "$EX" measure $ARGS --marks both --output ok.json > ok.txt 2> ok.err || fail "measure exit status $?"
[ -s ok.err ] && fail "measure wrote to stderr: $(cat ok.err)"
assert_contains ok.txt "written: ok.json"
assert_contains ok.txt "cold_forward     1 yes"

python3 - ok.json <<'PY' || fail "ok.json"
import json, sys
j = json.load(open(sys.argv[1]))
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
eq(["tool", "version", "command", "environment", "parameters", "model", "phases",
    "completed", "notes"], list(j), "top-level keys")
eq(("gmt_example", "measure", True), (j["tool"], j["command"], j["completed"]), "header")
env = j["environment"]
eq(("Fake GPU (tests/examples/fake_torch)", 1 << 30, "CUDA", "13.0", "0.0.0+gmt.fake"),
   (env["gpu_name"], env["gpu_total_memory_bytes"], env["backend"], env["backend_version"],
    env["pytorch"]["version"]), "environment")
eq({"backend": "native", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "PYTORCH_ALLOC_CONF": None, "PYTORCH_HIP_ALLOC_CONF": None}, env["allocator"], "allocator")
eq({"device": "cuda:0", "batch": 2, "context": 3, "width": 8, "layers": 1, "dtype": "float32",
    "warmup": 2, "repeats": 2, "seed": 0, "marks": "both",
    "marks_used": {"nvtx": True, "gpumemtrace_api": True,
                                                "gpumemtrace_active": False}}, j["parameters"], "parameters")
m = j["model"]
eq((552, 2208, 4, 3072, 192, [2, 3, 8]),
   (m["parameter_count"], m["parameter_bytes"], m["parameter_tensors"],
    m["parameter_bytes_in_512_byte_blocks"], m["input_bytes"], m["input_shape"]), "model")
# name, occurrence, forwards, (allocated before, peak, after), (reserved before, peak, after)
want = [("model_load", 1, None, (0, 3072, 3072), (0, 4096, 4096)),
        ("inputs", 1, None, (3072, 3584, 3584), (4096, 4096, 4096)),
        ("cold_forward", 1, 1, (3584, 5632, 3584), (4096, 8192, 8192)),
        ("warmup", 1, 2, (3584, 5632, 3584), (8192, 8192, 8192)),
        ("warm_forward", 1, 1, (3584, 5632, 3584), (8192, 8192, 8192)),
        ("warm_forward", 2, 1, (3584, 5632, 3584), (8192, 8192, 8192))]
eq(len(want), len(j["phases"]), "number of phases")
for w, p in zip(want, j["phases"]):
    what = "%s #%d" % (p["name"], p["occurrence"])
    eq(w[:3], (p["name"], p["occurrence"], p.get("forwards")), what)
    eq((True, None), (p["ok"], p["error"]), what + " ok")
    got = tuple(tuple(p[k][c + "_bytes"] for k in ("before", "peak", "after"))
                for c in ("allocated", "reserved"))
    eq(w[3:], got, what + " bytes")
    eq((w[4][0], w[4][2]), (p["before"]["device_used_bytes"], p["after"]["device_used_bytes"]),
       what + " device used")
    for k in ("before", "peak", "after"):
        for v in p[k].values():
            if type(v) is not int:
                sys.exit("%s %s: %r is not raw bytes" % (what, k, v))
    if not (isinstance(p["seconds"], float) and p["seconds"] >= 0):
        sys.exit("%s: seconds %r" % (what, p["seconds"]))
PY

# The protocol's order, for every phase.
{
	echo "import torch"; echo "manual_seed 0"
	for ph in model_load inputs cold_forward warmup warm_forward warm_forward; do
		printf '%s\n' synchronize reset_peak_memory_stats "range_push $ph" \
			"gmt_phase_enter $ph" synchronize "gmt_phase_exit $ph ok" range_pop synchronize
	done
} > ok.expected
cmp ok.expected ok.log || { diff ok.expected ok.log >&2; fail "call order"; }

# NVTX only: no gpumemtrace.phase calls.
GMT_FAKE_TORCH_LOG="$TESTDIR/nvtx.log" python3 "$EX" measure $ARGS --marks nvtx --output nvtx.json > /dev/null ||
	fail "measure --marks nvtx exit status $?"
grep -q gmt_phase nvtx.log && fail "--marks nvtx called gpumemtrace.phase"
assert_eq 6 "$(grep -c '^range_push' nvtx.log)" "NVTX ranges with --marks nvtx"
assert_eq "True False" "$(json_get nvtx.json 'j["parameters"]["marks_used"]["nvtx"], j["parameters"]["marks_used"]["gpumemtrace_api"]' | tr -d '(),')" "marks_used"

# Out of memory in cold_forward: recorded, the run stops, JSON written, exit 1.
GMT_FAKE_TORCH_LIMIT=5000 GMT_FAKE_TORCH_LOG="$TESTDIR/oom.log" \
	python3 "$EX" measure $ARGS --marks both --output oom.json > oom.txt 2> oom.err; rc=$?
assert_eq 1 "$rc" "exit status after an out-of-memory"
assert_contains oom.txt "cold_forward     1 NO"
assert_contains oom.txt "    failed: OutOfMemoryError: CUDA out of memory. Tried to allocate 1024 bytes (fake torch, limit 5000 bytes)"
assert_contains oom.txt "written: oom.json"
python3 - oom.json <<'PY' || fail "oom.json"
import json, sys
j = json.load(open(sys.argv[1]))
def eq(want, got, what):
    if want != got:
        sys.exit("%s: expected %r, got %r" % (what, want, got))
eq(False, j["completed"], "completed")
eq(["model_load", "inputs", "cold_forward"], [p["name"] for p in j["phases"]], "phases run")
eq([True, True, False], [p["ok"] for p in j["phases"]], "ok flags")
p = j["phases"][2]
eq({"type": "OutOfMemoryError", "out_of_memory": True,
    "message": "CUDA out of memory. Tried to allocate 1024 bytes (fake torch, limit 5000 bytes)"},
   p["error"], "error")
eq({"allocated_bytes": 3584, "reserved_bytes": 4096, "device_used_bytes": 4096}, p["before"], "before")
eq({"allocated_bytes": 4608, "reserved_bytes": 8192}, p["peak"], "peak")
eq({"allocated_bytes": 3584, "reserved_bytes": 8192, "device_used_bytes": 8192}, p["after"], "after")
PY
assert_contains oom.log "gmt_phase_exit cold_forward OutOfMemoryError"
assert_eq "range_pop" "$(sed -n '/gmt_phase_exit cold_forward/{n;p;}' oom.log)" "NVTX pop after a failure"
grep -q "range_push warmup" oom.log && fail "the run went on after the out-of-memory"

# environment on the fake: text and JSON.
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$EX" environment > env.txt || fail "environment exit status $?"
assert_contains env.txt "GPU:                     Fake GPU (tests/examples/fake_torch)"
assert_contains env.txt "GPU memory:              1073741824 B (1.00 GiB)"
assert_contains env.txt "backend:                 CUDA 13.0"
assert_contains env.txt "PYTORCH_CUDA_ALLOC_CONF: backend:cudaMallocAsync"
assert_contains env.txt "PYTORCH_ALLOC_CONF:      (unset)"
python3 "$EX" environment --json --device cuda > env.json || fail "environment --json"
assert_eq "cuda 0 native None" "$(json_get env.json '"%s %d %s %s" % (j["device"], j["device_index"], j["allocator"]["backend"], j["pytorch"]["hip"])')" "environment JSON"
exit 0
