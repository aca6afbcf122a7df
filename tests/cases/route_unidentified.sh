#!/bin/sh
# A failed identification is never silent. With GMT_FAKE_PROC_INTERNAL=1 the
# driver double's cuGetProcAddress answers internal entry points (no
# exported symbol has their address), as a real driver may:
#   1. the runtime double's whole start (every driver call looked up at
#      13000) is traced exactly as with exported symbols, each look-up of a
#      hooked name traced through the prototype its name, version and flags
#      give (PROC_UNIDENTIFIED, aux = the hook it is traced as);
#   2. a look-up at 14000 (newer than the headers the preload was built
#      with: the prototype is not known) is passed on untraced, said once on
#      stderr and in the trace (PROC_UNIDENTIFIED, aux 0); the same pointer
#      looked up at 13000 afterwards is traced; every analyzer command says
#      the trace is incomplete;
#   3. with exported symbols, a look-up at 14000 is identified by address
#      and traced, nothing said.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
# PROC_UNIDENTIFIED as "name version flags traced-as" (the names from the
# trace's STRING records; "-" = not traced).
unidentified() {
	awk '$1 == "STRING" { id = substr($2, 4); sub(/^[^ ]* [^ ]* text=/, ""); s[id] = $0; next }
	$1 == "EV" && $2 == "proc_unidentified" {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "%s %d %d %s\n", s[sprintf("%d", f["addr"])], f["size"], f["stream"], f["aux"] == 0 ? "-" : s[f["aux"]]
	}' dump.txt
}

# ---- 1. the runtime double on internal entry points ----------------------
route_run route_runtime
route_events > exported.txt
GMT_FAKE_PROC_INTERNAL=1 route_run route_runtime
route_events | grep -v '^proc_unidentified' > internal.txt
diff exported.txt internal.txt >&2 || fail "runtime: events on internal entry points (< exported, > internal)"
[ -s traced.err ] && grep -v '^addr ' traced.err >&2 && fail "runtime: something said on stderr"
unidentified > u.txt
# Every hooked look-up the runtime double makes (tests/fakecuda/fake_runtime.c
# drv_init: 31 names, cuCtxSetCurrent among them, the per-thread-stream ones
# with flag 2), each traced as the implementation of its version.
assert_eq 31 "$(wc -l < u.txt)" "runtime: unidentified look-ups"
assert_contains u.txt "cuCtxSetCurrent 13000 1 cuCtxSetCurrent"
assert_eq 0 "$(grep -c ' -$' u.txt)" "runtime: untraced look-ups"
assert_contains u.txt "cuCtxSynchronize 13000 1 cuCtxSynchronize_v2"
assert_contains u.txt "cuMemAlloc 13000 1 cuMemAlloc_v2"
assert_contains u.txt "cuMemAllocAsync 13000 2 cuMemAllocAsync_ptsz"
assert_contains u.txt "cuStreamSynchronize 13000 2 cuStreamSynchronize_ptsz"

# ---- 2. a version newer than ours ---------------------------------------------
GMT_FAKE_PROC_INTERNAL=1 GMT_FAKE_DRIVER_VERSION=14000 route_run route_unidentified
assert_eq 0 "$ROUTE_RC" "exit status"
assert_eq "cuCtxCreate 13000 0 cuCtxCreate_v4
cuMemAlloc 14000 0 -
cuMemFree 14000 0 -
cuMemAlloc 13000 0 cuMemAlloc_v2
cuMemFree 13000 0 cuMemFree_v2" "$(unidentified)" "unidentified look-ups"
# Only the 1 MiB block of the 13000 pointers is in the trace.
assert_eq "alloc device=0 addr=a size=1048576
free device=-1 addr=a size=0" "$(route_events | awk '$1 == "alloc" || $1 == "free" { print $1, $2, $3, $4 }')" \
	"traced allocations"
assert_eq "gpumemtrace: cuGetProcAddress(cuMemAlloc, 14000, flags 0) returned a function that is no exported symbol and whose prototype is not known here: its calls are NOT traced (the trace says how many such look-ups there were)" \
	"$(grep -v '^addr ' traced.err)" "said once on stderr"
# The analyzer says the trace is incomplete: 2 entry points (cuMemAlloc,
# cuMemFree at 14000), 2 look-ups; in the text, on stderr, in JSON, for
# every command.
INC="trace incomplete: 2 untraced entry points (cuGetProcAddress returned a function the preload could not identify, 2 look-ups): the calls made through them are not in the trace"
"$ANALYZE" summary "$(the_trace)" > s.txt 2> s.err || fail "summary"
assert_contains s.txt "  $INC"
assert_eq "gpumemtrace-analyze: $(the_trace): $INC" "$(cat s.err)" "summary's stderr"
"$ANALYZE" summary --json "$(the_trace)" > s.json 2>/dev/null || fail "summary --json"
assert_eq "True 2 2" "$(json_get s.json "' '.join(str(v) for v in (lambda c: (c['incomplete'],
	c['untraced_entry_points'], c['untraced_lookups']))(j['traces'][0]['completeness']))")" "JSON completeness"
for cmd in phases curves sites flamegraph oom report export; do
	"$ANALYZE" $cmd --no-symbols "$(the_trace)" > /dev/null 2> $cmd.err || fail "$cmd"
	assert_eq "gpumemtrace-analyze: $(the_trace): $INC" "$(grep -v ': symbolisation: ' $cmd.err)" "$cmd's stderr"
	"$ANALYZE" $cmd --json --no-symbols "$(the_trace)" > $cmd.json 2>/dev/null || fail "$cmd --json"
done
"$ANALYZE" diff --no-symbols "$(the_trace)" "$(the_trace)" > /dev/null 2> diff.err || fail "diff"
printf 'gpumemtrace-analyze: %s: %s\n' "$(the_trace)" "$INC" "$(the_trace)" "$INC" > diff.expected
diff diff.expected diff.err >&2 || fail "diff's stderr (< expected, > actual): both runs said"
"$ANALYZE" diff --json --no-symbols "$(the_trace)" "$(the_trace)" > diff.json 2>/dev/null || fail "diff --json"
# Every command's JSON carries the same "completeness", valid by the schema:
# incomplete, the 2 entry points and 2 look-ups, the note.
python3 - "$ROOT/schemas/report.schema.json" "$INC" <<'PY' || fail "completeness in every command's JSON"
import json, sys, jsonschema
schema, inc = json.load(open(sys.argv[1])), sys.argv[2]
want = None
for cmd in ("summary", "phases", "curves", "sites", "flamegraph", "oom", "report", "export", "diff"):
    j = json.load(open(cmd + ".json" if cmd != "summary" else "s.json"))
    jsonschema.validate(j, schema)
    got = [j["pairs"][0]["completeness"][r] for r in ("a", "b")] if cmd == "diff" else [j["traces"][0]["completeness"]]
    for c in got:
        v = (c["incomplete"], c["untraced_entry_points"], c["untraced_lookups"], c["nvtx_injection_only"],
             c["driver_stub"], c["cuda_activity_without_allocations"], c["notes"])
        if v != (True, 2, 2, False, False, False, [inc]):
            sys.exit("%s: completeness %r" % (cmd, v))
        if want is None:
            want = c
        elif c != want:
            sys.exit("%s: completeness %r differs from summary's %r" % (cmd, c, want))
PY

# ---- 3. exported symbols: identified at any version ------------------------------
GMT_FAKE_DRIVER_VERSION=14000 route_run route_unidentified
assert_eq "" "$(unidentified)" "exported: unidentified look-ups"
assert_eq "alloc device=0 addr=b size=2097152
alloc device=0 addr=a size=1048576
free device=-1 addr=a size=0
free device=-1 addr=b size=0" "$(route_events | awk '$1 == "alloc" || $1 == "free" { print $1, $2, $3, $4 }')" \
	"exported: traced allocations"
[ -s traced.err ] && grep -v '^addr ' traced.err >&2 && fail "exported: something said on stderr"
exit 0
