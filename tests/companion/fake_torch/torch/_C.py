"""Fake torch._C: the out-of-memory observer list."""

_oom_observers = []


def _cuda_attach_out_of_memory_observer(fn):
    from . import cuda

    if not cuda._initialized:
        raise RuntimeError("fake: CUDA not initialized")
    if cuda.memory.get_allocator_backend() != "native":
        raise RuntimeError("fake: not supported by cudaMallocAsync")
    _oom_observers.append(fn)
