#!/bin/sh
# A module path in a trace that names a FIFO or a device never blocks the
# analyzer (it used to wait for a writer for ever, even with --no-symbols):
# sites_workload's library is dlopen()ed from $TESTDIR/lib, then replaced by
# a FIFO, and by a link to /dev/zero (a device: never read as a module).
# sites, sites --no-symbols and flamegraph finish (within 60 s each), exit
# 0, give the library's site its 4 MiB, and report its frame "missing"
# (or "off" without symbols) instead of reading the thing.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
mkdir lib
cp "$BUILD/tests/libsites_lib.so" lib/
GPUMEMTRACE_STACK_DEPTH=32 run_traced "$BUILD/tests/sites_workload" "$TESTDIR/lib/libsites_lib.so" > out.txt ||
	fail "sites_workload"
T=$(the_trace)
for what in fifo device; do
	rm -f lib/libsites_lib.so
	if [ $what = fifo ]; then mkfifo lib/libsites_lib.so; else ln -s /dev/zero lib/libsites_lib.so; fi
	for cmd in "sites --json" "sites --json --no-symbols" "flamegraph"; do
		timeout 60 "$ANALYZE" $cmd "$T" > out.txt 2> err.txt
		assert_eq 0 $? "$what: $cmd: exit status (124: it blocked)"
		case $cmd in
		flamegraph)
			# The library's function cannot be named: its frame is the offset.
			assert_eq 1 "$(grep -c "^device 0;.*;\[$TESTDIR/lib/libsites_lib.so+0x[0-9a-f]*\];cudaMalloc 4194304\$" out.txt)" \
				"$what: flamegraph's line for the library's site"
			;;
		*)
			st=missing; case $cmd in *no-symbols*) st=off ;; esac
			python3 - out.txt "$TESTDIR/lib/libsites_lib.so" $st <<'PY' || fail "$what: $cmd"
import json, sys
doc = json.load(open(sys.argv[1]))
hits = [(s["bytes"], f["status"]) for s in doc["traces"][0]["devices"][0]["live_sites"]
        for f in s["frames"] if f["module"] == sys.argv[2]]
assert hits == [(4 << 20, sys.argv[3])], hits
PY
			;;
		esac
	done
done
exit 0
