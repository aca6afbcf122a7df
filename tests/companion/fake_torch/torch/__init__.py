"""A FAKE torch, only for gpumemtrace's tests (tests/cases/companion_e2e.sh):
just the surface the companion touches, with a scripted allocator history.
It has no CUDA and makes no CUDA call."""

__version__ = "2.11.0+fake"

from . import version, _C, cuda  # noqa: E402,F401
