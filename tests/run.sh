#!/bin/bash
# The whole test suite (make check). Host checks run natively; the netns tests
# run in the VM, whose kernel log must stay clean. Every KTAP script's cases
# are counted against its plan (tests/ktap.sh). Lists each skipped case with
# its reason, then ends with the line "N passed, N failed" and fails when
# anything failed.
#
#   tests/run.sh                          everything
#   tests/run.sh tests/netagg_control.sh  host checks and one VM test
#   tests/run.sh --vm [TESTS...]          the VM's tests only (check-debug)
#
# Environment: KVER the kernel to boot; VM_TIMEOUT (s) and VM_MEM (MB) of
# the VM; TIMEOUT_SCALE, each script's time limit (tests/settings) and the
# times tests give the protocol (eviction, worker timeouts: lib.sh's
# scaled) times this, for slower kernels; NLFUZZ_MESSAGES,
# netagg_nlfuzz.sh's count.
cd "$(dirname "$0")/.." || exit 1
vm_only=
if [ "${1:-}" = --vm ]; then
	vm_only=1
	shift
fi
source tests/ktap.sh
out=tests/out
rm -rf "$out"
mkdir -p "$out"
pass=0 fail=0 skip=0
# Where the run is: each host check counted against all of them below.
host_n=0 host_total=$(grep -c -E '^host_(test|ktap) ' "$0")
[ -z "$vm_only" ] || host_n=$((host_total - 1))	# kernel-sources only

result()	# ok|fail NAME
{
	if [ "$1" = ok ]; then
		pass=$((pass + 1))
		echo "ok - $2"
	else
		fail=$((fail + 1))
		echo "not ok - $2"
	fi
}

host_test()	# NAME CMD...: a check that runs natively on the host
{
	local name=$1
	shift
	[ -z "$vm_only" ] || [ "$name" = kernel-sources ] || return 0
	host_n=$((host_n + 1))
	ktap_progress "$host_n" "$host_total" "host: $name"
	if "$@" >"$out/$name.log" 2>&1; then
		result ok "$name"
	else
		sed 's/^/# /' "$out/$name.log"
		result fail "$name"
	fi
}

# host_ktap NAME CMD...: a native KTAP script, its cases tallied as the VM's.
host_ktap()
{
	local name=$1 rc
	shift
	[ -z "$vm_only" ] || return 0
	host_n=$((host_n + 1))
	ktap_progress "$host_n" "$host_total" "host: $name"
	"$@" >"$out/$name.log" 2>&1
	rc=$?
	sed 's/^/    /' "$out/$name.log"
	ktap_tally "$out/$name.log" "$name" "$out/host-skips"
	pass=$((pass + tally_pass)) fail=$((fail + tally_fail)) skip=$((skip + tally_skip))
	if [ -n "$tally_problem" ]; then
		result fail "$name: $tally_problem (exit $rc)"
	elif [ "$rc" -ne 0 ] && [ "$tally_fail" -eq 0 ]; then
		result fail "$name: exit $rc"
	fi
}

host_test checkpatch scripts/checkpatch.sh
host_ktap shape bash tests/host_shape.sh
host_ktap unit-reduce make -s -C tests/unit run
host_ktap unit-half make -s -C tests/unit run-half
host_ktap unit-window make -s -C tests/unit run-window
host_ktap unit-cc make -s -C tests/unit run-cc
host_ktap unit-tag make -s -C tests/unit run-tag
host_ktap library bash tests/host_library.sh
host_ktap keyed bash tests/host_keyed.sh
host_ktap cli bash tests/host_cli.sh
host_ktap man bash tests/host_man.sh
host_ktap python-api env PYTHONPATH=python /usr/bin/python3 tests/python/api.py
host_ktap rat-plan bash tests/host_rat.sh
host_ktap profile-reader bash tests/host_profile.sh
host_ktap readme bash tests/host_readme.sh
host_ktap cluster bash tests/host_cluster.sh
host_ktap spec bash tests/host_spec.sh
host_ktap dkms bash tests/host_dkms.sh
# What the VM's tests take from the kernel sources, unpacked here: there the
# host's cache is read-only. The kselftest runner of the kernel booted.
host_test kernel-sources bash -c "scripts/ksrc ynl &&
	scripts/ksrc kselftest ${KVER:-$(scripts/kver 2>/dev/null)}"

# The suite takes 46-60 minutes of the VM's, by the machine: 80 is its
# guard against a hung VM, not its budget (make check's is an hour).
vm_args=(--timeout "${VM_TIMEOUT:-4800}")
[ -n "${VM_MEM:-}" ] && vm_args+=(--mem "$VM_MEM")
[ -n "${KVER:-}" ] && vm_args+=(--kernel "$KVER")
export TIMEOUT_SCALE=${TIMEOUT_SCALE:-1}
echo "# the netns tests in the VM, $(ktap_elapsed) in"
VM_ENV="TIMEOUT_SCALE NLFUZZ_MESSAGES" lab/vm-run "${vm_args[@]}" -- tests/vm-suite.sh "$@" 2>&1 | tee "$out/vm.log"
vm_rc=${PIPESTATUS[0]}

if read -r p f s <"$out/vm-counts" 2>/dev/null; then
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	# The kernel log is checked by vm-run after every run: a test of its own.
	if grep -q 'vm-run: kernel log shows a problem' "$out/vm.log"; then
		result fail "kernel log clean (no BUG, WARNING, Oops, lockup, leak)"
	else
		result ok "kernel log clean (no BUG, WARNING, Oops, lockup, leak)"
		[ "$vm_rc" -eq 0 ] || [ "$f" -gt 0 ] || result fail "vm-run exited $vm_rc"
	fi
else
	result fail "the VM test suite ran to its end (vm-run exited $vm_rc)"
fi

if [ "$skip" -gt 0 ]; then
	echo "$skip skipped:"
	cat "$out/host-skips" "$out/vm-skips" 2>/dev/null | sed 's/^/  /'
fi
echo "# done in $(ktap_elapsed)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
