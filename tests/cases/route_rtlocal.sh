#!/bin/sh
# Runtime and NCCL hooks answer each caller with its own library, and
# presence probes answer as without the preload (preload/gmt_bind.c).
# route_rtlocal loads extensions RTLD_LOCAL as Python does, each linked
# against its own renamed copy of the runtime or NCCL (libcudart-<hash>.so.13,
# libnccl-<hash>.so.2, made with patchelf as auditwheel makes them):
#   1. copies of the doubles (RTLD_NOW, then RTLD_LAZY): the same output and
#      exit status with and without the preload, each copy's own error state,
#      every allocation named with the runtime or NCCL call, exact bytes;
#   2. the toolkit's REAL libcudart.so.13, renamed; the REAL libnccl.so.2,
#      copied here and renamed; a program linked directly against the REAL
#      runtime: real cudart stops on the driver double (801), identically;
#   3. dlsym(RTLD_DEFAULT) of every runtime and NCCL hook name and weak
#      references, in a program with no runtime in its global scope: absent.
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/routes/route_lib.sh"
cd "$TESTDIR"
R="$BUILD/tests/rtlocal"
CUDA_LIB="${CUDA_HOME:-/usr/local/cuda}/lib64"

# The probes: 0 of the 28 names, no weak reference bound.
probes() { # when
	printf '%s: 0 of 28 runtime and NCCL names present\n' "$1"
	printf '%s: weak cudaMalloc absent, cudaFree absent, ncclMemAlloc absent, ncclCommInitRank absent\n' "$1"
}
# What one copy of the runtime double prints (EXT_BYTES are the trace's).
ext_rt() { # tag
	cat <<EOT
$1 cudaRuntimeGetVersion 0 13000
$1 cudaMalloc 0 cudaSuccess
$1 cudaMalloc 2^62 2
$1 cudaGetLastError 2
$1 dlsym cudaMalloc found
$1 cudaMalloc by handle 0
$1 cudaFree 0
$1 cudaFree 0
$1: ext_run 0
EOT
}

# ---- 1. copies of the doubles --------------------------------------------
for mode in now lazy; do
	flag=""; [ $mode = lazy ] && flag=-lazy
	route_run route_rtlocal $flag a="$R/libext_a.so" b="$R/libext_b.so" n="$R/libext_nccl.so"
	assert_eq 0 "$ROUTE_RC" "$mode: exit status"
	{ probes before; ext_rt a; ext_rt b; cat <<EOT
n ncclGetVersion 0 22809
n ncclMemAlloc 0 set
n dlsym ncclMemAlloc found
n ncclMemAlloc by handle 0 set
n ncclMemFree 0
n ncclMemFree 0
n: ext_run 0
EOT
	probes after; } > expected.out
	diff expected.out traced.out >&2 || fail "$mode: output (< expected, > actual)"
	# Each call named, whichever copy it went to: a's and b's cudaMalloc
	# (bytes of their own, the dlsym'ed one twice as many), and NCCL's.
	O='owner=application'
	cat > expected.txt <<EOT
alloc device=0 addr=a_d size=3145728 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
alloc_fail device=0 addr=0x0 size=4611686018427387904 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=2
alloc device=0 addr=a_h size=6291456 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
free device=-1 addr=a_h size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
free device=-1 addr=a_d size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
alloc device=0 addr=b_d size=5242880 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
alloc_fail device=0 addr=0x0 size=4611686018427387904 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=2
alloc device=0 addr=b_h size=10485760 stream=0x0 kind=plain api=cudaMalloc $O flags=0 result=0
free device=-1 addr=b_h size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
free device=-1 addr=b_d size=0 stream=0x0 kind=unknown api=cudaFree $O flags=0 result=0
vmm_create device=0 size=4194304 kind=vmm_physical api=ncclMemAlloc owner=nccl
vmm_create device=0 size=6291456 kind=vmm_physical api=ncclMemAlloc owner=nccl
vmm_release device=0 size=0 kind=vmm_physical api=ncclMemFree owner=nccl
vmm_release device=0 size=0 kind=vmm_physical api=ncclMemFree owner=nccl
vmm_release device=0 size=0 kind=vmm_physical api=ncclMemFree owner=nccl
vmm_release device=0 size=0 kind=vmm_physical api=ncclMemFree owner=nccl
EOT
	route_events | awk '$1 ~ /^(alloc|alloc_fail|free)$/ { print; next }
		$1 ~ /^vmm_(create|release)$/ { print $1, $2, $4, $6, $7, $8 }' > events.txt
	diff expected.txt events.txt >&2 || fail "$mode: events (< expected, > trace)"
	# Exact bytes: b's two blocks at once (5 + 10 MiB) are the peak, all
	# plain and the application's; NCCL's most at once is 4 + 6 MiB.
	"$ANALYZE" summary --json "$(the_trace)" > s.json || fail "summary"
	D='j["traces"][0]["devices"][0]'
	assert_eq "15728640 15728640 15728640 10485760 0" "$(json_get s.json "' '.join(str(v) for v in (
		$D['peak']['bytes'], $D['peak']['by_kind']['plain'], $D['peak']['by_owner']['application'],
		$D['independent_maxima']['by_kind']['vmm_physical']['bytes'], $D['final']['bytes']))")" \
		"$mode: peak, plain, application, NCCL's maximum, final"
done

# ---- 2. the REAL runtime and NCCL -------------------------------------------
[ -f "$CUDA_LIB/libcudart.so.13" ] || fail "no $CUDA_LIB/libcudart.so.13 (the CUDA toolkit's runtime)"
[ -f "$CUDA_LIB/libnccl.so.2" ] || fail "no $CUDA_LIB/libnccl.so.2 (NCCL)"
command -v patchelf >/dev/null || fail "patchelf is not installed"
# The vendored NCCL: over 200 MiB, so copied here at test time, never kept.
mkdir -p vendor
cp -L "$CUDA_LIB/libnccl.so.2" vendor/libnccl-1a2b3c4d.so.2
patchelf --set-soname libnccl-1a2b3c4d.so.2 vendor/libnccl-1a2b3c4d.so.2
cp "$R/vendor/libext_nccl_real.so" vendor/
patchelf --replace-needed libnccl.so.2 libnccl-1a2b3c4d.so.2 vendor/libext_nccl_real.so
# Only the driver double on the library path: the real libraries come from
# the extensions' RUNPATH and the program's RPATH.
mkdir -p drv
ln -s "$FAKE/libcuda.so.1" drv/libcuda.so.1
same() { # name, command...: identical stdout and exit status; prints status
	n=$1; shift
	LD_LIBRARY_PATH="$TESTDIR/drv" "$@" > "$n.plain" 2> "$n.plain.err"
	r1=$?
	LD_LIBRARY_PATH="$TESTDIR/drv" GPUMEMTRACE_OUTPUT="$TESTDIR/traces-$n" LD_PRELOAD="$PRELOAD" \
		"$@" > "$n.traced" 2> "$n.traced.err"
	r2=$?
	diff "$n.plain" "$n.traced" >&2 || fail "$n: output differs with the preload (< without, > with)"
	assert_eq "$r1" "$r2" "$n: exit status without and with the preload"
	echo "$r1"
}
rc=$(same real "$BUILD/tests/route_rtlocal" real="$R/real/libext_real.so" nccl=vendor/libext_nccl_real.so) || exit 1
# Real cudart stops where it stops on the double (cudaErrorNotSupported,
# 801: the driver double has no private export tables); real NCCL's
# static runtime stops the same way (ncclUnhandledCudaError, 1).
{ probes before; cat <<EOT
real cudaRuntimeGetVersion 0 13000
real cudaMalloc 801 cudaErrorNotSupported
real cudaMalloc 2^62 801
real cudaGetLastError 801
real dlsym cudaMalloc found
real cudaMalloc by handle 801
real: ext_run 801
EOT
grep '^nccl ncclGetVersion 0 2' real.plain
cat <<EOT
nccl ncclMemAlloc 1 null
nccl dlsym ncclMemAlloc found
nccl ncclMemAlloc by handle 1 null
nccl: ext_run 1
EOT
probes after; } > real.expected
diff real.expected real.plain >&2 || fail "real libraries (< expected, > actual)"
assert_eq $(((801 + 1) % 128)) "$rc" "exit status with the real libraries"
# Linked directly against the real runtime (not loaded by us).
rc=$(same direct "$BUILD/tests/real/route_real_rt") || exit 1
assert_eq "cudaMalloc 801 cudaErrorNotSupported null" "$(grep '^cudaMalloc ' direct.plain)" "real cudart on the double"
assert_eq $((801 & 0x7f)) "$rc" "exit status of route_real_rt"
exit 0
