"""A fake `torch`, for tests/cases/example_*.sh ONLY: never a measurement.

It imports only when GMT_FAKE_TORCH=1 (the test scripts set it), so finding it
on sys.path by accident cannot turn into numbers that look like a GPU's. It
models just what scripts/examples/gmt_example.py uses, with a device
allocator whose counts are known by construction:

- every tensor on "cuda..." takes its size rounded up to 512 B (at least
  512 B) of "allocated" while the Python object lives (CPython frees it when
  the last reference goes, so the counts follow the program exactly);
- "reserved" covers the highest allocated level so far in whole segments of
  GMT_FAKE_TORCH_SEGMENT bytes (default 2 MiB) and never shrinks;
- an allocation that would take allocated above GMT_FAKE_TORCH_LIMIT bytes
  raises torch.cuda.OutOfMemoryError (like the caching allocator, nothing is
  counted for the failed request);
- GMT_FAKE_TORCH_GPUS (default 1) GPUs of GMT_FAKE_TORCH_TOTAL bytes (default
  1 GiB); mem_get_info reports total - reserved as free;
- GMT_FAKE_TORCH_LOG, when set, gets one line per call that matters to the
  protocol's order: import, manual_seed, synchronize, reset_peak_memory_stats,
  range_push NAME, range_pop.

With FAKE_TORCH_CUDART naming a CUDA runtime (the project's double), it
also behaves towards gpumemtrace as PyTorch does, so that the example can
run under the tracer (tests/cases/card_*.sh): each growth of "reserved"
is a cudaMalloc of the difference (a segment, never freed), mem_get_info
is cudaMemGetInfo, CUDA is initialised (torch.cuda._lazy_init) at the first
tensor on "cuda", and the PyTorch companion finds the surface it uses:
torch.cuda.is_initialized, memory._record_memory_history and _snapshot
(a history of segment_alloc, alloc, free_requested, free_completed and oom
entries; block addresses are synthetic, not inside the segments),
memory_stats, torch._C._cuda_attach_out_of_memory_observer (called before
OutOfMemoryError is raised).
"""
import contextlib
import ctypes
import os
import time
import types

if os.environ.get("GMT_FAKE_TORCH") != "1":
    raise ImportError("tests/examples/fake_torch is a test double; it loads only with "
                      "GMT_FAKE_TORCH=1")

__version__ = "0.0.0+gmt.fake"
_SEGMENT = int(os.environ.get("GMT_FAKE_TORCH_SEGMENT", str(2 * 1024 * 1024)))
_LIMIT = int(os.environ["GMT_FAKE_TORCH_LIMIT"]) if os.environ.get("GMT_FAKE_TORCH_LIMIT") else None
_GPUS = int(os.environ.get("GMT_FAKE_TORCH_GPUS", "1"))
_TOTAL = int(os.environ.get("GMT_FAKE_TORCH_TOTAL", str(1 << 30)))
_state = {"allocated": 0, "reserved": 0, "peak_allocated": 0, "peak_reserved": 0, "ooms": 0}
_CUDART = os.environ.get("FAKE_TORCH_CUDART") or None
_rt = ctypes.CDLL(_CUDART) if _CUDART else None
_initialized = [False]
_history = {"on": False, "max": 0, "ring": []}
_observers = []
_next_block = [0x7e0000000000]


def _record(action, addr, size):
    """One history entry (when _record_memory_history turned it on)."""
    if not _history["on"]:
        return
    e = {"action": action, "size": size, "stream": 0, "time_us": time.time_ns() // 1000,
         "frames": []}
    e["device_free" if action == "oom" else "addr"] = addr
    ring = _history["ring"]
    ring.append(e)
    if len(ring) > _history["max"]:
        del ring[0]


def _segment(nbytes):
    """A new segment of nbytes from the runtime; its address."""
    p = ctypes.c_void_p()
    if _rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes)) != 0:
        raise RuntimeError("fake torch: cudaMalloc of a %d-byte segment failed" % nbytes)
    return p.value


def _device_free():
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    if _rt.cudaMemGetInfo(ctypes.byref(f), ctypes.byref(t)) != 0:
        raise RuntimeError("fake torch: cudaMemGetInfo failed")
    return f.value, t.value


def _log(line):
    path = os.environ.get("GMT_FAKE_TORCH_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


_log("import torch")


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


float16 = dtype("float16", 2)
bfloat16 = dtype("bfloat16", 2)
float32 = dtype("float32", 4)
version = types.SimpleNamespace(cuda="13.0", hip=None)


class OutOfMemoryError(RuntimeError):
    pass


def _alloc(nbytes):
    """The block's (size, address) for a tensor of nbytes on the device."""
    if _rt is not None and not _initialized[0]:
        cuda._lazy_init()
    size = max(512, (nbytes + 511) // 512 * 512)
    s = _state
    if _LIMIT is not None and s["allocated"] + size > _LIMIT:
        s["ooms"] += 1
        if _rt is not None:
            free = _device_free()[0]
            _record("oom", free, size)
            for fn in list(_observers):
                fn(0, size, s["allocated"], free)
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes (fake torch, "
                                "limit %d bytes)" % (size, _LIMIT))
    need = (s["allocated"] + size + _SEGMENT - 1) // _SEGMENT * _SEGMENT
    if need > s["reserved"]:
        if _rt is not None:
            _record("segment_alloc", _segment(need - s["reserved"]), need - s["reserved"])
        s["reserved"] = need
        s["peak_reserved"] = max(s["peak_reserved"], s["reserved"])
    s["allocated"] += size
    s["peak_allocated"] = max(s["peak_allocated"], s["allocated"])
    addr = _next_block[0]
    _next_block[0] += size
    _record("alloc", addr, size)
    return size, addr


class Tensor:
    def __init__(self, shape, dt, device):
        self._block = 0  # set first: __del__ runs even when __init__ raised
        self.shape, self.dtype, self.device = tuple(shape), dt, str(device)
        if self.device.startswith("cuda"):
            self._block, self._addr = _alloc(self.numel() * dt.itemsize)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return self.dtype.itemsize

    def __del__(self):
        if self._block:
            _state["allocated"] -= self._block
            _record("free_requested", self._addr, self._block)
            _record("free_completed", self._addr, self._block)
            self._block = 0


def randn(shape, device="cpu", dtype=float32):
    return Tensor(shape, dtype, device)


def manual_seed(seed):
    _log("manual_seed %d" % seed)


@contextlib.contextmanager
def inference_mode():
    yield


# ------------------------------------------------------------------- torch.nn
nn = types.ModuleType("torch.nn")


class _Module:
    def __call__(self, x):
        return self.forward(x)

    def parameters(self):
        return iter(())

    def eval(self):
        return self


class _Linear(_Module):
    def __init__(self, fan_in, fan_out, device="cpu", dtype=float32):
        self.weight = Tensor((fan_out, fan_in), dtype, device)
        self.bias = Tensor((fan_out,), dtype, device)
        self.fan_out = fan_out

    def parameters(self):
        return iter((self.weight, self.bias))

    def forward(self, x):
        return Tensor(x.shape[:-1] + (self.fan_out,), x.dtype, x.device)


class _GELU(_Module):
    def forward(self, x):
        return Tensor(x.shape, x.dtype, x.device)


class _Sequential(_Module):
    def __init__(self, *mods):
        self.mods = mods

    def parameters(self):
        for m in self.mods:
            yield from m.parameters()

    def forward(self, x):
        for m in self.mods:
            x = m(x)
        return x


nn.Linear, nn.GELU, nn.Sequential, nn.Module = _Linear, _GELU, _Sequential, _Module

# ----------------------------------------------------------------- torch.cuda
cuda = types.ModuleType("torch.cuda")
cuda.OutOfMemoryError = OutOfMemoryError
cuda.is_available = lambda: _GPUS > 0
cuda.device_count = lambda: _GPUS
cuda.init = lambda: None
cuda.set_device = lambda d: None
cuda.get_device_name = lambda d=None: "Fake GPU (tests/examples/fake_torch)"
cuda.get_device_properties = lambda d=None: types.SimpleNamespace(
    name="Fake GPU (tests/examples/fake_torch)", total_memory=_TOTAL, major=0, minor=0)
cuda.get_allocator_backend = lambda: "native"
cuda.memory_allocated = lambda d=None: _state["allocated"]
cuda.memory_reserved = lambda d=None: _state["reserved"]
cuda.max_memory_allocated = lambda d=None: _state["peak_allocated"]
cuda.max_memory_reserved = lambda d=None: _state["peak_reserved"]
cuda.mem_get_info = (lambda d=None: _device_free()) if _rt is not None else \
    (lambda d=None: (_TOTAL - _state["reserved"], _TOTAL))


def _lazy_init():
    _initialized[0] = True


def _memory_stats(d=None):
    s = _state
    if not _initialized[0]:
        return {}
    return {"allocated_bytes.all.current": s["allocated"], "allocated_bytes.all.peak":
            s["peak_allocated"], "reserved_bytes.all.current": s["reserved"],
            "reserved_bytes.all.peak": s["peak_reserved"], "num_alloc_retries": 0,
            "num_ooms": s["ooms"]}


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    _history["on"] = bool(enabled) and max_entries > 0
    _history["max"] = max_entries


cuda._lazy_init = _lazy_init
cuda.is_initialized = lambda: _initialized[0]
cuda.memory_stats = _memory_stats
cuda.memory = types.ModuleType("torch.cuda.memory")
cuda.memory.get_allocator_backend = lambda: "native"
cuda.memory.memory_stats = _memory_stats
cuda.memory._record_memory_history = _record_memory_history
cuda.memory._snapshot = lambda: {"segments": [], "device_traces": [list(_history["ring"])]}
_C = types.ModuleType("torch._C")
_C._cuda_attach_out_of_memory_observer = _observers.append


def _synchronize(d=None):
    _log("synchronize")


def _reset_peak_memory_stats(d=None):
    _log("reset_peak_memory_stats")
    _state["peak_allocated"] = _state["allocated"]
    _state["peak_reserved"] = _state["reserved"]


cuda.synchronize = _synchronize
cuda.reset_peak_memory_stats = _reset_peak_memory_stats
cuda.nvtx = types.ModuleType("torch.cuda.nvtx")
cuda.nvtx.range_push = lambda name: _log("range_push %s" % name)
cuda.nvtx.range_pop = lambda: _log("range_pop")
