#!/usr/bin/env python3
"""Opens a page in headless Chromium and reports what it did, for the
browser tests (tests/cases/web_*.sh).

    browser_check.py PAGE.html STEPS.json OUT.json [--width W] [--height H]
                     [--no-netns] [--no-js]

Chromium runs with the network disabled: in a network namespace of its own
(`unshare -n`, or `unshare -rn` when not root; --no-netns or neither working:
without one, and the result says so), with a proxy to nowhere and every host
name unresolvable. It is driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: fds 3 and 4, JSON messages ended by NUL), which
needs nothing but Python's standard library. --no-js disables the page's
scripts (the steps still run: the protocol evaluates them itself).

OUT.json holds: "netns" (how the network was cut), "ready" (the page set
window.gmtReport.ready), "console" (console API calls: type, text),
"exceptions" (uncaught exceptions), "log" (browser log entries: level,
source, text: CSP violations and failed loads land here), "requests" (every
URL the page asked for, the page's own included), "results" (each step's
value by name) and "timing" (navigation to load event, ms).

STEPS.json is a list run in order once the page is ready:
  {"eval": EXPR, "as": NAME}           the JSON value of EXPR
  {"mouse": EXPR}                      EXPR gives [x, y] (viewport px): move there
  {"screenshot": FILE, "clip": EXPR}   EXPR gives {x, y, width, height} (page px)
  {"media": "print"|""}                emulate the print media type (or stop)
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, width, height, use_netns):
        self.chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not self.chromium:
            raise SystemExit("browser_check: chromium not found")
        self.profile = tempfile.mkdtemp(prefix="gmt-chromium.")
        self.netns = "none"
        prefix = []
        if use_netns:
            for cmd in (["unshare", "-n"], ["unshare", "-rn"]):
                if subprocess.run(cmd + ["true"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0:
                    prefix, self.netns = cmd, " ".join(cmd)
                    break
        cmd_r, self.cmd_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        # the child's ends away from 3 and 4, where pipe_fds() puts them
        cmd_r, resp_w = (self._high(fd) for fd in (cmd_r, resp_w))
        args = [
            "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
            "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-extensions",
            "--disable-default-apps", "--no-pings", "--mute-audio", "--hide-scrollbars",
            "--disable-features=Translate,MediaRouter,OptimizationHints",
            f"--window-size={width},{height}",
        ]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        self.stderr = open(os.path.join(self.profile, "stderr.log"), "w")

        def pipe_fds():  # in the child: fds 3 and 4 are the pipe's ends
            os.dup2(cmd_r, 3)
            os.dup2(resp_w, 4)

        self.proc = subprocess.Popen(prefix + [self.chromium] + args + ["about:blank"],
                                     pass_fds=(3, 4), preexec_fn=pipe_fds, stdin=subprocess.DEVNULL,
                                     stdout=self.stderr, stderr=self.stderr)
        os.close(cmd_r)
        os.close(resp_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    @staticmethod
    def _high(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        return high

    def close(self):
        try:
            self.send("Browser.close", browser_level=True, wait=False)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        if not os.environ.get("GMT_KEEP_PROFILE"):
            shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.resp_r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                raise SystemExit("browser_check: chromium closed the pipe (see its stderr)")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, browser_level=False, wait=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser_level:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m is None:
                raise SystemExit(f"browser_check: no answer to {method} within {timeout} s")
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise SystemExit(f"browser_check: {method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, name, timeout):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m["method"] == name:
                return m
        while True:
            m = self._read_message(deadline)
            if m is None:
                return None
            if "method" in m:
                self.events.append(m)
                if m["method"] == name:
                    return m

    def evaluate(self, expr):
        r = self.send("Runtime.evaluate", {"expression": f"JSON.stringify(({expr}))",
                                           "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise SystemExit(f"browser_check: {expr}: {r['exceptionDetails']}")
        v = r["result"].get("value")
        return None if v is None else json.loads(v)


def main():
    argv = sys.argv[1:]
    width, height, use_netns, no_js = 1280, 1600, True, False
    pos = []
    i = 0
    while i < len(argv):
        if argv[i] == "--width":
            width = int(argv[i + 1]); i += 2
        elif argv[i] == "--height":
            height = int(argv[i + 1]); i += 2
        elif argv[i] == "--no-netns":
            use_netns = False; i += 1
        elif argv[i] == "--no-js":
            no_js = True; i += 1
        else:
            pos.append(argv[i]); i += 1
    if len(pos) != 3:
        raise SystemExit(__doc__)
    page, steps_path, out_path = pos
    steps = json.load(open(steps_path))
    url = "file://" + os.path.abspath(page)
    b = Browser(width, height, use_netns)
    out = {"netns": b.netns, "url": url, "results": {}}
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        b.session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            b.send(f"{domain}.enable")
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        if no_js:
            b.send("Emulation.setScriptExecutionDisabled", {"value": True})
        t0 = time.monotonic()
        b.send("Page.navigate", {"url": url})
        loaded = b.wait_event("Page.loadEventFired", 60)
        out["timing"] = {"load_ms": round((time.monotonic() - t0) * 1000, 1), "loaded": loaded is not None}
        ready = no_js
        deadline = time.monotonic() + 30
        while not ready and time.monotonic() < deadline:
            if b.evaluate("!!(window.gmtReport && window.gmtReport.ready)"):
                ready = True
                break
            time.sleep(0.05)
        out["ready"] = ready
        for st in steps if ready else []:
            if "eval" in st:
                out["results"][st["as"]] = b.evaluate(st["eval"])
            elif "mouse" in st:
                x, y = b.evaluate(st["mouse"])
                b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
            elif "media" in st:
                b.send("Emulation.setEmulatedMedia", {"media": st["media"]})
            elif "screenshot" in st:
                clip = b.evaluate(st["clip"])
                clip["scale"] = 1
                shot = b.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                        "captureBeyondViewport": True})
                with open(st["screenshot"], "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
        b.evaluate("1")  # collects the events sent meanwhile
    finally:
        b.close()
    ev = b.events
    out["console"] = [{"type": m["params"]["type"],
                       "text": " ".join(str(a.get("value", a.get("description", ""))) for a in m["params"]["args"])}
                      for m in ev if m["method"] == "Runtime.consoleAPICalled"]
    out["exceptions"] = [m["params"]["exceptionDetails"].get("exception", {}).get("description")
                         or m["params"]["exceptionDetails"].get("text")
                         for m in ev if m["method"] == "Runtime.exceptionThrown"]
    out["log"] = [{"level": m["params"]["entry"]["level"], "source": m["params"]["entry"]["source"],
                   "text": m["params"]["entry"]["text"]}
                  for m in ev if m["method"] == "Log.entryAdded"]
    out["requests"] = [m["params"]["request"]["url"] for m in ev if m["method"] == "Network.requestWillBeSent"]
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
