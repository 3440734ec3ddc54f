#!/bin/bash
# Partial aggregation: a tree with a quorum completes a VID once that many
# children contributed and its straggler delay passed. The quorum and delay
# are configured and shown, bad values refused with the kernel's reason;
# with quorum 3 of 4 and one worker silent, every VID completes with 3
# contributors (checked chunk by chunk: each sums exactly three ranks); the
# silent worker's contributions, when it finally sends, are never summed,
# are counted, and are answered with the results marked late; without the
# quorum option the workers refuse those results; averages divide by 3; a
# worker slowed by netem within the straggler delay is still counted, one
# beyond it is not; the delay's timer stops cleanly when the job, the
# namespace or the module goes while a VID waits on it.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 1 (f32 sum, quorum 3 of 4)
#   w3 10.0.3.1 --+   and job 2 (f32 avg, quorum 3 of 4)
#   w4 10.0.4.1 --+   (netem on w4's v0 for the straggler cases)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

require_module sch_netem
module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
COUNT=50000			# elements: 138 chunks at MTU 1500
CHUNKS=$(( (COUNT + 361) / 362 ))

# workers RANKS... -- ARGS...: netagg-allreduce in w(R+1) for each rank R,
# all at once on tree 0 of job JOB (1), WORKERS (4) in the job, one fresh
# round (ROUND if set), without joining (the cases below have workers
# missing on purpose, which a join would refuse); ARGS come last, so they
# may override --count and --timeout-ms. JSON lines in $TEST_TMP/ar.R.
# Fails unless all exited 0.
workers()
{
	local ranks=() r pids=() rc=0 round
	while [ "$1" != -- ]; do ranks+=("$1"); shift; done
	shift
	round=${ROUND:-$(next_round 1)}
	for r in "${ranks[@]}"; do
		timeout 60 ip netns exec "w$((r + 1))" "$NETAGG_ALLREDUCE" --job "${JOB:-1}" \
			--tree "0=10.0.$((r + 1)).254" --rank "$r" --workers "${WORKERS:-4}" \
			--count "$COUNT" --round "$round" --no-join --timeout-ms 5000 -j "$@" \
			>"$TEST_TMP/ar.$r" 2>"$TEST_TMP/ar.$r.err" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do wait "$r" || rc=1; done
	[ $rc -eq 0 ] || cat "$TEST_TMP"/ar.*.err
	return $rc
}
# field RANK NAME: a field of that worker's JSON line.
field() { jq -r ".$2" "$TEST_TMP/ar.$1"; }
tree_json() { netagg_in sw -j job show "$1" | jq -c ".jobs[0].trees[0] | {$2}"; }

ktap_plan 26

netagg_in sw job add 1 dtype f32 window 256
check "tree add with quorum 3: accepted" \
	netagg_in sw tree add job 1 tree 0 role root "${kids[@]}" quorum 3
check_eq "show: quorum 3, no straggler delay" '{"quorum":3,"straggler_ms":0}' \
	"$(tree_json 1 quorum,straggler_ms)"
netagg_in sw tree set job 1 tree 0 quorum 75% straggler 40
check_eq "tree set quorum 75% straggler 40: shown" '{"quorum_pct":75,"straggler_ms":40}' \
	"$(tree_json 1 quorum_pct,straggler_ms)"
check_err "a quorum above the children is refused" "quorum exceeds the tree's children" \
	netagg_in sw tree set job 1 tree 0 quorum 5
check_err "a quorum of 101% is refused" "quorum percentage must be 1 to 100" \
	netagg_in sw tree set job 1 tree 0 quorum 101%
check_err "a straggler delay over 60 s is refused" \
	"straggler delay must be at most 60000 ms" \
	netagg_in sw tree set job 1 tree 0 straggler 60001
netagg_in sw tree set job 1 tree 0 quorum 3 straggler 0
check_err "fewer children than the quorum is refused" \
	"the tree's quorum exceeds the children: set a quorum too" \
	netagg_in sw tree set job 1 tree 0 child 10.0.1.1 child 10.0.2.1

# Quorum 3 of 4, w4 silent: ranks 0-2 accept 3 to 4 contributions and
# check that every chunk sums exactly the ranks its result says.
ROUND=$(next_round 1)
a0=$(counter sw tree 1 0 aggregated)
p0=$(counter sw tree 1 0 partial)
check "quorum 3 of 4, w4 silent: w1-w3 complete, every chunk verified" \
	workers 0 1 2 -- --quorum 3 --pattern bit
check_eq "... every result summed 3 contributions, none late" "3 3 0" \
	"$(field 0 contributors) $(field 0 contributors_max) $(field 0 late)"
check_eq "the switch completed every VID partially, summing 3 contributions each" \
	"$CHUNKS $((3 * CHUNKS))" \
	"$(( $(counter sw tree 1 0 partial) - p0 )) $(( $(counter sw tree 1 0 aggregated) - a0 ))"

# w4 now sends the same round: too late for every VID.
l0=$(counter sw tree 1 0 drop_late)
check "w4 late: its calls end, every result marked late and lacking rank 3 (verified)" \
	workers 3 -- --quorum 3 --pattern bit
check_eq "... results late for each of its chunks, of 3 contributors" "$CHUNKS 3" \
	"$(field 3 late) $(field 3 contributors)"
check_eq "its contributions were never summed: drop_late, aggregated unchanged" \
	"$CHUNKS $((3 * CHUNKS))" \
	"$(( $(counter sw tree 1 0 drop_late) - l0 )) $(( $(counter sw tree 1 0 aggregated) - a0 ))"
unset ROUND

# Without the fault-tolerant option a result of 3 where 4 are expected is
# refused: the call fails, never a success.
workers 0 1 2 -- --pattern bit >/dev/null 2>&1
rc=$?
check_eq "without --quorum the workers refuse results of 3 contributions" "1 results refused" \
	"$rc $(grep -ho 'results refused' "$TEST_TMP"/ar.0.err | head -1)"

# Averages over the 3 that contributed: workers told the job has 3.
netagg_in sw job add 2 dtype f32 op avg window 256
netagg_in sw tree add job 2 tree 0 role root "${kids[@]}" quorum 3
avg() { JOB=2 WORKERS=3 workers 0 1 2 -- --op avg; }
check "op avg with quorum 3 of 4: the average over the 3, exact" avg

# Straggler delay: w4's contributions delayed 300 ms, within 2 s: counted.
tc -n w4 qdisc add dev v0 root netem delay 300ms
netagg_in sw tree set job 1 tree 0 quorum 3 straggler 2000
p0=$(counter sw tree 1 0 partial)
check "w4 300 ms slow, straggler delay 2 s: all four complete" \
	workers 0 1 2 3 -- --pattern bit
check_eq "... every result summed all 4, no VID partial" "4 4 0" \
	"$(field 0 contributors) $(field 3 contributors) $(( $(counter sw tree 1 0 partial) - p0 ))"
# Beyond it: the delay 50 ms, w4 1.5 s slow (w1-w3 are done by then).
tc -n w4 qdisc change dev v0 root netem delay 1500ms
netagg_in sw tree set job 1 tree 0 straggler 50
check "w4 1.5 s slow, straggler delay 50 ms: w1-w3 complete with 3, w4 late" \
	workers 0 1 2 3 -- --quorum 3 --pattern bit
check_eq "... w1 summed 3, w4 got every result late" "3 $CHUNKS" \
	"$(field 0 contributors_max) $(field 3 late)"
tc -n w4 qdisc del dev v0 root

# The delay's timer while a VID waits on it (30 s; w4 silent, w1-w3 give
# up after 1 s): stopped by job del, namespace del and module unload.
pending()
{
	netagg_in sw job add 3 dtype f32 &&
		netagg_in sw tree add job 3 tree 0 role root "${kids[@]}" quorum 3 \
			straggler 30000 || return 1
	# They time out: that is the point.
	JOB=3 workers 0 1 2 -- --quorum 3 --pattern bit --count 1000 \
		--timeout-ms 1000 >/dev/null
	# Three contributions in, nothing completed: waiting on the delay.
	[ "$(counter sw tree 3 0 aggregated) $(counter sw tree 3 0 partial)" = "9 0" ]
}
teardown_while "a VID waits on its straggler delay (30 s)" pending
topo_star 4
check "a VID waits on its straggler delay in a new star" pending
check "... the module unloads while it waits" module_unload
check "the module loads again" module_load

ktap_finish
