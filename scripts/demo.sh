#!/bin/bash
# The main job (make demo runs it in the VM): an allreduce of 16 MiB of
# float32 per worker, summed in the kernel by netagg, on two topologies:
#
#  1. four workers behind one aggregation switch (the switch is the root):
#       w1..w4 (10.0.N.1) --- sw (10.0.N.254)
#  2. two racks of three workers, an aggregator per rack, a root above:
#       w1 w2 w3 -- agg1 --\
#                           root
#       w4 w5 w6 -- agg2 --/
#
# Every worker verifies that it got the exact sum of all workers' buffers.
set -uo pipefail
source "$(dirname "$0")/../tests/lib.sh"
results=$(mktemp -d)
trap 'cleanup_ns; module_unload; rm -rf "$results"' EXIT

count=$((4 * 1024 * 1024))	# float32 elements per worker: 16 MiB
mib=$((count * 4 / 1048576))

# report TITLE JSON NS: what the workers' JSON lines say, and NS's counters.
report()
{
	local title=$1 json=$2 ns=$3
	jq -rs --arg t "$title" --arg mib "$mib" '
		"\(.[0].trees) tree(s), \(length) workers, \($mib) MiB of float32 each\n" +
		"  result:     " + (if all(.[]; .ok) then "every worker got the exact sum of all \(length)"
				 else "WRONG on worker(s) \([.[] | select(.ok | not) | .rank])" end) + "\n" +
		"  time:       \([.[].seconds] | max * 100 | round / 100) s for the slowest worker\n" +
		"  throughput: \([.[].mb_per_s] | add | . * 10 | round / 10) MB/s of gradient in, all workers together\n" +
		"  packets:    \([.[].packets_sent] | add) sent by workers, \([.[].packets_received] | add) results back"' "$json"
	counters "$ns"
}

# counters NS: the counters that say how NS's trees did, a line a tree
# (netagg stats shows them all).
counters()
{
	echo "  $1's trees (all counters: netagg -n $1 stats):"
	netagg_in "$1" -j stats | jq -r '
		["job", "tree", "packets in", "summed", "sent up", "results out", "resent", "dropped"],
		(.jobs[] | .jid as $j | .trees[] | .stats as $s |
		 [$j, .tid, $s.rx, $s.aggregated, $s.emitted_up, $s.fanned_out, $s.resent,
		  ([$s | to_entries[] | select(.key | startswith("drop_")) | .value] | add)])
		| @tsv' |
		awk -F'\t' '{ printf "    %4s %5s %11s %9s %8s %12s %7s %8s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
}

module_load

# 1. One switch
topo_star 4
# Four trees, all rooted on sw: on one switch four go a little faster than
# one or two (make bench, docs/performance.md (c) and (f)), and not for
# their four windows: one tree with a window of 256 is no faster than 64.
star_trees="0 1 2 3"
netagg_in sw job add 7 dtype f32 op sum window 64
for t in $star_trees; do
	netagg_in sw tree add job 7 tree $t role root \
		child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
done
for i in 1 2 3 4; do
	trees=()
	for t in $star_trees; do trees+=(--tree "$t=10.0.$i.254"); done
	ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 7 --rank $((i - 1)) --workers 4 \
		--count "$count" "${trees[@]}" -j &
done >"$results/star.json"
wait
echo
echo "== netagg demo, part 1: four workers behind one aggregation switch =="
report "star" "$results/star.json" sw
cleanup_ns

# 2. Two racks
topo_racks
for n in root agg1 agg2; do netagg_in $n job add 7 dtype f32 op sum window 64; done
netagg_in agg1 tree add job 7 tree 0 role aggregator parent 10.9.1.254 \
	child 10.1.0.1 child 10.1.0.2 child 10.1.0.3
netagg_in agg2 tree add job 7 tree 0 role aggregator parent 10.9.2.254 \
	child 10.2.0.4 child 10.2.0.5 child 10.2.0.6
netagg_in root tree add job 7 tree 0 role root child 10.9.1.1 child 10.9.2.1
for w in 1 2 3 4 5 6; do
	r=$(rack_of $w)
	ip netns exec "w$w" "$NETAGG_ALLREDUCE" --job 7 --rank $((w - 1)) --workers 6 \
		--count "$count" --tree "0=10.$r.0.254" -j &
done >"$results/racks.json"
wait
echo
echo "== netagg demo, part 2: two racks, an aggregator per rack, a root above =="
report "racks" "$results/racks.json" root
counters agg1
echo
echo "(Times are inside a QEMU VM without hardware acceleration: every"
echo " instruction is emulated, so absolute speed says little about real hardware.)"
jq -se 'length == 4 and all(.[]; .ok)' "$results/star.json" >/dev/null &&
	jq -se 'length == 6 and all(.[]; .ok)' "$results/racks.json" >/dev/null
