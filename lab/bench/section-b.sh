# shellcheck shell=bash
# Section (b) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (stream, setup_mode, stop_mode).
#
# (b) Stream. Four workers and one switch namespace:
#
#       w1 10.0.1.1 --+                 netagg:  sw is the root of job 1
#       w2 10.0.2.1 --+-- sw 10.0.N.254   uagg:    netagg-uagg on sw sums
#       w3 10.0.3.1 --+                 forward: sw routes wN -> wN+1, no module
#       w4 10.0.4.1 --+
#
#     Each worker sends the same stream (netagg-blast: VIDs 0..P-1 of one
#     chunk size, at most WINDOW unanswered) as fast as that allows. In all
#     three ways the switch takes in 4 packets a VID and sends out 4: the
#     forwarded ones, or the result to each worker. The switch's work is
#     steered to CPU 1 (RPS on its links; netagg-uagg pinned there), the
#     workers' to CPU 0 (pinned, RPS on theirs), so CPU 1's busy time over
#     the packets the switch took in is its cost per packet.

# b_runs KIND MTU RATE PACKETS: REPS runs of each way, taking turns, into
# $TEST_TMP/b.KIND.MTU.MODE, a line each.
b_runs() {
	local kind=$1 mtu=$2 rate=$3 n=$4 rep mode res
	for rep in $(seq "$reps"); do
		for mode in $modes; do
			if setup_mode "$mode" "$mtu"; then
				res=$(stream "$mode" "$mtu" "$rate" "$n")
			else
				res=fail
			fi
			stop_mode "$mode"
			[ "$res" = fail ] || echo "$res" >>"$TEST_TMP/b.$kind.$mtu.$mode"
		done
	done
}

# col KIND MTU MODE N: the median of column N of those runs, or nothing.
col() {
	local f=$TEST_TMP/b.$1.$2.$3
	[ -s "$f" ] && cut -d' ' -f"$4" "$f" | median
}

# b_base MODE: the forwarding run MODE's ratios are to.
b_base() { [[ $1 == *-super ]] && echo forward-super || echo forward; }

section_b() {
	local mtu mode rate n pps bps cpu util fpps fbps fcpu
	modes=${MODES:-forward netagg netagg-i32 netagg-noreuse uagg forward-super netagg-super netagg-i32-super}
	say "## (b) One switch, four workers: the same stream three ways"
	say
	say "forward: the switch routes each worker's stream to the next worker, no"
	say "module; netagg: the switch is the root of the job; uagg: netagg-uagg"
	say "(recvmmsg/sendmmsg) on the switch does the same sums. The switch takes in"
	say "4 packets a VID and sends out 4 in all three. Median of $reps runs, the"
	say "ways taking turns; ratios are to forward. netagg sums float32; netagg-i32"
	say "is the same path summing int32: under TCG every float lane is emulated in"
	say "software (QEMU's softfloat), integer lanes are not, so the i32 row shows"
	say "the aggregation path without that artefact. netagg-noreuse is netagg"
	say "loaded with reuse=0: every packet it sends is a new one instead of one it"
	say "received, so the row shows what reusing them saves. forward-super and"
	say "netagg-super: the same streams with each worker sending runs of packets"
	say "as UDP GSO super-packets of up to 64 KiB (44 packets at MTU 1500, 7 at"
	say "9000) and receiving them whole (UDP_GRO); netagg-super's and"
	say "netagg-i32-super's ratios are to forward-super."
	say
	say "### Paced: the same rate for all three"
	say
	say "CPU: CPU 1's (the switch's) busy time per packet taken in. Capacity:"
	say "what that CPU time allows, 1 / CPU, relative to forwarding's."
	say
	say "| MTU | path | offered pps | pps | CPU µs/packet | vs fwd | capacity vs fwd | CPU 1 util |"
	say "|---|---|---|---|---|---|---|---|"
	for mtu in ${MTUS:-1500 9000}; do
		rate=$((mtu == 1500 ? ${RATE_1500:-6000} : ${RATE_9000:-3000}))
		n=$rate	# 4 seconds
		b_runs paced "$mtu" "$rate" "$n"
		for mode in $modes; do
			fcpu=$(col paced "$mtu" "$(b_base "$mode")" 3)
			pps=$(col paced "$mtu" "$mode" 1)
			cpu=$(col paced "$mtu" "$mode" 3)
			util=$(col paced "$mtu" "$mode" 4)
			if [ -z "$pps" ]; then
				say "| $mtu | $mode | $rate | failed | | | | |"
				continue
			fi
			say "| $mtu | $mode | $rate | $pps | $cpu | $(ratio "$cpu" "${fcpu:-0}") |" \
				"$(ratio "${fcpu:-0}" "$cpu") | $util% |"
		done
	done
	say
	say "### Unpaced: as fast as a window of $window allows"
	say
	say "The workers' CPU (CPU 0: four senders and receivers) is the limit here"
	say "more than the switch's; gradient: payload bytes taken in per second."
	say
	say "| MTU | path | pps | vs fwd | gradient MB/s | vs fwd | CPU µs/packet | vs fwd | CPU 1 util |"
	say "|---|---|---|---|---|---|---|---|---|"
	for mtu in ${MTUS:-1500 9000}; do
		n=$((mtu == 1500 ? packets : packets / 2))
		b_runs max "$mtu" 0 "$n"
		for mode in $modes; do
			fpps=$(col max "$mtu" "$(b_base "$mode")" 1)
			fbps=$(col max "$mtu" "$(b_base "$mode")" 2)
			fcpu=$(col max "$mtu" "$(b_base "$mode")" 3)
			pps=$(col max "$mtu" "$mode" 1)
			bps=$(col max "$mtu" "$mode" 2)
			cpu=$(col max "$mtu" "$mode" 3)
			util=$(col max "$mtu" "$mode" 4)
			if [ -z "$pps" ]; then
				say "| $mtu | $mode | failed | | | | | | |"
				continue
			fi
			say "| $mtu | $mode | $pps | $(ratio "$pps" "${fpps:-0}") |" \
				"$(awk -v b="$bps" 'BEGIN { printf "%.1f", b / 1e6 }') |" \
				"$(ratio "$bps" "${fbps:-0}") | $cpu | $(ratio "$cpu" "${fcpu:-0}") | $util% |"
		done
	done
	say
}
