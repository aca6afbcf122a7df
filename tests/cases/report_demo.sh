#!/bin/sh
# `report` on the demo and on the phases workload (the traces of make demo,
# made here), opened in headless Chromium with the network disabled
# (tests/tools/browser_check.py):
# - no console message, exception, log entry or request but the page's own;
# - the plot area holds the curves (the stacked layers' colours, not blank,
#   and at least a fifth of it where the device holds bytes);
# - every number of the page's tables (data-bytes, data-count) equals the
#   JSON report's (`report --json`): the peak held and its parts, each
#   process's own peak, its share at the peak and its driver-level peak,
#   every phase occurrence's maxima, every failed allocation; the tables
#   read the same without JavaScript;
# - the JSON report's numbers equal those of the other commands: the
#   driver-level peak and the failures of `summary --json`, the phase
#   maxima of `phases --json`, the peak held the highest `held` of
#   `curves --json`;
# - the page's data: the peak mark carries the peak held, and no bucket of
#   any zoom level stacks the held parts above it (the page never shows a
#   stack above a peak that claims to be its maximum);
# - the demo's failure is the 64 GiB request it makes;
# - the times of the tables (data-ns: each process's own peak, phase begin
#   and end, failures; the peak's time in its heading), the capacity, the
#   bound of the own peaks, and what each trace could not see (missing,
#   dropped, late, untraced entry points, unmatched frees, devices left
#   out) equal the JSON report's (tests/cases/drops_json.sh: a trace with
#   drops);
# - the call sites at the peak: each process's live set at the coinciding
#   peak; its sites add up to it, and (one process) those of each owner to
#   that owner's part of the peak;
# - two demos run one after the other (one device, two processes): the
#   peak is one demo's own, not their sum (the bound says the sum).
# GMT_UPDATE_SCREENSHOT=1 writes the demo's screenshot to
# docs/report-demo.png (the README shows it).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
command -v chromium >/dev/null || fail "chromium is not installed (.ci/run installs it)"
PY=""
for p in python3 /usr/bin/python3; do "$p" -c 'import PIL' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || fail "no python3 with PIL (python3-pil)"
CHECK="$ROOT/tests/tools/browser_check.py"
mkdir -p demo phases
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/demo" "$BUILD/tests/demo_workload" > /dev/null ||
	fail "demo exited $?"
GMT_FAKE_CONTEXT_BYTES=268435456 LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/phases" \
	"$BUILD/tests/phases_workload" > /dev/null || fail "phases workload exited $?"
mkdir -p demo2
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o "$TESTDIR/demo2" "$BUILD/tests/demo_workload" > /dev/null ||
	fail "demo 2 exited $?"
cat > steps.json <<'EOF'
[{"screenshot": "shot.png", "clip": "({x: 0, y: 0, width: 1280, height: 1000})"},
 {"screenshot": "plot.png", "clip": "window.gmtReport.charts[0].plotRect()"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('tr[id]')].map(r => [r.id, [...r.querySelectorAll('td[data-bytes], td[data-count]')].map(td => +(td.dataset.bytes ?? td.dataset.count))]))", "as": "rows"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('table.peak tr[data-key]')].map(r => [r.dataset.key, +r.querySelector('td[data-bytes]').dataset.bytes]))", "as": "peak_parts"},
 {"eval": "JSON.parse(document.getElementById('gmt-data').textContent)", "as": "data"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('section.trace')].map(s => [s.id, Object.fromEntries([...s.querySelectorAll('table.limits tr[data-key]')].map(r => [r.dataset.key, +r.querySelector('td[data-count]').dataset.count]))]))", "as": "limits"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('tr[id]')].map(r => [r.id, [...r.querySelectorAll('td[data-ns]')].map(td => +td.dataset.ns)]))", "as": "times"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('section.device')].map(s => [s.id, Object.fromEntries([...s.querySelectorAll('p span[data-bytes]')].map(x => [x.id || 'capacity', +x.dataset.bytes]))]))", "as": "spans"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('tr[id$=\"-peak\"]')].map(r => [r.id, r.querySelector('th').textContent]))", "as": "peak_th"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('tr[id*=\"-site-\"]')].map(r => [r.id, r.children[4].textContent]))", "as": "site_share"},
 {"eval": "Object.fromEntries([...document.querySelectorAll('tr[id*=\"-site-\"]')].map(r => [r.id, r.children[5].textContent]))", "as": "site_owner"}]
EOF
echo '[{"eval": "Object.fromEntries([...document.querySelectorAll(\"tr[id]\")].map(r => [r.id, [...r.querySelectorAll(\"td[data-bytes], td[data-count]\")].map(td => +(td.dataset.bytes ?? td.dataset.count))]))", "as": "rows"}]' > nojs.json
for w in demo phases both; do
	if [ $w = both ]; then set -- demo/*.gmt demo2/*.gmt; else set -- "$w"/*.gmt; fi
	t=$1
	"$ANALYZE" report -o "$w.html" "$@" 2> "$w.err" || { cat "$w.err"; fail "report $w exited $?"; }
	[ -s "$w.err" ] && { cat "$w.err"; fail "report $w: stderr not empty"; }
	"$ANALYZE" report --json -o "$w.report.json" "$@" || fail "report --json $w"
	"$ANALYZE" summary --json -o "$w.summary.json" "$t" || fail "summary $w"
	"$ANALYZE" phases --json -o "$w.phases.json" "$t" || fail "phases $w"
	"$ANALYZE" curves --json -o "$w.curves.json" "$t" || fail "curves $w"
	"$ANALYZE" sites --json -o "$w.sites.json" "$t" || fail "sites $w"
	"$PY" "$CHECK" "$w.html" steps.json "$w.out.json" || fail "browser_check $w exited $?"
	"$PY" "$CHECK" --no-js "$w.html" nojs.json "$w.nojs.json" || fail "browser_check --no-js $w exited $?"
	"$PY" - "$w" <<'PY' || fail "report $w"
import json, os, sys
from PIL import Image
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "tools"))
from pagedata import level, listed
w = sys.argv[1]
out, nojs = json.load(open(w + ".out.json")), json.load(open(w + ".nojs.json"))
rep = json.load(open(w + ".report.json"))
s = json.load(open(w + ".summary.json"))["traces"][0]
p = json.load(open(w + ".phases.json"))["traces"][0]
c = json.load(open(w + ".curves.json"))
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
check(out["ready"], "not ready")
check(out["console"] == [] and out["exceptions"] == [] and out["log"] == [],
      "console %s exceptions %s log %s" % (out["console"], out["exceptions"], out["log"]))
check(out["requests"] == [out["url"]], "requests %s" % out["requests"])
rows, parts, data = out["results"]["rows"], out["results"]["peak_parts"], out["results"]["data"]
limits, times, spans, peak_th = (out["results"][k] for k in ("limits", "times", "spans", "peak_th"))
check(nojs["results"]["rows"] == rows, "the tables differ without JavaScript")
plot = Image.open("plot.png").convert("RGB")
LAYERS = {(0x00, 0x72, 0xb2), (0xe6, 0x9f, 0x00), (0x00, 0x9e, 0x73), (0x56, 0xb4, 0xe9)}
px = list(plot.getdata())
share = sum(1 for q in px if q in LAYERS) / len(px)
# two demos seconds apart leave most of the time axis empty
check(share > (0.02 if w == "both" else 0.001), "plot area only %.1f%% layer colours" % (100 * share))
if w != "both":
    # Where the first chart's device holds bytes (its curves: from the first
    # row taking any to the row after the last), the layers fill at least a
    # fifth of the plot. (The axis ends at the trace's END: a process slow to
    # exit, on a loaded machine, leaves a long empty tail after the workload's
    # 16 ms; the whole plot's share then says nothing.)
    dev0 = data["devices"][0]            # the page's first chart: the report's first device
    ordn = rep["devices"][0]["ordinal"]
    cc = c["columns"]
    crow = [r for r in c["traces"][0]["rows"] if r[cc.index("device")] == ordn]
    pos = [i for i, r in enumerate(crow) if r[cc.index("taken_bytes")]]
    check(pos, "no row takes bytes")
    if pos:
        t0, dur = dev0["t0_ns"], dev0["duration_ns"]
        a = crow[pos[0]][cc.index("ts_ns")] - t0
        b = (crow[pos[-1] + 1][cc.index("ts_ns")] if pos[-1] + 1 < len(crow) else t0 + dur) - t0
        W, H = plot.size
        x0 = max(0, min(W - 1, int(a * W / dur))) if dur else 0
        x1 = max(x0 + 1, min(W, -(-b * W // dur))) if dur else W
        act = sum(1 for y in range(H) for x in range(x0, x1) if plot.getpixel((x, y)) in LAYERS)
        share_act = act / ((x1 - x0) * H)
        check(share_act > 0.2, "plot area only %.1f%% layer colours where the device holds bytes "
              "(columns %d-%d of %d)" % (100 * share_act, x0, x1, W))

# the DOM's numbers are the JSON report's
n_listed = n_numbers = 0
check(len(rep["devices"]) >= 1, "no device")
cols = {k: i for i, k in enumerate(c["columns"])}
for dv in rep["devices"]:
    d = dv["id"]
    pk = dv["peak"]
    check(rows.get(d + "-peak") == [pk["taken_bytes"]], "%s peak %s != %s" % (d, rows.get(d + "-peak"), pk["taken_bytes"]))
    for k, v in pk["parts"].items():
        check(parts.get(k) == v, "%s part %s: %s != %s" % (d, k, parts.get(k), v))
    check(sum(pk["parts"].values()) == pk["taken_bytes"], "parts do not add up")
    for k, m in enumerate(dv["members"]):
        fails = sum(1 for f in dv["failures"] if f["member"] == k)
        want = [m["own_peak_taken_bytes"], m["taken_at_peak_bytes"], m["driver_peak_bytes"], fails, m["syncs"]]
        check(rows.get("%s-m%d" % (d, k)) == want, "%s member %d: %s != %s" % (d, k, rows.get("%s-m%d" % (d, k)), want))
    for ph in dv["phases"]:
        rid = "%s-m%d-phase-%d-%d" % (d, ph["member"], ph["name_index"], ph["occurrence"])
        want = [x for x in (ph["max_allocated_bytes"], ph["max_reserved_bytes"], ph["max_taken_bytes"], ph["max_outside_bytes"]) if x is not None]
        check(rows.get(rid) == want, "%s: %s != %s" % (rid, rows.get(rid), want))
    t0 = dv["t0_ns"]
    def secs(ns):
        return "%d.%09d s" % divmod(ns, 10**9)
    check(secs(pk["ts_ns"] - t0) in peak_th.get(d + "-peak", ""), "%s peak time %s not in %r" % (d, secs(pk["ts_ns"] - t0), peak_th.get(d + "-peak")))
    if dv["total_bytes"]:
        check(spans[d].get("capacity") == dv["total_bytes"], "%s capacity %s" % (d, spans[d]))
    if len(dv["members"]) > 1:
        check(spans[d].get(d + "-bound") == dv["own_peak_sum_bytes"], "%s bound %s != %s" % (d, spans[d], dv["own_peak_sum_bytes"]))
    for k, m in enumerate(dv["members"]):
        want = [m["own_peak_ts_ns"] - t0] if m["own_peak_taken_bytes"] else []
        check(times.get("%s-m%d" % (d, k)) == want, "%s member %d time %s != %s" % (d, k, times.get("%s-m%d" % (d, k)), want))
    for ph in dv["phases"]:
        rid = "%s-m%d-phase-%d-%d" % (d, ph["member"], ph["name_index"], ph["occurrence"])
        check(times.get(rid) == [ph["begin_ts_ns"] - t0, ph["end_ts_ns"] - t0], "%s times %s" % (rid, times.get(rid)))
    for j, f in enumerate(dv["failures"]):
        check(times.get("%s-fail-%d" % (d, j)) == [f["ts_ns"] - t0], "%s-fail-%d time" % (d, j))
    for j, f in enumerate(dv["failures"]):
        rid = "%s-fail-%d" % (d, j)
        want = [f["requested_bytes"], f["live_bytes"]] + ([f["meminfo_free_bytes"]] if f["meminfo_free_bytes"] is not None else [])
        check(rows.get(rid) == want, "%s: %s != %s" % (rid, rows.get(rid), want))
    # the page's data: the peak mark, and no stack above it
    pd = [x for x in data["devices"] if x["id"] == d][0]
    check([m["bytes"] for m in pd["peaks"]] == [pk["taken_bytes"]], "%s marks %s" % (d, pd["peaks"]))
    # the synchronisation ticks: every SYNC of the device's processes
    check(sum(pd["syncs"]["n"]) == dv["syncs"] == sum(m["syncs"] for m in dv["members"]) and dv["syncs"] > 0,
          "%s syncs %s, model %s" % (d, pd["syncs"], dv["syncs"]))
    keys = [x["key"] for x in pd["series"] if x["role"] == "stack" and x["key"] != "rest"]
    for L in pd["levels"]:
        X = level(L)
        tops = max(sum(X["stack"][k][i] for k in keys) for i in range(L["count"]))
        check(tops == pk["taken_bytes"], "%s level %d: held stacks to %d, the peak says %d" % (d, L["bucket_ns"], tops, pk["taken_bytes"]))
        # sparse: a bucket is written when it differs from the one before
        # (the first always), so a level writes at most two buckets per
        # instant (the one it lies in, the one after) and one more
        arrs = [X["at"], X["top"], X["low"]] + [X[g][k] for g in ("stack", "line_max", "line_min") for k in X[g]]
        changes = 1 + sum(1 for i in range(1, L["count"]) if any(c[i] != c[i - 1] for c in arrs))
        check(listed(L) <= changes * 10 // 9 + 1 and (listed(L) == changes or "b" not in L),
              "%s level %d writes %d buckets, %d differ from the one before" % (d, L["bucket_ns"], listed(L), changes))
        check(listed(L) <= 2 * dv["instants"] + 1 or "b" not in L,
              "%s level %d writes %d buckets for %d instants" % (d, L["bucket_ns"], listed(L), dv["instants"]))
        n_listed += listed(L)
        n_numbers += listed(L) * (3 + len(X["stack"]) + len(X["line_max"]) + len(X["line_min"]))

# the page's size is set by the buckets written: the data holds at most 21
# bytes per number written (20 digits and a comma) besides its marks, phases
# and labels (a few KiB here); a small trace makes a small page (the demo:
# about 50 KiB, scripts and styles included)
data_len = len(json.dumps(data, separators=(",", ":")))
check(data_len <= 21 * n_numbers + 16384, "data %d bytes for %d numbers" % (data_len, n_numbers))
if w != "both":
    check(os.path.getsize(w + ".html") < 128 * 1024, "%s.html is %d bytes" % (w, os.path.getsize(w + ".html")))
# the sites at the peak: each process's live set at the coinciding peak.
# One process: the sites of each owner but the application add up to that
# owner's part of the peak; the application's are its part plus the
# framework's segments then (at most reserved); the shares are of the
# process's live bytes then. `sites` (the process's own
# driver-level peak, another instant here) lists the same stacks.
sj = json.load(open(w + ".sites.json"))["traces"][0]
site_owner = out["results"]["site_owner"]
n_sites = 0
for dv in rep["devices"]:
    d = dv["id"]
    for k, m in enumerate(dv["members"]):
        live = rows.get("%s-m%d-live" % (d, k))
        check(live is not None, "%s-m%d-live missing" % (d, k))
        if live is None:
            continue
        sid = ["%s-m%d-site-%d" % (d, k, j) for j in range(1000) if "%s-m%d-site-%d" % (d, k, j) in rows]
        check(sum(rows[r][0] for r in sid) == live[0] and sum(rows[r][1] for r in sid) == live[1],
              "%s-m%d: sites %s do not add up to %s" % (d, k, [rows[r] for r in sid], live))
        for r in sid:
            share = out["results"]["site_share"].get(r)
            check(share == "%.2f%%" % (100 * rows[r][0] / live[0]), "%s share %s" % (r, share))
        if len(dv["members"]) == 1:
            by = {}
            for r in sid:
                by[site_owner[r]] = by.get(site_owner[r], 0) + rows[r][0]
            want = {o[len("outside_"):]: v for o, v in dv["peak"]["parts"].items()
                    if o.startswith("outside_") and o != "outside_application" and v}
            app = by.pop("application", 0)
            check(by == want, "%s sites by owner %s != the peak's outside parts %s" % (d, by, want))
            lo = dv["peak"]["parts"]["outside_application"]
            check(lo <= app <= lo + (dv["peak"]["reserved_bytes"] or 0),
                  "%s application sites %d: not the application's outside %d plus at most the framework's segments" % (d, app, lo))
        n_sites += len(sid)
check(n_sites >= 2, "only %d sites compared" % n_sites)
# what each trace could not see: the JSON report's counts
for i, t in enumerate(rep["traces"]):
    L = limits.get("t%d" % i, {})
    for k in ("dropped_events", "late_events", "entry_points_untraced", "unmatched_frees", "devices_left_out"):
        check(L.get(k) == t["unseen"][k], "t%d %s: %s != %s" % (i, k, L.get(k), t["unseen"][k]))
    check(sum(v for k, v in L.items() if k.startswith("drop.")) == t["unseen"]["dropped_events"], "t%d drops by reason" % i)
    check(L.get("missing_events") == t["missing_events"]["count"], "t%d missing_events: %s != %s" % (i, L.get("missing_events"), t["missing_events"]))
check(len(limits) == len(rep["traces"]), "trace sections %s" % list(limits))
if w == "both":
    dv = rep["devices"][0]
    own = [m["own_peak_taken_bytes"] for m in dv["members"]]
    check(len(rep["devices"]) == 1 and len(own) == 2, "both demos: one device, two processes: %s" % own)
    check(dv["peak"]["taken_bytes"] == max(own) and dv["own_peak_sum_bytes"] == sum(own),
          "both demos ran one after the other: peak %s, own %s" % (dv["peak"]["taken_bytes"], own))
# the JSON report's numbers are the other commands' (the first trace's)
dv = rep["devices"][0]
m = dv["members"][0]
sd = [x for x in s["devices"] if x["ordinal"] == m["ordinal"]][0]
check(m["driver_peak_bytes"] == sd["peak"]["bytes"], "driver peak %s != summary %s" % (m["driver_peak_bytes"], sd["peak"]["bytes"]))
held = [r[cols["taken_bytes"]] for r in c["traces"][0]["rows"] if r[cols["device"]] == m["ordinal"]]
# (the first trace's own peak; with both demos the device's peak is the
# higher own peak, checked above)
check(m["own_peak_taken_bytes"] == max(held), "own peak taken %s != curves' highest taken %s" % (m["own_peak_taken_bytes"], max(held)))
if len(dv["members"]) == 1:
    check(dv["peak"]["taken_bytes"] == max(held), "peak taken %s != curves' highest taken %s" % (dv["peak"]["taken_bytes"], max(held)))
sf = [f for f in s["failed_allocations"]["items"] if f["device"] == m["ordinal"]]
check([(f["requested_bytes"], f["ts_ns"]) for f in dv["failures"] if f["member"] == 0] == [(f["requested_bytes"], f["ts_ns"]) for f in sf],
      "failures %s != summary %s" % (dv["failures"], sf))
n_occ = 0
for i, ph in enumerate(p["phases"]):
    for o in ph["listed"]:
        for x in o["devices"]:
            if x["ordinal"] != m["ordinal"]:
                continue
            r = x["requested"]
            mine = [q for q in dv["phases"] if q["member"] == 0 and q["name_index"] == i and q["occurrence"] == o["occurrence"]]
            check(len(mine) == 1, "phase %s #%d missing" % (ph["name"], o["occurrence"]))
            if mine:
                q = mine[0]
                check(q["name"] == ph["name"] and (q["max_allocated_bytes"], q["max_reserved_bytes"], q["max_taken_bytes"], q["max_outside_bytes"]) ==
                      tuple(v and v.get("bytes") for v in (r["max_allocated"], r["max_reserved"], r["max_taken"], r["max_outside"])),
                      "phase %s #%d: %s != %s" % (ph["name"], o["occurrence"], q, r))
            n_occ += 1
check(n_occ == len([q for q in dv["phases"] if q["member"] == 0]), "%d occurrences in phases, %d in the report" % (n_occ, len(dv["phases"])))
if w == "phases":
    check(n_occ >= 4, "only %d phase occurrences compared" % n_occ)
if w in ("demo", "both"):
    check([f["requested_bytes"] for f in dv["failures"]] == [64 << 30] * (2 if w == "both" else 1), "the demo's failure: %s" % dv["failures"])
if errs:
    print("\n".join(errs))
    sys.exit(1)
PY
	[ "$w" = demo ] && [ "${GMT_UPDATE_SCREENSHOT:-0}" = 1 ] && cp shot.png "$ROOT/docs/report-demo.png"
done
exit 0
