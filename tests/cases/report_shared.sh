#!/bin/sh
# `report` of two processes sharing one device at the same time
# (tests/tools/gen-known.c, "shared"): the coinciding peak taken is 352 MiB
# at +4 s, and the call sites table gives each process's live set at THAT
# instant (a: 64 MiB in 1 block, not its own peak's 128 MiB in 2 blocks;
# b: 288 MiB in 2 blocks), read from the page without JavaScript; the JSON
# report says the same peak and each process's share of it.
# b's executable has a path of 300 bytes: in headless Chromium (1280 px
# wide) the processes table stays within the page, the process is named by
# the last name of its path with the whole path as the link's title, and
# the environment table wraps it (screenshot shared.png).
# analyzer-only
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
GEN="$BUILD/tests/tools/gen-known"
mkdir -p a b
GPUMEMTRACE_OUTPUT="$TESTDIR/a" "$GEN" shared a || fail "gen-known shared a exited $?"
LONG="$TESTDIR/$(printf 'a-rather-long-directory-name-%s/' 1 2 3 4 5 6 7 8 9)"
mkdir -p "$LONG"
cp "$GEN" "${LONG}gen-known-with-a-long-name"
EXE="${LONG}gen-known-with-a-long-name"
GPUMEMTRACE_OUTPUT="$TESTDIR/b" "$EXE" shared b || fail "gen-known shared b exited $?"
"$ANALYZE" report -o page.html a/*.gmt b/*.gmt 2> err || { cat err; fail "report exited $?"; }
"$ANALYZE" report --json -o report.json a/*.gmt b/*.gmt || fail "report --json exited $?"
"$ANALYZE" sites --json -o sites_a.json a/*.gmt || fail "sites a exited $?"
python3 - <<'PY' || fail "report of two processes sharing a device"
import json
from html.parser import HTMLParser
MiB = 1 << 20

class Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.cur = {}, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("id"):
            self.cur = self.rows.setdefault(a["id"], [])
        elif tag == "td" and self.cur is not None:
            if "data-bytes" in a:
                self.cur.append(("bytes", int(a["data-bytes"])))
            if "data-count" in a:
                self.cur.append(("count", int(a["data-count"])))
    def handle_endtag(self, tag):
        if tag == "tr":
            self.cur = None

p = Rows()
p.feed(open("page.html", encoding="utf-8").read())
r = p.rows
errs = []
def want(key, exp):
    if r.get(key) != exp:
        errs.append(f"{key}: expected {exp}, got {r.get(key)}")
want("d0-peak", [("bytes", 352 * MiB)])
# each process's whole live set at the coinciding peak, and its one site
want("d0-m0-live", [("bytes", 64 * MiB), ("count", 1)])
want("d0-m0-site-0", [("bytes", 64 * MiB), ("count", 1)])
want("d0-m1-live", [("bytes", 288 * MiB), ("count", 2)])
want("d0-m1-site-0", [("bytes", 288 * MiB), ("count", 2)])
for k in r:
    if "-site-" in k and k not in ("d0-m0-site-0", "d0-m1-site-0"):
        errs.append(f"unexpected site row {k}")
# `sites` alone gives a's own peak: another instant, another live set
s = json.load(open("sites_a.json"))["traces"][0]["devices"][0]
if s["peak_bytes"] != 128 * MiB:
    errs.append(f"sites a: own peak {s['peak_bytes']}")
d = json.load(open("report.json"))["devices"][0]
if d["peak"]["taken_bytes"] != 352 * MiB:
    errs.append(f"json peak taken {d['peak']['taken_bytes']}")
at = [m["taken_at_peak_bytes"] for m in d["members"]]
if at != [64 * MiB, 288 * MiB]:
    errs.append(f"json taken at the peak {at}")
if errs:
    print("\n".join(errs))
    raise SystemExit(1)
PY
command -v chromium >/dev/null || fail "chromium is not installed (.ci/run installs it)"
PY=""
for p in python3 /usr/bin/python3; do "$p" -c 'import PIL' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || fail "no python3 with PIL (python3-pil)"
cat > steps.json <<'JS'
[{"screenshot": "shared.png", "clip": "({x: 0, y: document.querySelector('table.processes').getBoundingClientRect().top + window.scrollY - 40, width: 1280, height: 700})"},
 {"eval": "document.documentElement.scrollWidth", "as": "page_width"},
 {"eval": "[...document.querySelectorAll('table')].map(t => [t.className, t.getBoundingClientRect().right])", "as": "tables"},
 {"eval": "[...document.querySelectorAll('table.processes td.process a')].map(a => [a.textContent, a.title])", "as": "names"},
 {"eval": "document.querySelector('#t1 table.env td.path').getBoundingClientRect().height", "as": "path_height"}]
JS
"$PY" "$ROOT/tests/tools/browser_check.py" page.html steps.json out.json || fail "browser_check exited $?"
EXE="$EXE" "$PY" - <<'PY' || fail "long paths on the page"
import json, os
o = json.load(open("out.json"))
r, exe = o["results"], os.environ["EXE"]
errs = []
if o["console"] or o["exceptions"]:
    errs.append("console %s exceptions %s" % (o["console"], o["exceptions"]))
if r["page_width"] > 1280:
    errs.append("the page is %d px wide" % r["page_width"])
for cls, right in r["tables"]:
    if right > 1280:
        errs.append("table %s ends at %d px" % (cls, right))
names = r["names"]
if len(names) != 2 or names[1][1] != exe or not names[1][0].startswith("gen-known-with-a-long-name (pid "):
    errs.append("process names %s" % names)
if r["path_height"] < 30:
    errs.append("the executable's path does not wrap (%s px high)" % r["path_height"])
if errs:
    print("\n".join(errs))
    raise SystemExit(1)
PY
