"""gpu_eval.py - judges the real-GPU checks from what scripts/gpu-check.sh ran.

    python3 tests/gpu/gpu_eval.py CHECK WORK BUILD   appends one row to WORK/rows.tsv
    python3 tests/gpu/gpu_eval.py table WORK         prints the table, writes
                                                     WORK/table.md, WORK/results.json

CHECK: demo, alloc-native, alloc-expandable, alloc-async, nccl, oom, train,
context, and issue 3's phase checks measure (A), phases-native,
phases-expandable, phases-async (B), nccl-phases (C), oom-phase (D); E is
train; reset (15: what cudaDeviceReset takes); graph (16: CUDA graphs'
memory nodes); memviz (17: the memory viewer snapshot of the memory-viz
export, through PyTorch's own torch.cuda._memory_viz). Each reads the files the script left in WORK/<dir>/ (see
gpu-check.sh), runs the analyzer (BUILD/gpumemtrace-analyze summary --json)
(or `phases --json` for the phase checks) and the dumper
(BUILD/tests/tools/gmt-dump) on the trace, compares, and
appends "id, title, expected, measured, status, reason" (tab-separated) to
WORK/rows.tsv. Status is PASS, FAIL, SKIP or INFO. The details of every
comparison go to WORK/<dir>/eval.json. Standard library only: it runs where
torch is missing too.

Expected values are by construction (tests/routes/demo_workload.c,
tests/gpu/gpu_torch.py), or PyTorch's own counters read in the same process
at the same moment; where the two differ the row says so.
"""
import glob
import json
import os
import re
import subprocess
import sys

MiB = 1 << 20
GiB = 1 << 30
EV_RE = re.compile(r"(\w+)=(\S*)")


def fmt(b):
    """Bytes with one binary conversion, as the analyzer prints them."""
    if b is None:
        return "?"
    if b == 0:
        return "0 B"
    for unit, div in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if b % div == 0:
            return "%d %s" % (b // div, unit)
    for unit, div in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if abs(b) >= div:
            return "%d B (%.2f %s)" % (b, b / div, unit)
    return "%d B" % b


class Skip(Exception):
    pass


class Fail(Exception):
    pass


class Row:
    """Collects named comparisons; the row FAILs if any failed."""

    def __init__(self, rid, title, expected):
        self.rid, self.title, self.expected = rid, title, expected
        self.items = []
        self.measured = ""
        self.notes = []

    def eq(self, what, want, got, show=fmt):
        ok = want == got
        self.items.append({"what": what, "expected": want, "measured": got, "ok": ok})
        if not ok:
            self.notes.append("%s: expected %s, measured %s" % (what, show(want), show(got)))
        return ok

    def true(self, what, cond, detail=""):
        self.items.append({"what": what, "ok": bool(cond), "detail": detail})
        if not cond:
            self.notes.append("%s%s" % (what, (": " + detail) if detail else ""))
        return bool(cond)

    def note(self, text):
        self.items.append({"note": text})

    def level(self, what, want, got, explained=None):
        """want (the job's) against got (the analyzer's): equal passes;
        otherwise explained (a reason string) passes with the reason kept,
        and None fails. Returns "equal", "explained" or "differs"."""
        if want == got:
            self.items.append({"what": what, "expected": want, "measured": got, "ok": True,
                               "outcome": "equal"})
            return "equal"
        diff = None if want is None or got is None else got - want
        text = "%s: job %s, analyzer %s%s" % (
            what, fmt(want), fmt(got), "" if diff is None else " (analyzer - job = %d B)" % diff)
        if explained:
            self.items.append({"what": what, "expected": want, "measured": got, "ok": True,
                               "outcome": "explained", "why": explained})
            self.note("%s: %s" % (text, explained))
            return "explained"
        self.items.append({"what": what, "expected": want, "measured": got, "ok": False,
                           "outcome": "differs"})
        self.notes.append(text)
        return "differs"

    def outcomes(self):
        n = {"equal": 0, "explained": 0, "differs": 0}
        for i in self.items:
            if i.get("outcome") in n:
                n[i["outcome"]] += 1
        return n

    def status(self):
        return "PASS" if all(i.get("ok", True) for i in self.items) else "FAIL"


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail("cannot read %s: %s" % (path, e))


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return "(no output)"


def find_trace(d, result=None):
    if result and result.get("trace") and os.path.isfile(result["trace"]):
        return result["trace"]
    traces = sorted(glob.glob(os.path.join(d, "traces", "*.gmt")))
    if result and result.get("pid"):
        mine = [t for t in traces if t.endswith(".%d.gmt" % result["pid"])]
        if len(mine) == 1:
            return mine[0]
    if len(traces) == 1:
        return traces[0]
    if traces and result is not None and not result.get("pid"):
        # a job that did not say its pid (gmt_example's measure): its own
        # trace is the largest; a helper such as nvidia-smi writes little
        return max(traces, key=os.path.getsize)
    raise Fail("expected one trace in %s/traces, found %d%s" % (
        d, len(traces), "" if not traces else ": " + " ".join(map(os.path.basename, traces))))


def run_tool(args, d, out_name, what):
    """Runs one of our programs (90 s at most), keeps its stdout as
    d/out_name and returns it completed; Fail when it could not run."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=90)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Fail("%s: %s" % (what, e))
    with open(os.path.join(d, out_name), "w") as f:
        f.write(p.stdout)
    return p


def analyzer_doc(build, command, trace, d):
    """The trace's entry of `gpumemtrace-analyze COMMAND --json` (kept as
    COMMAND.json, and the text report as COMMAND.txt)."""
    exe = os.path.join(build, "gpumemtrace-analyze")
    what = "analyzer %s" % command
    p = run_tool([exe, command, "--json", trace], d, command + ".json", what)
    txt = run_tool([exe, command, trace], d, command + ".txt", what)
    with open(os.path.join(d, command + ".txt"), "a") as f:
        f.write(txt.stderr)
    if p.returncode != 0:
        raise Fail("%s exit %d: %s" % (what, p.returncode, first_line(p.stderr)))
    try:
        return json.loads(p.stdout)["traces"][0]
    except (ValueError, KeyError, IndexError) as e:
        raise Fail("%s JSON unreadable: %s" % (what, e))


def analyze(build, trace, d):
    """`summary --json` of one trace (also kept as summary.json / summary.txt)."""
    return analyzer_doc(build, "summary", trace, d)


def dump_events(build, trace, d):
    """EV lines of gmt-dump as dicts (type + key=value fields)."""
    exe = os.path.join(build, "tests", "tools", "gmt-dump")
    p = run_tool([exe, trace], d, "dump.txt", "gmt-dump")
    evs = []
    for line in p.stdout.splitlines():
        if not line.startswith("EV "):
            continue
        e = dict(EV_RE.findall(line))
        e["type"] = line.split()[1]
        for k in ("size", "result", "flags", "ts"):
            if k in e:
                e[k] = int(e[k])
        evs.append(e)
    return evs


def dev0(t):
    for d in t.get("devices", []):
        if d.get("ordinal") == 0:
            return d
    raise Fail("the analyzer reports no device 0")


def trace_sane(row, t):
    row.true("trace ended cleanly", t.get("status") == "clean", "status %s" % t.get("status"))
    row.eq("dropped events", 0, t.get("drops", {}).get("events"), show=str)
    an = {k: v for k, v in t.get("anomalies", {}).items() if v and k != "null_frees"}
    row.true("no replay anomalies", not an, json.dumps(an))


def count(evs, **want):
    return [e for e in evs if all(e.get(k) == v for k, v in want.items())]


# ---------------------------------------------------------------- checks


def check_demo(work, build):
    """1: the demo workload on the real runtime, driver and NCCL."""
    d = os.path.join(work, "demo")
    on = read(os.path.join(d, "on")).strip() or "real cudart+NCCL"
    row = Row("1", "demo workload, " + on,
              "same stdout+exit with/without tracer; peak = 2048 MiB application "
              "(1280 stream-ordered + 768 vmm) + NCCL>0; 64 GiB cudaMalloc fails "
              "(result 2); api=cudaMalloc, flags=1 (_ptsz), owner=nccl events")
    plain_rc = read(os.path.join(d, "plain.rc")).strip()
    if plain_rc == "":
        raise Skip(read(os.path.join(d, "skip"), "demo not run").strip())
    plain_out = read(os.path.join(d, "plain.out"))
    if plain_rc == "125":
        raise Skip("not started: the time budget was spent")
    if plain_rc != "0":
        raise Fail("without the tracer the demo already fails (exit %s): %s" % (
            plain_rc, first_line(read(os.path.join(d, "plain.err")) or plain_out)))
    traced_rc = read(os.path.join(d, "traced.rc")).strip()
    traced_out = read(os.path.join(d, "traced.out"))
    row.eq("exit status with the tracer", plain_rc, traced_rc, show=str)
    if plain_out != traced_out:
        a, b = plain_out.splitlines(), traced_out.splitlines()
        diff = next((i for i in range(max(len(a), len(b)))
                     if (a[i:i + 1] or [None]) != (b[i:i + 1] or [None])), 0)
        row.true("same stdout with the tracer", False, "line %d: %r vs %r" % (
            diff + 1, (a[diff:diff + 1] or [""])[0], (b[diff:diff + 1] or [""])[0]))
    else:
        row.true("same stdout with the tracer", True)
    row.true("the 64 GiB cudaMalloc failed with error 2",
             "64 GiB cudaMalloc -> error 2" in plain_out,
             "demo printed %r (ballast: %s)" % (
                 next((l for l in plain_out.splitlines() if "64 GiB" in l), "nothing"),
                 first_line(read(os.path.join(d, "ballast.log")))))
    t = analyze(build, find_trace(d), d)
    evs = dump_events(build, find_trace(d), d)
    trace_sane(row, t)
    dv = dev0(t)
    pk = dv["peak"]
    nccl = pk["by_owner"]["nccl"]
    row.eq("peak: application bytes", 2048 * MiB, pk["by_owner"]["application"])
    row.eq("peak: stream-ordered bytes", 1280 * MiB, pk["by_kind"]["stream_ordered"])
    row.true("peak: NCCL bytes > 0", nccl > 0, fmt(nccl))
    row.eq("peak: total = 2048 MiB + NCCL", 2048 * MiB + nccl, pk["bytes"])
    row.eq("peak: managed bytes", 0, pk["by_kind"]["managed"])
    im = dv["independent_maxima"]["by_kind"]
    row.true("independent maximum of plain >= 1024 MiB", im["plain"]["bytes"] >= 1024 * MiB,
             fmt(im["plain"]["bytes"]))
    row.eq("independent maximum of stream-ordered", 1280 * MiB, im["stream_ordered"]["bytes"])
    fails = [f for f in t["failed_allocations"]["items"] if f["requested_bytes"] == 64 * GiB]
    row.true("alloc_fail of 64 GiB, result 2, kind plain, api cudaMalloc",
             any(f["result"] == 2 and f["kind"] == "plain" and f["api"] == "cudaMalloc"
                 for f in fails), json.dumps(t["failed_allocations"]["items"])[:300])
    row.eq("host pinned peak", 64 * MiB, t["host_pinned"]["peak_bytes"])
    row.true("address space reserved >= 4096 MiB, not in device totals",
             t["address_space"]["reserved_peak_bytes"] >= 4096 * MiB
             and pk["bytes"] < 4096 * MiB,
             "reserved %s, peak %s" % (fmt(t["address_space"]["reserved_peak_bytes"]),
                                       fmt(pk["bytes"])))
    row.eq("final application bytes", 0, dv["final"]["by_owner"]["application"])
    row.true("dump: alloc 1024 MiB kind=plain api=cudaMalloc",
             count(evs, type="alloc", size=1024 * MiB, kind="plain", api="cudaMalloc"))
    row.true("dump: alloc 512 MiB stream_ordered api=cudaMallocAsync",
             count(evs, type="alloc", size=512 * MiB, kind="stream_ordered",
                   api="cudaMallocAsync"))
    row.true("dump: alloc 1280 MiB stream_ordered flags=1 (_ptsz)",
             count(evs, type="alloc", size=1280 * MiB, kind="stream_ordered", flags=1),
             str(count(evs, type="alloc", size=1280 * MiB))[:200])
    row.true("dump: vmm_create 768 MiB owner=application",
             count(evs, type="vmm_create", size=768 * MiB, owner="application"))
    ncc = count(evs, type="vmm_create", owner="nccl")
    ncp = count(evs, type="alloc", owner="nccl")
    row.true("dump: NCCL's allocations carry owner=nccl (vmm_create, or plain when "
             "NCCL's cuMem support is off)", ncc or ncp,
             "%d vmm_create, %d plain alloc owner=nccl" % (len(ncc), len(ncp)))
    stray = [e for e in evs if e["type"] in ("vmm_create", "alloc")
             and e.get("owner") == "application" and e.get("kind") != "host_pinned"
             and e.get("size") not in (1024 * MiB, 512 * MiB, 768 * MiB, 1280 * MiB)]
    row.true("dump: no other application allocation (NCCL's all attributed)", not stray,
             "; ".join("%s %s %s" % (e["type"], e.get("kind"), fmt(e.get("size")))
                       for e in stray[:5]))
    row.measured = ("peak %s = app %s (so %s + vmm %s) + nccl %s; nccl events %d vmm/%d plain; "
                    "fail %s" % (fmt(pk["bytes"]), fmt(pk["by_owner"]["application"]),
                                 fmt(pk["by_kind"]["stream_ordered"]),
                                 fmt(pk["by_kind"]["vmm_physical"] - nccl), fmt(nccl),
                                 len(ncc), len(ncp),
                                 ",".join("%s r%d" % (fmt(f["requested_bytes"]), f["result"])
                                          for f in t["failed_allocations"]["items"]) or "none"))
    row.note("NCCL's bytes are measured, not by construction: the real NCCL allocates "
             "what its version needs at ncclCommInitAll (the doubles: 2 + 4 MiB); the "
             "demo's zero-count all-reduce is a no-op in real NCCL")
    return row


def curves_rows(build, trace, d):
    """Rows of `curves --csv` (requested view) as dicts (also kept)."""
    exe = os.path.join(build, "gpumemtrace-analyze")
    p = run_tool([exe, "curves", "--csv", trace], d, "curves.csv", "analyzer curves")
    if p.returncode != 0:
        raise Fail("analyzer curves exit %d: %s" % (p.returncode, first_line(p.stderr)))
    lines = p.stdout.splitlines()
    if not lines:
        raise Fail("analyzer curves: no output")
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","))) for line in lines[1:]]


def printed(out, label):
    """The integer the program printed after 'label: ' (None if absent)."""
    for line in out.splitlines():
        if line.startswith(label + ": "):
            try:
                return int(line[len(label) + 2:])
            except ValueError:
                return None
    return None


def ran_both(row, d, name):
    """A program gpu-check.sh ran without and with the tracer (run_pair):
    Skip if it did not run, Fail if it failed without the tracer; the row
    compares the exit status and stdout of both runs. Returns the stdout."""
    plain_rc = read(os.path.join(d, "plain.rc")).strip()
    if plain_rc == "":
        raise Skip(read(os.path.join(d, "skip"), "%s not run" % name).strip())
    if plain_rc == "125":
        raise Skip("not started: the time budget was spent")
    plain_out = read(os.path.join(d, "plain.out"))
    if plain_rc != "0":
        raise Fail("without the tracer the program already fails (exit %s): %s" % (
            plain_rc, first_line(read(os.path.join(d, "plain.err")) or plain_out)))
    row.eq("exit status with the tracer", plain_rc, read(os.path.join(d, "traced.rc")).strip(),
           show=str)
    row.true("same stdout with the tracer", plain_out == read(os.path.join(d, "traced.out")))
    return plain_out


def check_reset(work, build):
    """15: what cudaDeviceReset takes (tests/routes/gpu_reset.c)."""
    d = os.path.join(work, "reset")
    on = read(os.path.join(d, "on")).strip() or "real cudart and driver"
    row = Row("15", "cudaDeviceReset, " + on,
              "same stdout+exit with/without tracer; peak 320 MiB (A 256 plain + V 64 "
              "vmm); the reset releases A (256 MiB, 1 block); right after it the analyzer "
              "holds what the driver still held (V, as the program measured)")
    plain_out = ran_both(row, d, "reset")
    for call in ("cudaMalloc A 256 MiB", "cuMemCreate V 64 MiB", "cuMemMap", "cudaDeviceReset",
                 "cudaMalloc B 128 MiB"):
        row.eq("%s returned" % call, 0, printed(plain_out, call), show=str)
    before = printed(plain_out, "held before the reset")
    v_after = printed(plain_out, "V held after the reset")
    trace = find_trace(d)
    t = analyze(build, trace, d)
    evs = dump_events(build, trace, d)
    trace_sane(row, t)
    dv = dev0(t)
    pk = dv["peak"]
    row.eq("peak", 320 * MiB, pk["bytes"])
    row.eq("peak: plain (A)", 256 * MiB, pk["by_kind"]["plain"])
    row.eq("peak: vmm_physical (V)", 64 * MiB, pk["by_kind"]["vmm_physical"])
    row.true("the program measured A + V before the reset (>= 320 MiB)",
             before is not None and before >= 320 * MiB, fmt(before))
    resets = [e for e in evs if e["type"] == "ctx_destroy" and e.get("aux") == "3"]
    row.eq("CTX_DESTROY events of a reset (aux 3)", 1, len(resets), show=str)
    ctx = dv.get("contexts", {})
    row.eq("released with the reset: bytes (A)", 256 * MiB, ctx.get("released_bytes"))
    row.eq("released with the reset: blocks (A)", 1, ctx.get("released_blocks"), show=str)
    got = None
    if resets:
        ts = str(resets[0]["ts"])
        at = [r for r in curves_rows(build, trace, d) if r.get("device") == "0" and r.get("ts_ns") == ts]
        if at and at[-1].get("outside_bytes", "") != "":
            got = int(at[-1]["outside_bytes"])
    row.eq("device bytes right after the reset: the analyzer's = what V still held "
           "(measured by the program)", v_after, got)
    row.measured = ("peak %s; reset released %s in %s block(s); after it the analyzer holds %s, "
                    "the driver %s (V); destroyed %s" % (
                        fmt(pk["bytes"]), fmt(ctx.get("released_bytes")),
                        ctx.get("released_blocks"), fmt(got), fmt(v_after), ctx.get("destroyed")))
    if v_after == 0:
        row.note("the driver released the VMM allocation with the reset: the analyzer keeps "
                 "VMM handles through a context's destruction (docs/analyzer.md, Contexts); "
                 "change ev_ctx in analyzer/engines/gmt_replay.c")
    return row


def check_graph(work, build):
    """16: CUDA graphs' memory nodes (tests/routes/gpu_graph.c)."""
    d = os.path.join(work, "graph")
    on = read(os.path.join(d, "on")).strip() or "real driver"
    row = Row("16", "CUDA graph memory nodes, " + on,
              "same stdout+exit with/without tracer; 2 captured allocations (A 64 + B 32 MiB) "
              "in no device total; the graph pool sample at the boundary after the launch == "
              "what the program read itself (reserved, its high, used, its high)")
    plain_out = ran_both(row, d, "graph")
    own = None
    for line in plain_out.splitlines():
        if line.startswith("graph pool after the launch: "):
            own = [int(x) for x in line.split(":", 1)[1].split()]
    if own is None or len(own) != 4:
        raise Fail("the program printed no graph pool reading")
    trace = find_trace(d)
    t = analyze(build, trace, d)
    evs = dump_events(build, trace, d)
    trace_sane(row, t)
    dv = dev0(t)
    gm = dv.get("graph_memory") or {}
    row.eq("captured allocations", 2, gm.get("captured_allocations"), show=str)
    row.eq("captured bytes (A + B)", 96 * MiB, gm.get("captured_bytes"))
    row.eq("stream-ordered bytes in the device totals", 0, dv["independent_maxima"]["by_kind"]["stream_ordered"]["bytes"])
    row.true("captured allocations flagged in the dump (flags=2)",
             len(count(evs, type="alloc", kind="stream_ordered", flags=2)) == 2,
             str(count(evs, type="alloc", kind="stream_ordered"))[:200])
    sample = None
    last = None
    for e in evs:
        if e["type"] == "graph_mem":
            last = e
        elif e["type"] == "range_begin":
            sample = last
            break
        else:
            last = None
    got = None
    if sample:
        got = [int(sample["addr"], 0), int(sample["size"]), int(sample["stream"], 0), int(sample["aux"])]
    row.eq("graph pool sampled at the boundary (reserved, high, used, high) == the program's reading",
           own, got, show=str)
    row.measured = "program: reserved %s (high %s), used %s (high %s); trace: %s" % (
        fmt(own[0]), fmt(own[1]), fmt(own[2]), fmt(own[3]),
        "none" if got is None else "%s %s %s %s" % tuple(fmt(v) for v in got))
    if own[1] < 96 * MiB:
        row.note("the driver reserved less than the graph's 96 MiB at its peak: %s" % fmt(own[1]))
    return row


ALLOC_DIRS = {"alloc-native": "2", "alloc-expandable": "3", "alloc-async": "4"}


def before_exit_release(row, dv, fin, kind):
    """The job measured itself before exiting; if the runtime destroyed the
    context as the process ended (CTX_DESTROY after the job's allocations),
    the analyzer's final bytes are what was left after the driver took the
    context's blocks: those blocks, all of the row's one kind, are added
    back (docs/analyzer.md, Contexts) and the row says so."""
    ctx = dv.get("contexts") or {}
    released = ctx.get("released_bytes") or 0
    if not released:
        return fin
    fin = json.loads(json.dumps(fin))
    fin["by_kind"][kind] += released
    fin["bytes"] += released
    row.note("a context was destroyed at the end (%d time(s)), taking %s the job had not "
             "freed: compared with final + that" % (ctx.get("destroyed", 0), fmt(released)))
    return fin


def skip_if_marked(d):
    """gpu-check.sh leaves DIR/skip with the reason when a check cannot run."""
    skip = read(os.path.join(d, "skip")).strip()
    if skip:
        raise Skip(skip)


def torch_run(d, name="result.json"):
    """The result of one gpu_torch.py run; Skip when torch is missing."""
    skip_if_marked(d)
    path = os.path.join(d, name)
    if not os.path.isfile(path):
        rc = read(path[:-len(".json")] + ".rc").strip() or read(os.path.join(d, "rc")).strip()
        if rc == "125":
            raise Skip("%s: not started, the time budget was spent" % name)
        why = {"124": " (timed out)", "137": " (killed after the time-out)"}.get(rc, "")
        log = read(path[:-len(".json")] + ".log") or read(os.path.join(d, "run.log"))
        raise Fail("%s missing: the program exited %s%s; log ends: %s" % (
            name, rc or "?", why, (log.strip().splitlines() or ["(empty)"])[-1][:200]))
    r = read_json(path)
    if r.get("error"):
        if "No module named 'torch'" in r["error"]:
            raise Skip("torch is not installed: " + r["error"])
        raise Fail("the PyTorch program failed: %s (see %s)" % (r["error"][:300], d))
    return r


def check_alloc(work, build, which):
    d = os.path.join(work, which)
    rid = ALLOC_DIRS[which]
    if which == "alloc-native":
        row = Row(rid, "PyTorch caching allocator (native)",
                  "trace plain final == memory_reserved() (616 MiB by construction); "
                  "plain peak == max_memory_reserved() (768 MiB)")
    elif which == "alloc-expandable":
        row = Row(rid, "PyTorch expandable_segments:True",
                  "trace vmm_physical final == memory_reserved(); peak == "
                  "max_memory_reserved(); address reservations never counted")
    else:
        row = Row(rid, "PyTorch backend:cudaMallocAsync",
                  "stream-ordered alloc events (api=cudaMallocAsync); final stream-ordered "
                  "== live requested bytes; compared with memory_allocated()")
    r = torch_run(d)
    trace = find_trace(d, r)
    t = analyze(build, trace, d)
    evs = dump_events(build, trace, d)
    trace_sane(row, t)
    dv = dev0(t)
    fin, pk, im = dv["final"], dv["peak"], dv["independent_maxima"]["by_kind"]
    fin = before_exit_release(row, dv, fin, "stream_ordered" if which == "alloc-async" else "plain")
    end = r["end"]
    if which == "alloc-native":
        row.eq("final plain == memory_reserved()", end["reserved"], fin["by_kind"]["plain"])
        row.eq("plain maximum == max_memory_reserved()", end["max_reserved"],
               im["plain"]["bytes"])
        row.eq("device peak == max_memory_reserved()", end["max_reserved"], pk["bytes"])
        n = len(count(evs, type="alloc", kind="plain", api="cudaMalloc"))
        row.eq("cudaMalloc segments (alloc events) == segment.all.allocated",
               r["stats"].get("segment.all.allocated"), n, show=str)
        row.measured = "final plain %s vs reserved %s; plain max %s vs max_reserved %s" % (
            fmt(fin["by_kind"]["plain"]), fmt(end["reserved"]), fmt(im["plain"]["bytes"]),
            fmt(end["max_reserved"]))
        if end["reserved"] != 616 * MiB or end["max_reserved"] != 768 * MiB:
            row.note("torch's own counters differ from construction (616/768 MiB): "
                     "reserved %s, max %s: the allocator's rounding changed" % (
                         fmt(end["reserved"]), fmt(end["max_reserved"])))
    elif which == "alloc-expandable":
        row.eq("final vmm_physical == memory_reserved()", end["reserved"],
               fin["by_kind"]["vmm_physical"])
        row.eq("vmm_physical maximum == max_memory_reserved()", end["max_reserved"],
               im["vmm_physical"]["bytes"])
        row.eq("device peak == max_memory_reserved()", end["max_reserved"], pk["bytes"])
        row.eq("final plain bytes", 0, fin["by_kind"]["plain"])
        asp = t["address_space"]["reserved_peak_bytes"]
        row.true("address space reserved (> peak) is not in device totals",
                 asp > pk["bytes"], "reserved %s, peak %s" % (fmt(asp), fmt(pk["bytes"])))
        row.measured = ("final vmm %s vs reserved %s; vmm max %s vs max_reserved %s; "
                        "address space %s (%d reservations, %d maps)" % (
                            fmt(fin["by_kind"]["vmm_physical"]), fmt(end["reserved"]),
                            fmt(im["vmm_physical"]["bytes"]), fmt(end["max_reserved"]),
                            fmt(asp), t["address_space"]["reservations"], t["vmm"]["maps"]))
    else:
        so = count(evs, type="alloc", kind="stream_ordered")
        row.true("stream-ordered alloc events present (>= 5)", len(so) >= 5, str(len(so)))
        row.true("their api is cudaMallocAsync",
                 so and all(e.get("api") == "cudaMallocAsync" for e in so),
                 ",".join(sorted({e.get("api", "?") for e in so})))
        live = r["live_requested_bytes"]
        row.eq("final stream-ordered == live requested bytes", live,
               fin["by_kind"]["stream_ordered"])
        row.eq("stream-ordered maximum == 3 x 256 MiB", 768 * MiB,
               im["stream_ordered"]["bytes"])
        pools = t.get("pools", [])
        pool_used = pools[-1]["used_current_bytes"] if pools else None
        row.measured = ("%d async allocs; final so %s; torch allocated %s, reserved %s; "
                        "last pool sample used %s" % (
                            len(so), fmt(fin["by_kind"]["stream_ordered"]),
                            fmt(end["allocated"]), fmt(end["reserved"]), fmt(pool_used)))
        if end["allocated"] != fin["by_kind"]["stream_ordered"]:
            row.note("memory_allocated() reads the pool's USED_MEM_CURRENT, which counts "
                     "what the pool hands out (rounded up by the pool); the trace counts "
                     "requested bytes: difference %d B" % (
                         end["allocated"] - fin["by_kind"]["stream_ordered"]))
    if row.status() == "FAIL":
        row.note("replay of the dump up to the program's measuring instant: %s" %
                 json.dumps(replay_at(evs, end.get("mono_ns"))))
    return row


def replay_at(evs, ts):
    """Live bytes by kind at ts from the raw events (a second opinion)."""
    live, vmm, tot = {}, {}, {}
    for e in evs:
        if ts is not None and e.get("ts", 0) > ts:
            break
        ty = e["type"]
        if ty == "alloc" and e.get("kind") != "host_pinned":
            live[e["addr"]] = (e["kind"], e["size"])
        elif ty == "free":
            live.pop(e["addr"], None)
        elif ty == "vmm_create":
            vmm[e["addr"]] = e["size"]
        elif ty == "vmm_release":
            vmm.pop(e["addr"], None)
    for k, s in live.values():
        tot[k] = tot.get(k, 0) + s
    tot["vmm_physical (create-release)"] = sum(vmm.values())
    return tot


def check_nccl(work, build):
    d = os.path.join(work, "nccl")
    row = Row("5", "torch.distributed NCCL, 1 rank",
              "all_reduce right; allocations with owner=nccl exist, bytes > 0")
    r = torch_run(d)
    row.true("all_reduce result right", r.get("all_reduce_ok"))
    trace = find_trace(d, r)
    t = analyze(build, trace, d)
    evs = dump_events(build, trace, d)
    trace_sane(row, t)
    dv = dev0(t)
    ncc = count(evs, type="vmm_create", owner="nccl")
    ncp = count(evs, type="alloc", owner="nccl")
    nb = sum(e["size"] for e in ncc + ncp)
    begins = count(evs, type="nccl_begin")
    row.true("NCCL set-up calls seen (nccl_begin)", begins, "none")
    row.true("allocations with owner=nccl", ncc or ncp, "none among %d events" % len(evs))
    row.true("their bytes > 0", nb > 0, fmt(nb))
    row.measured = ("%d nccl_begin; owner=nccl: %d vmm_create + %d alloc = %s; peak nccl %s; "
                    "NCCL %s" % (len(begins), len(ncc), len(ncp), fmt(nb),
                                 fmt(dv["peak"]["by_owner"]["nccl"]), r.get("nccl")))
    row.note("NCCL memory is invisible to torch: memory_reserved() at the end %s" %
             fmt(r["end"]["reserved"]))
    return row


def check_oom(work, build):
    d = os.path.join(work, "oom")
    row = Row("6", "out of memory (torch.empty 200 GiB)",
              "alloc_fail 214748364800 B, result 2; 200 GiB + 1 B -> 214750461952 B "
              "(2 MiB rounding); the exception unchanged by the tracer")
    r = torch_run(d)
    p = torch_run(d, "result-plain.json")
    for i, (a, b) in enumerate(zip(p["attempts"], r["attempts"])):
        row.true("attempt %d raised" % i, b.get("exception"), "no exception")
        row.eq("attempt %d exception type with/without tracer" % i, a.get("exception"),
               b.get("exception"), show=str)
        ma, mb = a.get("message", ""), b.get("message", "")
        if ma != mb:
            same = re.sub(r"[0-9.]+", "N", ma) == re.sub(r"[0-9.]+", "N", mb)
            row.true("attempt %d message unchanged (up to numbers)" % i, same,
                     "%r vs %r" % (ma[:160], mb[:160]))
            if same:
                row.note("attempt %d: only numbers differ: %r vs %r" % (i, ma, mb))
    trace = find_trace(d, r)
    t = analyze(build, trace, d)
    evs = dump_events(build, trace, d)
    trace_sane(row, t)
    items = t["failed_allocations"]["items"]
    sizes = {}
    for f in items:
        sizes.setdefault(f["requested_bytes"], []).append(f["result"])
    want = 200 * GiB
    row.true("alloc_fail of exactly 200 GiB with result 2",
             2 in sizes.get(want, []), "seen: %s" % sizes)
    rounded = 200 * GiB + 2 * MiB
    row.note("200 GiB + 1 B was requested from the driver as %s (expected %d B: the "
             "caching allocator rounds large requests up to 2 MiB)" % (
                 ", ".join(str(s) for s in sizes if s not in (want,)) or "nothing", rounded))
    row.measured = "alloc_fail: %s; torch num_ooms %s, retries %s" % (
        "; ".join("%d B x%d (results %s)" % (s, len(v), sorted(set(v)))
                  for s, v in sorted(sizes.items())), r.get("num_ooms"),
        r.get("num_alloc_retries"))
    row.note("several alloc_fail per request: the caching allocator frees its cached "
             "blocks and retries cudaMalloc before it raises")
    # The companion's FW_RETRIES (memory_stats num_alloc_retries, num_ooms,
    # recorded when they change): the last one is the job's final count.
    fr = [e for e in evs if e["type"] == "fw_retries"]
    row.true("FW_RETRIES recorded", fr, "none")
    if fr:
        row.eq("last FW_RETRIES = memory_stats (num_alloc_retries, num_ooms)",
               (r.get("num_alloc_retries"), r.get("num_ooms")),
               (int(fr[-1]["addr"], 16), fr[-1]["size"]), show=str)
    return row


def nccl_code(version):
    """NCCL_VERSION_CODE of "2.27.3": major x 10000 + minor x 100 + patch
    (the encoding since 2.9); None when unknown."""
    try:
        a, b, c = (int(x) for x in version.split(".")[:3])
    except (AttributeError, ValueError):
        return None
    return a * 10000 + b * 100 + c


def trace_versions(dump_text):
    """What a trace says of the libraries (gmt-dump's text): META records
    as dicts, and MODULE records with soname and file as dicts."""
    metas, modules = [], []
    for line in dump_text.splitlines():
        if line.startswith("META "):
            metas.append(dict(kv.split("=", 1) for kv in line[5:].split(" ") if "=" in kv))
        elif line.startswith("MODULE ") and " soname=" in line:
            head, _, rest = line.partition(" path=")
            path, _, tail = rest.partition(" soname=")
            soname, _, file = tail.partition(" file=")
            modules.append({"path": path, "soname": soname, "file": file})
    return metas, modules


def judge_versions(row, r, dump_text):
    """Row 18 on one traced run: the runtime's and NCCL's versions recorded
    (META) equal what the libraries say in the job (r: gpu_torch nccl's
    result), and the runtime's MODULE names its soname and file."""
    metas, modules = trace_versions(dump_text)
    rt = [m for m in metas if "cuda_runtime_version" in m]
    nc = [m for m in metas if "nccl_version" in m]
    cudart = r.get("cudart") or {}
    row.true("the job read its runtime's version", "version" in cudart and cudart.get("result") == 0,
             str(cudart))
    want_rt = str(cudart.get("version"))
    got_rt = [m for m in rt if os.path.realpath(m.get("cuda_runtime_file", "")) ==
              os.path.realpath(cudart.get("path", "?"))]
    row.true("META for the runtime the job loaded (%s)" % cudart.get("path"), got_rt,
             "runtimes recorded: %s" % rt)
    if got_rt:
        row.eq("its cuda_runtime_version", want_rt, got_rt[0]["cuda_runtime_version"], show=str)
    want_nc = nccl_code(r.get("nccl"))
    row.true("one META nccl_version", len(nc) == 1, "recorded: %s" % nc)
    if nc and want_nc is not None:
        row.eq("nccl_version = torch.cuda.nccl.version() %s" % r.get("nccl"), str(want_nc),
               nc[0]["nccl_version"], show=str)
    mods = [m for m in modules if os.path.basename(m["path"]).startswith("libcudart")]
    row.true("MODULE records of libcudart", mods, "none of %d modules" % len(modules))
    for m in mods[:1]:
        row.true("its soname starts with libcudart", m["soname"].startswith("libcudart"), m["soname"])
        row.true("its file resolves", bool(m["file"]) and os.path.isfile(m["file"]), m["file"])
    row.measured = "runtime %s; nccl %s; libcudart soname %s file %s" % (
        [m.get("cuda_runtime_version") for m in rt], [m.get("nccl_version") for m in nc],
        mods[0]["soname"] if mods else "-", mods[0]["file"] if mods else "-")


def check_versions(work, build):
    d = os.path.join(work, "nccl")
    row = Row("18", "library versions in the trace",
              "META cuda_runtime_version = the loaded libcudart's cudaRuntimeGetVersion; "
              "META nccl_version = torch.cuda.nccl.version(); libcudart's MODULE with soname and file")
    r = torch_run(d)
    trace = find_trace(d, r)
    exe = os.path.join(build, "tests", "tools", "gmt-dump")
    p = run_tool([exe, trace], d, "dump-versions.txt", "gmt-dump")
    judge_versions(row, r, p.stdout)
    return row


def check_train(work, build):
    d = os.path.join(work, "train")
    row = Row("7", "E. overhead: 50 MLP+AdamW steps",
              "median step time traced / untraced <= 1.10 (best of 2 runs each)")
    skip_if_marked(d)

    def runs(kind):
        done = sorted(glob.glob(os.path.join(d, kind + "-*.json")))
        if not done:  # raises Skip or Fail with the first run's reason
            torch_run(d, kind + "-1.json")
        return [torch_run(d, os.path.basename(f)) for f in done]
    plain, traced = runs("plain"), runs("traced")
    bp = min(x["median_step_ms"] for x in plain)
    bt = min(x["median_step_ms"] for x in traced)
    ratio = bt / bp
    row.true("median step ratio <= 1.10", ratio <= 1.10, "%.3f" % ratio)
    walls = {}
    for kind in ("plain", "traced"):
        w = read(os.path.join(d, kind + ".wall")).split()
        walls[kind] = min(float(x) for x in w) if w else None
    wr = (walls["traced"] / walls["plain"]) if walls["plain"] and walls["traced"] else None
    row.measured = ("traced/untraced median step ratio %.3f: %.3f ms vs %.3f ms; runs %s vs %s; "
                    "process wall %s vs %s s (ratio %s)" % (
                        ratio, bt, bp,
                        "/".join("%.3f" % x["median_step_ms"] for x in traced),
                        "/".join("%.3f" % x["median_step_ms"] for x in plain),
                        walls["traced"], walls["plain"],
                        "%.3f" % wr if wr else "?"))
    try:
        trace = find_trace(d, traced[0])
        t = analyze(build, trace, d)
        row.note("traced run: %d events, %d dropped, trace %d B" % (
            t["events"]["total"], t["drops"]["events"], t["decode"]["file_size"]))
    except Fail as e:
        row.note("trace of the traced run: %s" % e)
    return row


def check_context(work, build):
    d = os.path.join(work, "alloc-native")
    row = Row("8", "completeness vs cuMemGetInfo / nvidia-smi",
              "informational: device used - traced live = CUDA context + other processes")
    r = torch_run(d)
    t = json.loads(read(os.path.join(d, "summary.json")) or "null") or {"traces": [None]}
    t = t["traces"][0]
    if t is None:
        t = analyze(build, find_trace(d, r), d)
    dv = dev0(t)
    end = r["end"]
    used = end["mem_get_info_total"] - end["mem_get_info_free"]
    live = dv["final"]["bytes"]
    smi = r.get("nvidia_smi_used_mib", {})
    mine = smi.get(str(r["pid"])) if isinstance(smi, dict) else None
    last = (dv.get("meminfo") or {}).get("latest")
    row.measured = ("cuMemGetInfo used %s; traced live %s; untraced %s; nvidia-smi this "
                    "process %s MiB; processes %s; last MEMINFO sample %s" % (
                        fmt(used), fmt(live), fmt(used - live), mine,
                        json.dumps(smi), json.dumps(last)))
    row.note("the untraced part is the CUDA context (hundreds of MiB), cuBLAS/driver "
             "internals, and any other process on the GPU: no allocation call shows it")
    row.items.append({"info": True})
    return row


# ---------------------------------------------------------------- phases
#
# Issue 3's checks compare what a job measured of itself, phase by phase
# (gmt_example.py measure, gpu_torch.py phases/nccl/oom: "phases", a list of
# {name, occurrence, before, peak, after, ok, error} with allocated_bytes and
# reserved_bytes), with `gpumemtrace-analyze phases --json` of its trace
# (schemas/report.schema.json, phases_report): per occurrence, on one
# device, in the requested view, "before" against the start values, "after"
# against the end values, "peak" against max_allocated / max_reserved. The
# functions below take the parsed documents, so tests/gpu/test_gpu_eval.py
# feeds them hand-made jobs and real analyzer output from the test doubles.

# The tracer samples cuMemGetInfo and the pools at a synchronisation at most
# every 10 ms (preload/gmt_preload_state.c, SAMPLE_PERIOD_NS). A pool sample
# taken at the boundary's own synchronize is younger than FRESH_NS when the
# boundary is recorded; an older one may predate the job's reading.
FRESH_NS = 1000000
# The most a stream-ordered pool is assumed to round one allocation up (its
# page). An ASSUMPTION to bound the "pool rounding" explanation; the measured
# column gives the differences, so the first GPU run tells the real one.
POOL_GRANULE = 2 * MiB
ALLOC_SOURCES = {"native": ("framework events", "framework segments"),
                 "pool": ("driver stream-ordered events", "pool attributes")}


def phases_doc(build, trace, d):
    """The trace's entry of `phases --json` (kept as phases.json, phases.txt)."""
    return analyzer_doc(build, "phases", trace, d)


def find_phase(pt, name):
    for ph in pt.get("phases") or []:
        if ph.get("name") == name:
            return ph
    return None


def find_occurrence(pt, name, k):
    ph = find_phase(pt, name)
    for o in (ph or {}).get("listed") or []:
        if o.get("occurrence") == k:
            return o
    return None


def figures(occ, device=0, view="requested"):
    """An occurrence's figures of one device and view, or None."""
    for d in (occ or {}).get("devices") or []:
        if d.get("ordinal") == device:
            return d.get(view)
    return None


def compare_occurrences(row, job_phases, pt):
    """Occurrence counts per name as the job ran them, the first cold and
    the others warm (the warm aggregate counts them), and no phase the job
    did not mark. Returns {name: count}."""
    counts = {}
    for r in job_phases:
        counts[r["name"]] = counts.get(r["name"], 0) + 1
    for name, n in counts.items():
        ph = find_phase(pt, name)
        if ph is None:
            row.true("phase %s in the analyzer's report" % name, False, "absent")
            continue
        row.eq("%s: occurrences" % name, n, ph.get("occurrences"), show=str)
        temps = [o.get("temperature") for o in ph.get("listed") or []]
        row.eq("%s: temperatures (first cold, later warm)" % name,
               ["cold"] + ["warm"] * (n - 1), temps, show=str)
        warm = ph.get("warm")
        row.eq("%s: occurrences in the warm aggregate" % name, n - 1,
               warm.get("occurrences") if warm else 0, show=str)
    extra = [ph.get("name") for ph in pt.get("phases") or [] if ph.get("name") not in counts]
    row.true("no phase in the report that the job did not mark", not extra,
             ", ".join(map(str, extra)))
    return counts


def _pool_reserved_why(want, got, values, boundary_ts):
    """Explanation of a pool-sourced reserved value below the job's, or None."""
    ts = (values or {}).get("device_used_sample_ts_ns")
    if got is None or want is None or got > want or ts is None or boundary_ts is None:
        return None
    age = boundary_ts - ts
    if age <= FRESH_NS:
        return None  # the sample is the boundary's own: no excuse
    return ("the latest pool sample is %.3f ms older than the boundary (samples at "
            "synchronisations, at most every 10 ms): it predates the job's reading" %
            (age / 1e6))


def _pool_allocated_why(want, got, blocks):
    """Explanation of driver stream-ordered bytes below the pool's used bytes
    (torch reads USED_MEM_CURRENT/HIGH, which rounds each allocation up), or
    None when the difference is the wrong way or too large."""
    if got is None or want is None or got > want:
        return None
    if blocks is None:
        return ("pool rounding: the pool's used bytes count whole pool granules, the "
                "trace the requested bytes (live blocks not counted: no bound applied)")
    if want - got <= blocks * POOL_GRANULE:
        return ("pool rounding: %d B over %d live blocks (at most %d B each assumed)" % (
            want - got, blocks, POOL_GRANULE))
    return None


def compare_levels(row, job_phases, pt, device=0, mode="native", live_blocks=None):
    """Each job occurrence against the analyzer's (requested view, device).
    mode "native": every value equal to the byte (a value the analyzer does
    not know yet, before the first framework event, must be the job's 0).
    mode "pool" (cudaMallocAsync): allocated from the driver's stream-ordered
    events and reserved from pool samples; allocated may be below the job's
    by the pool's rounding (bounded by live_blocks(ts) x POOL_GRANULE when
    live_blocks is given), reserved may lag when the sample is stale; the
    peak allocated lies between the requested and held views' maxima (plus
    the rounding). Sources are checked once per device."""
    srcs = ALLOC_SOURCES["pool" if mode == "pool" else "native"]
    seen_src = set()
    for r in job_phases:
        tag = "%s #%d" % (r["name"], r["occurrence"])
        occ = find_occurrence(pt, r["name"], r["occurrence"])
        if occ is None:
            row.true("%s in the analyzer's report" % tag, False, "not listed")
            continue
        f = figures(occ, device, "requested")
        if f is None:
            row.true("%s: device %d in the analyzer's report" % (tag, device), False, "absent")
            continue
        held = figures(occ, device, "held") or {}
        for side, key, ts in (("before", "start", occ.get("begin_ts_ns")),
                              ("after", "end", occ.get("end_ts_ns"))):
            job = r.get(side)
            if job is None:
                row.note("%s: the job could not read its %s values (%s)" % (
                    tag, side, r.get("read_error", "?")))
                continue
            vals = f.get(key)
            for q in ("allocated", "reserved"):
                want = job.get(q + "_bytes")
                got = None if vals is None else vals.get(q + "_bytes")
                src = None if vals is None else vals.get(q + "_source")
                what = "%s %s %s" % (tag, key, q)
                if src is not None and (q, src) not in seen_src:
                    seen_src.add((q, src))
                    row.eq("%s source" % q, srcs[0 if q == "allocated" else 1], src, show=str)
                why = None
                if got is None and want == 0:
                    why = "unknown to the analyzer (no %s event yet); the job's 0" % (
                        "framework or stream-ordered" if q == "allocated" else "segment or pool")
                elif mode == "pool" and q == "allocated":
                    why = _pool_allocated_why(want, got, live_blocks(ts) if live_blocks and
                                              ts is not None else None)
                elif mode == "pool":
                    why = _pool_reserved_why(want, got, vals, ts)
                row.level(what, want, got, why)
        peak = r.get("peak")
        if peak is None:
            continue
        for q, fig in (("allocated", "max_allocated"), ("reserved", "max_reserved")):
            m = f.get(fig) or {}
            want, got = peak.get(q + "_bytes"), m.get("bytes")
            why = None
            if got is None and want == 0:
                why = "unknown to the analyzer; the job's 0"
            elif mode == "pool" and q == "allocated" and got is not None and want is not None:
                hfig = held.get(fig) or {}
                hm = hfig.get("bytes")
                hb = live_blocks(hfig.get("ts_ns")) if live_blocks and hm is not None else None
                top = (hm if hm is not None else got)
                if got <= want and (hb is None or want <= top + hb * POOL_GRANULE):
                    why = ("pool high-water mark %d B: between the requested-view maximum %d B "
                           "and the held-view maximum %s B%s (frees reach the pool in stream "
                           "order; the pool rounds up)" % (
                               want, got, hm, "" if hb is None else
                               " + %d blocks x %d B" % (hb, POOL_GRANULE)))
            elif mode == "pool":
                why = _pool_reserved_why(want, got, f.get("end"), occ.get("end_ts_ns"))
            row.level("%s peak %s" % (tag, q), want, got, why)


def levels_summary(row, counts):
    n = row.outcomes()
    return "%d occurrences of %d phases (%s); %d values: %d equal, %d explained, %d differ" % (
        sum(counts.values()), len(counts),
        ", ".join("%s x%d" % kv for kv in counts.items()),
        sum(n.values()), n["equal"], n["explained"], n["differs"])


def live_blocks_from_dump(evs):
    """live(ts): stream-ordered blocks live at ts, replayed from the dump
    (for the pool-rounding bound)."""
    steps, live = [], set()
    for e in evs:
        if e["type"] == "alloc" and e.get("kind") == "stream_ordered":
            live.add(e.get("addr"))
        elif e["type"] == "free" and e.get("addr") in live:
            live.discard(e.get("addr"))
        else:
            continue
        steps.append((e.get("ts", 0), len(live)))

    def at(ts):
        n = 0
        for t, c in steps:
            if t > ts:
                break
            n = c
        return n
    return at


def compare_nccl_outside(row, pt, phase, device=0, dump_nccl_allocations=None):
    """C: NCCL's memory is outside the framework, with owner nccl: at the
    end of `phase` (the communicator's set-up) the outside bytes of owner
    nccl are > 0; the report's outside allocations of owner nccl exist and,
    when the dump's count of owner=nccl allocations (blocks and VMM handles)
    is given, there are as many (each was never inside a framework segment).
    Owners are read by key: the owner set may grow (cublas, cudnn)."""
    occ = find_occurrence(pt, phase, 1)
    f = figures(occ, device)
    end = (f or {}).get("end") or {}
    owners = end.get("outside_by_owner") or {}
    nb = owners.get("nccl", 0)
    row.true("%s end: outside bytes of owner nccl > 0" % phase, nb > 0,
             "%s" % (json.dumps(owners) if f else "phase %s not in the report" % phase))
    dv = next((d for d in pt.get("devices") or [] if d.get("ordinal") == device), {})
    oa = dv.get("outside_allocations") or {}
    cnt = (oa.get("count_by_owner") or {}).get("nccl", 0)
    row.true("outside allocations of owner nccl listed", cnt > 0 and any(
        x.get("owner") == "nccl" for x in oa.get("largest") or []),
        "count %d, largest: %s" % (cnt, ", ".join(
            "%s %s" % (x.get("owner"), fmt(x.get("bytes"))) for x in (oa.get("largest") or [])[:5])))
    if dump_nccl_allocations is not None:
        row.eq("outside allocations of owner nccl == owner=nccl allocations in the dump",
               dump_nccl_allocations, cnt, show=str)
    return nb, owners, cnt


def compare_oom_phase(row, job_rec, pt, want_bytes, device=0):
    """D: the job's failed phase is marked failed, with the failing request's
    size (the first out-of-memory inside it: the driver's ALLOC_FAIL or the
    framework's FW_OOM; both carry the request) and values at the failure."""
    name, k = job_rec["name"], job_rec["occurrence"]
    err = job_rec.get("error") or {}
    row.true("the job's %s failed with out of memory" % name,
             not job_rec.get("ok") and err.get("out_of_memory"),
             "ok=%s error=%s" % (job_rec.get("ok"), json.dumps(err)[:200]))
    ph = find_phase(pt, name)
    occ = find_occurrence(pt, name, k)
    if occ is None:
        row.true("%s #%d in the analyzer's report" % (name, k), False, "absent")
        return None
    fail = occ.get("failure")
    row.true("%s #%d marked failed" % (name, k), fail is not None, "failure is null")
    row.true("%s: failed count >= 1" % name, (ph or {}).get("failed", 0) >= 1,
             str((ph or {}).get("failed")))
    if fail is None:
        return None
    row.eq("%s #%d: failing request" % (name, k), want_bytes, fail.get("requested_bytes"))
    row.eq("%s #%d: failing device" % (name, k), device, fail.get("device"), show=str)
    f = figures(occ, fail.get("device", device)) or {}
    row.true("%s #%d: values at the failure" % (name, k), f.get("at_failure") is not None,
             "at_failure is null")
    return fail


def phase_row_common(row, r, trace_d, build):
    """Trace, phases document and sanity of one job run (r: its JSON)."""
    trace = find_trace(trace_d, r)
    pt = phases_doc(build, trace, trace_d)
    row.true("phases report: trace ended cleanly", pt.get("status") == "clean",
             "status %s" % pt.get("status"))
    an = {k: v for k, v in (pt.get("range_anomalies") or {}).items() if v}
    row.true("no range anomalies (unmatched ends, name mismatches, dropped ranges)",
             not an, json.dumps(an))
    return trace, pt


def check_measure(work, build):
    """A: gmt_example.py measure under the tracer, against `phases`."""
    d = os.path.join(work, "measure")
    row = Row("9", "A. example measure: job vs phases",
              "per occurrence (model_load, inputs, cold_forward, warmup, warm_forward x3): "
              "job before/after allocated+reserved == analyzer start/end, job peaks == "
              "max allocated/max reserved; to the byte (native allocator, requested view)")
    r = torch_run(d)
    jp = r.get("phases") or []
    if not jp:
        raise Fail("the job recorded no phase (log: %s)" % first_line(
            read(os.path.join(d, "result.log"))))
    row.true("the job completed every phase", r.get("completed"),
             "; ".join("%s #%d: %s" % (p["name"], p["occurrence"], (p.get("error") or {})
                                        .get("message", "")[:120])
                       for p in jp if not p.get("ok")))
    _, pt = phase_row_common(row, r, d, build)
    counts = compare_occurrences(row, jp, pt)
    compare_levels(row, jp, pt)
    row.measured = levels_summary(row, counts)
    return row


PHASE_RUNS = {"phases-native": ("10", "B. training phases, native allocator", "native"),
              "phases-expandable": ("11", "B. training phases, expandable_segments:True",
                                    "native"),
              "phases-async": ("12", "B. training phases, backend:cudaMallocAsync", "pool")}


def check_phases(work, build, which):
    """B: 5 steps of forward/backward/optimizer_step under the tracer."""
    rid, title, mode = PHASE_RUNS[which]
    d = os.path.join(work, which)
    if mode == "pool":
        exp = ("at every boundary: allocated (source: driver stream-ordered events) <= "
               "job's memory_allocated() by at most the pool's rounding; reserved (source: "
               "pool attributes) == memory_reserved(); peaks likewise; forward/backward/"
               "optimizer_step 5 occurrences each, 1 cold + 4 warm")
    else:
        exp = ("at every boundary: job memory_allocated()/memory_reserved() == analyzer "
               "allocated/reserved (framework events/segments), peaks == max allocated/"
               "reserved, to the byte; forward/backward/optimizer_step 5 occurrences each, "
               "1 cold + 4 warm")
    row = Row(rid, title, exp)
    r = torch_run(d)
    jp = r.get("phases") or []
    if not jp:
        raise Fail("the job recorded no phase")
    _, pt = phase_row_common(row, r, d, build)
    live = None
    if mode == "pool":
        try:
            live = live_blocks_from_dump(dump_events(build, find_trace(d, r), d))
        except Fail as e:
            row.note("no dump for the rounding bound: %s" % e)
    counts = compare_occurrences(row, jp, pt)
    compare_levels(row, jp, pt, mode=mode, live_blocks=live)
    row.measured = levels_summary(row, counts) + "; backend %s, conf %r" % (
        r.get("backend"), r.get("conf"))
    return row


def check_nccl_phases(work, build):
    """C: the NCCL run's phases: NCCL memory outside, owner nccl."""
    d = os.path.join(work, "nccl")
    row = Row("13", "C. NCCL memory outside the framework in phases",
              "nccl_init end: outside of owner nccl > 0; outside allocations of owner nccl "
              "== owner=nccl allocations in the dump; job levels == analyzer at every "
              "boundary (NCCL not in reserved)")
    r = torch_run(d)
    jp = r.get("phases") or []
    trace, pt = phase_row_common(row, r, d, build)
    evs = dump_events(build, trace, d)
    n = len([e for e in evs if e.get("owner") == "nccl" and (
        e["type"] == "vmm_create" or (e["type"] == "alloc" and e.get("kind") != "host_pinned"))])
    nb, owners, cnt = compare_nccl_outside(row, pt, "nccl_init", dump_nccl_allocations=n)
    counts = compare_occurrences(row, jp, pt) if jp else {}
    compare_levels(row, jp, pt)
    row.measured = "nccl_init end: outside %s; outside allocations of owner nccl %d; %s" % (
        ", ".join("%s %s" % (k, fmt(v)) for k, v in sorted(owners.items())), cnt,
        levels_summary(row, counts))
    return row


def check_oom_phase(work, build):
    """D: the out-of-memory forward, phase oom_forward, marked failed."""
    d = os.path.join(work, "oom")
    row = Row("14", "D. out of memory inside a phase",
              "phase oom_forward failed; failing request 214748364800 B (200 GiB: "
              "Linear(1024,1024) on 52428800 rows); values at the failure")
    r = torch_run(d)
    jp = [p for p in r.get("phases") or [] if p.get("name") == "oom_forward"]
    if not jp:
        raise Fail("the job recorded no oom_forward phase")
    _, pt = phase_row_common(row, r, d, build)
    fail = compare_oom_phase(row, jp[0], pt, r.get("oom_forward_request_bytes", 200 * GiB))
    row.measured = "oom_forward: %s" % (
        "failure %s of %s on device %s" % (fail.get("event"), fmt(fail.get("requested_bytes")),
                                           fail.get("device")) if fail else "not marked failed")
    row.note("the job: %s" % ((jp[0].get("error") or {}).get("message", "")[:200]))
    return row


def memviz_real(row, d, ours):
    """17, a real run: the memviz mode traced (d/real), exported by
    `export --format memory-viz` (pickle 4 and JSON: both read by torch's
    tools above, the same segsum totals); its framework segments at the
    end are torch's own snapshot of the same process (d/real/torch.pickle,
    taken after the last allocation: nothing is allocated or freed after
    it), segment by segment: address, total_size, and the blocks' sizes
    and states."""
    import pickle
    rd = os.path.join(d, "real")
    torch_run(rd)
    rcs = read(os.path.join(d, "export.rc")).split()
    row.eq("export --format memory-viz of the real run (pickle, json): exit", ["0", "0"], rcs, show=str)
    a, b = ours.get("real-4.pickle", {}), ours.get("real.json", {})
    if a.get("segsum", {}).get("ok") and b.get("segsum", {}).get("ok"):
        row.eq("segsum's totals, real run: pickle = json", a["segsum"].get("totals"), b["segsum"].get("totals"), show=str)
    try:
        with open(os.path.join(rd, "torch.pickle"), "rb") as f:
            theirs = pickle.load(f)
        with open(os.path.join(d, "real.json")) as f:
            mine = json.load(f)
    except Exception as e:  # noqa: BLE001 - what could not be read is the result
        row.true("the real run's snapshots read", False, "%s: %s" % (type(e).__name__, e))
        return

    def outside(seg):
        fr = seg.get("frames") or []
        return bool(fr) and fr[0].get("filename") == "<gpumemtrace>"

    def shape(segs):
        return sorted((s["address"], s["total_size"],
                       tuple((x["size"], x["state"]) for x in s["blocks"])) for s in segs)
    fw = [s for s in mine.get("segments", []) if not outside(s)]
    row.eq("framework segments at the end = torch's snapshot (address, size, blocks)",
           shape(theirs.get("segments", [])), shape(fw), show=lambda v: "%d segments, %d B" % (
               len(v), sum(x[1] for x in v)))
    row.eq("framework blocks' requested sizes = torch's",
           sorted(x.get("requested_size") for s in theirs.get("segments", []) for x in s["blocks"]
                  if x["state"] == "active_allocated"),
           sorted(x.get("requested_size") for s in fw for x in s["blocks"] if x["state"] == "active_allocated"),
           show=str)
    row.note("real run: %d framework segments, %d outside (labelled by owner)" % (
        len(fw), len(mine.get("segments", [])) - len(fw)))


def check_memviz(work, build):
    """17: export/gmt_memviz.c's snapshot of tests/tools/gmt-memviz-fixture
    (reserved 20 MiB + 6 MiB outside, requested 1000000 + 512 B + 6 MiB live)
    read by torch.cuda._memory_viz as torch's own snapshot is."""
    d = os.path.join(work, "memviz")
    want = ["total_reserved: 26.0MiB", "total_allocated: 7.0MiB", "total_free: 19.0MiB (0.2% internal)"]
    row = Row("17", "memory-viz snapshot through torch.cuda._memory_viz",
              "segsum, trace, trace_plot run on ours (pickle 4, 2, JSON) as on torch's own; "
              "segsum: " + ", ".join(want) + "; our fields are torch's, with its types")
    if read(os.path.join(d, "fixture.log")).strip():
        raise Fail("the fixture failed: " + read(os.path.join(d, "fixture.log")).strip())
    r = torch_run(d)
    for tool, t in sorted(r.get("torch", {}).items()):
        row.true("%s on torch's own snapshot" % tool, t.get("ok"), t.get("error", ""))
    ours = r.get("ours", {})
    row.eq("snapshots of ours read", ["ours-2.pickle", "ours-4.pickle", "ours.json", "real-4.pickle", "real.json"],
           sorted(ours), show=str)
    for name, tools in sorted(ours.items()):
        for tool in ("segsum", "trace", "trace_plot"):
            t = tools.get(tool, {})
            row.true("%s on %s" % (tool, name), t.get("ok"), t.get("error", ""))
        if tools.get("segsum", {}).get("ok") and name.startswith("ours"):
            row.eq("segsum's totals of %s" % name, want, tools["segsum"].get("totals"), show=str)
    memviz_real(row, d, ours)
    fields = r.get("fields", {})
    import json as _json
    snap = _json.load(open(os.path.join(d, "ours.json")))
    seg = snap["segments"][0]
    mine = {"segment": seg, "block": seg["blocks"][0], "entry": snap["device_traces"][0][0],
            "frame": snap["device_traces"][0][0]["frames"][0]}
    for part, obj in mine.items():
        theirs = fields.get(part, {})
        for k, v in obj.items():
            if k in ("device_free", "category"):
                continue
            row.true("torch's %s has our field %s" % (part, k), k in theirs,
                     "torch's: %s" % sorted(theirs))
            if k in theirs:
                row.eq("type of %s.%s" % (part, k), theirs[k], type(v).__name__, show=str)
        extra = sorted(set(theirs) - set(obj))
        if extra:
            row.note("torch's %s has fields ours has not: %s" % (part, ", ".join(extra)))
    row.measured = "; ".join("%s: %s" % (n, ", ".join("%s %s" % (k, "ok" if v.get("ok") else "FAILED")
                                                     for k, v in sorted(t.items())))
                             for n, t in sorted(ours.items())) or "nothing read"
    return row


CHECKS = {"demo": check_demo, "nccl": check_nccl, "oom": check_oom, "train": check_train,
          "context": check_context, "measure": check_measure,
          "nccl-phases": check_nccl_phases, "oom-phase": check_oom_phase, "reset": check_reset,
          "graph": check_graph, "memviz": check_memviz, "versions": check_versions}
CHECK_IDS = {"demo": "1", "alloc-native": "2", "alloc-expandable": "3", "alloc-async": "4",
             "nccl": "5", "oom": "6", "train": "7", "context": "8", "measure": "9",
             "phases-native": "10", "phases-expandable": "11", "phases-async": "12",
             "nccl-phases": "13", "oom-phase": "14", "reset": "15", "graph": "16", "memviz": "17",
             "versions": "18"}
CHECK_DIRS = {"context": "alloc-native", "nccl-phases": "nccl", "oom-phase": "oom",
              "versions": "nccl"}
MAX_REASONS = 8


def evaluate(check, work, build):
    rid = CHECK_IDS.get(check, "?")
    d = os.path.join(work, CHECK_DIRS.get(check, check))
    try:
        if check in ALLOC_DIRS:
            row = check_alloc(work, build, check)
        elif check in PHASE_RUNS:
            row = check_phases(work, build, check)
        else:
            row = CHECKS[check](work, build)
        status = row.status()
        if check == "context" and status == "PASS":
            status = "INFO"
        reason = row_reason(row, status)
        out = (row.rid, row.title, row.expected, row.measured, status, reason)
        details = row.items
    except Skip as e:
        out = (rid, check, "-", "-", "SKIP", str(e))
        details = []
    except Fail as e:
        out = (rid, check, "-", "-", "FAIL", str(e))
        details = []
    except Exception as e:  # noqa: BLE001 - an evaluator bug must still give a row
        out = (rid, check, "-", "-", "FAIL", "evaluator error: %s: %s" % (type(e).__name__, e))
        details = []
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "eval-%s.json" % check), "w") as f:
        json.dump({"row": out, "details": details}, f, indent=1, default=str)
    with open(os.path.join(work, "rows.tsv"), "a") as f:
        f.write("\t".join(c.replace("\t", " ").replace("\n", " ") for c in out) + "\n")
    print("%s %s: %s %s" % (out[0], check, out[4], out[5][:300]))


def row_reason(row, status):
    """FAIL: the failed comparisons (the first MAX_REASONS, then a count),
    then the notes; otherwise the notes (also capped)."""
    def cap(xs):
        if len(xs) <= MAX_REASONS:
            return xs
        return xs[:MAX_REASONS] + ["... %d more (eval-*.json)" % (len(xs) - MAX_REASONS)]
    notes = [i["note"] for i in row.items if "note" in i]
    if status != "FAIL":
        return "; ".join(cap(notes))
    return "; ".join(cap(row.notes) + (["notes: " + "; ".join(cap(notes))] if notes else []))


def table(work):
    rows = []
    for line in read(os.path.join(work, "rows.tsv")).splitlines():
        c = line.split("\t")
        if len(c) == 6:
            rows.append(c)
    rows.sort(key=lambda c: (c[0].isdigit() and int(c[0]) or 0, c[0]))
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    md = ["| # | check | expected | measured | status | reason |",
          "|---|---|---|---|---|---|"]
    md += ["| %s |" % " | ".join(esc(x) for x in c) for c in rows]
    summary = {}
    for c in rows:
        summary[c[4]] = summary.get(c[4], 0) + 1
    md.append("")
    md.append("summary: " + ", ".join("%s %d" % kv for kv in sorted(summary.items())))
    text = "\n".join(md) + "\n"
    with open(os.path.join(work, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump([dict(zip(("id", "check", "expected", "measured", "status", "reason"), c))
                   for c in rows], f, indent=1)
    sys.stdout.write(text)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
        return 0
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    evaluate(sys.argv[1], sys.argv[2], sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
