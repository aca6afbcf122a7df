"""PyTorch allocator history -> gpumemtrace framework events (pure Python).

`torch.cuda.memory._snapshot()["device_traces"]` is one list per device of
the allocator's ring buffer, oldest first, and every call returns the WHOLE
ring. `convert()` turns the entries not moved before into framework events
(tuples for gpumemtrace._framework.fw_events) and says how many entries were
lost when the ring overflowed between two moves.

Which entries are new. The ring drops its oldest entries when full, so an
index is no anchor, and `time_us` is no exact key either: PyTorch converts
its TSC stamps to wall-clock microseconds at snapshot time with a scale it
re-estimates on every snapshot, so the same entry may come back a few
microseconds apart, and many entries can share one microsecond. The anchor
is the sequence itself: we remember the last TAIL moved entries' contents
(action, address, size, stream) and the last one's time, and look for that
run in the new ring near that time. The new entries are those after it.
  - Found: nothing lost (every older entry was moved before).
  - Not found and the ring is full: it overflowed between the two moves;
    everything in it is new and an unknown number of entries before it is
    lost. The estimate is the ring's own event rate times the gap between
    the previous move (when the caller gave now_ns; else the last moved
    entry) and the ring's oldest entry, at least 1: a guess that assumes the
    rate held through the gap.
  - Not found and the ring is not full: someone restarted the history
    (another _record_memory_history call): everything in it is new; a
    warning says events may be missing, with no count.
If the same run occurs several times near that time (a tight loop repeating
the same addresses), the occurrence closest in time wins, then the newest.

Stacks. With the history's Python stacks on, an entry carries "frames"
[{"filename", "line", "name"}, ...], innermost first. Given intern_stack,
convert() turns them into text frames "name (filename:line)", asks
intern_stack(frames) for their id (gpumemtrace._framework.stack) once per
distinct stack (cached in the state) and appends the id to the event tuple.

Times. time_ns = time_us * 1000 - (CLOCK_REALTIME - CLOCK_MONOTONIC) as the
caller measured it at conversion time (_torch._clock_offset: to within a
microsecond or two), so the events land on the tracer's clock with the
accuracy of PyTorch's conversion (microseconds). The events of all devices
are merged by time, kept nondecreasing across calls (a time before the last
moved one is raised to it: the side stream never goes back), never 0 (0
means "now" to the C API) and never after now_ns.
"""

ALLOC = 1
FREE_REQUESTED = 2
FREE_COMPLETED = 3
SEGMENT_ALLOC = 4
SEGMENT_FREE = 5
SEGMENT_MAP = 6
SEGMENT_UNMAP = 7
OOM = 8

ACTIONS = {
    "alloc": ALLOC,
    "free_requested": FREE_REQUESTED,
    "free_completed": FREE_COMPLETED,
    "segment_alloc": SEGMENT_ALLOC,
    "segment_free": SEGMENT_FREE,
    "segment_map": SEGMENT_MAP,
    "segment_unmap": SEGMENT_UNMAP,
    "oom": OOM,
}

TAIL = 64                 # moved entries remembered per device
TIME_TOLERANCE_US = 2000  # how far a re-converted time_us may move

_U64 = (1 << 64) - 1


class DeviceState(object):
    """What was moved from one device's ring."""

    __slots__ = ("moved", "tail", "tail_time_us")

    def __init__(self):
        self.moved = 0          # entries moved so far
        self.tail = []          # keys of the last TAIL moved entries
        self.tail_time_us = None


class ConvertState(object):
    """Carried from one convert() call to the next. start_time_us: the wall
    clock (us) when the history was turned on, for the loss estimate of a
    ring that overflowed before the first move (None: unknown)."""

    def __init__(self, start_time_us=None):
        self.devices = {}
        self.last_time_ns = 0
        self.start_time_us = start_time_us
        self.last_move_us = None    # wall clock (us) of the previous call
        self.stacks = {}            # tuple of text frames -> interned id


class Result(object):
    """events: [(action, device, addr, size, stream, time_ns)] (with a
    seventh element, the stack id, when convert() was given intern_stack)
    sorted by time_ns; lost: {device: estimated entries lost (>= 1)}; warnings: [str]."""

    __slots__ = ("events", "lost", "warnings")

    def __init__(self):
        self.events = []
        self.lost = {}
        self.warnings = []

    def __repr__(self):
        return "Result(events=%r, lost=%r, warnings=%r)" % (self.events, self.lost, self.warnings)


def _int(v):
    try:
        return int(v) & _U64
    except (TypeError, ValueError):
        return 0


def _key(e):
    addr = e.get("device_free", 0) if e.get("action") == "oom" else e.get("addr", 0)
    return (e.get("action"), _int(addr), _int(e.get("size", 0)), _int(e.get("stream", 0)))


def _time(e):
    t = e.get("time_us", 0)
    return t if isinstance(t, (int, float)) else 0


def _lower_bound(ring, t):
    """First index whose time_us >= t (the ring is in time order)."""
    lo, hi = 0, len(ring)
    while lo < hi:
        mid = (lo + hi) // 2
        if _time(ring[mid]) < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _matches(ring, p, tail):
    """The tail's last k keys equal ring[p-k+1 .. p], k = min(len(tail), p+1)."""
    k = min(len(tail), p + 1)
    for i in range(k):
        if _key(ring[p - i]) != tail[-1 - i]:
            return False
    return True


def _find_anchor(ring, st):
    """Index in ring of the last moved entry, or None."""
    if not st.tail:
        return None
    # Nothing dropped yet: the ring holds everything since the history
    # started and the last moved entry is at moved - 1. Preferred when its
    # evidence is as good as the best found (a repeating run then cannot
    # pull the anchor off).
    fast = st.moved - 1
    if not (0 <= fast < len(ring) and _matches(ring, fast, st.tail) and
            abs(_time(ring[fast]) - st.tail_time_us) <= TIME_TOLERANCE_US):
        fast = None
    lo = _lower_bound(ring, st.tail_time_us - TIME_TOLERANCE_US)
    best, best_score = None, None
    last = st.tail[-1]
    for p in range(lo, len(ring)):
        t = _time(ring[p])
        if t > st.tail_time_us + TIME_TOLERANCE_US:
            break
        if _key(ring[p]) != last or not _matches(ring, p, st.tail):
            continue
        # A full match beats one cut by the ring's start; then the closest
        # time; then the newest.
        score = (min(len(st.tail), p + 1) == len(st.tail), -abs(t - st.tail_time_us), p)
        if best_score is None or score > best_score:
            best, best_score = p, score
    if fast is not None and best is not None:
        # Equal evidence: the index that counts agrees with one candidate.
        fscore = (min(len(st.tail), fast + 1) == len(st.tail),
                  -abs(_time(ring[fast]) - st.tail_time_us))
        if fscore >= best_score[:2]:
            return fast
    return best


def _lost_estimate(ring, since_us):
    """Entries recorded between since_us and the ring's oldest, at the
    ring's own rate; at least 1."""
    if since_us is None or len(ring) < 2:
        return 1
    span = _time(ring[-1]) - _time(ring[0])
    gap = _time(ring[0]) - since_us
    if span <= 0 or gap <= 0:
        return 1
    return max(1, int(round((len(ring) - 1) * gap / float(span))))


def text_frames(entry):
    """The entry's Python frames as text, innermost first: a tuple of
    "name (filename:line)"; () when it has none."""
    frames = entry.get("frames")
    if not isinstance(frames, list):
        return ()
    out = []
    for f in frames:
        if isinstance(f, dict):
            out.append("%s (%s:%s)" % (f.get("name", "?"), f.get("filename", "?"),
                                       f.get("line", "?")))
    return tuple(out)


def _stack_id(entry, state, intern_stack):
    frames = text_frames(entry)
    if not frames:
        return 0
    sid = state.stacks.get(frames)
    if sid is None:
        sid = state.stacks[frames] = int(intern_stack(list(frames)) or 0)
    return sid


def convert(snapshot, state, offset_ns, max_entries, now_ns=None, intern_stack=None):
    """Converts the entries of snapshot["device_traces"] not moved before.

    snapshot: the dict of torch.cuda.memory._snapshot(); state: a
    ConvertState, updated; offset_ns: CLOCK_REALTIME - CLOCK_MONOTONIC in
    ns; max_entries: the ring's size (a ring this long is full); now_ns:
    CLOCK_MONOTONIC now (None: no upper clamp); intern_stack: frames ->
    stack id (None: no stacks, 6-tuples). Returns a Result."""
    res = Result()
    traces = snapshot.get("device_traces") or []
    merged = []
    for device, ring in enumerate(traces):
        if not ring:
            continue
        st = state.devices.get(device)
        if st is None:
            st = state.devices[device] = DeviceState()
        full = max_entries > 0 and len(ring) >= max_entries
        start = 0
        if st.tail:
            anchor = _find_anchor(ring, st)
            if anchor is not None:
                start = anchor + 1
            elif full:
                since = st.tail_time_us
                if state.last_move_us is not None and state.last_move_us > since:
                    since = state.last_move_us
                n = _lost_estimate(ring, since)
                res.lost[device] = n
                res.warnings.append(
                    "device %d: the allocator's history ring (%d entries) overflowed between two "
                    "moves: about %d events lost (an estimate, at least 1)" % (device, len(ring), n))
            else:
                res.warnings.append(
                    "device %d: the allocator's history was restarted by someone else: events "
                    "recorded since the last move may be missing" % device)
        elif full:
            n = _lost_estimate(ring, state.start_time_us)
            res.lost[device] = n
            res.warnings.append(
                "device %d: the allocator's history ring (%d entries) overflowed before the first "
                "move: about %d events lost (an estimate, at least 1)" % (device, len(ring), n))
        new = ring[start:]
        if not new:
            continue
        for e in new:
            action = ACTIONS.get(e.get("action"))
            if action is None:
                continue    # "snapshot" and actions we do not know
            a, size, stream = _key(e)[1:]
            sid = _stack_id(e, state, intern_stack) if intern_stack is not None else None
            merged.append((_time(e), device, action, a, size, stream, sid))
        st.moved += len(new)
        st.tail = (st.tail + [_key(e) for e in new[-TAIL:]])[-TAIL:]
        st.tail_time_us = _time(new[-1])
    # Stable: entries of one device with equal times keep their ring order.
    merged.sort(key=lambda m: m[0])
    last = state.last_time_ns
    for t_us, device, action, addr, size, stream, sid in merged:
        t = int(round(t_us * 1000)) - offset_ns
        if now_ns is not None and t > now_ns:
            t = now_ns
        # time_us has microsecond resolution: entries of one microsecond (an
        # allocation and its free, say) are spread 1 ns apart in ring order,
        # so that each is an instant of its own for the analyzer (which
        # keeps the state after the last event of an instant).
        if t <= last:
            t = last + 1
        if t < 1:
            t = 1
        last = t
        if sid is None:
            res.events.append((action, device, addr, size, stream, t))
        else:
            res.events.append((action, device, addr, size, stream, t, sid))
    state.last_time_ns = last
    if now_ns is not None:
        state.last_move_us = (now_ns + offset_ns) // 1000
    return res
