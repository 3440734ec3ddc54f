#!/bin/bash
# Results that overtake each other are not taken for lost. A scripted root
# (tests/reorder_node.py, no module) answers every super-packet, and every
# run of plain packets, with its results in reverse VID order, queued at the
# worker's socket at once: nothing is lost, so the worker must not resend
# anything (before, any result 3 VIDs ahead of a waiting one resent it). The
# RTO is held at its 1 s maximum, so that only the fast retransmission can
# resend here.
#
#   w1 10.0.1.1 ---- sw 10.0.1.254: tests/reorder_node.py on port 7177
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns' EXIT
NODE=$NETAGG_ROOT/tests/reorder_node.py

topo_star 1

# reordered DESC ARGS...: three allreduces of 1000 chunks through the node;
# passes when every result is exact and neither the worker nor the node
# saw a retransmission.
reordered() {
	local desc=$1 i pid got
	shift
	: >"$TEST_TMP/node"
	timeout 120 ip netns exec sw python3 "$NODE" --addr 10.0.1.254 --idle 2 \
		>"$TEST_TMP/node" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		grep -qs '^ready' "$TEST_TMP/node" && break
		sleep 0.1
	done
	# 363 elements fill a chunk at MTU 1500: no shorter last chunk.
	timeout 60 ip netns exec w1 "$NETAGG_ALLREDUCE" --job 1 --rank 0 --workers 1 \
		--count 363000 --iterations 3 --rto-min-ms 1000 -j "$@" >"$TEST_TMP/ar" 2>&1
	wait "$pid"
	got="$(jq -r '"ok=\(.ok) retransmits=\(.retransmits)"' "$TEST_TMP/ar" 2>/dev/null) $(tail -n 1 "$TEST_TMP/node")"
	check_eq "$desc" "ok=true retransmits=0 answered=3000 retries=0" "$got"
}

ktap_plan 3
reordered "super-packets, results reversed in each: exact, nothing resent" --tree 0=10.0.1.254
reordered "plain packets, results reversed in runs of 44: exact, nothing resent" \
	--tree 0=10.0.1.254 --plain
reordered "four trees, results reversed in each super-packet: exact, nothing resent" \
	--tree 0=10.0.1.254 --tree 1=10.0.1.254 --tree 2=10.0.1.254 --tree 3=10.0.1.254
ktap_finish
