#!/bin/bash
# Another DSCP and UDP port for a namespace's aggregation packets ("netagg
# set dscp N port P"): validated, shown, per namespace, applied to jobs
# already there. A two-level tree whose nodes all use DSCP 46 and port 9000
# sums exactly with its workers told (--dscp, --node-port), over IPv4 and
# IPv6, through the netfilter hook and through the XDP program: the
# aggregators' sums reach root and root's results reach them only if both
# carry the new marks, and the results reach the workers so marked. Workers
# with the default marks get nothing from these nodes, and packets with an
# old mark pass a node untouched, to a socket there.
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 --\
#                                         root     every node: dscp 46,
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 --/          port 9000
#
# (topo_racks, lib.sh: every address has an IPv6 twin, fd00:1:0::1 ...)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
MARKS=$NETAGG_ROOT/tests/marks.py
SEND=$NETAGG_ROOT/tests/tools/netagg-send
NODES=(root agg1 agg2)

module_load
topo_racks

# marks NS: "DSCP PORT" of NS's namespace, from -j show, then from the text.
marks() {
	echo "$(netagg_in "$1" -j show | jq -r '"\(.namespace.dscp) \(.namespace.port)"')" \
		"$(netagg_in "$1" show | sed -nE 's/^namespace: .* dscp ([0-9]+) port ([0-9]+)$/\1 \2/p')"
}

# jobs: job 7 on IPv4 addresses, job 8 on their IPv6 twins, tree 0 each.
for r in 1 2; do
	netagg_in "agg$r" job add 7
	netagg_in "agg$r" tree add job 7 tree 0 role aggregator parent "10.9.$r.254" \
		$(for w in 1 2 3 4 5 6; do [ "$(rack_of $w)" = $r ] && echo "child 10.$r.0.$w"; done)
	netagg_in "agg$r" job add 8
	netagg_in "agg$r" tree add job 8 tree 0 role aggregator parent "fd00:9:$r::254" \
		$(for w in 1 2 3 4 5 6; do [ "$(rack_of $w)" = $r ] && echo "child fd00:$r:0::$w"; done)
done
netagg_in root job add 7
netagg_in root tree add job 7 tree 0 role root child 10.9.1.1 child 10.9.2.1
netagg_in root job add 8
netagg_in root tree add job 8 tree 0 role root child fd00:9:1::1 child fd00:9:2::1

# start_marks NS NAME ARGS...: marks.py ARGS in NS, in the background
# ($TEST_TMP/NAME its output), once it listens; stop_marks NAME: its line.
# Each waits 20 s at most: Python starts slowly in a loaded VM.
start_marks() {
	local ns=$1 name=$2 i
	shift 2
	: >"$TEST_TMP/$name"
	ip netns exec "$ns" timeout 120 python3 "$MARKS" "$@" >"$TEST_TMP/$name" 2>&1 &
	echo $! >"$TEST_TMP/$name.pid"
	for i in $(seq 200); do
		grep -qs '^ready' "$TEST_TMP/$name" && return 0
		sleep 0.1
	done
	return 1
}
stop_marks() {
	local i
	kill -TERM "$(cat "$TEST_TMP/$1.pid")" 2>/dev/null
	# Not wait: a command substitution's shell is not its parent.
	for i in $(seq 200); do
		[ "$(wc -l <"$TEST_TMP/$1")" -ge 2 ] && break
		sleep 0.1
	done
	tail -n 1 "$TEST_TMP/$1"
}

# untouched: from w1 to agg1, packets of job 7 of a protocol version no
# node takes (a node drops and counts any it looks at), marked 56 to 7177,
# 46 to 7177 and 56 to 9000, to a socket on agg1 at both ports, then one
# marked 46 to 9000; "got=N seen=S xdp=X": N datagrams the socket got, S
# and X what agg1's ns_seen and ns_xdp grew by.
untouched() {
	local seen0 xdp0 d p
	read -r seen0 xdp0 <<<"$(netagg_in agg1 -j stats | jq -r '.namespace | "\(.ns_seen) \(.ns_xdp)"')"
	start_marks agg1 listen --max 30 listen 10.1.0.254 7177 9000 || return 1
	for d in "56 7177" "46 7177" "56 9000" "46 9000"; do
		read -r d p <<<"$d"
		ip netns exec w1 "$SEND" --dst 10.1.0.254 --job 7 --version 99 --dscp "$d" --port "$p"
	done
	sleep 0.5
	echo "$(stop_marks listen)" \
		"$(netagg_in agg1 -j stats | jq -r --argjson s "$seen0" --argjson x "$xdp0" \
			'.namespace | "seen=\(.ns_seen - $s) xdp=\(.ns_xdp - $x)"')"
}

ktap_plan 18
check_eq "by default DSCP 56 and port 7177, in JSON and text" "56 7177 56 7177" "$(marks agg1)"
check_err "DSCP 0 is refused, saying why" "DSCP must be 1 to 63" netagg_in agg1 set dscp 0
check_err "... so is DSCP 64" "DSCP must be 1 to 63" netagg_in agg1 set dscp 64
check_err "... and port 0" "port must be 1 to 65535" netagg_in agg1 set port 0
check_eq "... a DSCP past a byte is the CLI's usage error (exit 2); none changed a thing" \
	"2 56 7177 56 7177" "$(netagg_in agg1 set dscp 300 >/dev/null 2>&1; echo $?) $(marks agg1)"
check "netagg set dscp 46 port 9000 on root, agg1 and agg2, their jobs there already" \
	bash -c "for n in ${NODES[*]}; do ip netns exec \$n '$NETAGG' set dscp 46 port 9000 || exit 1; done"
check_eq "... shown there; w1's namespace keeps its own" "46 9000 46 9000 56 7177 56 7177" \
	"$(marks agg1) $(marks w1)"

start_marks w1 sniff sniff v0 9000 46 || echo "# the sniffer in w1 did not start"
check "two levels over IPv4, every node and worker on DSCP 46, port 9000: exact" \
	racks 7 v4 --dscp 46 --node-port 9000
check_eq "... the results w1 got came from port 9000, marked DSCP 46, all of them" \
	"marked=some other=0" "$(stop_marks sniff | sed -E 's/marked=[1-9][0-9]*/marked=some/')"
check_eq "... summed at each level: the aggregators sent sums up, root results down" \
	"yes yes yes" \
	"$(for n in agg1 agg2 root; do counter "$n" tree 7 0 "$([ $n = root ] && echo fanned_out || echo emitted_up)"; done |
		awk '{ print ($1 > 0 ? "yes" : "no") }' | paste -sd' ')"
check "two levels over IPv6, the same marks: exact" racks 8 v6 --dscp 46 --node-port 9000

seen0=$(counter agg1 namespace ns_seen)
check_err "workers on the default marks get nothing from these nodes: their call fails" \
	"rank 0" racks 7 v4 --node-timeout-ms "$(scaled 1000)" --timeout-ms "$(scaled 2000)"
check_eq "... agg1 took none of their packets for aggregation packets" \
	0 "$(( $(counter agg1 namespace ns_seen) - seen0 ))"
check_eq "packets with one old mark or two pass agg1 untouched, to a socket; the new marks' are looked at" \
	"got=3 seen=1 xdp=0" "$(untouched)"

# The same through the XDP program: it hands every UDP frame to the
# module, which checks the namespace's marks.
if [ -e /sys/kernel/btf/vmlinux ]; then
	xdp0=$(counter agg1 namespace ns_xdp)
	check "through the XDP program on every node's ports: netagg xdp attach" racks_xdp
	check "... two levels over IPv4, DSCP 46, port 9000: exact" \
		racks 7 v4 --dscp 46 --node-port 9000
	check_eq "... agg1's XDP hook took them" yes \
		"$([ "$(( $(counter agg1 namespace ns_xdp) - xdp0 ))" -gt 0 ] && echo yes)"
	check_eq "... packets with an old mark still pass untouched; the new marks' are taken at XDP" \
		"got=3 seen=1 xdp=1" "$(untouched)"
	racks_xdp_off
else
	for i in 1 2 3 4; do ktap_result skip "through the XDP program (case $i)" "this kernel has no BTF"; done
fi
ktap_finish
