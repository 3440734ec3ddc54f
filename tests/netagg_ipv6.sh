#!/bin/bash
# IPv6, as a peer of IPv4: trees of IPv6 addresses configured, shown and
# refused where they mix families; exact float32 and float16 sums over
# IPv6, in super-packets and plain packets; an IPv4 tree and an IPv6 tree
# on one node at once; loss and retransmission; a duplicate; ECN in the
# traffic class; a payload past an IPv6 tree's MTU; quorum and eviction;
# the Python package and the DDP hook; then a two-level tree of IPv6
# aggregators.
#
#   w1 10.0.1.1 fd00:0:1::1 --+
#   w2 10.0.2.1 fd00:0:2::1 --+-- sw 10.0.N.254 fd00:0:N::254
#   w3 10.0.3.1 fd00:0:3::1 --+   (routes between the workers: gloo's TCP)
#   w4 10.0.4.1 fd00:0:4::1 --+
#
# then topo_racks (lib.sh), its IPv6 twins: w1-w3 under agg1, w4-w6 under
# agg2, both under root.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
PY=/usr/bin/python3
export PYTHONPATH=$NETAGG_ROOT/python
SEND=$NETAGG_ROOT/tests/tools/netagg-send
PEER=$NETAGG_ROOT/tests/agg_peer.py

module_load
topo_star 4
forwarding sw
for i in 1 2 3 4; do route_add "w$i" 10.0.0.0/16 "10.0.$i.254"; done
kids=(child fd00:0:1::1 child fd00:0:2::1 child fd00:0:3::1 child fd00:0:4::1)
tree_json() { netagg_in sw -j job show "$1" | jq -c ".jobs[0].trees[0] | $2"; }

# allreduce NAME JOB N ARGS...: netagg-allreduce in w1..wN, each to its
# IPv6 node (sw), ARGS after; NAME.I its JSON; fails unless all exit 0.
allreduce()
{
	local name=$1 job=$2 n=$3 i pids=() rc=0
	shift 3
	for i in $(seq "$n"); do
		timeout "$(scaled 120)" ip netns exec "w$i" "$NETAGG_ALLREDUCE" -j \
			--job "$job" --tree "0=fd00:0:$i::254" --rank $((i - 1)) \
			--workers "$n" --timeout-ms "$(scaled 5000)" "$@" \
			>"$TEST_TMP/$name.$i" 2>"$TEST_TMP/$name.$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc -eq 0 ] || cat "$TEST_TMP/$name".*
	return $rc
}
sum_field() { cat "$TEST_TMP/$1".[1-9] | jq -s "[.[].$2] | add"; }

ktap_plan 23

netagg_in sw job add 1 dtype f32
check "an IPv6 tree: tree add with four IPv6 children" \
	netagg_in sw tree add job 1 tree 0 role root "${kids[@]}"
netagg_in sw job add 9
netagg_in sw tree add job 9 tree 0 role root child fd00:0:1::1 child "[fd00:0:2::1]:7300"
check_eq "... shown as given, [ADDR]:PORT in text" \
	'[{"addr":"fd00:0:1::1","port":null,"bit":0},{"addr":"fd00:0:2::1","port":7300,"bit":1}] child [fd00:0:2::1]:7300 bit 1' \
	"$(netagg_in sw -j job show 9 | jq -c '.jobs[0].trees[0].children') $(netagg_in sw job show 9 | awk '/7300/ { $1 = $1; print }')"
check_err "a tree of IPv4 and IPv6 children is refused, saying why" \
	"the tree is IPv6: its parent and children are all IPv6 addresses" \
	netagg_in sw tree add job 9 tree 1 role root child fd00:0:1::1 child 10.0.2.1
check_err "... so is an IPv4 child for an IPv6 tree, on tree set" \
	"the tree is IPv6" netagg_in sw tree set job 9 tree 0 child 10.0.1.1
check_err "a link-local child is refused: it names no interface" \
	"child is link-local, which names no interface to send by" \
	netagg_in sw tree add job 9 tree 1 role root child fe80::1
netagg_in sw job del 9

ROUND=$(next_round 8)
check "float32 over IPv6, 4 workers, 1M elements, super-packets: exact" \
	allreduce f32 1 4 --round "$ROUND" --count 1M
# Through the XDP hook no super-packet reaches sw: veth segments what it
# sends to a port running XDP, and sw answers packet by packet.
super=yes
[ -z "${NETAGG_XDP:-}" ] || super=no
check_eq "... taken as super-packets (super_rx), sent back in them (super_tx), nothing refused" \
	"$super $super 0" \
	"$(netagg_in sw -j stats | jq -r '.jobs[] | select(.jid == 1) | .trees[0].stats |
		"\(if .super_rx > 0 then "yes" else "no" end) \(if .super_tx > 0 then "yes" else "no" end) \([to_entries[] | select(.key | test("^drop_")) | .value] | add)"')"
check "float32 over IPv6, plain packets of 357 elements: exact" \
	allreduce plain 1 4 --round $((ROUND + 1)) --count 100000 --plain

netagg_in sw job add 2 dtype f16
netagg_in sw tree add job 2 tree 0 role root "${kids[@]}"
check "float16 over IPv6, 4 workers: exact" \
	allreduce f16 2 4 --dtype f16 --count 300000

# sw is dual-stack: job 3's tree is IPv4, job 1's IPv6, both at once.
netagg_in sw job add 3 dtype f32
netagg_in sw tree add job 3 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
dual() {
	local i pids=() rc=0
	allreduce dual6 1 4 --round $((ROUND + 2)) --count 500000 & pids+=($!)
	for i in 1 2 3 4; do
		timeout "$(scaled 120)" ip netns exec "w$i" "$NETAGG_ALLREDUCE" --quiet \
			--job 3 --tree "0=10.0.$i.254" --rank $((i - 1)) --workers 4 \
			--count 500000 --timeout-ms "$(scaled 5000)" & pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}
check "a dual-stack node: an IPv4 tree and an IPv6 tree at once, both exact" dual

# 300k elements are ~150 super-packets in all, which 3% loss misses
# entirely about one run in a hundred, and the resend check below would
# then fail with nothing wrong: until netem has dropped something, the
# allreduce runs again (rounds 3, 4 and 7 of this script's eight), three
# times at most. Bigger allreduces cost a minute and a half a run.
netem_dropped() {
	local i
	for i in 1 2 3 4; do
		tc -n "w$i" -s -j qdisc show dev v0
		tc -n sw -s -j qdisc show dev "s$i"
	done | jq -s '[.[][] | select(.kind == "netem") | .drops] | add'
}
lossy() {
	local r
	for r in 3 4 7; do
		allreduce loss 1 4 --round $((ROUND + r)) --count 300000 || return 1
		[ "$(netem_dropped)" -gt 0 ] && return 0
	done
}
netem_star 4 loss 3%
check "loss of 3% each way over IPv6: exact" lossy
check_eq "... the losses made up by resending" yes \
	"$(awk -v r="$(sum_field loss retransmits)" 'BEGIN { print (r > 0 ? "yes" : "no") }')"
netem_star 4 none

# A contribution sent twice from w1: the second is a duplicate.
netagg_in sw job add 8 dtype f32
netagg_in sw tree add job 8 tree 0 role root child fd00:0:1::1 child fd00:0:2::1
dup() {
	local k
	for k in 1 2; do
		ip netns exec w1 "$SEND" --dst fd00:0:1::254 --src fd00:0:1::1 \
			--job 8 --vid 0 --count 357 || return 1
	done
}
check "one contribution sent twice over IPv6" dup
check_eq "... the first summed, the second counted a duplicate" "1 1" \
	"$(wait_counter 1 sw tree 8 0 duplicate) $(counter sw tree 8 0 aggregated)"

# ECN: w1's contribution arrives CE in its traffic class, w2's ECT(0); the
# result carries CE to both.
netagg_in sw job add 4 dtype f32
netagg_in sw tree add job 4 tree 0 role root child fd00:0:1::1 child fd00:0:2::1
ip netns exec w1 "$PY" "$PEER" --dst fd00:0:1::254 --job 4 --vids 0 --fin 0 \
	--ecn 3 --expect 1 >"$TEST_TMP/ecn.1" &
p1=$!
ip netns exec w2 "$PY" "$PEER" --dst fd00:0:2::254 --job 4 --vids 0 --fin 0 \
	--ecn 2 --expect 1 >"$TEST_TMP/ecn.2"
wait $p1
check_eq "ECN over IPv6: a CE input marks the result CE (traffic class), to both" \
	"ecn=3 ecn=3" "$(cat "$TEST_TMP/ecn.1" "$TEST_TMP/ecn.2" | grep -o 'ecn=[0-9]' | paste -sd' ')"

# Job 5's MTU, 1400, leaves an IPv6 packet 332 float32 elements, an IPv4
# one 337: 335 fit the job, not its IPv6 tree.
netagg_in sw job add 5 dtype f32 mtu 1400
netagg_in sw tree add job 5 tree 0 role root child fd00:0:1::1 child fd00:0:2::1
ip netns exec w1 "$SEND" --dst fd00:0:1::254 --job 5 --vid 0 --count 335
check_eq "a payload past an IPv6 tree's MTU (the job's less 20 bytes) is refused (drop_length)" \
	1 "$(wait_counter 1 sw tree 5 0 drop_length)"

# Quorum: w4 never comes; the three others complete with a quorum of 3.
netagg_in sw job add 6 dtype f32
netagg_in sw tree add job 6 tree 0 role root "${kids[@]}" quorum 3
q3() {
	local i pids=() rc=0
	for i in 1 2 3; do
		timeout "$(scaled 120)" ip netns exec "w$i" "$NETAGG_ALLREDUCE" -j \
			--job 6 --tree "0=fd00:0:$i::254" --rank $((i - 1)) --workers 4 \
			--quorum 3 --pattern bit --no-join --count 100000 \
			--timeout-ms "$(scaled 5000)" >"$TEST_TMP/q3.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}
check "quorum 3 of 4 over IPv6, w4 absent: the three complete, every chunk verified" q3
check_eq "... every result the sum of the three" "3 3" \
	"$(jq -r .contributors "$TEST_TMP/q3.1") $(jq -r .contributors_max "$TEST_TMP/q3.1")"

# Eviction: w2 silent while VID 0 waits for it, for 1 s.
netagg_in sw job add 10 dtype f32
netagg_in sw tree add job 10 tree 0 role root child fd00:0:1::1 child fd00:0:2::1 \
	evict "$(scaled 1000)"
ip netns exec w1 "$SEND" --dst fd00:0:1::254 --job 10 --vid 0 --round 1 >/dev/null
check_eq "eviction over IPv6: w2, silent, evicted, named by its IPv6 address" \
	'1 ["fd00:0:2::1"]' \
	"$(wait_counter -t "$(scaled 10)" 1 sw tree 10 0 evicted) $(tree_json 10 '[.evicted[].addr]')"

# The Python package, its trees in NETAGG_TREES by IPv6 address (one
# bracketed), and the DDP hook over them (gloo's own traffic over IPv4).
py_worker()
{
	local i=$1 addr="fd00:0:$1::254"
	[ "$i" != 2 ] || addr="[$addr]"
	NETAGG_JOB=1 NETAGG_TREES="0=$addr" NETAGG_WORKERS=4 \
	NETAGG_ROUND=$((ROUND + 5)) timeout "$(scaled 120)" ip netns exec "w$i" "$PY" \
		"$NETAGG_ROOT/tests/python/allreduce.py" --rank $((i - 1)) \
		--timeout "$(scaled 5)" --kind numpy --reps 1 >"$TEST_TMP/py.$i"
}
py() {
	local i pids=() rc=0
	for i in 1 2 3 4; do py_worker "$i" & pids+=($!); done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}
check "the Python package over IPv6 (NETAGG_TREES=0=fd00:..., and [fd00:...]): exact" py
ddp_worker()
{
	GLOO_SOCKET_IFNAME=v0 NETAGG_JOB=1 NETAGG_TREES="0=fd00:0:$1::254" \
	NETAGG_ROUND=$((ROUND + 6)) timeout 600 ip netns exec "w$1" "$PY" \
		"$NETAGG_ROOT/tests/python/ddp.py" --rank $(($1 - 1)) --world 4 \
		--master "10.0.1.1:29511" --steps 3 >"$TEST_TMP/ddp.$1"
}
ddp() {
	local i pids=() rc=0
	for i in 1 2 3 4; do ddp_worker "$i" & pids+=($!); done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc -eq 0 ] || cat "$TEST_TMP"/ddp.*
	return $rc
}
check "the DDP hook over IPv6 trees, 4 workers, 3 steps: every check held" ddp

# Two levels: agg1 and agg2 under root, every address IPv6.
del_ns_all
topo_racks
for r in 1 2; do
	netagg_in "agg$r" job add 7 dtype f32
	netagg_in "agg$r" tree add job 7 tree 0 role aggregator parent "fd00:9:$r::254" \
		$(for w in 1 2 3 4 5 6; do [ "$(rack_of $w)" = $r ] && echo "child fd00:$r:0::$w"; done)
done
netagg_in root job add 7 dtype f32
netagg_in root tree add job 7 tree 0 role root child fd00:9:1::1 child fd00:9:2::1
racks() {
	local w pids=() rc=0
	for w in 1 2 3 4 5 6; do
		timeout "$(scaled 120)" ip netns exec "w$w" "$NETAGG_ALLREDUCE" --quiet \
			--job 7 --tree "0=fd00:$(rack_of $w):0::254" --rank $((w - 1)) \
			--workers 6 --count 1M --timeout-ms "$(scaled 5000)" & pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	return $rc
}
check "two levels over IPv6, 6 workers, 1M elements: exact" racks
check_eq "... summed at each level: the aggregators sent sums up, root results down" "yes yes yes" \
	"$(for n in agg1 agg2 root; do counter "$n" tree 7 0 "$([ $n = root ] && echo fanned_out || echo emitted_up)"; done |
		awk '{ print ($1 > 0 ? "yes" : "no") }' | paste -sd' ')"
ktap_finish
