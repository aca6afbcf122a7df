#!/bin/sh
# The memory viewer's snapshot (export/gmt_memviz.c) through
# tests/tools/gmt-memviz-fixture (a run known by construction): as JSON and
# as pickles of protocols 2, 3 and 4, read back with Python's json and
# pickle (no class allowed), all equal; every field the viewer reads there
# with its type; blocks tile their segment (the viewer's addresses); the
# entries replayed from the start give the final segments exactly (what the
# viewer's backward replay needs); the totals at the end equal the
# construction's: allocated 1049088 B, reserved 20 MiB, outside 6 MiB.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
TOOL="$BUILD/tests/tools/gmt-memviz-fixture"
for f in json 2 3 4; do "$TOOL" $f snap.$f || fail "gmt-memviz-fixture $f exited $?"; done
python3 - <<'PY' || fail "snapshot checks"
import io, json, pickle, pickletools
class NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"class {module}.{name}")
MiB, S, N = 1 << 20, 0x7f0000000000, 0x7f1000000000
snap = json.load(open("snap.json"))
for p in (2, 3, 4):
    data = open(f"snap.{p}", "rb").read()
    assert NoClasses(io.BytesIO(data)).load() == snap, p
    assert next(pickletools.genops(data))[1] == p
frame = {"filename": str, "line": int, "name": str}
def frames_ok(fs):
    return isinstance(fs, list) and all(set(f) == set(frame) and all(isinstance(f[k], t) for k, t in frame.items()) for f in fs)
traces = snap["device_traces"]
assert [len(t) for t in traces] == [9, 0], [len(t) for t in traces]
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "oom", "snapshot"}
for e in traces[0]:
    assert e["action"] in ACTIONS and frames_ok(e["frames"]), e
    for k in ("addr", "size", "stream", "time_us"):
        assert isinstance(e[k], int), (k, e)
    assert ("device_free" in e) == (e["action"] == "oom"), e
oom = [e for e in traces[0] if e["action"] == "oom"]
assert oom[0]["size"] == 64 * MiB and oom[0]["device_free"] == 1 << 30
segs = snap["segments"]
for s in segs:
    for k, t in (("device", int), ("address", int), ("total_size", int), ("stream", int), ("segment_type", str),
                 ("allocated_size", int), ("active_size", int), ("blocks", list)):
        assert isinstance(s[k], t), (k, s)
    assert sum(b["size"] for b in s["blocks"]) == s["total_size"], s
    for b in s["blocks"]:
        assert b["state"] in ("active_allocated", "active_pending_free", "inactive") and frames_ok(b["frames"])
        assert isinstance(b["size"], int) and isinstance(b["requested_size"], int)
def live_blocks(s):
    out, a = [], s["address"]
    for b in s["blocks"]:
        if b["state"] != "inactive":
            out.append((a, b["size"]))
        a += b["size"]
    return out
final_blocks = sorted(x for s in segs for x in live_blocks(s))
final_segs = sorted((s["address"], s["total_size"]) for s in segs)
blocks, seg_set = {}, {}
for e in traces[0]:
    a = e["action"]
    if a == "segment_alloc": seg_set[e["addr"]] = e["size"]
    elif a == "segment_free": del seg_set[e["addr"]]
    elif a == "alloc": blocks[e["addr"]] = e["size"]
    elif a == "free_completed": del blocks[e["addr"]]
assert sorted(seg_set.items()) == final_segs, (seg_set, final_segs)
sizes = {(s["address"], s["total_size"]): s for s in segs}
assert sorted(blocks.items()) == final_blocks, (blocks, final_blocks)
fw = [s for s in segs if s["address"] == S]
out = [s for s in segs if s["address"] == N]
assert sum(s["allocated_size"] for s in fw) == 1049088
assert sum(s["total_size"] for s in fw) == 20 * MiB
assert sum(s["total_size"] for s in out) == 6 * MiB and out[0]["blocks"][0]["frames"][0]["filename"].startswith("outside")
PY
exit 0
