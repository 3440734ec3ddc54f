#!/bin/bash
# The DDP hook in training loops as people run them (tests/python/loops.py
# in each worker, the gloo process group made torchrun's way, env://):
# runs started again with the same environment (after a run that ended,
# after one killed in a bucket no VID of which completed, after one killed
# in a bucket some of whose did), a rank late by an evaluation, means of
# op avg jobs and of quorums, DDP on subgroups, the hook's overlap and
# training through it, a job of another dtype, the node taken away
# mid-step. A worker's start costs most of a minute of an emulated CPU:
# each run does several steps. (torchrun with two workers a host, children
# by port, and the hook bitwise as the backend: netagg_backend.sh.)
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of every job below; routes the
#   w3 10.0.3.1 --+   workers to each other (gloo's TCP)
#   w4 10.0.4.1 --+
#
#   job 1  f32, the four workers          job 3  f32 op avg
#   job 2  f32, the runs killed and       job 4  f32, quorum 3
#          started again                  jobs 11, 12  f32, w1+w2, w3+w4
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; pkill -KILL -f tests/python/loops.py 2>/dev/null; cleanup_ns; module_unload' EXIT
require_torch
LOOPS=$NETAGG_ROOT/tests/python/loops.py
require_module sch_tbf

module_load
routed_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
for j in 1 2; do
	netagg_in sw job add $j dtype f32
	netagg_in sw tree add job $j tree 0 role root "${kids[@]}"
done
netagg_in sw job add 3 dtype f32 op avg
netagg_in sw tree add job 3 tree 0 role root "${kids[@]}"
netagg_in sw job add 4 dtype f32
netagg_in sw tree add job 4 tree 0 role root "${kids[@]}" quorum 3
netagg_in sw job add 11 dtype f32
netagg_in sw tree add job 11 tree 0 role root child 10.0.1.1 child 10.0.2.1
netagg_in sw job add 12 dtype f32
netagg_in sw tree add job 12 tree 0 role root child 10.0.3.1 child 10.0.4.1

# run NAME STEP...: loops.py in w1..w4 as ranks 0..3 of job 2, one process
# a namespace (RANK, WORLD_SIZE, MASTER_* as torchrun sets them), in the
# background; its JSON lines in $TEST_TMP/NAME.R.
PORT=29600
pids=()
run()
{
	local name=$1 r
	shift
	PORT=$((PORT + 1))
	for r in 0 1 2 3; do
		rm -f "$TEST_TMP/$name.$r"
		# A subshell that outlives its worker: not the shell's word on one killed.
		(timeout 600 ip netns exec "w$((r + 1))" env GLOO_SOCKET_IFNAME=v0 \
			OMP_NUM_THREADS=1 RANK=$r WORLD_SIZE=4 MASTER_ADDR=10.0.1.1 \
			MASTER_PORT=$PORT NETAGG_JOB=2 NETAGG_TREES="0=10.0.$((r + 1)).254" \
			NETAGG_QUORUM_4=3 "$PY" "$LOOPS" "$@" \
			>"$TEST_TMP/$name.$r" 2>"$TEST_TMP/$name.$r.err"; exit $?) 2>/dev/null &
		pids+=($!)
	done
}
wait_all() { wait "${pids[@]}"; pids=(); }
# field NAME STEP KEY: KEY of each rank's line of STEP, space separated.
field()
{
	local r
	for r in 0 1 2 3; do
		jq -c "select(.step == \"$2\") | .$3" "$TEST_TMP/$1.$r" 2>/dev/null | tail -n 1 |
			grep . || echo -
	done | paste -sd' '
}
all_ok() { [ "$(field "$1" "$2" ok)" = "true true true true" ]; }
# errs NAME: what went wrong: the steps' errors, the end of stderr.
errs()
{
	cat "$TEST_TMP/$1".[0-3] 2>/dev/null | jq -r 'select(.ok == false) | "rank \(.rank) \(.step): \(.error)"' |
		sed 's/^/# /'
	cat "$TEST_TMP/$1".*.err 2>/dev/null | grep -v '^\[W ' | tail -n 20 | sed 's/^/# /'
}
kill_run() { pkill -KILL -f "$LOOPS" 2>/dev/null; wait_all 2>/dev/null; }
tree_state() { netagg_in sw -j show | jq -r ".jobs[] | select(.jid == $1) | .trees[0] | \"\(.round_state) \(.expected_vid)\""; }
# reached NAME STEP: until every rank printed STEP's line (5 min, scaled);
# when it gives up, which ranks did not, and what went wrong.
reached()
{
	local end=$((SECONDS + $(scaled 300))) r
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(cat "$TEST_TMP/$1".[0-3] 2>/dev/null | grep -c "\"step\": \"$2\"")" -ge 4 ] &&
			return 0
		sleep 0.1
	done
	for r in 0 1 2 3; do
		grep -qs "\"step\": \"$2\"" "$TEST_TMP/$1.$r" ||
			echo "# run $1: rank $r did not reach step $2 in $(scaled 300) s"
	done
	errs "$1"
	return 1
}

ktap_plan 17

# A. A run of netagg-allreduce on job 2 that ends (round 0, the hook's).
for r in 0 1 2 3; do
	timeout 120 ip netns exec "w$((r + 1))" "$NETAGG_ALLREDUCE" -j --job 2 \
		--tree "0=10.0.$((r + 1)).254" --rank $r --workers 4 --round 0 --count 20000 \
		>"$TEST_TMP/a.$r" 2>&1 &
	pids+=($!)
done
wait_all

# B. The hook with the same round numbers, after that run ended; a rank
# late by 10 s; means of op avg and of a quorum of 3 (rank 3 late); DDP on
# subgroups; the hook's future back before the sum exists; training; then
# the run dies in a bucket rank 3 never sends: no VID of it completes.
run b first:seed=2 late:sleep=10 mean:job=3:expect=7.5 mean:job=4:expect=6:late=3:sleep=3 \
	subgroup overlap train:steps=3 hold:rank=3
reached b hold
sleep 2
state=$(tree_state 2)
kill_run
check_eq "run B, after a run on job 2 ended: the first bucket is B's mean, exact" \
	"true true true true" "$(field b first ok)"
all_ok b first || errs b
check_eq "... in a session of its own, not the ended run's" yes \
	"$([ "$(jq .session "$TEST_TMP/a.0")" != "$(jq -s '.[] | select(.step == "first") | .session' "$TEST_TMP/b.0")" ] && echo yes)"
check_eq "a rank 10 s late (an evaluation): no failure, both buckets exact" \
	"true true true true" "$(field b late ok)"
check_eq "... the others waited it out; stats counted both buckets" "yes 3 3 3 3" \
	"$(jq -r 'select(.step == "late") | if .waited >= 9 then "yes" else "no \(.waited)" end' "$TEST_TMP/b.1") $(field b late stats.buckets)"
check_eq "op avg job: the mean of 3, 6, 9, 12, divided once" "7.5 7.5 7.5 7.5" \
	"$(field b mean3 mean)"
check_eq "quorum 3, rank 3 late: every rank gets the mean of the three in" \
	"6 6 6 6" "$(field b mean4 mean)"
check_eq "DDP(process_group=subgroup): each subgroup's mean (1.5, 3.5), training exact" \
	"1.5 1.5 3.5 3.5 true true true true" "$(field b subgroup mean) $(field b subgroup ok)"
all_ok b subgroup || errs b
check_eq "the hook returned its future before the others had sent, then the mean" \
	"true true true true true" "$(field b overlap ok) $(jq -s -r '.[] | select(.step == "overlap") | .not_done_at_return' "$TEST_TMP/b.0")"
check_eq "training through the hook: parameters identical every step, close to gloo's, several buckets a step" \
	"true true true true" "$(field b train ok)"
all_ok b train || errs b
check_eq "run B hangs in a bucket none of whose VIDs completed; it is killed" "running 0" "$state"

# C. Started again with the same environment: exact; a worker of the wrong
# dtype; then it dies in the middle of a 16 MiB bucket (w4's link slow:
# some VIDs complete, others not).
tc -n w4 qdisc add dev v0 root tbf rate 40mbit burst 64kb latency 400ms
run c first:seed=3 dtype:job=1:dtype=float16 hold:count=4194304
reached c hold
caught=no
for _ in $(seq 200); do
	st=($(tree_state 2))
	[ "${st[0]}" = running ] && [ "${st[1]}" -gt 0 ] && { caught=yes; break; }
	sleep 0.1
done
kill_run
tc -n w4 qdisc del dev v0 root
check_eq "run C, after B died in a bucket no VID of which completed: exact" \
	"true true true true" "$(field c first ok)"
check_eq "a float16 state on an f32 job: DtypeMismatch, saying both dtypes" \
	"true true true true yes" \
	"$(field c dtype ok) $(jq -r 'select(.step == "dtype") | .error' "$TEST_TMP/c.0" | grep -q "job's dtype on the nodes is float32, the worker's float16" && echo yes)"
check_eq "run C is killed mid-bucket, some VIDs complete" yes "$caught"

# D. Started again: exact; then the switch's namespace deleted while every
# rank waits for rank 3.
run d first:seed=4 gone:sleep=4
reached d first
sleep 1
ip netns del sw
NS_LIST=("${NS_LIST[@]/sw}")
wait_all
check_eq "run D, after C died with some VIDs complete: exact" "true true true true" \
	"$(field d first ok)"
check_eq "the node deleted mid-step: every rank fails, NodeUnreachable behind DDP's error" \
	'"NodeUnreachable" "NodeUnreachable" "NodeUnreachable" "NodeUnreachable"' \
	"$(field d gone error_type)"
check "... each within 15 s (node_timeout 10 s)" \
	bash -c "cat '$TEST_TMP'/d.[0-3] | jq -e -s '[.[] | select(.step == \"gone\")] | length == 4 and all(.seconds < 15)' >/dev/null"
check_eq "... netagg.torch.cause() leads back to it, and stats() saw it" \
	"true true true true 1 1 1 1" "$(field d gone ok) $(field d gone stats.failed)"

ktap_finish
