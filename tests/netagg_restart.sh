#!/bin/bash
# A new run never receives an old run's sums. Workers are killed in the
# middle of their join, in a round where no VID could complete, in a round
# after some VIDs completed, and after a round that finished; then the run
# is started again with the same command lines (the same job, trees, ranks
# and round numbers) and other data (--seed): the new run's workers join a
# session of their own, and every buffer they accept is the exact sum of
# the new run's contributions (netagg-allreduce checks every element). A
# control shows the hazard is real: without joining (--no-join, one session
# for both runs) the restarted run meets the dead run's sums. A packet of a
# run replaced never gives up the new run's round. The join refuses ranks
# not counted exactly once.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (f32, tree 0), job 8
#   w3 10.0.3.1 --+   (f32, trees 0 and 1), job 9 (f32, tree 0, the
#   w4 10.0.4.1 --+   control), jobs 10 and 11 (two workers on each of w1
#                     and w2: children by address, by port)
#
# w4's link is shaped (tbf 40 Mbit/s) where a run must be caught with some
# VIDs complete and others not.
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; cleanup_ns; module_unload' EXIT
require_module sch_tbf

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
for j in 7 9; do
	netagg_in sw job add $j dtype f32
	netagg_in sw tree add job $j tree 0 role root "${kids[@]}"
done
netagg_in sw job add 8 dtype f32
netagg_in sw tree add job 8 tree 0 role root "${kids[@]}"
netagg_in sw tree add job 8 tree 1 role root "${kids[@]}"
# Two workers on each of w1 and w2: children by address only (job 10), by
# address and port (job 11).
netagg_in sw job add 10 dtype f32
netagg_in sw tree add job 10 tree 0 role root child 10.0.1.1 child 10.0.2.1
netagg_in sw job add 11 dtype f32
netagg_in sw tree add job 11 tree 0 role root child 10.0.1.1:7178 child 10.0.1.1:7179 \
	child 10.0.2.1:7178 child 10.0.2.1:7179
ROUND=15		# every run below uses it: a restart does not change it

# start NAME JOB RANKS ARGS...: netagg-allreduce for each rank of RANKS
# ("0 1 2") in w(rank+1), in the background, round $ROUND; output in
# $TEST_TMP/NAME.RANK, exit code in NAME.RANK.rc. The workers wait 5 s
# (scaled) without a result, unless ARGS say: the join waits for the last
# worker to start, which on the debug kernel took the first more than 2 s.
pids=()
start()
{
	local name=$1 job=$2 r t
	local ranks=($3)
	shift 3
	for r in "${ranks[@]}"; do
		local trees=(--tree "0=10.0.$((r + 1)).254")
		[ "$job" = 8 ] && trees+=(--tree "1=10.0.$((r + 1)).254")
		rm -f "$TEST_TMP/$name.$r.rc"
		(
			timeout "$(scaled 120)" ip netns exec "w$((r + 1))" "$NETAGG_ALLREDUCE" -j \
				--job "$job" "${trees[@]}" --rank "$r" --workers 4 --round "$ROUND" \
				--timeout-ms "$(scaled 5000)" "$@" \
				>"$TEST_TMP/$name.$r" 2>"$TEST_TMP/$name.$r.err"
			echo $? >"$TEST_TMP/$name.$r.rc"
		) 2>/dev/null &	# (not the shell's word on a worker killed)
		pids+=($!)
	done
}
wait_all() { wait "${pids[@]}"; pids=(); }
# rcs NAME: the exit codes of NAME's four workers, "0 0 0 0" if all verified.
rcs() { local r; for r in 0 1 2 3; do cat "$TEST_TMP/$1.$r.rc" 2>/dev/null || echo -; done | paste -sd' '; }
errs() { cat "$TEST_TMP/$1".*.err 2>/dev/null; }
# kill_run: SIGKILL every worker of the run, as a crash or torchrun would.
kill_run()
{
	pkill -KILL -f "$NETAGG_ALLREDUCE" 2>/dev/null
	wait_all 2>/dev/null
}
# tree_state JOB: "ROUND STATE EXPECTED_VID" of tree 0 of JOB on sw.
tree_state() { netagg_in sw -j show | jq -r ".jobs[] | select(.jid == $1) | .trees[0] | \"\(.round) \(.round_state) \(.expected_vid)\""; }
# wait_vids JOB: until round $ROUND of JOB runs on sw, some VIDs complete
# (the run's data, not its join); 20 s at most.
wait_vids()
{
	local i st
	for i in $(seq 200); do
		st=($(tree_state "$1"))
		[ "${st[0]}" = "$ROUND" ] && [ "${st[1]}" = running ] && [ "${st[2]}" -gt 0 ] &&
			return 0
		sleep 0.1
	done
	return 1
}
# restarted NAME JOB ARGS...: the four workers again, other data; exact.
restarted() { start "$1" "$2" "0 1 2 3" --seed 2 "${@:3}"; wait_all; }

ktap_plan 17

# 1. Three of four workers start and die in their join: nothing completed.
start dead1 7 "0 1 2" --seed 1 --count 100000 --timeout-ms "$(scaled 60000)"
sleep "$(scaled 3)"
kill_run
restarted new1 7 --count 100000
check_eq "killed in the join: the restarted run's buffers are exact" "0 0 0 0" "$(rcs new1)"
[ "$(rcs new1)" = "0 0 0 0" ] || errs new1 | sed 's/^/# /'

# 2. All four join; rank 3 leaves after its first allreduce, the others
# start the second round of the run, where no VID can complete.
start dead2 7 "0 1 2" --seed 1 --count 100000 --iterations 2 --timeout-ms "$(scaled 60000)"
start dead2 7 3 --seed 1 --count 100000 --iterations 1
sleep "$(scaled 4)"
check_eq "the dead run is in a round none of whose VIDs completed" "$((ROUND + 1)) running 0" \
	"$(tree_state 7)"
kill_run
restarted new2 7 --count 100000
check_eq "killed in a round no VID of which completed: the restarted run is exact" "0 0 0 0" "$(rcs new2)"
[ "$(rcs new2)" = "0 0 0 0" ] || errs new2 | sed 's/^/# /'
check "... and the dead run's round was given up" test "$(counter sw tree 7 0 abandoned)" -ge 1

# 3. Killed after some VIDs of the round completed, others not: w4's link
# at 40 Mbit/s makes a 16 MiB allreduce take seconds.
tc -n w4 qdisc add dev v0 root tbf rate 40mbit burst 64kb latency 400ms
start dead3 7 "0 1 2 3" --seed 1 --count 4M --timeout-ms "$(scaled 60000)"
wait_vids 7
state=$(tree_state 7)
kill_run
tc -n w4 qdisc del dev v0 root
check "the dead run was caught mid-round, some VIDs completed ($state)" \
	bash -c "[[ '$state' == '$ROUND running '* ]] && [ '${state##* }' -gt 0 ]"
restarted new3 7 --count 4M
check_eq "killed after some VIDs completed: the restarted run is exact" "0 0 0 0" "$(rcs new3)"
[ "$(rcs new3)" = "0 0 0 0" ] || errs new3 | sed 's/^/# /'

# 4. A run that finished, then the same command lines again.
start done4 7 "0 1 2 3" --seed 1 --count 100000 --iterations 2
wait_all
check_eq "a run that finished, verified" "0 0 0 0" "$(rcs done4)"
restarted new4 7 --count 100000 --iterations 2
check_eq "after a finished run, the same rounds again: exact" "0 0 0 0" "$(rcs new4)"
check_eq "... in a session of their own, every worker the same one" "1 yes" \
	"$(cat "$TEST_TMP"/new4.[0-3] | jq -s '[.[].session] | unique | length') \
$([ "$(jq .session "$TEST_TMP/new4.0")" != "$(jq .session "$TEST_TMP/done4.0")" ] && echo yes)"

# 5. Two trees, a buffer that fits tree 0 alone: tree 1 sees only the
# joins, and keeps the last run's; the next run still joins, exact.
start small5 8 "0 1 2 3" --seed 1 --count 5
wait_all
restarted new5 8 --count 5
check_eq "two trees, one of them only joined on: the next run joins and is exact" \
	"0 0 0 0 0 0 0 0" "$(rcs small5) $(rcs new5)"
[ "$(rcs new5)" = "0 0 0 0" ] || errs new5 | sed 's/^/# /'

# 6. The control: the same crash without joining (one session for both
# runs, as before sessions): the restarted run meets the dead run's sums.
tc -n w4 qdisc add dev v0 root tbf rate 40mbit burst 64kb latency 400ms
start ctl6 9 "0 1 2 3" --seed 1 --count 4M --timeout-ms "$(scaled 60000)" --no-join
wait_vids 9
kill_run
tc -n w4 qdisc del dev v0 root
start ctlnew6 9 "0 1 2 3" --seed 2 --count 4M --timeout-ms "$(scaled 10000)" --no-join
wait_all
check "control: without a session of its own the restarted run does not verify ($(rcs ctlnew6))" \
	test "$(rcs ctlnew6)" != "0 0 0 0"

# 7. A packet of the run replaced, after the new run started, never gives
# up the new run's round: dropped as of a round the node no longer holds.
start old7 7 "0 1 2 3" --seed 1 --count 100000 --iterations 2
wait_all
old=$(jq .session "$TEST_TMP/old7.0")
start new7 7 "0 1 2 3" --seed 2 --count 4M --timeout-ms "$(scaled 20000)"
wait_vids 7
d0=$(counter sw tree 7 0 drop_round)
a0=$(counter sw tree 7 0 abandoned)
ip netns exec w1 "$NETAGG_SEND" --dst 10.0.1.254 --job 7 --session "$old" --round 99 --vid 0 \
	--count 10
wait_all
check_eq "a packet of the replaced run's session: dropped (drop_round), no round given up" \
	"1 0" "$(( $(counter sw tree 7 0 drop_round) - d0 )) $(( $(counter sw tree 7 0 abandoned) - a0 ))"
check_eq "... and the new run is exact" "0 0 0 0" "$(rcs new7)"

# 8. The join counts every rank once: w4's worker given rank 2 too (none
# rank 3) fails it, all four, saying so; nothing wrong is accepted.
start dup8 7 "0 1 2" --count 1000
(timeout "$(scaled 120)" ip netns exec w4 "$NETAGG_ALLREDUCE" --job 7 --tree 0=10.0.4.254 \
	--rank 2 --workers 4 --round "$ROUND" --count 1000 --timeout-ms "$(scaled 5000)" \
	2>"$TEST_TMP/dup8.w4.err"
 echo $? >"$TEST_TMP/dup8.w4.rc") &
pids+=($!)
wait_all
check_eq "two workers of one rank: every worker fails the join" "1 1 1 1" \
	"$(cat "$TEST_TMP"/dup8.[012].rc "$TEST_TMP/dup8.w4.rc" | paste -sd' ')"
check_eq "... each after every try of the join, saying ranks were not counted exactly once" \
	"4 4" "$(cat "$TEST_TMP"/dup8.*.err | grep -c 'failed after 8 tries') \
$(cat "$TEST_TMP"/dup8.*.err | grep -c 'ranks were not counted exactly once')"

# 9. Two workers on each of two hosts, each sending from its own port: on a
# tree that knows the hosts by address only, the second worker of each is
# the first one's duplicate; the join fails for every worker, saying why.
# Which way depends on timing: the node sums one worker a host, so each
# finds ranks not counted once; or a join's allreduce gets no result
# (two of four workers so in one make check, all four in another: the
# siblings share one child's round and result port at the node), a
# timeout whose message names the shared host. Nothing is accepted
# either way. On a tree of children by port, they are four.
two_a_host()	# NAME JOB
{
	local r
	for r in 0 1 2 3; do
		(timeout "$(scaled 120)" ip netns exec "w$((r / 2 + 1))" "$NETAGG_ALLREDUCE" -j --job "$2" \
			--tree "0=10.0.$((r / 2 + 1)).254" --rank "$r" --workers 4 --round "$ROUND" \
			--port $((7178 + r % 2)) --count 100000 --timeout-ms "$(scaled 10000)" \
			>"$TEST_TMP/$1.$r" 2>"$TEST_TMP/$1.$r.err"
		 echo $? >"$TEST_TMP/$1.$r.rc") &
		pids+=($!)
	done
	wait_all
}
two_a_host host9 10
got="$(rcs host9) $(for r in 0 1 2 3; do
	grep -l -e 'ranks were not counted exactly once' \
		-e 'Two on one host need children by address and port' "$TEST_TMP/host9.$r.err"
done | wc -l)"
[ "$got" = "1 1 1 1 4" ] || for r in 0 1 2 3; do
	echo "# rank $r: $(tail -n 1 "$TEST_TMP/host9.$r.err") $(jq -c '{joins, join_retransmits, join_probes, join_seconds}' "$TEST_TMP/host9.$r" 2>/dev/null)"
done
check_eq "two workers a host, the tree by address: every worker fails the join, saying so" \
	"1 1 1 1 4" "$got"
two_a_host port9 11
check_eq "... the tree by address and port: four workers, exact" "0 0 0 0" "$(rcs port9)"
ktap_finish
