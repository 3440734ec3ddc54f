#!/bin/bash
# The XDP hook: netagg's XDP program on the switch's ports hands it the
# aggregation packets before any skb (veth runs XDP natively). Sums exact,
# every aggregation packet taken at XDP and aggregated once (the netfilter
# hook, always on, sees none of them), plain packets and super-packets (veth
# segments them once XDP is on), loss and duplicates, bad checksums dropped
# and counted, other traffic untouched, the CLI's errors, generic mode,
# ports in a bridge, and teardown with the program attached: rmmod refused
# until it is detached, the namespace deleted under traffic.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: netagg's XDP program on s1..s4; root of
#   w3 10.0.3.1 --+   job 7 (f32 sum) and job 8 (i32 avg), tree 0
#   w4 10.0.4.1 --+
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

require_btf

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 dtype f32 window 64
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
netagg_in sw job add 8 dtype i32 op avg window 32
netagg_in sw tree add job 8 tree 0 role root "${kids[@]}"

attach_all() {
	local i
	for i in 1 2 3 4; do netagg_in sw xdp attach "s$i" "$@" || return 1; done
}
detach_all() {
	local i
	for i in 1 2 3 4; do netagg_in sw xdp detach "s$i" || return 1; done
}
# taken: "seen xdp" of sw's namespace counters, less those at the mark.
mark() { read -r seen0 xdp0 <<<"$(netagg_in sw -j stats | jq -r '.namespace | "\(.ns_seen) \(.ns_xdp)"')"; }
taken() {
	netagg_in sw -j stats |
		jq -r --argjson s "$seen0" --argjson x "$xdp0" '.namespace | "\(.ns_seen - $s) \(.ns_xdp - $x)"'
}

ktap_plan 22
check "netagg xdp attach s1..s4 (native)" attach_all
check_eq "xdp show lists the four ports, native" "s1 native,s2 native,s3 native,s4 native" \
	"$(netagg_in sw -j xdp show | jq -r '[.xdp[] | "\(.dev) \(.mode)"] | sort | join(",")')"
check_eq "show has them too" 4 "$(netagg_in sw -j show | jq '.xdp | length')"
check "attaching again is a no-op" netagg_in sw xdp attach s1

# Without the join (session 0), the counts are the allreduce's alone.
mark
a0=$(counter sw tree 7 0 aggregated)
STAR_NOJOIN=1 check "f32 sum of 362000 elements, super-packets from the workers: exact" \
	star_allreduce 7 362000 1
read -r seen xdp <<<"$(taken)"
check_eq "every aggregation packet the switch saw was taken at XDP" "yes $seen" \
	"$([ "$seen" -ge 4000 ] && echo yes) $xdp"
check_eq "each contribution summed once: 4 x 1000" 4000 \
	"$(( $(counter sw tree 7 0 aggregated) - a0 ))"

mark
STAR_PLAIN="1 2 3 4" check "i32 average, plain packets: exact" \
	star_allreduce 8 100000 2 --dtype i32 --op avg
read -r seen xdp <<<"$(taken)"
check_eq "... all of it at XDP" "yes $seen" "$([ "$seen" -gt 0 ] && echo yes) $xdp"

netem_star 4 loss 2% duplicate 2%
check "2% loss and 2% duplicates on every link: exact" \
	star_allreduce 7 100000 2 --plain
netem_star 4 none
check_eq "duplicates were counted as such at XDP" some \
	"$(some "$(counter sw tree 7 0 duplicate)")"

# A contribution with a wrong UDP checksum: the checksum is computed at XDP
# (no device's word for it reaches XDP), dropped and counted.
c0=$(counter sw tree 7 0 drop_csum)
ip netns exec w1 "$NETAGG_ROOT/tests/tools/netagg-fuzz" --dst 10.0.1.254 --job 7 --tree 0 \
	--child 10.0.1.1 --quiet variants csum-bad >/dev/null 2>&1
check_eq "a bad UDP checksum is dropped as drop_csum" "$((c0 + 1))" \
	"$(wait_counter "$((c0 + 1))" sw tree 7 0 drop_csum)"

# Other traffic passes untouched: forwarded pings, UDP to the port unmarked,
# and an aggregation packet of a job sw does not know, which the netfilter
# hook then counts (once: XDP passed it on uncounted).
ip netns exec sw sysctl -qw net.ipv4.ip_forward=1
ip -n w1 route add 10.0.2.0/24 via 10.0.1.254
ip -n w2 route add 10.0.1.0/24 via 10.0.2.254
check "ping from w1 to w2, forwarded by sw" ip netns exec w1 ping -c 2 -W 2 10.0.2.1
u0=$(counter sw namespace ns_unknown_job)
mark
ip netns exec w1 "$NETAGG_SEND" --dst 10.0.1.254 --job 99 --tree 0 --vid 0 --count 4 \
	>/dev/null 2>&1
check_eq "an unknown job's packet passes XDP and is counted by netfilter, once" \
	"$((u0 + 1)) 1 0" \
	"$(wait_counter "$((u0 + 1))" sw namespace ns_unknown_job) $(taken)"

check_err "a device without native XDP: a clear error" \
	"cannot run XDP natively" netagg_in sw xdp attach lo
check_err "rmmod is refused while the program is attached" "in use" rmmod netagg
reload() { detach_all && rmmod netagg && insmod "$NETAGG_KO"; }
check "detach from s1..s4; rmmod and insmod" reload

# Generic mode: the program runs on the skb.
netagg_in sw job add 7 dtype f32 window 64
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
attach_all mode generic
mark
check "generic mode: f32 sum exact" star_allreduce 7 50000 1 --plain
read -r seen xdp <<<"$(taken)"
check_eq "... all of it at XDP" "yes $seen" "$([ "$seen" -gt 0 ] && echo yes) $xdp"

# A bridge's ports: once the workers have asked again, they address br0,
# whose MAC is at most one port's (bridge_star: br0 takes the ports' IPv4
# addresses); the frames to it come in by the others too.
detach_all
bridge_star 4
for i in 1 2 3 4; do ip -n "w$i" neigh flush all; done
attach_all
mark
check "ports in a bridge: f32 sum exact" star_allreduce 7 50000 1 --plain
read -r seen xdp <<<"$(taken)"
check_eq "... all of it at XDP, on ports whose own MAC it was not sent to" "yes $seen some" \
	"$([ "$seen" -gt 0 ] && echo yes) $xdp $(some "$(ip -n sw -br link show master br0 |
		awk -v m="$(ip -n sw -br link show br0 | awk '{ print $3 }')" '$3 != m' | wc -l)")"

# The namespace goes with traffic in flight through the program.
star_allreduce 7 2000000 5 --plain >/dev/null 2>&1 &
sleep 2
ip netns del sw
NS_LIST=("${NS_LIST[@]/sw}")
wait
# Deleting a namespace is asynchronous, and so is freeing the programs on
# its ports, each of which holds the module: up to 10 s (scaled).
check "sw deleted under traffic through XDP; the module unloads" rmmod_wait "$(scaled 100)"
ktap_finish
