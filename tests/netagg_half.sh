#!/bin/bash
# float16 and bfloat16 (NETAGG_DTYPE_F16, _BF16) end to end: exact sums and
# averages through two levels, 2-byte elements (twice as many a packet),
# every chunk summing the right ranks; the nodes sum in float32 (a sum no
# half-precision accumulator could give), keep infinities and NaNs, round
# an overflow of the type to infinity once, and drop packets of the wrong
# length.
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 10.1.0.254 | 10.9.1.1 --- 10.9.1.254 \
#                                                                        root
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 10.2.0.254 | 10.9.2.1 --- 10.9.2.254 /
#
# Jobs 1 (f16 sum), 2 (bf16 sum), 3 (f16 average): tree 0, the aggregators
# under root. Jobs 4 (f16) and 5 (bf16): agg1 alone, root of w1-w3, for
# packets written by hand.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
ALLREDUCE=$NETAGG_ALLREDUCE
PEER=$NETAGG_ROOT/tests/agg_peer.py
SEND=$NETAGG_ROOT/tests/tools/netagg-send

module_load
topo_racks

kids1=(child 10.1.0.1 child 10.1.0.2 child 10.1.0.3)
kids2=(child 10.2.0.4 child 10.2.0.5 child 10.2.0.6)
for n in root agg1 agg2; do
	netagg_in $n job add 1 dtype f16
	netagg_in $n job add 2 dtype bf16
	netagg_in $n job add 3 dtype f16 op avg
done
for j in 1 2 3; do
	netagg_in agg1 tree add job $j tree 0 role aggregator parent 10.9.1.254 "${kids1[@]}"
	netagg_in agg2 tree add job $j tree 0 role aggregator parent 10.9.2.254 "${kids2[@]}"
	netagg_in root tree add job $j tree 0 role root child 10.9.1.1 child 10.9.2.1
done
netagg_in agg1 job add 4 dtype f16
netagg_in agg1 tree add job 4 tree 0 role root "${kids1[@]}"
netagg_in agg1 job add 5 dtype bf16
netagg_in agg1 tree add job 5 tree 0 role root "${kids1[@]}"

# racks JOB ARGS...: the six workers at once, fresh rounds, each to its
# rack's aggregator; fails unless all six verified.
racks() {
	local job=$1 w r pids=() rc=0 round
	shift
	round=$(next_round 4)
	for w in 1 2 3 4 5 6; do
		r=$(rack_of $w)
		timeout 120 ip netns exec "w$w" "$ALLREDUCE" --job "$job" --rank $((w - 1)) \
			--workers 6 --round "$round" --tree "0=10.$r.0.254" --timeout-ms 10000 \
			-j "$@" >"$TEST_TMP/ar.$w" 2>"$TEST_TMP/ar.$w.err" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	[ $rc -eq 0 ] || cat "$TEST_TMP"/ar.*.err
	return $rc
}

# by_hand JOB DTYPE ROUND V1 V2 V3: w1, w2, w3 send VID 0 (FIN) of ROUND
# with every element V1, V2, V3, in that order, 0.3 s apart; prints the
# first element of the result each got ("first=X" three times).
by_hand() {
	local job=$1 dtype=$2 round=$3 i pids=() waits=(0 0 0.3 0.6)
	shift 3
	for i in 1 2 3; do
		ip netns exec "w$i" "$PEER" --dst 10.1.0.254 --job "$job" --dtype "$dtype" \
			--round "$round" --vids 0 --fin 0 --count 300 --value="${!i}" \
			--wait "${waits[$i]}" --expect 1 >"$TEST_TMP/hand.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in 1 2 3; do
		grep -o 'first=[^ ]* .*uniform=1' "$TEST_TMP/hand.$i" | cut -d' ' -f1
	done | xargs
}

ktap_plan 13
check_eq "jobs take dtype f16 and bf16, and show them" "f16 bf16 f16" \
	"$(netagg_in root -j show | jq -r '[.jobs[] | select(.jid <= 3) | .dtype] | join(" ")')"

check "f16 sum, six workers, two levels, 100003 elements: exact" racks 1 --count 100003 --dtype f16
chunks=$(( (100003 + 723) / 724 ))
# and, before them, the join: two allreduces of one packet each
check_eq "724 elements a packet (2 bytes each): agg1 summed 3 x ($chunks + 2 of the join), root 2 x" \
	"$((3 * (chunks + 2))) $((chunks + 2)) $((2 * (chunks + 2))) $((2 * (chunks + 2)))" \
	"$(counter agg1 tree 1 0 aggregated) $(counter agg1 tree 1 0 emitted_up) $(counter root tree 1 0 aggregated) $(counter root tree 1 0 fanned_out)"
check "bf16 sum, six workers, two levels: exact" racks 2 --count 100003 --dtype bf16
check "f16 average over six workers (divided in float32 at root, rounded once): exact" \
	racks 3 --count 50000 --dtype f16 --op avg
check "f16, --pattern bit: every chunk sums all six ranks, three iterations" \
	racks 1 --count 200000 --dtype f16 --pattern bit --iterations 3
check "bf16, --pattern bit: every chunk sums all six ranks" \
	racks 2 --count 100000 --dtype bf16 --pattern bit

# 2048 + 1 + 1: in float16 one at a time 2048 (2049 is a tie, to even),
# in a float32 accumulator 2050, which float16 holds.
check_eq "f16 2048 + 1 + 1 = 2050: summed in float32, not in float16 (2048)" \
	"first=2050 first=2050 first=2050" "$(by_hand 4 f16 1 2048 1 1)"
check_eq "bf16 256 + 1 + 1 = 258: summed in float32, not in bfloat16 (256)" \
	"first=258 first=258 first=258" "$(by_hand 5 bf16 1 256 1 1)"
check_eq "f16 60000 + 60000 - 60000 = 60000: float32 range between contributions" \
	"first=60000 first=60000 first=60000" "$(by_hand 4 f16 2 60000 60000 -60000)"
check_eq "f16 60000 + 60000 + 1 overflows to inf once rounded" \
	"first=inf first=inf first=inf" "$(by_hand 4 f16 3 60000 60000 1)"
check_eq "infinity and NaN are kept: -inf + 1 + 1, nan + 1 + 1" \
	"first=-inf first=-inf first=-inf|first=nan first=nan first=nan" \
	"$(by_hand 5 bf16 2 -inf 1 1)|$(by_hand 4 f16 4 nan 1 1)"

# The header says f16, the payload has 4 bytes an element.
ip netns exec w1 "$SEND" --dst 10.1.0.254 --job 4 --dtype 3 --count 8 --round 5
check_eq "an f16 packet of 4-byte elements is dropped as drop_length" 1 \
	"$(wait_counter 1 agg1 job 4 drop_length)"
ktap_finish
