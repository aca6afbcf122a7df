"""A FAKE torch, only for gpumemtrace's tests (tests/cases/companion_e2e.sh):
just the surface the companion touches, with a scripted allocator history.
It makes no CUDA call, except its small caching allocator
(torch.cuda._fake_malloc, which needs FAKE_TORCH_CUDART)."""

__version__ = "2.11.0+fake"

from . import version, _C, cuda  # noqa: E402,F401
