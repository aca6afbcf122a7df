"""The companion's conversion of allocator snapshots into framework events
(python/gpumemtrace_companion/convert.py), without torch: the fixtures in
this directory are hand-made in the documented snapshot format (README).
Run by tests/cases/companion_convert.sh: python3 test_convert.py."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from gpumemtrace_companion import convert as cv  # noqa: E402

T = 1700000000000000           # the fixtures' time_us origin
OFF = 1699999000000000000      # injected CLOCK_REALTIME - CLOCK_MONOTONIC
B = 1000000000000           # T * 1000 - OFF: time_ns of time_us T
A0, B0, A1 = 0x7F0000000000, 0x7F0000000200, 0x7F1000000000


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


def entry(action, addr, size, t, stream=0):
    e = {"action": action, "size": size, "stream": stream, "time_us": T + t, "frames": []}
    e["device_free" if action == "oom" else "addr"] = addr
    return e


class Stacks(unittest.TestCase):
    """Entries with Python frames (GPUMEMTRACE_COMPANION_STACKS=python):
    each distinct stack is interned once, through the callback, and its id
    is the events' seventh element; an entry without frames gets 0."""

    def test_frames(self):
        calls = []

        def intern(frames):
            calls.append(frames)
            return 0x80000000 + len(calls) - 1

        st = cv.ConvertState()
        r = cv.convert(load("snapshot_stacks.json"), st, OFF, 8, intern_stack=intern)
        self.assertEqual(calls, [
            ["forward (/w/model.py:12)", "step (/w/train.py:40)"],
            ["step (/w/train.py:41)"],
        ])
        self.assertEqual(r.events, [
            (cv.ALLOC, 0, A0, 512, 0, B + 10000, 0x80000000),
            (cv.ALLOC, 0, B0, 1024, 0, B + 10001, 0x80000000),
            (cv.ALLOC, 0, A0 + 0x600, 2048, 0, B + 20000, 0x80000001),
            (cv.FREE_REQUESTED, 0, A0, 512, 0, B + 30000, 0),
        ])
        # Without the callback: six-tuples, as before.
        r = cv.convert(load("snapshot_stacks.json"), cv.ConvertState(), OFF, 8)
        self.assertEqual(r.events[0], (cv.ALLOC, 0, A0, 512, 0, B + 10000))


class Fixtures(unittest.TestCase):
    """Three successive snapshots of one run: the second's rings overlap the
    first's (device 0's has dropped its two oldest and its times moved by
    2 us: PyTorch re-converts them at every snapshot), the third's device 0
    ring overflowed."""

    def test_sequence(self):
        st = cv.ConvertState()
        r = cv.convert(load("snapshot_1.json"), st, OFF, 8)
        self.assertEqual(r.events, [
            # entries of one microsecond are spread 1 ns apart, in ring order
            (cv.SEGMENT_ALLOC, 0, A0, 2097152, 0, B + 0),
            (cv.ALLOC, 0, A0, 512, 0, B + 10000),
            (cv.ALLOC, 0, B0, 1024, 0x5555, B + 10001),
            (cv.SEGMENT_ALLOC, 1, A1, 20971520, 0, B + 15000),
            (cv.ALLOC, 1, A1, 4096, 0, B + 15001),
            (cv.FREE_REQUESTED, 0, A0, 512, 0, B + 20000),
            (cv.FREE_COMPLETED, 0, A0, 512, 0, B + 20001),
            # the "snapshot" entry at +25 is not an event
            (cv.OOM, 1, 1048576, 1073741824, 0, B + 30000),
        ])
        self.assertEqual(r.lost, {})
        self.assertEqual(r.warnings, [])

        # The same snapshot again: nothing new.
        again = cv.convert(load("snapshot_1.json"), st, OFF, 8)
        self.assertEqual((again.events, again.lost, again.warnings), ([], {}, []))

        r = cv.convert(load("snapshot_2.json"), st, OFF, 8)
        self.assertEqual(r.events, [
            # +27 in this snapshot's clock: before device 1's OOM already
            # moved at +30, so raised just past it (the side stream never
            # goes back, and each event stays an instant of its own)
            (cv.ALLOC, 0, A0, 512, 0, B + 30001),
            (cv.FREE_REQUESTED, 0, B0, 1024, 0x5555, B + 30002),
            (cv.FREE_COMPLETED, 0, B0, 1024, 0x5555, B + 40000),
            (cv.SEGMENT_FREE, 0, A0, 2097152, 0, B + 40001),
            (cv.FREE_REQUESTED, 1, A1, 4096, 0, B + 50000),
            (cv.FREE_COMPLETED, 1, A1, 4096, 0, B + 50001),
            (cv.SEGMENT_FREE, 1, A1, 20971520, 0, B + 60000),
        ])
        self.assertEqual(r.lost, {})   # full, but the anchor is in the ring
        self.assertEqual(r.warnings, [])

        r = cv.convert(load("snapshot_3_overflow.json"), st, OFF, 8)
        self.assertEqual(r.events, [
            (cv.SEGMENT_ALLOC, 0, A0 + 0x1000000 * (i + 1), 2097152, 0, B + 100000 + 10000 * i)
            for i in range(8)])
        # 7 entries in 70 us; 60 us between the last moved one (+40) and
        # the ring's oldest (+100): about 6 lost.
        self.assertEqual(r.lost, {0: 6})
        self.assertEqual(len(r.warnings), 1)
        self.assertIn("overflowed between two moves: about 6 events lost", r.warnings[0])


class Rings(unittest.TestCase):
    def test_repeating_run_at_one_time(self):
        """The same block allocated and freed again and again within one
        microsecond: the ring's contents repeat, the count decides."""
        trip = [entry("alloc", A0, 512, 5), entry("free_requested", A0, 512, 5),
                entry("free_completed", A0, 512, 5)]
        ring = [entry("segment_alloc", A0, 2097152, 5)] + trip
        st = cv.ConvertState()
        r = cv.convert({"device_traces": [ring]}, st, OFF, 100)
        self.assertEqual(len(r.events), 4)
        ring = ring + trip + trip
        r = cv.convert({"device_traces": [ring]}, st, OFF, 100)
        self.assertEqual([e[0] for e in r.events], [cv.ALLOC, cv.FREE_REQUESTED, cv.FREE_COMPLETED] * 2)
        # the first move took B + 5000 .. B + 5003: one microsecond, spread
        self.assertEqual([e[5] for e in r.events], [B + 5004 + i for i in range(6)])
        self.assertEqual((r.lost, r.warnings), ({}, []))

    def test_repeating_run_in_a_full_ring(self):
        """A loop repeating the same block longer than the remembered tail,
        in a ring that dropped its oldest: the time tells the occurrences
        apart."""
        def trip(i):
            return [entry("alloc", A0, 512, 1 + i), entry("free_requested", A0, 512, 1 + i),
                    entry("free_completed", A0, 512, 1 + i)]
        stream = [entry("segment_alloc", A0, 2097152, 0)]
        for i in range(29):
            stream += trip(i)
        st = cv.ConvertState()
        r = cv.convert({"device_traces": [stream]}, st, OFF, 91)
        self.assertEqual((len(r.events), r.lost), (88, {}))
        stream += trip(29) + trip(30)
        r = cv.convert({"device_traces": [stream[-91:]]}, st, OFF, 91)
        self.assertEqual([(e[0], e[5]) for e in r.events],
                         [(a, B + 30000 + i) for i, a in enumerate((cv.ALLOC, cv.FREE_REQUESTED, cv.FREE_COMPLETED))] +
                         [(a, B + 31000 + i) for i, a in enumerate((cv.ALLOC, cv.FREE_REQUESTED, cv.FREE_COMPLETED))])
        self.assertEqual((r.lost, r.warnings), ({}, []))

    def test_overflow_estimate_from_the_previous_move(self):
        st = cv.ConvertState()
        cv.convert({"device_traces": [[entry("alloc", A0, 8, 50)]]}, st, OFF, 4, now_ns=B + 90000)
        ring = [entry("alloc", B0 + 64 * i, 8, 100 + i) for i in range(4)]
        r = cv.convert({"device_traces": [ring]}, st, OFF, 4, now_ns=B + 200000)
        # 1 entry/us in the ring, 10 us unseen between the move at +90 and
        # the oldest entry (+100); the last moved entry (+50) is not the
        # start of the gap: the move saw everything until +90.
        self.assertEqual(r.lost, {0: 10})
        self.assertEqual(len(r.events), 4)

    def test_restarted_history(self):
        st = cv.ConvertState()
        cv.convert({"device_traces": [[entry("alloc", A0, 512, 1)]]}, st, OFF, 100)
        r = cv.convert({"device_traces": [[entry("alloc", B0, 64, 9)]]}, st, OFF, 100)
        self.assertEqual(r.events, [(cv.ALLOC, 0, B0, 64, 0, B + 9000)])
        self.assertEqual(r.lost, {})
        self.assertEqual(len(r.warnings), 1)
        self.assertIn("restarted", r.warnings[0])

    def test_full_at_first_move(self):
        ring = [entry("alloc", A0 + 512 * i, 512, 10 + i) for i in range(4)]
        st = cv.ConvertState(start_time_us=T)
        r = cv.convert({"device_traces": [ring]}, st, OFF, 4)
        self.assertEqual(len(r.events), 4)
        self.assertEqual(r.lost, {0: 10})   # 3 entries in 3 us, 10 us before the oldest
        self.assertIn("before the first move", r.warnings[0])
        r = cv.convert({"device_traces": [ring]}, cv.ConvertState(), OFF, 4)
        self.assertEqual(r.lost, {0: 1})    # no start time: at least 1

    def test_clamps(self):
        ring = [entry("alloc", A0, 8, 0), entry("alloc", B0, 8, 50)]
        r = cv.convert({"device_traces": [ring]}, cv.ConvertState(), OFF, 100, now_ns=B + 20000)
        self.assertEqual([e[5] for e in r.events], [B, B + 20000])
        # A clock offset beyond the times: never 0 (0 means "now"), and
        # still one instant each.
        r = cv.convert({"device_traces": [ring]}, cv.ConvertState(), T * 1000 + 10 ** 9, 100)
        self.assertEqual([e[5] for e in r.events], [1, 2])

    def test_unknown_actions_and_fields(self):
        ring = [{"action": "user_defined", "time_us": T}, entry("segment_map", A0, 20 << 20, 1),
                entry("segment_unmap", A0, 20 << 20, 2, stream=-1)]
        r = cv.convert({"device_traces": [ring], "segments": []}, cv.ConvertState(), OFF, 100)
        self.assertEqual(r.events, [(cv.SEGMENT_MAP, 0, A0, 20 << 20, 0, B + 1000),
                                    (cv.SEGMENT_UNMAP, 0, A0, 20 << 20, (1 << 64) - 1, B + 2000)])
        r = cv.convert({}, cv.ConvertState(), OFF, 100)
        self.assertEqual((r.events, r.lost), ([], {}))


if __name__ == "__main__":
    unittest.main(verbosity=2)
