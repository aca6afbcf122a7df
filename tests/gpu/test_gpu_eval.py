"""test_gpu_eval.py - the comparisons of gpu_eval.py's phase checks (A-D of
issue 3), on a machine without a GPU.

    GMT_P_WORKLOAD=p.json GMT_P_GEN=g.json [GMT_BUILD=build GMT_TRACE=t.gmt] \
        python3 tests/gpu/test_gpu_eval.py

Run by tests/cases/gpu_eval.sh, which makes the inputs: p.json is
`gpumemtrace-analyze phases --json` of tests/routes/phases_workload.c traced
on the test doubles (GMT_TRACE is that trace), g.json the same of
tests/tools/gen-phases.c's trace. Their values are known by construction
(the header comments of those programs); the jobs below are hand-made in
the shape gmt_example.py measure and gpu_torch.py write, from the same
construction, never read back from the analyzer's output. Each test asserts
PASS or FAIL exactly, and which comparison failed. Standard library only.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_eval as ge  # noqa: E402
import gpu_torch as gt  # noqa: E402 - standard library at import; torch is passed in

MiB = 1 << 20
GiB = 1 << 30


def load(var):
    path = os.environ.get(var)
    if not path:
        raise unittest.SkipTest("%s not set (run through tests/cases/gpu_eval.sh)" % var)
    with open(path) as f:
        return json.load(f)["traces"][0]


def rec(name, k, before, after, peak, ok=True, error=None):
    """A job record as measure writes it; values in MiB (allocated, reserved)."""
    def lv(p):
        return None if p is None else {"allocated_bytes": p[0], "reserved_bytes": p[1]}
    return {"name": name, "occurrence": k, "before": lv(before), "after": lv(after),
            "peak": lv(peak), "ok": ok, "error": error}


def m(a, r):
    return (int(a * MiB), int(r * MiB))


# tests/routes/phases_workload.c, device 0, requested view (MiB):
#   load      0/0 -> 40/64,    peaks 40/64 (the analyzer knows nothing at its start)
#   comm      40/64 -> 40/64,  peaks 40/64
#   step 1    40/64 -> 40/192, peaks 156/192
#   step 2    40/192 -> 40/192, peaks 140/192
#   teardown  40/192 -> 0/0,   peaks 40/192
def workload_job():
    return [rec("load", 1, m(0, 0), m(40, 64), m(40, 64)),
            rec("comm", 1, m(40, 64), m(40, 64), m(40, 64)),
            rec("step", 1, m(40, 64), m(40, 192), m(156, 192)),
            rec("step", 2, m(40, 192), m(40, 192), m(140, 192)),
            rec("teardown", 1, m(40, 192), m(0, 0), m(40, 192))]


# tests/tools/gen-phases.c, device 1 (cudaMallocAsync-like: allocated from
# driver stream-ordered events, reserved from pool samples), MiB:
#   load 0/0 -> 256/512 (peaks 256/512); train and step 1: 256/512 ->
#   256/512, peak allocated 384; step 2: peak allocated 320
def pool_job(extra=0):
    def a(x):
        return int(x * MiB) + (extra if x else 0)
    return [rec("load", 1, (0, 0), (a(256), 512 * MiB), (a(256), 512 * MiB)),
            rec("train", 1, (a(256), 512 * MiB), (a(256), 512 * MiB), (a(384), 512 * MiB)),
            rec("step", 1, (a(256), 512 * MiB), (a(256), 512 * MiB), (a(384), 512 * MiB)),
            rec("step", 2, (a(256), 512 * MiB), (a(256), 512 * MiB), (a(320), 512 * MiB))]


def row():
    return ge.Row("t", "test", "-")


def failed(r):
    return [i["what"] for i in r.items if i.get("ok") is False]


class Levels(unittest.TestCase):
    """compare_levels and compare_occurrences, native mode (A, B)."""

    @classmethod
    def setUpClass(cls):
        cls.pt = load("GMT_P_WORKLOAD")

    def test_exact_job_passes(self):
        r = row()
        counts = ge.compare_occurrences(r, workload_job(), self.pt)
        ge.compare_levels(r, workload_job(), self.pt)
        self.assertEqual("PASS", r.status(), r.notes)
        self.assertEqual({"load": 1, "comm": 1, "step": 2, "teardown": 1}, counts)
        # 5 occurrences x (4 levels + 2 peaks); load's start is unknown to the
        # analyzer (no framework event yet): explained by the job's 0, twice
        self.assertEqual({"equal": 28, "explained": 2, "differs": 0}, r.outcomes())
        self.assertIn("5 occurrences of 4 phases", ge.levels_summary(r, counts))

    def test_one_byte_off_at_an_end_fails(self):
        job = workload_job()
        job[3]["after"]["allocated_bytes"] += 1
        r = row()
        ge.compare_levels(r, job, self.pt)
        self.assertEqual("FAIL", r.status())
        self.assertEqual(["step #2 end allocated"], failed(r))
        self.assertIn("analyzer - job = -1 B", r.notes[0])

    def test_peak_off_fails(self):
        job = workload_job()
        job[2]["peak"]["reserved_bytes"] = 191 * MiB
        r = row()
        ge.compare_levels(r, job, self.pt)
        self.assertEqual(["step #1 peak reserved"], failed(r))

    def test_unknown_start_must_be_zero(self):
        job = workload_job()
        job[0]["before"]["allocated_bytes"] = 512
        r = row()
        ge.compare_levels(r, job, self.pt)
        self.assertEqual(["load #1 start allocated"], failed(r))

    def test_more_occurrences_than_traced_fail(self):
        job = workload_job() + [rec("step", 3, m(40, 192), m(40, 192), m(140, 192))]
        r = row()
        ge.compare_occurrences(r, job, self.pt)
        ge.compare_levels(r, job, self.pt)
        self.assertEqual(["step: occurrences", "step: temperatures (first cold, later warm)",
                          "step: occurrences in the warm aggregate",
                          "step #3 in the analyzer's report"], failed(r))

    def test_a_phase_the_job_did_not_mark_fails(self):
        r = row()
        ge.compare_occurrences(r, workload_job()[:-1], self.pt)
        self.assertEqual(["no phase in the report that the job did not mark"], failed(r))
        self.assertIn("teardown", r.notes[0])

    def test_pool_mode_on_framework_sources_fails(self):
        r = row()
        ge.compare_levels(r, workload_job(), self.pt, mode="pool")
        self.assertEqual(["allocated source", "reserved source"], failed(r))

    def test_wrong_device_fails(self):
        r = row()
        ge.compare_levels(r, workload_job()[:1], self.pt, device=3)
        self.assertEqual(["load #1: device 3 in the analyzer's report"], failed(r))


class Pool(unittest.TestCase):
    """compare_levels in pool mode (B with backend:cudaMallocAsync)."""

    @classmethod
    def setUpClass(cls):
        cls.pt = load("GMT_P_GEN")

    def run_pool(self, job, pt=None, live=lambda ts: 1):
        r = row()
        ge.compare_levels(r, job, pt or self.pt, device=1, mode="pool", live_blocks=live)
        return r

    def test_equal_passes(self):
        r = self.run_pool(pool_job())
        self.assertEqual("PASS", r.status(), r.notes)
        self.assertEqual({"equal": 22, "explained": 2, "differs": 0}, r.outcomes())

    def test_pool_rounding_is_explained(self):
        r = self.run_pool(pool_job(extra=4096))
        self.assertEqual("PASS", r.status(), r.notes)
        # every non-zero allocated value: load's end and peak, then start,
        # end and peak of train, step #1 and step #2 (2 + 3 x 3); plus load's
        # two unknown starts
        self.assertEqual({"equal": 11, "explained": 13, "differs": 0}, r.outcomes())
        self.assertTrue(any("pool rounding: 4096 B over 1 live blocks" in i.get("why", "")
                            for i in r.items))

    def test_rounding_beyond_the_bound_fails(self):
        r = self.run_pool(pool_job(extra=3 * MiB))
        self.assertEqual("FAIL", r.status())
        self.assertIn("load #1 end allocated", failed(r))
        # without a block count the difference is explained, unbounded
        self.assertEqual("PASS", self.run_pool(pool_job(extra=3 * MiB), live=None).status())

    def test_analyzer_above_the_pool_fails(self):
        r = self.run_pool(pool_job(extra=-1))
        self.assertEqual("FAIL", r.status())
        self.assertEqual("load #1 end allocated", failed(r)[0])

    def test_stale_reserved_sample_is_explained_fresh_is_not(self):
        job = pool_job()
        job[2]["before"]["reserved_bytes"] += 2 * MiB  # step #1 start
        r = self.run_pool(job)
        self.assertEqual("PASS", r.status(), r.notes)  # the sample is 100 ms old
        self.assertTrue(any("older than the boundary" in i.get("why", "") for i in r.items))
        pt = copy.deepcopy(self.pt)
        occ = ge.find_occurrence(pt, "step", 1)
        start = ge.figures(occ, 1)["start"]
        start["device_used_sample_ts_ns"] = occ["begin_ts_ns"] - 1000
        r = self.run_pool(job, pt)
        self.assertEqual(["step #1 start reserved"], failed(r))


class Outside(unittest.TestCase):
    """compare_nccl_outside (C)."""

    @classmethod
    def setUpClass(cls):
        cls.pt = load("GMT_P_WORKLOAD")

    def test_comm_phase_passes(self):
        r = row()
        nb, owners, cnt = ge.compare_nccl_outside(r, self.pt, "comm", dump_nccl_allocations=2)
        self.assertEqual("PASS", r.status(), r.notes)
        self.assertEqual((6 * MiB, 2), (nb, cnt))

    def test_more_owners_are_read_by_key(self):
        pt = copy.deepcopy(self.pt)
        end = ge.figures(ge.find_occurrence(pt, "comm", 1))["end"]
        end["outside_by_owner"]["cublas"] = 4 * MiB
        end["outside_by_owner"]["cudnn"] = 0
        for d in pt["devices"]:
            d["outside_allocations"]["count_by_owner"]["cublas"] = 1
        r = row()
        nb, _, _ = ge.compare_nccl_outside(r, pt, "comm", dump_nccl_allocations=2)
        self.assertEqual(("PASS", 6 * MiB), (r.status(), nb))

    def test_count_mismatch_fails(self):
        r = row()
        ge.compare_nccl_outside(r, self.pt, "comm", dump_nccl_allocations=3)
        self.assertEqual(["outside allocations of owner nccl == owner=nccl allocations in "
                          "the dump"], failed(r))

    def test_no_nccl_outside_fails(self):
        r = row()
        ge.compare_nccl_outside(r, self.pt, "load")
        self.assertEqual(["load end: outside bytes of owner nccl > 0"], failed(r))
        r = row()
        ge.compare_nccl_outside(r, self.pt, "nccl_init")
        self.assertEqual(["nccl_init end: outside bytes of owner nccl > 0"], failed(r))


class Oom(unittest.TestCase):
    """compare_oom_phase (D), on gen-phases: step #3 has a FW_OOM of 2 GiB on
    device 0; eval (unterminated) an ALLOC_FAIL of 4 GiB on device 1."""

    @classmethod
    def setUpClass(cls):
        cls.pt = load("GMT_P_GEN")

    def job(self, name="step", k=3, ok=False, oom=True):
        return rec(name, k, None, None, None, ok=ok,
                   error=None if ok else {"type": "OutOfMemoryError", "message": "CUDA out of "
                                          "memory", "out_of_memory": oom})

    def test_failed_phase_passes(self):
        r = row()
        f = ge.compare_oom_phase(r, self.job(), self.pt, 2 * GiB)
        self.assertEqual("PASS", r.status(), r.notes)
        self.assertEqual("fw_oom", f["event"])
        r = row()
        f = ge.compare_oom_phase(r, self.job("eval", 1), self.pt, 4 * GiB, device=1)
        self.assertEqual(("PASS", "alloc_fail"), (r.status(), f["event"]))

    def test_wrong_size_or_device_fails(self):
        r = row()
        ge.compare_oom_phase(r, self.job(), self.pt, 2 * GiB + 2 * MiB)
        self.assertEqual(["step #3: failing request"], failed(r))
        r = row()
        ge.compare_oom_phase(r, self.job(), self.pt, 2 * GiB, device=1)
        self.assertEqual(["step #3: failing device"], failed(r))

    def test_phase_not_failed_fails(self):
        r = row()
        self.assertIsNone(ge.compare_oom_phase(r, self.job("step", 1), self.pt, 2 * GiB))
        self.assertEqual(["step #1 marked failed"], failed(r))

    def test_job_that_did_not_fail_fails(self):
        r = row()
        ge.compare_oom_phase(r, self.job(ok=True), self.pt, 2 * GiB)
        self.assertEqual(["the job's step failed with out of memory"], failed(r))


class FakeCuda:
    """The part of torch.cuda that gpu_torch.Recorder uses; a log of calls
    and an allocator whose counters the test drives."""

    class OutOfMemoryError(RuntimeError):
        pass

    def __init__(self):
        self.log = []
        self.allocated = self.reserved = self.max_allocated = self.max_reserved = 0
        outer = self

        class Nvtx:
            @staticmethod
            def range_push(name):
                outer.log.append("push " + name)

            @staticmethod
            def range_pop():
                outer.log.append("pop")
        self.nvtx = Nvtx

    def take(self, n):
        self.allocated += n
        self.reserved = max(self.reserved, self.allocated)
        self.max_allocated = max(self.max_allocated, self.allocated)
        self.max_reserved = max(self.max_reserved, self.reserved)

    def synchronize(self, d=None):
        self.log.append("sync")

    def reset_peak_memory_stats(self, d=None):
        self.log.append("reset")
        self.max_allocated, self.max_reserved = self.allocated, self.reserved

    def memory_allocated(self, d=None):
        self.log.append("read")
        return self.allocated

    def memory_reserved(self, d=None):
        return self.reserved

    def max_memory_allocated(self, d=None):
        self.log.append("peaks")
        return self.max_allocated

    def max_memory_reserved(self, d=None):
        return self.max_reserved


class Recorder(unittest.TestCase):
    """gpu_torch.Recorder follows measure's protocol and writes the records
    compare_levels reads."""

    def setUp(self):
        self.cuda = FakeCuda()
        self.rec = gt.Recorder(type("T", (), {"cuda": self.cuda}), 0, sleep=0)

    def test_protocol_and_record(self):
        def run():
            self.cuda.log.append("run")
            self.cuda.take(3 * MiB)
            self.cuda.take(-2 * MiB)
        self.assertTrue(self.rec.phase("forward", run))
        self.assertTrue(self.rec.phase("forward", lambda: None))
        self.assertEqual(["sync", "read", "reset", "push forward", "run", "sync", "pop", "sync",
                          "peaks", "read"], self.cuda.log[:10])
        r1, r2 = self.rec.phases
        self.assertEqual(("forward", 1, True, None), (r1["name"], r1["occurrence"], r1["ok"],
                                                       r1["error"]))
        self.assertEqual({"allocated_bytes": 0, "reserved_bytes": 0},
                         {k: r1["before"][k] for k in ("allocated_bytes", "reserved_bytes")})
        self.assertEqual({"allocated_bytes": 3 * MiB, "reserved_bytes": 3 * MiB}, r1["peak"])
        self.assertEqual((1 * MiB, 3 * MiB), (r1["after"]["allocated_bytes"],
                                              r1["after"]["reserved_bytes"]))
        self.assertEqual((2, {"allocated_bytes": 1 * MiB, "reserved_bytes": 3 * MiB}),
                         (r2["occurrence"], r2["peak"]))

    def test_out_of_memory_is_recorded_and_the_range_closed(self):
        def run():
            raise FakeCuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 200.00 GiB")
        self.assertFalse(self.rec.phase("oom_forward", run))
        self.assertEqual(["push oom_forward", "pop"],
                         [x for x in self.cuda.log if x.startswith(("push", "pop"))])
        e = self.rec.phases[0]["error"]
        self.assertEqual(("OutOfMemoryError", True), (e["type"], e["out_of_memory"]))
        with self.assertRaises(RuntimeError):
            gt.must(self.rec, False)
        r = row()
        pt = load("GMT_P_GEN")
        self.rec.phases[0].update(name="step", occurrence=3)
        ge.compare_oom_phase(r, self.rec.phases[0], pt, 2 * GiB)
        self.assertEqual("PASS", r.status(), r.notes)


class Rows(unittest.TestCase):
    """The whole row through gpu_eval.py's command line: the analyzer runs
    on the traced phases_workload (A's check on a hand-made measure JSON)."""

    def setUp(self):
        self.build = os.environ.get("GMT_BUILD")
        self.trace = os.environ.get("GMT_TRACE")
        if not self.build or not self.trace:
            raise unittest.SkipTest("GMT_BUILD/GMT_TRACE not set")
        self.work = tempfile.mkdtemp(prefix="gmt-gpu-eval.")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def run_check(self, check, job):
        d = os.path.join(self.work, ge.CHECK_DIRS.get(check, check))
        os.makedirs(os.path.join(d, "traces"), exist_ok=True)
        shutil.copy(self.trace, os.path.join(d, "traces"))
        with open(os.path.join(d, "result.json"), "w") as f:
            json.dump(job, f)
        subprocess.run([sys.executable, ge.__file__, check, self.work, self.build],
                       check=True, capture_output=True, timeout=60)
        with open(os.path.join(self.work, "rows.tsv")) as f:
            return f.read().splitlines()[-1].split("\t")

    def test_measure_row_pass_and_fail(self):
        c = self.run_check("measure", {"completed": True, "phases": workload_job()})
        self.assertEqual(("9", "PASS"), (c[0], c[4]), c[5])
        self.assertTrue(os.path.isfile(os.path.join(self.work, "measure", "phases.json")))
        job = workload_job()
        job[4]["after"]["reserved_bytes"] = 2 * MiB
        shutil.rmtree(os.path.join(self.work, "measure"))
        c = self.run_check("measure", {"completed": True, "phases": job})
        self.assertEqual("FAIL", c[4])
        self.assertTrue(c[5].startswith("teardown #1 end reserved: job 2 MiB, analyzer 0 B"),
                        c[5])

    def test_skip_and_table(self):
        d = os.path.join(self.work, "phases-async")
        os.makedirs(d)
        with open(os.path.join(d, "skip"), "w") as f:
            f.write("no torch here\n")
        subprocess.run([sys.executable, ge.__file__, "phases-async", self.work, self.build],
                       check=True, capture_output=True, timeout=60)
        out = subprocess.run([sys.executable, ge.__file__, "table", self.work], check=True,
                             capture_output=True, text=True, timeout=60).stdout
        self.assertIn("| 12 | phases-async | - | - | SKIP | no torch here |", out)

    def test_reason_is_capped(self):
        r = row()
        for i in range(12):
            r.level("v%d" % i, 0, 1)
        reason = ge.row_reason(r, r.status())
        self.assertEqual(9, len(reason.split("; ")))
        self.assertTrue(reason.endswith("... 4 more (eval-*.json)"))


class ExitRelease(unittest.TestCase):
    """Rows 2-4 compare the job's end with the analyzer's final bytes; a
    context the runtime destroyed as the process ended took the blocks the
    job still held, and they are added back (with a note)."""

    def dev(self, released):
        return {"contexts": {"destroyed": 1 if released else 0, "released_blocks": 3,
                             "released_bytes": released, "last_release_ts_ns": None},
                "final": {"bytes": 64 * MiB, "by_kind": {"plain": 0, "vmm_physical": 64 * MiB,
                                                         "stream_ordered": 0}}}

    def test_added_back(self):
        r = row()
        d = self.dev(616 * MiB)
        fin = ge.before_exit_release(r, d, d["final"], "plain")
        self.assertEqual((616 * MiB, 680 * MiB), (fin["by_kind"]["plain"], fin["bytes"]))
        self.assertEqual(0, d["final"]["by_kind"]["plain"])   # the report is not changed
        self.assertEqual(["a context was destroyed at the end (1 time(s)), taking 616 MiB the "
                          "job had not freed: compared with final + that"],
                         [i["note"] for i in r.items if "note" in i])

    def test_nothing_released(self):
        r = row()
        d = self.dev(0)
        self.assertIs(d["final"], ge.before_exit_release(r, d, d["final"], "plain"))
        self.assertEqual([], r.items)


class Versions(unittest.TestCase):
    """judge_versions (row 18) and the NCCL version code, on a gmt-dump text
    in the shape env_record.sh pins (tests/cases/env_record.sh)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.rt = os.path.join(self.dir, "libcudart.so.13.0.96")
        open(self.rt, "w").close()
        self.link = os.path.join(self.dir, "libcudart.so.13")
        os.symlink("libcudart.so.13.0.96", self.link)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def dump(self, rt_version="13000", nccl="22703"):
        return "\n".join([
            "HEADER pid=1 ppid=1 major=1 minor=4 stack_depth=20",
            "META torch_version=2.11.0",
            "META cuda_runtime_version=%s cuda_runtime_file=%s" % (rt_version, self.link),
            "META nccl_version=%s nccl_file=/x/libnccl.so.2" % nccl,
            "MODULE id=5 base=0x1000 size=4096 path=%s soname=libcudart.so.13 file=%s" % (
                self.link, self.rt),
            "STATUS ok clean"])

    def job(self):
        return {"nccl": "2.27.3", "cudart": {"path": self.link, "result": 0, "version": 13000}}

    def test_code(self):
        self.assertEqual(22703, ge.nccl_code("2.27.3"))
        self.assertEqual(22809, ge.nccl_code("2.28.9"))
        self.assertIsNone(ge.nccl_code("unknown: x"))

    def test_agreeing_trace_passes(self):
        r = row()
        ge.judge_versions(r, self.job(), self.dump())
        self.assertEqual("PASS", r.status(), r.notes)
        self.assertIn("libcudart soname libcudart.so.13 file %s" % self.rt, r.measured)

    def test_other_runtime_version_fails(self):
        r = row()
        ge.judge_versions(r, self.job(), self.dump(rt_version="12080"))
        self.assertEqual(["its cuda_runtime_version"], failed(r))

    def test_other_nccl_version_fails(self):
        r = row()
        ge.judge_versions(r, self.job(), self.dump(nccl="22809"))
        self.assertEqual(["nccl_version = torch.cuda.nccl.version() 2.27.3"], failed(r))

    def test_no_module_fields_fails(self):
        r = row()
        text = "\n".join(l for l in self.dump().split("\n") if not l.startswith("MODULE"))
        ge.judge_versions(r, self.job(), text)
        self.assertEqual(["MODULE records of libcudart"], failed(r))


class MemvizReal(unittest.TestCase):
    """17's real run (memviz_real): the framework segments of our export at
    the end against torch's own snapshot of the same process."""

    def setUp(self):
        import pickle
        self.d = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.d, "real"))
        with open(os.path.join(self.d, "real", "result.json"), "w") as f:
            json.dump({"ok": True}, f)
        blocks = [{"size": 2 * MiB, "requested_size": 1000000, "state": "active_allocated"},
                  {"size": 18 * MiB, "requested_size": 0, "state": "inactive"}]
        self.theirs = {"segments": [{"address": 1 << 40, "total_size": 20 * MiB, "blocks": blocks}]}
        with open(os.path.join(self.d, "real", "torch.pickle"), "wb") as f:
            pickle.dump(self.theirs, f, protocol=4)
        outside = {"address": 5, "total_size": 6 * MiB, "frames": [{"filename": "<gpumemtrace>", "name": "x", "line": 0}],
                   "blocks": [{"size": 6 * MiB, "requested_size": 6 * MiB, "state": "active_allocated"}]}
        self.mine = {"segments": [dict(self.theirs["segments"][0], frames=[]), outside]}
        with open(os.path.join(self.d, "export.rc"), "w") as f:
            f.write("0\n0\n")
        tools = {"segsum": {"ok": True, "totals": ["total_reserved: 26.0MiB"]}}
        self.ours = {"real-4.pickle": tools, "real.json": tools}

    def tearDown(self):
        shutil.rmtree(self.d)

    def run_it(self):
        with open(os.path.join(self.d, "real.json"), "w") as f:
            json.dump(self.mine, f)
        r = row()
        ge.memviz_real(r, self.d, self.ours)
        return failed(r)

    def test_same_segments_pass(self):
        self.assertEqual([], self.run_it())

    def test_another_block_fails(self):
        self.mine["segments"][0] = copy.deepcopy(self.mine["segments"][0])
        self.mine["segments"][0]["blocks"][0]["size"] = 4 * MiB
        self.mine["segments"][0]["blocks"][1]["size"] = 16 * MiB
        self.assertEqual(["framework segments at the end = torch's snapshot (address, size, blocks)"], self.run_it())

    def test_failed_export_fails(self):
        with open(os.path.join(self.d, "export.rc"), "w") as f:
            f.write("0\n1\n")
        self.assertEqual(["export --format memory-viz of the real run (pickle, json): exit"], self.run_it())


if __name__ == "__main__":
    unittest.main(verbosity=2)
