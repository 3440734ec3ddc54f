#!/bin/bash
# Failure handling: a tree with an eviction time takes out a child that
# sent nothing for that long while the others waited for it, announces it
# on the events group (netagg monitor) and counts it.
#
# Star (job 1 fault-tolerant workers, keyed, job 2 strict ones, job 3
# timers):
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root, evict 2 s
#   w3 10.0.3.1 --+
#   w4 10.0.4.1 --+   (tbf 40 Mbit/s on w4's v0: a 16 MiB allreduce takes
#                      seconds, so w4 is killed in the middle of it)
#
# With the fault-tolerant option (--quorum 3) w1-w3 finish the allreduce
# w4 was killed in, every chunk verified, results of 4 before and 3 after;
# without it they fail with the partial-result error, never success. A
# child evicted comes back at the next round once it sent again, or at once
# when the operator lists it. The watch timer stops cleanly when the job,
# the namespace or the module goes while a tree waits.
#
# The eviction time is above the skew of the workers' start (they are
# processes started one by one in an emulated VM): a worker that has not
# started yet is, to the switch, a worker that is silent. On a slower
# kernel (make check-debug) the skew grows, and every time here with it
# (scaled: 2 s is 6 s there).
#
# Two racks (job 9, evict 2 s on every node):
#
#   w1 w2 w3 --br-- agg1 10.9.1.1 --- 10.9.1.254 \
#                                                 root
#   w4 w5 w6 --br-- agg2 10.9.2.1 --- 10.9.2.254 /
#
# agg1's namespace is deleted in the middle of a 16 MiB allreduce: the root
# evicts it and rack 2's workers complete with their own three
# contributions, and agg2 does not take the root for lost; then the root's
# namespace goes too, and agg2 reports its parent lost.
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; cleanup_ns; module_unload' EXIT

require_module sch_tbf
require_module sch_netem
module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
BIG=$((4 << 20))		# elements: 16 MiB of f32
EVICT=$(scaled 2000)		# ms
KEY=$TEST_TMP/key1		# job 1's: eviction of a keyed job's child
head -c 32 /dev/urandom >"$KEY"

# run NAME NS ARGS...: netagg-allreduce in NS, in the background; its JSON
# line in $TEST_TMP/NAME, errors in NAME.err, exit code in NAME.rc.
pids=()
run()
{
	local name=$1 ns=$2
	shift 2
	rm -f "$TEST_TMP/$name.rc"
	(
		timeout "$(scaled 120)" ip netns exec "$ns" "$NETAGG_ALLREDUCE" -j "$@" \
			>"$TEST_TMP/$name" 2>"$TEST_TMP/$name.err"
		echo $? >"$TEST_TMP/$name.rc"
	) &
	pids+=($!)
}
wait_all() { wait "${pids[@]}"; pids=(); }
rc_of() { local n; for n; do cat "$TEST_TMP/$n.rc"; done | paste -sd' '; }
field() { jq -r ".$2" "$TEST_TMP/$1"; }
# star NAME JOB ROUND RANK... -- ARGS: workers w(RANK+1) on tree 0 of JOB,
# without joining: the cases below leave workers out on purpose (a join
# would refuse to start without them; netagg_training.sh joins with a
# quorum). They give up after the library's 2 s without progress, scaled
# (ARGS may say otherwise): a worker started late holds up the others.
star()
{
	local name=$1 job=$2 round=$3 r
	shift 3
	local ranks=() key=()
	while [ "$1" != -- ]; do ranks+=("$1"); shift; done
	shift
	[ "$job" != 1 ] || key=(--key "$KEY")
	for r in "${ranks[@]}"; do
		run "$name$r" "w$((r + 1))" --job "$job" --tree "0=10.0.$((r + 1)).254" \
			--rank "$r" --workers 4 --round "$round" --no-join --pattern bit \
			--timeout-ms "$(scaled 2000)" "${key[@]}" "$@"
	done
}
# monitor NAME NS N: netagg -j monitor in NS until N events (30 s at most,
# scaled).
monitor()
{
	timeout "$(scaled 30)" ip netns exec "$2" "$NETAGG" -j monitor count "$3" \
		>"$TEST_TMP/$1" 2>"$TEST_TMP/$1.err" &
	MONITOR=$!
	sleep "$(scaled 0.5)"	# subscribed before anything happens
}
tree_json() { netagg_in "$1" -j job show "$2" | jq -c ".jobs[0].trees[0] | $3"; }
# progress NS JOB VID: wait (30 s at most, scaled) until tree 0 of JOB in
# NS has completed VID VID of round $ROUND: the allreduce is past its start.
progress()
{
	local i
	for i in $(seq "$(scaled 300)"); do
		[ "$(tree_json "$1" "$2" "select(.round == $ROUND) | .expected_vid")" \
			-gt "$3" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

ktap_plan 33

# Configuration.
netagg_in sw job add 1 dtype f32 window 256 key "$KEY"
check "tree add with evict $EVICT: accepted" \
	netagg_in sw tree add job 1 tree 0 role root "${kids[@]}" evict "$EVICT"
check_eq "show: evict_ms $EVICT, nobody evicted" "[$EVICT,[]]" "$(tree_json sw 1 '[.evict_ms, .evicted]')"
check_err "an eviction time over an hour is refused" \
	"eviction time must be at most 3600000 ms" \
	netagg_in sw tree set job 1 tree 0 evict 3600001
check_err "monitor count 0 is refused by the CLI" "count must be at least 1" \
	netagg_in sw monitor count 0

# w4 killed in the middle of a 16 MiB allreduce; w1-w3 fault tolerant.
tc -n w4 qdisc add dev v0 root tbf rate 40mbit burst 64kb latency 200ms
# kill_w4 JOB: once 1000 VIDs completed with all four, w4 is killed: every
# process in its namespace.
kill_w4()
{
	progress sw "$1" 1000 || echo "kill_w4: job $1 made no progress" >&2
	ip netns pids w4 | xargs -r kill -KILL
}
monitor mon1 sw 1
ev0=$(counter sw tree 1 0 evicted)
ROUND=$(next_round 1)
star ft 1 "$ROUND" 0 1 2 3 -- --count "$BIG" --quorum 3 --timeout-ms "$(scaled 5000)"
kill_w4 1
wait_all
check_eq "w4 killed mid-allreduce: w1-w3 complete, every chunk verified" "0 0 0" \
	"$(rc_of ft0 ft1 ft2)"
check_eq "... their results summed 4 before, 3 after, the round regrouped" "3 4 yes" \
	"$(field ft0 contributors) $(field ft0 contributors_max) \
$([ "$(field ft0 regrouped)" -gt 0 ] && echo yes)"
check_eq "... ranks 0-2 in every result, rank 3 in some only" '[0,1,2] [3]' \
	"$(jq -c .ranks "$TEST_TMP/ft1") $(jq -c .ranks_some "$TEST_TMP/ft1")"
wait "$MONITOR"
check_eq "netagg monitor saw w4 evicted from job 1 tree 0, silent $EVICT ms or more" \
	'{"event":"child-evicted","jid":1,"tid":0,"child":"10.0.4.1","silent":true}' \
	"$(jq -c --argjson ms "$EVICT" '{event, jid, tid, child, silent: (.silent_ms >= $ms)}' \
		"$TEST_TMP/mon1")"
check_eq "counted: evicted 1" 1 "$(( $(counter sw tree 1 0 evicted) - ev0 ))"
check_eq "show: children w1-w3, w4 evicted" '[["10.0.1.1","10.0.2.1","10.0.3.1"],["10.0.4.1"]]' \
	"$(tree_json sw 1 '[[.children[].addr], [.evicted[].addr]]')"

# The event names the VID that waited for the evicted child, not the one
# its eviction then completed: w1 sends VID 0 of job 4, w2 nothing.
netagg_in sw job add 4 dtype f32
netagg_in sw tree add job 4 tree 0 role root child 10.0.1.1 child 10.0.2.1 evict "$(scaled 1000)"
monitor mon5 sw 1
ip netns exec w1 "$NETAGG_SEND" --dst 10.0.1.254 --job 4 --vid 0 --round 1 >/dev/null
wait "$MONITOR"
check_eq "w2 silent while VID 0 waits: the event names VID 0, which then completed" \
	'{"event":"child-evicted","jid":4,"child":"10.0.2.1","expected_vid":0} 1' \
	"$(jq -c '{event, jid, child, expected_vid}' "$TEST_TMP/mon5") $(tree_json sw 4 .expected_vid)"
netagg_in sw job del 4

# The same without the fault-tolerant option: the partial-result error.
netagg_in sw job add 2 dtype f32 window 256
netagg_in sw tree add job 2 tree 0 role root "${kids[@]}" evict "$EVICT"
ROUND=$(next_round 1)
star strict 2 "$ROUND" 0 1 2 3 -- --count "$BIG" --timeout-ms "$(scaled 5000)"
kill_w4 2
wait_all
check_eq "without --quorum, w1-w3 fail (exit 1), none succeeds" "1 1 1" \
	"$(rc_of strict0 strict1 strict2)"
check_eq "... with the partial-result error: results refused" "3" \
	"$(grep -l 'Remote I/O error' "$TEST_TMP"/strict[012].err | wc -l)"
check "... the refused results are named" grep -q 'results refused' "$TEST_TMP/strict0.err"
tc -n w4 qdisc del dev v0 root

# w4 sends again, alone: it times out (and, waiting for w1-w3 longer than
# the eviction time, the switch would evict them: w4 gives up after half).
# Back when the next round starts.
d0=$(counter sw tree 1 0 drop_evicted)
star alone 1 "$(next_round 1)" 3 -- --count 1000 --timeout-ms "$(scaled 1000)"
wait_all
check_eq "w4 alone, evicted: its call times out, nothing of it summed" "1 some" \
	"$(rc_of alone3) $(some $(( $(counter sw tree 1 0 drop_evicted) - d0 )))"
check_eq "... still evicted until a round starts" '["10.0.4.1"]' \
	"$(tree_json sw 1 '[.evicted[].addr]')"
monitor mon2 sw 1
star back 1 "$(next_round 1)" 0 1 2 3 -- --count 100000
wait_all
check_eq "the next round: all four complete, every result of 4 (strict)" "0 0 0 0 4" \
	"$(rc_of back0 back1 back2 back3) $(field back3 contributors)"
wait "$MONITOR"
check_eq "netagg monitor saw w4 rejoin" '{"event":"child-rejoined","child":"10.0.4.1"}' \
	"$(jq -c '{event, child}' "$TEST_TMP/mon2")"
check_eq "counted: rejoined 1; show: nobody evicted" "1 []" \
	"$(counter sw tree 1 0 rejoined) $(tree_json sw 1 .evicted)"

# The operator lists w4 again (job 2): back at once.
check "tree set with the four children" \
	netagg_in sw tree set job 2 tree 0 "${kids[@]}"
check_eq "... nobody evicted" '[]' "$(tree_json sw 2 .evicted)"
star re 2 "$(next_round 1)" 0 1 2 3 -- --count 100000
wait_all
check_eq "all four complete, every result of 4 (strict)" "0 0 0 0 4" \
	"$(rc_of re0 re1 re2 re3) $(field re0 contributors)"

# The watch timer while a tree waits (evict 30 s, w4 silent, w1-w3 give up
# after 1 s; both scaled): stopped by job del, namespace del and module
# unload.
waiting()
{
	netagg_in sw job add 3 dtype f32 &&
		netagg_in sw tree add job 3 tree 0 role root "${kids[@]}" evict "$(scaled 30000)" ||
		return 1
	star wait 3 "$(next_round 1)" 0 1 2 -- --count 1000 --timeout-ms "$(scaled 1000)"
	wait_all
	# Three contributions to each of 3 VIDs in, nothing completed or evicted.
	[ "$(counter sw tree 3 0 aggregated) $(counter sw tree 3 0 evicted)" = "9 0" ]
}
teardown_while "a tree waits for w4 (evict 30 s)" waiting

# Two racks.
topo_racks
kids1=(child 10.1.0.1 child 10.1.0.2 child 10.1.0.3)
kids2=(child 10.2.0.4 child 10.2.0.5 child 10.2.0.6)
for n in root agg1 agg2; do netagg_in $n job add 9 dtype f32 window 256; done
netagg_in agg1 tree add job 9 tree 0 role aggregator parent 10.9.1.254 "${kids1[@]}" evict "$EVICT"
netagg_in agg2 tree add job 9 tree 0 role aggregator parent 10.9.2.254 "${kids2[@]}" evict "$EVICT"
netagg_in root tree add job 9 tree 0 role root child 10.9.1.1 child 10.9.2.1 evict "$EVICT"
# Results leave the root at 40 Mbit/s: the allreduce takes seconds.
for r in 1 2; do tc -n root qdisc add dev "d$r" root netem rate 40mbit limit 100000; done
racks()
{
	local name=$1 w r
	shift
	for w in "$@"; do
		r=$(rack_of "$w")
		run "$name$w" "w$w" --job 9 --tree "0=10.$r.0.254" --rank $((w - 1)) \
			--workers 6 --quorum 3 --pattern bit --timeout-ms "$(scaled 8000)" --no-join \
			--round "$ROUND" --count "$BIG"
	done
}
monitor mon3 root 1
ROUND=$(next_round 1)
racks two 1 2 3 4 5 6
progress root 9 1000 || echo "job 9 made no progress" >&2
ip netns del agg1
NS_LIST=("${NS_LIST[@]/agg1}")
wait_all
check_eq "agg1 deleted mid-allreduce: rack 2's workers complete, verified" "0 0 0" \
	"$(rc_of two4 two5 two6)"
check_eq "... their results summed 6 before, 3 after" "3 6" \
	"$(field two5 contributors) $(field two5 contributors_max)"
wait "$MONITOR"
check_eq "the root evicted agg1 (netagg monitor)" \
	'{"event":"child-evicted","jid":9,"tid":0,"child":"10.9.1.1"}' \
	"$(jq -c '{event, jid, tid, child}' "$TEST_TMP/mon3")"
check_eq "agg2 did not take the root for lost, which went on answering" "0" \
	"$(counter agg2 tree 9 0 parent_lost)"

# The root's namespace goes: agg2 reports its parent lost (2 x EVICT).
monitor mon4 agg2 1
ROUND=$(next_round 1)
racks lost 4 5 6
progress agg2 9 1000 || echo "job 9 made no progress" >&2
ip netns del root
NS_LIST=("${NS_LIST[@]/root}")
wait_all
wait "$MONITOR"
check_eq "root deleted mid-allreduce: agg2 reports its parent lost" \
	'{"event":"parent-lost","jid":9,"tid":0,"parent":"10.9.2.254","silent":true}' \
	"$(jq -c --argjson ms $((2 * EVICT)) '{event, jid, tid, parent, silent: (.silent_ms >= $ms)}' \
		"$TEST_TMP/mon4")"
check_eq "... counted, and shown" "1 true" \
	"$(counter agg2 tree 9 0 parent_lost) $(tree_json agg2 9 .parent_lost)"
check_eq "... and rack 2's workers fail: no result, never success" "1 1 1" \
	"$(rc_of lost4 lost5 lost6)"
ktap_finish
