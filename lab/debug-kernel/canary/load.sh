#!/bin/bash
# The canary loaded with the bug named by CANARY_BUG, as a test script of
# tests/vm-suite.sh, which then scans for leaks as after any test: one
# case, which passes; the checker's report is what must fail the run.
source "$(dirname "$0")/../../../tests/lib.sh"
# Not require_root: that wants netagg built, and the canaries run before
# make check-debug builds it (on a fresh clone, nothing is).
[ "$(id -u)" -eq 0 ] || fail_setup "needs root"
ktap_plan 1
check "netagg_canary bug=$CANARY_BUG loaded" \
	insmod "$(dirname "$0")/netagg_canary.ko" bug="$CANARY_BUG"
rmmod netagg_canary
ktap_finish
