#!/bin/sh
# The NVTX memory extension (tests/routes/fw_nvtx_mem.c, real NVTX3 headers,
# NVTX_INJECTION64_PATH = the preload): a sub-allocator's heap is an
# FW_SEGMENT_ALLOC, its regions FW_ALLOC, their unregistration (by pointer
# or handle), a resize, a heap reset (in address order) and the heap's
# unregistration FW_FREE_REQUESTED + FW_FREE_COMPLETED; a layout heap and
# its regions count nothing; the process-wide heap and the default domain
# work; every event carries the NVTX_MEM flag and the domain's name as its
# framework ("nvtx-mem" for the default domain, and for every domain when
# the preload has no NVTX core to name domains). Without the preload the
# program runs the same.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
prog="$BUILD/tests/fw_nvtx_mem"
run_fake "$prog" > plain.out 2> plain.err || { cat plain.out plain.err >&2; fail "without the preload"; }
assert_contains plain.err "handles untouched"
NVTX_INJECTION64_PATH="$PRELOAD" run_traced "$prog" > traced.out 2> traced.err ||
	{ cat traced.out traced.err >&2; fail "with the preload"; }
diff plain.out traced.out >&2 || fail "stdout differs with the preload"
assert_contains traced.err "handles are the pointers"
p=$(sed -n 's/^addr P //p' traced.err)
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || { cat dump.txt >&2; fail "gmt-dump"; }
assert_eq "STATUS ok clean" "$(tail -n 1 dump.txt)" "trace status"
# The NVTX core (gmt_nvtx.c) names domains when it provides
# gmt_nvtx_domain_string; the preload is not stripped, so nm sees it.
if nm "$PRELOAD" | grep -q ' [Tt] gmt_nvtx_domain_string$'; then rmm=rmm; else rmm=nvtx-mem; fi
awk -v p="$p" '
function hex(s,   i, v, c) { v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
	return v }
/^STRING/ { split($2, a, "="); sub(/^STRING id=[0-9]* text=/, ""); name[a[2]] = $0; next }
/^EV fw_/ { split($6, a, "="); split($NF, x, "="); aux = x[2]
	fw = aux % 4294967296; flags = (aux - fw) / 4294967296
	printf "%s %s P+%d %s %s fw=%s flags=%d\n", $2, $5, hex(a[2]) - hex(p), $7, $8, name[fw], flags }
' dump.txt > events.txt
cat > expected.txt <<EOT
fw_segment_alloc device=0 P+0 size=1048576 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+0 size=256 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+4096 size=1024 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+4096 size=1024 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+4096 size=1024 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+4096 size=2048 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+0 size=256 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+0 size=256 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+4096 size=2048 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+4096 size=2048 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+8192 size=512 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+12288 size=64 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+8192 size=512 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+8192 size=512 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+12288 size=64 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+12288 size=64 stream=0x0 fw=$rmm flags=4
fw_alloc device=0 P+16384 size=128 stream=0x0 fw=$rmm flags=4
fw_free_requested device=0 P+16384 size=128 stream=0x0 fw=$rmm flags=4
fw_free_completed device=0 P+16384 size=128 stream=0x0 fw=$rmm flags=4
fw_segment_free device=0 P+0 size=1048576 stream=0x0 fw=$rmm flags=4
fw_segment_alloc device=0 P+65536 size=4096 stream=0x0 fw=nvtx-mem flags=4
fw_alloc device=0 P+65536 size=32 stream=0x0 fw=nvtx-mem flags=4
fw_alloc device=0 P+131072 size=8 stream=0x0 fw=nvtx-mem flags=4
fw_free_requested device=0 P+131072 size=8 stream=0x0 fw=nvtx-mem flags=4
fw_free_completed device=0 P+131072 size=8 stream=0x0 fw=nvtx-mem flags=4
fw_free_requested device=0 P+65536 size=32 stream=0x0 fw=nvtx-mem flags=4
fw_free_completed device=0 P+65536 size=32 stream=0x0 fw=nvtx-mem flags=4
fw_segment_free device=0 P+65536 size=4096 stream=0x0 fw=nvtx-mem flags=4
EOT
diff expected.txt events.txt >&2 || fail "FW events (< expected, > actual)"
# Main stream only, no stacks.
grep '^EV fw_' dump.txt | grep -v ' stack=0 ' && fail "a FW event with a stack"
grep '^EV fw_' dump.txt | grep ' side$' && fail "a FW event in the side stream"
exit 0
