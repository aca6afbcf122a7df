"""Fake torch.cuda: initialisation, devices, counters, and helpers (names
starting _fake) with which a test script plays the allocator.

_fake_malloc/_fake_free are a small caching allocator that takes its
segments from a real CUDA runtime through ctypes (the project's runtime
double: FAKE_TORCH_CUDART names it), as PyTorch's native allocator does:
a block is carved from a cached segment when one has room (first fit,
sizes rounded up to 512 B); else a new segment of the block's size rounded
up to 2 MiB is taken with cudaMalloc; when that fails, every wholly free
segment is given back (cudaFree, history "segment_free") and cudaMalloc is
tried once more (num_alloc_retries counts it); when that fails too, the
history gets its "oom" entry (with the device's free bytes from
cudaMemGetInfo), num_ooms counts it, the OOM observers run and
OutOfMemoryError is raised."""

_initialized = False
lazy_init_calls = 0


def is_initialized():
    return _initialized


def _lazy_init():
    global _initialized, lazy_init_calls
    lazy_init_calls += 1
    if _initialized:
        return
    _initialized = True


def init():
    _lazy_init()


def device_count():
    return 2


from . import memory, nvtx  # noqa: E402,F401
from .memory import memory_stats  # noqa: E402,F401


def _fake(device, action, addr, size, stream=0):
    """One allocator event on device (recorded in the history if it is on)."""
    _lazy_init()
    memory._event(device, action, addr, size, stream)


def _fake_oom(device, size, device_free):
    """An allocation of size that fails: the history's oom entry, then the
    observers, as the caching allocator does before raising."""
    from .. import _C

    memory._event(device, "oom", device_free, size, 0)
    for fn in list(_C._oom_observers):
        fn(device, size, memory._stats[device]["allocated_bytes.all.current"], device_free)


class OutOfMemoryError(RuntimeError):
    pass


_cudart = None
_segments = []      # dicts: device, addr, size, blocks {offset: size}


def _runtime():
    global _cudart
    if _cudart is None:
        import ctypes
        import os

        path = os.environ.get("FAKE_TORCH_CUDART")
        if not path:
            raise RuntimeError("fake: FAKE_TORCH_CUDART names no CUDA runtime")
        _cudart = ctypes.CDLL(path)
    return _cudart


def _cuda_malloc(device, size):
    import ctypes

    rt = _runtime()
    p = ctypes.c_void_p()
    if rt.cudaSetDevice(ctypes.c_int(device)) != 0:
        raise RuntimeError("fake: cudaSetDevice failed")
    err = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size))
    if err == 2:  # cudaErrorMemoryAllocation
        return None
    if err != 0:
        raise RuntimeError("fake: cudaMalloc failed: %d" % err)
    return p.value


def _device_free(device):
    import ctypes

    rt = _runtime()
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    rt.cudaSetDevice(ctypes.c_int(device))
    if rt.cudaMemGetInfo(ctypes.byref(f), ctypes.byref(t)) != 0:
        raise RuntimeError("fake: cudaMemGetInfo failed")
    return f.value


def _fit(device, size):
    for seg in _segments:
        if seg["device"] != device:
            continue
        end = 0
        for off in sorted(seg["blocks"]):
            if off - end >= size:
                return seg, end
            end = off + seg["blocks"][off]
        if seg["size"] - end >= size:
            return seg, end
    return None, 0


def _fake_malloc(device, nbytes, stream=0):
    """A block of nbytes (rounded up to 512) on device: its address."""
    import ctypes

    _lazy_init()
    size = max(512, (nbytes + 511) // 512 * 512)
    seg, off = _fit(device, size)
    if seg is None:
        seg_size = (size + (2 << 20) - 1) // (2 << 20) * (2 << 20)
        addr = _cuda_malloc(device, seg_size)
        if addr is None:
            for s in [s for s in _segments if s["device"] == device and not s["blocks"]]:
                memory._event(device, "segment_free", s["addr"], s["size"], 0)
                _runtime().cudaFree(ctypes.c_void_p(s["addr"]))
                _segments.remove(s)
            addr = _cuda_malloc(device, seg_size)
            if addr is None:
                from .. import _C

                free = _device_free(device)
                memory._stats[device]["num_ooms"] += 1
                memory._event(device, "oom", free, size, stream)
                for fn in list(_C._oom_observers):
                    fn(device, size, memory._stats[device]["allocated_bytes.all.current"], free)
                raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes "
                                       "(fake torch)" % size)
            memory._stats[device]["num_alloc_retries"] += 1
        seg = {"device": device, "addr": addr, "size": seg_size, "blocks": {}}
        _segments.append(seg)
        memory._event(device, "segment_alloc", addr, seg_size, stream)
        off = 0
    seg["blocks"][off] = size
    memory._event(device, "alloc", seg["addr"] + off, size, stream)
    return seg["addr"] + off


def _fake_free(addr, stream=0):
    """Frees the block at addr (it stays cached in its segment)."""
    for seg in _segments:
        off = addr - seg["addr"]
        if off in seg["blocks"]:
            size = seg["blocks"].pop(off)
            memory._event(seg["device"], "free_requested", addr, size, stream)
            memory._event(seg["device"], "free_completed", addr, size, stream)
            return
    raise RuntimeError("fake: no block at %#x" % addr)
