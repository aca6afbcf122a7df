#!/bin/sh
# The analyzer's outputs frozen byte for byte: every command of
# tests/frozen/commands.txt on the golden traces (one per format version),
# the committed traces of the route programs and generators
# (tests/frozen/traces/) and the fuzz corpus, against tests/frozen/expected/
# (text, JSON, CSV, folded stacks, messages and exit codes); every JSON
# output also follows schemas/report.schema.json. A change of output that is
# meant: `sh tests/frozen/run.sh build update`, then read the diff of
# tests/frozen/expected/ and say in the commit why it changed.
. "$ROOT/tests/lib.sh"
sh "$ROOT/tests/frozen/run.sh" "$BUILD" check "$TESTDIR" || fail "frozen outputs differ (tests/frozen/README.md)"
