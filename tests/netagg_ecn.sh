#!/bin/bash
# ECN: workers send their contributions ECN-capable, the switch carries the
# marks of the inputs into sums and results, and the library reads CE on
# results and shrinks its window (chunks in flight a tree) on them.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 1 (f32 sum, window 256;
#                                     the workers' 128)
#   w3 10.0.3.1 --+
#   w4 10.0.4.1 --+
#
# The bottleneck: tbf with RED (ecn: marks ECN-capable packets instead of
# dropping them), first on sw's s1 (results to w1), then on w1's v0 (w1's
# contributions), at 40 Mbit/s or a quarter of what a worker gets unshaped,
# whichever is less: on the debug kernel (make check-debug) the workers
# send slower than any fixed rate, and a link they cannot fill is no
# bottleneck. Every allreduce is verified exact.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

require_module sch_tbf
require_module sch_red
module_load
topo_star 4
netagg_in sw job add 1 dtype f32 window 256
netagg_in sw tree add job 1 tree 0 role root child 10.0.1.1 child 10.0.2.1 \
	child 10.0.3.1 child 10.0.4.1
COUNT=$((2 << 20))		# 8 MiB of f32

# bottleneck NS DEV [ecn]: $rate kbit/s, RED marking (ecn) or dropping.
bottleneck()
{
	tc -n "$1" qdisc del dev "$2" root 2>/dev/null
	tc -n "$1" qdisc add dev "$2" root handle 1: tbf rate "${rate}kbit" \
		burst 32kb latency 1s &&
		tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: red limit 2000000 \
			min 60000 max 240000 avpkt 1500 burst 80 \
			bandwidth "${rate}kbit" probability 0.05 ${3:-}
}
# run ARGS: the four workers, one allreduce, JSON lines in $TEST_TMP/ar.N.
# A window of 128 chunks (188 KB) keeps RED's queue under its maximum, where
# it drops (or marks) a few packets early, not all of them.
run() { star_allreduce 1 "$COUNT" 1 --window 128 "$@"; }
# of N FIELD: a field of worker N's line.
of() { jq -r ".$2" "$TEST_TMP/ar.$1"; }
marked() { tc -n "$1" -s qdisc show dev "$2" | awk '/marked/ { print $0 }' |
	sed -n 's/.*marked \([0-9]*\).*/\1/p' | head -1; }

ktap_plan 10

# A quarter of the results' rate to w1 unshaped (kbit/s), 40 Mbit/s at most.
check "unshaped: the four complete, exact" run
rate=$(jq -r .seconds "$TEST_TMP/ar.1" |
	awk -v bits=$((COUNT * 4 * 8)) '$1 > 0 { r = bits / $1 / 1000 / 4
		printf "%d", r < 40000 ? r : 40000 }')
echo "# the bottleneck: ${rate:-none} kbit/s"
check "a marking bottleneck on sw's way to w1 (tbf, RED ecn)" \
	bottleneck sw s1 ecn
check "ECN on (the default): the four complete, exact" run
check_eq "w1's results came marked CE, the others' not" "some 0 0 0" \
	"$(some "$(of 1 ce)") $(of 2 ce) $(of 3 ce) $(of 4 ce)"
check_eq "w1's window shrank below 128, the others' did not" "yes 128" \
	"$([ "$(of 1 window_min)" -lt 128 ] && echo yes) $(of 2 window_min)"
retx_on=$(of 1 retransmits)

check "the same bottleneck dropping (RED without ecn)" bottleneck sw s1
check "ECN off: the four complete, exact" run --no-ecn
retx_off=$(of 1 retransmits)
check_eq "fewer retransmits with ECN: on $retx_on < off $retx_off" yes \
	"$([ "$retx_on" -lt "$retx_off" ] && echo yes)"
tc -n sw qdisc del dev s1 root

# Congestion on the way up: a mark on a contribution is in the sum, and so
# in the result every worker gets.
bottleneck w1 v0 ecn
check "the bottleneck on w1's contributions: the four complete, exact" run
check_eq "every worker saw CE results, and the RED marked packets" "some some some some some" \
	"$(some "$(of 1 ce)") $(some "$(of 2 ce)") $(some "$(of 3 ce)") $(some "$(of 4 ce)") \
$(some "$(marked w1 v0)")"
ktap_finish
