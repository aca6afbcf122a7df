#!/bin/sh
# What a comparison of two runs needs from each trace: the runtime's and
# NCCL's versions and files (META, once per library, repeated in a fork
# child's file), each module's soname and resolved file, the driver's version (DEVICE), the allow-listed variables
# (CUDA_MODULE_LOADING, RANK, LOCAL_RANK) and the rank in the file name; the
# dimensions a run tests, from the launcher's --meta (the header's
# GPUMEMTRACE_META) and from gpumemtrace.meta() in Python.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
DUMP="$BUILD/tests/tools/gmt-dump"
GMT_FAKE_RUNTIME_VERSION=12080 GMT_FAKE_NCCL_VERSION=22703 GMT_FAKE_DRIVER_VERSION=13020 \
	CUDA_MODULE_LOADING=EAGER RANK=2 LOCAL_RANK=1 run_traced "$BUILD/tests/demo_workload" > out.txt ||
	fail "demo_workload"
set -- traces/gpumemtrace.demo_workload.rank2.*.gmt
[ -f "$1" ] || fail "no trace named by its rank: $(ls traces)"
T=$1
"$DUMP" "$T" > dump.txt || fail "gmt-dump"
assert_eq "META cuda_runtime_version=12080 cuda_runtime_file=$FAKE/libcudart.so.13
META nccl_version=22703 nccl_file=$FAKE/libnccl.so.2" "$(grep '^META' dump.txt)" "versions"
"$ANALYZE" summary --json "$T" > s.json || fail "summary --json"
assert_eq "13020 EAGER 2 1" "$(json_get s.json '" ".join(str(x) for x in (j["traces"][0]["devices"][0]["record"]["driver_version"], j["traces"][0]["process"]["env"]["CUDA_MODULE_LOADING"], j["traces"][0]["process"]["env"]["RANK"], j["traces"][0]["process"]["env"]["LOCAL_RANK"]))')" \
	"driver version and variables"

# The module map (1.4): soname and the file a path resolves to; a library
# loaded through a symbolic link names the versioned file.
assert_eq "MODULE soname=libcudart.so.13 file=$(realpath "$FAKE/libcudart.so.13")" \
	"$(grep '^MODULE .*path=[^ ]*/libcudart.so.13 ' dump.txt | sed 's/ id=.* path=[^ ]*//')" "libcudart's module"
rm -rf traces lib
mkdir lib && cp "$BUILD/tests/diff_v1/libdiffws.so" lib/libdiffws.so.1.0.0 && ln -s libdiffws.so.1.0.0 lib/libdiffws.so ||
	fail "symbolic link"
run_traced "$BUILD/tests/diff_workload" "$TESTDIR/lib/libdiffws.so" > diff.out || fail "diff_workload"
"$DUMP" "$(the_trace)" > diffdump.txt || fail "gmt-dump (diff_workload)"
assert_eq "MODULE path=$TESTDIR/lib/libdiffws.so soname= file=$(realpath lib/libdiffws.so.1.0.0)" \
	"$(grep '^MODULE .*/libdiffws' diffdump.txt | sed 's/ id=.* path=/ path=/')" "a library behind a symbolic link"

# A fork child: its own file starts with the parent's META records, and
# its first runtime call records nothing again.
rm -rf traces
run_traced "$BUILD/tests/demo_fork" > fork.txt || fail "demo_fork"
for t in traces/*.gmt; do
	"$DUMP" "$t" > "$(basename "$t").dump" || fail "dump $t"
	assert_eq "META cuda_runtime_version=13000 cuda_runtime_file=$FAKE/libcudart.so.13" \
		"$(grep '^META' "$(basename "$t").dump")" "versions in $t"
done
assert_eq 2 "$(ls traces | wc -l)" "parent and child traces"

# The launcher's --meta, and gpumemtrace.meta() from Python.
rm -rf traces
LD_LIBRARY_PATH="$FAKE" "$BUILD/gpumemtrace" -q -o traces --meta batch=8 --meta context=4096 \
	"$BUILD/tests/demo_workload" > /dev/null || fail "demo under the launcher"
"$ANALYZE" summary --json "$(the_trace)" > m.json || fail "summary --json (--meta)"
assert_eq "batch=8
context=4096" "$(json_get m.json 'j["traces"][0]["process"]["env"]["GPUMEMTRACE_META"]')" "--meta"
rm -rf traces
PYTHONPATH="$ROOT/python" run_traced python3 -c '
import gpumemtrace
gpumemtrace.meta("dtype", "bfloat16")
gpumemtrace.meta(batch=8, context=4096)
' || fail "python meta"
"$DUMP" "$(the_trace)" > py.txt || fail "gmt-dump (python)"
assert_eq "META dtype=bfloat16
META batch=8
META context=4096" "$(grep '^META' py.txt)" "gpumemtrace.meta()"
exit 0
