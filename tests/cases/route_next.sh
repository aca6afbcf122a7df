#!/bin/sh
# Route 8: RTLD_NEXT through our dlsym still means "after the caller":
# libroute_next_a's dlsym(RTLD_NEXT, "route_probe") finds libroute_next_b's
# (it would find A's own if our dlsym called glibc instead of jumping to it),
# and the program's RTLD_NEXT / RTLD_DEFAULT look-ups of driver names find
# the preload's wrappers (first after the program), so the calls are traced.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
route_run route_next
assert_eq 0 "$ROUTE_RC" "exit status"
assert_eq "probe A next B" "$(head -n 1 traced.out)" "RTLD_NEXT from libroute_next_a"
route_events > events.txt
A='api=driver owner=application flags=0 result=0'
cat > expected.txt <<EOT
ctx_create device=0 addr=$(awk '$1 == "EV" && $2 == "ctx_create" { sub("addr=", "", $6); print $6 }' dump.txt) size=0 stream=0x0 kind=unknown $A
alloc device=0 addr=a size=777 stream=0x0 kind=plain $A
free device=-1 addr=a size=0 stream=0x0 kind=unknown $A
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
exit 0
