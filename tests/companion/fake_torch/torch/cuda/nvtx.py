"""Fake torch.cuda.nvtx: returns the nesting level like NVTX does."""

calls = []
_depth = [0]


def range_push(msg):
    calls.append("push " + msg)
    _depth[0] += 1
    return _depth[0] - 1


def range_pop():
    calls.append("pop")
    _depth[0] -= 1
    return _depth[0]


def mark(msg):
    calls.append("mark " + msg)
