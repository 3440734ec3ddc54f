#!/bin/bash
# Loss, reordering and duplication (netem on every link): each allreduce
# ends with the exact sum on every worker or a clear error in bounded time,
# never a wrong buffer, and a worker late to it costs the others no
# retransmission. Retransmissions are never summed twice (the switch
# sums exactly workers x chunks contributions a round, however many
# arrive), lost results come again from the kept copy, rounds never mix,
# and no loss pattern leaves the window stuck.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (4 workers, window 64)
#   w3 10.0.3.1 --+   and job 9 (w1 and w2 only, wire-level checks)
#   w4 10.0.4.1 --+   netem on v0 (worker side) and sN (switch side)
#
# then the two racks of netagg_twolevel.sh with loss between agg1 and root.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
PEER=$NETAGG_ROOT/tests/agg_peer.py

require_module sch_netem
module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 window 64
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
netagg_in sw job add 9
netagg_in sw tree add job 9 tree 0 role root child 10.0.1.1 child 10.0.2.1

# allreduce COUNT ITERATIONS [ARGS...]: the four workers on job 7
# (star_allreduce).
allreduce() { star_allreduce 7 "$@"; }
# Of the allreduces and of the join before them (where a late worker is
# waited for).
retransmits() { jq -s '[.[] | .retransmits + .join_retransmits] | add' "$TEST_TMP/ar.json"; }
# waited FILE: what the workers of FILE (JSON lines) resent while a late
# worker was waited for, "retransmits=N". They wait in the join before the
# allreduce, probing; the allreduce then starts together and, on the
# netfilter path, resends nothing either. Through the XDP hook on veth it
# may, with nothing late or lost: veth runs the program in a NAPI poll on
# whichever CPU scheduled it, and what the node sends from there queues in
# that CPU's backlog; when the host starves one vCPU (TCG beside a second
# VM), results queued there are overtaken by the other CPU's for longer
# than the workers' reordering window, and they fast-retransmit, as the
# first case allows. Beside a second VM, 4 of 25 two-rack allreduces did
# through XDP, none of 25 without, none of 25 through XDP on one vCPU. So
# through XDP the join's count alone (docs/xdp.md, "veth").
waited() {
	local what=.retransmits+.join_retransmits
	[ -z "${NETAGG_XDP:-}" ] || what=.join_retransmits
	echo "retransmits=$(jq -s "[.[] | $what] | add" "$1")"
	[ -z "${NETAGG_XDP:-}" ] ||
		echo "# the allreduce after the join resent $(jq -s '[.[] | .retransmits] | add' "$1") (not counted: reordering, above)" >&2
}
tree7() { netagg_in sw -j show | jq -r ".jobs[] | select(.jid == 7) | .trees[0] | $1"; }
chunks() { echo $(( ($1 + 361) / 362 )); }	# elements per packet at MTU 1500

# joined: the chunks each worker's join added on tree 0: two a try (its
# nonces, then its confirmation), the tries its JSON line says.
joined() { jq -s '.[0].joins * 2' "$TEST_TMP/ar.json"; }

# lossy DESC COUNT ITERATIONS NETEM...: an exact allreduce under the
# impairment (the workers' join too), and exactly one contribution summed
# per worker and chunk.
lossy() {
	local desc=$1 count=$2 iters=$3 a0 rc
	shift 3
	netem_star 4 "$@"
	a0=$(counter sw tree 7 0 aggregated)
	allreduce "$count" "$iters" >"$TEST_TMP/lossy.out" 2>&1
	rc=$?
	netem_star 4 none
	if [ $rc -ne 0 ]; then
		ktap_result fail "$desc" "$(cat "$TEST_TMP/lossy.out")"
		return
	fi
	check_eq "$desc" "$((4 * ($(chunks "$count") * iters + $(joined))))" \
		"$(( $(counter sw tree 7 0 aggregated) - a0 ))"
	echo "# $desc: $(retransmits) retransmissions by the workers," \
		"switch: $(counter sw tree 7 0 duplicate) duplicates, $(counter sw tree 7 0 resent) resent"
}

ktap_plan 21
check "no impairment: exact" allreduce 100000 1
echo "# no impairment: $(retransmits) retransmissions (spurious ones are harmless duplicates)"
# A worker late to the allreduce: the others' results are overdue with
# nothing lost. They probe, the switch says it holds their contributions,
# and they wait on without resending.
p0=$(counter sw tree 7 0 probed)
STAR_LATE="4 1" check "worker 4 enters the allreduce 1 s after the others: exact" \
	allreduce 100000 1
check_eq "the others waited with probes, resending nothing; the switch answered them" \
	"retransmits=0 probes=some probed=some" \
	"$(waited "$TEST_TMP/ar.json") probes=$(some "$(jq -s '[.[] | .probes + .join_probes] | add' "$TEST_TMP/ar.json")") probed=$(some $(( $(counter sw tree 7 0 probed) - p0 )))"
lossy "1% loss each way: exact, every contribution summed once, 3 rounds" 200000 3 loss 1%
r1=$(retransmits)
lossy "10% loss each way: exact, summed once, 2 rounds" 50000 2 loss 10%
# Contributions travel in super-packets, which netem drops whole: at 1% a
# run may lose none (it did, once in nine), at 10% every run lost many.
check "under loss the workers retransmitted (the 1% and 10% runs)" \
	test $((r1 + $(retransmits))) -gt 0
check_eq "lost results were re-sent from the kept copies, no round given up" "1 0" \
	"$(( $(counter sw tree 7 0 resent) > 0 )) $(counter sw tree 7 0 abandoned)"
lossy "reordering (delay 2ms, 25% out of order): exact, summed once" 100000 2 delay 2ms reorder 75% 50%
lossy "10% duplication: exact, summed once" 100000 2 duplicate 10%
check "network duplicates were counted, not summed" test "$(counter sw tree 7 0 duplicate)" -gt 0
lossy "all at once (5% loss, 5% duplicates, reordering): exact, summed once" 50000 3 \
	delay 1ms reorder 75% 50% loss 5% duplicate 5%
check_eq "after all of it the round ended cleanly: no slot left waiting" \
	"ended $(chunks 50000)" "$(tree7 '"\(.round_state) \(.expected_vid)"')"

# A dead link: w4's packets never arrive. Every worker's call must end with
# an error once no result came for --timeout-ms, not hang and not succeed.
tc -n w4 qdisc add dev v0 root netem loss 100%
round=$(next_round 1)
for i in 1 2 3 4; do
	timeout 60 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 7 --tree "0=10.0.$i.254" \
		--rank $((i - 1)) --workers 4 --count 20000 --round "$round" --timeout-ms 2000 \
		>/dev/null 2>"$TEST_TMP/dead.$i" &
	pids[i]=$!
done
fails=0
for i in 1 2 3 4; do
	wait "${pids[i]}"
	# 1: the worker failed by itself (124 would be timeout(1) killing it)
	[ $? -eq 1 ] && grep -q 'timed out' "$TEST_TMP/dead.$i" && fails=$((fails + 1))
done
tc -n w4 qdisc del dev v0 root
check_eq "a dead link: all four calls fail with 'timed out', none hangs" 4 "$fails"
ab0=$(counter sw tree 7 0 abandoned)
check "the next round gives up the stuck one and completes exactly" allreduce 20000 1
check_eq "one round abandoned" 1 "$(( $(counter sw tree 7 0 abandoned) - ab0 ))"

# Wire level, job 9 (w1, w2). Round 5: VIDs 0, 1 (FIN).
peer() { local ns=$1; shift; ip netns exec "$ns" "$PEER" --job 9 --dst "10.0.${ns#w}.254" "$@"; }
peer w1 --round 5 --vids 0,1 --fin 1 --value 1 --expect 2 >/dev/null &
peer w2 --round 5 --vids 0,1 --fin 1 --value 1 --expect 2 --wait 0.3 >/dev/null
wait
# A late network duplicate of round 5 (no RETRY) must not be summed into
# round 6; a RETRY of round 5 during round 6 gets round 5's kept result.
peer w1 --round 5 --vids 0 --value 100 >/dev/null
peer w1 --round 6 --vids 0 --value 1 --expect 1 >"$TEST_TMP/r6.w1" &
peer w2 --round 6 --vids 0 --value 1 --expect 1 --wait 0.3 >/dev/null
wait
peer w2 --round 5 --vids 1 --retry --expect 1 >"$TEST_TMP/r5.w2"
check_eq "a late duplicate of an ended round is not summed into the next" \
	"vid=0 flags=1 contributors=2 first=2 round=6" \
	"$(awk '{ print $1, $2, $3, $5, $7 }' "$TEST_TMP/r6.w1")"
check_eq "a RETRY of the previous round gets its kept result (FIN kept too)" \
	"vid=1 flags=3 contributors=2 first=2 round=5" \
	"$(awk '{ print $1, $2, $3, $5, $7 }' "$TEST_TMP/r5.w2")"

# Two racks: 10% loss on the link between agg1 and root, both ways, and 2%
# on every worker's link: aggregators resend kept partial sums, the root
# resends kept results, and the sums stay exact.
del_ns_all
topo_racks
rk1=(child 10.1.0.1 child 10.1.0.2 child 10.1.0.3)
rk2=(child 10.2.0.4 child 10.2.0.5 child 10.2.0.6)
for r in 1 2; do netagg_in "agg$r" job add 7; done
netagg_in root job add 7
netagg_in agg1 tree add job 7 tree 0 role aggregator parent 10.9.1.254 "${rk1[@]}"
netagg_in agg2 tree add job 7 tree 0 role aggregator parent 10.9.2.254 "${rk2[@]}"
netagg_in root tree add job 7 tree 0 role root child 10.9.1.1 child 10.9.2.1
# racks ROUND ITERATIONS [LATE]: the six workers, worker LATE 1 s after the
# others; their JSON lines in $TEST_TMP/rk.json.
racks() {
	local round=$1 iters=$2 late=${3:-0} w r pids=() rc=0
	for w in 1 2 3 4 5 6; do
		r=$(rack_of "$w")
		([ "$w" = "$late" ] && sleep 1
		 exec timeout 120 ip netns exec "w$w" "$NETAGG_ALLREDUCE" --job 7 --rank $((w - 1)) \
			--workers 6 --count 50000 --iterations "$iters" --round "$round" \
			--timeout-ms 10000 -j --tree "0=10.$r.0.254") >"$TEST_TMP/rk.$w" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	cat "$TEST_TMP"/rk.[1-6] >"$TEST_TMP/rk.json"
	return $rc
}
# w1 late: agg2's workers and agg1's others probe; agg2, still waiting for
# the root's results, sends its sums up again; nothing is resent.
check "two racks, w1 1 s late: exact" racks 10 1 1
got="$(waited "$TEST_TMP/rk.json") probed=$(some "$(counter agg1 tree 7 0 probed)"),$(some "$(counter agg2 tree 7 0 probed)")"
check_eq "the others waited with probes, resending nothing; both aggregators answered" \
	"retransmits=0 probed=some,some" "$got"
# What each worker and aggregator saw, when it failed.
[ "$got" = "retransmits=0 probed=some,some" ] || {
	jq -c '{rank, retransmits, join_retransmits, probes, join_probes, joins}' "$TEST_TMP/rk.json"
	for n in agg1 agg2 root; do echo "$n $(netagg_in "$n" -j stats | jq -c '.namespace, .jobs[0].trees[0].stats')"; done
} | sed 's/^/# /'
for n in agg1 agg2 root; do netagg_in "$n" reset job 7; done
tc -n agg1 qdisc add dev u0 root netem loss 10%
tc -n root qdisc add dev d1 root netem loss 10%
for w in 1 2 3 4 5 6; do
	tc -n "w$w" qdisc add dev v0 root netem loss 2%
	tc -n "agg$(rack_of "$w")" qdisc add dev "p$w" root netem loss 2%
done
check "two racks, 10% loss between agg1 and root, 2% at the workers: exact, 2 rounds" racks 1 2
# Two rounds of the chunks, and the join's two a try.
n=$(( 2 * $(chunks 50000) + 2 * $(jq -s '.[0].joins' "$TEST_TMP/rk.json") ))
check_eq "each level summed every contribution exactly once (agg1, agg2, root)" \
	"$((3 * n)) $((3 * n)) $((2 * n))" \
	"$(counter agg1 tree 7 0 aggregated) $(counter agg2 tree 7 0 aggregated) $(counter root tree 7 0 aggregated)"
ktap_finish
