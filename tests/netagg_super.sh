#!/bin/bash
# Super-packets: workers send runs of chunks as one UDP GSO packet and take
# results the same way; the switch sums every segment as the packet it
# stands for and answers in super-packets. Exact sums, each segment summed
# once, mixed with plain packets on one tree (a worker that sends only
# plain packets, and gets the switch's super-packets cut into packets by its
# kernel), under loss and reordering, and a bad segment dropped and counted
# while the rest of its super-packet is summed. Last, the same sums through
# a bridged switch (its ports in br0), under loss, reordering and
# duplication.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (f32 sum, window 256),
#   w3 10.0.3.1 --+   job 8 (i32 avg) and job 9 (w1 alone, wire-level
#   w4 10.0.4.1 --+   checks); netem on v0 and sN for the loss cases
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
SEND=$NETAGG_ROOT/tests/tools/netagg-send

require_module sch_netem
module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 dtype f32 window 256
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
netagg_in sw job add 8 dtype i32 op avg
netagg_in sw tree add job 8 tree 0 role root "${kids[@]}"
netagg_in sw job add 9
netagg_in sw tree add job 9 tree 0 role root child 10.0.1.1

# allreduce JOB COUNT ITERATIONS PLAIN ARGS...: the four workers
# (star_allreduce, not joining: the counts are the allreduces'); those
# listed in PLAIN (e.g. "1 2") send plain packets only.
allreduce() { STAR_PLAIN=$4 STAR_NOJOIN=1 star_allreduce "$1" "$2" "$3" "${@:5}"; }
super_sent() { jq -s -r "[.[] | select(.rank == $1) | .super_sent] | add" "$TEST_TMP/ar.json"; }
retransmits() { jq -s '[.[].retransmits] | add' "$TEST_TMP/ar.json"; }
chunks() { echo $(( ($1 + 361) / 362 )); }	# elements per packet at MTU 1500
delta() { echo $(( $(counter sw tree "$1" 0 "$2") - $3 )); }

ktap_plan 23

a0=$(counter sw tree 7 0 aggregated)
f0=$(counter sw tree 7 0 fanned_out)
check "super-packets: f32 sum of 1000003 elements, exact on 4 workers" \
	allreduce 7 1000003 1 ""
check "every worker sent super-packets" \
	test "$(jq -s '[.[] | select(.super_sent > 0)] | length' "$TEST_TMP/ar.json")" -eq 4
check_eq "each segment summed exactly once, and its result sent once to each worker" \
	"$((4 * $(chunks 1000003))) $((4 * $(chunks 1000003)))" \
	"$(delta 7 aggregated "$a0") $(delta 7 fanned_out "$f0")"
check "the switch took super-packets and sent results in super-packets" \
	test "$(counter sw tree 7 0 super_rx)" -gt 0 -a "$(counter sw tree 7 0 super_tx)" -gt 0

check "i32 average in super-packets: exact, 3 rounds" \
	allreduce 8 300000 3 "" --dtype i32 --op avg

# Smaller super-packets (--segments 4), and a warm-up before 2 timed rounds:
# the switch sums all 3 rounds, the workers count and time only the 2.
a0=$(counter sw tree 7 0 aggregated)
check "super-packets of at most 4 chunks, a warm-up and 2 timed rounds: exact" \
	allreduce 7 200000 2 "" --segments 4 --warmup
check_eq "no send took more than 4 chunks, each worker sent each timed chunk" \
	"4 4" "$(jq -s --argjson c $((2 * $(chunks 200000))) '[.[] |
	select(.sends * 4 >= .packets_sent and .sends < .packets_sent and
	       .packets_sent - .retransmits == $c)] | length' "$TEST_TMP/ar.json") \
$(jq -s '[.[] | select(.iterations == 2 and (.times | length) == 2 and
	       all(.times[]; . > 0))] | length' "$TEST_TMP/ar.json")"
check_eq "the switch summed the warm-up's chunks too, each once" \
	"$((4 * 3 * $(chunks 200000)))" "$(delta 7 aggregated "$a0")"

# Mixed: w1 and w2 send plain packets only (and read results without UDP
# GRO: their kernel cuts the switch's super-packets into packets). A VID's
# results go out as the packet that completes it came: w3's and w4's
# contributions are sent 20 ms late, so that super-packets complete VIDs
# (left to the emulator's timing, the plain ones came last every time in
# one run, and no result went down in a super-packet).
a0=$(counter sw tree 7 0 aggregated)
r0=$(counter sw tree 7 0 super_rx)
t0=$(counter sw tree 7 0 super_tx)
tc -n w3 qdisc add dev v0 root netem delay 20ms
tc -n w4 qdisc add dev v0 root netem delay 20ms
check "two workers plain, two with super-packets, one tree: exact, 2 rounds" \
	allreduce 7 500000 2 "1 2"
tc -n w3 qdisc del dev v0 root
tc -n w4 qdisc del dev v0 root
check_eq "the plain workers sent no super-packet, the others did" "0 0 yes yes" \
	"$(super_sent 0) $(super_sent 1) $([ "$(super_sent 2)" -gt 0 ] && echo yes) \
$([ "$(super_sent 3)" -gt 0 ] && echo yes)"
check_eq "every contribution summed once, plain and segments alike" \
	"$((4 * 2 * $(chunks 500000)))" "$(delta 7 aggregated "$a0")"
check "super-packets went both ways in the mixed run" \
	test "$(delta 7 super_rx "$r0")" -gt 0 -a "$(delta 7 super_tx "$t0")" -gt 0

# Loss and reordering: a super-packet lost is up to 44 packets lost at once.
a0=$(counter sw tree 7 0 aggregated)
netem_star 4 delay 1ms reorder 75% 50% loss 3%
check "3% loss and reordering each way: exact, 3 rounds, one worker plain" \
	allreduce 7 300000 3 "4"
netem_star 4 none
check_eq "under loss every contribution was still summed exactly once" \
	"$((4 * 3 * $(chunks 300000)))" "$(delta 7 aggregated "$a0")"
check "the workers retransmitted what was lost" test "$(retransmits)" -gt 0

# A bad segment: 10 packets of job 9 in one super-packet, the fourth of
# another tree. It is dropped and counted; the other nine are summed.
a0=$(counter sw tree 9 0 aggregated)
s0=$(counter sw job 9 drop_segment)
r0=$(counter sw tree 9 0 super_rx)
check "a super-packet of 10 packets, one of another tree, is sent" \
	ip netns exec w1 "$SEND" --dst 10.0.1.254 --job 9 --vids 10 --count 362 --round 5 \
	--super --stray 3
check_eq "its other segments were summed, the stray one dropped as drop_segment" \
	"9 1 1" "$(wait_counter $((a0 + 9)) sw tree 9 0 aggregated | awk -v a="$a0" '{ print $1 - a }') \
$(( $(counter sw job 9 drop_segment) - s0 )) $(( $(counter sw tree 9 0 super_rx) - r0 ))"
check_eq "counters add up: job rx = its drops + the tree's rx" \
	"$(counter sw job 9 rx)" \
	"$(( $(counter sw job 9 drop_segment) + $(counter sw job 9 drop_length) + \
	$(counter sw job 9 drop_short) + $(counter sw tree 9 0 rx) ))"
check_eq "a plain packet still summed on that tree after it" "1" \
	"$(ip netns exec w1 "$SEND" --dst 10.0.1.254 --job 9 --vid 10 --count 362 --round 5 &&
	   wait_counter $((a0 + 10)) sw tree 9 0 aggregated | awk -v a="$a0" '{ print $1 - a - 9 }')"

# Bridged: sw's ports in br0, which has their addresses; every packet
# reaches the module and leaves it through the bridge.
bridge_star 4
a0=$(counter sw tree 7 0 aggregated)
t0=$(counter sw tree 7 0 super_tx)
check "bridged switch: f32 sum of 1000003 elements in super-packets, exact" \
	allreduce 7 1000003 1 ""
check_eq "bridged: each segment summed once, results went down in super-packets" \
	"$((4 * $(chunks 1000003))) yes" \
	"$(delta 7 aggregated "$a0") $([ "$(delta 7 super_tx "$t0")" -gt 0 ] && echo yes)"
a0=$(counter sw tree 7 0 aggregated)
netem_star 4 delay 1ms reorder 50% 50% loss 1% duplicate 1%
check "bridged, 1% loss, reordering and duplication each way, one worker plain: exact, 2 rounds" \
	allreduce 7 300000 2 "4"
netem_star 4 none
check_eq "bridged, under loss and duplicates: every contribution summed exactly once" \
	"$((4 * 2 * $(chunks 300000)))" "$(delta 7 aggregated "$a0")"

ktap_finish
