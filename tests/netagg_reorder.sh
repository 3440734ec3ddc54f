#!/bin/bash
# Results that overtake each other are not taken for lost. A scripted root
# (tests/reorder_node.py, no module) answers every super-packet, and every
# run of plain packets, with its results in reverse VID order, queued at the
# worker's socket at once: nothing is lost, so the worker must not resend
# anything (before, any result 3 VIDs ahead of a waiting one resent it). The
# RTO is held at its 1 s maximum, so that only the fast retransmission can
# resend here. Last, the node loses a result where nothing follows it (the
# FIN chunk's) and does not know probes: the worker's probe goes
# unanswered, and the chunk must be resent after it. And a node catching up
# on a backlog (the node, --catch-up) sends results before it answers the
# probes queued behind them: the worker must probe again, not resend.
# Then one result held back (--late): the worker resends its chunk, gets
# the answer and then the first result too, and undoes the cut it made;
# and one lost (--lose): the answer alone comes, and the cut stands.
# Last, a probe's answer that overtakes the results it says were sent
# (--overtake): nothing resent; and one whose results were lost
# (--overtake-lost): they are asked for after the reordering window, with
# no second probe (no timeout waited for). And a join answered late
# (--slow-join): that wait is not taken for a round trip.
#
#   w1 10.0.1.1 ---- sw 10.0.1.254: tests/reorder_node.py on port 7177
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns' EXIT
NODE=$NETAGG_ROOT/tests/reorder_node.py

topo_star 1

# start_node ARGS...: the scripted node in sw, in the background ($pid),
# once it listens.
start_node() {
	local i

	: >"$TEST_TMP/node"
	timeout 120 ip netns exec sw python3 "$NODE" --addr 10.0.1.254 --idle 2 "$@" \
		>"$TEST_TMP/node" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		grep -qs '^ready' "$TEST_TMP/node" && break
		sleep 0.1
	done
}

# reordered DESC ARGS...: three allreduces of 1000 chunks through the node;
# passes when every result is exact and neither the worker nor the node
# saw a retransmission or a probe.
reordered() {
	local desc=$1 got
	shift
	start_node
	# 362 elements fill a chunk at MTU 1500: no shorter last chunk.
	timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 --no-join \
		--count 362000 --iterations 3 --rto-min-ms 1000 -j "$@" >"$TEST_TMP/ar" 2>&1
	wait "$pid"
	got="$(jq -r '"ok=\(.ok) retransmits=\(.retransmits)"' "$TEST_TMP/ar" 2>/dev/null) $(tail -n 1 "$TEST_TMP/node")"
	check_eq "$desc" "ok=true retransmits=0 answered=3000 retries=0 probes=0" "$got"
}

ktap_plan 10
reordered "super-packets, results reversed in each: exact, nothing resent" --tree 0=10.0.1.254
reordered "plain packets, results reversed in runs of 44: exact, nothing resent" \
	--tree 0=10.0.1.254 --plain
reordered "four trees, results reversed in each super-packet: exact, nothing resent" \
	--tree 0=10.0.1.254 --tree 1=10.0.1.254 --tree 2=10.0.1.254 --tree 3=10.0.1.254

start_node --lose-fin 1
timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 --no-join \
	--count 362000 -j --tree 0=10.0.1.254 >"$TEST_TMP/ar" 2>&1
wait "$pid"
read -r ok probes rt <<<"$(jq -r '"\(.ok) \(.probes) \(.retransmits)"' "$TEST_TMP/ar" 2>/dev/null)"
[ "$ok" = true ] || sed 's/^/# /' "$TEST_TMP/ar" "$TEST_TMP/node"
read -r retries nprobes <<<"$(tail -n 1 "$TEST_TMP/node" | sed -nE 's/.* retries=([0-9]+) probes=([0-9]+)$/\1 \2/p')"
check_eq "a node that does not answer probes: the lost result is probed for, then resent" \
	"ok=true probes=some retransmits=some node:retries=some,probes=some" \
	"ok=$ok probes=$(some "$probes") retransmits=$(some "$rt") node:retries=$(some "$retries"),probes=$(some "$nprobes")"

# Ten chunks, held by the node until the worker's first timeout (200 ms)
# probes for them; the node then sends the first one's result, stops for
# 0.8 s and sends the other nine, then the probes' answers. The worker's
# next timeout (600 ms) falls in the stop, with the first probe unanswered
# but its first chunk's result in: it probes again; the one after (1.4 s)
# finds the results in. Before, a node heard since a probe that went
# unanswered counted as one that had lost it: nine chunks were resent.
start_node --catch-up 0.8
timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 --no-join \
	--count 3620 -j --tree 0=10.0.1.254 >"$TEST_TMP/ar" 2>&1
wait "$pid"
read -r ok probes rt <<<"$(jq -r '"\(.ok) \(.probes) \(.retransmits)"' "$TEST_TMP/ar" 2>/dev/null)"
[ "$ok" = true ] && [ "$rt" = 0 ] || sed 's/^/# /' "$TEST_TMP/ar" "$TEST_TMP/node"
check_eq "a node catching up, results before the probes' answers: probed again, nothing resent" \
	"ok=true probes=some retransmits=0 node:answered=10 retries=0" \
	"ok=$ok probes=$(some "$probes") retransmits=$rt node:$(tail -n 1 "$TEST_TMP/node" | sed -nE 's/^(answered=[0-9]+ retries=[0-9]+) .*/\1/p')"
# late_or_lost MODE DESC WANT: one allreduce of 1000 chunks, VID 500's
# first result held back (MODE --late: it comes after the resend's answer)
# or lost (--lose). The resend's answer comes as fast either way: only
# the second result tells the two apart.
late_or_lost() {
	local got
	start_node "$1" 500
	timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 --no-join \
		--count 362000 --rto-min-ms 1000 -j --tree 0=10.0.1.254 >"$TEST_TMP/ar" 2>&1
	wait "$pid"
	got="$(jq -r '"ok=\(.ok) retransmits=\(.retransmits) loss_cuts=\(.loss_cuts) undone=\(.undone_cuts)"' \
		"$TEST_TMP/ar" 2>/dev/null) node:$(tail -n 1 "$TEST_TMP/node" | sed -nE 's/.* (retries=[0-9]+) .*/\1/p')"
	[ "$got" = "$3" ] || sed 's/^/# /' "$TEST_TMP/ar" "$TEST_TMP/node"
	check_eq "$2" "$3" "$got"
}
late_or_lost --late "a result late, after its resend's answer: the loss cut undone" \
	"ok=true retransmits=1 loss_cuts=1 undone=1 node:retries=1"
late_or_lost --lose "a result lost, the resend's answer alone: the loss cut stands" \
	"ok=true retransmits=1 loss_cuts=1 undone=0 node:retries=1"

# overtaken ARGS DESC WANT: one allreduce of 1000 chunks; from VID 500 the
# node answers nothing until the worker's first timeout (1 s) probes, then
# answers the probes (results sent) before it sends those results (ARGS
# --overtake 500), or loses them (--overtake 500 --overtake-lost). The
# reordering window is a quarter of the round trip, a millisecond or so
# here, and a scripted node in a loaded VM can take that between two
# sends: 40 ms of delay on the way back make it 10 ms or more.
overtaken() {
	local got
	tc -n sw qdisc add dev s1 root netem delay 40ms
	start_node $1
	timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 --no-join \
		--count 362000 --rto-min-ms 1000 -j --tree 0=10.0.1.254 >"$TEST_TMP/ar" 2>&1
	wait "$pid"
	tc -n sw qdisc del dev s1 root
	read -r ok rt <<<"$(jq -r '"\(.ok) \(.retransmits)"' "$TEST_TMP/ar" 2>/dev/null)"
	read -r held after <<<"$(sed -nE 's/^overtaken=([0-9]+) probes_after=([0-9]+)$/\1 \2/p' "$TEST_TMP/node")"
	read -r retries <<<"$(tail -n 1 "$TEST_TMP/node" | sed -nE 's/.* retries=([0-9]+) .*/\1/p')"
	got="ok=$ok held=$(some "$held") retransmits=$([ "$rt" = "$held" ] && echo held || echo "$rt")"
	got+=" node:retries=$([ "$retries" = "$held" ] && echo held || echo "$retries") probes_after=$after"
	[ "$got" = "$3" ] || sed 's/^/# /' "$TEST_TMP/ar" "$TEST_TMP/node"
	check_eq "$2" "$3" "$got"
}
overtaken "--overtake 500" "a probe's answer before the results it says were sent: nothing resent" \
	"ok=true held=some retransmits=0 node:retries=0 probes_after=0"
overtaken "--overtake 500 --overtake-lost" \
	"results said sent and lost: resent after the reordering window, not a timeout" \
	"ok=true held=some retransmits=held node:retries=held probes_after=0"

# A node that answers the join where runs meet 150 ms late, as one waiting
# for a late rank does (too soon for a timeout: no probe): that wait is no
# round trip. The timeout the one-chunk allreduce after it leaves is from
# its own round trip; taken for one, the join's would leave some 500 ms.
start_node --slow-join 0.15
timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 \
	--count 362 -j --tree 0=10.0.1.254 >"$TEST_TMP/ar" 2>&1
wait "$pid"
read -r ok rto probes <<<"$(jq -r '"\(.ok) \(.rto_ms) \(.join_probes)"' "$TEST_TMP/ar" 2>/dev/null)"
[ "$ok" = true ] || sed 's/^/# /' "$TEST_TMP/ar" "$TEST_TMP/node"
check_eq "a join answered 150 ms late: no round trip; the timeout after is the allreduce's (ms: $rto)" \
	"ok=true join_probes=0 rto_at_or_over_100ms=0" \
	"ok=$ok join_probes=$probes rto_at_or_over_100ms=$(over 100 <<<"$rto")"
ktap_finish
