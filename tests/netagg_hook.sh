#!/bin/bash
# The netfilter hook recognises aggregation packets (IPv4, DSCP 56, UDP to
# the netagg port), both addressed to the node and forwarded through it, and
# nothing else; known jobs' malformed packets are dropped and counted by
# reason; unknown jobs' and unknown trees' packets pass untouched; valid
# contributions are taken by the datapath, forwarded ones too.
#
#   w1 10.0.1.1 ---- 10.0.1.254  sw  10.0.2.254 ---- 10.0.2.1 w2
#                    (netagg jobs 7 and 8, forwarding)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

module_load
setup_ns w1 sw w2
ip link add v1 netns w1 type veth peer name s1 netns sw
ip link add v2 netns w2 type veth peer name s2 netns sw
ip -n w1 addr add 10.0.1.1/24 dev v1
ip -n sw addr add 10.0.1.254/24 dev s1
ip -n sw addr add 10.0.2.254/24 dev s2
ip -n w2 addr add 10.0.2.1/24 dev v2
for l in "w1 v1" "sw s1" "sw s2" "w2 v2"; do set -- $l; ip -n "$1" link set "$2" up; done
ip -n w1 route add default via 10.0.1.254
ip -n w2 route add default via 10.0.2.254
ip netns exec sw sysctl -qw net.ipv4.ip_forward=1

netagg_in sw job add 7
netagg_in sw tree add job 7 tree 0 role root child 10.0.1.1 child 10.0.2.1
netagg_in sw job add 8 mtu 576
netagg_in sw tree add job 8 tree 0 role root child 10.0.1.1

send() { ip netns exec w1 "$NETAGG_SEND" "$@"; }
noports() { ip netns exec "$1" nstat -asz UdpNoPorts | awk '/UdpNoPorts/ { print $2 }'; }
# Packets on one veth arrive in order: once a marker packet to the unknown
# job 99 is counted, everything sent before it has been seen too.
markers=0
settle() {
	markers=$((markers + 1))
	send --dst 10.0.1.254 --job 99 >/dev/null
	wait_counter "$markers" sw namespace ns_unknown_job >/dev/null
}

ktap_plan 18
check "send a valid packet of job 7 to sw" send --dst 10.0.1.254 --job 7 --tree 0 --vid 0
check_eq "counted by the namespace, the job and the tree" "1 1 1" \
	"$(wait_counter 1 sw namespace ns_seen) $(counter sw job 7 rx) $(counter sw tree 7 0 rx)"

np=$(noports sw)
settle
check_eq "an unknown job's packet is counted and passed to the stack" "1 $((np + 1))" \
	"$(counter sw namespace ns_unknown_job) $(noports sw)"

seen=$(counter sw namespace ns_seen)
send --dst 10.0.1.254 --job 7 --dscp 0 >/dev/null
send --dst 10.0.1.254 --job 7 --dscp 46 >/dev/null
send --dst 10.0.1.254 --job 7 --port 7178 >/dev/null
check "ICMP echo with DSCP 56 crosses sw" ip netns exec w1 ping -q -c 1 -Q 0xe0 -W 2 10.0.1.254
settle
check_eq "DSCP 0, DSCP 46, another port and ICMP with DSCP 56 are not looked at" \
	"$((seen + 1))" "$(counter sw namespace ns_seen)"

np=$(noports sw)
send --dst 10.0.1.254 --job 7 --version 1 >/dev/null	# before sessions
send --dst 10.0.1.254 --job 7 --dtype i32 >/dev/null
send --dst 10.0.1.254 --job 7 --count 4 --raw-len 32 >/dev/null
send --dst 10.0.1.254 --job 7 --tree 5 >/dev/null
send --dst 10.0.1.254 --job 7 --raw-len 12 >/dev/null
send --dst 10.0.1.254 --job 8 --count 200 >/dev/null
settle
check_eq "bad version dropped as drop_version" 1 "$(counter sw job 7 drop_version)"
check_eq "wrong dtype dropped as drop_dtype" 1 "$(counter sw job 7 drop_dtype)"
check_eq "count not matching the length dropped as drop_length" 1 "$(counter sw job 7 drop_length)"
check_eq "unknown tree passed untouched as no_tree" 1 "$(counter sw job 7 no_tree)"
check_eq "truncated header dropped as drop_short" 1 "$(counter sw job 7 drop_short)"
check_eq "payload beyond the job's MTU dropped as drop_length" 1 "$(counter sw job 8 drop_length)"
check_eq "dropped packets never reach the stack (the unknown tree's and the marker do)" \
	"$((np + 2))" "$(noports sw)"

send --dst 10.0.1.254 --job 7 --raw-len 6 >/dev/null
send --dst 10.0.1.254 --job 7 --count 2000 >/dev/null
settle
check_eq "too short for a JID: ns_short; 8 KB datagram: 6 fragments passed" "1 6" \
	"$(counter sw namespace ns_short) $(counter sw namespace ns_fragment)"

np2=$(noports w2)
agg=$(counter sw tree 7 0 aggregated)
send --dst 10.0.2.1 --job 7 --tree 0 --vid 1 >/dev/null
send --dst 10.0.2.1 --job 99 >/dev/null
settle
check_eq "forwarded: job 7's contribution is taken by sw, job 99's reaches w2" \
	"$((agg + 1)) $((np2 + 1))" "$(counter sw tree 7 0 aggregated) $(noports w2)"

stats=$(netagg_in sw -j stats)
check_eq "namespace counters add up: seen = unknown + fragment + short + jobs' rx" \
	"$(jq '.namespace.ns_seen' <<<"$stats")" \
	"$(jq '(.namespace | .ns_unknown_job + .ns_fragment + .ns_short) + ([.jobs[].stats.rx] | add)' <<<"$stats")"
check_eq "job counters add up: rx = drops + no_tree + trees' rx" \
	"$(jq -c '[.jobs[] | .stats.rx]' <<<"$stats")" \
	"$(jq -c '[.jobs[] | ([.stats | to_entries[] | select(.key | test("^drop_|^no_tree$")) | .value] | add) + ([.trees[].stats.rx] | add)]' <<<"$stats")"
check_eq "each level reports its own counters" \
	'["ns_exthdr","ns_fragment","ns_seen","ns_short","ns_unknown_job","ns_xdp"] ["drop_dtype","drop_length","drop_segment","drop_short","drop_tag","drop_version","no_tree","rx"] ["abandoned","aggregated","drop_csum","drop_evicted","drop_late","drop_length","drop_nomem","drop_not_child","drop_not_parent","drop_probe","drop_round","drop_window","duplicate","emitted_up","evicted","fanned_out","fin","parent_lost","partial","probed","regrouped","rejoined","resent","results_rx","reused","rounds","rx","super_rx","super_tx"]' \
	"$(jq -c '.namespace | keys' <<<"$stats") $(jq -c '.jobs[0].stats | keys' <<<"$stats") $(jq -c '.jobs[0].trees[0].stats | keys' <<<"$stats")"
netagg_in sw reset job 7
check_eq "reset job 7 zeroes its counters and its tree's, not job 8's" "0 0 1" \
	"$(counter sw job 7 rx) $(counter sw tree 7 0 rx) $(counter sw job 8 rx)"
ktap_finish
