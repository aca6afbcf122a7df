#!/bin/sh
# Property test of the JSON writer (writers/gmt_json.c): random documents
# (tests/tools/json-random.c: random nesting, strings of any bytes 0-255,
# integers of the whole range, doubles of random bits) always parse with
# Python's json, and give back exactly what was written: strings with
# valid UTF-8 as they were and each byte of an invalid sequence as U+FFFD
# (decided here by Python's own UTF-8 decoder), doubles bit for bit
# (non-finite ones as null). Misused writers (a value without a key, a key
# in an array, a wrong end, levels left open) still write JSON that parses,
# and their close says -EINVAL (-22).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/json-random"
[ -x "$GEN" ] || GEN="$ROOT/build/tests/tools/json-random"
[ -x "$GEN" ] || fail "json-random is not built"
mkdir docs
"$GEN" "${JSON_SEED:-20261201}" 600 docs || fail "json-random exited $?"
python3 - docs 600 <<'PY' || fail "round trip"
import json, math, struct, sys
d, count = sys.argv[1], int(sys.argv[2])

def expect_str(b):
    """The writer's rule, with Python's strict decoder as the judge of a
    sequence: valid UTF-8 stays, every other byte becomes U+FFFD."""
    out, i = [], 0
    while i < len(b):
        c = b[i]
        n = 1 if c < 0x80 else 2 if 0xc2 <= c <= 0xdf else 3 if 0xe0 <= c <= 0xef else 4 if 0xf0 <= c <= 0xf4 else 0
        if n:
            try:
                out.append(b[i:i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)

def build(toks):
    stack = [[]]
    keys = [None]
    def put(v):
        top = stack[-1]
        if isinstance(top, dict):
            top[keys[-1]] = v
        else:
            top.append(v)
    for t in toks:
        tag, _, arg = t.partition(" ")
        if tag in "{[":
            stack.append({} if tag == "{" else [])
            keys.append(None)
        elif tag in "}]":
            v = stack.pop(); keys.pop(); put(v)
        elif tag == "K":
            keys[-1] = expect_str(bytes.fromhex(arg))
        elif tag == "S":
            put(expect_str(bytes.fromhex(arg)))
        elif tag in "UI":
            put(int(arg))
        elif tag == "D":
            x = struct.unpack("<d", struct.pack("<Q", int(arg, 16)))[0]
            put(x if math.isfinite(x) else None)
        elif tag == "B":
            put(arg == "1")
        elif tag == "N":
            put(None)
    assert len(stack) == 1 and len(stack[0]) == 1, "spec not one value"
    return stack[0][0]

def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            struct.pack("<d", float(a)) == struct.pack("<d", float(b))
    if type(a) != type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

misused = strings = 0
for n in range(count):
    raw = open("%s/%d.json" % (d, n), "rb").read()
    toks = open("%s/%d.spec" % (d, n)).read().split("\n")[:-1]
    rc = int(toks[-1].split()[1])
    try:
        got = json.loads(raw.decode("utf-8"))   # strict: the bytes must be UTF-8 too
    except Exception as e:
        sys.exit("%d.json does not parse: %s" % (n, e))
    assert raw.endswith(b"\n"), "%d.json: no final newline" % n
    if "M" in toks:
        misused += 1
        assert rc == -22, "%d: misused, close returned %d" % (n, rc)
        continue
    assert rc == 0, "%d: close returned %d" % (n, rc)
    strings += sum(1 for t in toks if t[:1] in "SK")
    want = build(toks[:-1])
    if not same(want, got):
        sys.exit("%d.json: round trip differs:\n want %r\n got  %r" % (n, want, got))
assert misused >= 20 and strings >= 2000, (misused, strings)
print("%d documents, %d misused, %d strings" % (count, misused, strings))
PY
