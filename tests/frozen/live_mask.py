"""live_mask.py - masks what a live run of a route program changes from one
run to the next (times, seconds and UTC, addresses, the trace's name, symbolisation time)
and what other machines and other people's edits change (frames outside
the route program's own modules, line numbers in the test doubles, module
directories, ELF offsets), so that symbolised sites/flamegraph output can be
frozen (tests/cases/sites_frozen.sh).
    python3 live_mask.py text|json|folded FILE
"""
import json, re, sys

OURS = ("sites_workload", "libsites_lib.so", "sites_phase_workload", "libcudart.so.13")

def frame_line_ok(line):
    m = re.match(r"^ {10}(\S.*) in (\S+)$", line)
    if not m:
        return True
    return m.group(2) in OURS

def text(s):
    out = []
    for line in s.splitlines():
        if not frame_line_ok(line):
            continue
        line = re.sub(r"ts \d+ ns", "ts T ns", line)
        line = re.sub(r"ts \d+ to \d+ ns", "ts T to T ns", line)
        line = re.sub(r"[+-]\d+\.\d{9} s after the first event \([0-9T:.Z-]+\)",
                      "+S s after the first event (UTC)", line)
        line = re.sub(r"begun at [+-]\d+\.\d{9} s", "begun at +S s", line)
        line = re.sub(r"at fake_runtime\.c:\d+", "at fake_runtime.c:L", line)
        line = re.sub(r"^(trace|Trace) \S+", r"\1 TRACE", line)
        line = re.sub(r"0x[0-9a-f]+", "0xA", line)
        line = re.sub(r"^(symbolisation: ).*", r"\1S", line)
        out.append(line)
    return "\n".join(out) + "\n"

def js(o, key=None):
    if isinstance(o, dict):
        r = {}
        for k, v in o.items():
            if k in ("addr", "offset") or k.endswith("ts_ns") or k == "seconds" or \
                    k.endswith("since_first_event_s") or k.endswith("utc") or \
                    (k == "file" and key == "traces") or k in ("addresses", "files"):
                r[k] = "M"
            elif k == "module" and isinstance(v, str):
                r[k] = v.rsplit("/", 1)[-1]
            else:
                r[k] = js(v, k)
        if r.get("module") == "libcudart.so.13":
            r["line"] = "L"
        return r
    if isinstance(o, list):
        items = [js(x, key) for x in o]
        if key == "frames":
            items = [x for x in items if not isinstance(x, dict) or x.get("module") in OURS]
        return items
    return o

def folded(s):
    out = []
    for line in s.splitlines():
        stack, _, n = line.rpartition(" ")
        fr = [f for f in stack.split(";") if not f.startswith("_") and not f.startswith("__libc")]
        out.append(";".join(fr) + " " + n)
    return "\n".join(out) + "\n"

mode, path = sys.argv[1], sys.argv[2]
s = open(path).read()
if mode == "text":
    sys.stdout.write(text(s))
elif mode == "json":
    sys.stdout.write(json.dumps(js(json.loads(s)), indent=1) + "\n")
else:
    sys.stdout.write(folded(s))
