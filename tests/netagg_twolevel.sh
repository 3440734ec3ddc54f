#!/bin/bash
# Two-level trees across two racks: every worker gets the exact global sum.
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 10.1.0.254 | 10.9.1.1 --- 10.9.1.254 \
#                                                                        root
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 10.2.0.254 | 10.9.2.1 --- 10.9.2.254 /
#
# Job 7 (f32 sum, six workers) has three trees:
#   tree 0: workers send to their rack's aggregator, which sends up to root;
#   tree 1: workers send to root's address; the aggregators sit on the path
#           and take the packets as they are forwarded;
#   tree 2: rooted at agg2 (agg1 its aggregator child); root only forwards.
# Job 8 (f32 average: the sum divided by 7, checked bit for bit) runs at the
# same time, with a seventh worker on agg1 itself (agg1's own address is one
# of its children). Ping and a TCP transfer cross all three nodes meanwhile
# and must come through intact.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
ALLREDUCE=$NETAGG_ALLREDUCE

module_load
topo_racks

kids1=(child 10.1.0.1 child 10.1.0.2 child 10.1.0.3)
kids2=(child 10.2.0.4 child 10.2.0.5 child 10.2.0.6)
for n in root agg1 agg2; do
	netagg_in $n job add 7 dtype f32 window 64
	netagg_in $n job add 8 dtype f32 op avg window 64
done
for t in 0 1; do
	netagg_in agg1 tree add job 7 tree $t role aggregator parent 10.9.1.254 "${kids1[@]}"
	netagg_in agg2 tree add job 7 tree $t role aggregator parent 10.9.2.254 "${kids2[@]}"
	netagg_in root tree add job 7 tree $t role root child 10.9.1.1 child 10.9.2.1
done
netagg_in agg1 tree add job 7 tree 2 role aggregator parent 10.9.2.1 "${kids1[@]}"
netagg_in agg2 tree add job 7 tree 2 role root "${kids2[@]}" child 10.9.1.1
netagg_in agg1 tree add job 8 tree 0 role aggregator parent 10.9.1.254 "${kids1[@]}" child 10.1.0.254
netagg_in agg2 tree add job 8 tree 0 role aggregator parent 10.9.2.254 "${kids2[@]}"
netagg_in root tree add job 8 tree 0 role root child 10.9.1.1 child 10.9.2.1

# job7: the six workers, three trees each; job8: seven workers, one tree.
# Each waits 5 s (scaled) without a result, not the library's 2: the join
# waits for the last worker to start, and on the debug kernel, both jobs
# and a TCP transfer at once, every worker's join went 2 s without one.
job7() {
	local w r pids=() rc=0
	for w in 1 2 3 4 5 6; do
		r=$(rack_of $w)
		ip netns exec "w$w" "$ALLREDUCE" --job 7 --rank $((w - 1)) --workers 6 --quiet \
			--tree "0=10.$r.0.254" --tree "1=10.9.$r.254" --tree "2=10.$r.0.254" \
			--timeout-ms "$(scaled 5000)" "$@" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	return $rc
}
job8() {
	local w r pids=() rc=0
	for w in 1 2 3 4 5 6; do
		r=$(rack_of $w)
		ip netns exec "w$w" "$ALLREDUCE" --job 8 --rank $((w - 1)) --workers 7 --quiet \
			--op avg --tree "0=10.$r.0.254" --timeout-ms "$(scaled 5000)" "$@" &
		pids+=($!)
	done
	ip netns exec agg1 "$ALLREDUCE" --job 8 --rank 6 --workers 7 --quiet \
		--op avg --src 10.1.0.254 --tree 0=10.1.0.254 --timeout-ms "$(scaled 5000)" "$@" &
	pids+=($!)
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	return $rc
}
tcp_sink() {
	ip netns exec w5 python3 -c '
import hashlib, socket
s = socket.create_server(("10.2.0.5", 5201)); s.settimeout(60)
c, _ = s.accept(); h = hashlib.sha256()
while True:
    b = c.recv(65536)
    if not b: break
    h.update(b)
print(h.hexdigest())'
}

ktap_plan 9
check "job 7: six workers, three trees (to aggregator, on path, rooted at agg2)" job7 --count 300000
n=$(( (300000 + 361) / 362 ))
# Tree 0's chunks, and the join's two (the nonces, then the confirmations:
# a packet each on every tree, six workers' worth).
t0=$(( (n + 2) / 3 + 2 ))
check_eq "root summed tree 0 from its two aggregators and sent both the result" \
	"$((2 * t0)) $((2 * t0))" "$(counter root tree 7 0 aggregated) $(counter root tree 7 0 fanned_out)"
check_eq "agg1 on tree 0: 3 x contributions in, one sum up per VID, results down to 3" \
	"$((3 * t0)) $t0 $t0 $((3 * t0))" \
	"$(counter agg1 tree 7 0 aggregated) $(counter agg1 tree 7 0 emitted_up) $(counter agg1 tree 7 0 results_rx) $(counter agg1 tree 7 0 fanned_out)"
check_eq "tree 1 was taken on the path by both aggregators" "true true" \
	"$([ "$(counter agg1 tree 7 1 emitted_up)" -gt 0 ] && echo true) $([ "$(counter agg2 tree 7 1 emitted_up)" -gt 0 ] && echo true)"
check_eq "root forwarded tree 2 untouched (no_tree); agg2 was its root" "true true" \
	"$([ "$(counter root job 7 no_tree)" -gt 0 ] && echo true) $([ "$(counter agg2 tree 7 2 fanned_out)" -gt 0 ] && echo true)"

sha=$(head -c 4000000 /dev/urandom | tee "$TEST_TMP/blob" | sha256sum | cut -d' ' -f1)
tcp_sink >"$TEST_TMP/sink" 2>&1 &
sink=$!
sleep 0.5
job7 --count 400000 --iterations 2 --round 1 &
j7=$!
check "job 8 (f32 average over 7 workers, one on agg1 itself) while job 7 runs" job8 --count 200000
check "ping w1 -> w6 across agg1, root and agg2 meanwhile" ip netns exec w1 ping -q -c 3 -i 0.2 -W 2 10.2.0.6
check "TCP transfer w1 -> w5 meanwhile" ip netns exec w1 python3 -c '
import socket, sys
s = socket.create_connection(("10.2.0.5", 5201), timeout=60)
s.sendall(open(sys.argv[1], "rb").read()); s.close()' "$TEST_TMP/blob"
wait $sink
wait $j7
j7rc=$?
check_eq "job 7 ran to the exact sum twice, and the TCP data arrived intact" "0 $sha" "$j7rc $(cat "$TEST_TMP/sink")"
ktap_finish
