#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Section (f)'s unshaped cells with the switch's receives steered (RPS on
# sw's ports) in several ways, alternated in one boot: whether running the
# switch's work beside the workers, not in one sender's softirq ((w)),
# shortens netagg's allreduce, and what it does to Gloo's. Run in the VM:
#
#   VM_ENV="MODES ROUNDS N SIZES_F REPS_F" \
#	lab/vm-run --mem 4096 --cpus 2 --timeout 3000 -- lab/bench/rps-repeat.sh
#
# MODES (none split cpu1 all), each ROUNDS times (2), in that order a
# round: none, no RPS (a receive runs where the sender's transmit does);
# split, sw's odd ports on CPU 0 and even ones on CPU 1; cpu1, every port
# on CPU 1; all, every port to either CPU by the flow's hash. N workers
# (4), routed, SIZES_F MiB (16 64), REPS_F timed allreduces (3): Gloo,
# netagg on 1 tree and on 4. A line a cell: the slowest worker's median
# time with the least and the most of the runs. Figures, not tests.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-runs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-f-peers.sh"
TEST_TMP=$(mktemp -d)
ROUND=1
n=${N:-4}
read -ra sizes_f <<<"${SIZES_F:-16 64}"
reps_f=${REPS_F:-3}
read -ra modes <<<"${MODES:-none split cpu1 all}"

# rps MODE: sw's ports' RPS masks for MODE.
rps() {
	local i m
	for i in $(seq "$n"); do
		case $1 in
		none) m=0 ;;
		split) m=$((i % 2 ? 1 : 2)) ;;
		cpu1) m=2 ;;
		all) m=3 ;;
		*) echo "rps-repeat: no mode $1 (none, split, cpu1, all)" >&2; return 1 ;;
		esac
		steer sw "s$i" "$m" || return 1
	done
}

cell() { echo "${F[0,$n,$1,$2]} (${FS[0,$n,$1,$2]:-})"; }
for round in $(seq "${ROUNDS:-2}"); do
	for mode in "${modes[@]}"; do
		unshaped_star routed "$n" && rps "$mode" || exit 1
		f_gloo 0 "$n"
		f_netagg 0 "$n" demo 1
		f_netagg 0 "$n" best 4
		for mib in "${sizes_f[@]}"; do
			echo "round $round, rps $mode, $n workers, $mib MiB: Gloo $(cell "$mib" gloo)," \
				"netagg 1 tree $(cell "$mib" netagg-demo), 4 trees $(cell "$mib" netagg-best) s"
		done
	done
done
