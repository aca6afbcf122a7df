#!/usr/bin/env python3
"""gmt_example - the seed's memory measurement protocol, on a small dense network.

    gmt_example.py estimate --parameters N --bits B [--reserve-gib R] [--json]
    gmt_example.py environment [--device cuda:0] [--json]
    gmt_example.py measure --output FILE [--device cuda:0] [--batch B]
        [--context C] [--width W] [--layers L] [--dtype D] [--warmup K]
        [--repeats R] [--seed S] [--marks both|nvtx|api]

`estimate` is arithmetic: the bytes the weights take, and an envelope that adds
a reserve the user guesses (labelled as the assumption it is). `environment`
and `measure` need PyTorch and a GPU and say so, with exit status 2, when
either is missing: this tool never presents a CPU figure as a GPU one.

`measure` follows the protocol phase by phase (model_load, inputs,
cold_forward, warmup, then each warm_forward as its own occurrence):

    synchronize; read memory_allocated() and memory_reserved();
    reset_peak_memory_stats(); [NVTX range_push(phase)] run; synchronize;
    [range_pop]; read max_memory_allocated(), max_memory_reserved() and the
    levels again; record success or the error.

The peaks are each one counter's maximum since the reset: max allocated and
max reserved need not have happened at the same instant. Each phase is an NVTX
range (and a gpumemtrace.phase when that module imports), so the same run
traced by gpumemtrace can be compared with what the job measured of itself.
The run's dimensions (batch, context, width, layers, dtype) go into the trace
with gpumemtrace.meta() when that module imports (for gpumemtrace-analyze
card). An out-of-memory error ends the run: the failing phase is recorded with its
message, the JSON is still written, and the exit status is 1.

Exit status: 0 done; 1 a phase failed (the JSON says which); 2 bad arguments,
an output that already exists, or no PyTorch / no GPU (nothing written).

Standard library only; torch is imported when a subcommand needs it, after the
arguments (and, for measure, the output path) have been checked.
"""

import argparse
import contextlib
import datetime
import decimal
import json
import os
import platform
import re
import subprocess
import sys
import time

TOOL = "gmt_example"
VERSION = "1.0"
GB = 10 ** 9
GIB = 2 ** 30
PHASES = ("model_load", "inputs", "cold_forward", "warmup", "warm_forward")
DTYPES = ("float16", "bfloat16", "float32")


class UsageError(Exception):
    """Bad input or an environment that cannot be measured: exit status 2."""


def die(cmd, msg):
    print("%s %s: %s" % (TOOL, cmd, msg), file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------ numbers

_CTX = decimal.Context(prec=80, traps=[decimal.InvalidOperation, decimal.DivisionByZero])


def _decimal(text, what):
    try:
        d = _CTX.create_decimal(text.strip())
    except (decimal.InvalidOperation, ValueError):
        raise UsageError("%s: not a number: %r" % (what, text))
    if not d.is_finite():
        raise UsageError("%s: not a finite number: %r" % (what, text))
    return d


def _plain(d):
    """A Decimal as the user would write it: 16, 4.5, 7000000000."""
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(_CTX), "f")


def _json_number(d):
    return int(d) if d == d.to_integral_value() else float(d)


def units(nbytes):
    """'N B = x.xx GB = about y.yy GiB': raw bytes, then both named units,
    'about' wherever two decimals lost something."""
    out = ["%d B" % nbytes]
    for unit, size in (("GB", GB), ("GiB", GIB)):
        exact = _CTX.divide(decimal.Decimal(nbytes), decimal.Decimal(size))
        shown = exact.quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_EVEN)
        out.append("%s%s %s" % ("" if shown == exact else "about ", shown, unit))
    return " = ".join(out)


def gib(nbytes):
    return "%.2f GiB" % (nbytes / GIB)


def estimate(parameters, bits, reserve_gib):
    """Returns the estimate as a dict; raises UsageError on bad input.
    parameters, bits, reserve_gib: strings as typed (reserve_gib may be None)."""
    n = _decimal(parameters, "--parameters")
    if n <= 0 or n != n.to_integral_value():
        raise UsageError("--parameters: must be a whole number above 0, got %s" % parameters)
    b = _decimal(bits, "--bits")
    if b <= 0:
        raise UsageError("--bits: must be above 0, got %s" % bits)
    wbits = _CTX.multiply(n, b)
    if wbits % 8 != 0:
        raise UsageError("%s parameters x %s bits is not a whole number of bytes"
                         % (_plain(n), _plain(b)))
    weight = int(_CTX.divide(wbits, decimal.Decimal(8)))
    res = {
        "tool": TOOL, "version": VERSION, "command": "estimate",
        "parameters": int(n), "bits": _json_number(b),
        "weights": {"bytes": weight, "GB": weight / GB, "GiB": weight / GIB},
        "reserve": None, "envelope": None,
        "units": {"GB": GB, "GiB": GIB},
    }
    if reserve_gib is not None:
        r = _decimal(reserve_gib, "--reserve-gib")
        if r < 0:
            raise UsageError("--reserve-gib: must be 0 or more, got %s" % reserve_gib)
        rb = _CTX.multiply(r, decimal.Decimal(GIB))
        if rb != rb.to_integral_value():
            raise UsageError("--reserve-gib %s is not a whole number of bytes" % _plain(r))
        rb = int(rb)
        env = weight + rb
        res["reserve"] = {"GiB": _json_number(r), "bytes": rb, "assumption": True,
                          "note": "a guess for activations, caches, workspaces and the "
                                  "CUDA context, not a measurement"}
        res["envelope"] = {"bytes": env, "GB": env / GB, "GiB": env / GIB, "assumption": True,
                           "note": "weights plus the assumed reserve; measure it "
                                   "(measure, under gpumemtrace)"}
    return res


def cmd_estimate(a):
    try:
        res = estimate(a.parameters, a.bits, a.reserve_gib)
    except UsageError as e:
        die("estimate", str(e))
    if a.json:
        json.dump(res, sys.stdout, indent=2)
        print()
        return 0
    print("weights:  %d parameters x %s bits = %s"
          % (res["parameters"], _plain(_decimal(a.bits, "")), units(res["weights"]["bytes"])))
    if res["reserve"] is not None:
        r = res["reserve"]
        print("reserve:  %s GiB = %d B  (ASSUMPTION: %s)"
              % (_plain(_decimal(a.reserve_gib, "")), r["bytes"], r["note"]))
        print("envelope: %d B + %d B = %s  (ASSUMPTION: weights plus the assumed reserve,"
              " not a measurement)" % (res["weights"]["bytes"], r["bytes"],
                                      units(res["envelope"]["bytes"])))
    print("units:    B = bytes, GB = 10^9 B, GiB = 2^30 B")
    return 0


# ------------------------------------------------------------- environment

def import_torch(cmd):
    """Imports torch or exits 2 saying why."""
    try:
        import torch  # noqa: the one import of torch, made only when needed
    except ImportError as e:
        die(cmd, "PyTorch is not installed (import torch: %s); this subcommand reports GPU "
                 "figures only and has none without it" % e)
    except Exception as e:  # a broken installation (missing libraries)
        die(cmd, "PyTorch could not be imported (%s: %s)" % (type(e).__name__, e))
    return torch


def device_index(torch, cmd, device):
    """Parses cuda / cuda:N and checks a GPU is there; exits 2 otherwise."""
    m = re.fullmatch(r"cuda(?::(\d+))?", device)
    if not m:
        die(cmd, "--device %s: expected cuda or cuda:N (ROCm builds of PyTorch use cuda "
                 "too)" % device)
    idx = int(m.group(1) or 0)
    if not torch.cuda.is_available():
        die(cmd, "no GPU is available to PyTorch %s (torch.cuda.is_available() is False); "
                 "refusing to report CPU figures as GPU ones" % torch.__version__)
    count = torch.cuda.device_count()
    if idx >= count:
        die(cmd, "--device %s: PyTorch sees %d GPU(s)" % (device, count))
    return idx


def driver_version():
    """(version, source) of the GPU kernel driver, or (None, None)."""
    for path, pat in (("/proc/driver/nvidia/version", r"Kernel Module\s+([0-9][0-9.]*)"),
                      ("/sys/module/amdgpu/version", r"(\S+)")):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                m = re.search(pat, f.read())
            if m:
                return m.group(1), path
        except OSError:
            pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20, check=True).stdout.split()
        if out:
            return out[0], "nvidia-smi"
    except (OSError, subprocess.SubprocessError):
        pass
    return None, None


def environment(torch, idx, device):
    """The environment block: GPU, driver, Python, PyTorch, backend, allocator."""
    props = torch.cuda.get_device_properties(idx)
    ver, src = driver_version()
    cuda_api = None
    getter = getattr(torch._C, "_cuda_getDriverVersion", None) if hasattr(torch, "_C") else None
    if getter is not None:
        try:
            cuda_api = int(getter())
        except Exception:
            cuda_api = None
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    backend = None
    with contextlib.suppress(Exception):
        backend = torch.cuda.get_allocator_backend()
    cudnn = None
    with contextlib.suppress(Exception):
        cudnn = torch.backends.cudnn.version()
    preload = os.environ.get("LD_PRELOAD", "")
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": device, "device_index": idx,
        "gpu_name": torch.cuda.get_device_name(idx),
        "gpu_total_memory_bytes": int(props.total_memory),
        "compute_capability": "%s.%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?")),
        "driver": {"version": ver, "source": src},
        "cuda_driver_api_version": cuda_api,
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "pytorch": {"version": str(torch.__version__), "cuda": cuda, "hip": hip,
                    "cudnn": cudnn},
        "backend": "HIP" if hip else "CUDA",
        "backend_version": hip if hip else cuda,
        "allocator": {
            "backend": backend,
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
            "PYTORCH_ALLOC_CONF": os.environ.get("PYTORCH_ALLOC_CONF"),
            "PYTORCH_HIP_ALLOC_CONF": os.environ.get("PYTORCH_HIP_ALLOC_CONF"),
        },
        "gpumemtrace_preloaded": "libgpumemtrace" in preload,
    }


def cmd_environment(a):
    torch = import_torch("environment")
    idx = device_index(torch, "environment", a.device)
    env = environment(torch, idx, a.device)
    if a.json:
        json.dump(env, sys.stdout, indent=2)
        print()
        return 0
    al = env["allocator"]
    rows = [
        ("device", "%s (index %d)" % (env["device"], env["device_index"])),
        ("GPU", env["gpu_name"]),
        ("GPU memory", "%d B (%s)" % (env["gpu_total_memory_bytes"],
                                      gib(env["gpu_total_memory_bytes"]))),
        ("compute capability", env["compute_capability"]),
        ("driver", "%s (from %s)" % (env["driver"]["version"], env["driver"]["source"])
         if env["driver"]["version"] else "unknown"),
        ("CUDA driver API", str(env["cuda_driver_api_version"])),
        ("Python", "%s (%s)" % (env["python"]["version"], env["python"]["executable"])),
        ("PyTorch", env["pytorch"]["version"]),
        ("backend", "%s %s" % (env["backend"], env["backend_version"])),
        ("cuDNN", str(env["pytorch"]["cudnn"])),
        ("allocator backend", str(al["backend"])),
    ]
    for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"):
        rows.append((k, al[k] if al[k] is not None else "(unset)"))
    rows.append(("gpumemtrace preloaded", "yes" if env["gpumemtrace_preloaded"] else "no"))
    for k, v in rows:
        print("%-24s %s" % (k + ":", v))
    return 0


# ------------------------------------------------------------------ measure

def import_gpumemtrace(marks):
    """gpumemtrace's Python module when asked for and importable, else None.
    The repository's python/ folder is tried after sys.path. marks None:
    the module whatever the marks (for its meta())."""
    if marks == "nvtx":
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    pydir = os.path.join(os.path.dirname(os.path.dirname(here)), "python")
    if os.path.isdir(pydir) and pydir not in sys.path:
        sys.path.append(pydir)
    try:
        import gpumemtrace
    except ImportError:
        return None
    return gpumemtrace if callable(getattr(gpumemtrace, "phase", None)) else None


def build_model(torch, width, layers, dtype, device):
    """An original dense network: `layers` blocks of Linear(W, 4W), GELU,
    Linear(4W, W), built directly on the device."""
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, 4 * width, device=device, dtype=dtype),
                 torch.nn.GELU(),
                 torch.nn.Linear(4 * width, width, device=device, dtype=dtype)]
    model = torch.nn.Sequential(*mods)
    model.eval()
    return model


def _round512(n):
    return max(512, (n + 511) // 512 * 512)


class Measurement:
    """Runs phases under the protocol and collects their records."""

    def __init__(self, torch, idx, marks, gmt):
        self.torch, self.idx, self.marks, self.gmt = torch, idx, marks, gmt
        self.phases = []
        self.counts = {}

    def _levels(self):
        c = self.torch.cuda
        free, total = c.mem_get_info(self.idx)
        return {"allocated_bytes": int(c.memory_allocated(self.idx)),
                "reserved_bytes": int(c.memory_reserved(self.idx)),
                "device_used_bytes": int(total) - int(free)}

    def _marked(self, stack, name):
        if self.marks in ("both", "nvtx"):
            self.torch.cuda.nvtx.range_push(name)
            stack.callback(self.torch.cuda.nvtx.range_pop)
        if self.gmt is not None:
            try:
                cm = self.gmt.phase(name)
                cm.__enter__()
            except Exception as e:  # the tracer's API must not change the measurement
                print("%s measure: gpumemtrace.phase failed (%s); NVTX only from here"
                      % (TOOL, e), file=sys.stderr)
                self.gmt = None
            else:
                stack.push(cm.__exit__)

    def phase(self, name, fn, forwards=None):
        """Measures fn() as one occurrence of phase `name`; returns True if it
        succeeded."""
        c = self.torch.cuda
        self.counts[name] = self.counts.get(name, 0) + 1
        rec = {"name": name, "occurrence": self.counts[name]}
        if forwards is not None:
            rec["forwards"] = forwards
        c.synchronize(self.idx)
        rec["before"] = self._levels()
        c.reset_peak_memory_stats(self.idx)
        error = None
        t0 = time.perf_counter()
        try:
            with contextlib.ExitStack() as stack:
                self._marked(stack, name)
                fn()
                c.synchronize(self.idx)
        except Exception as e:
            # Only strings are kept: the exception's traceback would keep the
            # failed forward's tensors alive and falsify the levels after.
            oom_type = getattr(c, "OutOfMemoryError", None)
            oom = (oom_type is not None and isinstance(e, oom_type)) or \
                "out of memory" in str(e).lower()
            error = {"type": type(e).__name__, "message": str(e), "out_of_memory": bool(oom)}
        rec["seconds"] = time.perf_counter() - t0
        rec["ok"] = error is None
        rec["error"] = error
        try:
            c.synchronize(self.idx)
            rec["peak"] = {"allocated_bytes": int(c.max_memory_allocated(self.idx)),
                           "reserved_bytes": int(c.max_memory_reserved(self.idx))}
            rec["after"] = self._levels()
        except Exception as e:  # a broken context after a failure: say so
            rec["peak"] = rec["after"] = None
            rec["read_error"] = "%s: %s" % (type(e).__name__, e)
        self.phases.append(rec)
        return error is None


def run_measure(torch, a, idx, result):
    """Fills result (already holding environment and parameters) phase by phase."""
    dev = "cuda:%d" % idx
    dtype = getattr(torch, a.dtype)
    gmt = import_gpumemtrace(a.marks)
    result["parameters"]["marks_used"] = {
        "nvtx": a.marks in ("both", "nvtx"), "gpumemtrace_api": gmt is not None,
        # the module is a no-op without the preload: say whether it was there
        "gpumemtrace_active": bool(gmt is not None and callable(getattr(gmt, "active", None))
                                   and gmt.active())}
    if a.marks == "api" and gmt is None:
        print("%s measure: --marks api, but no gpumemtrace module imports; the phases are "
              "not marked" % TOOL, file=sys.stderr)
    # The dimensions this run tests, in the trace for the sizing card
    # (gpumemtrace-analyze card); a no-op without the tracer.
    meta = getattr(gmt if gmt is not None else import_gpumemtrace(None), "meta", None)
    if callable(meta):
        meta(batch=a.batch, context=a.context, width=a.width, layers=a.layers, dtype=a.dtype)
    m = Measurement(torch, idx, a.marks, gmt)
    result["phases"] = m.phases
    state = {}

    def model_load():
        state["model"] = build_model(torch, a.width, a.layers, dtype, dev)

    def inputs():
        state["x"] = torch.randn((a.batch, a.context, a.width), device=dev, dtype=dtype)

    def forward(n):
        def run():
            with torch.inference_mode():
                for _ in range(n):
                    y = state["model"](state["x"])
                    del y  # released inside the phase: "after" is what persists
        return run

    torch.manual_seed(a.seed)
    steps = [("model_load", model_load, None), ("inputs", inputs, None),
             ("cold_forward", forward(1), 1), ("warmup", forward(a.warmup), a.warmup)]
    steps += [("warm_forward", forward(1), 1)] * a.repeats
    for name, fn, n in steps:
        if not m.phase(name, fn, n):
            break
        if name == "model_load":
            params = list(state["model"].parameters())
            result["model"]["parameter_count"] = sum(int(p.numel()) for p in params)
            result["model"]["parameter_bytes"] = sum(int(p.numel()) * int(p.element_size())
                                                     for p in params)
            result["model"]["parameter_tensors"] = len(params)
            result["model"]["parameter_bytes_in_512_byte_blocks"] = sum(
                _round512(int(p.numel()) * int(p.element_size())) for p in params)
        elif name == "inputs":
            x = state["x"]
            result["model"]["input_bytes"] = int(x.numel()) * int(x.element_size())
    result["completed"] = all(p["ok"] for p in m.phases) and len(m.phases) == len(steps)


def print_table(result):
    print("%-14s %3s %-4s %10s  %14s %14s %14s  %14s %14s %14s" % (
        "phase", "#", "ok", "seconds", "alloc before", "alloc peak", "alloc after",
        "resv before", "resv peak", "resv after"))
    for p in result["phases"]:
        def g(part, key):
            return "-" if p.get(part) is None else str(p[part][key])
        print("%-14s %3d %-4s %10.6f  %14s %14s %14s  %14s %14s %14s" % (
            p["name"], p["occurrence"], "yes" if p["ok"] else "NO", p["seconds"],
            g("before", "allocated_bytes"), g("peak", "allocated_bytes"),
            g("after", "allocated_bytes"), g("before", "reserved_bytes"),
            g("peak", "reserved_bytes"), g("after", "reserved_bytes")))
        if p["error"]:
            print("    failed: %s: %s" % (p["error"]["type"], p["error"]["message"]))
    print("(all byte counts in B; peaks are per phase, after reset_peak_memory_stats; "
          "peak allocated and peak reserved need not coincide)")


def cmd_measure(a):
    # The output is checked before anything else, torch included.
    if os.path.lexists(a.output):
        die("measure", "%s already exists; refusing to overwrite it" % a.output)
    parent = os.path.dirname(os.path.abspath(a.output))
    if not os.path.isdir(parent):
        die("measure", "%s: no such directory" % parent)
    torch = import_torch("measure")
    idx = device_index(torch, "measure", a.device)
    try:
        out = open(a.output, "x", encoding="utf-8")
    except FileExistsError:
        die("measure", "%s already exists; refusing to overwrite it" % a.output)
    except OSError as e:
        die("measure", "cannot create %s: %s" % (a.output, e))
    with out:
        torch.cuda.init()
        torch.cuda.set_device(idx)
        result = {
            "tool": TOOL, "version": VERSION, "command": "measure",
            "environment": environment(torch, idx, a.device),
            "parameters": {"device": a.device, "batch": a.batch, "context": a.context,
                           "width": a.width, "layers": a.layers, "dtype": a.dtype,
                           "warmup": a.warmup, "repeats": a.repeats, "seed": a.seed,
                           "marks": a.marks},
            "model": {"kind": "dense: layers x [Linear(W, 4W), GELU, Linear(4W, W)]",
                      "input_shape": [a.batch, a.context, a.width]},
            "phases": [],
            "completed": False,
            "notes": [
                "bytes are raw; peaks are each counter's maximum since the phase's "
                "reset_peak_memory_stats and need not coincide",
                "device_used_bytes is total minus free from cudaMemGetInfo: it includes "
                "the CUDA context, memory outside PyTorch's allocator and other processes",
                "each forward's output is released inside its phase",
            ],
        }
        try:
            run_measure(torch, a, idx, result)
        finally:
            json.dump(result, out, indent=2)
            out.write("\n")
    print_table(result)
    print("written: %s" % a.output)
    return 0 if result["completed"] else 1


# --------------------------------------------------------------------- main

def _count(minimum):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a whole number: %r" % text)
        if v < minimum:
            raise argparse.ArgumentTypeError("must be %d or more, got %d" % (minimum, v))
        return v
    return parse


def parser():
    p = argparse.ArgumentParser(
        prog="gmt_example.py",
        description="The seed's memory measurement protocol on a small dense network. "
                    "All byte counts are raw bytes (B); GB = 10^9 B, GiB = 2^30 B.",
        epilog="Exit status: 0 done; 1 a measured phase failed (JSON written); "
               "2 bad arguments, existing output, or no PyTorch / no GPU.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    e = sub.add_parser("estimate", help="weight bytes and an assumed envelope (arithmetic)",
                       description="Weight bytes = parameters x bits / 8, in B, GB (10^9 B) "
                                   "and GiB (2^30 B); with --reserve-gib, the envelope = "
                                   "weights + reserve, labelled as an ASSUMPTION (the "
                                   "reserve is a guess, not a measurement).",
                       epilog="Example: estimate --parameters 7e9 --bits 16 --reserve-gib 4")
    e.add_argument("--parameters", required=True, metavar="N",
                   help="number of parameters (7e9 and 7000000000 both work)")
    e.add_argument("--bits", required=True, metavar="B", help="bits per parameter (16, 8, 4.5)")
    e.add_argument("--reserve-gib", metavar="R",
                   help="assumed extra GiB (activations, caches, workspaces, context)")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.set_defaults(func=cmd_estimate)

    v = sub.add_parser("environment", help="GPU, driver, Python, PyTorch, backend, allocator",
                       description="Prints the GPU, driver, Python, PyTorch, CUDA or HIP "
                                   "backend and allocator settings. Exits 2 when PyTorch "
                                   "or a GPU is missing.")
    v.add_argument("--device", default="cuda:0", help="cuda or cuda:N (default cuda:0)")
    v.add_argument("--json", action="store_true", help="print JSON")
    v.set_defaults(func=cmd_environment)

    m = sub.add_parser("measure", help="measure each phase of a small dense network",
                       description="Runs model_load, inputs, cold_forward, warmup (K forwards)"
                                   " and R warm_forward occurrences; per phase: synchronize, "
                                   "read allocated/reserved, reset peaks, run inside an NVTX "
                                   "range, synchronize, read peaks and levels. Writes JSON "
                                   "with raw bytes to --output, which must not exist.",
                       epilog="Under the tracer: build/gpumemtrace python3 "
                              "scripts/examples/gmt_example.py measure --output m.json; "
                              "then gpumemtrace-analyze phases TRACE.")
    m.add_argument("--output", required=True, metavar="FILE",
                   help="JSON result (never overwritten)")
    m.add_argument("--device", default="cuda:0", help="cuda or cuda:N (default cuda:0)")
    m.add_argument("--batch", type=_count(1), default=8, help="batch size (default 8)")
    m.add_argument("--context", type=_count(1), default=512,
                   help="tokens per sequence (default 512)")
    m.add_argument("--width", type=_count(1), default=1024, help="hidden width W (default 1024)")
    m.add_argument("--layers", type=_count(1), default=2,
                   help="dense blocks Linear(W,4W)-GELU-Linear(4W,W) (default 2)")
    m.add_argument("--dtype", choices=DTYPES, default="float16", help="default float16")
    m.add_argument("--warmup", type=_count(0), default=3,
                   help="forwards in the warmup phase (default 3)")
    m.add_argument("--repeats", type=_count(1), default=5,
                   help="warm_forward occurrences, one forward each (default 5)")
    m.add_argument("--seed", type=_count(0), default=0, help="random seed (default 0)")
    m.add_argument("--marks", choices=("both", "nvtx", "api"), default="nvtx",
                   help="phase marks: NVTX ranges (default: gpumemtrace records them as an "
                        "NVTX injection library), gpumemtrace.phase() when importable, or "
                        "both (each phase then appears twice in the trace, nested)")
    m.set_defaults(func=cmd_measure)
    return p


def main(argv=None):
    a = parser().parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
