"""gpumemtrace's PyTorch companion, injected by the launcher.

The launcher puts this file's directory first on PYTHONPATH, so Python's
`site` imports it as `sitecustomize` at startup; the user's script does not
change. It:
  1. takes its own directory off sys.path (its siblings must not shadow the
     program's modules) and makes sure the package `gpumemtrace_companion`
     is importable (from the parent directory);
  2. when the preload is loaded and GPUMEMTRACE_COMPANION is not 0, installs
     the import hook that sets up the companion when `torch` is imported
     (gpumemtrace_companion/_torch.py);
  3. runs the sitecustomize that would have run without us: the next one on
     sys.path after our directory. Its errors are its own: they reach
     `site` as they would have.
Our own failures never reach the program: each is reported once on stderr,
prefixed "gpumemtrace companion:".
"""

import os
import sys


def _gmt_setup():
    here = os.path.dirname(os.path.abspath(__file__))
    later = []
    seen = False
    for p in list(sys.path):
        try:
            same = os.path.abspath(p or os.curdir) == here
        except Exception:
            same = False
        if same:
            seen = True
            sys.path.remove(p)
        elif seen:
            later.append(p)
    if not seen:
        later = list(sys.path)
    active = False
    # Cheap tests first: most Python processes of a traced job never see
    # torch, and a process without the preload must not pay for ctypes.
    if os.environ.get("GPUMEMTRACE_COMPANION", "1") != "0" and os.environ.get("LD_PRELOAD"):
        parent = os.path.dirname(here)
        added = parent not in sys.path
        if added:
            sys.path.append(parent)
        try:
            from gpumemtrace_companion import _torch

            active = _torch.install()
        except Exception as e:
            try:
                sys.stderr.write("gpumemtrace companion: not started: %r\n" % (e,))
            except Exception:
                pass
        if added and not active:
            try:
                sys.path.remove(parent)
            except ValueError:
                pass
    spec = None
    try:
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
    except Exception as e:
        sys.stderr.write("gpumemtrace companion: cannot look for another sitecustomize: %r\n" % (e,))
    return spec, active


def _gmt_chain(spec):
    """Runs the next sitecustomize as `site` would have (exceptions go on)."""
    import importlib.util

    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


_gmt_spec, _gmt_active = _gmt_setup()
if _gmt_spec is not None and _gmt_spec.loader is not None:
    _gmt_chain(_gmt_spec)
