#!/bin/bash
# The training example (make train runs it in the VM, as root): four workers
# train the same small MLP on the digits data set, data-parallel with
# PyTorch's DistributedDataParallel, three times:
#
#   gloo             gradients averaged by gloo (software allreduce)
#   netagg           by the netagg module on the switch, the hook
#                    allreducing beside the backward pass
#   netagg-blocking  the same, the hook allreducing inside backward
#
# then python/examples/train_compare.py compares the runs: the same steps,
# final accuracies within a tolerance, time a step.
#
#   w1..w4 (10.0.I.1 on v0) --- sw (10.0.I.254 on sI; forwards; netagg root)
#
# Every worker reaches the others (gloo) through sw: 10.0.0.0/16 via its
# 10.0.I.254, which is also where it sends its gradients (tree 0 of job 1).
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
MODES=(gloo netagg netagg-blocking)
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

# configure_job: job 1 on sw afresh, sw the root of its tree 0 over the four
# workers. Fresh for each netagg run, so its rounds start from 0 again.
configure_job()
{
	netagg_in sw job del 1 2>/dev/null
	netagg_in sw job add 1 dtype f32 op sum &&
		netagg_in sw tree add job 1 tree 0 role root \
			child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
}

# run_mode MODE PORT: the four workers of one run, in their namespaces;
# fails showing the log of every worker that failed.
run_mode()
{
	local mode=$1 port=$2 i rc rcs
	echo
	echo "== $mode: 4 workers, $EPOCHS epochs =="
	pids=()
	for i in 1 2 3 4; do
		timeout -k 10 "$RUN_TIMEOUT" ip netns exec "w$i" env \
			PYTHONPATH="$NETAGG_ROOT/python" GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1 \
			NETAGG_JOB=1 NETAGG_TREES="0=10.0.$i.254" NETAGG_SRC="10.0.$i.1" \
			NETAGG_TIMEOUT="$ALLREDUCE_TIMEOUT" \
			"$PY" "$EXAMPLES/train_digits.py" --rank $((i - 1)) --world 4 \
			--master "10.0.1.1:$port" --mode "$mode" --epochs "$EPOCHS" \
			--out "$OUT" --data-cache "$OUT/digits-split.npz" \
			>"$OUT/$mode.w$i.log" 2>&1 &
		pids+=($!)
	done
	# Each worker is bounded by its timeout. Once one has failed, the others
	# have GRACE seconds to fail by themselves (a peer's gloo connection
	# closes, an allreduce times out) before they are stopped: one that
	# waits for the failed one in the process group's rendezvous would
	# otherwise wait for the group's whole timeout.
	rcs=("" "" "" "")
	local left=4 t failed_at='' first=''
	for ((t = 0; left > 0 && t < RUN_TIMEOUT + 30; t++)); do
		for i in 0 1 2 3; do
			[ -z "${rcs[$i]}" ] || continue
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
	for i in 0 1 2 3; do
		[ -z "${rcs[$i]}" ] || continue
		kill "${pids[$i]}" 2>/dev/null
		wait "${pids[$i]}" 2>/dev/null
		rcs[i]=stopped
	done
	pids=()
	local culprit=${first:-another worker}
	[ -z "$first" ] || culprit="w$first"
	# Rank 0's per-epoch lines (every step's are in its log and the JSON).
	[ "${rcs[0]}" != 0 ] || grep -v ' step [0-9]*:' "$OUT/$mode.w1.log"
	for i in 1 2 3 4; do
		rc=${rcs[$((i - 1))]}
		[ "$rc" = 0 ] && continue
		if [ "$rc" = stopped ]; then
			echo "train: $mode: worker w$i (rank $((i - 1))) stopped: still running ${GRACE} s after $culprit failed" >&2
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "train: $mode: worker w$i (rank $((i - 1))) did not finish within ${RUN_TIMEOUT} s" >&2
		else
			echo "train: $mode: worker w$i (rank $((i - 1))) exited with status $rc" >&2
		fi
		# The log of the first to fail in full, the others' last line.
		if [ "$i" = "${first:-$i}" ]; then
			echo "  its log ($OUT/$mode.w$i.log), last 40 lines:" >&2
			tail -n 40 "$OUT/$mode.w$i.log" | sed 's/^/    /' >&2
			first=$i
		else
			tail -n 1 "$OUT/$mode.w$i.log" | sed 's/^/    /' >&2
		fi
	done
	[ "${rcs[*]}" = "0 0 0 0" ]
}

[ "$(id -u)" -eq 0 ] || die "run as root (make train runs it in the VM)"
if [ ! -f "$NETAGG_KO" ] || [ ! -x "$NETAGG" ] || [ ! -e "$NETAGG_ROOT/userspace/libnetagg.so.2" ]; then
	die "not built: run make"
fi
"$PY" -c 'import torch, sklearn, numpy, matplotlib' 2>/dev/null ||
	die "$PY lacks torch, scikit-learn, numpy or matplotlib"
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

for m in "${!MODES[@]}"; do
	mode=${MODES[$m]}
	if [ "$mode" != gloo ]; then
		configure_job || die "cannot configure job 1 on sw"
	fi
	run_mode "$mode" $((BASE_PORT + m)) || die "the $mode run failed (logs in $OUT)"
	if [ "$mode" != gloo ]; then
		echo "sw counters:"
		netagg_in sw stats job 1 | sed 's/^/    /'
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
