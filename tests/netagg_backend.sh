#!/bin/bash
# torch.distributed's "netagg" backend (tests/python/backend.py in each
# worker, init_process_group("netagg") under torchrun, 2 hosts x 2
# processes): sums of the job's dtype through netagg, exact, for each dtype
# (sync, async, AVG, 1,000,003 elements, a strided view, a list coalesced
# into one allreduce); what netagg does not do through Gloo, exact, warned
# and counted; DDP with no hook as with the hook, bitwise;
# ZeroRedundancyOptimizer as unsharded SGD; torchrun's restart in a
# session of its own; then the job taken off the node: wait() raises on
# every rank, DDP's backward raises, later allreduces fail at once.
#
#   w1 10.0.1.1 (ports 7178, 7179: ranks 0, 1) --+-- sw 10.0.N.254: root of
#   w2 10.0.2.1 (ports 7178, 7179: ranks 2, 3) --+   jobs 2-6, one tree
#                                                    each, a child a port;
#                                                    routes w1 <-> w2
#                                                    (Gloo's TCP, the store)
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; pkill -KILL -f tests/python/backend.py 2>/dev/null; cleanup_ns; module_unload' EXIT
require_torch
command -v torchrun >/dev/null || fail_setup "torchrun missing (python3-torch): run scripts/deps.sh"

module_load
routed_star 2
# Job 2 (f32) takes the full run, 3-5 one dtype each, 6 torchrun's restart.
for jd in 2:f32 3:f16 4:bf16 5:i32 6:f32; do
	netagg_in sw job add "${jd%:*}" dtype "${jd#*:}"
	netagg_in sw tree add job "${jd%:*}" tree 0 role root child 10.0.1.1:7178 \
		child 10.0.1.1:7179 child 10.0.2.1:7178 child 10.0.2.1:7179
done

ktap_plan 25

pids=()
# launch NAME JOB DTYPE RESTARTS ARGS...: backend.py ARGS under torchrun on
# w1 and w2, two processes each; each worker's JSON lines in a file of its
# own under $TEST_TMP/NAME.logs* (-r 1 -t 1: torchrun's default of 0 is
# refused by Debian's torch 1.13 under Python 3.11).
launch()
{
	local name=$1 job=$2 dtype=$3 restarts=$4 n
	shift 4
	for n in 0 1; do
		timeout 900 ip netns exec "w$((n + 1))" env GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1 \
			NETAGG_JOB="$job" NETAGG_DTYPE="$dtype" NETAGG_TREES="0=10.0.$((n + 1)).254" \
			NETAGG_NODE_TIMEOUT=3 torchrun --nnodes 2 --nproc_per_node 2 --node_rank $n \
			-r 1 -t 1 --max_restarts "$restarts" --log_dir "$TEST_TMP/$name.logs$n" \
			--master_addr 10.0.1.1 --master_port $((29500 + job)) \
			"$NETAGG_ROOT/tests/python/backend.py" "$@" \
			>"$TEST_TMP/$name.n$n" 2>"$TEST_TMP/$name.n$n.err" &
		pids+=($!)
	done
}
# finish NAME: wait for the launch (torchrun's two exit codes in exits),
# its workers' lines into NAME.json, what went wrong into the log.
finish()
{
	local p rcs=()
	for p in "${pids[@]}"; do
		wait "$p"
		rcs+=($?)
	done
	pids=() exits="${rcs[*]}"
	find "$TEST_TMP/$1".logs[01] -name stdout.log -exec cat {} + 2>/dev/null |
		grep '^{' >"$TEST_TMP/$1.json"
	jq -r 'select(.ok == false) | "# rank \(.rank) \(.check): \(.detail)"' \
		"$TEST_TMP/$1.json"
	[ "$exits" = "0 0" ] || tail -n 5 "$TEST_TMP/$1".n[01].err | sed 's/^/# /'
}
# field NAME CHECK KEY: KEY of each rank's line of CHECK, space separated.
field()
{
	local r
	for r in 0 1 2 3; do
		jq -r "select(.rank == $r and .check == \"$2\") | .$3" "$TEST_TMP/$1.json" 2>/dev/null |
			tail -n 1 | grep . || echo -
	done | paste -sd' '
}
all="true true true true"

# Each other dtype: its allreduces through netagg, exact; for each,
# what sw summed (1,000,003 elements a worker in one of them).
for jd in 3:float16 4:bfloat16 5:int32; do
	job=${jd%:*} dtype=${jd#*:}
	launch "$dtype" "$job" "$dtype" 0 --checks dtype
	finish "$dtype"
	summed=$(counter sw tree "$job" 0 aggregated)
	check_eq "$dtype: SUM (1,000,003 elements), AVG async, a strided view, a list: exact" \
		"$all $all $all $all 0 0" \
		"$(for c in sum 'async avg' 'strided view' coalesced; do field "$dtype" "$c" ok; done |
			paste -sd' ') $exits"
	check "... through sw's module ($summed contributions summed)" \
		test "${summed:-0}" -gt 1000
done
check_eq "int32: AVG refused on every rank, it would round" 4 \
	"$(jq -s '[.[] | select(.check == "async avg" and (.detail | startswith("AVG refused")))] |
		length' "$TEST_TMP/int32.json")"

# torchrun's restart: all four workers exit 3 after one allreduce; the
# run's second attempt joins a session of its own (rank 0's choice, in the
# store under the attempt's prefix).
launch restart 6 float32 1 --checks restart
finish restart
first=$(field restart 'attempt 0' session) second=$(field restart 'attempt 1' session)
check_eq "torchrun restarted the run: both attempts exact, torchrun exited 0" \
	"$all $all 0 0" "$(field restart 'attempt 0' ok) $(field restart 'attempt 1' ok) $exits"
check "... each attempt one session, the second another ($first; $second)" \
	test "$(echo "$first" | tr ' ' '\n' | sort -u | wc -l)" = 1 -a \
	"$(echo "$second" | tr ' ' '\n' | sort -u | wc -l)" = 1 -a "${first%% *}" != "${second%% *}" -a \
	"${first%% *}" != - -a "${second%% *}" != -

# The full run on job 2, float32, ending with the job taken off sw.
flag=$TEST_TMP/gone
launch full 2 float32 0 --gone "$flag"
end=$((SECONDS + $(scaled 600)))
while [ "$(cat "$TEST_TMP"/full.logs[01]/*/attempt_0/*/stdout.log 2>/dev/null |
	grep -c '"check": "ready"')" -lt 4 ] && [ "$SECONDS" -lt "$end" ] &&
	kill -0 "${pids[@]}" 2>/dev/null; do
	sleep 0.2
done
# What sw summed: the float allreduces above are over 1,000,003 elements a
# worker in one, hundreds of packets each: a backend that sent them to
# Gloo leaves this near 0.
aggregated=$(counter sw tree 2 0 aggregated)
netagg_in sw job del 2
touch "$flag"
finish full

jq -r 'select(.rank == 0 and (.check | startswith("gone") or . == "stats")) |
	"# rank 0, \(.check): \(.detail)"' "$TEST_TMP/full.json" 2>/dev/null | cut -c 1-400
check_eq "init_process_group(\"netagg\") under torchrun: the group is netagg's" "$all" \
	"$(field full init ok)"
check_eq "all_reduce, SUM of 1,000,003 elements of the job's dtype: exact, one allreduce" \
	"$all" "$(field full sum ok)"
check_eq "async_op, AVG: exact, the Work succeeded" "$all" "$(field full 'async avg' ok)"
check_eq "a strided view: exact, the elements beside it untouched" "$all" \
	"$(field full 'strided view' ok)"
check_eq "all_reduce_coalesced: one netagg allreduce, exact" "$all" \
	"$(field full coalesced ok)"
check "... through sw's module: it summed over 1,000 packets of them ($aggregated)" \
	test "${aggregated:-0}" -gt 1000
check_eq "an empty tensor, one element; an empty list refused, the group still works" \
	"$all" "$(field full 'empty and one element' ok)"
check_eq "float64, int32, MAX, bfloat16, a strided float64 view: through Gloo, exact, warned, counted" \
	"$all" "$(field full 'through gloo, warned and counted' ok)"
check_eq "broadcast, all_gather, barrier through Gloo" "$all" \
	"$(field full 'broadcast, all_gather, barrier' ok)"
check_eq "DDP with no hook: bitwise the hook's parameters, on every rank" "$all" \
	"$(field full 'ddp without a hook' ok)"
check_eq "ZeroRedundancyOptimizer: bitwise unsharded SGD's parameters" "$all" \
	"$(field full zero ok)"
check_eq "the job taken off the node: wait() raises on every rank" "$all" \
	"$(field full 'gone: wait() raises' ok)"
check_eq "... and every allreduce after it fails at once, out of step" "$all" \
	"$(field full 'gone: later allreduces fail at once' ok)"
check_eq "... DDP's backward raises it" "$all" "$(field full "gone: DDP's backward raises" ok)"
check_eq "... stats() say so" "$all" "$(field full 'gone: stats say so' ok)"
check_eq "torchrun exited 0 on both hosts" "0 0" "$exits"
ktap_finish
