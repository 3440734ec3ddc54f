#!/bin/bash
# torch.distributed's "netagg" backend (tests/python/backend.py in each
# worker, init_process_group("netagg") torchrun's way, env://): sums of
# the job's dtype through netagg, exact (sync, async, AVG, a strided view,
# a list coalesced into one allreduce); what netagg does not do through
# Gloo, exact, warned and counted; DDP with no hook as with the hook,
# bitwise; then the job taken off the node: wait() raises on every rank,
# DDP's backward raises, later allreduces fail at once.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 2 (f32, one tree); routes
#   w3 10.0.3.1 --+   the workers to each other (Gloo's TCP, the store)
#   w4 10.0.4.1 --+
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; pkill -KILL -f tests/python/backend.py 2>/dev/null; cleanup_ns; module_unload' EXIT
require_torch

module_load
routed_star 4
netagg_in sw job add 2 dtype f32
netagg_in sw tree add job 2 tree 0 role root child 10.0.1.1 child 10.0.2.1 \
	child 10.0.3.1 child 10.0.4.1

ktap_plan 15

flag=$TEST_TMP/gone
pids=()
for r in 0 1 2 3; do
	timeout 900 ip netns exec "w$((r + 1))" env GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1 \
		RANK=$r WORLD_SIZE=4 MASTER_ADDR=10.0.1.1 MASTER_PORT=29500 NETAGG_JOB=2 \
		NETAGG_TREES="0=10.0.$((r + 1)).254" NETAGG_NODE_TIMEOUT=3 \
		"$PY" "$NETAGG_ROOT/tests/python/backend.py" --gone "$flag" \
		>"$TEST_TMP/b.$r" 2>"$TEST_TMP/b.$r.err" &
	pids+=($!)
done
# field CHECK KEY: KEY of each rank's line of CHECK, space separated.
field()
{
	local r
	for r in 0 1 2 3; do
		jq -r "select(.check == \"$1\") | .$2" "$TEST_TMP/b.$r" 2>/dev/null | tail -n 1 |
			grep . || echo -
	done | paste -sd' '
}
end=$((SECONDS + $(scaled 600)))
while [ "$(cat "$TEST_TMP"/b.[0-3] 2>/dev/null | grep -c '"check": "ready"')" -lt 4 ] &&
	[ "$SECONDS" -lt "$end" ] && kill -0 "${pids[@]}" 2>/dev/null; do
	sleep 0.2
done
# What sw summed: the float allreduces above are over 125,000 elements a
# worker (100,000 in one), hundreds of packets each: a backend that sent
# them to Gloo leaves this near 0.
aggregated=$(counter sw tree 2 0 aggregated)
netagg_in sw job del 2
touch "$flag"
rcs=()
for p in "${pids[@]}"; do
	wait "$p"
	rcs+=($?)
done
for r in 0 1 2 3; do	# what went wrong, for the log
	jq -r 'select(.ok == false) | "rank \(.rank) \(.check): \(.detail)"' "$TEST_TMP/b.$r" 2>/dev/null |
		sed 's/^/# /'
	[ "${rcs[r]}" = 0 ] || tail -n 5 "$TEST_TMP/b.$r.err" | sed "s/^/# rank $r: /"
done

jq -r 'select(.check | startswith("gone") or . == "stats") | "# rank 0, \(.check): \(.detail)"' \
	"$TEST_TMP/b.0" 2>/dev/null | cut -c 1-400
all="true true true true"
check_eq "init_process_group(\"netagg\"): the group is netagg's" "$all" "$(field init ok)"
check_eq "all_reduce, SUM of the job's dtype: exact" "$all" "$(field sum ok)"
check_eq "async_op, AVG: exact, the Work succeeded" "$all" "$(field 'async avg' ok)"
check_eq "a strided view: exact, the elements beside it untouched" "$all" \
	"$(field 'strided view' ok)"
check_eq "all_reduce_coalesced: one netagg allreduce, exact" "$all" "$(field coalesced ok)"
check "... through sw's module: it summed over 1,000 packets of them ($aggregated)" \
	test "${aggregated:-0}" -gt 1000
check_eq "an empty tensor, one element; an empty list refused, the group still works" \
	"$all" "$(field 'empty and one element' ok)"
check_eq "float64, MAX, bfloat16, a strided float64 view: through Gloo, exact, warned, counted" \
	"$all" "$(field 'through gloo, warned and counted' ok)"
check_eq "broadcast, all_gather, barrier through Gloo" "$all" \
	"$(field 'broadcast, all_gather, barrier' ok)"
check_eq "DDP with no hook: bitwise the hook's parameters, on every rank" "$all" \
	"$(field 'ddp without a hook' ok)"
check_eq "the job taken off the node: wait() raises on every rank" "$all" \
	"$(field 'gone: wait() raises' ok)"
check_eq "... and every allreduce after it fails at once, out of step" "$all" \
	"$(field 'gone: later allreduces fail at once' ok)"
check_eq "... DDP's backward raises it" "$all" "$(field "gone: DDP's backward raises" ok)"
check_eq "... stats() say so" "$all" "$(field 'gone: stats say so' ok)"
check_eq "every worker exited 0" "0 0 0 0" "${rcs[*]}"
ktap_finish
