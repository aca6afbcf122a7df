#!/bin/sh
# `export --format memory-viz` (docs/exports.md):
# - as a pickle of protocol 4 and 2 and as JSON, read back with Python's
#   pickle (no class allowed) and json: all three equal; the documented
#   fields of every entry, segment and block present;
# - replaying a device's entries from the start (framework entries: alloc
#   adds and free_requested takes, PyTorch's memory_allocated;
#   segment_alloc/map add and segment_free/unmap take, its reserved; the
#   entries whose first frame is gpumemtrace's "outside the framework"
#   label: their segments' bytes) gives the highest and the final
#   allocated, reserved and outside of `curves --json`, to the byte, on the
#   phases workload (a toy caching allocator, NCCL outside it) and on the
#   demo (no framework: every driver allocation outside, by owner);
# - the segments live at the end are exactly those the replay leaves, with
#   their blocks laid end to end (inactive gaps) and exactly the live
#   blocks, on committed traces that end with live ones;
# - frames: the companion's Python frames ("name (file:line)") split into
#   name, filename and line (companion_stacks: the blocks of
#   e2e_workload.py lines 53/57 and 58, as `sites --framework` names them);
#   an outside allocation's first frame names its owner, then its native
#   stack symbolised (the demo's 1 GiB cudaMalloc from main);
# - one trace only.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir -p phases demo
GMT_FAKE_CONTEXT_BYTES=268435456 LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/phases" \
	"$BUILD/tests/phases_workload" > /dev/null || fail "phases workload exited $?"
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/demo" "$BUILD/tests/demo_workload" > /dev/null ||
	fail "demo exited $?"
F="$ROOT/tests/frozen/traces"
for w in phases demo companion_stacks gen_phases v1_3_basic; do
	case $w in
	phases | demo) t=$(ls "$w"/*.gmt) ;;
	v1_3_basic) t="$ROOT/tests/golden/$w.gmt" ;;
	*) t="$F/$w.gmt" ;;
	esac
	for e in pickle pickle2 json; do
		"$ANALYZE" export --format memory-viz --encoding $e -o "$w.$e" "$t" 2> "$w.err" || fail "export $w --encoding $e exited $?"
		[ -s "$w.err" ] && { cat "$w.err"; fail "export $w: stderr not empty"; }
	done
	"$ANALYZE" curves --json -o "$w.curves.json" "$t" || fail "curves $w"
done
"$ANALYZE" export --format memory-viz "$t" "$t" 2> two.err && fail "two traces accepted"
assert_contains two.err "takes one trace"
python3 - <<'PY' || fail "memory-viz export"
import io, json, pickle
class NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(name)
errs = []
def check(c, what):
    if not c:
        errs.append(what)
LABEL = "<gpumemtrace>"
for w in ("phases", "demo", "companion_stacks", "gen_phases", "v1_3_basic"):
    snap = json.load(open(w + ".json"))
    for p in (w + ".pickle", w + ".pickle2"):
        check(NoClasses(io.BytesIO(open(p, "rb").read())).load() == snap, p + " != json")
    check(set(snap) == {"device_traces", "segments"}, "%s keys %s" % (w, set(snap)))
    c = json.load(open(w + ".curves.json"))
    cols = {k: i for i, k in enumerate(c["columns"])}
    rows = c["traces"][0]["rows"]
    live_segs, live_blocks = {}, {}
    for dev, entries in enumerate(snap["device_traces"]):
        alloc = res = out = 0
        top = [0, 0, 0]
        for e in entries:
            check({"action", "addr", "size", "stream", "time_us", "frames"} <= set(e), "%s entry %s" % (w, e))
            for f in e["frames"]:
                check(set(f) == {"filename", "line", "name"}, "%s frame %s" % (w, f))
            a, outside = e["action"], bool(e["frames"]) and e["frames"][0]["filename"] == LABEL
            if outside:
                check(e["frames"][0]["name"].startswith("outside the framework: "), e["frames"][0])
                if a == "segment_alloc": out += e["size"]
                elif a == "segment_free": out -= e["size"]
            elif a == "alloc": alloc += e["size"]
            elif a == "free_requested": alloc -= e["size"]
            elif a in ("segment_alloc", "segment_map"): res += e["size"]
            elif a in ("segment_free", "segment_unmap"): res -= e["size"]
            if a in ("segment_alloc", "segment_map"): live_segs[(dev, e["addr"])] = e["size"]
            elif a in ("segment_free", "segment_unmap"): del live_segs[(dev, e["addr"])]
            elif a == "alloc": live_blocks[(dev, e["addr"])] = e["size"]
            elif a == "free_completed": del live_blocks[(dev, e["addr"])]
            top = [max(top[0], alloc), max(top[1], res), max(top[2], out)]
        r = [x for x in rows if x[cols["device"]] == dev]
        if w in ("phases", "demo") and r:
            def mx(k):
                v = [x[cols[k]] for x in r if x[cols[k]] is not None]
                return max(v) if v else 0
            want = [mx("allocated_bytes"), mx("reserved_bytes"), mx("outside_bytes")]
            if w == "demo":  # its pool's bytes are no framework's: neither blocks nor segments here
                want[:2] = [0, 0]
            check(top == want, "%s device %d maxima %s != curves %s" % (w, dev, top, want))
            fin = [r[-1][cols["allocated_bytes"]] or 0, r[-1][cols["reserved_bytes"]] or 0, r[-1][cols["outside_bytes"]]]
            if w == "demo":
                fin[:2] = [0, 0]
            check([alloc, res, out] == fin, "%s device %d final %s != curves %s" % (w, dev, [alloc, res, out], fin))
    got_segs, got_blocks = {}, {}
    for s in snap["segments"]:
        check({"device", "address", "total_size", "stream", "segment_type", "allocated_size", "active_size", "blocks"} <= set(s), s)
        got_segs[(s["device"], s["address"])] = s["total_size"]
        check(sum(b["size"] for b in s["blocks"]) == s["total_size"], "%s: blocks do not fill %s" % (w, s["address"]))
        a = s["address"]
        act = 0
        for b in s["blocks"]:
            if b["state"] != "inactive":
                got_blocks[(s["device"], a)] = b["size"]
                act += b["size"]
            a += b["size"]
        check(s["active_size"] == act, "%s active_size %s != %s" % (w, s["active_size"], act))
    check(got_segs == live_segs, "%s segments %s != replay %s" % (w, got_segs, live_segs))
    check(got_blocks == live_blocks, "%s blocks %s != replay %s" % (w, got_blocks, live_blocks))
    if w in ("gen_phases", "v1_3_basic", "companion_stacks"):
        check(len(got_segs) >= 1 and len(got_blocks) >= 1, "%s: nothing live at the end" % w)
    if w == "companion_stacks":
        def fr(b):
            return [(f["name"], f["filename"].rsplit("/", 1)[-1], f["line"]) for f in b["frames"]]
        blocks = [(b["size"], fr(b)) for s in snap["segments"] for b in s["blocks"] if b["state"] != "inactive"]
        A = [("forward", "e2e_workload.py", 53), ("<module>", "e2e_workload.py", 57)]
        check(blocks == [(512, A), (512, A), (1536, [("<module>", "e2e_workload.py", 58)])], "frames %s" % blocks)
    if w == "demo":
        owners = {}
        for e in snap["device_traces"][0]:
            if e["action"] == "segment_alloc":
                owners.setdefault(e["frames"][0]["name"].split(":")[1].split()[0], []).append(e["size"])
        check(1 << 30 in owners.get("application", []) and "nccl" in owners, "demo owners %s" % owners)
        big = [e for e in snap["device_traces"][0] if e["action"] == "segment_alloc" and e["size"] == 1 << 30][0]
        check([f["name"] for f in big["frames"][1:3]] == ["cudaMalloc", "main"] and
              big["frames"][2]["filename"].endswith("demo_workload.c"), "demo frames %s" % big["frames"][:3])
if errs:
    print("\n".join(errs))
    raise SystemExit(1)
PY
exit 0
