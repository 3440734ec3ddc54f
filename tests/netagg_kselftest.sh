#!/bin/bash
# The netns tests as a kselftest target, run by the kernel's own runner
# (tools/testing/selftests of the booted kernel's linux-source): this
# directory copied into a scratch kernel tree as selftests/netagg installs
# with the kernel's kselftest Makefile, lists every netagg_*.sh test,
# carries settings (each test's timeout); run_kselftest.sh runs a test
# unchanged against this checkout (NETAGG_ROOT) and reports it passed, with
# every case of its plan; and it reports a test that fails (no module
# built where NETAGG_ROOT points) as failed.
source "$(dirname "$0")/lib.sh"
require_root
trap 'rm -rf "$TEST_TMP"' EXIT

# Unpacked on the host (tests/run.sh does it): the VM sees it read-only.
if ! ks=$("$NETAGG_ROOT/scripts/ksrc" kselftest 2>&1); then
	echo "1..0 # SKIP no kselftest runner: $ks"
	exit $ksft_skip
fi

ktap_plan 7

sel=$TEST_TMP/linux/tools/testing/selftests
inst=$TEST_TMP/kselftest
mkdir -p "$TEST_TMP/linux"
cp -r "$ks/." "$TEST_TMP/linux/"
mkdir -p "$sel/netagg"
cp "$NETAGG_ROOT"/tests/{Makefile,settings,config,lib.sh} \
	"$NETAGG_ROOT"/tests/netagg_*.sh "$sel/netagg/"

check "the target installs with the kernel's kselftest Makefile" \
	make -s -C "$sel" TARGETS=netagg install INSTALL_PATH="$inst"
check_eq "run_kselftest.sh lists every netagg_*.sh" \
	"$(cd "$NETAGG_ROOT/tests" && printf 'netagg:%s\n' netagg_*.sh | sort)" \
	"$("$inst/run_kselftest.sh" -l 2>&1 | sort)"
check_eq "settings comes along: each test's timeout" \
	"$(grep '^timeout=' "$NETAGG_ROOT/tests/settings")" \
	"$(grep '^timeout=' "$inst/netagg/settings" 2>&1)"

# One test as the runner runs it: from the installed copy, its output
# prefixed with "# ", its exit status made a TAP line. (Appended: the
# runner writes the test's output to /dev/stdout opened anew, which with
# ">" would write over its own lines.)
NETAGG_ROOT=$NETAGG_ROOT "$inst/run_kselftest.sh" -t netagg:netagg_perm.sh \
	>>"$TEST_TMP/run.out" 2>&1
rc=$?
check_eq "run_kselftest.sh runs netagg_perm.sh and reports it passed" \
	"0 ok 1 selftests: netagg: netagg_perm.sh" \
	"$rc $(grep -E '^(not )?ok 1 ' "$TEST_TMP/run.out")"
plan=$(sed -n 's/^# 1\.\.\([0-9]*\)$/\1/p' "$TEST_TMP/run.out")
check_eq "... every case of its plan passed ($plan), none failed" \
	"$plan 0" \
	"$(grep -cE '^# ok [0-9]+ ' "$TEST_TMP/run.out") $(grep -cE '^# not ok ' "$TEST_TMP/run.out")"

# A checkout without the module: the test fails, and the runner says so.
mkdir -p "$TEST_TMP/empty"
NETAGG_ROOT=$TEST_TMP/empty "$inst/run_kselftest.sh" -t netagg:netagg_perm.sh \
	>>"$TEST_TMP/fail.out" 2>&1
check_eq "a test that fails is reported failed by the runner" \
	"not ok 1 selftests: netagg: netagg_perm.sh # exit=1" \
	"$(grep -E '^(not )?ok 1 ' "$TEST_TMP/fail.out")"
check_eq "... with the test's own reason" "1" \
	"$(grep -c '^# # not built: run make' "$TEST_TMP/fail.out")"

ktap_finish
