#!/bin/bash
# Configuration churn while traffic flows: jobs and trees added, changed
# (live bitmap changes) and deleted a thousand times while two workers
# flood the switch; then a namespace deleted and the module unloaded with
# traffic still flowing. Nothing may oops, WARN, leak or hang (the runner
# checks the kernel log; the module WARNs at unload if anything leaked), and
# aggregation must still give exact sums afterwards.
#
#   w1..w4 (10.0.N.1) --- sw (10.0.N.254): jobs 7 (stable) and 100..109 (churned)
source "$(dirname "$0")/lib.sh"
require_root
trap 'stop_flood; cleanup_ns; module_unload' EXIT

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 window 64
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"

# Workers 1 and 2 flood jobs 100..109, trees 0..3, VIDs 0..255, until
# stopped or 600 s have passed, whichever comes first.
flood_pids=()
flood() {
	local i
	for i in 1 2; do
		ip netns exec "w$i" timeout 600 bash -c '
			while [ ! -e "$3/stop" ]; do
				for j in $(seq 100 109); do
					"$1" --dst "$2" --job $j --tree $((j % 4)) --vid 0 --vids 256 --count 16 >/dev/null 2>&1
				done
			done' _ "$NETAGG_SEND" "10.0.$i.254" "$TEST_TMP" &
		flood_pids+=($!)
	done
}
stop_flood() {
	touch "$TEST_TMP/stop" 2>/dev/null
	wait "${flood_pids[@]}" 2>/dev/null
	flood_pids=()
	rm -f "$TEST_TMP/stop"
}

ktap_plan 7
flood
seen=$(counter sw namespace ns_seen)
fails=0 ops=0
# Ten changes a round, 1000 in all, each round one batch over one socket (a
# process a change took five minutes under TCG). Lines 1 and 2 may find the
# job or the tree there already; lines 3 to 10 must all succeed, and any
# message but those two lines' counts as a refusal.
kids_words="${kids[*]}"
for round in $(seq 1 100); do
	j=$((100 + round % 10))
	t=$((round % 4))
	if [ $((round % 3)) -eq 0 ]; then
		last="job del $j"
	else
		last="tree set job $j tree $t child 10.0.3.1"
	fi
	ip netns exec sw "$NETAGG" -force -b - >/dev/null 2>"$TEST_TMP/churn.err" <<-EOB
	job add $j window $((1 + round % 64))
	tree add job $j tree $t role root $kids_words
	tree set job $j tree $t child 10.0.1.1 child 10.0.4.1
	tree set job $j tree $t child 10.0.2.1 child 10.0.4.1
	tree set job $j tree $t child 10.0.3.1 child 10.0.4.1
	tree set job $j tree $t $kids_words
	reset job $j tree $t
	tree del job $j tree $t
	tree add job $j tree $t role root child 10.0.1.1 child 10.0.2.1
	$last
	EOB
	refused=$(grep -vc '^netagg: line [12]: ' "$TEST_TMP/churn.err")
	if [ "$refused" -gt 0 ]; then
		sed "s/^/# round $round: /" "$TEST_TMP/churn.err"
		fails=$((fails + refused))
	fi
	ops=$((ops + 10))
done
check_eq "1000 changes while two workers flood: none refused" "1000 0" "$ops $fails"
during=$(( $(counter sw namespace ns_seen) - seen ))
check_eq "the flood went on throughout (more than 10000 packets seen)" true \
	"$([ "$during" -gt 10000 ] && echo true || echo "only $during")"
check "job 7 still sums exactly while the flood goes on" \
	bash -c "for i in 1 2 3 4; do ip netns exec w\$i '$NETAGG_ALLREDUCE' --job 7 --tree 0=10.0.\$i.254 --rank \$((i - 1)) --workers 4 --count 50000 --quiet & done; rc=0; for p in \$(jobs -p); do wait \$p || rc=1; done; exit \$rc"
check "flooded jobs deleted under traffic" \
	bash -c "for j in \$(seq 100 109); do ip netns exec sw '$NETAGG' job del \$j 2>/dev/null; done; [ \"\$(ip netns exec sw '$NETAGG' -j show | jq '.namespace.num_jobs')\" = 1 ]"

# A second switch namespace, configured and flooded, deleted mid-flood.
setup_ns sw2
ip link add x0 netns w1 type veth peer name x1 netns sw2
ip -n w1 addr add 10.8.0.1/24 dev x0
ip -n sw2 addr add 10.8.0.254/24 dev x1
ip -n w1 link set x0 up
ip -n sw2 link set x1 up
xdp_port sw2 x1
netagg_in sw2 job add 100
netagg_in sw2 tree add job 100 tree 0 role root child 10.8.0.1
ip netns exec w1 timeout 60 "$NETAGG_SEND" --dst 10.8.0.254 --job 100 --vid 0 --vids 100000 >/dev/null 2>&1 &
sleep 1
check "a namespace deleted while it aggregates" ip netns del sw2
NS_LIST=("${NS_LIST[@]/sw2}")
netagg_in sw job add 100
netagg_in sw tree add job 100 tree 0 role root "${kids[@]}"
check "the module unloads while traffic still flows" unload_under_traffic
stop_flood
check_eq "no leak reported at unload" 0 "$(dmesg | grep -c 'netagg: .* leaked')"
ktap_finish
