"""Phases and marks for gpumemtrace, from Python.

    import gpumemtrace

    with gpumemtrace.phase("warmup"):
        model(x)

    @gpumemtrace.phase("step")
    def step(batch): ...

    gpumemtrace.phase_begin("load"); ...; gpumemtrace.phase_end("load")
    gpumemtrace.mark("checkpoint saved")

The functions talk to the preload (libgpumemtrace.so) that the launcher
loads with LD_PRELOAD; they are found in the process's global symbol scope.
Without the preload every function does nothing and never fails, so a script
can keep its phases when it is not traced. Pure Python (ctypes), no compiled
part. The C API is preload/gpumemtrace.h.

A phase is one thread's stretch of time; phases nest per thread. The first
occurrence of a phase name is reported apart from the later ones (cold and
warm). Names are str (sent as UTF-8) or bytes.
"""

import ctypes
import functools

__all__ = [
    "phase",
    "phase_begin",
    "phase_end",
    "mark",
    "flush",
    "active",
    "version",
    "trace_path",
]


def _load():
    """The preload's functions, or None when it is not loaded."""
    try:
        scope = ctypes.CDLL(None)
        fns = {
            "begin": scope.gpumemtrace_phase_begin,
            "end": scope.gpumemtrace_phase_end,
            "mark": scope.gpumemtrace_mark,
            "flush": scope.gpumemtrace_flush,
            "version": scope.gpumemtrace_version,
            "trace_path": scope.gpumemtrace_trace_path,
        }
    except (OSError, AttributeError):
        return None
    for name in ("begin", "end", "mark"):
        fns[name].argtypes = [ctypes.c_char_p]
        fns[name].restype = None
    fns["flush"].argtypes = []
    fns["flush"].restype = ctypes.c_int
    for name in ("version", "trace_path"):
        fns[name].argtypes = []
        fns[name].restype = ctypes.c_char_p
    return fns


_fns = _load()


def _library():
    """The preload's global scope as a ctypes.CDLL, or None without it (for
    the other modules of this package)."""
    if _fns is None:
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def _encode(name):
    if name is None:
        return None
    if isinstance(name, bytes):
        return name
    return str(name).encode("utf-8", "replace")


def active():
    """True when the preload is loaded (this process is traced)."""
    return _fns is not None


def version():
    """The preload's version ("0.1.0"), or None when it is not loaded."""
    if _fns is None:
        return None
    v = _fns["version"]()
    return v.decode("utf-8", "replace") if v else None


def trace_path():
    """The trace file being written, or None (not loaded, or nothing traced
    yet: the file is created by the first traced call)."""
    if _fns is None:
        return None
    p = _fns["trace_path"]()
    return p.decode("utf-8", "surrogateescape") if p else None


def _boundary():
    # The PyTorch companion moves the allocator's history into the trace at
    # every phase boundary (gpumemtrace._framework.on_phase_boundary).
    if _on_boundary is not None:
        _on_boundary()


def phase_begin(name):
    """Begins a phase on the calling thread. Empty names are ignored."""
    if _fns is not None:
        _boundary()
        _fns["begin"](_encode(name))


def phase_end(name=None):
    """Ends the calling thread's innermost phase; name, if given, should be
    the phase's (a mismatch is recorded as given)."""
    if _fns is not None:
        _boundary()
        _fns["end"](_encode(name))


def mark(name):
    """An instant worth seeing on the timeline. Empty names are ignored."""
    if _fns is not None:
        _fns["mark"](_encode(name))


def flush():
    """Writes everything buffered to the trace file, waiting up to about 2 s.
    True when done (also when nothing is traced), False otherwise."""
    if _fns is None:
        return True
    return _fns["flush"]() == 0


class phase(object):
    """A phase as a context manager or a decorator:

        with gpumemtrace.phase("warmup"): ...

        @gpumemtrace.phase("step")
        def step(): ...

    The phase ends when the block is left, also by an exception (which goes
    on). Reentrant: the same object may be used on several threads and
    nested in itself.
    """

    __slots__ = ("name", "_encoded")

    def __init__(self, name):
        self.name = name
        self._encoded = _encode(name)

    def __enter__(self):
        if _fns is not None:
            _boundary()
            _fns["begin"](self._encoded)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _fns is not None:
            _boundary()
            _fns["end"](self._encoded)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):
        return "gpumemtrace.phase(%r)" % (self.name,)


# The framework channel (gpumemtrace_fw_*), when that module is present.
_on_boundary = None
try:
    from ._framework import *  # noqa: F401,F403
    from . import _framework as _fw

    __all__ += list(getattr(_fw, "__all__", []))
    _on_boundary = getattr(_fw, "on_phase_boundary", None)
    del _fw
except ImportError:
    pass
