#!/bin/sh
# gpu-check.sh - every real-GPU check of gpumemtrace in one run, ending with a
# table (check, expected, measured, PASS/FAIL/SKIP/INFO, reason): rows 0-8
# (the foundation: routes, allocators, NCCL, out of memory, overhead),
# rows 9-14 (issue 3: what jobs measured of themselves per phase against
# `gpumemtrace-analyze phases`), row 15 (what cudaDeviceReset takes), row
# 16 (CUDA graphs' memory nodes), row 17 (the memory viewer snapshot the
# memory-viz export writes, read by PyTorch's own torch.cuda._memory_viz),
# row 18 (library versions in the trace, judged on row 5's run) and rows
# 19-22 (issue 7: does cuGetProcAddress hand out exported symbols, no
# look-up left untraced, a renamed real runtime loaded RTLD_LOCAL, PyTorch's
# cudaMalloc named) and row 23 (issue 12: the preload's per-thread cache of
# the current context). docs/gpu-validation.md says how to run it on the device
# machine and what each row means.
#
#   sh scripts/gpu-check.sh [--doubles] [--budget SECONDS]
#
#   --doubles     checks 1, 15 and 16 on the CUDA/NCCL test doubles instead of a GPU: a
#                 self-test of this script and of tests/gpu/gpu_eval.py on a
#                 machine without one (the PyTorch rows are skipped)
#   --budget S    start no step after S seconds (default 400); each step has
#                 its own time-out as well, so nothing hangs
#
# Output: under $OUT when it is set (the device machine's return folder),
# else $BUILD/gpu-check/: table.md (printed last), results.json, rows.tsv,
# versions.txt, console.log and work.tar.gz (every log, program result,
# analyzer report and dump, and the traces when small). Always exits 0: the
# table says what failed.
#
# Environment: BUILD (default build), PYTHON (default python3), CUDA_HOME
# (default /usr/local/cuda). The programs it runs: $BUILD/gpu/demo_workload,
# $BUILD/gpu/gpu_reset, $BUILD/gpu/gpu_graph and $BUILD/gpu/ballast (make gpu-progs: built here and carried, or built
# on the spot when absent and a compiler is there), tests/gpu/gpu_torch.py
# (PyTorch), scripts/examples/gmt_example.py measure (PyTorch),
# tests/gpu/gpu_eval.py (judges, standard library only).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
case ${OUT:-} in ''|/*) ;; *) OUT=$(pwd)/$OUT ;; esac
cd "$ROOT" || exit 0
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PYTHON=${PYTHON:-python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
BUDGET=400
DOUBLES=0
while [ $# -gt 0 ]; do
	case $1 in
	--doubles) DOUBLES=1; shift ;;
	--budget) BUDGET=${2:?--budget needs seconds}; shift 2 ;;
	*) echo "usage: sh scripts/gpu-check.sh [--doubles] [--budget SECONDS]" >&2; exit 2 ;;
	esac
done

if [ -n "${OUT:-}" ]; then
	DEST=$OUT
	WORK=${TMPDIR:-/tmp}/gmt-gpu-check
else
	DEST=$BUILD/gpu-check
	WORK=$BUILD/gpu-check/work
fi
rm -rf "$WORK"
mkdir -p "$WORK" "$DEST" || exit 0
: > "$WORK/rows.tsv"
T0=$(date +%s)

# ---------------------------------------------------------------- helpers

have() { command -v "$1" >/dev/null 2>&1; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
say() { printf '== [%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }

# row ID CHECK EXPECTED MEASURED STATUS REASON: a row written by the shell
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$WORK/rows.tsv"; }

# step SECONDS CMD...: runs CMD under a time-out of SECONDS or what is left
# of the budget; 125 without running it when less than 15 s are left.
step() {
	_s=$1; shift
	_l=$(left)
	[ "$_l" -lt 15 ] && { echo "not started: time budget spent ($*)"; return 125; }
	[ "$_s" -gt "$_l" ] && _s=$_l
	timeout -k 5 "$_s" "$@"
}

# publish: what is known so far goes to DEST at once, so that a run killed at
# its limit still returns its rows
publish() {
	[ "$DEST" = "$WORK" ] && return 0
	cp "$WORK/rows.tsv" "$DEST/rows.tsv" 2>/dev/null
	cp "$WORK/versions.txt" "$DEST/versions.txt" 2>/dev/null
	return 0
}

# evaluate CHECK: one row from tests/gpu/gpu_eval.py (a FAIL row if it broke);
# not bound by the budget: judging what ran matters most at the end
evaluate() {
	case $1 in
	demo) _id=1 ;; alloc-native) _id=2 ;; alloc-expandable) _id=3 ;; alloc-async) _id=4 ;;
	nccl) _id=5 ;; oom) _id=6 ;; train) _id=7 ;; context) _id=8 ;; measure) _id=9 ;;
	phases-native) _id=10 ;; phases-expandable) _id=11 ;; phases-async) _id=12 ;;
	nccl-phases) _id=13 ;; oom-phase) _id=14 ;; reset) _id=15 ;; graph) _id=16 ;; memviz) _id=17 ;;
	versions) _id=18 ;; *) _id="-" ;;
	esac
	if [ "$HAVE_PY" = 0 ]; then
		row "$_id" "$1" "-" "-" SKIP "no python3 to evaluate with ($PYTHON)"
	elif ! timeout -k 5 200 "$PYTHON" tests/gpu/gpu_eval.py "$1" "$WORK" "$BUILD" \
		> "$WORK/eval-$1.log" 2>&1; then
		row "$_id" "$1" "-" "-" FAIL "evaluator failed: $(tail -n 1 "$WORK/eval-$1.log")"
	fi
	cat "$WORK/eval-$1.log"
	publish
}

# torch_run DIR NAME MODE traced|plain [VAR=VALUE...]: one gpu_torch.py run;
# DIR/NAME.json (its result), DIR/NAME.rc, DIR/NAME.log, DIR/NAME.wall (s)
torch_run() {
	_d=$1 _n=$2 _m=$3 _t=$4; shift 4
	mkdir -p "$_d/traces"
	_a=$(date +%s.%N)
	if [ "$_t" = traced ]; then
		step 150 env -u PYTORCH_CUDA_ALLOC_CONF "$@" "$BUILD/gpumemtrace" -q -o "$_d/traces" \
			"$PYTHON" tests/gpu/gpu_torch.py "$_m" "$_d/$_n.json" > "$_d/$_n.log" 2>&1
	else
		step 150 env -u PYTORCH_CUDA_ALLOC_CONF "$@" \
			"$PYTHON" tests/gpu/gpu_torch.py "$_m" "$_d/$_n.json" > "$_d/$_n.log" 2>&1
	fi
	echo $? > "$_d/$_n.rc"
	_b=$(date +%s.%N)
	echo "$_a $_b" | awk '{ printf "%.3f\n", $2 - $1 }' > "$_d/$_n.wall"
	say "$_m ($_t) -> exit $(cat "$_d/$_n.rc") in $(cat "$_d/$_n.wall") s"
}

# torch_skip DIR: marks DIR skipped when PyTorch cannot run here
torch_skip() {
	[ -z "$TORCH_SKIP" ] && return 1
	mkdir -p "$1" && echo "$TORCH_SKIP" > "$1/skip"
	return 0
}

# ---------------------------------------------------------------- set-up

setup() {
	say "gpu-check in $ROOT, build $BUILD, work $WORK, results $DEST, budget ${BUDGET}s"
	HAVE_PY=0
	have "$PYTHON" && HAVE_PY=1
	problems=""

	# The tracer: carried from the build machine, else built here.
	need="$BUILD/libgpumemtrace.so $BUILD/gpumemtrace $BUILD/gpumemtrace-analyze $BUILD/tests/tools/gmt-dump"
	missing=""
	for f in $need; do [ -e "$f" ] || missing="$missing $f"; done
	if [ -n "$missing" ]; then
		if have make && have "${CC:-cc}"; then
			say "building the tracer here (missing:$missing)"
			step 240 make BUILD="$BUILD" $need > "$WORK/build.log" 2>&1
			say "make -> exit $? (build.log)"
		else
			echo "no make/cc here to build:$missing" > "$WORK/build.log"
		fi
		missing=""
		for f in $need; do [ -e "$f" ] || missing="$missing $f"; done
		[ -n "$missing" ] && problems="$problems; missing:$missing ($(tail -n 1 "$WORK/build.log"))"
	fi

	# libcuda.so.1: the driver's, never the toolkit's stub.
	DRV_DIR=""
	if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
		DRV_DIR=ldconfig
	else
		for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
			[ -e "$d/libcuda.so.1" ] && { DRV_DIR=$d; break; }
		done
	fi
	[ -z "$DRV_DIR" ] && [ "$DOUBLES" = 0 ] && problems="$problems; no libcuda.so.1 (no NVIDIA driver here)"
	# libnccl.so.2: the torch wheel's (nvidia-nccl-cu13), else the toolkit's.
	NCCL_DIR=""
	if [ "$HAVE_PY" = 1 ]; then
		p=$(step 60 "$PYTHON" -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
		[ -n "$p" ] && [ -e "$p/lib/libnccl.so.2" ] && NCCL_DIR=$p/lib
	fi
	if [ -z "$NCCL_DIR" ]; then
		for d in "$CUDA_HOME/lib64" /usr/lib/x86_64-linux-gnu; do
			[ -e "$d/libnccl.so.2" ] && { NCCL_DIR=$d; break; }
		done
	fi
	if [ -z "$NCCL_DIR" ]; then
		f=$(step 30 find /opt /usr/local /usr/lib -name libnccl.so.2 -print 2>/dev/null | head -n 1)
		[ -n "$f" ] && NCCL_DIR=$(dirname "$f")
	fi
	case $DRV_DIR in /*) _drv=:$DRV_DIR ;; *) _drv="" ;; esac
	GPU_LD=$NCCL_DIR$_drv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

	# The GPU programs: carried, else built here against this machine's CUDA.
	if [ "$DOUBLES" = 0 ] && { [ ! -x "$BUILD/gpu/demo_workload" ] || [ ! -x "$BUILD/gpu/ballast" ] ||
		[ ! -x "$BUILD/gpu/gpu_reset" ] || [ ! -x "$BUILD/gpu/gpu_graph" ]; }; then
		if have make && have "${CC:-cc}" && [ -e "$CUDA_HOME/lib64/libcudart.so.13" ] && [ -n "$NCCL_DIR" ]; then
			inc=$(dirname "$NCCL_DIR")/include
			say "building gpu-progs here (NCCL from $NCCL_DIR)"
			step 120 make BUILD="$BUILD" gpu-progs GPU_EXTRA="-I$inc -L$NCCL_DIR" >> "$WORK/build.log" 2>&1
			say "make gpu-progs -> exit $?"
		fi
		[ -x "$BUILD/gpu/demo_workload" ] || problems="$problems; $BUILD/gpu/demo_workload missing (carry build/, or make gpu-progs: no compiler, CUDA toolkit or NCCL here)"
	fi
	[ -z "$NCCL_DIR" ] && [ "$DOUBLES" = 0 ] && problems="$problems; no libnccl.so.2 found"

	versions
	if [ "$DOUBLES" = 1 ]; then
		GPU_SEEN="(--doubles: not looked for)"
	elif have nvidia-smi && step 30 nvidia-smi -L > "$WORK/nvidia-smi-L.txt" 2>&1; then
		GPU_SEEN=$(head -n 1 "$WORK/nvidia-smi-L.txt")
	else
		GPU_SEEN=""
		problems="$problems; no GPU: nvidia-smi $(have nvidia-smi && head -n 1 "$WORK/nvidia-smi-L.txt" || echo 'not found')"
	fi
	measured="GPU: ${GPU_SEEN:-none}; NCCL: ${NCCL_DIR:-none}; libcuda: ${DRV_DIR:-none}; python: $(have "$PYTHON" && "$PYTHON" -V 2>&1)"
	if [ -z "$problems" ]; then
		row 0 setup "tracer, GPU programs, GPU, NCCL present" "$measured" PASS ""
	else
		row 0 setup "tracer, GPU programs, GPU, NCCL present" "$measured" FAIL "${problems#; }"
	fi

	# PyTorch: one probe decides whether rows 2-8 can run.
	TORCH_SKIP=""
	if [ "$DOUBLES" = 1 ]; then
		TORCH_SKIP="--doubles: PyTorch needs a real GPU"
	elif [ "$HAVE_PY" = 0 ]; then
		TORCH_SKIP="no python3 ($PYTHON)"
	else
		mkdir -p "$WORK/probe"
		torch_run "$WORK/probe" probe probe plain
		TORCH_SKIP=$("$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("torch probe gave no result (exit %s): %s" % (sys.argv[2], e)); sys.exit()
if r.get("error"): print("torch cannot run: " + r["error"][:200])
elif not r.get("cuda_available"): print("torch %s sees no CUDA device" % r.get("torch"))
' "$WORK/probe/probe.json" "$(cat "$WORK/probe/probe.rc")")
		cat "$WORK/probe/probe.json" >> "$WORK/versions.txt" 2>/dev/null
	fi
	[ -n "$TORCH_SKIP" ] && say "PyTorch rows skipped: $TORCH_SKIP"
	publish
}

versions() {
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "host: $(uname -srm)"
		echo "glibc: $(ldd --version 2>&1 | head -n 1)"
		echo "gpumemtrace: $("$BUILD/gpumemtrace" --version 2>&1)"
		echo "git: $(git rev-parse HEAD 2>/dev/null || echo 'no .git here')"
		echo "python: $("$PYTHON" -V 2>&1)"
		echo "nvidia-smi: $(step 30 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader 2>&1 | head -n 2)"
		echo "libcuda.so.1: ${DRV_DIR:-not found} $(ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ' | head -n 1)"
		echo "libnccl.so.2: ${NCCL_DIR:-not found}"
		echo "cuda toolkit: $(grep -m 1 '"version"' "$CUDA_HOME/version.json" 2>/dev/null | tr -d ' ,')"
		if [ -x "$BUILD/gpu/ballast" ]; then
			echo "ballast --info: $(LD_LIBRARY_PATH=$GPU_LD step 60 "$BUILD/gpu/ballast" --info 2>&1 | tr '\n' ' ')"
		fi
	} > "$WORK/versions.txt" 2>&1
}

# ---------------------------------------------------------------- checks

# run_pair NAME DIR LD SECONDS PROGRAM...: the program once without and once
# with the tracer (DIR/plain.{out,err,rc}, DIR/traced.*, traces in
# DIR/traces), each with LD_LIBRARY_PATH=LD and at most SECONDS.
run_pair() {
	_name=$1 _d=$2 _ld=$3 _secs=$4
	shift 4
	say "$_name without the tracer"
	LD_LIBRARY_PATH=$_ld step "$_secs" "$@" > "$_d/plain.out" 2> "$_d/plain.err"
	echo $? > "$_d/plain.rc"
	say "$_name with the tracer"
	LD_LIBRARY_PATH=$_ld step "$_secs" "$BUILD/gpumemtrace" -q -o "$_d/traces" "$@" \
		> "$_d/traced.out" 2> "$_d/traced.err"
	echo $? > "$_d/traced.rc"
}

# 1: the demo workload, with and without the tracer. On the GPU a ballast
# process holds all but 16 GiB, so that the demo's 64 GiB request fails as it
# does on the 16 GiB test doubles.
check_demo() {
	D=$WORK/demo
	mkdir -p "$D/traces"
	if [ "$DOUBLES" = 1 ]; then
		demo=$BUILD/tests/demo_workload ld=$BUILD/fakecuda
		echo "the test doubles (--doubles)" > "$D/on"
	else
		demo=$BUILD/gpu/demo_workload ld=$GPU_LD
	fi
	if [ ! -x "$demo" ]; then
		echo "$demo missing (make gpu-progs)" > "$D/skip"
		row 1 demo "-" "-" FAIL "$demo missing: build it with make gpu-progs and carry build/"
		publish
		return
	fi
	bpid=""
	if [ "$DOUBLES" = 0 ]; then
		LD_LIBRARY_PATH=$ld "$BUILD/gpu/ballast" 16384 300 > "$D/ballast.log" 2>&1 &
		bpid=$!
		i=0
		while [ $i -lt 60 ] && ! grep -q '^ready' "$D/ballast.log" && kill -0 "$bpid" 2>/dev/null; do
			sleep 1; i=$((i + 1))
		done
		say "ballast: $(head -n 1 "$D/ballast.log")"
	fi
	run_pair demo "$D" "$ld" 90 "$demo"
	if [ -n "$bpid" ]; then
		kill "$bpid" 2>/dev/null
		wait "$bpid" 2>/dev/null
	fi
	say "demo exit: $(cat "$D/plain.rc") without, $(cat "$D/traced.rc") with the tracer"
	evaluate demo
}

# A row whose program is built for the GPU (make gpu-progs) and for the
# doubles (a route program): run once without and once with the tracer.
# check_program ID NAME PROGRAM
check_program() {
	D=$WORK/$2
	mkdir -p "$D/traces"
	if [ "$DOUBLES" = 1 ]; then
		prog=$BUILD/tests/$3 ld=$BUILD/fakecuda
		echo "the test doubles (--doubles)" > "$D/on"
	else
		prog=$BUILD/gpu/$3 ld=$GPU_LD
	fi
	if [ ! -x "$prog" ]; then
		echo "$prog missing (make gpu-progs)" > "$D/skip"
		row "$1" "$2" "-" "-" FAIL "$prog missing: build it with make gpu-progs and carry build/"
		publish
		return
	fi
	run_pair "$2" "$D" "$ld" 60 "$prog"
	evaluate "$2"
}

# 15: what cudaDeviceReset takes with it (tests/routes/gpu_reset.c): the
# program measures the device memory the driver still holds, the analyzer
# must agree
check_reset() { check_program 15 reset gpu_reset; }

# 16: CUDA graphs' memory nodes (tests/routes/gpu_graph.c): captured
# allocations kept apart, and the graph memory pool the program reads itself
# against the sample the tracer takes right after
check_graph() { check_program 16 graph gpu_graph; }

# 19: does the driver's cuGetProcAddress hand out its exported symbols'
# addresses? (tests/gpu/procaddr_check.c, without the tracer: every driver
# hook's look-up against dlsym of its exact name.) Identification by
# address relies on it; what differs is traced through its prototype
# (docs/interception.md), so "differ" is INFO, not a failure.
check_procaddr() {
	D=$WORK/procaddr
	mkdir -p "$D"
	prog=$BUILD/tests/procaddr_check
	if [ "$DOUBLES" = 1 ]; then ld=$BUILD/fakecuda; else ld=$GPU_LD; fi
	if [ ! -x "$prog" ]; then
		row 19 procaddr "0 differ" "-" FAIL "$prog missing: make (tests/extra.mk) and carry build/"
		publish
		return
	fi
	say "cuGetProcAddress against the exported symbols"
	LD_LIBRARY_PATH=$ld step 30 "$prog" > "$D/out.txt" 2> "$D/err.txt"
	echo $? > "$D/rc"
	line=$(grep '^procaddr: ' "$D/out.txt" | tail -n 1)
	diff=$(echo "$line" | sed -n 's/.* \([0-9]*\) differ.*/\1/p')
	if [ -z "$diff" ]; then
		row 19 procaddr "0 differ" "${line:-no output}" FAIL "procaddr_check exit $(cat "$D/rc") (procaddr/err.txt)"
	elif [ "$diff" = 0 ]; then
		row 19 procaddr "0 differ" "${line#procaddr: }" PASS ""
	else
		row 19 procaddr "0 differ" "${line#procaddr: }" INFO \
			"the driver hands out internal entry points for: $(grep '^differs ' "$D/out.txt" | cut -d' ' -f2 | head -n 8 | tr '\n' ' ')(traced through their prototype; row 20 says whether any went untraced)"
	fi
	publish
}

# 20 (at the end): every trace of this run, PROC_UNIDENTIFIED look-ups with
# aux 0 (a hooked entry point handed out untraced): expected none.
check_untraced() {
	n=0 t=0 traced=0
	for f in $(find "$WORK" -name '*.gmt' 2>/dev/null); do
		t=$((t + 1))
		# (each dump bounded: this runs after the budget, like the evaluations)
		timeout -k 5 20 "$BUILD/tests/tools/gmt-dump" "$f" > "$WORK/untraced.dump" 2>/dev/null
		n=$((n + $(awk '$2 == "proc_unidentified" && $NF == "aux=0"' "$WORK/untraced.dump" | wc -l)))
		traced=$((traced + $(awk '$2 == "proc_unidentified" && $NF != "aux=0"' "$WORK/untraced.dump" | wc -l)))
	done
	rm -f "$WORK/untraced.dump"
	if [ "$t" = 0 ]; then
		row 20 untraced "0 untraced look-ups" "no trace" SKIP "no trace was written"
	elif [ "$n" = 0 ]; then
		row 20 untraced "0 untraced look-ups" "0 in $t traces ($traced traced through their prototype)" PASS ""
	else
		row 20 untraced "0 untraced look-ups" "$n in $t traces" FAIL \
			"look-ups at a version newer than the preload's headers: rebuild with this CUDA's headers"
	fi
	publish
}

# 21: an extension loaded RTLD_LOCAL with its own renamed copy of the REAL
# runtime (libcudart-<hash>.so.13, as auditwheel makes it; built by
# tests/extra.mk), on the real driver: the same output with and without the
# tracer, and its cudaMalloc calls (3 MiB, 6 MiB through dlsym) named.
check_rtlocal() {
	D=$WORK/rtlocal
	mkdir -p "$D/traces"
	if [ "$DOUBLES" = 1 ]; then
		ext=$BUILD/tests/rtlocal/libext_a.so ld=$BUILD/fakecuda
	else
		ext=$BUILD/tests/rtlocal/real/libext_real.so ld=$GPU_LD
	fi
	prog=$BUILD/tests/route_rtlocal
	if [ ! -x "$prog" ] || [ ! -e "$ext" ]; then
		row 21 rtlocal "same output, calls named" "-" FAIL "$prog or $ext missing: make and carry build/"
		publish
		return
	fi
	run_pair rtlocal "$D" "$ld" 60 "$prog" a="$ext"
	named=0
	for f in "$D"/traces/*.gmt; do
		[ -f "$f" ] || continue
		named=$("$BUILD/tests/tools/gmt-dump" "$f" | awk '$2 == "alloc" && / api=cudaMalloc / &&
			(/ size=3145728 / || / size=6291456 /)' | wc -l)
	done
	if ! cmp -s "$D/plain.out" "$D/traced.out" || [ "$(cat "$D/plain.rc")" != "$(cat "$D/traced.rc")" ]; then
		row 21 rtlocal "same output, calls named" "output or exit status differs" FAIL "rtlocal/plain.out vs traced.out"
	elif [ "$named" != 2 ]; then
		row 21 rtlocal "same output, calls named" "same output; $named of 2 cudaMalloc named" FAIL \
			"$(head -n 3 "$D/plain.out" | tr '\n' ' ')"
	else
		row 21 rtlocal "same output, calls named" "same output (exit $(cat "$D/plain.rc")); 2 of 2 cudaMalloc named" PASS ""
	fi
	publish
}

# 23: the preload's per-thread cache of the current context on the real
# driver (tests/routes/route_ctx_cache.c, linked against the real runtime;
# docs/interception.md): the context changes between allocations by every
# route, in three runs (routes; bypass: libcuda's own cuCtxSetCurrent
# through glibc's dlsym; export: cuGetExportTable first). Every allocation
# of the trace (STEP KiB) must name the device the program itself saw, and
# the thread's last CTX_CURRENT before it the program's context's handle.
check_ctx_cache() {
	D=$WORK/ctxcache
	if [ "$DOUBLES" = 1 ]; then
		prog=$BUILD/tests/route_ctx_cache ld=$BUILD/fakecuda
	else
		prog=$BUILD/gpu/route_ctx_cache ld=$GPU_LD
	fi
	if [ ! -x "$prog" ]; then
		row 23 ctx-cache "allocations name the program's own device and context" "-" FAIL \
			"$prog missing: make gpu-progs"
		publish
		return
	fi
	bad="" measured=""
	for m in routes bypass export; do
		mkdir -p "$D/$m/traces"
		GPUMEMTRACE_LOG=3 run_pair "ctx-cache $m" "$D/$m" "$ld" 60 "$prog" "$m"
		if ! cmp -s "$D/$m/plain.out" "$D/$m/traced.out" || [ "$(cat "$D/$m/plain.rc")" != 0 ] ||
		   [ "$(cat "$D/$m/traced.rc")" != 0 ]; then
			bad="$bad $m: output or exit status differs (or not 0);"
			continue
		fi
		t=$(ls "$D/$m"/traces/*.gmt 2>/dev/null | head -n 1)
		[ -n "$t" ] || { bad="$bad $m: no trace;"; continue; }
		"$BUILD/tests/tools/gmt-dump" "$t" > "$D/$m/dump.txt" 2>&1
		# steps checked, mismatches (program's view: stdout; handles: stderr)
		r=$(awk 'FNR == 1 { f++ }
			f == 1 && $1 == "addr" { h[$2] = $3; next }
			f == 2 && $2 == "KiB" { split($3, d, "="); split($4, c, "="); dev[$1 * 1024] = d[2]; ctx[$1 * 1024] = c[2]; n++; next }
			f == 3 && $1 == "EV" { for (i = 3; i <= NF; i++) { split($i, kv, "="); e[kv[1]] = kv[2] }
				if ($2 == "ctx_current") last[e["thread"]] = e["addr"]
				else if ($2 == "alloc" && (e["size"] in dev)) { seen++
					if (e["device"] != dev[e["size"]] || last[e["thread"]] != h[ctx[e["size"]]]) bad++ } }
			END { printf "%d %d %d", n, seen, bad }' "$D/$m/traced.err" "$D/$m/traced.out" "$D/$m/dump.txt")
		set -- $r
		off=$(sed -n 's/^gpumemtrace: \([A-Za-z_]*\): the current context is asked of the driver.*/\1/p' "$D/$m/traced.err" | head -n 1)
		measured="$measured $m: $2 of $1 steps, $3 wrong${off:+, cache off at $off};"
		[ "$1" -gt 0 ] && [ "$1" = "$2" ] && [ "$3" = 0 ] || bad="$bad $m: $2 of $1 steps in the trace, $3 wrong;"
	done
	if [ -n "$bad" ]; then
		row 23 ctx-cache "allocations name the program's own device and context" "${measured# }" FAIL "${bad# }"
	else
		row 23 ctx-cache "allocations name the program's own device and context" "${measured# }" PASS ""
	fi
	publish
}

# 22 (after alloc-native): PyTorch's caching allocator calls cudaMalloc from
# libc10_cuda through its PLT; bound to our wrapper (preload/gmt_bind.c), the
# driver allocations under it carry api=cudaMalloc.
check_torch_named() {
	D=$WORK/alloc-native
	if [ -f "$D/skip" ] || [ ! -d "$D/traces" ]; then
		row 22 torch-named "api=cudaMalloc allocations" "-" SKIP "no PyTorch run (alloc-native)"
		publish
		return
	fi
	n=0 all=0
	for f in "$D"/traces/*.gmt; do
		[ -f "$f" ] || continue
		"$BUILD/tests/tools/gmt-dump" "$f" > "$D/named.dump" 2>/dev/null
		n=$((n + $(awk '$2 == "alloc" && / api=cudaMalloc /' "$D/named.dump" | wc -l)))
		all=$((all + $(awk '$2 == "alloc"' "$D/named.dump" | wc -l)))
	done
	if [ "$n" -gt 0 ]; then
		row 22 torch-named "api=cudaMalloc allocations" "$n of $all allocations" PASS ""
	else
		row 22 torch-named "api=cudaMalloc allocations" "0 of $all allocations" FAIL \
			"libc10_cuda's cudaMalloc calls were not bound (GPUMEMTRACE_LOG=3 shows the bindings)"
	fi
	publish
}

check_alloc() {	# NAME CONF
	D=$WORK/$1
	torch_skip "$D" || {
		say "PyTorch alloc ${2:-native}"
		if [ -n "$2" ]; then
			torch_run "$D" result alloc traced PYTORCH_CUDA_ALLOC_CONF="$2"
		else
			torch_run "$D" result alloc traced
		fi
	}
	evaluate "$1"
}

# 5 and C (13): one rank of NCCL; its phases nccl_init, all_reduce,
# nccl_destroy are compared with `phases` too
check_nccl() {
	D=$WORK/nccl
	torch_skip "$D" || torch_run "$D" result nccl traced
	evaluate nccl
	evaluate nccl-phases
	evaluate versions
}

# 6 and D (14): out of memory outside any phase, then in a forward pass
# inside the phase oom_forward
check_oom() {
	D=$WORK/oom
	torch_skip "$D" || {
		torch_run "$D" result-plain oom plain
		torch_run "$D" result oom traced
	}
	evaluate oom
	evaluate oom-phase
}

# A (9): the example's measure under the tracer, small sizes; it refuses an
# existing output, so the directory is fresh (rm -rf $WORK at the start)
check_measure() {
	D=$WORK/measure
	torch_skip "$D" || {
		mkdir -p "$D/traces"
		say "example measure (traced)"
		_a=$(date +%s.%N)
		step 150 env -u PYTORCH_CUDA_ALLOC_CONF "$BUILD/gpumemtrace" -q -o "$D/traces" \
			"$PYTHON" scripts/examples/gmt_example.py measure --device cuda:0 \
			--batch 4 --context 256 --width 512 --layers 2 --dtype float16 \
			--warmup 2 --repeats 3 --output "$D/result.json" > "$D/result.log" 2>&1
		echo $? > "$D/result.rc"
		echo "$_a $(date +%s.%N)" | awk '{ printf "%.3f\n", $2 - $1 }' > "$D/result.wall"
		say "measure -> exit $(cat "$D/result.rc") in $(cat "$D/result.wall") s"
	}
	evaluate measure
}

# B (10-12): 5 training steps, forward/backward/optimizer_step as phases,
# under one allocator configuration (NAME CONF)
check_phases() {
	D=$WORK/$1
	torch_skip "$D" || {
		say "PyTorch training phases ${2:-native}"
		if [ -n "$2" ]; then
			torch_run "$D" result phases traced PYTORCH_CUDA_ALLOC_CONF="$2"
		else
			torch_run "$D" result phases traced
		fi
	}
	evaluate "$1"
}

check_train() {
	D=$WORK/train
	torch_skip "$D" || for i in 1 2; do
		torch_run "$D" "plain-$i" train plain
		cat "$D/plain-$i.wall" >> "$D/plain.wall"
		torch_run "$D" "traced-$i" train traced
		cat "$D/traced-$i.wall" >> "$D/traced.wall"
	done
	evaluate train
}

# 17: the memory viewer snapshot of export/gmt_memviz.c (its fixture, a run
# known by construction: tests/tools/gmt-memviz-fixture) as pickles of
# protocols 4 and 2 and as JSON, and the export of a real PyTorch run (the
# memviz mode traced: D/real, with torch's own snapshot of the same process
# in D/real/torch.pickle) as pickle 4 and JSON, all through PyTorch's own
# torch.cuda._memory_viz
check_memviz() {
	D=$WORK/memviz
	mkdir -p "$D"
	fx=$BUILD/tests/tools/gmt-memviz-fixture
	if [ ! -x "$fx" ]; then
		echo "$fx missing: carry build/" > "$D/skip"
	else
		"$fx" 4 "$D/ours-4.pickle" && "$fx" 2 "$D/ours-2.pickle" && "$fx" json "$D/ours.json" ||
			echo "$fx failed" > "$D/fixture.log"
		torch_skip "$D" || {
			torch_run "$D/real" result memviz traced
			: > "$D/export.rc"
			set -- "$D"/real/traces/*.gmt
			if [ -f "$1" ]; then
				step 120 "$BUILD/gpumemtrace-analyze" export --format memory-viz \
					-o "$D/real-4.pickle" "$1" > "$D/export.log" 2>&1
				echo $? >> "$D/export.rc"
				step 120 "$BUILD/gpumemtrace-analyze" export --format memory-viz --encoding json \
					-o "$D/real.json" "$1" >> "$D/export.log" 2>&1
				echo $? >> "$D/export.rc"
			else
				echo "the traced run left no trace: $*" > "$D/export.log"
			fi
			say "memory-viz export of the real run -> $(tr '\n' ' ' < "$D/export.rc")"
			torch_run "$D" result memviz plain \
				GMT_MEMVIZ_OURS="$D/ours-4.pickle $D/ours-2.pickle $D/ours.json $D/real-4.pickle $D/real.json"
		}
	fi
	evaluate memviz
}

# ---------------------------------------------------------------- the end

finish() {
	if [ "$HAVE_PY" = 1 ]; then
		"$PYTHON" tests/gpu/gpu_eval.py table "$WORK" > /dev/null 2>&1
	fi
	if [ ! -s "$WORK/table.md" ]; then
		{
			echo "| # | check | expected | measured | status | reason |"
			echo "|---|---|---|---|---|---|"
			sed 's/|/\\|/g; s/	/ | /g; s/^/| /; s/$/ |/' "$WORK/rows.tsv"
		} > "$WORK/table.md"
	fi
	# Traces over 4 MiB stay behind (their sizes are listed); the archive
	# must stay well under the 16 MiB a returned file may have.
	(cd "$(dirname "$WORK")" && find "$(basename "$WORK")" -name '*.gmt' -size +4M \
		-exec ls -l {} + > "$WORK/big-traces.txt" 2>/dev/null)
	awk '{ print $NF }' "$WORK/big-traces.txt" > "$WORK/big-traces.list"
	if [ "$DEST" != "$WORK" ]; then
		cp "$WORK/table.md" "$WORK/rows.tsv" "$WORK/versions.txt" "$DEST/" 2>/dev/null
		cp "$WORK/results.json" "$DEST/" 2>/dev/null
		(cd "$(dirname "$WORK")" && tar czf "$DEST/work.tar.gz" \
			--exclude-from="$WORK/big-traces.list" "$(basename "$WORK")" 2>/dev/null)
		if [ "$(wc -c < "$DEST/work.tar.gz" 2>/dev/null || echo 0)" -gt 12000000 ]; then
			(cd "$(dirname "$WORK")" && tar czf "$DEST/work.tar.gz" --exclude='*.gmt' \
				--exclude='dump.txt' "$(basename "$WORK")" 2>/dev/null)
		fi
	fi
	echo
	echo "== gpumemtrace GPU checks ($(($(date +%s) - T0)) s; details in $DEST)"
	cat "$WORK/table.md"
}

main() {
	setup
	check_demo
	check_reset
	check_graph
	check_procaddr
	check_rtlocal
	check_ctx_cache
	check_alloc alloc-native ""
	check_torch_named
	evaluate context
	check_alloc alloc-expandable "expandable_segments:True"
	check_alloc alloc-async "backend:cudaMallocAsync"
	check_oom
	check_nccl
	check_measure
	check_phases phases-native ""
	check_phases phases-expandable "expandable_segments:True"
	check_phases phases-async "backend:cudaMallocAsync"
	check_memviz
	check_train
	check_untraced
}

main 2>&1 | tee "$WORK/console.log"
# HAVE_PY is set inside the pipeline's subshell: set it again here
HAVE_PY=0
have "$PYTHON" && HAVE_PY=1
finish 2>&1 | tee -a "$WORK/console.log"
[ "$DEST" != "$WORK" ] && cp "$WORK/console.log" "$DEST/" 2>/dev/null
exit 0
