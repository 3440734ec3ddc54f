#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Section (k)'s "both" phase again and again: the spread of one row, which
# a 30 s phase of make bench cannot show. Run in the VM:
#
#   VM_ENV="REPS SECS N CFGS ORDERS WINDOW" REPS=2 SECS=60 CFGS="droptail:4 red:1" \
#	lab/vm-run --mem 4096 --cpus 2 --timeout 3000 -- lab/bench/share-repeat.sh
#
# REPS runs (2) of each CFGS entry QUEUE:TREES (droptail:4), SECS seconds a
# phase (60), N workers (4), ORDERS netagg-first and/or tcp-first (both:
# who holds the link when the other joins), or alone (netagg without TCP),
# WINDOW the job's (64). A line a phase: the two rates and netagg's share,
# netagg's retransmits, cuts and least window (w1's), what sw resent, the
# queue's drops and marks, the rates every 10 s, and the TCP sender's
# retransmitted segments and loss recoveries (nstat). NETAGG_KO and
# NETAGG_ALLREDUCE (tests/lib.sh) run another build. Figures, not tests.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-runs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-k.sh"
CSV_K=/dev/null
TEST_TMP=$(mktemp -d)
ROUND=1
secs=${SECS:-60}
n=${N:-4}
reps=${REPS:-2}
read -ra cfgs <<<"${CFGS:-droptail:4}"
read -ra orders <<<"${ORDERS:-netagg-first tcp-first}"
for order in "${orders[@]}"; do
	case $order in
	netagg-first | tcp-first | alone) ;;
	*) echo "share-repeat: ORDERS takes netagg-first, tcp-first, alone; not '$order'" >&2; exit 2 ;;
	esac
done

star "$n" 1500 || exit 1
for i in $(seq "$n"); do ip netns exec "w$i" sysctl -qw net.ipv4.tcp_ecn=1; done
k_counters || exit 1
for cfg in "${cfgs[@]}"; do
	q=${cfg%%:*} trees=${cfg##*:}
	k_bottleneck "$q" "${RATE_K:-20}" || exit 1
	for rep in $(seq "$reps"); do
		for order in "${orders[@]}"; do
			module_unload
			module_load && root_job 1 1500 "$n" "$trees" || exit 1
			case $order in
			netagg-first) k_netagg "$n" "$trees" && k_tcp $((secs + 3)) ;;
			tcp-first) k_tcp $((secs + 8)) && sleep 4 && k_netagg "$n" "$trees" ;;
			*) K_TCP=() && k_netagg "$n" "$trees" ;;
			esac
			ip netns exec w2 nstat -n >/dev/null
			k_measure "$secs"
			tcp=$(ip netns exec w2 nstat -z TcpRetransSegs TcpExtTCPSackRecovery \
				TcpExtTCPTimeouts | awk 'NR > 1 { printf "%s%s=%s", s, $1, $2; s = " " }')
			read -ra r <<<"$(k_rates 3)"
			every=$(awk 'NR == 1 { t = $1; u = $2; c = $3; next }
				$1 - t >= 10 { printf "%s%.1f/%.1f", s, ($2 - u) * 8 / ($1 - t) / 1e6,
					($3 - c) * 8 / ($1 - t) / 1e6; s = " "; t = $1; u = $2; c = $3 }' \
				"$TEST_TMP/k.samples")
			k_netagg_stop
			[ ${#K_TCP[@]} -eq 0 ] || wait "${K_TCP[@]}"
			echo "$q trees=$trees window=$window rep=$rep $order:" \
				"netagg ${r[0]} TCP ${r[1]} Mbit/s, share" \
				"$(awk -v a="${r[0]}" -v b="${r[1]}" 'BEGIN { if (a + b > 0) printf "%.0f %%", 100 * a / (a + b) }')," \
				"exact $K_OK; netagg [$K_REST]; sw resent $(counter sw trees 1 resent); queue [$K_QUEUE];" \
				"every 10 s [$every]; TCP [$tcp]"
		done
	done
done
