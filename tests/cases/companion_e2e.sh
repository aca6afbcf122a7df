#!/bin/sh
# The PyTorch companion end to end on a FAKE torch (tests/companion/fake_torch,
# no CUDA) under the real preload: sitecustomize (chaining the user's own),
# the import hook, set-up at CUDA initialisation, moves at outermost NVTX
# ranges, at gpumemtrace's phase boundary hook, at OOM (the history's oom
# entry, no second one) and at exit; counters of every device that has any;
# metadata; ring overflow said in the trace and once on stderr; the
# cudaMallocAsync backend (counters only); Python stacks
# (GPUMEMTRACE_COMPANION_STACKS=python) through to sites and flamegraph
# --framework; nothing at all without the
# preload or with GPUMEMTRACE_COMPANION=0; a failing torch never breaks the
# program (tests/companion/e2e_workload.py says the sequence).
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
command -v python3 > /dev/null || fail "python3 is needed"
PY="$ROOT/python"
PP="$PY/gpumemtrace_companion:$PY:$ROOT/tests/companion/fake_torch:$ROOT/tests/companion/user_site"
work="$ROOT/tests/companion/e2e_workload.py"
dump="$BUILD/tests/tools/gmt-dump"
fw_events() { # DUMP: FW events as "stream type device addr size stream aux"
	awk '/^EV fw_/ { printf "%s %s %s %s %s %s %s\n", ($NF == "side" ? "side" : "main"), $2, $5, $6, $7, $8, ($NF == "side" ? $(NF-1) : $NF) }' "$1"
}

# ---- main ----
PYTHONPATH="$PP" run_traced python3 "$work" main > main.out 2> main.err || { cat main.out main.err >&2; fail "main run"; }
cat > expected.out <<'EOT'
imported: wrapped=True path=False
initialised: wrapped=False path=True
history: {'enabled': 'all', 'context': None, 'stacks': 'python', 'max_entries': 1000000}
companion dir on sys.path: False
user sitecustomize: True
nvtx calls: ['push step', 'push inner', 'pop', 'pop']
done
EOT
diff expected.out main.out >&2 || fail "main: stdout (< expected, > actual)"
assert_eq "user sitecustomize ran" "$(cat main.err)" "main: stderr"
"$dump" "$(the_trace)" > dump.txt || { cat dump.txt >&2; fail "gmt-dump"; }
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "main: trace status"
fw=$(sed -n 's/^STRING id=\([0-9]*\) text=pytorch$/\1/p' dump.txt)
[ -n "$fw" ] || fail "no STRING pytorch"
past=$((fw + (3 << 32)))   # PAST_TIME | SNAPSHOT: moved from the history
cat > expected.meta <<'EOT'
META torch_version=2.11.0+fake
META torch_cuda_version=13.0
META allocator_backend=native
META pytorch_cuda_alloc_conf=
META companion_history=on max_entries=1000000 stacks=none start=cuda_init
EOT
grep '^META' dump.txt | diff expected.meta - >&2 || fail "main: metadata"
fw_events dump.txt > events.txt
cat > expected.txt <<EOT
side fw_segment_alloc device=0 addr=0x7f0000000000 size=2097152 stream=0x0 aux=$past
side fw_alloc device=0 addr=0x7f0000000000 size=512 stream=0x7 aux=$past
side fw_alloc device=0 addr=0x7f0000000200 size=1024 stream=0x7 aux=$past
side fw_free_requested device=0 addr=0x7f0000000000 size=512 stream=0x7 aux=$past
side fw_free_completed device=0 addr=0x7f0000000000 size=512 stream=0x7 aux=$past
side fw_segment_alloc device=1 addr=0x7f1000000000 size=20971520 stream=0x0 aux=$past
side fw_alloc device=1 addr=0x7f1000000000 size=4096 stream=0x0 aux=$past
side fw_oom device=1 addr=0x100000 size=1099511627776 stream=0x0 aux=$past
side fw_free_requested device=1 addr=0x7f1000000000 size=4096 stream=0x0 aux=$past
main fw_register device=-1 addr=0x0 size=0 stream=0x0 aux=$fw
main fw_allocated device=0 addr=0x200 size=512 stream=0x0 aux=$fw
main fw_reserved device=0 addr=0x200000 size=2097152 stream=0x0 aux=$fw
main fw_allocated device=0 addr=0x400 size=1536 stream=0x0 aux=$fw
main fw_reserved device=0 addr=0x200000 size=2097152 stream=0x0 aux=$fw
main fw_allocated device=0 addr=0x400 size=1536 stream=0x0 aux=$fw
main fw_reserved device=0 addr=0x200000 size=2097152 stream=0x0 aux=$fw
main fw_allocated device=1 addr=0x1000 size=4096 stream=0x0 aux=$fw
main fw_reserved device=1 addr=0x1400000 size=20971520 stream=0x0 aux=$fw
main fw_allocated device=0 addr=0x400 size=1536 stream=0x0 aux=$fw
main fw_reserved device=0 addr=0x200000 size=2097152 stream=0x0 aux=$fw
main fw_allocated device=1 addr=0x1000 size=4096 stream=0x0 aux=$fw
main fw_reserved device=1 addr=0x1400000 size=20971520 stream=0x0 aux=$fw
main fw_allocated device=0 addr=0x400 size=1536 stream=0x0 aux=$fw
main fw_reserved device=0 addr=0x200000 size=2097152 stream=0x0 aux=$fw
main fw_allocated device=1 addr=0x0 size=4096 stream=0x0 aux=$fw
main fw_reserved device=1 addr=0x1400000 size=20971520 stream=0x0 aux=$fw
EOT
# The two streams are each in order; their interleaving in the file is the
# writer's: compare each apart.
for s in side main; do
	grep "^$s " expected.txt > "exp.$s"; grep "^$s " events.txt > "got.$s"
	diff "exp.$s" "got.$s" >&2 || fail "main: $s FW events (< expected, > actual)"
done
# Side times: nondecreasing, after the process started.
awk '/^EV fw_.* side$/ { sub("ts=", "", $3); if ($3 + 0 < prev) bad = 1; prev = $3 + 0 } END { exit bad }' dump.txt ||
	fail "side FW events go back in time"
grep -q '^END .* late=0$' dump.txt || fail "late events"

# ---- stacks: GPUMEMTRACE_COMPANION_STACKS=python carries the history's
# Python frames into the trace (TEXT_STACK) and to sites/flamegraph
# --framework: the device-0 peak (2 x 512 B + 1536 B) by call site ----
rm -rf traces
PYTHONPATH="$PP" GPUMEMTRACE_COMPANION_STACKS=python run_traced python3 "$work" stacks > st.out 2> st.err ||
	{ cat st.out st.err >&2; fail "stacks run"; }
assert_contains st.out "history: {'enabled': 'all', 'context': 'alloc', 'stacks': 'python', 'max_entries': 1000000}"
T=$(the_trace)
"$dump" "$T" > dump4.txt || fail "gmt-dump stacks"
assert_contains dump4.txt "META companion_history=on max_entries=1000000 stacks=python start=cuda_init"
line() { grep -n "# site: $1\$" "$work" | cut -d: -f1; }
lf=$(line forward); ll=$(line loop); lt=$(line top)
[ -n "$lf" ] && [ -n "$ll" ] && [ -n "$lt" ] || fail "site markers not found in $work"
assert_eq "TEXTSTACK id=2147483648 depth=2
TEXTSTACK id=2147483649 depth=1" "$(grep '^TEXTSTACK' dump4.txt)" "stacks: one TEXT_STACK per distinct stack"
"$ANALYZE" sites --framework --json "$T" > st.json || fail "sites --framework (stacks)"
python3 - st.json "$work" "$lf" "$ll" "$lt" <<'PY' || fail "stacks: framework sites"
import json, sys
doc, work = json.load(open(sys.argv[1])), sys.argv[2]
lf, ll, lt = sys.argv[3:6]
want = [{"ordinal": 0, "peak_bytes": 2560, "live_sites_total": 2, "sites": [
    (1536, 1, ["<module> (%s:%s)" % (work, lt)]),
    (1024, 2, ["forward (%s:%s)" % (work, lf), "<module> (%s:%s)" % (work, ll)])]}]
got = [{"ordinal": d["ordinal"], "peak_bytes": d["peak_bytes"], "live_sites_total": d["live_sites_total"],
        "sites": [(s["bytes"], s["count"], [f["text"] for f in s["frames"]]) for s in d["live_sites"]]}
       for d in doc["traces"][0]["framework_sites"]]
if got != want:
    sys.exit("got  %s\nwant %s" % (got, want))
PY
"$ANALYZE" flamegraph --framework "$T" > st.folded 2> /dev/null || fail "flamegraph --framework (stacks)"
assert_eq "device 0;<module> ($work:$ll);forward ($work:$lf) 1024
device 0;<module> ($work:$lt) 1536" "$(cat st.folded)" "stacks: folded"

# ---- overflow: 12 allocations between two boundaries, ring of 4 ----
rm -rf traces
PYTHONPATH="$PP" GPUMEMTRACE_COMPANION_ENTRIES=4 run_traced python3 "$work" overflow > ovf.out 2> ovf.err ||
	{ cat ovf.out ovf.err >&2; fail "overflow run"; }
"$dump" "$(the_trace)" > dump2.txt || fail "gmt-dump overflow"
fw_events dump2.txt | grep '^side' | cut -d' ' -f2-5 > side2.txt
cat > expected2.txt <<'EOT'
fw_segment_alloc device=0 addr=0x7f0000000000 size=2097152
fw_alloc device=0 addr=0x7f0000001000 size=512
fw_alloc device=0 addr=0x7f0000001200 size=512
fw_alloc device=0 addr=0x7f0000001400 size=512
fw_alloc device=0 addr=0x7f0000001600 size=512
EOT
diff expected2.txt side2.txt >&2 || fail "overflow: side events (< expected, > actual)"
lost=$(awk '/^EV fw_lost/ { sub("size=", "", $7); print $7 }' dump2.txt)
[ -n "$lost" ] && [ "$lost" -ge 1 ] || fail "overflow: no FW_LOST (got '$lost')"
assert_eq 1 "$(grep -c '^EV fw_lost .*device=0 ' dump2.txt)" "overflow: one FW_LOST on device 0"
assert_contains dump2.txt "META companion_warning=device 0: the allocator's history ring (4 entries) overflowed between two moves"
assert_eq 1 "$(grep -c '^gpumemtrace companion: device 0: .* overflowed between two moves' ovf.err)" "overflow: said once on stderr"

# ---- cudaMallocAsync: counters only ----
rm -rf traces
PYTHONPATH="$PP" PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run_traced python3 "$work" main > async.out 2> async.err ||
	{ cat async.out async.err >&2; fail "cudaMallocAsync run"; }
assert_contains async.out "history: None"
assert_eq "user sitecustomize ran" "$(cat async.err)" "cudaMallocAsync: stderr"
"$dump" "$(the_trace)" > dump3.txt || fail "gmt-dump cudaMallocAsync"
assert_contains dump3.txt "META allocator_backend=cudaMallocAsync"
assert_contains dump3.txt "META pytorch_cuda_alloc_conf=backend:cudaMallocAsync"
assert_contains dump3.txt "META companion_history=off: backend cudaMallocAsync"
grep '^EV fw_' dump3.txt | grep -v -e '^EV fw_allocated' -e '^EV fw_reserved' -e '^EV fw_register' && fail "cudaMallocAsync: events other than counters and the registration"
assert_eq 6 "$(grep -c "^EV fw_allocated" dump3.txt)" "cudaMallocAsync: counter checkpoints (no OOM observer)"

# ---- without the preload, and with GPUMEMTRACE_COMPANION=0: nothing ----
rm -rf traces
mkdir traces
PYTHONPATH="$PP" GPUMEMTRACE_OUTPUT="$TESTDIR/traces" python3 "$work" main > plain.out 2> plain.err || fail "run without the preload"
assert_eq "imported: wrapped=False path=False" "$(head -n 1 plain.out)" "without the preload"
assert_contains plain.out "history: None"
assert_contains plain.out "user sitecustomize: True"
assert_eq "user sitecustomize ran" "$(cat plain.err)" "without the preload: stderr"
PYTHONPATH="$PP" GPUMEMTRACE_COMPANION=0 run_traced python3 "$work" main > off.out 2> off.err || fail "run with the companion off"
diff plain.out off.out >&2 || fail "GPUMEMTRACE_COMPANION=0 differs from no preload"
assert_eq "user sitecustomize ran" "$(cat off.err)" "companion off: stderr"
[ -z "$(ls traces)" ] || fail "a trace without any traced call: $(ls traces)"

# ---- a torch that fails under the companion: the program goes on ----
rm -rf traces
PYTHONPATH="$PP" FAKE_TORCH_BROKEN_SNAPSHOT=1 run_traced python3 "$work" main > broken.out 2> broken.err ||
	{ cat broken.out broken.err >&2; fail "the companion broke the program"; }
diff expected.out broken.out >&2 || fail "broken snapshot: stdout differs"
grep -v -e '^user sitecustomize ran$' -e '^gpumemtrace companion: ' broken.err && fail "stray messages"
for what in "phase boundary failed" "phase boundary hook" "out-of-memory observer failed" "final move failed"; do
	assert_eq 1 "$(grep -c "^gpumemtrace companion: .*$what" broken.err)" "reported once: $what"
done
exit 0
