# shellcheck shell=bash
# Section (k) of lab/bench/bench-vm.sh, which sources this after lib.sh and
# lib-runs.sh.
#
# (k) Sharing a link. One bottleneck, the switch's port towards w1 at
#     RATE_K Mbit/s (tbf), its queue drop-tail (a FIFO of 300 kB) or RED
#     marking ECN-capable packets (30 to 85 packets of average queue); the
#     flows into w1 across it: netagg's results (a job of 1 tree or 4 on
#     sw, 4 or 8 workers, 1 MiB float32 allreduces in a loop, every result
#     checked), a TCP flow (iperf3, cubic, ECN on) from w2, and short flows
#     (10 kB replies on new connections, one every 100 ms) from w3. Four
#     phases, TCP alone, two TCP flows (what a second bulk flow does to the
#     short ones), netagg alone and both, each SECONDS_K long; what
#     arrives at w1 is counted by protocol and port (tc filters on its
#     link), every half second, for the shares and the rate over time
#     (CSV_K, which lab/bench/bench.sh plots). Figures, not tests.

# k_bottleneck QUEUE RATE: sw's s1 shaped to RATE Mbit/s, QUEUE droptail
# (bfifo of 300 kB under the tbf) or red (RED marking ECN-capable packets,
# dropping the others: SYNs).
k_bottleneck() {
	local q=$1 rate=$2
	tc -n sw qdisc del dev s1 root 2>/dev/null
	tc -n sw qdisc add dev s1 root handle 1: tbf rate "${rate}mbit" burst 32kb latency 2s ||
		return 1
	if [ "$q" = droptail ]; then
		tc -n sw qdisc add dev s1 parent 1:1 handle 10: bfifo limit 300000
	else
		tc -n sw qdisc add dev s1 parent 1:1 handle 10: red limit 1000000 min 45000 \
			max 127500 avpkt 1500 burst 40 bandwidth "${rate}mbit" probability 0.1 ecn
	fi
}

# k_counters: w1's link counts what arrives by kind: UDP (netagg's results),
# TCP to port 5201 (iperf3's data) and from 5301 (the short flows' replies).
k_counters() {
	local pref=1 match
	tc -n w1 qdisc add dev v0 ingress || return 1
	for match in "ip protocol 17 0xff" "ip protocol 6 0xff match ip dport 5201 0xffff" \
		"ip protocol 6 0xff match ip sport 5301 0xffff"; do
		# shellcheck disable=SC2086
		tc -n w1 filter add dev v0 ingress prio "$pref" protocol ip u32 match $match \
			action pass || return 1
		pref=$((pref + 1))
	done
}

# k_sample SECONDS: "T UDP TCP SHORT" (seconds, bytes so far) every half
# second for SECONDS of wall time, into $TEST_TMP/k.samples. By the clock,
# not by a count of samples: a sample (tc and jq under TCG) takes about as
# long as the half second between them.
k_sample() {
	local i now end
	: >"$TEST_TMP/k.samples"
	end=$(($(date +%s%N) + $1 * 1000000000))
	for i in $(seq $(($1 * 2 + 1))); do
		now=$(date +%s%N)
		echo "${now:0:-9}.${now: -9} $(tc -n w1 -s -j filter show dev v0 ingress |
			jq -r '[.[] | select(.options.actions) | .options.actions[0].stats.bytes] | join(" ")')" \
			>>"$TEST_TMP/k.samples"
		[ "$now" -ge "$end" ] && break
		sleep 0.5
	done
}

# k_rates FROM: the Mbit/s of netagg and TCP from second FROM of the
# samples to their end: "NETAGG TCP".
k_rates() {
	awk -v from="$1" 'NR == 1 { t0 = $1 } $1 - t0 >= from && !a { a = 1; t = $1; u = $2; c = $3 }
		END { d = $1 - t; if (d > 0) printf "%.2f %.2f", ($2 - u) * 8 / d / 1e6, ($3 - c) * 8 / d / 1e6
			else print "0 0" }' "$TEST_TMP/k.samples"
}

# k_csv N QUEUE TREES PHASE: the samples as rates over time, to CSV_K.
k_csv() {
	awk -v pre="$1,$2,$3,$4" 'NR == 1 { t0 = $1 } NR > 1 { d = $1 - t; if (d > 0)
		printf "%s,%.2f,%.3f,%.3f\n", pre, $1 - t0, ($2 - u) * 8 / d / 1e6, ($3 - c) * 8 / d / 1e6 }
		{ t = $1; u = $2; c = $3 }' "$TEST_TMP/k.samples" >>"$CSV_K"
}

# k_tcp SECONDS [FLOWS]: iperf3 from w2 to w1 for SECONDS, FLOWS
# connections (1), in the background (pids in K_TCP); a phase's samples end
# before it does.
k_tcp() {
	ip netns exec w1 timeout $(($1 + 30)) iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	K_TCP=($!)
	sleep 0.5
	ip netns exec w2 timeout $(($1 + 30)) iperf3 -c 10.0.1.1 -p 5201 -t "$1" \
		-P "${2:-1}" >/dev/null 2>&1 &
	K_TCP+=($!)
}

# k_queue: what the bottleneck's queue has done so far: "DROPS MARKS".
k_queue() {
	tc -n sw -s -j qdisc show dev s1 |
		jq -r '.[] | select(.handle == "10:") | "\(.drops // 0) \(.marked // 0)"'
}

# k_measure SECONDS: the samples of SECONDS, short flows from w3 into w1
# meanwhile (their JSON in $TEST_TMP/k.short); K_QUEUE the packets the
# bottleneck dropped and marked meanwhile, "DROPS, MARKS".
k_measure() {
	local pid q0 q1
	read -ra q0 <<<"$(k_queue)"
	ip netns exec w1 timeout $(($1 + 30)) /usr/bin/python3 "$SHORT_FLOWS" ask --host 10.0.3.1 \
		--port 5301 --size 10000 --every 100 --seconds "$1" >"$TEST_TMP/k.short" 2>/dev/null &
	pid=$!
	k_sample "$1"
	wait "$pid"
	read -ra q1 <<<"$(k_queue)"
	K_QUEUE="$((${q1[0]:-0} - ${q0[0]:-0})), $((${q1[1]:-0} - ${q0[1]:-0}))"
}

# k_short: the short flows' "P50 / P99 (FAILED)" in the last k_measure,
# "-" if none finished.
k_short() {
	local s
	s=$(jq -r '"\(.p50_ms) / \(.p99_ms) (\(.failed))"' "$TEST_TMP/k.short" 2>/dev/null)
	echo "${s:--}"
}

# k_tcp_phase SECONDS N QUEUE FLOWS PHASE: a phase of TCP alone, FLOWS
# connections; its rate in K_TCP_MBIT, its samples in the CSV as PHASE.
k_tcp_phase() {
	local -a r
	k_tcp $(($1 + 3)) "$4"
	sleep 1
	k_measure "$1"
	wait "${K_TCP[@]}"
	read -ra r <<<"$(k_rates 3)"
	K_TCP_MBIT=${r[1]}
	k_csv "$2" "$3" - "$5"
}

# k_netagg N TREES: the workers on job 1 (TREES trees on sw), 1 MiB
# allreduces in a loop, a JSON line each (--each), in the background
# (pids in K_PIDS); returns once w1 has finished its first, 300 s at most.
k_netagg() {
	local n=$1 trees=$2 i args
	K_PIDS=()
	for i in $(seq "$n"); do
		mapfile -t args < <(star_trees "$trees" "$i")
		timeout 900 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 1 "${args[@]}" \
			--rank $((i - 1)) --workers "$n" --count 262144 --iterations 100000 \
			--round "$ROUND" --timeout-ms 30000 --window "$window" -j --each \
			>"$TEST_TMP/k.w$i" 2>"$TEST_TMP/k.w$i.err" &
		K_PIDS+=($!)
	done
	ROUND=$((ROUND + 1000))
	for i in $(seq 600); do
		grep -q '"iteration"' "$TEST_TMP/k.w1" 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}

# k_netagg_stop: the workers stopped (in this shell: they are its
# children); K_OK true if every line of every worker says ok, K_REST
# "RETRANSMITS, LOSS_CUTS, CE_CUTS, WINDOW_MIN" of w1's lines.
k_netagg_stop() {
	local i
	kill "${K_PIDS[@]}" 2>/dev/null
	for i in "${K_PIDS[@]}"; do wait "$i" 2>/dev/null; done
	K_OK=true
	for i in "$TEST_TMP"/k.w[0-9]*; do
		case $i in *.err) continue ;; esac
		[ "$(jq -sr 'map(select(.iteration)) | length > 0 and all(.ok)' "$i")" = true ] ||
			K_OK=false
	done
	K_REST=$(jq -sr 'map(select(.iteration)) |
		"\(map(.retransmits) | add), \(map(.loss_cuts) | add), \(map(.ce_cuts) | add), \(map(.window_min) | min)"' \
		"$TEST_TMP/k.w1")
}

section_k() {
	local n q i trees secs=$seconds_k rate=$rate_k tcp_alone net tcp both jain
	local -a r
	mkdir -p "$(dirname "$CSV_K")"
	echo "workers,queue,trees,phase,t,netagg_mbit,tcp_mbit" >"$CSV_K"
	say "## (k) Sharing a link with TCP"
	say
	say "One bottleneck: sw's port towards w1, $rate Mbit/s (tbf), drop-tail (a"
	say "300 kB FIFO) or RED marking ECN-capable packets (average queue 30 to 85"
	say "packets; not ECN-capable ones, SYNs, dropped). Across it into w1: netagg's"
	say "results (all workers allreduce 1 MiB of float32 in a loop, sw the root of"
	say "the job's trees, every result checked), a TCP flow (iperf3, cubic, ECN on)"
	say "from w2, and short flows (10 kB replies on new connections, one every 100"
	say "ms) from w3. Four phases of $secs s each: TCP alone, two TCP flows (iperf3"
	say "-P 2: what a second bulk flow does to the short ones), netagg alone, both;"
	say "Mbit/s arriving at w1 (IP bytes), counted every half second by tc filters"
	say "on its link, from the 4th second of a phase. Jain's index of the two"
	say "rates in \"both\"; TCP's rate in \"both\" over TCP's alone; the short"
	say "flows' completion times and the packets the bottleneck dropped and"
	say "marked in each phase. netagg's retransmits, cuts of its window for losses"
	say "and for marks, and its least window are w1's."
	say
	say "| workers | queue | trees | phase | netagg Mbit/s | TCP Mbit/s | netagg share | Jain | TCP / alone | short flows p50 / p99 ms (failed) | queue drops, marks | netagg retransmits, loss cuts, CE cuts, least window |"
	say "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for n in "${workers_k[@]}"; do
		star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
		for i in $(seq "$n"); do ip netns exec "w$i" sysctl -qw net.ipv4.tcp_ecn=1; done
		k_counters || { echo "bench: no counters on w1 (act_gact?)" >&2; continue; }
		ip netns exec w3 timeout 3000 /usr/bin/python3 "$SHORT_FLOWS" serve --port 5301 \
			--size 10000 >/dev/null 2>&1 &
		for q in droptail red; do
			k_bottleneck "$q" "$rate" || { echo "bench: no bottleneck" >&2; continue; }
			k_tcp_phase "$secs" "$n" "$q" 1 tcp
			tcp_alone=$K_TCP_MBIT
			say "| $n | $q | - | TCP alone | - | $tcp_alone | | | 1.00 | $(k_short) | $K_QUEUE | |"
			# Two TCP flows: what a second bulk flow does to the short ones.
			k_tcp_phase "$secs" "$n" "$q" 2 tcp2
			say "| $n | $q | - | 2 TCP flows | - | $K_TCP_MBIT | | | | $(k_short) | $K_QUEUE | |"
			for trees in 1 4; do
				module_unload
				module_load && root_job 1 1500 "$n" "$trees" || { echo "bench: no job" >&2; continue; }
				# netagg alone.
				if ! k_netagg "$n" "$trees"; then
					echo "bench: netagg did not start" >&2
					cat "$TEST_TMP"/k.w*.err >&2
					k_netagg_stop
					continue
				fi
				k_measure "$secs"
				read -ra r <<<"$(k_rates 3)"
				net=${r[0]}
				k_netagg_stop
				k_csv "$n" "$q" "$trees" netagg
				[ "$K_OK" = true ] || net="$net (wrong)"
				say "| $n | $q | $trees | netagg alone | $net | - | | | | $(k_short) | $K_QUEUE | $K_REST |"
				# Both: netagg first, TCP joining a second later.
				if ! k_netagg "$n" "$trees"; then
					k_netagg_stop
					continue
				fi
				k_tcp $((secs + 3))
				k_measure "$secs"
				read -ra r <<<"$(k_rates 3)"
				net=${r[0]} tcp=${r[1]}
				k_netagg_stop
				wait "${K_TCP[@]}"
				k_csv "$n" "$q" "$trees" both
				both=$(awk -v a="$net" -v b="$tcp" 'BEGIN { if (a + b > 0) printf "%.0f %% / %.0f %%", 100 * a / (a + b), 100 * b / (a + b) }')
				jain=$(awk -v a="$net" -v b="$tcp" 'BEGIN { if (a * a + b * b > 0) printf "%.2f", (a + b) ^ 2 / (2 * (a * a + b * b)) }')
				[ "$K_OK" = true ] || net="$net (wrong)"
				say "| $n | $q | $trees | both | $net | $tcp | $both | $jain |" \
					"$(ratio "$tcp" "$tcp_alone") | $(k_short) | $K_QUEUE | $K_REST |"
			done
		done
		pkill -f "short-flows.py serve" 2>/dev/null
	done
	say
}
