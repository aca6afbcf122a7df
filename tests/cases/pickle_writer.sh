#!/bin/sh
# The pickle writer (writers/gmt_pickle.c) through tests/tools/gmt-pickle:
# random nested values (all integer edges, strings of every length class
# with non-ASCII and non-BMP characters, floats by their bits, lists and
# dicts long enough to need several batches) written at protocols 2, 3 and 4
# read back with Python's own unpickler (no class may be loaded) equal to
# what was written; only the opcodes PyTorch's memory viewer reads
# (SHORT_BINUNICODE only from protocol 4); no batch over 1000 items; and the
# writer refuses an open container, two top-level values, a key without its
# value.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
TOOL="$BUILD/tests/tools/gmt-pickle"
[ -x "$TOOL" ] || fail "gmt-pickle is not built"
python3 - "$TOOL" <<'PY' || fail "round trip"
import io, math, pickle, pickletools, random, struct, subprocess, sys
tool = sys.argv[1]
rng = random.Random(20261201)
INTS = [0, 1, 255, 256, 65535, 65536, 2**31 - 1, 2**31, -1, -255, -256, -2**31, -2**31 - 1,
        2**47, 2**47 - 1, 0x7f12_3456_7800, 2**53 + 1, 2**63 - 1, -2**63, -2**40 - 7]
def rstr():
    n = rng.choice([0, 1, 5, 40, 255, 256, 300]) if rng.random() < 0.99 else 70000  # > the writer's 64 KiB buffer
    return "".join(rng.choice("aZ0 _\"'\\/<>&é\u00ff\u2028\u4e2d\U0001f600") for _ in range(n))
def rval(depth):
    k = rng.randrange(8 if depth < 4 else 5)
    if k == 0: return rng.choice(INTS) if rng.random() < 0.5 else rng.randrange(-2**63, 2**63)
    if k == 1: return rstr()
    if k == 2: return rng.choice([0.0, -0.0, 1.5, 1e300, -2.5e-300, math.inf, rng.random()])
    if k == 3: return rng.choice([True, False, None])
    if k == 4: return ("u", rng.choice([2**63, 2**64 - 1, 2**63 + 12345]))
    if k in (5, 6): return [rval(depth + 1) for _ in range(rng.randrange(0, 12))]
    return {rstr(): rval(depth + 1) for _ in range(rng.randrange(0, 12))}
def tokens(v, out):
    if isinstance(v, tuple): out.append(f"u {v[1]}")
    elif v is None: out.append("n")
    elif v is True: out.append("t")
    elif v is False: out.append("F")
    elif isinstance(v, int): out.append(f"i {v}")
    elif isinstance(v, float): out.append("f %016x" % struct.unpack("<Q", struct.pack("<d", v))[0])
    elif isinstance(v, str): out.append("s " + v.encode().hex())
    elif isinstance(v, list):
        out.append("l"); [tokens(x, out) for x in v]; out.append("el")
    else:
        out.append("d")
        for k, x in v.items(): tokens(k, out); tokens(x, out)
        out.append("ed")
def plain(v):
    if isinstance(v, tuple): return v[1]
    if isinstance(v, list): return [plain(x) for x in v]
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    return v
def same(a, b):
    if isinstance(a, float): return isinstance(b, float) and struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, list): return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict): return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
class NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"class {module}.{name}")
VIEWER = {"PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "SHORT_BINUNICODE", "BINUNICODE",
          "BININT1", "BININT2", "BININT", "LONG1", "BINFLOAT", "NEWTRUE", "NEWFALSE", "NONE", "STOP",
          "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET"}
PUSHES_NOTHING = {"MARK", "APPENDS", "SETITEMS", "STOP", "PROTO", "MEMOIZE", "BINPUT", "LONG_BINPUT"}
values = [rval(0) for _ in range(60)]
values.append(list(range(2500)))                                # three batches
values.append({f"k{i}": i for i in range(2100)})               # three batches of pairs
values.append([f"s{i % 600}" for i in range(1800)])             # memo: BINGET below 256, LONG_BINGET above
values.append([f"{i:05d}" for i in range(66000)] + ["00007", "65999"])  # past the memo's 65536 texts
values.append({"segments": [], "device_traces": [[{"action": "alloc", "addr": 0x7f0000000000, "size": 512,
                                                   "frames": [], "time_us": 1764581951123456}]]})
for protocol in (2, 3, 4):
    for n, v in enumerate(values):
        toks = []
        tokens(v, toks)
        r = subprocess.run([tool, str(protocol)], input=("\n".join(toks) + "\n").encode(), capture_output=True)
        assert r.returncode == 0, (protocol, n, r.stderr)
        data = r.stdout
        got = NoClasses(io.BytesIO(data)).load()
        assert same(plain(v), got), (protocol, n, plain(v), got)
        ops = list(pickletools.genops(data))
        names = {o.name for o, _, _ in ops}
        assert names <= VIEWER, (protocol, names - VIEWER)
        assert ops[0][0].name == "PROTO" and ops[0][1] == protocol
        if protocol < 4:
            assert "SHORT_BINUNICODE" not in names, protocol
        counts = []
        for o, _, _ in ops:
            if o.name == "MARK":
                counts.append(0)
            elif o.name in ("APPENDS", "SETITEMS"):
                c = counts.pop()
                assert c <= (1000 if o.name == "APPENDS" else 2000), (o.name, c)
            elif o.name not in PUSHES_NOTHING and counts:
                counts[-1] += 1
        cnt = lambda name: sum(1 for o, _, _ in ops if o.name == name)
        put = cnt("MEMOIZE") + cnt("BINPUT") + cnt("LONG_BINPUT")
        if n == 60:
            assert cnt("APPENDS") == 3
        if n == 62:   # 600 texts memoized, 1200 references: 2 x 256 short, 2 x 344 long
            assert (put, cnt("BINGET"), cnt("LONG_BINGET")) == (600, 512, 688), (protocol, put, cnt("BINGET"), cnt("LONG_BINGET"))
            assert protocol < 4 or cnt("MEMOIZE") == 600
            assert protocol == 4 or (cnt("BINPUT"), cnt("LONG_BINPUT")) == (256, 344)
        if n == 63:   # the memo full at 65536 texts: the rest written in full
            assert (put, cnt("BINGET"), cnt("LONG_BINGET")) == (65536, 1, 0), (protocol, put, cnt("BINGET"))
# constants (gmt_pickle_str_static) among the same texts given as bytes:
# one memo entry each, every later use a BINGET; the empty one never memoized
LIT = ["action", "addr", "ab", "frames", "", "x"]
for protocol in (2, 4):
    toks, want = ["l"], []
    for i in range(900):
        k = i % 6
        if i % 5 == 0:
            toks.append("s " + LIT[k].encode().hex())
        else:
            toks.append(f"k {k}")
        want.append(LIT[k])
    toks.append("el")
    r = subprocess.run([tool, str(protocol)], input=("\n".join(toks) + "\n").encode(), capture_output=True)
    assert r.returncode == 0, r.stderr
    got = NoClasses(io.BytesIO(r.stdout)).load()
    assert got == want, (protocol, got[:12])
    ops = list(pickletools.genops(r.stdout))
    cnt = lambda name: sum(1 for o, _, _ in ops if o.name == name)
    put = cnt("MEMOIZE") + cnt("BINPUT")
    assert (put, cnt("BINGET")) == (5, 900 - 150 - 5), (protocol, put, cnt("BINGET"))
for toks, what in (("l\n", "an open list"), ("i 1\ni 2\n", "two top-level values"),
                   ("d\ni 1\ned\n", "a key without a value"), ("l\ned\n", "a dict end in a list")):
    r = subprocess.run([tool, "4"], input=toks.encode(), capture_output=True)
    assert r.returncode == 1 and b"-22" in r.stderr, (what, r.returncode, r.stderr)
r = subprocess.run([tool, "5"], input=b"n\n", capture_output=True)
assert r.returncode == 1, "protocol 5 accepted"
PY
exit 0
