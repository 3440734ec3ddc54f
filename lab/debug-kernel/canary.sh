#!/bin/bash
# The debug kernel's checkers, each shown to fail a run: the canary module
# (lab/debug-kernel/canary/) loaded with one bug at a time, as a test script of
# tests/vm-suite.sh in a VM of its own booting KVER, must make
# lab/vm-run or the suite fail, with that checker's report in what
# they print. A checker that stopped reporting (an option lost from the
# config, a pattern vm-run no longer knows) fails here, not silently.
#
#   lab/debug-kernel/canary.sh KVER [BUG...]   (make check-debug runs it; all
#                                          bugs, or those named)
#
# KTAP: one case a bug; exit 1 when any failed.
cd "$(dirname "$0")/../.." || exit 1
source tests/ktap.sh
v=${1:?usage: lab/debug-kernel/canary.sh KVER [BUG...]}
shift
out=tests/out-debug/canary
mkdir -p "$out"

# bug, and what its checker prints
cases=(
	"uaf|BUG: KASAN: slab-use-after-free"
	"oob|BUG: KASAN: slab-out-of-bounds"
	"leak|unreferenced object"
	"lockorder|possible circular locking dependency"
	"sleep|BUG: sleeping function called from invalid context"
	"rcu|suspicious RCU usage"
	"timer|ODEBUG: free active"
	"shift|UBSAN: shift-out-of-bounds"
)
if [ $# -gt 0 ]; then
	picked=()
	for b; do
		for c in "${cases[@]}"; do [ "${c%%|*}" = "$b" ] && picked+=("$c"); done
	done
	[ ${#picked[@]} -eq $# ] || { echo "canary: unknown bug in: $*" >&2; exit 2; }
	cases=("${picked[@]}")
fi
echo "KTAP version 1"
echo "1..${#cases[@]}"
if ! make -s -C "/lib/modules/$v/build" M="$PWD/lab/debug-kernel/canary" modules \
		>"$out/build.log" 2>&1; then
	sed 's/^/# /' "$out/build.log"
	for i in "${!cases[@]}"; do echo "not ok $((i + 1)) ${cases[$i]%%|*}: the canary did not build"; done
	exit 1
fi
n=0 failed=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	bug=${c%%|*} want=${c#*|}
	ktap_progress "$n" "${#cases[@]}" "canary $bug" >&2
	CANARY_BUG=$bug VM_ENV=CANARY_BUG lab/vm-run --kernel "$v" --timeout 600 -- \
		tests/vm-suite.sh lab/debug-kernel/canary/load.sh >"$out/$bug.log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF -- "$want" "$out/$bug.log"; then
		echo "ok $n $bug: reported (\"$want\"), the run failed (exit $rc)"
	else
		echo "not ok $n $bug: wanted \"$want\" and a failed run; exit $rc"
		tail -n 20 "$out/$bug.log" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
done
make -s -C "/lib/modules/$v/build" M="$PWD/lab/debug-kernel/canary" clean >/dev/null 2>&1
[ "$failed" -eq 0 ]
