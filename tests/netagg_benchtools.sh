#!/bin/bash
# The benchmark's tools do what make bench assumes of them: netagg-uagg (the
# userspace aggregator) gives workers exact sums and answers their probes,
# as the module does, and netagg-blast streams, plain and in super-packets,
# count what comes back, through the module and through a plain router.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: netagg-uagg on UDP 7177, or the module
#   w3 10.0.3.1 --+   as root of job 1, or a router (ip_forward)
source "$(dirname "$0")/lib.sh"
require_root
trap 'pkill -f netagg-uagg; cleanup_ns; module_unload' EXIT
UAGG=$NETAGG_ROOT/tests/tools/netagg-uagg
BLAST=$NETAGG_ROOT/tests/tools/netagg-blast

routed_star 3

# on_workers CMD...: CMD in w1..w3 at once, "{i}" in it becoming the
# worker's number and "{r}" its rank (i - 1); fails unless all three
# succeed. Output in $TEST_TMP/out.N.
on_workers() {
	local i pids=() rc=0 args
	for i in 1 2 3; do
		args=("${@//\{i\}/$i}")
		args=("${args[@]//\{r\}/$((i - 1))}")
		timeout 60 ip netns exec "w$i" "${args[@]}" >"$TEST_TMP/out.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}

# workers_sum FIELD: FIELD summed over the three workers' reports.
workers_sum() {
	cat "$TEST_TMP"/out.[123] | jq -s "[.[] | .$1] | add"
}

ktap_plan 15
module_unload
ip netns exec sw "$UAGG" --job 5 --child 10.0.1.1 --child 10.0.2.1 --child 10.0.3.1 \
	>"$TEST_TMP/uagg.json" 2>&1 &
uagg=$!
sleep 0.5
check "three workers' f32 allreduce through netagg-uagg, a barrier before each: exact sums" \
	on_workers "$NETAGG_ALLREDUCE" --job 5 --tree "0=10.0.{i}.254" --rank "{r}" \
	--workers 3 --count 100000 --iterations 2 --barrier --quiet
kill -INT "$uagg"
wait "$uagg"
# 100000 elements are 277 packets of 362; two rounds, each after a barrier
# (an allreduce of one packet); three workers; and the join before them,
# two allreduces of one packet (the nonces, then the confirmations, in a
# session of the run's own).
check_eq "netagg-uagg summed each contribution once, completed each VID once" \
	"1674 558" "$(jq -r '"\(.aggregated) \(.results)"' "$TEST_TMP/uagg.json")"
# w3 enters 1 s late: the others wait for it in the run's join, probe
# netagg-uagg, as they would the module, and resend nothing. Only the
# join's resends count: the allreduce after it starts with all three in
# step, and a resend there is netagg-uagg, a process, denied the CPU for
# longer than the workers' RTO and their probes' rounds on a loaded
# machine (reproduced on the host by stopping it 30 ms in every 50).
ip netns exec sw "$UAGG" --job 5 --child 10.0.1.1 --child 10.0.2.1 --child 10.0.3.1 \
	>"$TEST_TMP/uagg.json" 2>&1 &
uagg=$!
sleep 0.5
check "netagg-uagg, w3 1 s late: exact sums" \
	on_workers sh -c '[ {i} -lt 3 ] || sleep 1; exec "$@"' sh "$NETAGG_ALLREDUCE" --job 5 \
	--tree "0=10.0.{i}.254" --rank "{r}" --workers 3 --count 100000 -j
kill -INT "$uagg"
wait "$uagg"
check_eq "netagg-uagg answered the others' probes, and the join resent nothing" \
	"probed=some join_retransmits=0" \
	"probed=$(some "$(jq .probed "$TEST_TMP/uagg.json")") join_retransmits=$(workers_sum join_retransmits)"
echo "# resent in the allreduce after the join: $(workers_sum retransmits)"

# netagg-uagg stopped (SIGSTOP) for the workers' first second: a node with
# no CPU answers nothing, the probes included. The workers' first timeout
# (200 ms, no round trip known yet) sends a probe, the next (600 ms) finds
# it unanswered with the node silent since: they probe again, rather than
# resend to a node that has everything and only needs the CPU.
# That second is the join's (the allreduce after it: see above).
stalled() {
	local rc=0
	kill -STOP "$uagg"
	on_workers "$NETAGG_ALLREDUCE" --job 5 --tree "0=10.0.{i}.254" --rank "{r}" \
		--workers 3 --count 100000 -j &
	sleep 1
	kill -CONT "$uagg"
	wait $! || rc=1
	return $rc
}
ip netns exec sw "$UAGG" --job 5 --child 10.0.1.1 --child 10.0.2.1 --child 10.0.3.1 \
	>"$TEST_TMP/uagg.json" 2>&1 &
uagg=$!
sleep 0.5
check "netagg-uagg stopped for the workers' first second: exact sums" stalled
kill -INT "$uagg"
wait "$uagg"
resent=$(workers_sum join_retransmits)
check_eq "they probed it again while it was silent, and the join resent nothing" \
	"join_probes=some join_retransmits=0" \
	"join_probes=$(some "$(workers_sum join_probes)") join_retransmits=$resent"
echo "# resent in the allreduce after the join: $(workers_sum retransmits)"
# Who resent what, and what the aggregator made of it, when one did.
[ "$resent" = 0 ] || for f in "$TEST_TMP/uagg.json" "$TEST_TMP"/out.[123]; do
	echo "# ${f##*/}: $(cat "$f")"
done

module_load
netagg_in sw job add 1
netagg_in sw tree add job 1 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
check "netagg-blast: 500 packets from each worker through the module" \
	on_workers "$BLAST" --dst "10.0.{i}.254" --job 1 --packets 500 --round 1
check_eq "each stream got a result for every packet, the switch sent 1500" \
	"500 500 500 1500" \
	"$(cat "$TEST_TMP"/out.[123] | jq -r .results | tr '\n' ' ')$(counter sw tree 1 0 fanned_out)"
check "netagg-blast --segments 44: 500 packets from each worker in super-packets" \
	on_workers "$BLAST" --dst "10.0.{i}.254" --job 1 --packets 500 --round 2 --segments 44
check_eq "every segment got its result, taken in super-packets both ways" \
	"500 500 500 3000 yes" \
	"$(cat "$TEST_TMP"/out.[123] | jq -r .results | tr '\n' ' ')$(counter sw tree 1 0 fanned_out) $([ "$(counter sw tree 1 0 super_rx)" -gt 0 ] && [ "$(counter sw tree 1 0 super_tx)" -gt 0 ] && echo yes)"
module_unload

# Forwarding: a ring w1 -> w2 -> w3 -> w1; w2 and w3 wait for their
# predecessor's first packet, so none reaches a port not yet bound.
for i in 2 3; do
	timeout 60 ip netns exec "w$i" "$BLAST" --dst "10.0.$((i % 3 + 1)).1" --packets 500 \
		--wait-first >"$TEST_TMP/fwd.$i" 2>&1 &
done
sleep 0.5
check "netagg-blast through a plain router, in a ring" \
	timeout 60 ip netns exec w1 "$BLAST" --dst 10.0.2.1 --packets 500
wait
check_eq "each worker received its predecessor's 500 packets" "500 500" \
	"$(cat "$TEST_TMP"/fwd.[23] | jq -r .packets_received | tr '\n' ' ' | sed 's/ $//')"
for i in 2 3; do
	timeout 60 ip netns exec "w$i" "$BLAST" --dst "10.0.$((i % 3 + 1)).1" --packets 500 \
		--segments 44 --wait-first >"$TEST_TMP/fwd.$i" 2>&1 &
done
sleep 0.5
check "the same ring in super-packets of 44" \
	timeout 60 ip netns exec w1 "$BLAST" --dst 10.0.2.1 --packets 500 --segments 44
wait
check_eq "each worker received its predecessor's 500 packets, counted segment by segment" \
	"500 500" "$(cat "$TEST_TMP"/fwd.[23] | jq -r .packets_received | tr '\n' ' ' | sed 's/ $//')"
check_err "--segments that exceed a datagram are refused" "exceed a UDP datagram" \
	"$BLAST" --dst 10.0.2.1 --segments 45
ktap_finish
