"""The framework channel of gpumemtrace (preload/gpumemtrace.h), from Python.

An allocator reports its own view (blocks handed out, segments taken from
CUDA, its counters) so the trace holds "allocated" beside "reserved". The
PyTorch companion (gpumemtrace_companion) is the main user. Every function
does nothing (and returns 0 or False) when the preload is not loaded.

Events are tuples (action, device, addr, size, stream, time_ns[, stack]):
action one of the constants below, time_ns 0 for "now" or CLOCK_MONOTONIC ns
in the past (sorted, each reported once; see gpumemtrace_fw_events), stack an
id from stack() (0 or absent: none).

Phase boundaries: gpumemtrace.phase_begin/phase_end (and the phase context
manager) call on_phase_boundary(), which runs the hooks added with
add_phase_boundary_hook() (the companion moves PyTorch's history there).
"""

import array
import ctypes
import sys
import threading

__all__ = [
    "FW_ALLOC",
    "FW_FREE_REQUESTED",
    "FW_FREE_COMPLETED",
    "FW_SEGMENT_ALLOC",
    "FW_SEGMENT_FREE",
    "FW_SEGMENT_MAP",
    "FW_SEGMENT_UNMAP",
    "FW_OOM",
    "FW_FROM_HISTORY",
    "fw_available",
    "fw_register",
    "fw_events",
    "fw_counters",
    "fw_lost",
    "fw_retries",
    "meta",
    "stack",
]

FW_ALLOC = 1
# OR'ed into an action: moved from the framework's own history after the
# fact (recorded as the SNAPSHOT flag); only with a past time_ns.
FW_FROM_HISTORY = 0x100
FW_FREE_REQUESTED = 2
FW_FREE_COMPLETED = 3
FW_SEGMENT_ALLOC = 4
FW_SEGMENT_FREE = 5
FW_SEGMENT_MAP = 6
FW_SEGMENT_UNMAP = 7
FW_OOM = 8

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1


def _load():
    try:
        scope = ctypes.CDLL(None)
        f = {
            "register": scope.gpumemtrace_fw_register,
            "events": scope.gpumemtrace_fw_events,
            "counters": scope.gpumemtrace_fw_counters,
            "lost": scope.gpumemtrace_fw_lost,
            "retries": scope.gpumemtrace_fw_retries,
            "meta": scope.gpumemtrace_meta,
            "stack": scope.gpumemtrace_stack,
        }
    except (OSError, AttributeError):
        return None
    u64, c_int = ctypes.c_uint64, ctypes.c_int
    f["register"].argtypes = [ctypes.c_char_p]
    f["register"].restype = c_int
    f["events"].argtypes = [c_int, ctypes.c_void_p, ctypes.c_size_t]
    f["events"].restype = c_int
    f["counters"].argtypes = [c_int, c_int, u64, u64, u64, u64]
    f["counters"].restype = None
    f["lost"].argtypes = [c_int, c_int, u64]
    f["lost"].restype = None
    f["retries"].argtypes = [c_int, c_int, u64, u64]
    f["retries"].restype = None
    f["meta"].argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    f["meta"].restype = None
    f["stack"].argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    f["stack"].restype = ctypes.c_uint32
    return f


_f = _load()


def _bytes(s):
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8", "replace")


def fw_available():
    """True when the preload (with the framework channel) is loaded."""
    return _f is not None


def fw_register(name):
    """The framework id (> 0) of name ("pytorch"), the same for the same
    name; 0 when not traced."""
    if _f is None or not name:
        return 0
    return _f["register"](_bytes(name))


def fw_events(fw, events):
    """Reports events [(action, device, addr, size, stream, time_ns)] of
    framework fw. Returns 0, or -1 (fw unknown or an action invalid:
    nothing of the call recorded; also when not traced)."""
    if _f is None:
        return -1
    # gpumemtrace_fw_event_t is {int action; int device; uint64 addr, size,
    # stream, time_ns, stack}: 48 bytes, six little-endian uint64 words with
    # action and device in the first. array('Q') builds it in C, far
    # faster than a ctypes Structure per event (a history can hold 10^6).
    words = array.array("Q")
    for ev in events:
        action, device, addr, size, stream, time_ns = ev[:6]
        words.extend(((action & _U32) | ((device & _U32) << 32), addr & _U64, size & _U64,
                      stream & _U64, time_ns & _U64, (ev[6] & _U64) if len(ev) > 6 else 0))
    n = len(words) // 6
    if n == 0:
        return 0
    if sys.byteorder != "little":
        return -1
    address, _ = words.buffer_info()
    return _f["events"](fw, address, n)


def fw_counters(fw, device, allocated, allocated_peak, reserved, reserved_peak):
    """The framework's own counters now (bytes), a checkpoint."""
    if _f is not None:
        _f["counters"](fw, device, allocated & _U64, allocated_peak & _U64, reserved & _U64,
                       reserved_peak & _U64)


def fw_lost(fw, device, n):
    """n events of framework fw were lost before they could be reported."""
    if _f is not None and n > 0:
        _f["lost"](fw, device, n & _U64)


def fw_retries(fw, device, retries, ooms):
    """The framework's own counts now, a checkpoint: allocations it retried
    after giving its cache back, out-of-memory failures it gave up on."""
    if _f is not None:
        _f["retries"](fw, device, retries & _U64, ooms & _U64)


def stack(frames):
    """The id of a call stack given as text frames (innermost first, e.g.
    "name (file:line)"), for the seventh element of an event; the same
    frames give the same id. 0 when not traced."""
    if _f is None:
        return 0
    frames = [_bytes(f) for f in frames]
    argv = (ctypes.c_char_p * max(len(frames), 1))(*frames)
    return _f["stack"](ctypes.cast(argv, ctypes.c_void_p), len(frames))


def meta(key=None, value=None, **dims):
    """Metadata for the trace: the dimensions this run tests, as
    gpumemtrace.meta("batch", 8) or gpumemtrace.meta(batch=8, context=4096)
    (values become strings). The analyzer's card shows them. Recording one
    starts the trace file if this process had none yet."""
    if _f is None:
        return
    pairs = ([(key, value)] if key else []) + sorted(dims.items())
    for k, v in pairs:
        _f["meta"](_bytes(k), _bytes("" if v is None else v))


# ---- phase boundaries -------------------------------------------------------

_hooks = []
_hooks_lock = threading.Lock()
_reported = set()


def add_phase_boundary_hook(fn):
    """fn() runs at every phase boundary (gpumemtrace's phase API, and the
    companion's own NVTX boundaries). Added once."""
    with _hooks_lock:
        if fn not in _hooks:
            _hooks.append(fn)


def remove_phase_boundary_hook(fn):
    with _hooks_lock:
        if fn in _hooks:
            _hooks.remove(fn)


def on_phase_boundary():
    """Called by the phase API at each begin and end. Never raises: a hook
    that fails is reported once on stderr."""
    if not _hooks:
        return
    for fn in list(_hooks):
        try:
            fn()
        except Exception as e:  # the traced program must go on
            key = getattr(fn, "__qualname__", repr(fn))
            if key not in _reported:
                _reported.add(key)
                try:
                    sys.stderr.write("gpumemtrace companion: phase boundary hook %s failed: %r\n"
                                     % (key, e))
                except Exception:
                    pass
