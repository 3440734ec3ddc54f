#!/bin/bash
# The VM half of make bench (lab/bench/bench.sh starts it): the switch's cost
# per packet three ways, allreduce times, and how the cost scales. Writes a
# Markdown report to OUT and prints it. Every figure of a table is measured
# in this run, and each is also given as a ratio to that table's baseline.
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
# (c) Allreduce. netagg-allreduce on 4 and 8 workers, 1 to 64 MiB each,
#     through the module with one tree and with four (at MTU 1500 and 9000),
#     and through netagg-uagg; the time of the slowest worker, median of
#     REPS_C.
# (d) Scaling. One worker namespace sending from K addresses (children) to
#     the switch, with 1, 100 or 10,000 jobs configured on it: CPU 1 time
#     per packet against jobs (fan-in 4) and against fan-in (1 job).
#
# (f) Peers. netagg against Gloo (torch.distributed) and Open MPI on the star
#     of (c), routed and bridged (TOPOS_F), 4 and 8 workers, 1 to 64 MiB
#     each, links unlimited and shaped to 200 and 20 Mbit/s both ways: the
#     slowest worker's time, median of REPS_F after a warm-up, each after a
#     barrier, every result checked element by element; netagg on 1 tree
#     and on 4 (make demo's); and after each unshaped table, the
#     instructions per allreduced byte that make profile's (i) counted last.
#     Raw figures also go to CSV_F (lab/bench/bench.sh plots them). PEERS_F=0
#     runs netagg alone (its times and retransmissions, in minutes).
# (g) Cores. 4 workers, 16 MiB, netagg with 1 and 4 trees, everything on
#     one CPU, spread over two, or the switch on a CPU of its own (RPS).
# (h) Where the time goes. The allreduce of (g) with super-packets of 1 to
#     44 chunks: what a send costs, and what the bytes cost.
# (s) One straggler. 4 workers, SIZE_S MiB each, one tree on sw; w4's
#     contributions delayed by netem (DELAYS_S ms): the time of the slowest
#     worker that completed when the tree waits for all four and when its
#     quorum is 3 of 4 (straggler delay 0), median of REPS_S, every buffer
#     verified. Raw figures also go to CSV_S (lab/bench/bench.sh plots them).
# (t) Training. The example of make train (lab/train.sh, EPOCHS_T
#     epochs): time a DDP step with gloo's allreduce, with the netagg hook,
#     and with the hook blocking backward; ratios to gloo.
#
# Figures come from an emulated (TCG) VM: every instruction, the vector
# ones most, is far slower than on hardware. Compare ratios, not absolutes.
set -uo pipefail
source "$(dirname "$0")/../../tests/lib.sh"
source "$(dirname "$0")/../../tests/ktap.sh"
# The VM is the benchmark's own: every namespace in it is one of ours, some
# made in subshells that the lists of tests/lib.sh do not see.
trap 'pkill -f netagg-uagg; ip -all netns delete; cleanup_ns; module_unload' EXIT

# The kernel patches a static key into running code when its first user
# comes or its last goes: RPS with every topology steered here. Under TCG
# that patching has crashed the VM ("Oops: int3" in netif_rx_internal, the
# packet timestamp key then, which every ping flipped: no ping here now)
# while another CPU ran the site, so RPS stays on (on lo) for the whole run.
ip link set lo up
echo 1 >/sys/class/net/lo/queues/rx-0/rps_cpus

BLAST=$NETAGG_ROOT/tests/tools/netagg-blast
UAGG=$NETAGG_ROOT/tests/tools/netagg-uagg
out=${OUT:-$NETAGG_ROOT/tests/out/bench-vm.md}
packets=${PACKETS:-10000}	# VIDs a worker sends unpaced in (b)
window=${WINDOW:-64}	# VIDs in flight a tree: the jobs' and their workers'
reps=${REPS:-3}
reps_c=${REPS_C:-1}	# allreduces of each size in (c): the big ones take long
reps_d=${REPS_D:-5}	# rounds of (d): its figures are the noisiest
sizes=(${SIZES:-1 4 16 64})	# MiB per worker in (c)
fanins=(${FANINS:-2 4 8 16 32 64})
jobcounts=(${JOBS:-1 100 10000})
sections=${SECTIONS:-bcdefghst}
mkdir -p "$(dirname "$out")"
: >"$out"

say() { echo "$*" | tee -a "$out"; }

# CPU 1's busy time: the time that passed less the time it idled. The
# kernel measures idle time to the nanosecond (nohz idle accounting); its
# user, system and softirq times it only samples at the tick, and under TCG
# those samples came out 40 % low at light load and 20 % high at heavy load
# against the idle measure. cpu1_mark prints "NOW IDLE": the wall time in
# seconds and CPU 1's idle time in USER_HZ; cpu1_busy MARK0 MARK1 the
# seconds CPU 1 was busy between the two.
HZ=$(getconf CLK_TCK)
cpu1_mark() { echo "$(date +%s.%N) $(awk '$1 == "cpu1" { print $5 + $6 }' /proc/stat)"; }
cpu1_busy() {
	awk -v hz="$HZ" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.6f", (y[1] - x[1]) - (y[2] - x[2]) / hz }'
}

# While the switch's CPU is measured, this script and all it starts (ip,
# timeout, the workers before they pin themselves) run on CPU 0 only, so
# CPU 1's busy time is the switch's alone.
measure_cpu1() { taskset -pc 0 $$ >/dev/null; }
measure_done() { taskset -pc 0-$(($(nproc --all) - 1)) $$ >/dev/null; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { a += 0; b += 0; if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
secs() { awk -v t="$1" 'BEGIN { if (t + 0 > 0) printf "%.2f", t; else print t }'; }

# steer NS DEV MASK: receive processing of DEV in NS on the CPUs of MASK.
steer() { ip netns exec "$1" sh -c "echo $3 > /sys/class/net/$2/queues/rx-0/rps_cpus"; }

# star N MTU: topo_star with MTU on every link, workers routed to each
# other through sw, the switch's work on CPU 1 and the workers' on CPU 0.
# LINKS=nic: each link a pair of NICs (nic_star) instead of veth.
star() {
	local n=$1 mtu=$2 i
	ip -all netns delete
	NS_LIST=()
	if [ "${LINKS:-veth}" = nic ]; then
		nic_star "$n" || return 1
	else
		topo_star "$n" || return 1
	fi
	ip netns exec sw sysctl -qw net.ipv4.ip_forward=1
	for i in $(seq "$n"); do
		ip -n "w$i" link set v0 mtu "$mtu"
		ip -n sw link set "s$i" mtu "$mtu"
		ip -n "w$i" route add 10.0.0.0/16 via "10.0.$i.254"
		[ "${LINKS:-veth}" = nic ] && continue	# steered by their interrupts
		steer "w$i" v0 1
		steer sw "s$i" 2
	done
	for i in $(seq "$n"); do
		neighbour sw "s$i" "10.0.$i.1" "w$i" v0 &&
			neighbour "w$i" v0 "10.0.$i.254" sw "s$i" || return 1
	done
}

# nic_star N: topo_star's star, each link a pair of virtio-net NICs that a
# QEMU hub joins (lab/profile/profile.sh adds them, LINKS=nic) instead of a veth
# pair: a driver that receives into pages of its own and runs XDP on them
# before any skb exists, as a NIC's does. The worker's end of link i has
# the MAC address 52:54:00:0a:00:0i, the switch's 52:54:00:0b:00:0i; their
# interrupts, and so their receive processing, are on CPU 0 and CPU 1.
nic_star() {
	local i
	modprobe virtio_net || return 1
	setup_ns sw || return 1
	for i in $(seq "$1"); do
		setup_ns "w$i" || return 1
		nic_take "52:54:00:0a:00:0$i" "w$i" v0 1 &&
			nic_take "52:54:00:0b:00:0$i" sw "s$i" 2 || return 1
		ip -n "w$i" addr add "10.0.$i.1/24" dev v0
		ip -n sw addr add "10.0.$i.254/24" dev "s$i"
		ip -n "w$i" link set v0 up
		ip -n sw link set "s$i" up
	done
}

# nic_take MAC NS NAME CPUMASK: the NIC of MAC into NS, named NAME, its
# interrupts on the CPUs of CPUMASK.
nic_take() {
	local dev= virtio irq t
	# A namespace deleted gives its NICs back to this one a moment later.
	for t in $(seq 100); do
		dev=$(ip -j link show | jq -r --arg m "$1" '.[] | select(.address == $m) | .ifname')
		[ -n "$dev" ] && break
		sleep 0.1
	done
	if [ -z "$dev" ]; then
		echo "bench: no NIC $1 here (LINKS=nic: lab/profile/profile.sh adds them)" >&2
		return 1
	fi
	virtio=$(basename "$(readlink -f "/sys/class/net/$dev/device")")
	for irq in $(awk -v v="$virtio-" 'index($NF, v) == 1 { sub(":", "", $1); print $1 }' /proc/interrupts); do
		echo "$4" >"/proc/irq/$irq/smp_affinity" || return 1
	done
	ip link set dev "$dev" netns "$2" && ip -n "$2" link set dev "$dev" name "$3"
}

# neighbour NS DEV ADDR PEER_NS PEER_DEV: a permanent ARP entry in NS for
# ADDR, at PEER_DEV's MAC. Learnt by ARP instead, an entry stays in DELAY and
# PROBE for the first seconds of a run, in which every packet sent to it
# takes the slow path (neigh_resolve_output, about a sixth of netagg's cost
# per packet traced), in one way more than another; and while unresolved,
# the kernel queues only 212992 bytes for it, less than a window of jumbo
# frames, which the streams do not resend.
neighbour() {
	local mac
	mac=$(ip -n "$4" -j link show "$5" | jq -r '.[0].address') &&
		ip -n "$1" neigh replace "$3" dev "$2" lladdr "$mac" nud permanent
}

root_job() {	# JID MTU N [TREES [DTYPE]]: sw is the root of every tree of the job
	local jid=$1 mtu=$2 n=$3 trees=${4:-1} dtype=${5:-f32} t i kids=()
	for i in $(seq "$n"); do kids+=(child "10.0.$i.1"); done
	netagg_in sw job add "$jid" mtu "$mtu" window "$window" dtype "$dtype" || return 1
	for t in $(seq 0 $((trees - 1))); do
		netagg_in sw tree add job "$jid" tree "$t" role root "${kids[@]}" || return 1
	done
}

uagg_start() {	# N MTU: netagg-uagg on sw for N workers, on CPU 1
	local n=$1 mtu=$2 i kids=()
	for i in $(seq "$n"); do kids+=(--child "10.0.$i.1"); done
	ip netns exec sw "$UAGG" --job 1 --mtu "$mtu" --window "$window" --cpu 1 --rcvbuf 67108864 \
		"${kids[@]}" >"$TEST_TMP/uagg.json" 2>"$TEST_TMP/uagg.err" &
	UAGG_PID=$!
	sleep 0.5
}

uagg_stop() {
	kill -INT "$UAGG_PID" 2>/dev/null
	wait "$UAGG_PID" 2>/dev/null
}

# ---------------------------------------------------------------- (b)
# stream MODE MTU RATE PACKETS: "pps bytes_per_s cpu_us_per_packet
# cpu1_util" or "fail". RATE 0: as fast as the window allows.
stream() {
	local mode=$1 mtu=$2 rate=$3 n=$4 i dst pids=() rc=0 m0 m1 count el wait_first segs=()
	# What a packet of the MTU carries: IP 20, UDP 8, netagg header 24 bytes.
	count=$(( (mtu - 52) / 4 ))
	# -super: as many packets a UDP GSO send as 64 KiB takes (44 at 1500)
	[[ $mode == *-super ]] && segs=(--segments $(( 65507 / (mtu - 28) > 64 ? 64 : 65507 / (mtu - 28) )))
	m0=$(cpu1_mark)
	# Forwarding is a ring, w1 -> w2 -> w3 -> w4 -> w1: all but w1 wait
	# for their predecessor's first packet, so none goes to an unbound port.
	for i in 2 3 4 1; do
		wait_first=()
		if [[ $mode == forward* ]]; then
			dst=10.0.$((i % 4 + 1)).1
			[ "$i" = 1 ] && sleep 0.5 || wait_first=(--wait-first)
		else
			dst=10.0.$i.254
		fi
		timeout 300 ip netns exec "w$i" "$BLAST" --dst "$dst" --job 1 --tree 0 \
			--dtype "$([[ $mode == netagg-i32* ]] && echo i32 || echo f32)" \
			--count "$count" --packets "$n" --window "$window" --rate $((rate / 4)) \
			--round "$ROUND" --cpu 0 --timeout-ms 5000 "${wait_first[@]}" "${segs[@]}" \
			>"$TEST_TMP/blast.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	m1=$(cpu1_mark)
	ROUND=$((ROUND + 1))
	if [ $rc -ne 0 ]; then
		{
			echo "bench: $mode MTU $mtu rate $rate failed:"
			cat "$TEST_TMP"/blast.*
			[[ $mode == netagg* ]] && netagg_in sw stats
		} >&2
		echo fail
		return
	fi
	el=$(cat "$TEST_TMP"/blast.[1-4] | jq -s '[.[].elapsed_s] | max')
	awk -v p=$((4 * n)) -v el="$el" -v c="$count" -v busy="$(cpu1_busy "$m0" "$m1")" \
		-v wall="$(awk -v a="${m0%% *}" -v b="${m1%% *}" 'BEGIN { print b - a }')" 'BEGIN {
		printf "%.0f %.0f %.2f %.0f", p / el, p * c * 4 / el, busy / p * 1e6, busy / wall * 100 }'
}

# setup_mode MODE MTU: the switch of (b) for one way; stop_mode after it.
setup_mode() {
	star 4 "$2" || return 1
	module_unload
	case $1 in
	netagg|netagg-super) module_load && root_job 1 "$2" 4 ;;
	netagg-i32|netagg-i32-super) module_load && root_job 1 "$2" 4 1 i32 ;;
	netagg-noreuse) NETAGG_MODPARAMS=reuse=0 module_load && root_job 1 "$2" 4 ;;
	# The XDP hook (docs/xdp.md) on the switch's four ports, native.
	netagg-xdp) module_load && root_job 1 "$2" 4 && xdp_star 4 attach ;;
	uagg) uagg_start 4 "$2" ;;
	esac
}

# xdp_star N attach|detach: netagg's XDP program on sw's ports s1..sN.
xdp_star() {
	local i
	for i in $(seq "$1"); do
		netagg_in sw xdp "$2" "s$i" || return 1
	done
}

stop_mode() {
	[ "$1" = uagg ] && uagg_stop
	[ "$1" = netagg-xdp ] && xdp_star 4 detach
	module_unload
}

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

# ---------------------------------------------------------------- (c)
# allreduce N MIB ARGS...: seconds of the slowest of N workers, or "fail":
# each worker runs a warm-up, then ITER (default 1) timed allreduces; the
# median over them of the slowest worker's time. The warm-up waits for every
# worker, so no worker's time counts the others' start (as the peers of (f)
# start each after a barrier). PIN: the CPUs (taskset list) the workers run
# on, all when unset.
allreduce() {
	local n=$1 mib=$2 i pids=() rc=0 trees pin=() per
	shift 2
	[ -z "${PIN:-}" ] || pin=(taskset -c "$PIN")	# (g): the workers on these CPUs
	rm -f "$TEST_TMP"/ar.*	# every ar.* is read: none of a run of more workers
	for i in $(seq "$n"); do
		trees=()
		for t in $(seq 0 $((TREES - 1))); do trees+=(--tree "$t=10.0.$i.254"); done
		timeout 600 ip netns exec "w$i" "${pin[@]}" "$NETAGG_ALLREDUCE" --job 1 --rank $((i - 1)) \
			--workers "$n" --count $((mib * 262144)) --round "$ROUND" --window "$window" \
			--warmup --iterations "${ITER:-1}" \
			--timeout-ms 10000 -j "${trees[@]}" "$@" >"$TEST_TMP/ar.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	# A round an allreduce, and one each barrier before it.
	per=1
	[[ " $* " != *" --barrier "* ]] || per=2
	ROUND=$((ROUND + (1 + ${ITER:-1}) * per))
	if [ $rc -ne 0 ]; then
		cat "$TEST_TMP"/ar.* >&2
		echo fail
		return
	fi
	cat "$TEST_TMP"/ar.* | jq -s '[.[].times] | transpose | .[] | max' | median
}

section_c() {
	local n mib how t base res mtu
	local -A r=()
	say "## (c) allreduce completion time"
	say
	say "Slowest worker's time, median of $reps_c after a warm-up, one switch (root); MTU 1500"
	say "but for the last column; 4 trees: chunks spread over four trees of the"
	say "job, all rooted there; jumbo: 4 trees on links of MTU 9000 (7 chunks of"
	say "8948 bytes a super-packet, against 44 of 1448 at 1500)."
	say
	say "| workers | MiB each | netagg 1 tree (s) | netagg 4 trees (s) | 4 trees / 1 tree | userspace aggregator (s) | uagg / netagg 1 tree | netagg 4 trees, MTU 9000 (s) | jumbo / 4 trees |"
	say "|---|---|---|---|---|---|---|---|---|"
	for n in 4 8; do
		for mtu in 1500 9000; do
			star "$n" "$mtu"
			for i in $(seq "$n"); do
				steer "w$i" v0 0
				steer sw "s$i" 0
			done
			for mib in "${sizes[@]}"; do
				for how in one four uagg; do
					[ "$mtu" = 1500 ] || [ "$how" = four ] || continue
					module_unload
					case $how in
					one) TREES=1; module_load && root_job 1 "$mtu" "$n" 1 ;;
					four) TREES=4; module_load && root_job 1 "$mtu" "$n" 4 ;;
					uagg) TREES=1; uagg_start "$n" "$mtu" ;;
					esac
					# Not in $(...): allreduce counts ROUND up.
					ITER=$reps_c allreduce "$n" "$mib" --mtu "$mtu" >"$TEST_TMP/c.res"
					res=$(cat "$TEST_TMP/c.res")
					[ "$how" = uagg ] && uagg_stop
					[ "$res" = fail ] && res=failed
					r[$mtu,$mib,$how]=$res
				done
			done
		done
		module_unload
		for mib in "${sizes[@]}"; do
			say "| $n | $mib | $(secs "${r[1500,$mib,one]}") | $(secs "${r[1500,$mib,four]}") |" \
				"$(ratio "${r[1500,$mib,four]}" "${r[1500,$mib,one]}") | $(secs "${r[1500,$mib,uagg]}") |" \
				"$(ratio "${r[1500,$mib,uagg]}" "${r[1500,$mib,one]}") | $(secs "${r[9000,$mib,four]}") |" \
				"$(ratio "${r[9000,$mib,four]}" "${r[1500,$mib,four]}") |"
		done
	done
	say
	say "Ratios are of times: below 1 is faster than the column compared with."
	say
}

# ---------------------------------------------------------------- (d)
# One worker namespace wk sending from K addresses 10.0.1.1..K; sw root.
fanin_topo() {
	local k=$1 i
	ip -all netns delete
	NS_LIST=()
	setup_ns sw wk || return 1
	ip link add v0 netns wk type veth peer name s1 netns sw
	ip -n sw addr add 10.0.1.254/24 dev s1
	for i in $(seq "$k"); do ip -n wk addr add "10.0.1.$i/24" dev v0; done
	ip -n wk link set v0 up
	ip -n sw link set s1 up
	steer wk v0 1
	steer sw s1 2
	for i in $(seq "$k"); do
		neighbour sw s1 "10.0.1.$i" wk v0 || return 1
	done
	neighbour wk v0 10.0.1.254 sw s1
}

# scale K JOBS: CPU 1 µs per packet with K children and JOBS jobs, or "fail"
scale() {
	local k=$1 jobs=$2 i srcs=() kids=() m0 m1 jid
	fanin_topo "$k"
	module_unload
	module_load
	for i in $(seq "$k"); do
		srcs+=(--src "10.0.1.$i")
		kids+=(child "10.0.1.$i")
	done
	# The measured job sits amid the others: JIDs 1..JOBS, tree on each.
	jid=$(( (jobs + 1) / 2 ))
	seq "$jobs" | awk -v m="$jid" '$1 != m {
		print "job add " $1 " window 1 mtu 128"
		print "tree add job " $1 " tree 0 role root child 10.9.0.1" }' >"$TEST_TMP/jobs"
	netagg_in sw -b "$TEST_TMP/jobs" || return 1
	netagg_in sw job add "$jid" window "$window" || return 1
	netagg_in sw tree add job "$jid" tree 0 role root "${kids[@]}" || return 1
	m0=$(cpu1_mark)
	timeout 300 ip netns exec wk "$BLAST" --dst 10.0.1.254 --job "$jid" --tree 0 \
		"${srcs[@]}" --packets $(( 4 * packets / k )) --window "$window" \
		--cpu 0 --timeout-ms 5000 >"$TEST_TMP/blast" 2>&1 || { cat "$TEST_TMP/blast" >&2; echo fail; return; }
	m1=$(cpu1_mark)
	awk -v p=$(( 4 * packets / k * k )) -v busy="$(cpu1_busy "$m0" "$m1")" \
		'BEGIN { printf "%.2f", busy / p * 1e6 }'
}

section_d() {
	local k jobs rep res
	say "## (d) Scaling: switch CPU per packet"
	say
	say "CPU 1 busy time per packet taken in, MTU 1500, about $((4 * packets)) packets a run,"
	say "median of $reps_d runs, all configurations taking turns. The measured job's"
	say "JID is in the middle of the others; each other job has a tree of its own."
	say
	# Every configuration once a round: slow drift in the emulator's speed
	# then weighs on all of them alike.
	for rep in $(seq "$reps_d"); do
		for jobs in "${jobcounts[@]}"; do
			res=$(scale 4 "$jobs")
			[ "$res" = fail ] || echo "$res" >>"$TEST_TMP/d.jobs.$jobs"
		done
		for k in "${fanins[@]}"; do
			# The 1-job row above is the same configuration.
			[ "$k" = 4 ] && [[ " ${jobcounts[*]} " == *" 1 "* ]] && continue
			res=$(scale "$k" 1)
			[ "$res" = fail ] || echo "$res" >>"$TEST_TMP/d.fanin.$k"
		done
	done
	[ -e "$TEST_TMP/d.fanin.4" ] || cp "$TEST_TMP/d.jobs.1" "$TEST_TMP/d.fanin.4" 2>/dev/null
	d_table jobs "jobs configured | fan-in" 4 "vs 1 job" "${jobcounts[@]}"
	d_table fanin "fan-in | jobs" 1 "vs fan-in ${fanins[0]}" "${fanins[@]}"
}

# d_table KIND "COLUMNS" OTHER "VS" VALUES...: a row per value, the median
# of its runs ($TEST_TMP/d.KIND.VALUE) against the first value's.
d_table() {
	local kind=$1 cols=$2 other=$3 vs=$4 v f res base=
	shift 4
	say "| $cols | CPU µs/packet | $vs |"
	say "|---|---|---|---|"
	for v in "$@"; do
		f=$TEST_TMP/d.$kind.$v
		res=$( [ -s "$f" ] && median <"$f")
		[ -n "$base" ] || base=$res
		say "| $v | $other | ${res:-failed} | $(ratio "$res" "$base") |"
	done
	say
}

# ---------------------------------------------------------------- (e)
# Where the switch's time goes in the aggregation path: the function graph
# tracer's inclusive time of chosen functions over an unpaced stream. The
# tracer's own cost inflates every traced call (more so for short ones):
# read it as shares, not as the untraced cost.
TRACED="netagg_hook netagg_tree_rx netagg_sum netagg_scale netagg_xmit_alloc netagg_xmit
	pskb_copy __pskb_copy_fclone skb_copy_bits consume_skb nf_ip_checksum
	kernel_fpu_begin_mask kernel_fpu_end ip_local_out ip_route_output_key_hash"

section_e() {
	local T=/sys/kernel/tracing f n=3000 calls
	say "## (e) Where the time goes in the aggregation path"
	say
	say "MTU 1500, the stream of (b) unpaced, $n VIDs a worker; function graph"
	say "tracer on the functions below (inclusive times, tracing overhead included)."
	say "Per packet: total time over the packets the switch took in ($((4 * n)))."
	say
	setup_mode netagg 1500 || return
	echo 0 >$T/tracing_on
	echo function_graph >$T/current_tracer
	echo funcgraph-tail >$T/trace_options
	echo 65536 >$T/buffer_size_kb
	: >$T/set_ftrace_filter
	for f in $TRACED; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null; done
	: >$T/trace
	echo 1 >$T/tracing_on
	stream netagg 1500 0 "$n" >/dev/null
	echo 0 >$T/tracing_on
	say "| function | calls per packet | µs per call | µs per packet |"
	say "|---|---|---|---|"
	perl -ne '
		next unless /([0-9.]+) us\s+\|/;
		my $d = $1; my $fn;
		if (m{\} /\* ([\w.]+)(?: \[\w+\])? \*/}) { $fn = $1 }
		elsif (/([\w.]+)\(\);/) { $fn = $1 } else { next }
		$n{$fn}++; $t{$fn} += $d;
		END {
			printf "| %s | %.2f | %.2f | %.2f |\n", $_, $n{$_} / '"$((4 * n))"',
				$t{$_} / $n{$_}, $t{$_} / '"$((4 * n))"'
				for sort { $t{$b} <=> $t{$a} } keys %n
		}' $T/trace | tee -a "$out"
	echo nop >$T/current_tracer
	: >$T/set_ftrace_filter
	stop_mode netagg
	say
}

# ---------------------------------------------------------------- counts
# Instruction counts, where the VM runs under the QEMU plugin of
# lab/profile/insn-profile.c (make bench and make profile load it and name its
# directory PROF_DIR; without PROF_DIR, (f) reports times only).
# prof_snapshot [totals]: ask the plugin for a snapshot (all blocks' counts,
# or with "totals" only each vCPU's sums) and wait till it is taken; its
# number (mark.N, mark.N.totals) is then prof_snaps. Not in $(...).
prof_snaps=0
prof_snapshot() {
	local i
	# Written whole before the plugin can see it: it reads the word.
	echo "${1:-all}" >"$PROF_DIR/mark.tmp" && mv "$PROF_DIR/mark.tmp" "$PROF_DIR/mark"
	for i in $(seq 500); do
		[ -e "$PROF_DIR/mark" ] || { prof_snaps=$((prof_snaps + 1)); return 0; }
		sleep 0.02
	done
	echo "bench: no snapshot: is the plugin loaded?" >&2
	return 1
}

# timed_insns S0 S1: "TIMED USER KERNEL BEGINS ENDS OPEN" between totals
# snapshots S0 and S1: the instructions of every vCPU while a timed region
# was open (util/mark.h), those in user space and in the kernel, the
# regions begun and ended, and those open at S1.
timed_insns() {
	awk 'FNR == 1 { f++ }
		$1 == "cpu" { t[f] += $6; u[f] += $8; k[f] += $10 }
		$1 == "marks" { b[f] = $3; e[f] = $5; o = $7 }
		END { printf "%.0f %.0f %.0f %d %d %d\n", t[2] - t[1], u[2] - u[1],
			k[2] - k[1], b[2] - b[1], e[2] - e[1], o }' \
		"$PROF_DIR/mark.$1.totals" "$PROF_DIR/mark.$2.totals"
}

# ---------------------------------------------------------------- (f)
# netagg against the allreduce of two software stacks, on the star of (c),
# MTU 1500, float32: Gloo (torch.distributed, one Python process a worker
# namespace, rank 0's TCP store the rendezvous) and Open MPI (mpirun in sw
# starts an orted in each worker namespace through lab/bench/netns-rsh; TCP).
# Both sum by transfers between the workers, through sw; netagg sends each
# worker's data to sw once and gets the sum back once. On a shaped link that
# is the whole difference: an allreduce among the workers moves at least
# 2(n-1)/n times the buffer each way of every worker's link (a ring does
# just that), netagg once, so netagg's time can at best be n/(2(n-1)) of
# theirs ("wire limit").
GLOO=$NETAGG_ROOT/lab/bench/gloo-allreduce.py
MPI_ALLREDUCE=$NETAGG_ROOT/tests/out/mpi-allreduce
CSV_F=${CSV_F:-$NETAGG_ROOT/tests/out/bench-peers.csv}
CSV_S=${CSV_S:-$NETAGG_ROOT/tests/out/bench-straggler.csv}
sizes_f=(${SIZES_F:-1 16 64})	# MiB per worker
workers_f=(${WORKERS_F:-4 8})
rates_f=(${RATES_F:-0 200 20})	# Mbit/s of every link each way, 0: unshaped
reps_f=${REPS_F:-3}
peers_f=${PEERS_F:-1}	# 0: netagg alone (its times and retransmits), no peer
topos_f=(${TOPOS_F:-routed bridged})	# the switch: routing between its ports, or bridging them
declare -A F=() RT=()	# F[RATE,N,MIB,SYSTEM]: seconds, wrong or failed; RT: retransmits
F_PORT=29500

# shape RATE N: tbf at RATE Mbit/s on both ends of every link of star N.
# The queue (latency: 168 ms at 200 Mbit/s, 1678 ms at 20) holds 4 MiB, so
# that the shaper drops nothing and each system gets the rate, never loses
# to it: more than netagg's deepest burst (a window of 64 VIDs on each of 4
# trees, 384 KiB, and the same again of retransmissions) and than the
# window TCP's autotuning reaches with the default tcp_rmem (6 MiB buffer,
# 3 MiB window), on a link that two or three connections share in a ring.
# The table says how many packets the shapers dropped all the same. The
# bucket (burst) holds 2 ms at the rate, at least 8 frames: the guest's
# timers fire late under TCG, and a bucket of a frame or two would leave
# the link idle, the rate short of RATE; 2 ms is still small against the
# transfers (1 MiB takes 42 ms at 200 Mbit/s).
shape() {
	local rate=$1 n=$2 i burst lat
	burst=$((rate * 250))	# bytes in 2 ms: rate * 10^6 / 8 * 0.002
	[ "$burst" -ge 12112 ] || burst=12112
	lat=$((8 * 4194304 / (rate * 1000)))ms
	for i in $(seq "$n"); do
		tc -n "w$i" qdisc replace dev v0 root tbf rate "${rate}mbit" burst "$burst" latency "$lat" &&
			tc -n sw qdisc replace dev "s$i" root tbf rate "${rate}mbit" burst "$burst" latency "$lat" ||
			return 1
	done
}

# shaper_drops N: packets the tbf qdiscs of star N dropped so far.
shaper_drops() {
	local i
	{
		for i in $(seq "$1"); do
			tc -n "w$i" -s -j qdisc show dev v0
			tc -n sw -s -j qdisc show dev "s$i"
		done
	} | jq -s '[.[][] | select(.kind == "tbf") | .drops] | add // 0'
}

# f_result RATE N SYSTEM FILE...: from the peers' JSON lines in FILEs, for
# each size: the median over reps of the slowest rank's seconds; "wrong"
# when a rank saw a wrong element, "failed" when lines are missing.
f_result() {
	local rate=$1 n=$2 sys=$3 mib r
	shift 3
	for mib in "${sizes_f[@]}"; do
		# Other output (warnings) is skipped: only whole JSON objects.
		cat "$@" | jq -cR "fromjson? | select(.mib == $mib)" >"$TEST_TMP/f.lines"
		if [ "$(jq -s 'any(.ok != true)' "$TEST_TMP/f.lines")" = true ]; then
			r=wrong
		elif [ "$(wc -l <"$TEST_TMP/f.lines")" -ne $((n * reps_f)) ]; then
			r=failed
		else
			r=$(jq -s 'group_by(.rep)[] | map(.seconds) | max' "$TEST_TMP/f.lines" | median)
		fi
		F[$rate,$n,$mib,$sys]=$r
		[ "$r" = wrong ] || [ "$r" = failed ] && { echo "bench: $sys, $n workers, $mib MiB, $rate Mbit/s: $r" >&2; tail -n 20 "$@" >&2; }
	done
}

# A peer's run of all sizes may take this long before it is killed: the
# sizes' allreduces at 4 s a MiB (TCG) plus the wire time of a ring at RATE.
f_timeout() {
	local rate=$1 total=0 mib
	for mib in "${sizes_f[@]}"; do total=$((total + mib)); done
	echo $((600 + (reps_f + 1) * total * (4 + (rate > 0 ? (20 + rate - 1) / rate : 0))))
}

f_gloo() {	# RATE N: every size, one process a worker namespace
	local rate=$1 n=$2 i pids=()
	rm -f "$TEST_TMP"/gloo.*
	F_PORT=$((F_PORT + 1))	# a fresh port: no listener of a run before in the way
	for i in $(seq "$n"); do
		GLOO_SOCKET_IFNAME=v0 timeout "$(f_timeout "$rate")" ip netns exec "w$i" "$GLOO" \
			--rank $((i - 1)) --workers "$n" --master "10.0.1.1:$F_PORT" \
			--reps "$reps_f" "${sizes_f[@]}" >"$TEST_TMP/gloo.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	f_result "$rate" "$n" gloo "$TEST_TMP"/gloo.*
}

# Open MPI: mpirun in sw (it reaches every worker namespace, and their
# daemons reach it back over the links), one slot on each "host" w1..wN.
# Every orted believes it has a machine to itself, so ranks are not bound
# (all would be bound to CPU 0); ob1 over btl tcp, on the links only.
f_mpi() {	# RATE N
	local rate=$1 n=$2
	seq "$n" | sed 's/.*/w& slots=1/' >"$TEST_TMP/hosts"
	ip netns exec sw timeout "$(f_timeout "$rate")" mpirun --allow-run-as-root \
		-np "$n" --hostfile "$TEST_TMP/hosts" --map-by node --bind-to none \
		--mca plm_rsh_agent "$NETAGG_ROOT/lab/bench/netns-rsh" --mca plm_rsh_no_tree_spawn 1 \
		--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.0.0.0/16 \
		--mca oob_tcp_if_include 10.0.0.0/16 \
		"$MPI_ALLREDUCE" --reps "$reps_f" "${sizes_f[@]}" >"$TEST_TMP/mpi.out" 2>&1
	f_result "$rate" "$n" openmpi "$TEST_TMP/mpi.out"
}

# f_netagg RATE N HOW TREES: allreduce of (c), sw the root of TREES trees;
# each worker one process: a warm-up, then REPS_F timed allreduces, each
# after a barrier (--barrier), as the peers'.
f_netagg() {
	local rate=$1 n=$2 how=$3 mib res setup=ok
	TREES=$4
	module_unload
	module_load && root_job 1 1500 "$n" "$TREES" || setup=failed
	# HOW xdp: the XDP hook on sw's ports as well (docs/xdp.md).
	[ "$how" != xdp ] || [ "$setup" != ok ] || xdp_star "$n" attach || setup=failed
	[ -z "${PROF_KALLSYMS:-}" ] || cat /proc/kallsyms >"$PROF_KALLSYMS"
	for mib in "${sizes_f[@]}"; do
		res=failed
		if [ "$setup" = ok ]; then
			rm -f "$TEST_TMP"/ar.*	# allreduce reads every ar.*: none of more workers
			# Not in $(...): allreduce counts ROUND up.
			# After a barrier each, as the peers' (bench/). Counted (i), the
			# VM runs 3 to 7 times slower, and 8 workers filling their
			# buffers on 2 vCPUs before they join take longer than the
			# 10 s a worker waits without progress.
			ITER=$reps_f allreduce "$n" "$mib" --barrier \
				${PROF_KALLSYMS:+--timeout-ms 120000} >"$TEST_TMP/f.res"
			res=$(cat "$TEST_TMP/f.res")
		fi
		# -j reports a wrong buffer (exit 3) as "ok": false
		[ "$res" = fail ] && grep -Eqs '"ok": ?false' "$TEST_TMP"/ar.* && res=wrong
		[ "$res" = fail ] && res=failed
		F[$rate,$n,$mib,netagg-$how]=$res
		RT[$rate,$n,$mib,$how]=-
		[ "$res" = failed ] || [ "$res" = wrong ] ||
			RT[$rate,$n,$mib,$how]=$(jq -rs --argjson r "$reps_f" \
				'"\(map(.retransmits) | add / $r | round) (\(map(.probes) | add / $r | round))"' \
				"$TEST_TMP"/ar.*)
	done
	# Counted (section i): the switch's counters beside the symbols.
	[ -z "${PROF_KALLSYMS:-}" ] || netagg_in sw -j stats >"${PROF_KALLSYMS/kallsyms/stats}"
	[ "$how" != xdp ] || xdp_star "$n" detach
	module_unload
}

# f_timed RATE N CMD...: CMD, and how long it took on stderr (progress, and
# what f_timeout has to allow).
f_timed() {
	local t0=$SECONDS
	"${@:3}"
	echo "bench: (f) $1 Mbit/s, $2 workers: ${*:3} took $((SECONDS - t0)) s" >&2
}

# bridge N: star N's switch made a bridge (bridge_star), with permanent
# neighbours as star has them.
bridge() {
	local n=$1 i
	bridge_star "$n" || return 1
	for i in $(seq "$n"); do
		neighbour sw br0 "10.0.$i.1" "w$i" v0 &&
			neighbour "w$i" v0 "10.0.$i.254" sw br0 || return 1
	done
}

# f_run RATE N SYSTEM CMD...: CMD (f_gloo, f_mpi or f_netagg, with its
# arguments) for the sizes of SIZES_F. Under the plugin (section i) each
# size runs on its own between two snapshots, and a line "TOPOLOGY,N,MIB,
# SYSTEM,RUN,INSNS_PER_BYTE,USER_SHARE,S0,S1" goes to PROF_DIR/peers.csv:
# the whole VM's instructions while any worker was inside a timed
# allreduce (each marks its own: util/mark.h), per byte of one
# worker's buffer and per allreduce, the share of them in user space, and
# the snapshots (full: profile.sh lists the functions they went to).
f_run() {
	local rate=$1 n=$2 sys=$3 mib s0 t u k b e o ib us
	shift 3
	if [ -z "${PROF_DIR:-}" ]; then
		f_timed "$rate" "$n" "$@"
		return
	fi
	local -a all=("${sizes_f[@]}")
	for mib in "${all[@]}"; do
		local -a sizes_f=("$mib")	# what CMD runs
		# f_netagg leaves the kernel's symbols here, its module loaded.
		PROF_KALLSYMS=$PROF_DIR/kallsyms.$topo.$n.$mib.$sys.$prof_run
		ib=- us=-
		prof_snapshot && s0=$prof_snaps || s0=
		f_timed "$rate" "$n" "$@"
		if [ -n "$s0" ] && prof_snapshot; then
			read -r t u k b e o < <(timed_insns "$s0" "$prof_snaps")
			if [ "$b" -eq $((n * reps_f)) ] && [ "$e" -eq "$b" ] && [ "$o" -eq 0 ]; then
				ib=$(awk -v t="$t" -v r="$reps_f" -v m="$mib" \
					'BEGIN { printf "%.2f", t / (r * m * 1048576) }')
				us=$(awk -v t="$t" -v u="$u" 'BEGIN { if (t > 0) printf "%.2f", u / t; else print "-" }')
			else
				echo "bench: (i) $sys, $n workers, $mib MiB: $b timed allreduces begun, $e ended," \
					"$o open, where $((n * reps_f)) were run: no count" >&2
			fi
		fi
		echo "$topo,$n,$mib,$sys,$prof_run,$ib,$us,$s0,$prof_snaps" >>"$PROF_DIR/peers.csv"
	done
	PROF_KALLSYMS=
}

# insn_table CSV TOPOLOGY: the instructions per allreduced byte of CSV
# (PROF_DIR/peers.csv of a make profile run) for TOPOLOGY, a row a worker
# count and size (the first run of each), as a Markdown table.
insn_table() {
	echo "| workers | MiB | Gloo | Open MPI | netagg 1 tree | netagg 4 trees | netagg 4 trees / best peer | user space: Gloo / Open MPI / netagg 4 trees | netagg 4 trees, XDP hook |"
	echo "|---|---|---|---|---|---|---|---|---|"
	awk -F, -v topo="$2" 'NR > 1 && $1 == topo && $5 == 1 {
		k = $2 "," $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		ib[k, $4] = $6; us[k, $4] = $7 }
		function pct(v) { return v == "-" || v == "" ? "-" : sprintf("%.0f%%", 100 * v) }
		function num(v) { return v == "" ? "-" : v }
		END { for (i = 1; i <= nk; i++) { k = keys[i]; split(k, f, ",")
			best = ""
			if (ib[k, "gloo"] != "-" && ib[k, "gloo"] != "") best = ib[k, "gloo"] + 0
			if (ib[k, "openmpi"] != "-" && ib[k, "openmpi"] != "" && (best == "" || ib[k, "openmpi"] + 0 < best)) best = ib[k, "openmpi"] + 0
			r = (best != "" && ib[k, "netagg-best"] != "-" && ib[k, "netagg-best"] != "") ? sprintf("%.2f", ib[k, "netagg-best"] / best) : "-"
			printf "| %s | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s |\n", f[1], f[2],
				num(ib[k, "gloo"]), num(ib[k, "openmpi"]), num(ib[k, "netagg-demo"]),
				num(ib[k, "netagg-best"]), r, pct(us[k, "gloo"]), pct(us[k, "openmpi"]),
				pct(us[k, "netagg-best"]), num(ib[k, "netagg-xdp"]) } }' "$1"
}

section_f() {
	local topo rate n mib sys best drops wire i xh= xs= xv
	local -a systems=(gloo openmpi netagg-demo netagg-best)
	# XDP_F=1: netagg on 4 trees again, with the XDP hook on sw's ports.
	if [ "${XDP_F:-0}" = 1 ]; then
		systems+=(netagg-xdp)
		xh=" netagg 4 trees, XDP hook s |" xs="---|"
	fi
	[ -x "$MPI_ALLREDUCE" ] && [ "$MPI_ALLREDUCE" -nt "$NETAGG_ROOT/lab/bench/mpi-allreduce.c" ] ||
		make -s -C "$NETAGG_ROOT" tests/out/mpi-allreduce >&2
	mkdir -p "$(dirname "$CSV_F")"
	echo "topology,regime_mbit,workers,mib,system,seconds" >"$CSV_F"
	say "## (f) netagg against Gloo and Open MPI"
	say
	# The guest's /var/lib is empty (tmpfs): no dpkg database to ask.
	say "The star of (c), MTU 1500, float32: Gloo (torch" \
		"$(/usr/bin/python3 -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null),"
	say "one process a worker) and Open MPI ($(mpirun --version 2>/dev/null | sed -n '1s/.* //p'), MPI_Allreduce over TCP) run their"
	say "own allreduce between the workers, through sw; netagg on one tree rooted on"
	say "sw, and on four (as make demo has them). Slowest worker's time, median of"
	say "$reps_f after a warm-up, each after a barrier (netagg's: an allreduce of one"
	say "element); every element of every result checked (a wrong one shows as"
	say "\"wrong\", never a time). Ratio: netagg on 4 trees over the faster peer, below"
	say "1 netagg is faster. Retransmits (probes): netagg's, all workers', per"
	say "allreduce (1 tree / 4 trees)."
	say
	say "Routed: sw routes between its ports (10.0.i.254 on port si). Bridged: the"
	say "ports are in br0, which has those addresses: every packet enters and leaves"
	say "sw through the bridge."
	say
	say "Unshaped, the figures are the emulated CPUs' more than the links': TCP's"
	say "segments cross the veth links as 64 KB GSO packets, sw forwarding each"
	say "whole, where netagg's are 1500-byte datagrams, each summed on sw. A shaper"
	say "cuts those larger than its bucket (2 ms at its rate, at least 8 frames) into"
	say "frames of the MTU."
	say
	# Instruction counts are make profile's (the plugin slows the VM, so a
	# run that counts cannot time): its last run's, where there is one.
	local icsv=$NETAGG_ROOT/tests/out/profile/peers.csv
	[ -s "$icsv" ] || icsv=
	if [ -n "$icsv" ]; then
		say "Instructions: whole-VM instructions per allreduced byte, as the last"
		say "make profile counted them ($(date -u -r "$icsv" '+%Y-%m-%d %H:%M UTC'), docs/performance.md says"
		say "how), after each unshaped table: they do not move between boots, as times do."
		say
	fi
	for topo in "${topos_f[@]}"; do
	for rate in "${rates_f[@]}"; do
		if [ "$rate" = 0 ]; then
			say "### $topo switch, links unshaped"
			say
			say "| workers | MiB | Gloo s | Open MPI s | netagg 1 tree s | netagg 4 trees s | netagg 4 trees / best peer | netagg retransmits (probes) per allreduce |$xh"
			say "|---|---|---|---|---|---|---|---|$xs"
		else
			say "### $topo switch, links shaped to $rate Mbit/s each way (tbf)"
			say
			say "| workers | MiB | Gloo s | Open MPI s | netagg 1 tree s | netagg 4 trees s | netagg 4 trees / best peer | wire limit n/(2(n-1)) | netagg retransmits (probes) per allreduce |$xh"
			say "|---|---|---|---|---|---|---|---|---|$xs"
		fi
		drops=0
		for n in "${workers_f[@]}"; do
			star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
			[ "$topo" = routed ] || bridge "$n" || { echo "bench: no bridge on sw" >&2; continue; }
			for i in $(seq "$n"); do	# as in (c): no steering
				steer "w$i" v0 0
				steer sw "s$i" 0
			done
			[ "$rate" = 0 ] || shape "$rate" "$n" || { echo "bench: tbf failed" >&2; continue; }
			module_unload
			if [ "$peers_f" != 0 ]; then
				f_run "$rate" "$n" gloo f_gloo "$rate" "$n"
				f_run "$rate" "$n" openmpi f_mpi "$rate" "$n"
			else
				for mib in "${sizes_f[@]}"; do
					F[$rate,$n,$mib,gloo]=-
					F[$rate,$n,$mib,openmpi]=-
				done
			fi
			f_run "$rate" "$n" netagg-demo f_netagg "$rate" "$n" demo 1
			f_run "$rate" "$n" netagg-best f_netagg "$rate" "$n" best 4
			[ -z "$xh" ] || f_run "$rate" "$n" netagg-xdp f_netagg "$rate" "$n" xdp 4
			[ "$rate" = 0 ] || drops=$((drops + $(shaper_drops "$n")))
			for mib in "${sizes_f[@]}"; do
				for sys in "${systems[@]}"; do
					echo "$topo,$rate,$n,$mib,$sys,${F[$rate,$n,$mib,$sys]}" >>"$CSV_F"
				done
				best=$(printf '%s\n' "${F[$rate,$n,$mib,gloo]}" "${F[$rate,$n,$mib,openmpi]}" |
					grep -E '^[0-9.e+-]+$' | sort -g | head -n 1)
				wire=	# the column of shaped links only
				[ "$rate" = 0 ] || wire=$(awk -v n="$n" 'BEGIN { printf " %.2f |", n / (2 * (n - 1)) }')
				xv=
				[ -z "$xh" ] || xv=" $(secs "${F[$rate,$n,$mib,netagg-xdp]}") (${RT[$rate,$n,$mib,xdp]}) |"
				say "| $n | $mib | $(secs "${F[$rate,$n,$mib,gloo]}") | $(secs "${F[$rate,$n,$mib,openmpi]}") |" \
					"$(secs "${F[$rate,$n,$mib,netagg-demo]}") | $(secs "${F[$rate,$n,$mib,netagg-best]}") |" \
					"$(ratio "${F[$rate,$n,$mib,netagg-best]}" "${best:-0}") |$wire" \
					"${RT[$rate,$n,$mib,demo]} / ${RT[$rate,$n,$mib,best]} |$xv"
			done
		done
		say
		[ "$rate" = 0 ] || { say "The shapers dropped $drops packets in this regime."; say; }
		[ -n "$icsv" ] && [ "$rate" = 0 ] || continue
		say "Instructions per allreduced byte ($topo switch, unshaped, make profile)"
		say
		insn_table "$icsv" "$topo" | tee -a "$out"
		say
	done
	done
}

# ---------------------------------------------------------------- (g)
# Cores: how the switch's work spreads over the VM's two CPUs. On veth a
# packet is received on the CPU that sent it (the peer's backlog, or its
# NAPI, is scheduled there), so without RPS the switch sums on whichever
# CPU the sending worker runs: its work follows the workers. Each tree has
# its own lock, so with several trees both CPUs can sum at once; with one,
# they take turns at it. Three placements of 4 workers, 16 MiB, 1 and 4
# trees:
#   one CPU      workers pinned to CPU 0, no RPS: everything on CPU 0
#   two CPUs     workers unpinned, no RPS (as in (f), and as make demo)
#   switch CPU   workers pinned to CPU 0, RPS of sw's links on CPU 1: the
#                switch has a CPU of its own, as a separate machine would
# cpu_marks: "seconds busy0 busy1 softirq0 softirq1", jiffies from /proc/stat.
cpu_marks() {
	echo "$(date +%s.%N) $(awk '$1 == "cpu0" || $1 == "cpu1" {
		b[$1] = $2 + $3 + $4 + $7 + $8 + $9; s[$1] = $8 }
		END { print b["cpu0"], b["cpu1"], s["cpu0"], s["cpu1"] }' /proc/stat)"
}

# cpu_use MARK0 MARK1: "CPU0% CPU1% softirq0% softirq1%" of the wall time.
cpu_use() {
	awk -v hz="$HZ" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " "); w = y[1] - x[1]
		for (i = 2; i <= 5; i++) printf "%.0f ", (y[i] - x[i]) / hz / w * 100 }'
}

section_g() {
	local place trees n=4 mib=16 m0 m1 res i rps cpus base
	local -A T=() U=()
	say "## (g) Cores: the switch on one CPU and on two"
	say
	say "4 workers, $mib MiB each, MTU 1500, netagg with 1 and 4 trees (one job,"
	say "sw the root of all). one CPU: the workers pinned to CPU 0, and with"
	say "them the switch (veth receives on the sender's CPU); two CPUs: nothing"
	say "pinned, the switch works on the CPU of whichever worker sent; switch CPU:"
	say "the workers on CPU 0, the switch's receive steered to CPU 1 (RPS), as if"
	say "it were a machine of its own. Median of $reps_f after a warm-up; busy and"
	say "softirq: share of the wall time, CPU 0 / CPU 1, over the warm-up and the"
	say "timed runs."
	say
	say "| placement | trees | seconds | vs one CPU, same trees | busy % CPU 0 / 1 | softirq % CPU 0 / 1 |"
	say "|---|---|---|---|---|---|"
	for place in one two switch; do
		case $place in
		one) PIN=0 rps=0 ;;
		two) PIN= rps=0 ;;
		switch) PIN=0 rps=2 ;;
		esac
		star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
		for i in $(seq "$n"); do
			steer "w$i" v0 0
			steer sw "s$i" "$rps"
		done
		for trees in 1 4; do
			TREES=$trees
			module_unload
			module_load && root_job 1 1500 "$n" "$trees" || { echo "bench: (g) no job" >&2; continue; }
			m0=$(cpu_marks)
			ITER=$reps_f allreduce "$n" "$mib" >"$TEST_TMP/g.res"
			m1=$(cpu_marks)
			res=$(cat "$TEST_TMP/g.res")
			[ "$res" = fail ] && res=failed
			T[$place,$trees]=$res
			U[$place,$trees]=$(cpu_use "$m0" "$m1")
			module_unload
		done
	done
	PIN=
	for place in one two switch; do
		case $place in
		one) cpus="one CPU" ;;
		two) cpus="two CPUs" ;;
		switch) cpus="switch CPU" ;;
		esac
		for trees in 1 4; do
			base=${T[one,$trees]:-0}
			set -- ${U[$place,$trees]:-- - - -}
			say "| $cpus | $trees | $(secs "${T[$place,$trees]:-failed}") |" \
				"$(ratio "${T[$place,$trees]:-0}" "$base") | $1 / $2 | $3 / $4 |"
		done
	done
	say
}

# ---------------------------------------------------------------- (h)
# Where the time goes: the same allreduce (4 workers, 16 MiB, one tree) with
# super-packets of at most SEGS chunks each, 1 (plain packets) to 44. What a
# send costs (the stack, the hook's lookup, a lock hold, the library's
# batch) is paid once a super-packet; the sums, copies and checksums once a
# byte. A least-squares line through (sends per worker, time) splits them:
# its slope is the cost of one more send, its intercept what the bytes cost
# with sends free.
section_h() {
	local n=4 mib=16 segs res sends fit
	local -a segments=(${SEGS_H:-1 2 4 11 22 44})
	say "## (h) Where the time goes: per super-packet and per byte"
	say
	say "4 workers, $mib MiB each, MTU 1500, one tree; super-packets of at most"
	say "SEGS chunks (1448 bytes of gradient each; 1: plain packets). Time: the"
	say "slowest worker's, median of $reps_f after a warm-up; sends: datagrams"
	say "(plain or super) a worker sent per allreduce, retransmissions included."
	say
	say "| SEGS | sends per worker | seconds | vs plain |"
	say "|---|---|---|---|"
	star "$n" 1500 || { echo "bench: no star of $n" >&2; return; }
	for i in $(seq "$n"); do
		steer "w$i" v0 0
		steer sw "s$i" 0
	done
	: >"$TEST_TMP/h.points"
	TREES=1
	for segs in "${segments[@]}"; do
		module_unload
		module_load && root_job 1 1500 "$n" 1 || { echo "bench: (h) no job" >&2; continue; }
		rm -f "$TEST_TMP"/ar.*
		ITER=$reps_f allreduce "$n" "$mib" --segments "$segs" >"$TEST_TMP/h.res"
		res=$(cat "$TEST_TMP/h.res")
		module_unload
		if [ "$res" = fail ]; then
			say "| $segs | - | failed | - |"
			continue
		fi
		sends=$(jq -s --argjson r "$reps_f" 'map(.sends) | add / length / $r | round' "$TEST_TMP"/ar.*)
		echo "$segs $sends $res" >>"$TEST_TMP/h.points"
		say "| $segs | $sends | $(secs "$res") | $(ratio "$res" "$(awk 'NR == 1 { print $3 }' "$TEST_TMP/h.points")") |"
	done
	say
	fit=$(awk -v bytes=$((mib * 1048576)) '{ x[NR] = $2; y[NR] = $3; sx += $2; sy += $3 }
		END {
			if (NR < 2) exit
			mx = sx / NR; my = sy / NR
			for (i = 1; i <= NR; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
			if (sxx == 0) exit
			b = sxy / sxx; a = my - b * mx
			for (i = 1; i <= NR; i++) { e = y[i] - a - b * x[i]; r += e * e; t += (y[i] - my) ^ 2 }
			printf "%.1f %.3f %.1f %.3f", b * 1e6, a, a / bytes * 1e9, (t > 0 ? 1 - r / t : 1)
		}' "$TEST_TMP/h.points")
	if [ -n "$fit" ]; then
		set -- $fit
		say "Fit, time = a + b x sends: b = $1 µs a send (everything a datagram costs,"
		say "on the worker, the switch and back), a = $2 s for the bytes alone, $3 ns"
		say "a byte of one worker's gradient (R² $4). At $(awk 'END { print $1 }' "$TEST_TMP/h.points") chunks a super-packet the"
		say "sends cost $(awk -v b="$1" -v p="$(awk 'END { print $2 }' "$TEST_TMP/h.points")" -v t="$(awk 'END { print $3 }' "$TEST_TMP/h.points")" \
			'BEGIN { printf "%.0f", b * p / 1e6 / t * 100 }')% of the time, the bytes the rest."
	else
		say "No fit: fewer than two runs succeeded."
	fi
	say
}

# ---------------------------------------------------------------- (p)
# Instruction profile (lab/profile/profile.sh, whose QEMU plugin counts the
# guest instructions every vCPU runs): for each way of MODES and MTU of
# MTUS, the kernel's symbols, then two unpaced streams, of PROF_PACKETS and
# of three times as many VIDs a worker, with a snapshot of the counts
# before, between and after. Each stream costs a fixed part (its start and
# end, the idle ticks around it) and a part per packet; the difference of
# the two is the second alone, for 8 x PROF_PACKETS packets. Lines "MODE
# MTU PROF_PACKETS S1 S2 S3" (snapshot numbers) go to PROF_DIR/runs.
section_p() {
	local mode mtu n=${PROF_PACKETS:-2000} snap res1 res2
	: >"$PROF_DIR/runs"
	for mtu in ${MTUS:-1500}; do
		for mode in ${MODES:-forward netagg netagg-i32}; do
			setup_mode "$mode" "$mtu" || return 1
			cat /proc/kallsyms >"$PROF_DIR/kallsyms.$mode.$mtu"
			prof_snapshot || return 1
			snap=$((prof_snaps - 1))
			# Not in $(...): the second stream needs the round the
			# first one counted up.
			stream "$mode" "$mtu" 0 "$n" >"$TEST_TMP/prof.1"
			prof_snapshot || return 1
			stream "$mode" "$mtu" 0 $((3 * n)) >"$TEST_TMP/prof.2"
			prof_snapshot || return 1
			res1=$(cat "$TEST_TMP/prof.1") res2=$(cat "$TEST_TMP/prof.2")
			[[ $mode == netagg* ]] && netagg_in sw -j stats >"$PROF_DIR/stats.$mode.$mtu"
			stop_mode "$mode"
			[ "$res1" != fail ] && [ "$res2" != fail ] || return 1
			echo "$mode $mtu $n $((snap + 1)) $((snap + 2)) $((snap + 3))" >>"$PROF_DIR/runs"
		done
	done
}

# ---------------------------------------------------------------- (i)
# Instructions per allreduced byte (make profile: the VM runs under the
# plugin, which counts every guest instruction): the systems of (f) on the
# unshaped star, routed and bridged (TOPOS_F), WORKERS_I workers, SIZES_I
# MiB, REPS_I timed allreduces each after a warm-up; the first cell (4
# workers, the first size, routed) twice, to show the count repeats.
# SYSTEMS_I: which of gloo, openmpi, netagg-demo, netagg-best (all of
# these by default) and netagg-xdp (netagg-best with the XDP hook on sw's
# ports).
# f_run writes PROF_DIR/peers.csv; the report is insn_table's.
section_i() {
	local topo n i sys prof_run reps_f=${REPS_I:-2}
	local -a sizes_i=(${SIZES_I:-16 64}) sizes_f
	echo "topology,workers,mib,system,run,insns_per_byte,user_share,snap0,snap1" \
		>"$PROF_DIR/peers.csv"
	say "## (i) Whole-VM instructions per allreduced byte"
	say
	say "Every guest instruction of every vCPU, kernel and user, executed while any"
	say "worker was inside a timed allreduce (each marks its own: util/mark.h),"
	say "over $reps_f timed ones after a warm-up, each after a barrier, per allreduce"
	say "and per byte of one worker's buffer; user space: the share of them in user"
	say "space. The star of (f), links unshaped, MTU 1500, float32, no steering;"
	say "netagg on one tree and on four (make demo's)."
	say
	for topo in "${topos_f[@]}"; do
		for n in ${WORKERS_I:-4 8}; do
			star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
			[ "$topo" = routed ] || bridge "$n" || { echo "bench: no bridge on sw" >&2; continue; }
			for i in $(seq "$n"); do
				steer "w$i" v0 0
				steer sw "s$i" 0
			done
			module_unload
			for prof_run in 1 2; do
				[ "$prof_run" = 1 ] || [ "$topo,$n" = "${topos_f[0]},4" ] || continue
				sizes_f=("${sizes_i[@]}")	# what f_run runs
				[ "$prof_run" = 1 ] || sizes_f=("${sizes_i[0]}")	# the repeat
				for sys in ${SYSTEMS_I:-gloo openmpi netagg-demo netagg-best}; do
					case $sys in
					gloo) f_run 0 "$n" gloo f_gloo 0 "$n" ;;
					openmpi) f_run 0 "$n" openmpi f_mpi 0 "$n" ;;
					netagg-demo) f_run 0 "$n" netagg-demo f_netagg 0 "$n" demo 1 ;;
					netagg-best) f_run 0 "$n" netagg-best f_netagg 0 "$n" best 4 ;;
					netagg-xdp) f_run 0 "$n" netagg-xdp f_netagg 0 "$n" xdp 4 ;;
					esac
				done
			done
		done
		say "### $topo switch"
		say
		insn_table "$PROF_DIR/peers.csv" "$topo" | tee -a "$out"
		say
	done
	say "Repeated (the same cell, run 1 and run 2): $(awk -F, '$5 == 2 { r2[$1 FS $2 FS $3 FS $4] = $6 }
		$5 == 1 { r1[$1 FS $2 FS $3 FS $4] = $6 }
		END { for (k in r2) { split(k, f, FS); printf "%s %s %s/%s MiB: %s, %s; ", f[4], f[1], f[2], f[3], r1[k], r2[k] } }' \
		"$PROF_DIR/peers.csv")"
	say
}

# s_run JOB QUORUM: the four workers of star 4 on JOB once, round $ROUND
# (the caller moves it on: this runs in a subshell); prints the seconds of
# the slowest worker that completed and how many did, or "failed". With
# QUORUM "all" every worker must complete. With a quorum of 3, each worker
# accepts 3 to 4 contributions, and three must complete: the slowest
# contributor to a VID is left out of it, gets the result late, and fails
# (after 2 s without results) once it falls more than the results kept
# behind the others.
s_run() {
	local job=$1 q=$2 i pids=() ok=() args=(--pattern bit) tmo=10000
	[ "$q" = all ] || { args+=(--quorum 3); tmo=2000; }
	rm -f "$TEST_TMP"/s.*
	for i in 1 2 3 4; do
		timeout 300 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job "$job" \
			--rank $((i - 1)) --workers 4 --count $((size_s * 262144)) \
			--round "$ROUND" --tree "0=10.0.$i.254" -j "${args[@]}" \
			--timeout-ms "$tmo" >"$TEST_TMP/s.$i" 2>"$TEST_TMP/s.$i.err" &
		pids+=($!)
	done
	for i in 1 2 3 4; do wait "${pids[$((i - 1))]}" && ok+=("$i"); done
	if [ ${#ok[@]} -lt "$([ "$q" = all ] && echo 4 || echo 3)" ]; then
		cat "$TEST_TMP"/s.*.err >&2
		echo failed
		return
	fi
	echo "$(for i in "${ok[@]}"; do cat "$TEST_TMP/s.$i"; done |
		jq -s 'map(.seconds) | max') ${#ok[@]}"
}

section_s() {
	local d q r res t n
	local -A S=() N=()
	size_s=${SIZE_S:-4}
	say "## (s) One straggler: a quorum of 3 of 4 against waiting for all"
	say
	say "4 workers, $size_s MiB each, one tree on sw (window $window); w4's contributions"
	say "delayed by netem. The time of the slowest worker that completed, median of"
	say "${REPS_S:-3}: the tree waits for all four, or completes each VID with its first 3"
	say "(quorum 3, straggler delay 0; the workers accept 3 to 4 contributions, and"
	say "at least 3 must complete). Every buffer verified chunk by chunk (--pattern"
	say "bit). Completed: workers that completed, median; the one left out of VIDs"
	say "gets their results late, and fails once it is more than the kept results"
	say "behind the others."
	say
	mkdir -p "$(dirname "$CSV_S")"
	echo "delay_ms,quorum,seconds" >"$CSV_S"
	star 4 1500 || { say "(setup failed)"; return 0; }
	module_unload
	module_load && root_job 1 1500 4 && root_job 2 1500 4 &&
		netagg_in sw tree set job 2 tree 0 quorum 3 straggler 0 ||
		{ say "(setup failed)"; return 0; }
	for d in ${DELAYS_S:-0 5 10 25 50}; do
		tc -n w4 qdisc del dev v0 root 2>/dev/null
		[ "$d" = 0 ] || tc -n w4 qdisc add dev v0 root netem delay "${d}ms" limit 100000
		for q in all 3; do
			t=()
			n=()
			for r in $(seq "${REPS_S:-3}"); do
				res=$(s_run "$([ $q = all ] && echo 1 || echo 2)" "$q")
				ROUND=$((ROUND + 1))
				t+=("${res% *}")
				n+=("${res#* }")
			done
			if printf '%s\n' "${t[@]}" | grep -q failed; then
				S[$d,$q]=failed
				N[$d,$q]=-
			else
				S[$d,$q]=$(printf '%s\n' "${t[@]}" | median)
				N[$d,$q]=$(printf '%s\n' "${n[@]}" | median)
				echo "$d,$q,${S[$d,$q]}" >>"$CSV_S"
			fi
		done
	done
	tc -n w4 qdisc del dev v0 root 2>/dev/null
	say "| w4 delay ms | wait for all s | quorum 3 of 4 s | quorum vs all | completed (quorum) |"
	say "|---|---|---|---|---|"
	for d in ${DELAYS_S:-0 5 10 25 50}; do
		say "| $d | $(secs "${S[$d,all]}") | $(secs "${S[$d,3]}") |" \
			"$(ratio "${S[$d,3]}" "${S[$d,all]}") | ${N[$d,3]} of 4 |"
	done
	say
	module_unload
}

section_t() {
	local dir=$NETAGG_ROOT/tests/out/bench-train sum mode
	say "## (t) A training step: DDP through gloo and through the netagg hook"
	say
	say "make train's example (python/examples/train_digits.py: a 64-128-128-10"
	say "network on scikit-learn's digits, 4 workers, the star of (c), one DDP"
	say "bucket a layer), ${EPOCHS_T:-3} epochs a mode; median time of a step"
	say "(forward, backward with its allreduces, optimizer), the slowest worker's."
	say
	ip -all netns delete
	NS_LIST=()
	module_unload
	if ! TRAIN_OUT=$dir EPOCHS=${EPOCHS_T:-3} bash "$NETAGG_ROOT/lab/train.sh" \
		>"$dir.log" 2>&1; then
		say "(the run failed: tests/out/bench-train.log)"
		tail -n 20 "$dir.log" >&2
		return 0
	fi
	sum=$dir/summary.json
	say "| mode | step ms | vs gloo | final accuracy |"
	say "|---|---|---|---|"
	for mode in gloo netagg netagg-blocking; do
		say "$(jq -r --arg m "$mode" '"| \($m) | \(.step_seconds_median[$m] * 1000 |
			. * 100 | round / 100) | \(.step_seconds_median[$m] /
			.step_seconds_median.gloo | . * 100 | round / 100) | \(.final_accuracy[$m] |
			. * 1000 | round / 1000) |"' "$sum")"
	done
	say
}

ROUND=1
sysctl -qw net.core.netdev_max_backlog=10000
say "# netagg benchmark, in the VM"
say
say "Kernel $(uname -r), $(nproc) vCPUs (QEMU TCG), reduction code:" \
	"$(module_load && cat /sys/module/netagg/parameters/simd; module_unload)."
say
# Where the run is, on stderr (the report stays clean): section k of n.
order=bcdefghstpi
nsec=0 ksec=0
for ((i = 0; i < ${#order}; i++)); do
	[[ $sections == *${order:i:1}* ]] && nsec=$((nsec + 1))
done
begin_section() { ksec=$((ksec + 1)); ktap_progress "$ksec" "$nsec" "bench section ($1)" >&2; }
[[ $sections == *b* ]] && { begin_section b; measure_cpu1; section_b; measure_done; }
[[ $sections == *c* ]] && { begin_section c; section_c; }
[[ $sections == *d* ]] && { begin_section d; measure_cpu1; section_d; measure_done; }
[[ $sections == *e* ]] && { begin_section e; section_e; }
[[ $sections == *f* ]] && { begin_section f; section_f; }
[[ $sections == *g* ]] && { begin_section g; section_g; }
[[ $sections == *h* ]] && { begin_section h; section_h; }
[[ $sections == *s* ]] && { begin_section s; section_s; }
[[ $sections == *t* ]] && { begin_section t; section_t; }
[[ $sections == *p* ]] && { begin_section p; measure_cpu1; section_p || exit 1; measure_done; }
[[ $sections == *i* ]] && { begin_section i; section_i; }
echo "# bench: done in $(ktap_elapsed)" >&2
exit 0
