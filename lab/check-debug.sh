#!/bin/bash
# make check-debug: the netns tests on the debug kernel (lab/debug-kernel/: KASAN,
# KFENCE, UBSAN, lockdep, PROVE_RCU, DEBUG_OBJECTS, KMEMLEAK, SLUB
# debugging), built on first use and kept. The module is built against it
# for the run, and again against the default kernel after. A run fails on
# what make check fails on, and on any report of a checker: vm-run reads
# the kernel log, tests/vm-suite.sh scans for leaks after every script.
# The host checks are make check's: they do not depend on the kernel.
#
#   make check-debug                            every netns test
#   T="netagg_churn netagg_hostile" make check-debug   those only
#   T="netagg_agg+xdp" make check-debug         netagg_agg through the XDP hook
#   PART=2/3 make check-debug                   the second of three parts
#
# The whole suite takes three and a half hours on this kernel, more than a
# session of a machine that is new each time (the build included): its
# three parts, below, take 65 to 75 minutes each, and together
# are every script of tests/vm-suite.sh's list, checked here, so that a
# script added to the suite cannot be left out of them.
#
# First the canaries (lab/debug-kernel/canary.sh): a bug of each kind a
# checker finds, each of which must fail a run; once a build (a stamp in
# its tree says they all did, so a second part on it does not wait for
# them again). Its log goes to
# tests/out-debug/run.log, every script's log to tests/out-debug/
# (tests/out is wiped by each run). Ends with "N passed, N failed",
# canaries and cases together.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh || exit 1

parts=(
	# The scripts that had not passed whole on it, XDP's first.
	"netagg_xdp netagg_agg+xdp netagg_churn+xdp netagg_hostile+xdp
	 netagg_loss+xdp netagg_training netagg_kselftest netagg_perm
	 netagg_membership netagg_ipv6+xdp"
	# The long ones.
	"netagg_python netagg_rat netagg_nlfuzz netagg_repro netagg_restart
	 netagg_twolevel"
	# The rest.
	"netagg_agg netagg_benchtools netagg_churn netagg_control netagg_ecn
	 netagg_evict netagg_half netagg_hook netagg_hostile netagg_kconfig
	 netagg_load netagg_loss netagg_netns netagg_nlhostile netagg_partial
	 netagg_reorder netagg_simd netagg_spec netagg_observe netagg_super
	 netagg_waiting netagg_ipv6"
)
if [ -n "${PART:-}" ]; then
	np=${#parts[@]}
	if [ -n "${T:-}" ]; then
		echo "check-debug: PART or T, not both" >&2
		exit 2
	fi
	if ! [[ $PART =~ ^([0-9]+)/$np$ ]] || [ "${BASH_REMATCH[1]}" -lt 1 ] ||
	   [ "${BASH_REMATCH[1]}" -gt "$np" ]; then
		echo "check-debug: PART: 1/$np to $np/$np, not $PART" >&2
		exit 2
	fi
	whole=$(tests/vm-suite.sh --list | sed 's|^tests/||; s|\.sh||' | sort)
	# shellcheck disable=SC2068 # the parts are split on purpose
	placed=$(printf '%s\n' ${parts[@]} | sort)
	if [ "$whole" != "$placed" ]; then
		echo "check-debug: the parts are not the suite (< in no part, > no such script, or twice):" >&2
		diff <(echo "$whole") <(echo "$placed") | grep '^[<>]' >&2
		exit 2
	fi
	T=${parts[BASH_REMATCH[1] - 1]}
fi
# Without T or PART, tests/vm-suite.sh's own list: every script, and the
# "+xdp" runs (the debug kernel has BTF: they run).
tests=()
for t in ${T:-}; do
	x=
	[ "${t%+xdp}" = "$t" ] || x=+xdp
	t=${t%+xdp}
	t=${t#tests/}
	t=tests/${t%.sh}.sh
	[ -f "$t" ] || { echo "check-debug: T: no test $t" >&2; exit 2; }
	tests+=("$t$x")
done

out=tests/out-debug
rm -rf "$out"
mkdir -p "$out"
v=$(lab/debug-kernel/build.sh) || exit 1
echo "== check-debug: $v${PART:+, part $PART} =="
start=$SECONDS
# First, that each checker's report fails a run at all.
stamp=$(readlink -f "/lib/modules/$v/build")/.netagg-canaries
canaries=$(cat lab/debug-kernel/canary.sh lab/debug-kernel/canary/* | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" = "$canaries" ]; then
	shown="the canaries all failed a run on this build before ($(date -r "$stamp" '+%F %R'))"
	echo "# $shown: not run again"
	cpass=0 cfail=0
else
	lab/debug-kernel/canary.sh "$v" | tee "$out/canary.tap"
	cpass=$(grep -c '^ok ' "$out/canary.tap") cfail=$(grep -c '^not ok ' "$out/canary.tap")
	shown="$cpass of $((cpass + cfail)) checkers shown to fail a run here"
	if [ "$cfail" -eq 0 ] && [ "$cpass" -gt 0 ]; then
		echo "$canaries" >"$stamp"
	fi
fi

# The objects of another kernel's build must not be linked into this one.
make -s -C "/lib/modules/$v/build" M="$PWD" clean >/dev/null 2>&1
if make -s KVER="$v" all >"$out/build.log" 2>&1; then
	# Under KASAN and lockdep each script takes 2 to 8 times as long (the
	# whole suite three and a half hours): its limit and the protocol times it
	# sets are stretched 4 times (at 3, netagg_training's 45 minutes were
	# not enough), the VM's limit is 5 hours.
	NLFUZZ_MESSAGES=100000 VM_TIMEOUT=18000 VM_MEM=4096 KVER=$v TIMEOUT_SCALE=4 \
		tests/run.sh --vm "${tests[@]}" 2>&1 |
		tee "$out/run.log"
	cp -r tests/out/. "$out/"
else
	tail -n 20 "$out/build.log"
	echo "0 passed, 1 failed" >"$out/run.log"
fi
# Leave the module built for the default kernel, as make would.
make -s -C "/lib/modules/$v/build" M="$PWD" clean >/dev/null 2>&1
make -s all >/dev/null 2>&1

read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$out/run.log" |
	tail -n 1) || { p=0 f=1; }
echo "# check-debug: $shown;" \
	"the suite on $v took $(((SECONDS - start) / 60)) min in all"
echo "$((p + cpass)) passed, $((f + cfail)) failed"
[ $((f + cfail)) -eq 0 ]
