#!/bin/bash
# The Python package (python/netagg) in real traffic: allreduce of a numpy
# array and a bytearray through the switch, exact and in place (torch
# tensors of every dtype: netagg_backend.sh's sums, through this package);
# a wrong job and an unreachable tree raise AllreduceTimeout once the
# configured timeout has passed; a tree without some of the workers fails
# their join (JoinError), and, not joining, a result that sums fewer
# workers than the worker expects raises PartialResultError. A float16
# buffer (numpy) through an f16 job, exact; the hook with a float16 worker
# (compression, as PyTorch's fp16_compress_hook) keeps the parameters
# identical and finite.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of jobs 1 (f32), 2 (i32),
#   w3 10.0.3.1 --+   4 (f32, two children only), 5 (f16) and 7 (f16,
#   w4 10.0.4.1 --+   for DDP);
#                     routes the workers to each other (gloo's TCP)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
require_torch

module_load
routed_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 1 dtype f32
netagg_in sw tree add job 1 tree 0 role root "${kids[@]}"
netagg_in sw job add 2 dtype i32
netagg_in sw tree add job 2 tree 0 role root "${kids[@]}"
netagg_in sw job add 4 dtype f32
netagg_in sw tree add job 4 tree 0 role root child 10.0.1.1 child 10.0.2.1
netagg_in sw job add 5 dtype f16
netagg_in sw tree add job 5 tree 0 role root "${kids[@]}"
netagg_in sw job add 7 dtype f16
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"

# on_workers TAG N CMD...: "CMD... I" for I in 1..N at once, each one's
# output in $TEST_TMP/TAG.I, all of it in $TEST_TMP/TAG.json. Fails,
# showing their errors, unless every one exited 0.
on_workers()
{
	local tag=$1 n=$2 i pids=() rc=0
	shift 2
	rm -f "$TEST_TMP/$tag".*	# an earlier call's workers are not this one's
	for i in $(seq "$n"); do
		"$@" "$i" >"$TEST_TMP/$tag.$i" 2>"$TEST_TMP/$tag.$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	cat "$TEST_TMP/$tag".[1-9] >"$TEST_TMP/$tag.json" 2>/dev/null
	[ $rc -eq 0 ] || cat "$TEST_TMP/$tag.json" "$TEST_TMP/$tag".*.err
	return $rc
}

# py_worker JOB EXPECT ROUND ARGS... I: tests/python/allreduce.py in wI on
# tree 0 of JOB, told the job has EXPECT workers. Its limit is scaled: on
# the debug kernel, with a second VM on the host, the torch workers were
# cut off at 120 s without a word, where numpy's finished.
py_worker()
{
	local job=$1 expect=$2 round=$3 i=${*: -1}
	NETAGG_JOB=$job NETAGG_TREES="0=10.0.$i.254" NETAGG_WORKERS=$expect \
	NETAGG_ROUND=$round exec timeout "$(scaled 120)" ip netns exec "w$i" "$PY" \
		"$NETAGG_ROOT/tests/python/allreduce.py" --rank $((i - 1)) \
		--timeout "$(scaled 5)" "${@:4:$#-4}"
}

# workers N JOB ARGS...: N such workers, each told the job has N (EXPECT if
# set), fresh rounds; their JSON lines in $TEST_TMP/py.json.
workers()
{
	local n=$1 job=$2
	shift 2
	on_workers py "$n" py_worker "$job" "${EXPECT:-$n}" "$(next_round 4)" "$@"
}
field() { jq -s -r "[.[] | .$1] | unique | join(\",\")" "$TEST_TMP/py.json"; }

ktap_plan 11

# Each result is read from the caller's buffer: exact there is in place.
check "numpy float32, 100003 elements, 4 workers, 2 rounds: exact, in place" \
	workers 4 1 --kind numpy
check "bytearray taken as float32: exact, in place" workers 4 1 --kind bytearray
check "numpy int32 through an i32 job: exact" workers 4 2 --kind numpy --dtype int32
check "numpy float16 through an f16 job: exact" workers 4 5 --kind numpy --dtype float16

# One worker, job 99 that no node knows: nothing comes back.
workers 1 99 --timeout 1 --reps 1 >/dev/null
check_eq "a job no node knows: AllreduceTimeout (ETIMEDOUT)" "false 110" \
	"$(field ok) $(field errno)"
check "... raised after the configured 1 s and within 10 s" \
	awk -v s="$(field seconds)" 'BEGIN { exit !(s >= 1 && s < 10) }'
# A tree node at an address nobody has on w1's link.
NETAGG_JOB=1 NETAGG_TREES=0=10.0.1.77 NETAGG_WORKERS=1 timeout "$(scaled 60)" ip netns exec w1 "$PY" \
	"$NETAGG_ROOT/tests/python/allreduce.py" --rank 0 --timeout 1 --reps 1 >"$TEST_TMP/py.json"
check_eq "an unreachable tree: AllreduceTimeout" "AllreduceTimeout" \
	"$(jq -r '.error' "$TEST_TMP/py.json" | cut -d: -f1)"

# Job 4's tree has two children, the workers expect four: the join finds
# ranks 2 and 3 missing; without joining, results of 2 are refused.
EXPECT=4 workers 2 4 --reps 1 --elements 1000 >/dev/null
check_eq "a tree of 2 of the 4 workers: JoinError (ENOTUNIQ), naming the ranks missing" \
	"JoinError 76 yes" \
	"$(jq -s -r '[.[].error | split(":")[0]] | unique | join(",")' "$TEST_TMP/py.json") $(field errno) $(jq -s -r 'if all(.error | test("2 rank\\(s\\) not counted once, rank 2 the lowest")) then "yes" else "no" end' "$TEST_TMP/py.json")"
EXPECT=4 workers 2 4 --reps 1 --elements 1000 --no-join >/dev/null
check_eq "... without joining: results of 2 where 4 are expected, PartialResultError (EREMOTEIO)" \
	"PartialResultError 121" \
	"$(jq -s -r '[.[].error | split(":")[0]] | unique | join(",")' "$TEST_TMP/py.json") $(field errno)"

# ddp_worker JOB PORT DTYPE I: tests/python/ddp.py in wI on JOB with a
# worker of DTYPE, gloo's rendezvous at w1:PORT.
ddp_worker()
{
	GLOO_SOCKET_IFNAME=v0 NETAGG_JOB=$1 NETAGG_TREES="0=10.0.$4.254" \
	NETAGG_ROUND=$DDP_ROUND exec timeout 600 ip netns exec "w$4" "$PY" \
		"$NETAGG_ROOT/tests/python/ddp.py" --rank $(($4 - 1)) --world 4 \
		--master "10.0.1.1:$2" --steps 5 --dtype "$3"
}
# The hook's float32 path, its overlap and DDP training through it are
# netagg_training.sh's (with restarts, late ranks, subgroups, torchrun).

# The hook compressing to float16 (job 7). Its parameters are not checked
# against gloo's fp16_compress_hook: gloo rounds the float16 sum after each
# addition, the nodes once (tests/python/ddp.py says more).
ddp_field() { jq -s -r "[.[] | .$1] | map(tostring) | unique | join(\",\")" "$TEST_TMP/ddp.json"; }
DDP_ROUND=$(next_round 100)
ddp16() { on_workers ddp 4 ddp_worker 7 29501 float16; }
check "DDP with a float16 worker (compression), 4 workers, 5 steps: every check held" ddp16
check_eq "... parameters identical on every worker and finite after every step" \
	"true true" "$(ddp_field identical) $(ddp_field finite)"

ktap_finish
