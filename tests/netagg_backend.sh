#!/bin/bash
# torch.distributed's "netagg" backend (tests/python/backend.py in each
# worker, init_process_group("netagg") under torchrun, 2 hosts x 2
# processes), one run of four attempts: torchrun starts it again after
# each (--max_restarts 3), on a job of another dtype, in a session of its
# own. On each job (f16, bf16, i32, f32): its dtype's sums through netagg,
# exact (sync, async, AVG, 1,000,003 elements, a strided view, a list
# coalesced into one allreduce). On the f32 job: what netagg does not do
# through Gloo, exact, warned and counted; DDP with no hook as with the
# hook, bitwise; ZeroRedundancyOptimizer as unsharded SGD; then the job
# taken off the node: wait() raises on every rank, DDP's backward raises,
# later allreduces fail at once. (A worker's start costs most of a minute
# of an emulated CPU: the processes, not the checks, set this script's
# time.)
#
#   w1 10.0.1.1 (ports 7178, 7179: ranks 0, 1) --+-- sw 10.0.N.254: root of
#   w2 10.0.2.1 (ports 7178, 7179: ranks 2, 3) --+   jobs 2-5, one tree
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
# The attempts' jobs, in order.
attempts="3:float16 4:bfloat16 5:int32 2:float32"
for jd in 3:f16 4:bf16 5:i32 2:f32; do
	netagg_in sw job add "${jd%:*}" dtype "${jd#*:}"
	netagg_in sw tree add job "${jd%:*}" tree 0 role root child 10.0.1.1:7178 \
		child 10.0.1.1:7179 child 10.0.2.1:7178 child 10.0.2.1:7179
done

ktap_plan 22

# field CHECK KEY [DTYPE]: KEY of each rank's line of CHECK (on DTYPE's
# job, float32's by default), space separated.
field()
{
	local r
	for r in 0 1 2 3; do
		jq -r "select(.rank == $r and .dtype == \"${3:-float32}\" and .check == \"$1\") | .$2" \
			"$TEST_TMP/run.json" 2>/dev/null | tail -n 1 | grep . || echo -
	done | paste -sd' '
}
all="true true true true"

# Under torchrun on w1 and w2, two processes each, as users run it (-r 1
# -t 1: torchrun's default of 0 is refused by Debian's torch 1.13 under
# Python 3.11); attempt k on the k-th of $attempts (each exits 3 after its
# checks but the last, which ends with the job taken off sw).
flag=$TEST_TMP/gone
pids=() t0=$(date +%s)
for n in 0 1; do
	timeout 1500 ip netns exec "w$((n + 1))" env GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1 \
		NETAGG_TREES="0=10.0.$((n + 1)).254" NETAGG_NODE_TIMEOUT=3 \
		torchrun --nnodes 2 --nproc_per_node 2 --node_rank $n -r 1 -t 1 --max_restarts 3 \
		--log_dir "$TEST_TMP/logs$n" --master_addr 10.0.1.1 --master_port 29502 \
		"$NETAGG_ROOT/tests/python/backend.py" --attempts "${attempts// /,}" --gone "$flag" \
		>"$TEST_TMP/torchrun.$n" 2>"$TEST_TMP/torchrun.$n.err" &
	pids+=($!)
done
end=$((SECONDS + $(scaled 1500)))
while [ "$(cat "$TEST_TMP"/logs[01]/*/attempt_3/*/stdout.log 2>/dev/null |
	grep -c '"check": "ready"')" -lt 4 ] && [ "$SECONDS" -lt "$end" ] &&
	kill -0 "${pids[@]}" 2>/dev/null; do
	sleep 0.2
done
# What sw summed of each job: the float allreduces above are over
# 1,000,003 elements a worker in one, hundreds of packets each: a backend
# that sent them to Gloo leaves these near 0.
summed=()
for jd in $attempts; do
	summed+=("$(counter sw tree "${jd%:*}" 0 aggregated)")
done
netagg_in sw job del 2
touch "$flag"
exits=()
for p in "${pids[@]}"; do
	wait "$p"
	exits+=($?)
done
# Each worker's lines from its own file in the log dirs: torchrun's teed
# copy can cut a line in two.
find "$TEST_TMP"/logs[01] -name stdout.log -exec cat {} + 2>/dev/null | grep '^{' >"$TEST_TMP/run.json"
jq -r 'select(.ok == false) | "# rank \(.rank), \(.dtype) \(.check): \(.detail)"' "$TEST_TMP/run.json"
jq -r 'select(.rank == 0 and (.check | startswith("gone") or . == "stats")) |
	"# rank 0, \(.check): \(.detail)"' "$TEST_TMP/run.json" | cut -c 1-400
[ "${exits[*]}" = "0 0" ] || tail -n 5 "$TEST_TMP"/torchrun.[01].err | sed 's/^/# /'
# Where the time went: each attempt's workers up (the group made), done.
jq -rs --argjson t0 "$t0" 'group_by(.dtype) | sort_by(.[0].at)[] |
	"# \(.[0].dtype): the group made at +\([.[] | select(.check == "init") | .at] | max - $t0 | round) s, its checks done at +\([.[] | select(.check == "session") | .at] | max - $t0 | round) s"' \
	"$TEST_TMP/run.json"

i=0
for jd in $attempts; do
	dtype=${jd#*:}
	check_eq "$dtype: SUM (1,000,003 elements), AVG async, a strided view, a list: exact" \
		"$all $all $all $all" \
		"$(for c in sum 'async avg' 'strided view' coalesced; do field "$c" ok "$dtype"; done |
			paste -sd' ')"
	check "... through sw's module (${summed[i]} contributions summed)" \
		test "${summed[i]:-0}" -gt 1000
	i=$((i + 1))
done
check_eq "int32: AVG refused on every rank, it would round" 4 \
	"$(jq -s '[.[] | select(.dtype == "int32" and .check == "async avg" and
		(.detail | startswith("AVG refused")))] | length' "$TEST_TMP/run.json")"
sessions=$(for jd in $attempts; do field session session "${jd#*:}"; done | paste -sd' ')
check_eq "init_process_group(\"netagg\") under torchrun: the group is netagg's" "$all" \
	"$(field init ok)"
check_eq "one allreduce, one element; an empty tensor; an empty list refused" \
	"$all" "$(field 'empty and one element' ok)"
check_eq "float64, int32, MAX, bfloat16, a strided float64 view: through Gloo, exact, warned, counted" \
	"$all" "$(field 'through gloo, warned and counted' ok)"
check_eq "broadcast, all_gather, barrier through Gloo" "$all" \
	"$(field 'broadcast, all_gather, barrier' ok)"
check_eq "DDP with no hook: bitwise the hook's parameters, on every rank" "$all" \
	"$(field 'ddp without a hook' ok)"
check_eq "ZeroRedundancyOptimizer: bitwise unsharded SGD's parameters" "$all" \
	"$(field zero ok)"
check_eq "torchrun started the run again 3 times: every attempt's last allreduce exact" \
	"$all $all $all $all" \
	"$(for jd in $attempts; do field session ok "${jd#*:}"; done | paste -sd' ')"
# apart: each attempt's four ranks in one session, each attempt in another.
apart()
{
	local row firsts=()
	while read -r row; do
		[ "$(echo "$row" | tr ' ' '\n' | sort -u | wc -l)" = 1 ] && [ "${row%% *}" != - ] ||
			return 1
		firsts+=("${row%% *}")
	done < <(echo "$sessions" | xargs -n 4)
	[ "$(printf '%s\n' "${firsts[@]}" | sort -u | wc -l)" = 4 ]
}
check "... each attempt one session, each another ($sessions)" apart
check_eq "the job taken off the node: wait() raises on every rank" "$all" \
	"$(field 'gone: wait() raises' ok)"
check_eq "... and every allreduce after it fails at once, out of step" "$all" \
	"$(field 'gone: later allreduces fail at once' ok)"
check_eq "... DDP's backward raises it" "$all" "$(field "gone: DDP's backward raises" ok)"
check_eq "... stats() say so" "$all" "$(field 'gone: stats say so' ok)"
check_eq "torchrun exited 0 on both hosts" "0 0" "${exits[*]}"
ktap_finish
