"""Fake torch.cuda: initialisation, devices, counters, and helpers (names
starting _fake) with which a test script plays the allocator."""

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
