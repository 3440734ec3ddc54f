#!/bin/bash
# A link shared with TCP: a job of four trees is one flow to the network
# (one window for the path to its node), which a marking queue and a
# dropping one cut, and which grows back once the link is its own again.
# The allreduces stay exact throughout, and the TCP flow beside them moves.
#
#   w1 10.0.1.1 --+   (the bottleneck: sw's s1, towards w1: results to w1,
#   w2 10.0.2.1 --+    and the TCP flow from w2 to w1 beside them)
#   w3 10.0.3.1 --+-- sw 10.0.N.254: root of job 1's trees 0-3 (f32,
#   w4 10.0.4.1 --+                  window 64); routes w2 to w1
#
# One run of allreduces (netagg-allreduce --each: a JSON line each), in
# four phases that the test moves on as w1's lines come: (1) RED marking
# (ecn) at the bottleneck, TCP (ECN) from w2 to w1 beside; (2) the same RED
# dropping instead; (3) a drop-tail FIFO smaller than the job's largest
# window, no TCP: each cut drains it, so a resend's answer comes back
# sooner than the round trips before, and must not be taken for a loss
# that was none; (4) no bottleneck, no TCP. The bottleneck's rate is a
# quarter of what w1 receives unshaped, 20 Mbit/s at most: on the debug
# kernel (make check-debug) the workers send slower than any fixed rate,
# and a link they cannot fill is no bottleneck. Calls that straddle a
# change count in neither phase.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

require_module sch_tbf
require_module sch_red
command -v iperf3 >/dev/null || fail_setup "iperf3 missing: run scripts/deps.sh"
module_load
topo_star 4
ip netns exec sw sysctl -qw net.ipv4.ip_forward=1
for i in 1 2; do
	ip -n "w$i" route add 10.0.0.0/16 via "10.0.$i.254"
	ip netns exec "w$i" sysctl -qw net.ipv4.tcp_ecn=1
done
netagg_in sw job add 1 dtype f32 window 64
for t in 0 1 2 3; do
	netagg_in sw tree add job 1 tree "$t" role root child 10.0.1.1 child 10.0.2.1 \
		child 10.0.3.1 child 10.0.4.1
done
COUNT=$((256 << 10))		# 1 MiB of f32: 725 chunks, 182 a tree
ITERS=80
MAX=256				# the path's largest window: 4 trees x 64

# workers ITERS ARGS...: the four, on trees 0-3 of job 1, JSON in
# $TEST_TMP/w.N, started in the background (pids in $pids).
workers()
{
	local iters=$1 first i
	shift
	first=$(next_round "$iters")
	pids=()
	for i in 1 2 3 4; do
		timeout 600 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 1 \
			--tree "0=10.0.$i.254" --tree "1=10.0.$i.254" --tree "2=10.0.$i.254" \
			--tree "3=10.0.$i.254" --rank $((i - 1)) --workers 4 --count "$COUNT" \
			--iterations "$iters" --round "$first" --timeout-ms 20000 -j "$@" \
			>"$TEST_TMP/w.$i" 2>"$TEST_TMP/w.$i.err" &
		pids+=($!)
	done
}
# wait_all: $waited "ok" if every worker exited 0, else "failed" and their
# errors shown. In this shell, not a check's subshell: they are its
# children.
wait_all()
{
	local p
	waited=ok
	for p in "${pids[@]}"; do wait "$p" || waited=failed; done
	[ $waited = ok ] || cat "$TEST_TMP"/w.*.err
}
# calls_done: w1's allreduces so far (its --each lines).
calls_done()
{
	local n
	n=$(grep -c '"iteration"' "$TEST_TMP/w.1" 2>/dev/null)
	echo "${n:-0}"
}
# wait_calls N: until w1 has done N allreduces, 300 s at most.
wait_calls()
{
	local i
	for i in $(seq 600); do
		[ "$(calls_done)" -ge "$1" ] && return 0
		sleep 0.5
	done
	echo "# w1 did $(calls_done) allreduces, not $1" >&2
	return 1
}
# phase FROM TO JQ: JQ over w1's lines of iterations FROM to TO, slurped.
phase() { jq -s "[.[] | select(.iteration != null and .iteration >= $1 and .iteration <= $2)] | $3" \
	"$TEST_TMP/w.1"; }
# bottleneck [ecn]: tbf at $rate kbit/s on sw's s1, RED marking or dropping.
bottleneck()
{
	tc -n sw qdisc del dev s1 root 2>/dev/null
	tc -n sw qdisc add dev s1 root handle 1: tbf rate "${rate}kbit" burst 32kb \
		latency 1s &&
		tc -n sw qdisc add dev s1 parent 1:1 handle 10: red limit 1000000 \
			min 45000 max 127500 avpkt 1500 burst 40 \
			bandwidth "${rate}kbit" probability 0.1 ${1:-}
}

# fifo: tbf at $rate kbit/s on sw's s1 over a drop-tail FIFO of 100 kB, a
# third of the 256 chunks the job may have in flight.
fifo()
{
	tc -n sw qdisc del dev s1 root 2>/dev/null
	tc -n sw qdisc add dev s1 root handle 1: tbf rate "${rate}kbit" burst 32kb \
		latency 1s &&
		tc -n sw qdisc add dev s1 parent 1:1 handle 10: bfifo limit 100000
}

ktap_plan 10

workers 3
wait_all
check_eq "unshaped, four trees: the four complete, exact" ok "$waited"
rate=$(jq -r 'select(.iteration == null) | .seconds' "$TEST_TMP/w.1" |
	awk -v bits=$((COUNT * 4 * 8 * 3)) '$1 > 0 { r = bits / $1 / 1000 / 4
		printf "%d", r < 20000 ? r : 20000 }')
echo "# the bottleneck: ${rate:-none} kbit/s"

check "a marking bottleneck on sw's way to w1 (tbf, RED ecn)" bottleneck ecn
ip netns exec w1 timeout 400 iperf3 -s -1 -i 1 --forceflush >"$TEST_TMP/tcp.log" 2>&1 &
tcp_server=$!
sleep 1
ip netns exec w2 timeout 400 iperf3 -c 10.0.1.1 -t 300 >/dev/null 2>&1 &
tcp_client=$!
workers "$ITERS" --each
wait_calls 20 && bottleneck
marks_end=$(calls_done)
wait_calls $((marks_end + 20)) && { kill "$tcp_client"; fifo; }
drops_end=$(calls_done)
wait_calls $((drops_end + 20)) && tc -n sw qdisc del dev s1 root
fifo_end=$(calls_done)
echo "# phases: marks to call $marks_end, drops to call $drops_end, a FIFO to $fifo_end, then a free link to $ITERS"
wait_all
check_eq "every allreduce of the four phases exact, on all four" ok "$waited"
wait "$tcp_client" "$tcp_server" 2>/dev/null
# The server's lines a second: "[  5]   1.00-2.00   sec  2.33 MBytes  19.5 Mbits/sec".
tcp_mb=$(awk '$NF ~ /bits\/sec$/ && $(NF-2) ~ /Bytes$/ { b = $(NF-3)
	if ($(NF-2) == "KBytes") b /= 1024; if ($(NF-2) == "GBytes") b *= 1024
	if ($(NF-2) == "Bytes") b /= 1048576; s += b } END { printf "%d", s }' \
	"$TEST_TMP/tcp.log")
check_eq "the TCP flow beside them moved (${tcp_mb:-0} MB in 1 s intervals)" some \
	"$(some "$tcp_mb")"

echo "# w1 marked: $(phase 1 "$marks_end" '{ce: (map(.ce) | add), cuts: (map(.ce_cuts) | add), window_min: (map(.window_min) | min), loss_cuts: (map(.loss_cuts) | add)}' | tr -d ' \n')"
check_eq "marks cut w1's window: CE results, cuts, its least below $MAX" "some some yes" \
	"$(some "$(phase 1 "$marks_end" 'map(.ce) | add')") \
$(some "$(phase 1 "$marks_end" 'map(.ce_cuts) | add')") \
$([ "$(phase 1 "$marks_end" 'map(.window_min) | min')" -lt $MAX ] && echo yes)"
d0=$((marks_end + 2))
echo "# w1 dropped: $(phase "$d0" "$drops_end" '{ce: (map(.ce) | add), loss_cuts: (map(.loss_cuts) | add), undone: (map(.undone_cuts) | add), retransmits: (map(.retransmits) | add), window_min: (map(.window_min) | min)}' | tr -d ' \n')"
check_eq "losses cut it: loss cuts, no CE, its least below $MAX" "some 0 yes" \
	"$(some "$(phase "$d0" "$drops_end" 'map(.loss_cuts) | add')") \
$(phase "$d0" "$drops_end" 'map(.ce) | add') \
$([ "$(phase "$d0" "$drops_end" 'map(.window_min) | min')" -lt $MAX ] && echo yes)"
f0=$((drops_end + 2))
echo "# w1 on the FIFO: $(phase "$f0" "$fifo_end" '{loss_cuts: (map(.loss_cuts) | add), undone: (map(.undone_cuts) | add), retransmits: (map(.retransmits) | add), window_min: (map(.window_min) | min)}' | tr -d ' \n')"
# Taking the resends' answers for reordering undid every cut here (28 of
# 28); undoing for results sooner than any round trip, 3 of 10, and once
# 22 of 25; undoing for a resent chunk's second result, 0 of 9.
check_eq "a drop-tail FIFO cut it too, and under 3/4 of its cuts were undone" "some yes" \
	"$(some "$(phase "$f0" "$fifo_end" 'map(.loss_cuts) | add')") \
$([ "$(phase "$f0" "$fifo_end" '4 * (map(.undone_cuts) | add)')" -lt \
	"$(phase "$f0" "$fifo_end" '3 * (map(.loss_cuts) | add)')" ] && echo yes)"
low=$(phase 1 "$fifo_end" 'map(.window_min) | min')
end=$(phase "$ITERS" "$ITERS" '.[0].window_end')
echo "# w1's window: down to $low, $end after the last allreduce"
check_eq "on the free link it grew back: at least twice its least ($low -> $end)" yes \
	"$([ "${end:-0}" -ge $((2 * ${low:-$MAX})) ] && echo yes)"
check_eq "the others' results were never marked (the queue is on w1's way)" "0 0 0" \
	"$(jq -s '[.[] | select(.iteration != null) | .ce] | add' "$TEST_TMP/w.2") \
$(jq -s '[.[] | select(.iteration != null) | .ce] | add' "$TEST_TMP/w.3") \
$(jq -s '[.[] | select(.iteration != null) | .ce] | add' "$TEST_TMP/w.4")"
check_eq "one window for the four trees: no cut left w1's below 2 or above $MAX" yes \
	"$(phase 1 "$ITERS" "map(select(.window_min < 2 or .window_min > $MAX or .window_end > $MAX)) | length == 0" |
		sed 's/true/yes/')"
ktap_finish
