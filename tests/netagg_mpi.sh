#!/bin/bash
# libnetagg-mpi.so (LD_PRELOAD) under Open MPI's mpirun, one rank in each
# worker namespace (tests/tools/netagg-mpi-check): MPI_Allreduce and
# MPI_Iallreduce of floats with MPI_SUM on MPI_COMM_WORLD through sw's
# module, exact (a rank 4 s late waited for); MPI_DOUBLE, MPI_MAX, MPI_INT
# (not the job's dtype) and another communicator through PMPI, exact;
# NETAGG_MPI_REPORT says what went where. One environment for every rank:
# each sends to 10.0.1.254, an address of sw's, by its own route. Then the
# job taken off sw: the next float allreduce fails through the
# communicator's error handler on every rank, saying why, and the one
# after it at once. A bad NETAGG_TREES stops the run at MPI_Init, saying
# why.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 2 (f32, one tree); routes
#   w3 10.0.3.1 --+   the workers to each other; mpirun runs here, its
#   w4 10.0.4.1 --+   daemons in w1-w4 (lab/bench/netns-rsh)
source "$(dirname "$0")/lib.sh"
require_root
trap 'kill $(jobs -p) 2>/dev/null; pkill -KILL -f netagg-mpi-check 2>/dev/null; cleanup_ns; module_unload' EXIT
command -v mpirun >/dev/null || fail_setup "mpirun missing (openmpi-bin): run scripts/deps.sh"
CHECK=$NETAGG_ROOT/tests/tools/netagg-mpi-check
MPILIB=$NETAGG_ROOT/mpi/libnetagg-mpi.so
[ -x "$CHECK" ] && [ -e "$MPILIB" ] ||
	fail_setup "netagg-mpi-check or libnetagg-mpi.so missing: run make"

module_load
routed_star 4
netagg_in sw job add 2 dtype f32
netagg_in sw tree add job 2 tree 0 role root child 10.0.1.1 child 10.0.2.1 \
	child 10.0.3.1 child 10.0.4.1

ktap_plan 9

seq 4 | sed 's/.*/w& slots=1/' >"$TEST_TMP/hosts"
mpi_netns
# run OUT ENV...: netagg-mpi-check ARGS... (the array args) on w1-w4 under
# mpirun, ENV (NAME=VALUE) given to each rank; stdout in OUT, stderr in
# OUT.err; mpirun's exit code (mpi_launch: a launch hung before any rank
# started is made once more).
args=()
run()
{
	local out=$1 e x=()
	shift
	for e in "$@"; do x+=(-x "$e"); done
	mpi_launch "$out" ip netns exec sw timeout "$(scaled 300)" mpirun -np 4 \
		--hostfile "$TEST_TMP/hosts" --map-by node --bind-to none "${x[@]}" \
		"$CHECK" "${args[@]}"
}
# oks FILE CHECK: how many ranks said CHECK was ok.
oks()
{
	jq -s "[.[] | select(.check == \"$2\" and .ok)] | length" "$1" 2>/dev/null
}

flag=$TEST_TMP/gone
args=(--gone "$flag")
run "$TEST_TMP/m" LD_PRELOAD="$MPILIB" NETAGG_MPI_REPORT=1 NETAGG_JOB=2 \
	NETAGG_TREES=0=10.0.1.254 NETAGG_NODE_TIMEOUT=3 &
pid=$!
end=$((SECONDS + $(scaled 300)))
while [ "$(grep -c '"check": "ready"' "$TEST_TMP/m" 2>/dev/null)" -lt 4 ] &&
	[ "$SECONDS" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
	sleep 0.2
done
summed=$(counter sw tree 2 0 aggregated)
netagg_in sw job del 2
touch "$flag"
wait "$pid"
rc=$?
args=()
grep -h 'netagg-mpi\|rror' "$TEST_TMP/m.err" | sed 's/^/# /' | cut -c 1-400
jq -r 'select(.ok == false) | "# rank \(.rank) \(.check): not ok"' "$TEST_TMP/m" 2>/dev/null
check_eq "MPI_Allreduce of floats, MPI_SUM: exact on every rank (1,000,003; in place; MPI_Iallreduce)" \
	"4 4 4 0" "$(oks "$TEST_TMP/m" 'float SUM, 1,000,003 elements') $(oks "$TEST_TMP/m" 'float SUM in place') $(oks "$TEST_TMP/m" 'float SUM, MPI_Iallreduce') $rc"
check_eq "... and with the last rank 4 s late: the others wait, as MPI does" 4 \
	"$(oks "$TEST_TMP/m" 'float SUM, the last rank 4 s late')"
# Each rank's report: "netagg 4 calls B bytes; pmpi 4 calls ...; REASON: N".
netagg_calls=$(grep -o 'netagg [0-9]* calls' "$TEST_TMP/m.err" | sort | uniq -c | awk '{ print $1 "x" $3 }')
check_eq "... through netagg on every rank (NETAGG_MPI_REPORT: 4 calls each)" "4x4" "$netagg_calls"
check "... through sw's module: it summed over 1,000 packets of them ($summed)" \
	test "${summed:-0}" -gt 1000
check_eq "MPI_DOUBLE, MPI_MAX, MPI_INT, a duplicate communicator: exact, through PMPI" \
	"4 4 4 4" "$(oks "$TEST_TMP/m" 'double SUM') $(oks "$TEST_TMP/m" 'float MAX') $(oks "$TEST_TMP/m" 'int SUM') $(oks "$TEST_TMP/m" 'float SUM on a duplicate of MPI_COMM_WORLD')"
check_eq "... each counted by its reason on every rank" "4 4 4 4" \
	"$(for why in 'pmpi 4 calls' "a datatype other than the job's: 2" \
		'an operation other than MPI_SUM: 1' 'a communicator other than MPI_COMM_WORLD: 1'; do
		grep -c "$why" "$TEST_TMP/m.err"
	done | paste -sd' ')"

first=$(grep 'MPI_Allreduce of 20000 .*did not answer' "$TEST_TMP/m.err" | grep -vc 'out of step')
check_eq "the job taken off sw: MPI_Allreduce fails through the error handler on every rank, saying why" \
	"4 4" "$(oks "$TEST_TMP/m" 'gone: MPI_Allreduce fails through the error handler') $first"
check_eq "... and the next fails at once: the ranks are out of step" "4 4" \
	"$(oks "$TEST_TMP/m" 'gone: the next fails at once') $(grep -c 'MPI_Allreduce of 20000 .*out of step' "$TEST_TMP/m.err")"

run "$TEST_TMP/bad" LD_PRELOAD="$MPILIB" NETAGG_JOB=2 NETAGG_TREES=0=10.0.1.x
rc=$?
grep -m 1 'netagg-mpi' "$TEST_TMP/bad.err" | sed 's/^/# /'
check "a bad NETAGG_TREES: the run stops at MPI_Init, saying why (mpirun exited $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'NETAGG_TREES: \"10.0.1.x\" is not an IPv4 or IPv6 address' '$TEST_TMP/bad.err' && ! grep -q '\"check\"' '$TEST_TMP/bad'"
ktap_finish
