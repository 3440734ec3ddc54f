#!/bin/bash
# make check-debug: the netns tests on the debug kernel (debug-kernel/: KASAN,
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
#
# First the canaries (debug-kernel/canary.sh): a bug of each kind a
# checker finds, each of which must fail a run. Its log goes to
# tests/out-debug/run.log, every script's log to tests/out-debug/
# (tests/out is wiped by each run). Ends with "N passed, N failed",
# canaries and cases together.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh || exit 1

out=tests/out-debug
rm -rf "$out"
mkdir -p "$out"
v=$(debug-kernel/build.sh) || exit 1
echo "== check-debug: $v =="
# Without T, tests/vm-suite.sh's own list: every script, and the "+xdp"
# runs (which skip on a kernel without BTF).
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

start=$SECONDS
# First, that each checker's report fails a run at all.
debug-kernel/canary.sh "$v" | tee "$out/canary.tap"
cpass=$(grep -c '^ok ' "$out/canary.tap") cfail=$(grep -c '^not ok ' "$out/canary.tap")

# The objects of another kernel's build must not be linked into this one.
make -s -C "/lib/modules/$v/build" M="$PWD" clean >/dev/null 2>&1
if make -s KVER="$v" all >"$out/build.log" 2>&1; then
	# Under KASAN and lockdep each script takes 2 to 5 times as long (the
	# whole suite three to four hours): its limit and the protocol times it
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
echo "# check-debug: $cpass of $((cpass + cfail)) checkers shown to fail a run;" \
	"the suite on $v took $(((SECONDS - start) / 60)) min in all"
echo "$((p + cpass)) passed, $((f + cfail)) failed"
[ $((f + cfail)) -eq 0 ]
