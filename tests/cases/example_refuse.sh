#!/bin/sh
# The example's `environment` and `measure` never present CPU figures as GPU
# ones: without PyTorch, or with PyTorch but no GPU, they exit 2 with a clear
# message and write nothing. `measure` refuses an output that exists (a file
# or a dangling link) with exit 2, before it even imports torch, and leaves
# it untouched.
# "No PyTorch" is made certain on any machine by putting the fake torch of
# tests/examples/fake_torch first on PYTHONPATH without GMT_FAKE_TORCH=1: it
# then refuses to import, as a missing torch would. Where no torch is
# installed at all (CI), the plain run is checked too.
. "$ROOT/tests/lib.sh"
cd "$TESTDIR"
EX="$ROOT/scripts/examples/gmt_example.py"
FAKE_TORCH="$ROOT/tests/examples/fake_torch"
unset GMT_FAKE_TORCH GMT_FAKE_TORCH_GPUS GMT_FAKE_TORCH_LOG

refused() { # what, expected message, then the command
	what=$1 msg=$2; shift 2
	"$@" > r.out 2> r.err; rc=$?
	assert_eq 2 "$rc" "exit status of $what"
	[ -s r.out ] && fail "$what printed to stdout: $(cat r.out)"
	assert_contains r.err "$msg"
}

NOTORCH="PyTorch is not installed (import torch: "
for how in fake plain; do
	if [ $how = plain ]; then
		python3 -c "import torch" 2>/dev/null && continue  # torch is installed here
		run() { "$@"; }
	else
		run() { PYTHONPATH="$FAKE_TORCH" "$@"; }
	fi
	refused "environment ($how)" "gmt_example environment: $NOTORCH" run python3 "$EX" environment
	refused "environment --json ($how)" "gmt_example environment: $NOTORCH" run python3 "$EX" environment --json --device cuda:1
	refused "measure ($how)" "gmt_example measure: $NOTORCH" run python3 "$EX" measure --output m.json
	[ -e m.json ] && fail "measure without torch ($how) created its output"
	assert_contains r.err "this subcommand reports GPU figures only and has none without it"
done

# PyTorch present, no GPU: the fake torch with zero GPUs.
NOGPU="no GPU is available to PyTorch 0.0.0+gmt.fake (torch.cuda.is_available() is False); refusing to report CPU figures as GPU ones"
export GMT_FAKE_TORCH=1
refused "environment, no GPU" "gmt_example environment: $NOGPU" env GMT_FAKE_TORCH_GPUS=0 PYTHONPATH="$FAKE_TORCH" python3 "$EX" environment
refused "measure, no GPU" "gmt_example measure: $NOGPU" env GMT_FAKE_TORCH_GPUS=0 PYTHONPATH="$FAKE_TORCH" python3 "$EX" measure --output m.json
[ -e m.json ] && fail "measure without a GPU created its output"
refused "measure, device 3 of 1" "gmt_example measure: --device cuda:3: PyTorch sees 1 GPU(s)" env PYTHONPATH="$FAKE_TORCH" python3 "$EX" measure --device cuda:3 --output m.json
[ -e m.json ] && fail "measure on a missing device created its output"
refused "environment --device cpu" "gmt_example environment: --device cpu: expected cuda or cuda:N" env PYTHONPATH="$FAKE_TORCH" python3 "$EX" environment --device cpu

# An existing output: refused before torch is imported (the fake logs its
# import), content untouched; the same for a dangling symbolic link.
printf 'precious\nresults\n' > taken.json
cp taken.json taken.orig
refused "measure over a file" "gmt_example measure: taken.json already exists; refusing to overwrite it" \
	env GMT_FAKE_TORCH_LOG="$TESTDIR/import.log" PYTHONPATH="$FAKE_TORCH" python3 "$EX" measure --output taken.json --width 8 --context 2 --batch 1
cmp taken.json taken.orig || fail "measure changed an existing output"
[ -e import.log ] && fail "measure imported torch before refusing: $(cat import.log)"
ln -s "$TESTDIR/nowhere.json" dangling.json
refused "measure over a dangling link" "already exists; refusing to overwrite it" \
	env PYTHONPATH="$FAKE_TORCH" python3 "$EX" measure --output dangling.json
[ -e nowhere.json ] && fail "measure wrote through a dangling link"
refused "measure into a missing folder" "no such directory" \
	env PYTHONPATH="$FAKE_TORCH" python3 "$EX" measure --output "$TESTDIR/no/such/m.json"

# Bad measure arguments are argparse's: exit 2.
for args in "--batch 0" "--width -1" "--repeats 0" "--warmup -1" "--dtype int8" "--marks none" "--batch two"; do
	python3 "$EX" measure --output m.json $args > /dev/null 2> r.err; rc=$?
	assert_eq 2 "$rc" "measure $args"
	assert_contains r.err "gmt_example.py measure: error: argument"
done
[ -e m.json ] && fail "bad arguments created the output"
exit 0
