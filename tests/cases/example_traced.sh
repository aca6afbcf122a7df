#!/bin/sh
# The protocol example's `measure` under the tracer and the PyTorch companion,
# on the fake torch driving the runtime double (FAKE_TORCH_CUDART,
# tests/examples/fake_torch): what the job measured of itself (m.json) and
# what `phases` rebuilt from the trace agree to the byte for every phase
# occurrence: allocated and reserved at start and end, the maxima, device
# used at the end (the double: the segments, no context bytes). The one
# difference is said: before the framework's first event (CUDA is
# initialised inside model_load) the trace knows no allocated or reserved.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
command -v python3 > /dev/null || fail "python3 is needed"
unset PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF GMT_FAKE_TORCH_LIMIT GMT_FAKE_TORCH_GPUS GMT_FAKE_TORCH_TOTAL
export GMT_FAKE_TORCH=1 GMT_FAKE_TORCH_SEGMENT=4096 FAKE_TORCH_CUDART="$FAKE/libcudart.so.13"
export PYTHONPATH="$ROOT/tests/examples/fake_torch"
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o traces python3 "$ROOT/scripts/examples/gmt_example.py" measure \
	--batch 2 --context 3 --width 8 --layers 1 --dtype float32 --warmup 2 --repeats 2 --marks both \
	--output m.json > out.txt 2> err.txt || { cat out.txt err.txt >&2; fail "measure under the tracer"; }
[ -s err.txt ] && fail "stderr: $(cat err.txt)"
"$ANALYZE" phases --json "$(the_trace)" > p.json || fail "phases --json"
python3 - m.json p.json <<'PY' || fail "the job's own measurements against the trace"
import json, sys
m, p = (json.load(open(f)) for f in sys.argv[1:3])
job = [(x["name"], x["occurrence"], x["before"], x["peak"], x["after"]) for x in m["phases"]]
trace = {(ph["name"], o["occurrence"]): o["devices"][0]["requested"]
         for ph in p["traces"][0]["phases"] for o in ph["listed"]}
if len(job) != 6 or len(trace) != 6:
    sys.exit("phases: job %d, trace %d" % (len(job), len(trace)))
for name, occ, before, peak, after in job:
    v = trace[(name, occ)]
    got = (v["start"]["allocated_bytes"], v["start"]["reserved_bytes"],
           v["end"]["allocated_bytes"], v["end"]["reserved_bytes"],
           v["max_allocated"]["bytes"], v["max_reserved"]["bytes"], v["end"]["device_used_bytes"])
    want = (before["allocated_bytes"], before["reserved_bytes"], after["allocated_bytes"],
            after["reserved_bytes"], peak["allocated_bytes"], peak["reserved_bytes"],
            after["device_used_bytes"])
    if (name, occ) == ("model_load", 1):   # before the framework's first event
        want = (None, None) + want[2:]
    if got != want:
        sys.exit("%s #%d: trace %s, job %s" % (name, occ, got, want))
PY
exit 0
