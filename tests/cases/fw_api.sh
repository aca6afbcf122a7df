#!/bin/sh
# The framework channel (gpumemtrace_fw_*, gpumemtrace_meta) through
# dlsym(RTLD_DEFAULT): tests/routes/fw_api.c says the sequence. Without the
# preload the program finds nothing; with it the trace holds exactly the
# accepted events: now-events in the main stream (aux = fw id), past-time
# events in SIDE records at the times given (aux = fw id | PAST_TIME << 32),
# a future time clamped to the time of the call, the counters, the loss and
# the metadata; calls refused as a whole leave nothing; calls after the
# tracer shut down record nothing and do not crash.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
run_fake "$BUILD/tests/fw_api" > plain.out 2> plain.err || fail "fw_api without the preload"
assert_eq "preload no" "$(cat plain.out)" "without the preload"
run_traced "$BUILD/tests/fw_api" > traced.out 2> traced.err ||
	{ cat traced.out traced.err >&2; fail "fw_api with the preload"; }
cat > expected.out <<EOT
preload yes
register: id
register again: same
register empty: 0 null: 0
other: distinct
unknown fw: -1
fw 0: -1
bad action: -1
action 0: -1
unknown flag: -1
empty: 0
now: 0
past: 0
mixed: 0
future: 0
flush: 0
after shutdown: register 0 events 0 0
EOT
diff expected.out traced.out >&2 || fail "program output (< expected, > actual)"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || { cat dump.txt >&2; fail "gmt-dump"; }
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
fw=$(sed -n 's/^STRING id=\([0-9]*\) text=myalloc$/\1/p' dump.txt)
[ -n "$fw" ] || fail "no STRING for myalloc"
other=$(sed -n 's/^STRING id=\([0-9]*\) text=otheralloc$/\1/p' dump.txt)
[ -n "$other" ] || fail "no STRING for otheralloc"
past=$((fw + (1 << 32)))
hist=$((fw + (3 << 32)))   # PAST_TIME | SNAPSHOT (GPUMEMTRACE_FW_FROM_HISTORY)
t0=$(sed -n 's/^ts t0 //p' traced.err)
before=$(sed -n 's/^ts before //p' traced.err)
after=$(sed -n 's/^ts after //p' traced.err)
# Side events with their exact times (relative to t0); main-stream events
# without theirs (the time of the call).
# FW_REGISTER: once per framework name, at its first registration.
awk -v t0="$t0" '/^EV fw_/ {
	split($3, t, "="); side = ($NF == "side");
	printf "%s %s %s %s %s %s %s", $2, $5, $6, $7, $8, $NF == "side" ? $(NF-1) : $NF, side ? "side" : "main"
	if (side && $2 != "fw_alloc" || side && $6 != "addr=0x500000") printf " t0+%d", t[2] - t0
	printf "\n" }' dump.txt > events.txt
cat > expected.txt <<EOT
fw_alloc device=1 addr=0x200000 size=1024 stream=0x5 aux=$past side t0+0
fw_free_requested device=1 addr=0x200000 size=1024 stream=0x5 aux=$past side t0+1000
fw_free_completed device=1 addr=0x200000 size=1024 stream=0x5 aux=$past side t0+2000
fw_segment_map device=1 addr=0x400000 size=20971520 stream=0x0 aux=$past side t0+2000
fw_segment_unmap device=1 addr=0x400000 size=20971520 stream=0x0 aux=$hist side t0+3000
fw_register device=-1 addr=0x0 size=0 stream=0x0 aux=$fw main
fw_register device=-1 addr=0x0 size=0 stream=0x0 aux=$other main
fw_segment_alloc device=0 addr=0x100000 size=2097152 stream=0x0 aux=$fw main
fw_alloc device=0 addr=0x100000 size=512 stream=0x77 aux=$fw main
fw_free_requested device=0 addr=0x100000 size=512 stream=0x77 aux=$fw main
fw_free_completed device=0 addr=0x100000 size=512 stream=0x77 aux=$fw main
fw_oom device=0 addr=0x1000 size=1073741824 stream=0x0 aux=$fw main
fw_alloc device=1 addr=0x500000 size=8 stream=0x0 aux=$past side
fw_allocated device=0 addr=0x64 size=200 stream=0x0 aux=$fw main
fw_reserved device=0 addr=0x12c size=400 stream=0x0 aux=$fw main
fw_lost device=0 addr=0x0 size=7 stream=0x0 aux=$fw main
EOT
# Each stream in its order; where the SIDE record falls among the main
# stream's EVENTS records is the writer's round timing, not part of it.
for k in side main; do
	grep " $k" expected.txt > "expected.$k"; grep " $k" events.txt > "events.$k"
	diff "expected.$k" "events.$k" >&2 || fail "FW events, $k stream (< expected, > actual)"
done
assert_eq "$(wc -l < expected.txt)" "$(wc -l < events.txt)" "FW events"
# The future time was clamped into the call.
ts=$(awk '/^EV fw_alloc .*addr=0x500000/ { sub("ts=", "", $3); print $3 }' dump.txt)
[ "$ts" -ge "$before" ] && [ "$ts" -le "$after" ] || fail "future time $ts not clamped into [$before, $after]"
assert_eq "META torch_version=2.11.0" "$(grep '^META' dump.txt)" "metadata"
grep -q 'text=late' dump.txt && fail "a string interned after shutdown reached the file"
assert_eq "END written=16 dropped=0 late=0" "$(grep '^END' dump.txt)" "END (14 events and the 2 registrations)"
exit 0
