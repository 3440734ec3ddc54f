#!/bin/bash
# The datapath on one aggregation switch: exact sums to every worker, f32 and
# i32, sum and average, buffers of any length, several trees and jobs at
# once, results in VID order, FIN ending the round, ECN carried into the
# result, a dead worker removed from the bitmap, probes answered, and
# counters that add up.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (f32 sum, trees 0 and 1),
#   w3 10.0.3.1 --+   job 8 (i32 avg), job 9 (wire-level checks, w1 and w2),
#   w4 10.0.4.1 --+   job 21 (probes: w1, w2), job 22 (an aggregator of w1
#                     for parent w3)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
ALLREDUCE=$NETAGG_ALLREDUCE
BLAST=$NETAGG_ROOT/tests/tools/netagg-blast
PEER=$NETAGG_ROOT/tests/agg_peer.py

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 dtype f32 window 64
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
netagg_in sw tree add job 7 tree 1 role root "${kids[@]}"
netagg_in sw job add 8 dtype i32 op avg window 32
netagg_in sw tree add job 8 tree 0 role root "${kids[@]}"
netagg_in sw job add 9
netagg_in sw tree add job 9 tree 0 role root child 10.0.1.1 child 10.0.2.1

# allreduce JOB TIDS ARGS...: the four workers at once, each sending every
# tree (TIDS: 0,1) to its own address of sw; fails unless all verify. Each
# call takes fresh round numbers (up to 8 iterations), in session 0 without
# joining (--no-join): the counts below are the allreduces' alone.
allreduce() {
	local job=$1 tids=$2 i t pids=() rc=0 trees round
	shift 2
	round=$(next_round 8)
	for i in 1 2 3 4; do
		trees=()
		for t in ${tids//,/ }; do trees+=(--tree "$t=10.0.$i.254"); done
		ip netns exec "w$i" "$ALLREDUCE" --job "$job" --rank $((i - 1)) --workers 4 \
			--round "$round" --no-join --quiet "${trees[@]}" "$@" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}

both_jobs() {
	local a b
	allreduce 7 0,1 --count 300000 &
	a=$!
	allreduce 8 0 --count 300000 --dtype i32 --op avg --window 32
	b=$?
	wait $a && [ $b -eq 0 ]
}

ktap_plan 33
check "f32 sum of 100003 elements (not a multiple of a packet), one tree" \
	allreduce 7 0 --count 100003
pk=$(( (100003 + 361) / 362 ))
# (rx may exceed it: a worker whose result is slow probes, then resends;
# probes are counted as probed, resent contributions as duplicates)
check_eq "tree 0: every contribution summed once, every result sent to all four" \
	"$((4 * pk)) $((4 * pk)) $((4 * pk))" \
	"$(counter sw tree 7 0 aggregated) $(counter sw tree 7 0 fanned_out) $(( $(counter sw tree 7 0 rx) - $(counter sw tree 7 0 duplicate) - $(counter sw tree 7 0 probed) ))"
check_eq "FIN ended round 1 after its $pk VIDs; 4 FINs seen" "1 ended $pk 4" \
	"$(netagg_in sw -j show | jq -r '.jobs[] | select(.jid == 7) | .trees[0] | "\(.round) \(.round_state) \(.expected_vid)"') $(counter sw tree 7 0 fin)"
check "again, three times in a row (three rounds, VIDs from 0 each)" \
	allreduce 7 0 --count 5000 --iterations 3
a0=$(counter sw tree 7 0 aggregated)
check "f32 sum spread over trees 0 and 1" allreduce 7 0,1 --count 200000
n=$(( (200000 + 361) / 362 ))	# chunk c goes to tree c % 2
check_eq "chunks alternate between the trees" "$((4 * ((n + 1) / 2))) $((4 * (n / 2)))" \
	"$(( $(counter sw tree 7 0 aggregated) - a0 )) $(counter sw tree 7 1 aggregated)"
check "a buffer smaller than one packet" allreduce 7 0,1 --count 5
check "jobs 7 (f32 sum) and 8 (i32 average) at the same time" \
	both_jobs
# A packet finds its job in a table of 64 places (JID mod 64) in front of
# the xarray, where the job last created stays. Job 71 takes job 7's place:
# job 7's packets must still find job 7 (71 is i32: taken for it, they
# would be dropped as drop_dtype), and again once 71 is deleted.
netagg_in sw job add 71 dtype i32
check "job 71 took job 7's place in the job table: job 7 is still found" \
	allreduce 7 0 --count 2000
netagg_in sw job del 71
check "job 71 deleted: job 7 is still found" allreduce 7 0 --count 2000

# The routes results leave by are cached per CPU and lent to packets without
# a reference: one the routing tables dropped must not be used again. sw's
# link to w1 goes down and up (its route to w1 is deleted, and its cached
# copy goes dead, discarding what is sent by it); results must reach w1.
ip -n sw link set s1 down
ip -n sw link set s1 up
check "after sw's link to w1 went down and up, results still reach w1 (a dead route is not reused)" \
	allreduce 7 0 --count 5000

# Wire-level: w1 sends VIDs 3..0, w2 later sends 3..0 too; VIDs 1-3 are
# complete before 0, yet results must leave 0, 1, 2, 3.
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --vids 3,2,1,0 --expect 4 >"$TEST_TMP/w1.out" 2>&1 &
p1=$!
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --vids 3,2,1,0 --wait 0.5 --expect 4 \
	--ecn 3,0,2,2 >"$TEST_TMP/w2.out" 2>&1
wait $p1
check_eq "results leave in VID order, to both children" "0 1 2 3|0 1 2 3" \
	"$(grep -o 'vid=[0-9]*' "$TEST_TMP/w1.out" | cut -d= -f2 | xargs)|$(grep -o 'vid=[0-9]*' "$TEST_TMP/w2.out" | cut -d= -f2 | xargs)"
check_eq "results are flagged RESULT and say 2 contributors and the sum 2" \
	"4 4 4" "$(grep -c 'flags=1 ' "$TEST_TMP/w1.out") $(grep -c 'contributors=2 ' "$TEST_TMP/w1.out") $(grep -c 'first=2 ' "$TEST_TMP/w1.out")"
# w1 sent Not-ECT throughout; w2 sent VID 3 CE, VID 2 Not-ECT, VIDs 1, 0 ECT(0).
check_eq "ECN: CE on an input marks the result CE, ECT stays ECT, Not-ECT stays" \
	"vid=0:2 vid=1:2 vid=2:0 vid=3:3" \
	"$(awk '{ split($4, e, "="); printf "%s%s:%s", sep, $1, e[2]; sep = " " }' "$TEST_TMP/w1.out")"
check_eq "each result went back in its child's own contribution, rewritten" "8 8" \
	"$(counter sw tree 9 0 reused) $(counter sw tree 9 0 fanned_out)"

ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --vids 4,5 --fin 5 --expect 2 >"$TEST_TMP/w1.out" 2>&1 &
p1=$!
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --vids 4,5 --fin 5 --wait 0.3 --expect 2 >/dev/null 2>&1
wait $p1
check_eq "the FIN VID's result carries FIN, and the round ends there" "vid=5 flags=3|ended 6" \
	"$(grep -o 'vid=5 flags=[0-9]*' "$TEST_TMP/w1.out")|$(netagg_in sw -j show | jq -r '.jobs[] | select(.jid == 9) | .trees[0] | "\(.round_state) \(.expected_vid)"')"

# Two children disagree on VID 6's element count (in a new round): the
# second is refused.
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --round 1 --vids 6 --count 4 >/dev/null
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --round 1 --vids 6 --count 5 >/dev/null
check_eq "a contribution whose count differs from its VID's is dropped as drop_length" \
	1 "$(wait_counter 1 sw tree 9 0 drop_length)"

# A packet socket on w1's link gets a clone of each packet w1 sends, and
# the switch may not write into those: w1's result leaves in w2's packet,
# w2's in a new one (a new round, 2).
r0=$(counter sw tree 9 0 reused)
f0=$(counter sw tree 9 0 fanned_out)
ip netns exec sw python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("s1", 0))
open(sys.argv[1], "w").close()
time.sleep(10)' "$TEST_TMP/tap.ready" &
tap=$!
for i in $(seq 50); do [ -e "$TEST_TMP/tap.ready" ] && break; sleep 0.1; done
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --round 2 --vids 0,1,2,3 --expect 4 >"$TEST_TMP/w1.out" 2>&1 &
p1=$!
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --round 2 --vids 0,1,2,3 --wait 0.3 --expect 4 \
	>"$TEST_TMP/w2.out" 2>&1
wait $p1
kill $tap
# Through the XDP hook, the tap sees none of the packets the hook takes
# (XDP runs first), and each contribution is copied: all 8 carry results.
want="4 8 4 4"
[ -z "${NETAGG_XDP:-}" ] || want="8 8 4 4"
check_eq "a packet a tap also holds is not rewritten: reused ($want), all 8 exact" \
	"$want" "$(( $(counter sw tree 9 0 reused) - r0 )) $(( $(counter sw tree 9 0 fanned_out) - f0 )) $(grep -c 'contributors=2 .*first=2 ' "$TEST_TMP/w1.out") $(grep -c 'contributors=2 .*first=2 ' "$TEST_TMP/w2.out")"

# Contributions sent with MSG_ZEROCOPY reach the switch with their payload
# in pages (nonlinear): read through the bounce buffer, first copied and then
# summed, and never reused, so all eight results leave in new packets.
r0=$(counter sw tree 9 0 reused)
f0=$(counter sw tree 9 0 fanned_out)
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --round 3 --vids 0,1,2,3 --count 300 \
	--value 1.5 --zerocopy --expect 4 >"$TEST_TMP/w1.out" 2>&1 &
p1=$!
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --round 3 --vids 0,1,2,3 --count 300 \
	--value 2.25 --zerocopy --wait 0.3 --expect 4 >"$TEST_TMP/w2.out" 2>&1
wait $p1
got="$(( $(counter sw tree 9 0 reused) - r0 )) $(( $(counter sw tree 9 0 fanned_out) - f0 )) $(grep -c 'contributors=2 .*first=3.75 .*uniform=1' "$TEST_TMP/w1.out") $(grep -c 'contributors=2 .*first=3.75 .*uniform=1' "$TEST_TMP/w2.out")"
# Through the XDP hook, a frame is linear, and copied: every copy carries a
# result.
want="0 8 4 4"
[ -z "${NETAGG_XDP:-}" ] || want="8 8 4 4"
check_eq "paged (zero-copy) contributions: summed exactly, reused ($want), 8 results" "$want" "$got"
# What each worker saw, and the switch's view of the tree, when it failed.
[ "$got" = "$want" ] || { sed 's/^/# /' "$TEST_TMP/w1.out" "$TEST_TMP/w2.out"
	{ netagg_in sw -j show; netagg_in sw -j stats job 9; } | jq -c '.jobs[] | select(.jid == 9) | .trees[0]' | sed 's/^/# /'; }

# With checksum offload off on the switch's links, the results' UDP
# checksums are completed in software as they leave, and the workers verify
# them: a wrong pseudo-header sum would have the results dropped.
udp_csum_errors() {
	ip netns exec "$1" awk '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) f[i] = $i; h = 1; next }
		for (i = 2; i <= NF; i++) if (f[i] == "InCsumErrors") print $i }' /proc/net/snmp
}
ip netns exec sw ethtool -K s1 tx off >/dev/null
ip netns exec sw ethtool -K s2 tx off >/dev/null
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 9 --round 4 --vids 0,1 --expect 2 >"$TEST_TMP/w1.out" 2>&1 &
p1=$!
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 9 --round 4 --vids 0,1 --wait 0.3 --expect 2 \
	>"$TEST_TMP/w2.out" 2>&1
wait $p1
ip netns exec sw ethtool -K s1 tx on >/dev/null
ip netns exec sw ethtool -K s2 tx on >/dev/null
check_eq "checksummed in software on the way out, every result is accepted (no UDP checksum error)" \
	"2 2 0 0" "$(grep -c 'contributors=2 .*first=2 ' "$TEST_TMP/w1.out") $(grep -c 'contributors=2 .*first=2 ' "$TEST_TMP/w2.out") $(udp_csum_errors w1) $(udp_csum_errors w2)"

# A tree of one child: each slot completes with its first contribution,
# which stays in the child's packet until then, and must be kept all the
# same (a resend is answered from the slot).
netagg_in sw job add 11
netagg_in sw tree add job 11 tree 0 role root child 10.0.1.1
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 11 --vids 0,1 --count 300 --value 1.5 \
	--expect 2 >"$TEST_TMP/w1.out" 2>&1
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 11 --vids 0 --count 300 --value 1.5 \
	--retry --expect 1 >>"$TEST_TMP/w1.out" 2>&1
# Through the XDP hook, the resend leaves in a new packet: the retry's frame
# goes back to its driver.
want="3 3 1"
[ -z "${NETAGG_XDP:-}" ] || want="3 2 1"
check_eq "one child: its contribution is the result, in the packet it came in ($want), and kept" \
	"$want" "$(grep -c 'contributors=1 .*first=1.5 .*uniform=1' "$TEST_TMP/w1.out") $(counter sw tree 11 0 reused) $(counter sw tree 11 0 resent)"

# Probes (NETAGG_F_PROBE): a child asks what the node holds of the next
# 64 VIDs, and gets the maps of the contributions held and the results
# sent, nothing else: no result again. Job 21: w1, w2.
netagg_in sw job add 21
netagg_in sw tree add job 21 tree 0 role root child 10.0.1.1 child 10.0.2.1
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 21 --probe 0 --expect 1 >"$TEST_TMP/w1.out" 2>&1
check_eq "a probe before any round: answered, nothing held, and it starts no round" \
	"probe vid=0 flags=17 contributors=0 held=0x0 done=0x0 round=0|1 0" \
	"$(cat "$TEST_TMP/w1.out")|$(counter sw tree 21 0 probed) $(counter sw tree 21 0 rounds)"
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 21 --vids 0,1,2 --probe 0 --expect 1 \
	>"$TEST_TMP/w1.out" 2>&1
check_eq "w1 contributed VIDs 0-2 and probes: held 0x7, and only the answer comes" \
	"probe vid=0 flags=17 contributors=0 held=0x7 done=0x0 round=0" "$(cat "$TEST_TMP/w1.out")"
ip netns exec w2 "$PEER" --dst 10.0.2.254 --job 21 --vids 0,1,2 --expect 3 >/dev/null 2>&1
r0=$(counter sw tree 21 0 resent)
# A result sent again would come before the answer.
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 21 --probe 1 --expect 1 >"$TEST_TMP/w1.out" 2>&1
check_eq "w2 completed them; w1 probes from VID 1: held and done 0x3, no result sent again" \
	"probe vid=1 flags=17 contributors=0 held=0x3 done=0x3 round=0|0" \
	"$(awk '$1 == "probe" { print; next } { print $1, $3, $5 }' "$TEST_TMP/w1.out" | paste -sd'|')|$(( $(counter sw tree 21 0 resent) - r0 ))"
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 21 --probe 0 --probe-count 2 >/dev/null
check_eq "a probe that carries a payload is dropped as drop_probe" \
	1 "$(wait_counter 1 sw tree 21 0 drop_probe)"
# Job 22: sw aggregates w1 for parent w3, which never answers. w1's sum
# goes up at once; probed, sw sends it up again.
netagg_in sw job add 22
netagg_in sw tree add job 22 tree 0 role aggregator parent 10.0.3.1 child 10.0.1.1
ip netns exec w1 "$PEER" --dst 10.0.1.254 --job 22 --vids 0 --probe 0 --expect 1 \
	>"$TEST_TMP/w1.out" 2>&1
check_eq "an aggregator probed while its parent's result has not come: held 0x1, not done, its sum sent up again" \
	"probe vid=0 flags=17 contributors=0 held=0x1 done=0x0 round=0|1 1" \
	"$(cat "$TEST_TMP/w1.out")|$(counter sw tree 22 0 emitted_up) $(counter sw tree 22 0 resent)"
ip netns exec w3 "$PEER" --dst 10.0.3.254 --job 22 --vids 0 --count 2 --flags 17 >/dev/null
check_eq "a probe's answer that reaches a node (from its parent) is dropped as drop_probe" \
	1 "$(wait_counter 1 sw tree 22 0 drop_probe)"

# 64 children, the most a tree has, all behind w1's link (10.8.1-64.1, on
# link for sw): every contribution is found as its own child's by its
# address, or the VIDs never complete. Three of these addresses are not at
# the first place they hash to in the children's table (hash_32()), and
# 10.8.69.1, not a child, hashes to a taken place: neither is taken for
# another child.
src64=() kids64=()
for i in $(seq 64); do
	ip -n w1 addr add "10.8.$i.1/32" dev v0
	src64+=(--src "10.8.$i.1")
	kids64+=(child "10.8.$i.1")
done
ip -n w1 addr add 10.8.69.1/32 dev v0
ip -n sw route add 10.8.0.0/16 dev s1
netagg_in sw job add 12
netagg_in sw tree add job 12 tree 0 role root "${kids64[@]}"
check "64 children: each of 64 sockets gets a result for each of its 40 VIDs" \
	timeout 120 ip netns exec w1 "$BLAST" --dst 10.0.1.254 --job 12 --packets 40 \
	--window 8 --timeout-ms 10000 "${src64[@]}"
ip netns exec w1 "$PEER" --src 10.8.69.1 --dst 10.0.1.254 --job 12 --vids 0 \
	--round 1 >/dev/null 2>&1
check_eq "64 children: 2560 summed and sent, none a duplicate; 10.8.69.1 is drop_not_child" \
	"2560 2560 0 1" "$(counter sw tree 12 0 aggregated) $(counter sw tree 12 0 fanned_out) $(counter sw tree 12 0 duplicate) $(counter sw tree 12 0 drop_not_child)"

# A dead worker: w3 never sends. w1 and w2 wait for VIDs that cannot
# complete until the operator removes w3 from the bitmap; then the job goes
# on with the two contributions, and the results say so.
netagg_in sw job add 10
netagg_in sw tree add job 10 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
pids=()
for i in 1 2; do
	ip netns exec "w$i" "$ALLREDUCE" --job 10 --tree "0=10.0.$i.254" --rank $((i - 1)) \
		--workers 2 --count 2000 --timeout-ms 30000 --quiet &
	pids+=($!)
done
sleep 2
check_eq "with a dead child nothing completes" "0 0" \
	"$(counter sw tree 10 0 fanned_out) $(netagg_in sw -j show | jq '.jobs[] | select(.jid == 10) | .trees[0].expected_vid')"
netagg_in sw tree set job 10 tree 0 child 10.0.1.1 child 10.0.2.1
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
check_eq "removing it from the bitmap completes the job with the other two (exact sums, 2 contributors)" \
	0 "$rc"

stats=$(netagg_in sw -j stats)
check_eq "tree counters add up: rx = aggregated + duplicate + results_rx + probed + drops" \
	"$(jq -c '[.jobs[].trees[].stats.rx]' <<<"$stats")" \
	"$(jq -c '[.jobs[].trees[].stats | .aggregated + .duplicate + .results_rx + .probed + ([to_entries[] | select(.key | startswith("drop_")) | .value] | add)]' <<<"$stats")"
check_eq "nothing dropped but the one drop_length, the one drop_not_child and the two drop_probe" \
	"drop_length=1 drop_not_child=1 drop_probe=1 drop_probe=1" \
	"$(jq -r '[.jobs[] | (.stats, .trees[].stats) | to_entries[] | select((.key | startswith("drop_")) and .value > 0) | "\(.key)=\(.value)"] | sort | join(" ")' <<<"$stats")"
ktap_finish
