#!/usr/bin/env python3
"""Writes a report page's body and chart data for a device whose values are
known by construction (docs/report-page.md is the contract), for the browser
tests of the page alone (tests/cases/web_page.sh).

    page_fixture.py BODY.html DATA.json EXPECT.json

The levels are made here from the step function below, one bucket at a time
as the contract defines them; EXPECT.json has the numbers the test checks.
"""
import json
import sys

GiB, MiB = 1 << 30, 1 << 20
DURATION = 1_000_000_000
STACK = [("allocated", "framework allocated", 0), ("cache", "reserved, not allocated (the framework's cache)", 1),
         ("outside_nccl", "outside the framework: nccl", 3),
         ("rest", "rest of device used (context, other processes; an estimate from samples)", 8)]
LINES = [("device_used", "device used (cuMemGetInfo samples)", 9),
         ("pool_reserved", "pool reserved (cuMemPool attributes)", 10)]
# (ts_ns, allocated, cache, nccl, rest, pool_reserved or None)
SPIKE_T = 300_000_000
INSTANTS = [
    (0, 1 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, None),
    (100_000_000, 1 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB),
    (250_000_000, 3 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB),
    (SPIKE_T, 5 * GiB, 0, 256 * MiB, 512 * MiB, 1 * GiB),          # lasts 1000 ns
    (SPIKE_T + 1000, 3 * GiB, 1 * GiB, 256 * MiB, 512 * MiB, 1 * GiB),
    (500_000_000, 2 * GiB, 3 * GiB, 256 * MiB, 512 * MiB, 1 * GiB + 512 * MiB),
    (700_000_000, 2 * GiB, 3 * GiB, 0, 512 * MiB, 1 * GiB + 512 * MiB),
]
PEAK = 5 * GiB + 256 * MiB + 512 * MiB
FAIL_T, FAIL_BYTES = 800_000_000, 4 * GiB + 1536  # odd on purpose: the text shows 4.00 GiB
TIE_BYTES = GiB + GiB // 8  # 1.125 GiB: printf's %.2f gives 1.12 (ties to even)


def state(inst):
    t, alloc, cache, nccl, rest, pool = inst
    stack = {"allocated": alloc, "cache": cache, "outside_nccl": nccl, "rest": rest}
    top = alloc + cache + nccl + rest
    return {"stack": stack, "top": top, "lines": {"device_used": top, "pool_reserved": pool}}


def delta(a):
    out, prev = [], 0
    for v in a:
        out.append(v - prev)
        prev = v
    return out


def level(bucket_ns):
    count = -(-DURATION // bucket_ns)
    cols = {"at": [], "top": [], "low": [], "stack": {k: [] for k, _, _ in STACK},
            "line_max": {k: [] for k, _, _ in LINES}, "line_min": {k: [] for k, _, _ in LINES}}
    known_from = {}
    carried, j = None, 0
    for b in range(count):
        start, end = b * bucket_ns, (b + 1) * bucket_ns
        cands = [] if carried is None else [(-1, carried)]
        while j < len(INSTANTS) and INSTANTS[j][0] < end:
            cands.append((INSTANTS[j][0] - start, state(INSTANTS[j])))
            j += 1
        carried = cands[-1][1]
        at, top = max(cands, key=lambda c: (c[1]["top"], -cands.index(c)))
        cols["at"].append(at)
        cols["top"].append(top["top"])
        cols["low"].append(min(c[1]["top"] for c in cands))
        for k, _, _ in STACK:
            cols["stack"][k].append(top["stack"][k])
        for k, _, _ in LINES:
            vals = [c[1]["lines"][k] for c in cands if c[1]["lines"][k] is not None]
            cols["line_max"][k].append(max(vals) if vals else 0)
            cols["line_min"][k].append(min(vals) if vals else 0)
            if vals and top["lines"][k] is not None and k not in known_from:
                known_from[k] = b
    return {"bucket_ns": bucket_ns, "count": count, "at": cols["at"], "top": delta(cols["top"]),
            "low": delta(cols["low"]),
            "stack": {k: delta(v) for k, v in cols["stack"].items()},
            "line_max": {k: delta(v) for k, v in cols["line_max"].items()},
            "line_min": {k: delta(v) for k, v in cols["line_min"].items()},
            "known_from": known_from}


def main():
    body_path, data_path, expect_path = sys.argv[1:4]
    bucket, levels = 1 << 18, []  # the finest: 3815 buckets of 262144 ns
    while True:
        levels.append(level(bucket))
        if levels[-1]["count"] <= 256:
            break
        bucket *= 4
    phases = [
        {"name": "load", "occurrence": 1, "cold": True, "begin_ns": 0, "end_ns": 250_000_000,
         "failed": False, "href": "#phase-load-1"},
        {"name": "step", "occurrence": 1, "cold": True, "begin_ns": 250_000_000, "end_ns": 500_000_000,
         "failed": False, "href": "#phase-step-1"},
        {"name": "step", "occurrence": 2, "cold": False, "begin_ns": 500_000_000, "end_ns": 900_000_000,
         "failed": True, "href": "#phase-step-2"},
    ]
    parts = [{"label": "framework allocated", "bytes": 5 * GiB}, {"label": "reserved, not allocated", "bytes": 0},
             {"label": "outside the framework: nccl", "bytes": 256 * MiB},
             {"label": "rest of device used (estimate)", "bytes": 512 * MiB}]
    sync_bucket = 1 << 18
    syncs_t = [100_000_000, 600_000_000]
    dev = {
        "id": "dev-0", "label": "device 0 (GPU-fixture) on host fixture", "total_bytes": 8 * GiB,
        "t0_ns": 5_000_000_000, "duration_ns": DURATION, "wall_t0": {"s": 1764581951, "ns": 123456789},
        "top_label": "device used (the stack's top)",
        "series": [{"key": k, "label": l, "role": "stack", "style": s} for k, l, s in STACK]
        + [{"key": k, "label": l, "role": "line", "style": s} for k, l, s in LINES],
        "levels": levels, "phases": phases,
        "syncs": {"bucket_ns": sync_bucket, "b": delta([t // sync_bucket for t in syncs_t]), "n": [1, 3]},
        "peaks": [{"label": "coinciding peak", "t_ns": SPIKE_T, "bytes": PEAK, "parts": parts, "href": "#peak-0"}],
        "failures": [{"label": "failed allocation", "t_ns": FAIL_T, "bytes": FAIL_BYTES, "href": "#failure-1"}],
    }
    data = {"format": "gpumemtrace-report-page", "version": 1, "title": "fixture </script> <b>", "devices": [dev]}
    with open(data_path, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    with open(body_path, "w") as f:
        f.write("""<header><h1>gpumemtrace report (fixture)</h1></header>
<section class="device" id="dev-0"><h2>device 0</h2>
<figure class="chart" data-device="dev-0"><noscript><p>The chart needs JavaScript; every number is in the tables below.</p></noscript></figure>
<h3>Peak</h3><table><tbody><tr id="peak-0"><th>coinciding peak</th><td class="bytes" data-bytes="%d">%d B</td></tr></tbody></table>
<h3>Failures</h3><table><tbody><tr id="failure-1"><th>failed allocation</th><td class="bytes" data-bytes="%d">%d B</td></tr></tbody></table>
</section>
""" % (PEAK, PEAK, FAIL_BYTES, FAIL_BYTES))
    expect = {"peak": PEAK, "spike_t": SPIKE_T, "spike_allocated": 5 * GiB, "fail_bytes": FAIL_BYTES,
              "total": 8 * GiB, "levels": [l["bucket_ns"] for l in levels], "tie_bytes": TIE_BYTES,
              "wall_at_spike": "2025-12-01T09:39:11.423456789Z"}
    with open(expect_path, "w") as f:
        json.dump(expect, f)


if __name__ == "__main__":
    main()
