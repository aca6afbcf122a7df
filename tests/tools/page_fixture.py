#!/usr/bin/env python3
"""Writes the body of a report page and the numbers its test expects, for
the device tests/tools/gmt-page-fixture.c builds (values known by
construction; docs/report-page.md is the contract), for
tests/cases/web_page.sh.

    page_fixture.py BODY.html EXPECT.json
"""
import json
import sys

GiB, MiB = 1 << 30, 1 << 20
PEAK = 5 * GiB + 256 * MiB + 512 * MiB   # the spike at 0.3 s: its only instant
FAIL_BYTES = 4 * GiB + 1536              # odd on purpose: the text shows 4.00 GiB


def main():
    body_path, expect_path = sys.argv[1:3]
    with open(body_path, "w") as f:
        f.write("""<header><h1>gpumemtrace report (fixture)</h1></header>
<section class="device" id="dev-0"><h2>device 0</h2>
<figure class="chart" data-device="dev-0"><noscript><p>The chart needs JavaScript; every number is in the tables below.</p></noscript></figure>
<h3>Peak</h3><table><tbody><tr id="peak-0"><th>coinciding peak</th><td class="bytes" data-bytes="%d">%d B</td></tr></tbody></table>
<h3>Failures</h3><table><tbody><tr id="failure-1"><th>failed allocation</th><td class="bytes" data-bytes="%d">%d B</td></tr></tbody></table>
</section>
""" % (PEAK, PEAK, FAIL_BYTES, FAIL_BYTES))
    expect = {"peak": PEAK, "spike_t": 300_000_000, "fail_bytes": FAIL_BYTES, "total": 8 * GiB,
              "finest_bucket_ns": 1 << 18, "tie_bytes": GiB + GiB // 8,
              "wall_at_spike": "2025-12-01T09:39:11.423456789Z"}
    with open(expect_path, "w") as f:
        json.dump(expect, f)


if __name__ == "__main__":
    main()
