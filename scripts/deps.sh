#!/bin/sh
# Checks the build dependencies; installs the missing Debian packages when run
# as root with apt-get, or names them in one error otherwise.
need=""
have_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ]; }
have_lib() { [ -e "/usr/lib/x86_64-linux-gnu/$1" ]; }
have_hdr zstd.h && have_lib libzstd.a || need="$need libzstd-dev"
have_hdr msgpack.h && have_lib libmsgpackc.a || need="$need libmsgpack-dev"
have_hdr libunwind.h && have_lib libunwind.so.8 || need="$need libunwind-dev"
have_hdr elfutils/libdw.h || need="$need libdw-dev"
have_hdr gelf.h || need="$need libelf-dev"
have_lib libz.a || need="$need zlib1g-dev"
have_lib liblzma.a || need="$need liblzma-dev"
have_lib libbz2.a || need="$need libbz2-dev"
# The tests' renamed runtime and NCCL copies (tests/extra.mk), as auditwheel makes them.
command -v patchelf >/dev/null 2>&1 || need="$need patchelf"
[ -e "${CUDA_HOME:-/usr/local/cuda}/include/cuda.h" ] || {
	echo "gpumemtrace: the CUDA toolkit headers are missing: ${CUDA_HOME:-/usr/local/cuda}/include/cuda.h (set CUDA_HOME)" >&2
	exit 1
}
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "gpumemtrace: installing$need" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null ||
	{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null; } ||
	{ echo "gpumemtrace: apt-get install$need failed" >&2; exit 1; }
	exit 0
fi
echo "gpumemtrace: missing build dependencies; install them with: apt-get install$need" >&2
exit 1
