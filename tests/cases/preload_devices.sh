#!/bin/sh
# Two devices: every allocation is attributed to the device it was made on:
# the current context's device, the pool's device for a pool allocation
# (whatever context is current), prop->location for cuMemCreate (from a
# thread without a context). Each device gets its record and a sample.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
export GMT_FAKE_DEVICES=2
route_run route_devices
assert_eq 0 "$ROUTE_RC" "exit status"
route_events | grep -v '^sync' > events.txt
A='api=driver owner=application flags=0 result=0'
cat > expected.txt <<EOT
ctx_create device=0 addr=ctx0 size=0 stream=0x0 kind=unknown $A
alloc device=0 addr=a0 size=1048576 stream=0x0 kind=plain $A
ctx_create device=1 addr=ctx1 size=0 stream=0x0 kind=unknown $A
alloc device=1 addr=a1 size=2097152 stream=0x0 kind=plain $A
alloc device=1 addr=m1 size=4096 stream=0x0 kind=managed $A
alloc device=0 addr=b0 size=3145728 stream=0x0 kind=plain $A
pool_create device=1 addr=0x0 size=0 stream=pool1 kind=unknown $A
alloc device=1 addr=p1 size=5000 stream=0x0 kind=stream_ordered $A
vmm_create device=1 addr=hdl size=2097152 stream=0x0 kind=vmm_physical $A
vmm_release device=1 addr=hdl size=0 stream=0x0 kind=vmm_physical $A
free device=-1 addr=p1 size=0 stream=0x0 kind=stream_ordered $A
pool_destroy device=1 addr=0x0 size=0 stream=pool1 kind=unknown $A
free device=-1 addr=a1 size=0 stream=0x0 kind=unknown $A
free device=-1 addr=m1 size=0 stream=0x0 kind=unknown $A
free device=-1 addr=a0 size=0 stream=0x0 kind=unknown $A
free device=-1 addr=b0 size=0 stream=0x0 kind=unknown $A
EOT
diff expected.txt events.txt >&2 || fail "events differ (< expected, > trace)"
grep '^DEVICE' dump.txt > devices.txt
cat > devices.expected <<EOT
DEVICE ordinal=0 name=Fake GPU 0 total=17179869184
DEVICE ordinal=1 name=Fake GPU 1 total=17179869184
EOT
diff devices.expected devices.txt >&2 || fail "device records"
# The cuMemCreate ran on a thread of its own.
[ "$(grep '^EV vmm_create' dump.txt | sed 's/.* thread=\([0-9]*\) .*/\1/')" != 0 ] || fail "cuMemCreate not on the worker thread"
# Each context creation sampled its own device (free = total: nothing held).
route_events -a | grep -A1 '^ctx_create' | grep '^meminfo' | cut -d' ' -f1-4 > s.txt
printf 'meminfo device=0 addr=0x400000000 size=17179869184\nmeminfo device=1 addr=0x400000000 size=17179869184\n' > s.expected
diff s.expected s.txt >&2 || fail "samples at context creation"
exit 0
