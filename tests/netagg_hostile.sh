#!/bin/bash
# Hostile input: every malformed variant we can think of, then 100,000
# random packets, sent from a raw socket (spoofed sources, fragments, IP
# options, bad checksums, any DSCP), and a super-packet with a segment of
# another tree, from a UDP socket (a raw socket cannot send GSO); then the
# same over IPv6 to an IPv6 tree (extension headers, fragment headers,
# payload lengths that lie, headers cut short, a datagram without a
# checksum, 20,000 random ones). The switch keeps working: every packet
# it recognises is counted once under a reason, the counters add up, it
# allocates nothing (its memory is fixed at configuration), the kernel log
# stays clean, and an exact allreduce still completes afterwards.
#
#   w1 10.0.1.1 (the fuzzer; a child; also spoofs 10.0.1.9) --+-- sw
#   w2 10.0.2.1 (a child)                                    --+
#   (and their IPv6 twins, fd00:0:1::1 and so on: job 9's tree)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
FUZZ=$NETAGG_ROOT/tests/tools/netagg-fuzz
SEND=$NETAGG_ROOT/tests/tools/netagg-send

module_load
# A burst of 100,000 packets must not overflow the backlog before the hook.
sysctl -qw net.core.netdev_max_backlog=200000
topo_star 2
netagg_in sw job add 7 window 64
netagg_in sw tree add job 7 tree 0 role root child 10.0.1.1 child 10.0.2.1
netagg_in sw job add 8 dtype i32 mtu 576
netagg_in sw tree add job 8 tree 0 role aggregator parent 10.0.2.1 child 10.0.1.1
netagg_in sw job add 9 window 64
netagg_in sw tree add job 9 tree 0 role root child fd00:0:1::1 child fd00:0:2::1

fuzz() { ip netns exec w1 "$FUZZ" --dst 10.0.1.254 --job 7 --tree 0 \
	--child 10.0.1.1 --stranger 10.0.1.9 --summary "$@"; }
fuzz6() { ip netns exec w1 "$FUZZ" --dst fd00:0:1::254 --job 9 --tree 0 \
	--child fd00:0:1::1 --stranger fd00:0:1::9 --summary "$@"; }
# The identities the uapi header promises, over namespace, jobs and trees.
adds_up() {
	netagg_in sw -j stats | jq -e '
		def drops: [to_entries[] | select(.key | test("^drop_|^no_tree$")) | .value] | add;
		.jobs as $jobs |
		(.namespace | .ns_seen == .ns_unknown_job + .ns_fragment + .ns_short +
			([$jobs[].stats.rx] | add)) and
		all($jobs[]; .stats.rx == (.stats | drops) + ([.trees[].stats.rx] | add // 0)) and
		all($jobs[].trees[].stats; .rx == .aggregated + .duplicate + .results_rx + .probed + drops)' >/dev/null
}
# Packets cross veth asynchronously: wait until sw has seen them all.
quiesce() {
	local last=-1 now i
	for i in $(seq 100); do
		now=$(counter sw namespace ns_seen)
		[ "$now" = "$last" ] && return
		last=$now
		sleep 0.3
	done
}
mem() { netagg_in sw -j show | jq -c '[.namespace.mem_used, [.jobs[].mem_used]]'; }

ktap_plan 19
mem0=$(mem)
seen0=$(counter sw namespace ns_seen)
frag0=$(counter sw namespace ns_fragment)
check "every malformed variant sent" bash -c "$(declare -f fuzz); FUZZ='$FUZZ'; fuzz variants --quiet >'$TEST_TMP/variants.json'"
quiesce
check_eq "each recognisable one counted once (seen, fragments)" \
	"$(jq -c '[.seen, .fragment]' "$TEST_TMP/variants.json")" \
	"[$(( $(counter sw namespace ns_seen) - seen0 )),$(( $(counter sw namespace ns_fragment) - frag0 ))]"
check "and the counters add up" adds_up
seen0=$(counter sw namespace ns_seen)
check "a super-packet of 6 segments, the third of another tree, sent" \
	ip netns exec w1 "$SEND" --dst 10.0.1.254 --job 7 --vid 100 --vids 6 --count 362 \
	--round 77 --super --stray 2
check_eq "seen as its 6 segments, and the counters add up" "6 yes" \
	"$(wait_counter $((seen0 + 6)) sw namespace ns_seen | awk -v s="$seen0" '{ print $1 - s }') \
$(adds_up && echo yes)"
# Over IPv6: its own variants (extension headers skipped, whatever their
# kind and length; chains that lead nowhere; fragment headers; payload
# lengths that lie; headers cut short) and those it shares with IPv4.
seen0=$(counter sw namespace ns_seen)
frag0=$(counter sw namespace ns_fragment)
ext0=$(counter sw namespace ns_exthdr)
check "IPv6: every malformed variant sent" bash -c "$(declare -f fuzz6); FUZZ='$FUZZ'; fuzz6 variants --quiet >'$TEST_TMP/variants6.json'"
quiesce
check_eq "... each recognisable one counted once (seen, fragments, behind extension headers)" \
	"$(jq -c '[.seen, .fragment, .exthdr]' "$TEST_TMP/variants6.json")" \
	"[$(( $(counter sw namespace ns_seen) - seen0 )),$(( $(counter sw namespace ns_fragment) - frag0 )),$(( $(counter sw namespace ns_exthdr) - ext0 ))]"
check "... and the counters add up" adds_up
csum0=$(counter sw tree 9 0 drop_csum)
check "IPv6: a datagram without a UDP checksum sent" bash -c "$(declare -f fuzz6); FUZZ='$FUZZ'; fuzz6 variants csum-zero --quiet >/dev/null"
check_eq "... refused: IPv6 has no checksum-less UDP (drop_csum)" 1 \
	"$(( $(wait_counter $((csum0 + 1)) sw tree 9 0 drop_csum) - csum0 ))"
seen0=$(counter sw namespace ns_seen)
check "IPv6: 20,000 random packets sent" bash -c "$(declare -f fuzz6); FUZZ='$FUZZ'; fuzz6 random 20000 --seed 6 --quiet --pps 10000 >'$TEST_TMP/random6.json'"
quiesce
check_eq "... each recognisable one counted once, and the counters add up" \
	"$(jq .seen "$TEST_TMP/random6.json") yes" \
	"$(( $(counter sw namespace ns_seen) - seen0 )) $(adds_up && echo yes)"

# (not drop_nomem; nor the tree's drop_length, two children disagreeing on
# a VID's count, which netagg_agg.sh covers: a second packet from one child
# is a duplicate first; nor drop_late, a contribution to a VID a quorum
# completed, which netagg_partial.sh covers: this tree has no quorum; nor
# drop_evicted, which netagg_evict.sh covers: it evicts nobody; nor
# drop_tag, which netagg_key.sh covers: this job has no key; ns_xdp is no
# reason, but which hook took them)
# Through the XDP hook no super-packet reaches sw: veth segments what it
# sends to a port running XDP, so the stray segment is a packet of a tree
# sw does not have (no_tree), and drop_segment cannot happen.
nosegment=
[ -z "${NETAGG_XDP:-}" ] || nosegment=drop_segment
check_eq "the variants hit every reason a packet can be refused for" "[]" \
	"$(netagg_in sw -j stats | jq -c --arg skip "$nosegment" '[(.namespace | to_entries[]),
		(.jobs[] | select(.jid == 7) | (.stats | to_entries[]),
			(.trees[0].stats | to_entries[] | select(.key != "drop_length")))] |
		map(select(.key | test("^ns_|^drop_|^no_tree$|^duplicate$")) |
		select(.key != "drop_nomem" and .key != "drop_late" and
		       .key != "drop_evicted" and .key != "drop_tag" and .key != "ns_xdp" and
		       .key != $skip and
		       .value == 0) |
		.key)')"

seen0=$(counter sw namespace ns_seen)
# A port running XDP takes packets from veth's ring of 256, not from the
# backlog raised above: sent as fast as it goes, part of the burst would be
# lost on the way, before any hook. Paced, none is.
pace=
[ -z "${NETAGG_XDP:-}" ] || pace="--pps 10000"
check "100,000 random packets sent" bash -c "$(declare -f fuzz); FUZZ='$FUZZ'; fuzz random 100000 --seed 42 --quiet $pace >'$TEST_TMP/random.json'"
quiesce
check_eq "each recognisable one counted once" "$(jq .seen "$TEST_TMP/random.json")" \
	"$(( $(counter sw namespace ns_seen) - seen0 ))"
check "and the counters add up" adds_up
check_eq "no memory allocated by any of it" "$mem0" "$(mem)"
check "the switch still answers its CLI" netagg_in sw show
netagg_in sw reset job 7	# spoofed children filled slots: the operator starts over
check "an exact allreduce afterwards" bash -c "
	ip netns exec w1 '$NETAGG_ALLREDUCE' --job 7 --tree 0=10.0.1.254 --rank 0 --workers 2 --count 100000 --quiet &
	ip netns exec w2 '$NETAGG_ALLREDUCE' --job 7 --tree 0=10.0.2.254 --rank 1 --workers 2 --count 100000 --quiet
	a=\$?; wait \$! && [ \$a -eq 0 ]"
ktap_finish
