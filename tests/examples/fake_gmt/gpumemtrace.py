"""A fake `gpumemtrace` Python module, for tests/cases/example_measure.sh ONLY.

Loads only with GMT_FAKE_TORCH=1; logs each phase's entry and exit (with how
it ended) to GMT_FAKE_TORCH_LOG, beside the fake torch's lines.
"""
import contextlib
import os

if os.environ.get("GMT_FAKE_TORCH") != "1":
    raise ImportError("tests/examples/fake_gmt is a test double; it loads only with "
                      "GMT_FAKE_TORCH=1")


def _log(line):
    path = os.environ.get("GMT_FAKE_TORCH_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


@contextlib.contextmanager
def phase(name):
    _log("gmt_phase_enter %s" % name)
    try:
        yield
    except BaseException as e:
        _log("gmt_phase_exit %s %s" % (name, type(e).__name__))
        raise
    _log("gmt_phase_exit %s ok" % name)
