"""gpu_torch.py - the PyTorch programs of the real-GPU checks (scripts/gpu-check.sh).

    python3 tests/gpu/gpu_torch.py MODE OUT.json

MODE is one of
  probe   versions (torch, CUDA, NCCL, device); no allocation
  alloc   tensors of known sizes through the caching allocator; run it with
          PYTORCH_CUDA_ALLOC_CONF unset, =expandable_segments:True or
          =backend:cudaMallocAsync
  nccl    torch.distributed, one rank, backend nccl, one all_reduce; also
          the loaded CUDA runtime's own cudaRuntimeGetVersion ("cudart")
  oom     torch.empty of 200 GiB and of 200 GiB + 1 byte: both must fail
  train   50 timed steps of a small MLP with AdamW
  phases  5 steps of a small MLP with AdamW, forward, backward and optimizer
          step each an NVTX range (a phase); run it with each
          PYTORCH_CUDA_ALLOC_CONF as alloc
  memviz  PyTorch's own memory viewer tools (torch.cuda._memory_viz: segsum,
          trace, trace_plot) on the snapshots in GMT_MEMVIZ_OURS (paths,
          space-separated: pickles, or .json read with json), and on
          torch's own snapshot of a few allocations (torch.pickle beside
          OUT.json) for comparison: "ours" and "torch" hold each tool's
          outcome and segsum's totals lines, "fields" the keys and value
          types of torch's segments, blocks, trace entries and frames

The modes phases, nccl and oom mark phases with torch.cuda.nvtx and measure
each phase as scripts/examples/gmt_example.py measure does (the protocol of
the seed documents): synchronize, read memory_allocated() and
memory_reserved() ("before"), reset_peak_memory_stats(), range_push, run,
synchronize, range_pop, read max_memory_allocated() and
max_memory_reserved() ("peak") and the levels again ("after"). The records
go to "phases" in the same shape as measure's, so that gpu_eval.py compares
both with the analyzer's `phases --json` the same way. Each boundary's
synchronize is preceded by an 11 ms sleep: the tracer samples cuMemGetInfo
and the stream-ordered pools at a synchronisation at most every 10 ms, so
the sleep makes the boundary's own sync take the sample (the reserved bytes
of the cudaMallocAsync backend are those samples).

Each writes one JSON object to OUT.json (also on failure: "error" holds the
exception) and exits 0, or 3 when the mode could not run. Under the tracer,
"trace" holds gpumemtrace_trace_path() (the preload's public API, found with
dlsym in the process), null when not traced.

Sizes are chosen so that the caching allocator's answer is known by
construction (MiB = 2^20):
  3 x 256 MiB                 three 256 MiB segments           reserved 768 MiB
  free one, synchronize       cached, not returned             reserved 768 MiB
  empty_cache()               one segment cudaFree'd           reserved 512 MiB
  100 MiB + 1 byte            block rounded to 512 B, segment
                              to 2 MiB: 102 MiB                reserved 614 MiB
  1000 bytes                  small pool: one 2 MiB segment    reserved 616 MiB
so memory_reserved() ends at 616 MiB and max_memory_reserved() is 768 MiB.
The live tensors are leaked on purpose (one extra reference each), so that
nothing frees them while the interpreter shuts down: the trace's "final"
state is then the state measured here.
"""
import ctypes
import json
import os
import socket
import subprocess
import sys
import time

MiB = 1 << 20
GiB = 1 << 30


def tracer_info():
    """Trace path from the preload's public API, or None when not traced."""
    try:
        lib = ctypes.CDLL(None)
        fn = lib.gpumemtrace_trace_path
    except (AttributeError, OSError):
        return None
    fn.restype = ctypes.c_char_p
    p = fn()
    return p.decode() if p else None


def tracer_flush():
    try:
        ctypes.CDLL(None).gpumemtrace_flush()
    except (AttributeError, OSError):
        pass


def leak(t):
    """Keeps t alive past interpreter shutdown (see the module comment)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(t))


def nvidia_smi_used_mib():
    """Per-process used memory (MiB) as nvidia-smi reports it, by pid."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory",
             "--format=csv,noheader,nounits"],
            env=env, capture_output=True, text=True, timeout=20).stdout
    except Exception as e:  # noqa: BLE001 - informational only
        return {"error": repr(e)}
    used = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit():
            used[parts[0]] = parts[1]
    return used


def state(torch):
    torch.cuda.synchronize()
    free_b, total_b = torch.cuda.mem_get_info()
    return {
        "mono_ns": time.clock_gettime_ns(time.CLOCK_MONOTONIC),
        "reserved": torch.cuda.memory_reserved(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "allocated": torch.cuda.memory_allocated(),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "mem_get_info_free": free_b,
        "mem_get_info_total": total_b,
    }


BOUNDARY_SLEEP_S = 0.011


class Recorder:
    """Measures phases as gmt_example.py measure does (module comment)."""

    def __init__(self, torch, idx=0, sleep=BOUNDARY_SLEEP_S):
        self.torch, self.idx, self.sleep = torch, idx, sleep
        self.phases = []
        self.counts = {}

    def _levels(self):
        c = self.torch.cuda
        return {"allocated_bytes": int(c.memory_allocated(self.idx)),
                "reserved_bytes": int(c.memory_reserved(self.idx)),
                "mono_ns": time.clock_gettime_ns(time.CLOCK_MONOTONIC)}

    def phase(self, name, fn):
        """Runs fn() as one occurrence of phase name; True when it succeeded.
        The error is kept as strings only: the traceback would keep the failed
        phase's tensors alive and falsify the levels after it."""
        c = self.torch.cuda
        self.counts[name] = self.counts.get(name, 0) + 1
        rec = {"name": name, "occurrence": self.counts[name]}
        time.sleep(self.sleep)
        c.synchronize(self.idx)
        rec["before"] = self._levels()
        c.reset_peak_memory_stats(self.idx)
        error = None
        t0 = time.perf_counter()
        c.nvtx.range_push(name)
        try:
            fn()
            time.sleep(self.sleep)
            c.synchronize(self.idx)
        except Exception as e:  # noqa: BLE001 - the error is the record
            oom_type = getattr(c, "OutOfMemoryError", None)
            error = {"type": type(e).__name__, "message": str(e)[:2000],
                     "out_of_memory": bool((oom_type is not None and isinstance(e, oom_type))
                                           or "out of memory" in str(e).lower())}
        finally:
            c.nvtx.range_pop()
        rec["seconds"] = time.perf_counter() - t0
        rec["ok"] = error is None
        rec["error"] = error
        try:
            c.synchronize(self.idx)
            rec["peak"] = {"allocated_bytes": int(c.max_memory_allocated(self.idx)),
                           "reserved_bytes": int(c.max_memory_reserved(self.idx))}
            rec["after"] = self._levels()
        except Exception as e:  # noqa: BLE001 - a broken context after a failure
            rec["peak"] = rec["after"] = None
            rec["read_error"] = "%s: %s" % (type(e).__name__, e)
        self.phases.append(rec)
        return error is None


def must(rec, ok):
    """Raises the last phase's error (modes where a failure ends the run)."""
    if not ok:
        e = rec.phases[-1]["error"]
        raise RuntimeError("phase %s failed: %s: %s" % (rec.phases[-1]["name"], e["type"],
                                                       e["message"]))


def mode_probe(torch, res):
    res["torch"] = torch.__version__
    res["torch_cuda"] = torch.version.cuda
    res["cuda_available"] = torch.cuda.is_available()
    if res["cuda_available"]:
        res["device"] = torch.cuda.get_device_name(0)
        res["device_count"] = torch.cuda.device_count()
        try:
            res["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception as e:  # noqa: BLE001
            res["nccl"] = "unknown: %r" % e


def mode_alloc(torch, res):
    dev = torch.device("cuda", 0)
    res["conf"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    res["backend"] = torch.cuda.get_allocator_backend()
    torch.cuda.init()
    res["start"] = state(torch)
    t = [torch.empty(256 * MiB, dtype=torch.uint8, device=dev) for _ in range(3)]
    res["after_3x256"] = state(torch)
    del t[0]
    res["after_free_one"] = state(torch)
    torch.cuda.empty_cache()
    res["after_empty_cache"] = state(torch)
    t.append(torch.empty(100 * MiB + 1, dtype=torch.uint8, device=dev))
    t.append(torch.empty(1000, dtype=torch.uint8, device=dev))
    res["end"] = state(torch)
    res["live_requested_bytes"] = sum(x.numel() for x in t)
    for x in t:
        leak(x)
    stats = torch.cuda.memory_stats(0)
    res["stats"] = {k: stats.get(k) for k in (
        "segment.all.current", "segment.all.allocated", "segment.all.freed",
        "reserved_bytes.all.current", "reserved_bytes.all.peak",
        "allocated_bytes.all.current", "allocated_bytes.all.peak",
        "num_alloc_retries", "num_ooms")}
    res["nvidia_smi_used_mib"] = nvidia_smi_used_mib()


def cudart_loaded():
    """The CUDA runtime this process loaded (the first libcudart* of
    /proc/self/maps) and what its own cudaRuntimeGetVersion says: what the
    trace's META cuda_runtime_version must repeat (row 18)."""
    try:
        with open("/proc/self/maps") as f:
            paths = [l.split()[-1] for l in f if "/libcudart" in l]
    except OSError as e:
        return {"error": repr(e)}
    if not paths:
        return {"error": "no libcudart mapped"}
    try:
        lib = ctypes.CDLL(paths[0], mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        v = ctypes.c_int()
        r = lib.cudaRuntimeGetVersion(ctypes.byref(v))
        return {"path": paths[0], "result": r, "version": v.value}
    except (OSError, AttributeError) as e:
        return {"path": paths[0], "error": repr(e)}


def mode_nccl(torch, res):
    """One rank; phases nccl_init, all_reduce, nccl_destroy (NCCL's memory is
    outside the allocator: gpu_eval checks that `phases` says so)."""
    import datetime
    import torch.distributed as dist
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    res["port"] = port
    torch.cuda.set_device(0)
    rec = Recorder(torch, 0)
    res["phases"] = rec.phases
    kw = dict(backend="nccl", rank=0, world_size=1,
              timeout=datetime.timedelta(seconds=60))

    def init():
        try:
            # device_id makes the communicator eager (torch >= 2.3)
            dist.init_process_group(device_id=torch.device("cuda", 0), **kw)
        except TypeError:
            dist.init_process_group(**kw)
    must(rec, rec.phase("nccl_init", init))
    keep = {}

    def all_reduce():
        x = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(x)
        keep["x"] = x
    must(rec, rec.phase("all_reduce", all_reduce))
    torch.cuda.synchronize()
    res["all_reduce_ok"] = bool((keep["x"] == 1).all().item())
    res["end"] = state(torch)
    try:
        res["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception as e:  # noqa: BLE001
        res["nccl"] = "unknown: %r" % e
    res["cudart"] = cudart_loaded()
    must(rec, rec.phase("nccl_destroy", dist.destroy_process_group))
    res["after_destroy"] = state(torch)


def mode_oom(torch, res):
    dev = torch.device("cuda", 0)
    # a cached 64 MiB block: the allocator frees it and retries before giving up
    x = torch.empty(64 * MiB, dtype=torch.uint8, device=dev)
    del x
    res["start"] = state(torch)
    res["attempts"] = []
    for size in (200 * GiB, 200 * GiB + 1):
        a = {"requested": size}
        try:
            y = torch.empty(size, dtype=torch.uint8, device=dev)
            a["exception"] = None
            del y
        except Exception as e:  # noqa: BLE001 - the exception is the result
            a["exception"] = "%s.%s" % (type(e).__module__, type(e).__qualname__)
            a["message"] = str(e)
        res["attempts"].append(a)
    res["end"] = state(torch)
    # An out-of-memory inside a phase, in a forward pass: Linear(1024, 1024)
    # on a (OOM_ROWS, 1024) float32 input that is a broadcast view (no
    # memory). Whether addmm first allocates its output or first makes the
    # input contiguous, the request is OOM_ROWS x 1024 x 4 B = 200 GiB, a
    # multiple of 2 MiB, so the caching allocator asks the driver for exactly
    # that much. The phase fails; the JSON says so ("phases").
    rows = 200 * GiB // (1024 * 4)
    model = torch.nn.Linear(1024, 1024, device=dev)
    x1 = torch.randn(1, 1024, device=dev)
    rec = Recorder(torch, 0)

    def forward():
        with torch.no_grad():
            y = model(x1.expand(rows, 1024))
            del y
    rec.phase("oom_forward", forward)
    res["phases"] = rec.phases
    res["oom_forward_request_bytes"] = rows * 1024 * 4
    res["after_oom_forward"] = state(torch)
    stats = torch.cuda.memory_stats(0)
    res["num_ooms"] = stats.get("num_ooms")
    res["num_alloc_retries"] = stats.get("num_alloc_retries")


def mode_train(torch, res):
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(512, 1024, device=dev)
    y = torch.randn(512, 1024, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    times = []
    t0 = time.perf_counter()
    for _ in range(50):
        s = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - s)
    total = time.perf_counter() - t0
    times.sort()
    res["steps"] = 50
    res["total_s"] = total
    res["median_step_ms"] = times[len(times) // 2] * 1e3
    res["min_step_ms"] = times[0] * 1e3
    res["loss"] = float(loss.item())
    res["end"] = state(torch)


def mode_phases(torch, res):
    """B: 5 steps (1 cold, 4 warm) of an MLP 512-2048-512, batch 256, AdamW,
    synthetic data; forward (zero_grad + loss), backward and optimizer_step
    are phases, measured by Recorder."""
    dev = torch.device("cuda", 0)
    res["conf"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    res["backend"] = torch.cuda.get_allocator_backend()
    torch.manual_seed(0)
    torch.cuda.init()
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device=dev)
    y = torch.randn(256, 512, device=dev)
    keep = {}

    def forward():
        opt.zero_grad(set_to_none=True)
        keep["loss"] = torch.nn.functional.mse_loss(model(x), y)

    def backward():
        keep.pop("loss").backward()

    def optimizer_step():
        opt.step()

    rec = Recorder(torch, 0)
    res["phases"] = rec.phases
    res["steps"] = PHASE_STEPS
    res["boundary_sleep_s"] = rec.sleep
    for _ in range(PHASE_STEPS):
        for name, fn in (("forward", forward), ("backward", backward),
                         ("optimizer_step", optimizer_step)):
            must(rec, rec.phase(name, fn))
    res["end"] = state(torch)
    # the model and optimizer state stay alive to the end (module comment)
    for t in list(model.parameters()) + [x, y]:
        leak(t)
    leak(opt)


PHASE_STEPS = 5


def memviz_tools(mv, data):
    """Each of _memory_viz's text and HTML tools on one snapshot: what it
    raised, or segsum's total lines and trace_plot's length."""
    out = {}
    for name, fn in (("segsum", mv.segsum), ("trace", mv.trace), ("trace_plot", mv.trace_plot)):
        try:
            text = fn(data)
            out[name] = {"ok": True, "length": len(text)}
            if name == "segsum":
                out[name]["totals"] = [ln for ln in text.splitlines() if ln.startswith("total_")]
        except Exception as e:  # noqa: BLE001 - the outcome is the result
            out[name] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
    return out


def field_types(d):
    return {k: type(v).__name__ for k, v in d.items()}


def mode_memviz(torch, res):
    import pickle
    import torch.cuda._memory_viz as mv
    torch.cuda.memory._record_memory_history(max_entries=10000)
    a = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")
    b = torch.empty(1000000, dtype=torch.uint8, device="cuda")
    del a
    c = torch.empty(512, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    path = os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), "torch.pickle")
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    seg = snap["segments"][0] if snap["segments"] else {}
    entries = [e for t in snap["device_traces"] for e in t]
    frames = [f for e in entries for f in e.get("frames", [])]
    res["fields"] = {"top": sorted(snap), "segment": field_types(seg),
                     "block": field_types(seg["blocks"][0]) if seg.get("blocks") else {},
                     "entry": field_types(entries[0]) if entries else {},
                     "frame": field_types(frames[0]) if frames else {}}
    res["torch"] = memviz_tools(mv, snap)
    res["ours"] = {}
    for p in os.environ.get("GMT_MEMVIZ_OURS", "").split():
        if p.endswith(".json"):
            with open(p) as f:
                data = json.load(f)
        else:
            with open(p, "rb") as f:
                data = pickle.load(f)
        res["ours"][os.path.basename(p)] = memviz_tools(mv, data)
    leak(b)
    leak(c)

MODES = {"probe": mode_probe, "alloc": mode_alloc, "nccl": mode_nccl,
         "oom": mode_oom, "train": mode_train, "phases": mode_phases, "memviz": mode_memviz}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        sys.stderr.write("usage: gpu_torch.py {%s} OUT.json\n" % "|".join(MODES))
        return 2
    mode, out = sys.argv[1], sys.argv[2]
    res = {"mode": mode, "pid": os.getpid(),
           "python": sys.version.split()[0], "t_start": time.time()}
    rc = 0
    try:
        import torch
        res["torch"] = torch.__version__
        if mode != "probe" and not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        MODES[mode](torch, res)
    except Exception as e:  # noqa: BLE001 - reported in the JSON
        res["error"] = "%s: %s" % (type(e).__name__, e)
        rc = 3
    res["trace"] = tracer_info()
    res["t_end"] = time.time()
    tracer_flush()
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
