"""Fake torch.cuda.memory: a ring buffer per device in the documented
snapshot format, and the four counters the companion reads."""

import copy
import os
import time
import traceback

_rings = [[], []]
_max_entries = 0
_history_kwargs = None
_stats = [{"allocated_bytes.all.current": 0, "allocated_bytes.all.peak": 0,
           "reserved_bytes.all.current": 0, "reserved_bytes.all.peak": 0,
           "num_alloc_retries": 0, "num_ooms": 0} for _ in range(2)]


def get_allocator_backend():
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return "cudaMallocAsync" if "backend:cudaMallocAsync" in conf else "native"


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    global _max_entries, _history_kwargs
    if get_allocator_backend() != "native":
        raise RuntimeError("fake: history is not supported by cudaMallocAsync")
    _history_kwargs = dict(enabled=enabled, context=context, stacks=stacks,
                           max_entries=max_entries)
    _max_entries = max_entries if enabled else 0


def _frames():
    """The caller's Python frames, innermost first, as the history records
    them (context "alloc", stacks "python"); the fake's own frames left out."""
    return [{"filename": f.filename, "line": f.lineno, "name": f.name}
            for f in reversed(traceback.extract_stack()) if "fake_torch" not in f.filename]


def _event(device, action, addr, size, stream):
    s = _stats[device]
    delta = {"alloc": ("allocated", size), "free_requested": ("allocated", -size),
             "segment_alloc": ("reserved", size), "segment_free": ("reserved", -size),
             "segment_map": ("reserved", size), "segment_unmap": ("reserved", -size)}.get(action)
    if delta:
        k = delta[0] + "_bytes.all."
        s[k + "current"] += delta[1]
        s[k + "peak"] = max(s[k + "peak"], s[k + "current"])
    if _max_entries <= 0:
        return
    ctx = (_history_kwargs or {}).get("context")
    e = {"action": action, "size": size, "stream": stream, "time_us": time.time_ns() // 1000,
         "frames": _frames() if action == "alloc" and ctx in ("alloc", "all") else []}
    e["device_free" if action == "oom" else "addr"] = addr
    ring = _rings[device]
    ring.append(e)
    if len(ring) > _max_entries:
        del ring[0]


def _snapshot():
    if os.environ.get("FAKE_TORCH_BROKEN_SNAPSHOT"):
        raise RuntimeError("fake: broken snapshot")
    return {"segments": [], "device_traces": copy.deepcopy(_rings)}


def memory_stats(device=None):
    from . import _initialized

    if not _initialized:
        return {}
    return dict(_stats[device or 0])
