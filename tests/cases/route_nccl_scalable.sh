# ncclCommInitRankScalable and ncclCommShrink: NCCL scopes with their call
# numbers (9 and 10 in aux), communicator memory owned by nccl, all of it
# given back by the two ncclCommDestroy calls (call 5).
. "$ROOT/tests/lib.sh"
run_fake "$BUILD/tests/route_nccl_scalable" > plain.txt || fail "without the preload: $?"
run_traced "$BUILD/tests/route_nccl_scalable" > traced.txt || fail "with the preload: $?"
cmp plain.txt traced.txt || fail "output differs under the preload"
"$BUILD/tests/tools/gmt-dump" "$(the_trace)" > dump.txt || fail "dump"
assert_eq "9 10 5 5" "$(awk '$2 == "nccl_begin" { sub("aux=", "", $NF); printf "%s%s", sep, $NF; sep = " " }' dump.txt)" "NCCL calls"
assert_eq 2 "$(grep -c '^EV vmm_create .* size=2097152 .* owner=nccl ' dump.txt)" "communicator blocks owned by nccl"
assert_eq 0 "$(grep -c '^EV vmm_create .* owner=application ' dump.txt)" "blocks owned by the application"
"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary"
assert_eq "4194304 0" "$(json_get s.json 'j["traces"][0]["devices"][0]["peak"]["by_owner"]["nccl"], j["traces"][0]["devices"][0]["final"]["bytes"]' | tr -d '(),')" "nccl peak and final bytes"
