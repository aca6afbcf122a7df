"""The companion's PyTorch side: what happens once `torch` is imported.

Lifecycle.
  install() (from sitecustomize, at interpreter start): when the preload is
    loaded, puts a finder first on sys.meta_path that lets the normal
    finders find `torch` and hooks that one module's exec_module, so we run
    right after `import torch` completed (or at once if it already was).
    Nothing else is imported or touched until then.
  torch imported: wrap torch.cuda._lazy_init and torch.cuda.nvtx's
    range_push / range_pop / mark; add our phase-boundary hook to
    gpumemtrace._framework; register the exit handler. No trace call yet: a
    process that imports torch but never uses CUDA (torchrun's agent, data
    loader workers) leaves no trace file.
  CUDA initialised: set up once (register "pytorch", metadata, history,
    OOM observer). Detected right after torch.cuda._lazy_init() returns:
    PyTorch's C++ calls that attribute of the module on the first CUDA use
    (torch::utils::device_lazy_init) and its Python API calls it too, and
    wrapping it puts us after the initialisation lock is released and
    before the first allocation is served, so the history misses nothing.
    CUDA initialised by any other road is noticed at the next boundary (the
    history then starts late; the metadata says so).
  Phase boundaries: outermost torch.cuda.nvtx ranges (push at depth 0, the
    pop back to depth 0) and top-level marks, gpumemtrace's phase API
    (gpumemtrace._framework.on_phase_boundary), the OOM observer and exit:
    move the new history entries into the trace (convert.py) and record the
    allocator's counters (memory_stats) of every device that has any, and
    its retry and out-of-memory counts when they changed.

Backends. native: history on (no stacks, or Python stacks with
GPUMEMTRACE_COMPANION_STACKS=python), GPUMEMTRACE_COMPANION_ENTRIES ring
entries (default 1000000). cudaMallocAsync: PyTorch refuses history and the
OOM observer there; the counters are recorded and the driver-level
stream-ordered events and pool samples are the curves.

Nothing here may break the program: every failure is caught and reported
once on stderr ("gpumemtrace companion: ...").
"""

import atexit
import os
import sys
import threading
import time

from gpumemtrace_companion import convert as _convert

_PREFIX = "gpumemtrace companion: "
_reported = set()
_companion = None


def _report(key, msg):
    if key in _reported:
        return
    _reported.add(key)
    try:
        sys.stderr.write(_PREFIX + msg + "\n")
    except Exception:
        pass


def _env_int(name, default):
    try:
        v = int(os.environ.get(name, ""))
        return v if v > 0 else default
    except ValueError:
        return default


def _alloc_conf():
    return os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or os.environ.get("PYTORCH_ALLOC_CONF") or ""


def _backend(torch):
    try:
        b = torch.cuda.memory.get_allocator_backend()
        if b:
            return str(b)
    except Exception:
        pass
    for part in _alloc_conf().split(","):
        k, _, v = part.partition(":")
        if k.strip() == "backend" and v.strip():
            return v.strip()
    return "native"


# How the history's wall-clock times are put on the tracer's clock
# (CLOCK_MONOTONIC): see _clock_offset.
_OFFSET_TRIES = 16
_OFFSET_GOOD_NS = 2000


def _clock_offset():
    """(CLOCK_REALTIME - CLOCK_MONOTONIC, CLOCK_MONOTONIC now), in ns.

    The two clocks cannot be read at one instant. A CLOCK_REALTIME reading
    between two CLOCK_MONOTONIC readings gives the offset to within half the
    gap between them; read one after the other, a thread preempted between
    the two reads (a loaded machine: milliseconds) would move every event of
    the move later by that much, past the driver's events that followed
    them (a block's free after the failed cudaMalloc it came before). So
    the offset is taken from the tightest of up to _OFFSET_TRIES brackets
    (done at the first one within _OFFSET_GOOD_NS), its realtime reading set
    against the bracket's middle. "now" is the last reading, after the
    snapshot was taken: no moved event is later."""
    read = time.clock_gettime_ns
    best_gap, best = None, 0
    for _ in range(_OFFSET_TRIES):
        a = read(time.CLOCK_MONOTONIC)
        r = read(time.CLOCK_REALTIME)
        b = read(time.CLOCK_MONOTONIC)
        if best_gap is None or b - a < best_gap:
            best_gap, best = b - a, r - (a + (b - a) // 2)
        if best_gap <= _OFFSET_GOOD_NS:
            break
    return best, b


class _Companion(object):
    def __init__(self, torch, fw):
        self.torch = torch
        self.fw = fw
        self.fw_id = 0
        self.ready = False
        self.failed = False
        self.history = False
        self.stacks = False
        self.max_entries = _env_int("GPUMEMTRACE_COMPANION_ENTRIES", 1000000)
        self.state = None
        self.devices = set()            # devices whose counters we record
        self.retries = {}               # device -> (num_alloc_retries, num_ooms) recorded
        self.setup_lock = threading.Lock()
        self.move_lock = threading.Lock()
        self.tls = threading.local()
        self.orig_lazy_init = None

    # ---- wrapping ----------------------------------------------------------

    def wrap(self):
        cuda = getattr(self.torch, "cuda", None)
        if cuda is None:
            return
        lazy = getattr(cuda, "_lazy_init", None)
        if callable(lazy):
            self.orig_lazy_init = lazy
            comp = self

            def _lazy_init(*args, **kwargs):
                r = lazy(*args, **kwargs)
                comp.after_init()
                return r

            _lazy_init.__wrapped__ = lazy
            _lazy_init.__doc__ = getattr(lazy, "__doc__", None)
            cuda._lazy_init = _lazy_init
        nvtx = getattr(cuda, "nvtx", None)
        if nvtx is None:
            try:
                import importlib

                nvtx = importlib.import_module(self.torch.__name__ + ".cuda.nvtx")
            except Exception:
                nvtx = None
        if nvtx is not None:
            for name, kind in (("range_push", 1), ("range_pop", -1), ("mark", 0)):
                fn = getattr(nvtx, name, None)
                if callable(fn):
                    setattr(nvtx, name, self._nvtx_wrapper(fn, kind))
        self.fw.add_phase_boundary_hook(self.boundary)
        atexit.register(self.at_exit)
        self.after_init()

    def _nvtx_wrapper(self, fn, kind):
        comp = self

        def wrapper(*args, **kwargs):
            r = fn(*args, **kwargs)
            try:
                d = getattr(comp.tls, "depth", 0)
                if kind > 0:
                    comp.tls.depth = d + 1
                    outer = d == 0
                elif kind < 0:
                    d = d - 1 if d > 0 else 0
                    comp.tls.depth = d
                    outer = d == 0
                else:
                    outer = d == 0
                if outer:
                    comp.boundary()
            except Exception as e:
                _report("nvtx", "phase boundary failed: %r" % (e,))
            return r

        wrapper.__wrapped__ = fn
        wrapper.__name__ = getattr(fn, "__name__", "nvtx")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper

    # ---- set-up, once CUDA is initialised -----------------------------------

    def after_init(self):
        try:
            if not self.ready and not self.failed and self.torch.cuda.is_initialized():
                self.setup(late=False)
        except Exception as e:
            self.failed = True
            _report("setup", "set-up failed: %r" % (e,))

    def setup(self, late):
        torch, fw = self.torch, self.fw
        with self.setup_lock:
            if self.ready or self.failed:
                return
            self.ready = True
            # From here on no need to hear of _lazy_init: give it back.
            cuda = torch.cuda
            if self.orig_lazy_init is not None and \
                    getattr(cuda._lazy_init, "__wrapped__", None) is self.orig_lazy_init:
                cuda._lazy_init = self.orig_lazy_init
            self.fw_id = fw.fw_register("pytorch")
            if not self.fw_id:
                self.failed = True
                return
            backend = _backend(torch)
            version = getattr(torch, "version", None)
            fw.meta("torch_version", str(getattr(torch, "__version__", "unknown")))
            fw.meta("torch_cuda_version", str(getattr(version, "cuda", None) or "none"))
            fw.meta("allocator_backend", backend)
            fw.meta("pytorch_cuda_alloc_conf", _alloc_conf())
            if backend == "native":
                stacks = os.environ.get("GPUMEMTRACE_COMPANION_STACKS", "") == "python"
                try:
                    start_us = time.time_ns() // 1000
                    cuda.memory._record_memory_history(
                        enabled="all", context="alloc" if stacks else None, stacks="python",
                        max_entries=self.max_entries)
                    self.state = _convert.ConvertState(start_time_us=start_us)
                    self.stacks = stacks
                    self.history = True
                    fw.meta("companion_history", "on max_entries=%d stacks=%s start=%s" % (
                        self.max_entries, "python" if stacks else "none",
                        "late" if late else "cuda_init"))
                except Exception as e:
                    fw.meta("companion_history", "off: %r" % (e,))
                    _report("history", "allocator history not available: %r" % (e,))
                try:
                    torch._C._cuda_attach_out_of_memory_observer(self.on_oom)
                except Exception as e:
                    _report("oom", "out-of-memory observer not available: %r" % (e,))
            else:
                fw.meta("companion_history",
                        "off: backend %s (counters only; the driver's stream-ordered events "
                        "and pool samples are the curves)" % backend)

    # ---- moving events ------------------------------------------------------

    def move(self):
        """Moves the history's new entries into the trace; the Result or None."""
        if not self.history:
            return None
        snap = self.torch.cuda.memory._snapshot()
        offset, mono = _clock_offset()
        res = _convert.convert(snap, self.state, offset, self.max_entries, mono,
                               intern_stack=self.fw.stack if self.stacks else None)
        # Every moved event came from the history: say so (SNAPSHOT flag).
        events = [(e[0] | self.fw.FW_FROM_HISTORY,) + tuple(e[1:]) for e in res.events]
        if events and self.fw.fw_events(self.fw_id, events) != 0:
            _report("events", "the preload refused %d events" % len(events))
        for device, n in sorted(res.lost.items()):
            self.fw.fw_lost(self.fw_id, device, n)
        for w in res.warnings:
            # In the trace every time; on stderr once per kind.
            self.fw.meta("companion_warning", w)
            if "overflowed" in w:
                _report("overflow", w + " (raise GPUMEMTRACE_COMPANION_ENTRIES or mark phases "
                        "more often)")
            else:
                _report("restarted", w)
        for e in res.events:
            self.devices.add(e[1])
        return res

    def counters(self):
        cuda = self.torch.cuda
        for d in range(cuda.device_count()):
            s = cuda.memory_stats(d)
            v = [int(s.get(k, 0)) for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                                            "reserved_bytes.all.current", "reserved_bytes.all.peak")]
            if d not in self.devices and not any(v):
                continue
            self.devices.add(d)
            self.fw.fw_counters(self.fw_id, d, v[0], v[1], v[2], v[3])
            # Retries after releasing the cache, and OOMs given up on: a
            # checkpoint when they change (first seen, or moved).
            if "num_alloc_retries" in s or "num_ooms" in s:
                r = (int(s.get("num_alloc_retries", 0)), int(s.get("num_ooms", 0)))
                if self.retries.get(d, (0, 0)) != r:
                    self.retries[d] = r
                    self.fw.fw_retries(self.fw_id, d, r[0], r[1])

    def boundary(self, wait=False):
        if not self.ready:
            if self.failed:
                return
            try:
                if not self.torch.cuda.is_initialized():
                    return
                self.setup(late=True)
            except Exception as e:
                self.failed = True
                _report("setup", "set-up failed: %r" % (e,))
                return
        if not self.ready or self.failed:
            return
        # Another thread moving now moves everything there is.
        got = self.move_lock.acquire(True, 2.0) if wait else self.move_lock.acquire(False)
        if not got:
            return
        try:
            self.move()
            self.counters()
        finally:
            self.move_lock.release()

    def on_oom(self, device, alloc, device_allocated, device_free):
        try:
            moved_oom = False
            if self.move_lock.acquire(True, 2.0):
                try:
                    res = self.move()
                    moved_oom = bool(res) and any(e[0] == _convert.OOM and e[1] == device
                                                  for e in res.events)
                    self.counters()
                finally:
                    self.move_lock.release()
            if not moved_oom:
                self.fw.fw_events(self.fw_id, [(_convert.OOM, int(device), int(device_free),
                                                int(alloc), 0, 0)])
        except Exception as e:
            _report("oom-run", "out-of-memory observer failed: %r" % (e,))

    def at_exit(self):
        try:
            self.boundary(wait=True)
        except Exception as e:
            _report("exit", "final move failed: %r" % (e,))


def _torch_imported(torch):
    global _companion
    for f in list(sys.meta_path):
        if isinstance(f, _TorchFinder):
            sys.meta_path.remove(f)
    if _companion is not None:
        return
    try:
        from gpumemtrace import _framework

        _companion = _Companion(torch, _framework)
        _companion.wrap()
    except Exception as e:
        _report("wrap", "not started: %r" % (e,))


class _TorchFinder(object):
    """Finds nothing itself: lets the other finders find `torch` and hooks
    that module's exec_module (on its own loader instance), so we run right
    after torch/__init__.py completed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _TorchFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = getattr(loader, "exec_module", None)
        if original is None:
            return spec

        def exec_module(module):
            try:
                original(module)
            finally:
                try:
                    del loader.exec_module
                except AttributeError:
                    pass
            _torch_imported(module)

        try:
            loader.exec_module = exec_module
        except Exception:
            return spec   # a loader that takes no attributes: not hooked
        return spec


def install():
    """Starts the companion if the preload is loaded; True when started."""
    from gpumemtrace import _framework

    if not _framework.fw_available():
        return False
    torch = sys.modules.get("torch")
    if torch is not None:
        _torch_imported(torch)
    else:
        sys.meta_path.insert(0, _TorchFinder())
    return True
