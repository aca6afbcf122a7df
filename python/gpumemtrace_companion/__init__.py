"""gpumemtrace's PyTorch companion (docs/pytorch.md).

Injected by the launcher: its sitecustomize.py (in this directory, which the
launcher puts first on PYTHONPATH) starts it in every Python process of a
traced job. convert.py is the pure conversion of allocator snapshots into
framework events; _torch.py is everything that touches torch.
"""
