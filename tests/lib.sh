#!/bin/bash
# Shared helpers of the netns tests (kselftest style: KTAP out, exit 4 = skip).
# A test sources this, calls ktap_plan with its number of cases, then one
# assertion per case; ktap_finish ends it. Everything runs as root in the VM.

# The checkout whose module, CLI and tools the tests use: NETAGG_ROOT, so
# that they also run from a copy (tests/Makefile: a kselftest target), or
# the one this file is in.
NETAGG_ROOT=${NETAGG_ROOT:-$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NETAGG=$NETAGG_ROOT/cli/netagg
NETAGG_SEND=$NETAGG_ROOT/tests/tools/netagg-send
NETAGG_ALLREDUCE=${NETAGG_ALLREDUCE:-$NETAGG_ROOT/tools/netagg-allreduce}
NETAGG_KO=${NETAGG_KO:-$NETAGG_ROOT/kmod/netagg.ko}
ksft_skip=4
TEST_TMP=$(mktemp -d)

# require_btf: the XDP hook needs the kernel's BTF for the module's kfunc;
# without it (the debug kernel) the test skips, saying so.
require_btf()
{
	if [ ! -e /sys/kernel/btf/vmlinux ]; then
		echo "1..0 # SKIP this kernel has no BTF: no XDP hook"
		exit $ksft_skip
	fi
}
# Through the XDP hook (NETAGG_XDP, below), only where the kernel has BTF.
[ -z "${NETAGG_XDP:-}" ] || require_btf

ktap_n=0
ktap_pass=0
ktap_fail=0
ktap_skip=0
NS_LIST=()

ktap_plan()
{
	local n=$1
	echo "KTAP version 1"
	# Run through the XDP hook, a test has one case more (ktap_finish).
	[ -z "${NETAGG_XDP:-}" ] || n=$((n + 1))
	echo "1..$n"
}

ktap_result()	# ok|fail|skip description [detail...]
{
	local res=$1 desc=$2
	shift 2
	ktap_n=$((ktap_n + 1))
	case $res in
	ok)	ktap_pass=$((ktap_pass + 1)); echo "ok $ktap_n $desc" ;;
	skip)	ktap_skip=$((ktap_skip + 1)); echo "ok $ktap_n $desc # SKIP $*" ;;
	*)	ktap_fail=$((ktap_fail + 1)); echo "not ok $ktap_n $desc"
		[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/# /' ;;
	esac
}

ktap_finish()
{
	[ -z "${NETAGG_XDP:-}" ] || xdp_took_packets
	echo "# $(basename "$0"): $ktap_pass pass, $ktap_fail fail, $ktap_skip skip"
	[ "$ktap_fail" -eq 0 ] || exit 1
	[ "$ktap_pass" -gt 0 ] || exit $ksft_skip
	exit 0
}

# check DESC CMD...: the command succeeds.
check()
{
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ktap_result ok "$desc"
	else
		ktap_result fail "$desc" "command: $*" "exit $?: $out"
	fi
}

# check_err DESC MESSAGE CMD...: the command fails and says MESSAGE.
check_err()
{
	local desc=$1 msg=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"$msg"* ]]; then
		ktap_result ok "$desc"
	else
		ktap_result fail "$desc" "command: $*" "exit $rc, wanted failure saying: $msg" "got: $out"
	fi
}

# check_eq DESC WANT GOT
check_eq()
{
	if [ "$2" == "$3" ]; then
		ktap_result ok "$1"
	else
		ktap_result fail "$1" "wanted: $2" "got:    $3"
	fi
}

# A namespace named after the test; removed by cleanup.
setup_ns()
{
	local ns
	for ns in "$@"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
		NS_LIST+=("$ns")
	done
}

# del_ns_all: remove every namespace setup_ns made (to build another topology)
del_ns_all()
{
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

cleanup_ns()
{
	rm -rf "$TEST_TMP"
	del_ns_all
}

# v6 ADDR: the IPv6 address the topologies give beside IPv4 address ADDR
# (every topology is dual-stack): 10.A.B.C is fd00:A:B::C, on fd00:A:B::/64.
v6()
{
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	echo "fd00:$b:$c::$d"
}

# addr_add NS ADDR/LEN DEV: IPv4 ADDR/LEN and its IPv6 twin (/64) on DEV,
# the IPv6 one usable at once (no duplicate address detection).
addr_add()
{
	ip -n "$1" addr add "$2" dev "$3" || return 1
	ip -n "$1" addr add "$(v6 "${2%/*}")/64" dev "$3" nodad
}

# route_add NS DEST VIA: the route to IPv4 DEST ("default" or A.B.C.0/24)
# via IPv4 VIA, and its IPv6 twin.
route_add()
{
	local dest=$2
	ip -n "$1" route add "$2" via "$3" || return 1
	[ "$dest" = default ] || dest=$(v6 "${dest%/*}")/64
	ip -n "$1" -6 route add "$dest" via "$(v6 "$3")"
}

# forwarding NS: NS routes, IPv4 and IPv6.
forwarding()
{
	ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1
}

# topo_star N: workers w1..wN, 10.0.i.1, each on its own link to the switch
# namespace sw, which has 10.0.i.254 on that link (and their v6 twins).
topo_star()
{
	local i
	setup_ns sw || return 1
	for i in $(seq "$1"); do
		setup_ns "w$i" || return 1
		ip link add v0 netns "w$i" type veth peer name "s$i" netns sw
		addr_add "w$i" "10.0.$i.1/24" v0
		addr_add sw "10.0.$i.254/24" "s$i"
		ip -n "w$i" link set v0 up
		ip -n sw link set "s$i" up
		xdp_port sw "s$i" || return 1
	done
}

# star_trees TREES I: netagg-allreduce's --tree options, one word a line
# (for mapfile), for worker wI of topo_star whose TREES trees (0 to TREES
# - 1) are all rooted on sw.
star_trees()
{
	local t
	for t in $(seq 0 $(($1 - 1))); do printf -- '--tree\n%s=10.0.%s.254\n' "$t" "$2"; done
}

# routed_star N: topo_star N, sw routing between its ports and every
# worker's way to the others through it (gloo's TCP, torch's store).
routed_star()
{
	local i
	topo_star "$1" || return 1
	ip netns exec sw sysctl -qw net.ipv4.ip_forward=1
	for i in $(seq "$1"); do ip -n "w$i" route add 10.0.0.0/16 via "10.0.$i.254"; done
}

# racks JOB V6 ARGS...: topo_racks' six workers' allreduce of tree 0 of job
# JOB, each to its rack's aggregator (V6: "v6", at its IPv6 address), 100000
# elements, ARGS after; fails, showing their errors, unless all six checked
# theirs.
racks()
{
	local job=$1 v6=$2 w node pids=() rc=0
	shift 2
	for w in 1 2 3 4 5 6; do
		node="10.$(rack_of $w).0.254"
		[ "$v6" = v6 ] && node="fd00:$(rack_of $w):0::254"
		timeout "$(scaled 60)" ip netns exec "w$w" "$NETAGG_ALLREDUCE" --quiet \
			--job "$job" --tree "0=$node" --rank $((w - 1)) --workers 6 \
			--count 100000 --timeout-ms "$(scaled 5000)" "$@" \
			2>"$TEST_TMP/racks.$w.err" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	[ $rc -eq 0 ] || cat "$TEST_TMP"/racks.*.err
	return $rc
}

# racks_xdp: the XDP program on every port of topo_racks' nodes, each
# in XDP_PORTS, NETAGG_XDP native from here on; racks_xdp_off: gone again.
racks_xdp()
{
	XDP_PORTS=("agg1 u0" "agg1 p1" "agg1 p2" "agg1 p3" "agg2 u0" "agg2 p4" "agg2 p5"
		   "agg2 p6" "root d1" "root d2")
	NETAGG_XDP=native
	xdp_attach_all
}
racks_xdp_off()
{
	xdp_detach_all
	XDP_PORTS=()
	NETAGG_XDP=
}

# mpi_netns: Open MPI's settings, exported (OMPI_MCA_*: an mpirun's
# command line stays as a user types it), for an mpirun in one namespace
# whose "hosts" are others: its daemons started there by
# lab/bench/netns-rsh, as ssh would, with no tree of daemons; ob1 over TCP
# on the links only (10.0.0.0/16); root allowed.
mpi_netns()
{
	export OMPI_MCA_plm_rsh_agent=$NETAGG_ROOT/lab/bench/netns-rsh \
		OMPI_MCA_plm_rsh_no_tree_spawn=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self \
		OMPI_MCA_btl_tcp_if_include=10.0.0.0/16 OMPI_MCA_oob_tcp_if_include=10.0.0.0/16 \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# mpi_launch OUT CMD...: CMD, an mpirun whose ranks write to stdout or say
# "netagg-mpi" on stderr, with its stdout in OUT and stderr in OUT.err; its
# exit code. Open MPI's launcher (mpirun, its daemons through netns-rsh)
# has hung under load before starting any rank: a launch no rank has
# answered in 90 s (scaled) shows its processes, is killed and made once
# more, said so. A rank that started and hangs is not retried.
mpi_launch()
{
	local out=$1 try pid end wait
	shift
	wait=$(scaled 90)
	for try in 1 2; do
		"$@" >"$out" 2>"$out.err" &
		pid=$!
		end=$((SECONDS + wait))
		while kill -0 $pid 2>/dev/null && [ ! -s "$out" ] &&
			! grep -q netagg-mpi "$out.err" && [ $SECONDS -lt $end ]; do
			sleep 0.2
		done
		if [ -s "$out" ] || grep -q netagg-mpi "$out.err" || ! kill -0 $pid 2>/dev/null; then
			wait $pid
			return
		fi
		echo "# launch $try: no rank started in $wait s; Open MPI's processes:"
		ps -eo pid,ppid,stat,wchan:24,args | grep '[o]rted\|[m]pirun' |
			cut -c 1-160 | sed 's/^/#   /'
		kill_tree KILL $pid
		wait $pid 2>/dev/null
	done
	return 124
}

# kill_tree SIG PID: PID and every process under it, the leaves first.
kill_tree()
{
	local child
	for child in $(pgrep -P "$2"); do
		kill_tree "$1" "$child"
	done
	kill -"$1" "$2" 2>/dev/null
}

# require_torch: PY, a python3 with numpy and torch, and the package on
# PYTHONPATH; the script's setup fails without them.
require_torch()
{
	PY=/usr/bin/python3
	export PYTHONPATH=$NETAGG_ROOT/python
	[ -x "$PY" ] && "$PY" -c 'import numpy, torch' 2>/dev/null ||
		fail_setup "python3 with numpy and torch missing: run scripts/deps.sh"
}

# bridge_star N: the switch of topo_star N made a bridge: its ports s1..sN
# in br0, which takes the addresses they had (10.0.i.254), so that sw still
# answers and routes for the workers' subnets, but every packet reaches it
# and leaves it through the bridge, as on a Linux host whose ports are
# bridged.
bridge_star()
{
	local i
	ip -n sw link add br0 type bridge || return 1
	for i in $(seq "$1"); do
		ip -n sw addr flush dev "s$i"
		ip -n sw link set "s$i" master br0 || return 1
		addr_add sw "10.0.$i.254/24" br0 || return 1
	done
	ip -n sw link set br0 up
}

# topo_racks: two racks of three workers under a root, all routed (and
# their v6 twins, fd00:1:0::1 and so on):
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 10.1.0.254 | 10.9.1.1 --- 10.9.1.254 \
#                                                                        root
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 10.2.0.254 | 10.9.2.1 --- 10.9.2.254 /
topo_racks()
{
	local r w
	setup_ns root agg1 agg2 w1 w2 w3 w4 w5 w6 || return 1
	for r in 1 2; do
		ip -n "agg$r" link add br0 type bridge
		addr_add "agg$r" "10.$r.0.254/24" br0
		ip -n "agg$r" link set br0 up
		ip link add u0 netns "agg$r" type veth peer name "d$r" netns root
		addr_add "agg$r" "10.9.$r.1/24" u0
		addr_add root "10.9.$r.254/24" "d$r"
		ip -n "agg$r" link set u0 up
		ip -n root link set "d$r" up
		xdp_port "agg$r" u0 || return 1
		xdp_port root "d$r" || return 1
		route_add "agg$r" default "10.9.$r.254"
		route_add root "10.$r.0.0/24" "10.9.$r.1"
		forwarding "agg$r"
	done
	forwarding root
	for w in 1 2 3 4 5 6; do
		r=$(rack_of $w)
		ip link add v0 netns "w$w" type veth peer name "p$w" netns "agg$r"
		ip -n "agg$r" link set "p$w" master br0 up
		xdp_port "agg$r" "p$w" || return 1
		addr_add "w$w" "10.$r.0.$w/24" v0
		ip -n "w$w" link set v0 up
		route_add "w$w" default "10.$r.0.254"
	done
}

# netem_star N ARGS...: the same netem impairment on both directions of
# every link of topo_star N ("none" takes it off).
netem_star()
{
	local n=$1 i
	shift
	for i in $(seq "$n"); do
		tc -n "w$i" qdisc del dev v0 root 2>/dev/null
		tc -n sw qdisc del dev "s$i" root 2>/dev/null
		[ "$1" = none ] && continue
		tc -n "w$i" qdisc add dev v0 root netem "$@" || return 1
		tc -n sw qdisc add dev "s$i" root netem "$@" || return 1
	done
}

rack_of()
{
	echo $(( ($1 - 1) / 3 + 1 ))
}

module_loaded()
{
	[ -d /sys/module/netagg ]
}

# The kernel modules netagg.ko needs (lib/crypto's Poly1305), loaded: insmod,
# unlike modprobe, loads none.
module_deps()
{
	local deps

	deps=$(modinfo -F depends "$NETAGG_KO") || return 1
	[ -z "$deps" ] || modprobe -a ${deps//,/ }
}

# NETAGG_MODPARAMS: module parameters for every load, e.g. "simd=sse2"
module_load()
{
	module_loaded && return 0
	module_deps && insmod "$NETAGG_KO" ${NETAGG_MODPARAMS:-} && xdp_attach_all
}

module_unload()
{
	module_loaded || return 0
	unload_under_traffic
}

# unload_under_traffic: the module unloads while packets still come; it
# must be loaded. The XDP hook's program holds the module: it is detached
# first, as a user must (netagg_xdp.sh checks that rmmod is refused while
# it is on).
unload_under_traffic()
{
	[ -z "${NETAGG_XDP:-}" ] || { xdp_tally; xdp_detach_all; }
	rmmod_wait
}

# rmmod_wait [TENTHS]: rmmod, waiting up to TENTHS tenths of a second (50)
# for what still holds the module to let go: a namespace just deleted goes
# asynchronously, and the XDP programs on its ports after it.
rmmod_wait()
{
	local i
	for i in $(seq "${1:-50}"); do
		rmmod netagg 2>/dev/null && return 0
		sleep 0.1
	done
	rmmod netagg
}

# NETAGG_XDP=native|generic (the "+xdp" runs of tests/vm-suite.sh): the
# datapath's tests run through the XDP hook. netagg's XDP program goes on
# every port the topologies here give a switch or aggregator (xdp_port), as
# soon as the module is loaded; the test has one case more, that the hook
# did take aggregation packets (ns_xdp), which ktap_finish adds.
XDP_PORTS=()

# xdp_port NS DEV: DEV in NS is a node's port (without NETAGG_XDP: nothing).
xdp_port()
{
	[ -n "${NETAGG_XDP:-}" ] || return 0
	XDP_PORTS+=("$1 $2")
	! module_loaded || xdp_attach "$1" "$2"
}

xdp_attach()
{
	ip netns exec "$1" "$NETAGG" xdp attach "$2" mode "$NETAGG_XDP" || {
		echo "# XDP: cannot attach to $2 in $1" >&2
		return 1
	}
}

# The ports that are still there.
xdp_ports_left()
{
	local p ns dev
	for p in "${XDP_PORTS[@]}"; do
		read -r ns dev <<<"$p"
		ip -n "$ns" link show dev "$dev" >/dev/null 2>&1 && echo "$ns $dev"
	done
}

xdp_attach_all()
{
	local ns dev
	[ -n "${NETAGG_XDP:-}" ] || return 0
	while read -r ns dev; do
		xdp_attach "$ns" "$dev" || return 1
	done < <(xdp_ports_left)
}

xdp_detach_all()
{
	local ns dev
	while read -r ns dev; do
		ip netns exec "$ns" "$NETAGG" xdp detach "$dev" >/dev/null 2>&1
	done < <(xdp_ports_left)
}

# xdp_tally: add what the XDP hook took in the namespaces still there to
# $TEST_TMP/xdp-taken (the counters go with the module or the namespace).
xdp_tally()
{
	local ns n total
	# After the test's cleanup (the EXIT trap) there is nothing to count.
	module_loaded && [ -d "$TEST_TMP" ] || return 0
	total=$(cat "$TEST_TMP/xdp-taken" 2>/dev/null || echo 0)
	for ns in $(xdp_ports_left | cut -d' ' -f1 | sort -u); do
		n=$(netagg_in "$ns" -j stats 2>/dev/null | jq -r '.namespace.ns_xdp // 0')
		total=$((total + ${n:-0}))
	done
	echo "$total" >"$TEST_TMP/xdp-taken"
}

xdp_took_packets()
{
	local n
	xdp_tally
	n=$(cat "$TEST_TMP/xdp-taken" 2>/dev/null || echo 0)
	: >"$TEST_TMP/xdp-taken"
	if [ "${n:-0}" -gt 0 ]; then
		ktap_result ok "the XDP hook took aggregation packets ($n)"
	else
		ktap_result fail "the XDP hook took aggregation packets" \
			"ns_xdp is 0: the test ran through the netfilter hook only"
	fi
}

# netagg_in NS ARGS...: the CLI inside a namespace.
netagg_in()
{
	local ns=$1
	shift
	ip netns exec "$ns" "$NETAGG" "$@"
}

# counter NS LEVEL... NAME: one counter from `netagg -j stats` in NS, e.g.
#   counter sw namespace ns_seen; counter sw job 7 rx; counter sw tree 7 0 rx;
#   counter sw trees 7 resent (summed over every tree of job 7)
counter()
{
	local ns=$1 level=$2
	shift 2
	case $level in
	namespace) netagg_in "$ns" -j stats | jq -r ".namespace.$1" ;;
	job) netagg_in "$ns" -j stats | jq -r ".jobs[] | select(.jid == $1) | .stats.$2" ;;
	tree) netagg_in "$ns" -j stats |
		jq -r ".jobs[] | select(.jid == $1) | .trees[] | select(.tid == $2) | .stats.$3" ;;
	trees) netagg_in "$ns" -j stats |
		jq -r "[.jobs[] | select(.jid == $1) | .trees[].stats.$2] | add" ;;
	esac
}

# over MAX: how many of the words on stdin are not numbers below MAX (a
# missing field, printed null, counts; no word at all counts 1), e.g.
# over 200 <<<"5 5 200" prints 1
over()
{
	awk -v max="$1" '{ for (i = 1; i <= NF; i++) n += $i !~ /^[0-9.]+$/ || $i >= max; w += NF }
		END { print n + !w }'
}

# wait_counter [-t SECONDS] WANT NS LEVEL... NAME: poll until the counter is
# WANT (packets cross veth asynchronously), for at most two seconds or
# SECONDS; prints the last value.
wait_counter()
{
	local tries=20 want got i
	if [ "$1" = -t ]; then
		tries=$(($2 * 10))
		shift 2
	fi
	want=$1
	shift
	for i in $(seq "$tries"); do
		got=$(counter "$@")
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	echo "$got"
}

# next_round N: reserve N fresh round numbers for allreduces on the same
# trees and print the first. Successive rounds on a tree must differ; a file
# keeps the count, since checks run their commands in subshells.
next_round()
{
	local last
	last=$(cat "$TEST_TMP/round" 2>/dev/null || echo 0)
	echo $((last + $1)) >"$TEST_TMP/round"
	echo $((last + 1))
}

# star_allreduce JOB COUNT ITERATIONS ARGS...: the four workers of
# topo_star 4 on tree 0 of JOB, each to its own address of sw, fresh rounds
# (one more for --warmup), 120 s at most; their JSON lines go to
# $TEST_TMP/ar.json. From the environment: STAR_PLAIN="1 2" has those
# workers send plain packets only; STAR_LATE="4 1" starts worker 4 one
# second after the others; STAR_NOJOIN=1 has them not join (session 0:
# counts of the allreduces alone). Fails, showing their errors, unless all
# four verified every iteration.
star_allreduce()
{
	local job=$1 count=$2 iters=$3 i pids=() rc=0 first opt delay limit=120
	shift 3
	if [[ " $* " == *" --warmup "* ]]; then
		first=$(next_round $((iters + 1)))
	else
		first=$(next_round "$iters")
	fi
	for i in 1 2 3 4; do
		opt=()
		[[ " ${STAR_PLAIN:-} " == *" $i "* ]] && opt=(--plain)
		delay=0
		[ "${STAR_LATE:-}" ] && [ "${STAR_LATE%% *}" = "$i" ] && delay=${STAR_LATE#* }
		[ -n "${STAR_NOJOIN:-}" ] && opt+=(--no-join)
		(sleep "$delay"
		 exec timeout "$limit" ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job "$job" \
			--tree "0=10.0.$i.254" --rank $((i - 1)) --workers 4 --count "$count" \
			--iterations "$iters" --round "$first" --timeout-ms 10000 -j \
			"${opt[@]}" "$@") >"$TEST_TMP/ar.$i" 2>"$TEST_TMP/ar.$i.err" &
		pids+=($!)
	done
	for i in 1 2 3 4; do
		wait_said "${pids[i - 1]}" "rank $((i - 1))" "$limit" || rc=1
	done
	cat "$TEST_TMP"/ar.[1-4] >"$TEST_TMP/ar.json"
	[ $rc -eq 0 ] || cat "$TEST_TMP"/ar.*.err
	return $rc
}

# wait_said PID WHO LIMIT: wait for PID, run under `timeout LIMIT`; if it
# failed, say how on stdout (a program killed prints nothing of its own).
wait_said()
{
	local st=0
	wait "$1" || st=$?
	case $st in
	0) return 0 ;;
	124) echo "$2: still running after $3 s, killed" ;;
	12[5-7]) echo "$2: exit $st (timeout or exec failed)" ;;
	*) if [ "$st" -gt 128 ]; then
		echo "$2: killed by SIG$(kill -l $((st - 128)))"
	   else
		echo "$2: exit $st"
	   fi ;;
	esac
	return 1
}

# teardown_while WHAT FN: timers stopped cleanly. FN leaves job 3 on sw
# waiting on a timer (WHAT, a check's name, says which); the job is deleted
# while it waits; FN again, and sw's namespace is deleted while it waits;
# then the module unloads. Four checks; ends with the module loaded and no
# namespace left.
teardown_while()
{
	check "$1" "$2"
	check "... job del while it waits" netagg_in sw job del 3
	check "$1, again" "$2"
	ip netns del sw
	NS_LIST=("${NS_LIST[@]/sw}")
	check "... namespace deleted while it waits; the module unloads" module_unload
	module_load
	del_ns_all
}

# scaled N: N (a time: ms or s) stretched by TIMEOUT_SCALE, as the
# scripts' own limits are on a slower kernel (make check-debug: 3). For
# the times a test gives the protocol where a live worker must never look
# dead: eviction times, worker timeouts, the waits for them.
scaled()
{
	case $1 in
	*.*) awk -v t="$1" -v k="${TIMEOUT_SCALE:-1}" 'BEGIN { print t * k }' ;;
	*) echo $(($1 * ${TIMEOUT_SCALE:-1})) ;;
	esac
}

# some N: "some" if N > 0, else N as it is (for check_eq on counts that
# only have to be positive).
some()
{
	if [ "${1:-0}" -gt 0 ] 2>/dev/null; then echo some; else echo "${1:-none}"; fi
}

# fail_setup WHY: the test cannot run here and that is a failure (a missing
# build or kernel module is not a reason to skip: make check provides both).
fail_setup()
{
	ktap_plan 1
	ktap_result fail "setup" "$1"
	exit 1
}

# The test needs to run as root in a VM or on a host that loads modules.
require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root"
		exit $ksft_skip
	fi
	if [ ! -f "$NETAGG_KO" ] || [ ! -x "$NETAGG" ]; then
		fail_setup "not built: run make"
	fi
}

# require_module MOD...: kernel modules the test needs (tests/config names
# them), loaded now, or the test fails saying which.
require_module()
{
	local m
	for m in "$@"; do
		modprobe "$m" 2>/dev/null ||
			fail_setup "kernel module $m does not load (the kernel needs it: tests/config)"
	done
}
