#!/bin/sh
# The Chrome trace writer (export/gmt_chrome.c) through
# tests/tools/gmt-chrome-fixture (a stream known by construction: 200,000
# instants, a sawtooth with one 7 GiB instant): within a budget of 3000
# counter events the file parses, holds at most 3000, each counter's
# highest, lowest and last value equal the construction's to the byte, and
# otherData and the process's label say it was downsampled; with room for
# every instant, every change is written and nothing says downsampled. The
# metadata, the phase slice and the failure instant are there; a counter's
# name with a quote, a backslash and UTF-8 reads back as given.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
TOOL="$BUILD/tests/tools/gmt-chrome-fixture"
"$TOOL" 3000 small.json > small.n || fail "gmt-chrome-fixture 3000 exited $?"
"$TOOL" 1000000 full.json > full.n || fail "gmt-chrome-fixture 1000000 exited $?"
python3 - small.json full.json "$(cat small.n)" "$(cat full.n)" <<'PY' || fail "chrome checks"
import json, sys
GiB = 1 << 30
small, full = (json.load(open(p)) for p in sys.argv[1:3])
n_small, n_full = int(sys.argv[3]), int(sys.argv[4])
for doc, budget, n in ((small, 3000, n_small), (full, 1000000, n_full)):
    ev = doc["traceEvents"]
    C = [e for e in ev if e["ph"] == "C"]
    assert len(C) == n and len(C) <= budget, (len(C), n, budget)
    ALLOC = 'allocated "x\\y" \u00e9 (bytes)'   # written escaped
    want = {"held (bytes)": (8 * GiB, GiB, GiB + 999 * 4096), ALLOC: (7 * GiB, 0, 999 * 4096)}
    for name, (hi, lo, last) in want.items():
        s = [e for e in C if e["name"] == name]
        vals = [e["args"]["value"] for e in s]
        assert (max(vals), min(vals), vals[-1]) == (hi, lo, last), (name, max(vals), min(vals), vals[-1])
        ts = [e["ts"] for e in s]
        assert ts == sorted(ts), name
        assert all(e["pid"] == 1000 for e in s)
    assert {e["name"] for e in C} == set(want), {e["name"] for e in C}
    peak = [e for e in C if e["name"] == ALLOC and e["args"]["value"] == 7 * GiB]
    assert len(peak) == 1 and abs(peak[0]["ts"] - 123457.0) < 1e-9, peak
    meta = {(e["name"], e["pid"], e.get("tid")): e["args"] for e in ev if e["ph"] == "M"}
    assert meta[("process_name", 1000, None)] == {"name": "GPU 0 (GPU-fixture)"}
    assert meta[("thread_name", 4242, 4243)] == {"name": "main"}
    X = [e for e in ev if e["ph"] == "X"]
    assert X == [{"ph": "X", "name": "step", "pid": 4242, "tid": 4243, "ts": 1000.0, "dur": 50000.0,
                  "args": {"occurrence": "1 (cold)"}}], X
    I = [e for e in ev if e["ph"] == "i"]
    assert len(I) == 1 and I[0]["args"]["bytes"] == 9 * GiB and I[0]["ts"] == 150000.0, I
    info = doc["otherData"]["counters"]
    assert doc["displayTimeUnit"] == "ns"
    assert len(info) == 1 and info[0]["instants"] == 200000 and info[0]["events"] == n, info
    labels = [e for e in ev if e["ph"] == "M" and e["name"] == "process_labels"]
    if budget == 3000:
        assert info[0]["downsampled"] is True and info[0]["bucket_ns"] == 399999, info
        assert len(labels) == 1 and "downsampled" in labels[0]["args"]["labels"], labels
    else:
        assert info[0]["downsampled"] is False and info[0]["bucket_ns"] is None, info
        assert n == 400000 and not labels, (n, labels)
PY
exit 0
