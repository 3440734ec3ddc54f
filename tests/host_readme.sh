#!/bin/bash
# README's torchrun and mpirun commands, run as printed (read from
# README.md) on the host, whose kernel has no module: the userspace
# aggregator (tests/tools/netagg-uagg) is the switch's root of job 1,
# with README's children. torchrun on two hosts of two workers, the
# training script the sums of tests/python/backend.py; mpirun from sw
# over four hosts, tests/tools/netagg-mpi-check as ./app. What is not the
# commands' is the machines': the package and the libraries on their
# paths, Gloo's interface, mpirun's way to a host (netns-rsh, as ssh).
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: netagg-uagg (job 1), routes the
#   w3 10.0.3.1 --+   hosts to each other
#   w4 10.0.4.1 --+
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
trap 'kill $(jobs -p) 2>/dev/null; cleanup_ns' EXIT
ROOT=$PWD
UAGG=$ROOT/tests/tools/netagg-uagg
ktap_plan 4

# block FIRST LAST: README's lines from the one starting FIRST (after the
# indentation) to the next ending LAST, indentation and continuations as
# printed, the literal text a reader would paste.
block()
{
	awk -v first="$1" -v last="$2" '
		!on && index($0, first) { on = 1 }
		on { sub(/^    +/, ""); print; if (substr($0, length($0) - length(last) + 1) == last) exit }
	' README.md
}
torch_cmd=$(block "export NETAGG_JOB=1 NETAGG_TREES=" "train.py")
tree_cmd=$(block "netagg tree add job 1 tree 0 role root" "10.0.2.1:7179")
mpi_cmd=$(block "mpirun -np 4 --hostfile hosts" "./app")
echo "# torchrun's, as README prints it:"
sed 's/^/#   /' <<<"$torch_cmd"
echo "# mpirun's:"
sed 's/^/#   /' <<<"$mpi_cmd"
kids=$(grep -o 'child [0-9.:]*' <<<"$tree_cmd" | sed 's/child /--child /' | xargs)

routed_star 4 || exit 1

# uagg CHILD-ARGS: the root of job 1 in sw until killed; its counters in
# $TEST_TMP/uagg.json when it exits.
uagg()
{
	# shellcheck disable=SC2086
	ip netns exec sw "$UAGG" --job 1 $1 >"$TEST_TMP/uagg.json" 2>&1 &
	uagg_pid=$!
	sleep 0.5
}
# summed: what netagg-uagg summed (its counters, once it has exited).
summed()
{
	kill -INT "$uagg_pid"
	wait "$uagg_pid"
	jq -r '.aggregated' "$TEST_TMP/uagg.json" 2>/dev/null
}

# torchrun: README's command on w1 and, its node rank 1, on w2; in a
# directory of its own each, where train.py is the backend's test script.
export PYTHONPATH=$ROOT/python GLOO_SOCKET_IFNAME=v0 OMP_NUM_THREADS=1
uagg "$kids"
pids=()
for n in 0 1; do
	d=$TEST_TMP/torch$n
	mkdir -p "$d"
	# The backend's sums only: netagg-uagg adds in arrival order, not in
	# the module's fixed one, so DDP's bitwise comparisons are the VM's.
	printf '%s\n' "import runpy, sys" "sys.argv += ['--sums-only']" \
		"runpy.run_path('$ROOT/tests/python/backend.py', run_name='__main__')" \
		>"$d/train.py"
	cmd=$torch_cmd
	[ $n = 0 ] || cmd=${cmd//--node_rank 0/--node_rank 1}
	(cd "$d" && TMPDIR=$d timeout 600 ip netns exec "w$((n + 1))" bash -c "$cmd") \
		>"$d/out" 2>"$d/err" &
	pids+=($!)
done
rcs=()
for pid in "${pids[@]}"; do
	wait "$pid"
	rcs+=($?)
done
got=$(summed)
for n in 0 1; do
	[ "${rcs[n]}" = 0 ] || tail -n 5 "$TEST_TMP/torch$n/err" | sed "s/^/# host $n: /"
done
find "$TEST_TMP"/torch[01] -name stdout.log -exec cat {} + | grep '^{' >"$TEST_TMP/torch.json"
jq -r 'select(.ok == false) | "# rank \(.rank) \(.check): \(.detail)"' "$TEST_TMP/torch.json" |
	cut -c 1-300
checks=$(grep -c '"ok": true' "$TEST_TMP/torch.json")
check_eq "README's torchrun command on two hosts: every check of train.py ok, both exit 0" \
	"0 0 yes" "${rcs[*]} $([ "$checks" -ge 32 ] && echo yes || echo "no ($checks ok)")"
check "... through the aggregator (it summed ${got:-nothing})" test "${got:-0}" -gt 1000

# mpirun: README's command in sw, four hosts; ./app the MPI test program.
d=$TEST_TMP/mpi
mkdir -p "$d"
cp tests/tools/netagg-mpi-check "$d/app"
seq 4 | sed 's/.*/w& slots=1/' >"$d/hosts"
mpi_netns
uagg "--child 10.0.1.1 --child 10.0.2.1 --child 10.0.3.1 --child 10.0.4.1"
cd "$d" || exit 1
mpi_launch "$d/out" env LD_LIBRARY_PATH="$ROOT/mpi" timeout 300 ip netns exec sw bash -c "$mpi_cmd"
rc=$?
cd "$ROOT" || exit 1
got=$(summed)
[ $rc = 0 ] || tail -n 5 "$d/out.err" | sed 's/^/# /'
check_eq "README's mpirun command: every check ok on 4 ranks, exit 0, 4 calls each through netagg" \
	"0 32 4" "$rc $(grep -c '"ok": true' "$d/out") $(grep -c 'netagg 4 calls' "$d/out.err")"
check "... through the aggregator (it summed ${got:-nothing})" test "${got:-0}" -gt 1000
ktap_finish
