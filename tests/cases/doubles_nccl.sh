#!/bin/sh
# The NCCL double alone: exact sizes of communicators, transport buffers and
# ncclMemAlloc, on one and two devices (tests/routes/double_nccl.c).
. "$ROOT/tests/lib.sh"
unset NCCL_BUFFSIZE
GMT_FAKE_DEVICES=2 GMT_FAKE_MEM_BYTES=1073741824 \
	run_fake "$BUILD/tests/double_nccl" || fail "double_nccl"
