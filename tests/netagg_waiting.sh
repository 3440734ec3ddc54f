#!/bin/bash
# Waiting for the slowest worker, failing fast when a node is gone. The
# workers run with a timeout of 10 minutes, as a training job would (the
# process group's): a worker 12 s late costs the others time, not a
# failure (the node answers their probes: it holds what they sent); a node
# that stops answering (its job deleted) fails every worker within
# node_timeout (10 s); a worker of another dtype than the job's fails at
# once, saying so. Waiting does not lengthen the workers' retransmission
# timeout: it comes from round trips, not from a join's wait.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (f32, tree 0)
#   w3 10.0.3.1 --+
#   w4 10.0.4.1 --+
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; cleanup_ns; module_unload' EXIT

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7 dtype f32
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"

# worker NAME RANK DELAY ARGS...: netagg-allreduce of rank RANK in
# w(RANK+1) after DELAY seconds, 10 min timeout; JSON in $TEST_TMP/NAME.R,
# errors in NAME.R.err, exit code and seconds taken in NAME.R.rc.
pids=()
worker()
{
	local name=$1 r=$2 delay=$3
	shift 3
	(
		sleep "$delay"
		t0=$EPOCHREALTIME
		timeout 900 ip netns exec "w$((r + 1))" "$NETAGG_ALLREDUCE" -j --job 7 \
			--tree "0=10.0.$((r + 1)).254" --rank "$r" --workers 4 --count 100000 \
			--timeout-ms 600000 "$@" >"$TEST_TMP/$name.$r" 2>"$TEST_TMP/$name.$r.err"
		echo "$? $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" \
			>"$TEST_TMP/$name.$r.rc"
	) &
	pids+=($!)
}
wait_all() { wait "${pids[@]}"; pids=(); }
rcs() { local r; for r in "$@"; do cut -d' ' -f1 "$TEST_TMP/$name.$r.rc"; done | paste -sd' '; }
secs() { cut -d' ' -f2 "$TEST_TMP/$1.$2.rc"; }

ktap_plan 11

# 1. w4 starts 12 s after the others: longer than node_timeout, but the
# node answers the others' probes all along.
name=late
for r in 0 1 2; do worker late "$r" 0; done
worker late 3 12
wait_all
check_eq "a worker 12 s late: every worker verified, none failed" "0 0 0 0" "$(rcs 0 1 2 3)"
[ "$(rcs 0 1 2 3)" = "0 0 0 0" ] || cat "$TEST_TMP"/late.*.err | sed 's/^/# /'
check_eq "... the others waited it out, probing (the node answered)" "yes some" \
	"$(awk '{ print ($2 >= 11) ? "yes" : "no " $2 }' "$TEST_TMP/late.0.rc") $(some "$(counter sw tree 7 0 probed)")"

# 2. w4 3 s late again, one chunk each: the others' probes while they wait
# for it are answered at once, the round trip their retransmission timeout
# starts from (else the initial 200 ms); the join's results, which waited
# 3 s, are no round trips (else every timeout after it 1 s, the largest).
name=rtt
for r in 0 1 2; do worker rtt "$r" 0 --count 256; done
worker rtt 3 3 --count 256
wait_all
check_eq "a worker 3 s late, one chunk each: every worker verified" "0 0 0 0" "$(rcs 0 1 2 3)"
rto() { local f=$1 r; shift; for r in "$@"; do jq -r ".$f" "$TEST_TMP/rtt.$r"; done | paste -sd' '; }
join_rto=$(rto join_rto_ms 0 1 2)
check_eq "... the waiting workers' join left a timeout from their probes' round trips, under the initial 200 ms (ms: $join_rto)" \
	0 "$(over 200 <<<"$join_rto")"
last_rto=$(rto rto_ms 0 1 2 3)
check_eq "... and every worker's allreduce one from its round trip, not from the join's 3 s (ms: $last_rto)" \
	0 "$(over 500 <<<"$last_rto")"

# 3. w4 never comes; the node loses the job while the others wait: they
# hear nothing more, and fail within node_timeout, not the 10 min.
name=silent
for r in 0 1 2; do worker silent "$r" 0; done
sleep 3
netagg_in sw job del 7
wait_all
check_eq "the node silent (its job deleted): every waiting worker fails" "1 1 1" "$(rcs 0 1 2)"
check "... saying the node of tree 0 did not answer" \
	bash -c "cat '$TEST_TMP'/silent.[012].err | grep -c 'the node of tree 0 did not answer' | grep -qx 3"
check "... within node_timeout (10 s) of the job going, not 10 min (s from their start, the job gone 3 s in: $(secs silent 0) $(secs silent 1) $(secs silent 2))" \
	bash -c "awk '{ if (\$2 > 20) exit 1 }' '$TEST_TMP'/silent.[012].rc"

# 4. A worker of dtype f16 on the f32 job: it learns the job's dtype from
# the node and fails at once.
netagg_in sw job add 7 dtype f32
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
name=dtype
worker dtype 0 0 --dtype f16
wait_all
check_eq "a worker of another dtype than the job's fails" 1 "$(rcs 0)"
check "... saying the job's dtype and its own" \
	grep -q "the job's dtype is f32, this worker's f16" "$TEST_TMP/dtype.0.err"
check_eq "... at once (within 5 s), the node counting drop_dtype" "yes some" \
	"$(awk '{ print ($2 <= 5) ? "yes" : "no " $2 }' "$TEST_TMP/dtype.0.rc") $(some "$(counter sw job 7 drop_dtype)")"
ktap_finish
