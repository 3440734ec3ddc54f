# shellcheck shell=bash
# The setup of lab/bench/bench-vm.sh, which sources this first, its
# settings, and what every section uses: say and the helpers of the
# figures, CPU 1's busy time, the star of workers around the switch sw,
# a job rooted on sw, netagg-uagg. lib-runs.sh has the runs on them.
#
# The checkout's tests/lib.sh (NETAGG_ROOT, the namespaces, the module)
# and tests/ktap.sh (progress on stderr).
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/ktap.sh"
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
sections=${SECTIONS:-bcdefnghkst}
mkdir -p "$(dirname "$out")"
: >"$out"

# The settings of (f) (section-f.sh), some of which (g), (h), (i) and (s)
# take too.
GLOO=$NETAGG_ROOT/lab/bench/dist-allreduce.py
MPI_ALLREDUCE=$NETAGG_ROOT/tests/out/mpi-allreduce
CSV_F=${CSV_F:-$NETAGG_ROOT/tests/out/bench-peers.csv}
CSV_S=${CSV_S:-$NETAGG_ROOT/tests/out/bench-straggler.csv}
sizes_f=(${SIZES_F:-1 16 64})	# MiB per worker
workers_f=(${WORKERS_F:-4 8})
rates_f=(${RATES_F:-0 200 20})	# Mbit/s of every link each way, 0: unshaped
reps_f=${REPS_F:-3}
peers_f=${PEERS_F:-1}	# 0: netagg alone (its times and retransmits), no peer
topos_f=(${TOPOS_F:-routed bridged})	# the switch: routing between its ports, or bridging them
declare -A F=() RT=() FS=()	# F[RATE,N,MIB,SYSTEM]: seconds, wrong or failed; RT: retransmits;
			# FS: the spread of the reps' seconds
F_PORT=29500

# The settings of (k) (section-k.sh).
CSV_K=${CSV_K:-$NETAGG_ROOT/tests/out/bench-share.csv}
SHORT_FLOWS=$NETAGG_ROOT/lab/bench/short-flows.py
workers_k=(${WORKERS_K:-4 8})
rate_k=${RATE_K:-20}	# Mbit/s of the bottleneck
seconds_k=${SECONDS_K:-30}	# of each phase: two of TCP's sawteeth on the drop-tail queue

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
# spread: the least and the most of the numbers on stdin ("0.61-0.66"), or
# nothing for fewer than two: the run-to-run spread beside a median.
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf "%.2f-%.2f", lo, hi }'; }
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

# root_job JID MTU N [TREES [DTYPE]]: sw is the root of every tree of the
# job; keyed with the file BENCH_KEY names, if it does.
root_job() {
	local jid=$1 mtu=$2 n=$3 trees=${4:-1} dtype=${5:-f32} t i kids=()
	for i in $(seq "$n"); do kids+=(child "10.0.$i.1"); done
	netagg_in sw job add "$jid" mtu "$mtu" window "$window" dtype "$dtype" \
		${BENCH_KEY:+key "$BENCH_KEY"} || return 1
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
