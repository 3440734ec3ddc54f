#!/bin/bash
# make bench: the reduction core natively on this host, then the datapath in
# the VM (lab/bench/bench-vm.sh). Prints one Markdown report and writes it to
# OUT (default tests/out/bench.md). Figures, not tests: nothing here passes
# or fails on a number.
#
#   KVER=...      kernel of the VM (default: scripts/kver's)
#   SECTIONS=bcdefnghkst which VM sections to run, and PACKETS, WINDOW, REPS,
#   REPS_C, REPS_D, SIZES, FANINS, JOBS, MODES, MTUS, RATE_1500, RATE_9000,
#   SIZES_F, WORKERS_F, RATES_F, REPS_F, PEERS_F, TOPOS_F, XDP_F, SIZES_N,
#   REPS_N, WORKERS_N, TREES_N, SEGS_H,
#   WORKERS_K, RATE_K, SECONDS_K, SIZE_S, REPS_S, DELAYS_S, EPOCHS_T as
#   lab/bench/bench-vm.sh takes them
#   (XDP_F=1: section f runs netagg with the XDP hook too)
#   SIM=0         no section (o) (the cluster's allocator, simulated on
#                 this host: lab/bench/cluster-sim.sh; SIM_JOBS, SIM_CONC)
#   NETAGG_KO=PATH another build of the module (default kmod/netagg.ko),
#   e.g. an older commit's built in a git worktree, to compare with
#
# Section f (netagg against Gloo and Open MPI) also leaves its figures in
# tests/out/bench-peers.csv, plotted here into bench-peers-*.png beside the
# report, which shows them (with the instructions per allreduced byte of
# the last make profile, tests/out/profile/peers.csv, if there is one);
# section s (one straggler) in tests/out/bench-straggler.csv and
# bench-straggler.png; section k (sharing a link) in
# tests/out/bench-share.csv and bench-share-N.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-tests/out/bench.md}
mkdir -p tests/out "$(dirname "$out")"

{
	echo "# netagg benchmark"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) CPUs:" \
		"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
	echo
	echo "## (a) The reduction core, natively"
	echo
} >"$out.tmp"
echo "# bench: (a) the reduction core natively, then the VM's sections" >&2
tests/tools/netagg-bench-core --out tests/out/bench-core.md >/dev/null
cat tests/out/bench-core.md >>"$out.tmp"
echo >>"$out.tmp"
# (o) needs no VM either: the allocator and etcd, on this host.
if [ "${SIM:-1}" = 1 ]; then
	echo "# bench: (o) the cluster's allocator, simulated" >&2
	{
		echo "## (o) The cluster's allocator at scale, simulated"
		echo
		lab/bench/cluster-sim.sh || echo "none: lab/bench/cluster-sim.sh failed"
		echo
	} >>"$out.tmp"
fi
cat "$out.tmp"

# Section f alone takes 3 to 4 hours at its defaults (each of its regimes on
# a routed and a bridged switch; the 20 Mbit/s links half of it), b to e
# about 25 minutes.
vm_args=(--timeout 21600 --mem 4096 --cpus 2)
[ -n "${KVER:-}" ] && vm_args+=(--kernel "$KVER")
csv=tests/out/bench-peers.csv
csv_s=tests/out/bench-straggler.csv
csv_k=tests/out/bench-share.csv
# No figures of an earlier run.
rm -f "$csv" "$csv_s" "$csv_k" "$(dirname "$out")"/bench-peers-*.png \
	"$(dirname "$out")"/bench-straggler.png "$(dirname "$out")"/bench-share-*.png
# The settings lab/bench/bench-vm.sh takes, passed into the VM as they are.
VM_ENV="SECTIONS PACKETS WINDOW REPS REPS_C REPS_D SIZES FANINS JOBS MODES MTUS RATE_1500 RATE_9000
	SIZES_F WORKERS_F RATES_F REPS_F PEERS_F TOPOS_F XDP_F SIZES_N REPS_N WORKERS_N TREES_N
	SEGS_H WORKERS_K RATE_K SECONDS_K
	SIZE_S REPS_S DELAYS_S EPOCHS_T NETAGG_KO" \
	lab/vm-run "${vm_args[@]}" -- env OUT=tests/out/bench-vm.md lab/bench/bench-vm.sh
sed '1,2d' tests/out/bench-vm.md >>"$out.tmp"
if [ -s "$csv" ]; then
	counts=()	# make profile's instructions per byte, if it ran
	[ ! -s tests/out/profile/peers.csv ] || counts=(--counts tests/out/profile/peers.csv)
	pngs=$(lab/bench/plot-peers.py "${counts[@]}" "$csv" "$(dirname "$out")") || pngs=
	{
		echo "Plots of (f), from $csv, beside this report:"
		echo
		for png in $pngs; do echo "![$(basename "$png" .png)]($(basename "$png"))"; echo; done
		[ -n "$pngs" ] || { echo "none: lab/bench/plot-peers.py failed"; echo; }
	} | tee -a "$out.tmp"
fi
if [ -s "$csv_s" ]; then
	if png=$(lab/bench/plot-straggler.py "$csv_s" "$(dirname "$out")"); then
		printf 'Plot of (s), from %s, beside this report:\n\n![%s](%s)\n\n' "$csv_s" \
			"$(basename "$png" .png)" "$(basename "$png")"
	else
		printf 'Plot of (s), from %s: none, lab/bench/plot-straggler.py failed\n\n' "$csv_s"
	fi | tee -a "$out.tmp"
fi
if [ -s "$csv_k" ]; then
	pngs=$(lab/bench/plot-share.py "$csv_k" "$(dirname "$out")") || pngs=
	{
		echo "Plots of (k), from $csv_k, beside this report:"
		echo
		for png in $pngs; do echo "![$(basename "$png" .png)]($(basename "$png"))"; echo; done
		[ -n "$pngs" ] || { echo "none: lab/bench/plot-share.py failed"; echo; }
	} | tee -a "$out.tmp"
fi
mv "$out.tmp" "$out"
echo "bench: report in $out"
