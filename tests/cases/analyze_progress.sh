#!/bin/sh
# Progress on a terminal only: with stderr a terminal (a pty) and
# GPUMEMTRACE_PROGRESS_AFTER_MS=0 (the default waits 2 s), summary and sites
# show "gpumemtrace-analyze: reading FILE: P%" lines (a command that reads
# the trace again says "(pass 2)": oom, to find the phase at a failure;
# sites reads it once), erased before the command ends; with stderr a file,
# nothing, and stdout is the same either way.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
T="$ROOT/tests/frozen/traces/sites_workload.gmt"
cat > pty_run.py <<'PY'
import os, pty, subprocess, sys
m, s = pty.openpty()
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[3:], stdout=out, stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
err = b""
while True:
    try:
        b = os.read(m, 65536)
    except OSError:
        break
    if not b:
        break
    err += b
open(sys.argv[2], "wb").write(err)
sys.exit(p.wait())
PY
for c in summary sites oom; do
	GPUMEMTRACE_PROGRESS_AFTER_MS=0 python3 pty_run.py "$c.tty.out" "$c.tty.err" "$ANALYZE" "$c" --no-symbols "$T" ||
		fail "$c on a terminal: $?"
	GPUMEMTRACE_PROGRESS_AFTER_MS=0 "$ANALYZE" "$c" --no-symbols "$T" > "$c.out" 2> "$c.err" || fail "$c: $?"
	# sites' symbolisation line ends with the seconds it took: measured, so left out
	[ "$(sed 's/ files, [0-9.]* s/ files, S s/' "$c.out")" = "$(sed 's/ files, [0-9.]* s/ files, S s/' "$c.tty.out")" ] ||
		fail "$c: stdout differs on a terminal"
	grep -q "reading" "$c.err" && fail "$c: progress without a terminal"
	grep -aq "gpumemtrace-analyze: reading $T: [0-9]*%" "$c.tty.err" || fail "$c: no progress line on the terminal: $(cat -v "$c.tty.err")"
	# the last thing written to the terminal erases the line (after any message)
	python3 -c 'import sys; e = open(sys.argv[1], "rb").read(); i = e.rfind(b"reading"); assert e.find(b"\r\x1b[K", i) > i, e[-200:]' "$c.tty.err" ||
		fail "$c: the progress line is not erased"
done
grep -aq "gpumemtrace-analyze: reading $T (pass 2): [0-9]*%" oom.tty.err || fail "oom: no second pass: $(cat -v oom.tty.err)"
grep -aq "(pass 2)" sites.tty.err && fail "sites: a second pass: $(cat -v sites.tty.err)"
grep -aq "(pass 2)" summary.tty.err && fail "summary: a second pass: $(cat -v summary.tty.err)"
exit 0
