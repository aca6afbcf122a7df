#!/bin/sh
# The report page (web/, docs/report-page.md) with its data built by
# export/gmt_pagedata.c from a device whose values are known by construction
# (tests/tools/gmt-page-fixture.c; page_fixture.py writes the body), in headless
# Chromium with the network disabled (tests/tools/browser_check.py):
# - no console message, no exception, no log entry, no request but the page;
# - a 1000 ns spike in a 1 s run survives at the whole-run zoom, where
#   several buckets share a pixel: with the device-used line switched off in
#   the legend, the pixel of its column at 4.9 GiB has the framework-allocated
#   colour, the column 30 pixels later does not; the plot is not blank;
# - the hover readout at the spike shows the fixture's bytes exactly, with
#   the wall-clock time; the peak and failure marks carry their bytes;
# - zooming to 40 ms uses the finest level; byte formatting equals printf's
#   %.2f (ties to even); the tables read the same without JavaScript; the
#   chart and readout carry text labels; printing leaves out the toolbar and
#   the readout and keeps the tables and the chart;
# - the harness itself reports a console error, an exception and a request
#   (so that the checks above can fail).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
command -v chromium >/dev/null || fail "chromium is not installed (.ci/run installs it)"
PY=""
for p in python3 /usr/bin/python3; do "$p" -c 'import PIL' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || fail "no python3 with PIL (python3-pil)"
PAGE="$BUILD/tests/tools/gmt-page"
CHECK="$ROOT/tests/tools/browser_check.py"

python3 "$ROOT/tests/tools/page_fixture.py" body.html expect.json || fail "fixture"
"$BUILD/tests/tools/gmt-page-fixture" data.json || fail "gmt-page-fixture exited $?"
"$PAGE" --title 'fixture </title><b>' --body body.html --data data.json -o page.html || fail "gmt-page exited $?"
grep -q '</script> <b>' page.html && fail "the data's '</script>' reached the page unescaped"
grep -qF '<title>fixture &lt;/title&gt;&lt;b&gt;</title>' page.html || fail "title not escaped"
# gmt_web_text: invalid UTF-8 and control characters become U+FFFD, valid
# multi-byte characters stay, quotes are escaped
"$PAGE" --title "$(printf 'a\377b\001c\303\251"\047')" -o t.html || fail "gmt-page exited $?"
grep -qF "$(printf '<title>a\357\277\275b\357\277\275c\303\251&quot;&#39;</title>')" t.html || fail "title text: $(grep '<title>' t.html)"
# the inlined files cannot end their own elements
for f in report.js report.css; do
	"$PAGE" --asset $f | grep -qiE '</(script|style)' && fail "web/$f holds an end tag"
done
cmp -s "$ROOT/web/report.js" "$("$PAGE" --asset report.js > asset.js; echo asset.js)" || fail "the embedded report.js is not web/report.js"

cat > steps.json <<EOF
[{"eval": "window.gmtReport.charts[0].levelIndex", "as": "level_full"},
 {"eval": "window.gmtReport.charts[0].L.bucket_ns", "as": "bucket_full"},
 {"eval": "(document.querySelector('.legend li[data-key=device_used] input').click(), window.gmtReport.charts[0].hidden)", "as": "hidden"},
 {"eval": "window.gmtReport.charts[0].pointAt($(json_get expect.json "j['spike_t']"), 4.9 * 2 ** 30)", "as": "spike_px"},
 {"eval": "window.gmtReport.charts[0].plotRect()", "as": "plot"},
 {"screenshot": "shot.png", "clip": "({x: 0, y: 0, width: 1280, height: 1000})"},
 {"screenshot": "plot.png", "clip": "window.gmtReport.charts[0].plotRect()"},
 {"mouse": "window.gmtReport.charts[0].pointAt($(json_get expect.json "j['spike_t']"))"},
 {"eval": "[...document.querySelectorAll('.readout tr')].map(r => [r.dataset.key, r.querySelector('td').dataset.bytes || null, r.querySelector('td').textContent])", "as": "readout"},
 {"eval": "document.querySelector('.readout p.when').textContent", "as": "when"},
 {"eval": "(window.gmtReport.charts[0].setView(590000000, 610000000), window.gmtReport.charts[0].pointAt(600000000))", "as": "sync_px"},
 {"mouse": "window.gmtReport.charts[0].pointAt(600000000)"},
 {"eval": "document.querySelector('.readout ul.notes').textContent", "as": "sync_notes"},
 {"eval": "(window.gmtReport.charts[0].act('reset'), 0)", "as": "reset"},
 {"eval": "[...document.querySelectorAll('.mark .lab[data-bytes]')].map(e => [e.parentNode.className, +e.dataset.bytes, e.textContent])", "as": "marks"},
 {"eval": "[...document.querySelectorAll('.mark.peak .parts li')].map(e => +e.dataset.bytes)", "as": "peak_parts"},
 {"eval": "[...document.querySelectorAll('.mark.phase')].map(e => e.textContent)", "as": "phase_labels"},
 {"eval": "[1, 512, 1024, 1048575, $(json_get expect.json "j['tie_bytes']"), 1207959553, 3 * 2 ** 39 + 5 * 2 ** 37, 2 ** 42 * 3].map(b => window.gmtReport.fmtBytes(b))", "as": "fmt"},
 {"eval": "(window.gmtReport.charts[0].setView(280000000, 320000000), window.gmtReport.charts[0].levelIndex)", "as": "level_zoom"},
 {"eval": "document.querySelector('.toolbar .range').textContent", "as": "range"},
 {"eval": "[...document.querySelectorAll('.device > table td[data-bytes]')].map(e => +e.dataset.bytes)", "as": "table_bytes"},
 {"eval": "[document.querySelector('.plot').getAttribute('aria-label'), document.querySelector('.readout').getAttribute('role'), [...document.querySelectorAll('.legend li')].map(li => li.textContent.trim())]", "as": "a11y"},
 {"media": "print"},
 {"eval": "['.toolbar', '.readout', '.device > table', 'figure.chart canvas'].map(q => getComputedStyle(document.querySelector(q)).display)", "as": "print"}]
EOF
"$PY" "$CHECK" page.html steps.json out.json || fail "browser_check exited $?"
cat > nojs.json <<'EOF'
[{"eval": "[...document.querySelectorAll('.device > table td[data-bytes]')].map(e => +e.dataset.bytes)", "as": "table_bytes"},
 {"eval": "document.querySelector('figure.chart').innerText", "as": "figure"}]
EOF
"$PY" "$CHECK" --no-js page.html nojs.json nojs-out.json || fail "browser_check --no-js exited $?"

"$PY" - out.json nojs-out.json expect.json shot.png plot.png <<'PY' || fail "page checks"
import json, sys
from PIL import Image
out, nojs, exp = (json.load(open(p)) for p in sys.argv[1:4])
shot, plot = Image.open(sys.argv[4]).convert("RGB"), Image.open(sys.argv[5]).convert("RGB")
r = out["results"]
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
check(out["ready"], "page never set gmtReport.ready")
check(out["console"] == [] and out["exceptions"] == [] and out["log"] == [],
      f"console/exceptions/log not empty: {out['console']} {out['exceptions']} {out['log']}")
check(out["requests"] == [out["url"]], f"requests other than the page: {out['requests']}")
if out["netns"] == "none":
    print("note: chromium ran without a network namespace (unshare failed); proxy and resolver still cut")
# the spike's column at 4.9 GiB is framework-allocated blue; 30 px later it is not
ALLOC = (0x00, 0x72, 0xb2)
x, y = (int(v) for v in r["spike_px"])  # the pixel the point lies in
check(shot.getpixel((x, y)) == ALLOC, f"spike column at ({x},{y}) is {shot.getpixel((x, y))}, not {ALLOC}")
check(shot.getpixel((x + 30, y)) != ALLOC, "the column 30 px after the spike is blue too")
px = list(plot.getdata())
blue = sum(1 for p in px if p == ALLOC) / len(px)
check(blue > 0.25, f"plot area only {blue:.1%} framework-allocated blue (blank?)")
check(len(set(px)) > 20, "plot area has almost no colours")
# at the whole run several buckets share a pixel: the spike survived that
check(r["bucket_full"] * r["plot"]["width"] < 1e9, f"whole run: {r['bucket_full']} ns buckets are not under a pixel")
check(r["hidden"] == {"device_used": True}, f"legend toggle: {r['hidden']}")
# the readout at the spike: every value the fixture put there, exactly
ro = {k: (int(b) if b else None, t) for k, b, t in r["readout"]}
GiB, MiB = 1 << 30, 1 << 20
want = {"allocated": 5 * GiB, "cache": 0, "outside_nccl": 256 * MiB, "rest": 512 * MiB,
        "top": exp["peak"], "device_used": exp["peak"], "pool_reserved": GiB, "total": exp["total"]}
for k, v in want.items():
    check(ro.get(k, (None,))[0] == v, f"readout {k}: {ro.get(k)} != {v}")
check(ro["allocated"][1] == "5368709120 B (5.00 GiB)", f"readout text {ro['allocated'][1]}")
check(r["when"].startswith("At 0.300000000 s (" + exp["wall_at_spike"] + ")"), f"readout time: {r['when']}")
check("3 synchronisations in this interval" in r["sync_notes"] and "in phase step #2 (warm)" in r["sync_notes"],
      f"readout at 0.6 s: {r['sync_notes']!r}")
marks = {c.split()[1]: (b, t) for c, b, t in r["marks"]}
check(marks["peak"][0] == exp["peak"] and "6174015488 B (5.75 GiB)" in marks["peak"][1], f"peak mark {marks.get('peak')}")
check(marks["fail"][0] == exp["fail_bytes"] and "4294968832 B (4.00 GiB)" in marks["fail"][1], f"failure mark {marks.get('fail')}")
check(marks["total"][0] == exp["total"], f"total mark {marks.get('total')}")
check(sorted(r["peak_parts"]) == sorted([5 * GiB, 0, 256 * MiB, 512 * MiB]), f"peak parts {r['peak_parts']}")
check(r["phase_labels"] == ["load #1 (cold)", "step #1 (cold)", "step #2 (warm, failed)"], f"phase labels {r['phase_labels']}")
def c_fmt(b):  # analyzer/render/gmt_render.c gmt_fmt_bytes: printf %.2f of b / 2^(10(u+1))
    if b == 0:
        return "0 B"
    u = 0
    while u < 3 and b >= 1 << (10 * (u + 2)):
        u += 1
    return "%d B (%.2f %s)" % (b, b / 2 ** (10 * (u + 1)), ["KiB", "MiB", "GiB", "TiB"][u])
vals = [1, 512, 1024, 1048575, exp["tie_bytes"], 1207959553, 3 * 2 ** 39 + 5 * 2 ** 37, 2 ** 42 * 3]
check(r["fmt"] == [c_fmt(b) for b in vals], f"fmtBytes {r['fmt']} != {[c_fmt(b) for b in vals]}")
check("1.12 GiB" in r["fmt"][4], "a tie rounds to even (1.125 GiB -> 1.12)")
check(r["level_zoom"] == 0 and "the finest precomputed" in r["range"], f"zoomed: level {r['level_zoom']}, {r['range']}")
check(r["table_bytes"] == [exp["peak"], exp["fail_bytes"]], f"tables {r['table_bytes']}")
plot_label, role, legend = r["a11y"]
check("Memory over time" in plot_label and role == "status", f"aria: {plot_label!r} {role!r}")
check(all(len(t) > 3 for t in legend) and any("framework allocated" in t for t in legend), f"legend texts {legend}")
check(r["print"] == ["none", "none", "table", "block"], f"print media: {r['print']}")
nr = nojs["results"]
check(nr["table_bytes"] == [exp["peak"], exp["fail_bytes"]], f"tables without JavaScript {nr['table_bytes']}")
check("needs JavaScript" in nr["figure"], f"no-script text missing: {nr['figure']!r}")
check(nojs["console"] == [] and nojs["exceptions"] == [] and nojs["requests"] == [nojs["url"]], "no-JS run not clean")
if errs:
    print("\n".join(errs))
    sys.exit(1)
PY

# The harness catches what it must: a console error, an exception, a request.
cat > bad.html <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<img src="http://192.0.2.1/pixel.png" alt="">
<script>console.error('boom'); window.gmtReport = {ready: true}; setTimeout(() => { throw new Error('late'); }, 0);</script>
</body></html>
EOF
echo '[{"eval": "new Promise(r => setTimeout(() => r(1), 300))", "as": "wait"}]' > wait.json
"$PY" "$CHECK" bad.html wait.json bad.json || fail "browser_check on bad.html exited $?"
"$PY" - bad.json <<'PY' || fail "the harness missed something"
import json, sys
b = json.load(open(sys.argv[1]))
assert any(c["type"] == "error" and "boom" in c["text"] for c in b["console"]), b["console"]
assert any("late" in (e or "") for e in b["exceptions"]), b["exceptions"]
assert "http://192.0.2.1/pixel.png" in b["requests"], b["requests"]
PY
exit 0
