#!/bin/bash
# The training example (make train runs it in the VM, as root): four workers
# train the same small MLP on the digits data set, data-parallel with
# PyTorch's DistributedDataParallel, started by torchrun (env://), six
# times:
#
#   gloo             gradients averaged by gloo (software allreduce); one
#                    worker a host, w1..w4
#   netagg           by the netagg module on the switch, the hook
#                    allreducing beside the backward pass; w1..w4
#   netagg-again     the same again, with the same seed: its parameters
#                    must be netagg's, bit for bit, after every step
#   netagg-blocking  the same, the hook allreducing inside backward
#   netagg-backend   no hook: DDP over init_process_group("netagg"); its
#                    parameters must be netagg's, bit for bit, too
#   netagg-2x2       as netagg, two workers a host (torchrun
#                    --nproc_per_node 2 on w1 and w2): each a child of sw by
#                    its UDP port, 7178 + LOCAL_RANK (job 2)
#
# then python/examples/train_compare.py compares the runs: the same steps,
# final accuracies within a tolerance, netagg-again and netagg-backend
# bitwise netagg, time a step.
#
#   w1..w4 (10.0.I.1 on v0) --- sw (10.0.I.254 on sI; forwards; netagg root)
#
# Every worker reaches the others (gloo) through sw: 10.0.0.0/16 via its
# 10.0.I.254, which is also where it sends its gradients (tree 0 of job 1,
# or of job 2).
#
# Environment: TRAIN_OUT the output directory (default tests/out/train),
# EPOCHS (default 5), TRAIN_TIMEOUT seconds a run of four workers may take
# (default 600), NETAGG_TIMEOUT the workers' allreduce timeout (default 30:
# four workers share two emulated CPUs).
set -uo pipefail
source "$(dirname "$0")/../tests/lib.sh"

PY=/usr/bin/python3
OUT=${TRAIN_OUT:-$NETAGG_ROOT/tests/out/train}
EPOCHS=${EPOCHS:-5}
RUN_TIMEOUT=${TRAIN_TIMEOUT:-600}
ALLREDUCE_TIMEOUT=${NETAGG_TIMEOUT:-30}
EXAMPLES=$NETAGG_ROOT/python/examples
# NAME MODE HOSTS PROCS JOB: the runs.
RUNS=("gloo gloo 4 1 0" "netagg netagg 4 1 1" "netagg-again netagg 4 1 1"
      "netagg-blocking netagg-blocking 4 1 1" "netagg-backend netagg-backend 4 1 1"
      "netagg-2x2 netagg 2 2 2")
BASE_PORT=29500
GRACE=$((${ALLREDUCE_TIMEOUT%%.*} + 15))	# see run_mode
pids=()

die()
{
	echo "train: $*" >&2
	exit 1
}

# stop_workers: end the workers still running (their timeout processes pass
# the signal on), then reap them.
stop_workers()
{
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	pids=()
}

cleanup()
{
	stop_workers
	cleanup_ns
	module_unload
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# configure_jobs: sw the root of tree 0 of job 1, over the four workers'
# addresses, and of job 2, over two workers on each of w1 and w2, each a
# child by its port. Every run joins a session of its own: nothing of a run
# before it can reach it.
configure_jobs()
{
	netagg_in sw job add 1 dtype f32 op sum &&
		netagg_in sw tree add job 1 tree 0 role root \
			child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1 &&
		netagg_in sw job add 2 dtype f32 op sum &&
		netagg_in sw tree add job 2 tree 0 role root child 10.0.1.1:7178 \
			child 10.0.1.1:7179 child 10.0.2.1:7178 child 10.0.2.1:7179
}

# run_mode NAME MODE HOSTS PROCS JOB PORT: one run, torchrun on w1..wHOSTS,
# PROCS workers each (4 in all); fails showing the log of every host whose
# workers failed. (-r 1 -t 1: each worker's output teed into the log,
# "[defaultL]:" before its lines; torchrun's default of 0 is refused by
# Debian's torch 1.13 under Python 3.11, whose flag enums list only single
# bits.)
run_mode()
{
	local name=$1 mode=$2 hosts=$3 procs=$4 job=$5 port=$6 i rc rcs
	echo
	echo "== $name: $((hosts * procs)) workers ($procs a host), $EPOCHS epochs =="
	pids=()
	for i in $(seq "$hosts"); do
		timeout -k 10 "$RUN_TIMEOUT" ip netns exec "w$i" env \
			PYTHONPATH="$NETAGG_ROOT/python" GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1 \
			NETAGG_JOB="$job" NETAGG_TREES="0=10.0.$i.254" \
			NETAGG_TIMEOUT="$ALLREDUCE_TIMEOUT" \
			torchrun --nnodes "$hosts" --nproc_per_node "$procs" --node_rank $((i - 1)) \
			-r 1 -t 1 --log_dir "$OUT/torchrun/$name.w$i" \
			--master_addr 10.0.1.1 --master_port "$port" \
			"$EXAMPLES/train_digits.py" --mode "$mode" --name "$name" --epochs "$EPOCHS" \
			--out "$OUT" --data-cache "$OUT/digits-split.npz" \
			>"$OUT/$name.w$i.log" 2>&1 &
		pids+=($!)
	done
	# Each host's torchrun is bounded by its timeout. Once one has failed,
	# the others have GRACE seconds to fail by themselves (a peer's gloo
	# connection closes, an allreduce times out) before they are stopped:
	# one that waits for the failed one in the process group's rendezvous
	# would otherwise wait for the group's whole timeout.
	rcs=()
	local left=$hosts t failed_at='' first='' n=$((hosts - 1))
	for ((t = 0; left > 0 && t < RUN_TIMEOUT + 30; t++)); do
		for i in $(seq 0 $n); do
			[ -z "${rcs[$i]:-}" ] || continue
			kill -0 "${pids[$i]}" 2>/dev/null && continue
			wait "${pids[$i]}"
			rcs[i]=$?
			left=$((left - 1))
			[ "${rcs[$i]}" -eq 0 ] || [ -n "$failed_at" ] || {
				failed_at=$SECONDS
				first=$((i + 1))
			}
		done
		[ $left -gt 0 ] || break
		[ -z "$failed_at" ] || [ $SECONDS -lt $((failed_at + GRACE)) ] || break
		sleep 1
	done
	for i in $(seq 0 $n); do
		[ -z "${rcs[$i]:-}" ] || continue
		kill "${pids[$i]}" 2>/dev/null
		wait "${pids[$i]}" 2>/dev/null
		rcs[i]=stopped
	done
	pids=()
	local culprit=${first:-another host}
	[ -z "$first" ] || culprit="w$first"
	# Rank 0's per-epoch lines (every step's are in its log and the JSON).
	[ "${rcs[0]}" != 0 ] || grep -v ' step [0-9]*:' "$OUT/$name.w1.log"
	for i in $(seq "$hosts"); do
		rc=${rcs[$((i - 1))]}
		[ "$rc" = 0 ] && continue
		if [ "$rc" = stopped ]; then
			echo "train: $name: the workers of w$i stopped: still running ${GRACE} s after $culprit failed" >&2
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "train: $name: the workers of w$i did not finish within ${RUN_TIMEOUT} s" >&2
		else
			echo "train: $name: torchrun on w$i exited with status $rc" >&2
		fi
		# The log of the first to fail in full, the others' last line.
		if [ "$i" = "${first:-$i}" ]; then
			echo "  its log ($OUT/$name.w$i.log), last 40 lines:" >&2
			tail -n 40 "$OUT/$name.w$i.log" | sed 's/^/    /' >&2
			first=$i
		else
			tail -n 1 "$OUT/$name.w$i.log" | sed 's/^/    /' >&2
		fi
	done
	for i in $(seq 0 $n); do
		[ "${rcs[$i]}" = 0 ] || return 1
	done
}

[ "$(id -u)" -eq 0 ] || die "run as root (make train runs it in the VM)"
if [ ! -f "$NETAGG_KO" ] || [ ! -x "$NETAGG" ] || [ ! -e "$NETAGG_ROOT/lib/libnetagg.so.4" ]; then
	die "not built: run make"
fi
"$PY" -c 'import torch, sklearn, numpy, matplotlib' 2>/dev/null ||
	die "$PY lacks torch, scikit-learn, numpy or matplotlib"
command -v torchrun >/dev/null || die "no torchrun (python3-torch): run scripts/deps.sh"
[[ $EPOCHS =~ ^[1-9][0-9]*$ ]] || die "EPOCHS=$EPOCHS is not a positive number"

mkdir -p "$OUT" || die "cannot make $OUT"
rm -f "$OUT"/*.jsonl "$OUT"/*.log "$OUT/summary.json" "$OUT/train-loss.png" \
	"$OUT/digits-split.npz"

module_load || die "cannot load $NETAGG_KO"
for ns in sw w1 w2 w3 w4; do ip netns del "$ns" 2>/dev/null; done
topo_star 4 || die "cannot build the star of namespaces"
ip netns exec sw sysctl -qw net.ipv4.ip_forward=1 || die "cannot turn forwarding on in sw"
for i in 1 2 3 4; do
	ip -n "w$i" route add 10.0.0.0/16 via "10.0.$i.254" || die "cannot route w$i"
done

configure_jobs || die "cannot configure jobs 1 and 2 on sw"
for k in "${!RUNS[@]}"; do
	read -r name mode hosts procs job <<<"${RUNS[$k]}"
	run_mode "$name" "$mode" "$hosts" "$procs" "$job" $((BASE_PORT + k)) ||
		die "the $name run failed (logs in $OUT)"
	if [ "$mode" != gloo ]; then
		echo "sw counters, job $job:"
		netagg_in sw stats job "$job" | sed 's/^/    /'
	fi
done

echo
echo "== gloo against netagg =="
# matplotlib's cache on the tmpfs: the guest's home is read-only.
MPLCONFIGDIR=$TEST_TMP/matplotlib "$PY" "$EXAMPLES/train_compare.py" --out "$OUT" ||
	die "the comparison failed (see above)"
echo
echo "(Times are inside a QEMU VM without hardware acceleration: every"
echo " instruction is emulated, so absolute speed says little about real hardware.)"
