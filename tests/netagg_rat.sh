#!/bin/bash
# Trees built from the topology (lab/rat-netns.py apply, with the plans of
# python3 -m netagg.rat): the tool builds the topology out of namespaces,
# configures every node with its plan, and the workers, given the
# environment it wrote, allreduce exactly: each its own (WORKER.JID.env),
# then the one of the job's for every host (job.JID.env: each tree named
# by an address of its root; the first node on a worker's way to it, its
# parent, takes its packets as they pass).
#
# 1. The demo's two racks (tests/topologies/racks.topo, namespaces rk-*):
#      w1 w2 w3 -- agg1 --\
#                          root        job 7, one tree
#      w4 w5 w6 -- agg2 --/
# 2. A three-level fat-tree, 2 pods x 2 racks x 2 workers
#    (tests/topologies/fattree.topo, namespaces ft-*):
#              core1                core2
#           p1a     p2a          p1b     p2b       (a pod's a and b switches
#         tor11 tor12 tor21 tor22  (the same tors)  both link to its tors)
#         w1 w2 w3 w4 w5 w6 w7 w8
#    job 1 over all eight on two trees (core1 by the a switches, core2 by
#    the b switches); then jobs 2 and 3, one worker of each rack apiece,
#    at once, each on links of its own.
# 3. The demo's two racks over IPv6 (tests/topologies/racks6.topo, the
#    jobs of racks.jobs, namespaces r6-*): every address, route and tree
#    IPv6, 357 float32 a packet:
#      w1 w2 w3 (fd00:1::1-3) -- fd00:1::254 agg1 fd00:9:1::1 --\
#                                                   fd00:9:1::254 root    job 7,
#                                                   fd00:9:2::254         one tree
#      w4 w5 w6 (fd00:2::4-6) -- fd00:2::254 agg2 fd00:9:2::1 --/
source "$(dirname "$0")/lib.sh"
require_root
T=$NETAGG_ROOT/tests/topologies
rat_netns() { PYTHONPATH=$NETAGG_ROOT/python "$NETAGG_ROOT/lab/rat-netns.py" "$@"; }
trap 'rat_netns destroy $T/racks.topo --prefix rk- >/dev/null 2>&1
	rat_netns destroy $T/fattree.topo --prefix ft- >/dev/null 2>&1
	rat_netns destroy $T/racks6.topo --prefix r6- >/dev/null 2>&1
	cleanup_ns; module_unload' EXIT
export NETAGG
module_load

# allreduce PREFIX DIR JOB COUNT WORKER...: each worker, in its namespace,
# allreduces COUNT float32 elements with the environment the tool wrote
# (DIR/WORKER.JOB.env; with ONE_ENV=1, DIR/job.JOB.env's trees, the same
# for every host); fails unless every one verified the exact sum.
allreduce()
{
	local prefix=$1 dir=$2 job=$3 count=$4 w pids=() rc=0
	shift 4
	for w in "$@"; do
		(
			source "$dir/$w.$job.env"
			[ -z "${ONE_ENV:-}" ] || source "$dir/job.$job.env"
			# shellcheck disable=SC2086
			exec ip netns exec "$prefix$w" "$NETAGG_ALLREDUCE" --job "$NETAGG_JOB" \
				--rank "$NETAGG_RANK" --workers "$NETAGG_WORKERS" --count "$count" \
				--tree ${NETAGG_TREES//,/ --tree } --timeout 20000
		) >"$TEST_TMP/ar.$job.$w" 2>&1 &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || rc=1; done
	[ $rc -eq 0 ] || tail -n 3 "$TEST_TMP"/ar.$job.*
	return $rc
}

# jobs_trees NS: the "JOB.TREE" pairs NS holds, e.g. "1.0 1.1"
jobs_trees()
{
	netagg_in "$1" -j show | jq -r '[.jobs[] | .jid as $j | .trees[] | "\($j).\(.tid)"] | join(" ")'
}

ktap_plan 20

check "two racks: the tool builds the namespaces and configures agg1, agg2 and root" \
	rat_netns apply "$T/racks.topo" "$T/racks.jobs" --prefix rk- -o "$TEST_TMP/racks"
check "... six workers allreduce 300,007 float32 exactly through it" \
	allreduce rk- "$TEST_TMP/racks" 7 300007 w1 w2 w3 w4 w5 w6
# 362 float32 a 1500-byte packet; and the join's two (nonces, confirmations)
chunks=$(( (300007 + 361) / 362 + 2 ))
check_eq "... agg1 summed its rack's three, root the two racks ($chunks chunks, the join's too)" \
	"$((3 * chunks)) $((2 * chunks))" \
	"$(counter rk-agg1 tree 7 0 aggregated) $(counter rk-root tree 7 0 aggregated)"
ONE_ENV=1 check "... and again with one environment for all six (job.7.env: root's $(
	grep -o '0=[0-9.]*' "$TEST_TMP/racks/job.7.env")): exact" \
	allreduce rk- "$TEST_TMP/racks" 7 300007 w1 w2 w3 w4 w5 w6
check_eq "... agg1 and agg2 took their racks' packets to it as they passed, root the racks'" \
	"$((6 * chunks)) $((6 * chunks)) $((4 * chunks))" \
	"$(counter rk-agg1 tree 7 0 aggregated) $(counter rk-agg2 tree 7 0 aggregated) $(counter rk-root tree 7 0 aggregated)"
out=$(rat_netns apply "$T/racks.topo" "$T/racks.jobs" --prefix rk- 2>&1)
rc=$?
check_eq "applying it again: exit 1 naming the step that failed" "1 apply: ip netns add rk-agg1: " \
	"$rc $(grep -o 'apply: ip netns add rk-agg1: ' <<<"$out")"
rat_netns destroy "$T/racks.topo" --prefix rk-
check_eq "destroy removes the namespaces" "0" "$(ip netns list | grep -c '^rk-')"

check "fat-tree: the tool builds 18 namespaces, routes and the trees of job 1" \
	rat_netns apply "$T/fattree.topo" "$T/fattree.jobs" --prefix ft- -o "$TEST_TMP/ft"
check "... eight workers allreduce 500,009 float32 exactly on two trees, three levels" \
	allreduce ft- "$TEST_TMP/ft" 1 500009 w1 w2 w3 w4 w5 w6 w7 w8
chunks=$(( (500009 + 361) / 362 ))
t0=$(( (chunks + 1) / 2 + 2 )) t1=$((chunks / 2 + 2))	# the join's two on each tree
check_eq "... tree 0 by tor11, p1a and core1, tree 1 by tor11, p1b and core2" \
	"$((2 * t0)) $((2 * t0)) $((2 * t0)) $((2 * t1)) $((2 * t1)) $((2 * t1))" \
	"$(counter ft-tor11 tree 1 0 aggregated) $(counter ft-p1a tree 1 0 aggregated) \
$(counter ft-core1 tree 1 0 aggregated) $(counter ft-tor11 tree 1 1 aggregated) \
$(counter ft-p1b tree 1 1 aggregated) $(counter ft-core2 tree 1 1 aggregated)"
ONE_ENV=1 check "... and again with one environment for all eight (job.1.env: $(
	grep -o '0=.*' "$TEST_TMP/ft/job.1.env")): exact, each tor taking its racks' packets" \
	allreduce ft- "$TEST_TMP/ft" 1 500009 w1 w2 w3 w4 w5 w6 w7 w8
check_eq "... tor11 and core1 twice the above on tree 0, tor11 and core2 on tree 1" \
	"$((4 * t0)) $((4 * t0)) $((4 * t1)) $((4 * t1))" \
	"$(counter ft-tor11 tree 1 0 aggregated) $(counter ft-core1 tree 1 0 aggregated) \
$(counter ft-tor11 tree 1 1 aggregated) $(counter ft-core2 tree 1 1 aggregated)"
check_eq "... and hold only those trees: tor11 both, p1a and core1 tree 0, p1b and core2 tree 1" \
	"1.0 1.1|1.0|1.0|1.1|1.1" \
	"$(jobs_trees ft-tor11)|$(jobs_trees ft-p1a)|$(jobs_trees ft-core1)|$(jobs_trees ft-p1b)|$(jobs_trees ft-core2)"
rat_netns destroy "$T/fattree.topo" --prefix ft-

rat_netns apply "$T/fattree.topo" "$T/fattree-two.jobs" --prefix ft- -o "$TEST_TMP/two" >/dev/null
(allreduce ft- "$TEST_TMP/two" 2 200003 w1 w3 w5 w7) >"$TEST_TMP/job2" 2>&1 &
job2=$!
allreduce ft- "$TEST_TMP/two" 3 200003 w2 w4 w6 w8 >"$TEST_TMP/job3" 2>&1
rc3=$?
wait $job2
rc2=$?
[ "$rc2 $rc3" = "0 0" ] || sed 's/^/# /' "$TEST_TMP/job2" "$TEST_TMP/job3"
check_eq "two jobs placed apart on the fat-tree allreduce at once, both exactly" "0 0" \
	"$rc2 $rc3"
check_eq "... job 2 through p1a and core1 only, job 3 through p1b and core2, no rack aggregator" \
	"2.0|2.0|3.0|3.0|" \
	"$(jobs_trees ft-p1a)|$(jobs_trees ft-core1)|$(jobs_trees ft-p1b)|$(jobs_trees ft-core2)|$(jobs_trees ft-tor11)"
rat_netns destroy "$T/fattree.topo" --prefix ft-

check "two racks over IPv6: the tool builds the namespaces and configures agg1, agg2 and root" \
	rat_netns apply "$T/racks6.topo" "$T/racks.jobs" --prefix r6- -o "$TEST_TMP/racks6"
check "... six workers allreduce 300,007 float32 exactly through it, over IPv6" \
	allreduce r6- "$TEST_TMP/racks6" 7 300007 w1 w2 w3 w4 w5 w6
# 357 float32 a 1500-byte IPv6 packet (20 bytes of header more than IPv4's)
chunks=$(( (300007 + 356) / 357 + 2 ))
check_eq "... agg1 summed its rack's three, root the two racks ($chunks chunks, the join's too)" \
	"$((3 * chunks)) $((2 * chunks))" \
	"$(counter r6-agg1 tree 7 0 aggregated) $(counter r6-root tree 7 0 aggregated)"
check_eq "... its trees IPv6: agg1's parent root's fd00:9:1::254, its children w1-w3, root's the aggregators" \
	"fd00:9:1::254 fd00:1::1 fd00:1::2 fd00:1::3|fd00:9:1::1 fd00:9:2::1" \
	"$(netagg_in r6-agg1 -j job show 7 | jq -r '.jobs[0].trees[0] | "\(.parent) \([.children[].addr] | join(" "))"')|$(netagg_in r6-root -j job show 7 | jq -r '.jobs[0].trees[0] | [.children[].addr] | join(" ")')"
rat_netns destroy "$T/racks6.topo" --prefix r6-
check_eq "destroy removes the IPv6 racks' namespaces" "0" "$(ip netns list | grep -c '^r6-')"

ktap_finish
