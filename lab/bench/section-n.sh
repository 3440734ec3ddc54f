# shellcheck shell=bash
# Section (n) of lab/bench/bench-vm.sh, which sources this after lib.sh,
# lib-runs.sh and section-f-peers.sh.
#
# (n) The table users know: nccl-tests' all_reduce_perf (size, count,
#     time, algbw, busbw), 1 KiB to 64 MiB a worker, float32 SUM, 4
#     workers on the star of (c), routed, unshaped, one job of TREES_N
#     trees rooted on sw: torch.distributed's all_reduce through the
#     "netagg" backend and through Gloo, the backend's own Worker called
#     directly (the backend's cost is the difference), and MPI_Allreduce
#     with and without libnetagg-mpi. Every netagg run has the one
#     environment the planner gives a job (NETAGG_TREES names sw by
#     10.0.1.254 for every worker).

sizes_n=(${SIZES_N:-1K 4K 16K 64K 256K 1M 4M 16M 64M})
reps_n=${REPS_N:-5}
workers_n=${WORKERS_N:-4}
trees_n=${TREES_N:-4}
declare -A N=()	# N[SYSTEM,BYTES]: seconds, wrong or failed

# n_bytes SIZE: bytes of a size of SIZES_N (1K, 64M; bare: MiB).
n_bytes() {
	case $1 in
	*K) echo $((${1%K} * 1024)) ;;
	*M) echo $((${1%M} * 1048576)) ;;
	*) echo $(($1 * 1048576)) ;;
	esac
}

# n_env: the job's environment, as netagg.rat plan writes it.
n_env() {
	local t trees=
	for t in $(seq 0 $((trees_n - 1))); do trees+=${trees:+,}$t=10.0.1.254; done
	echo "NETAGG_JOB=1 NETAGG_TREES=$trees NETAGG_WINDOW=$window NETAGG_DTYPE=float32"
}

# n_result SYSTEM FILE...: from the JSON lines in FILEs, for each size:
# slowest_median's figure (section-f-peers.sh).
n_result() {
	local sys=$1 size b r
	shift
	for size in "${sizes_n[@]}"; do
		b=$(n_bytes "$size")
		r=$(slowest_median ".bytes == $b" $((workers_n * reps_n)) "$@")
		N[$sys,$b]=$r
		case $r in wrong | failed)
			echo "bench: (n) $sys, $size: $r" >&2
			tail -n 20 "$@" >&2 ;;
		esac
	done
}

# n_torch SYSTEM ARGS...: lab/bench/dist-allreduce.py ARGS in every worker.
n_torch() {
	local sys=$1 i pids=()
	shift
	rm -f "$TEST_TMP"/n.out.*
	F_PORT=$((F_PORT + 1))
	for i in $(seq "$workers_n"); do
		# shellcheck disable=SC2046	# n_env's words are variables
		timeout 1200 ip netns exec "w$i" env $(n_env) GLOO_SOCKET_IFNAME=v0 \
			PYTHONPATH="$NETAGG_ROOT/python" "$GLOO" --rank $((i - 1)) \
			--workers "$workers_n" --master "10.0.1.1:$F_PORT" --reps "$reps_n" "$@" \
			"${sizes_n[@]}" >"$TEST_TMP/n.out.$i" 2>"$TEST_TMP/n.err.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	n_result "$sys" "$TEST_TMP"/n.out.*
	grep -h . "$TEST_TMP"/n.err.* | grep -v Warning | sort | uniq -c | head -n 5 >&2
}

# n_mpi SYSTEM [PRELOAD]: mpi-allreduce under mpirun in sw, as (f)'s, with
# PRELOAD (libnetagg-mpi.so) and the job's environment if given; each
# rank's report of what went where in $TEST_TMP/n.report.
n_mpi() {
	local sys=$1 pre=() v
	if [ -n "${2:-}" ]; then
		pre=(-x "LD_PRELOAD=$2" -x NETAGG_MPI_REPORT=1)
		for v in $(n_env); do pre+=(-x "$v"); done
	fi
	seq "$workers_n" | sed 's/.*/w& slots=1/' >"$TEST_TMP/hosts"
	mpi_netns
	ip netns exec sw timeout 1200 mpirun -np "$workers_n" --hostfile "$TEST_TMP/hosts" \
		--map-by node --bind-to none "${pre[@]}" "$MPI_ALLREDUCE" --reps "$reps_n" \
		"${sizes_n[@]}" >"$TEST_TMP/n.mpi" 2>"$TEST_TMP/n.report"
	n_result "$sys" "$TEST_TMP/n.mpi"
}

# n_cells SYSTEM BYTES: "time ms | algbw MB/s | busbw MB/s" of a run.
n_cells() {
	local t=${N[$1,$2]}
	case $t in
	wrong | failed | "") echo "$t | - | -" ;;
	*) awk -v t="$t" -v b="$2" -v n="$workers_n" 'BEGIN {
		a = b / t / 1e6; printf "%.3f | %.2f | %.2f", t * 1000, a, a * 2 * (n - 1) / n }' ;;
	esac
}

section_n() {
	local size b lib=$NETAGG_ROOT/mpi/libnetagg-mpi.so i netagg_calls pmpi_calls
	[ -x "$MPI_ALLREDUCE" ] && [ "$MPI_ALLREDUCE" -nt "$NETAGG_ROOT/lab/bench/mpi-allreduce.c" ] ||
		make -s -C "$NETAGG_ROOT" tests/out/mpi-allreduce >&2
	say "## (n) All-reduce as nccl-tests reports it"
	say
	say "$workers_n workers on the star of (c), routed, unshaped, MTU 1500, float32 SUM"
	say "in place; netagg: one job of $trees_n trees rooted on sw, window $window, every"
	say "worker with the one environment the planner gives (\`$(n_env)\`)."
	say "Time: the slowest worker's, median of $reps_n after a warm-up, each after a barrier;"
	say "every element of every result checked (a wrong one shows as \"wrong\")."
	say "algbw = size / time; busbw = algbw * 2(n-1)/n, as nccl-tests define them"
	say "(what a ring moves over each worker's link), MB/s (10^6 bytes)."
	say
	star "$workers_n" 1500 || { say "(no star)"; return 0; }
	for i in $(seq "$workers_n"); do	# as in (c): no steering
		steer "w$i" v0 0
		steer sw "s$i" 0
	done
	module_unload
	module_load && root_job 1 1500 "$workers_n" "$trees_n" || { say "(no job on sw)"; return 0; }
	n_torch backend --backend netagg
	n_torch worker --backend netagg --direct
	n_torch gloo --backend gloo
	n_mpi mpi-netagg "$lib"
	netagg_calls=$(grep -o 'netagg [0-9]* calls' "$TEST_TMP/n.report" | awk '{ s += $2 } END { print s + 0 }')
	pmpi_calls=$(grep -o 'pmpi [0-9]* calls' "$TEST_TMP/n.report" | awk '{ s += $2 } END { print s + 0 }')
	n_mpi mpi
	module_unload

	say "### torch.distributed: \`dist.all_reduce\`"
	say
	say "| size | count | netagg backend ms | algbw | busbw | Gloo ms | algbw | busbw | backend / Gloo | Worker direct ms | backend / Worker |"
	say "|---|---|---|---|---|---|---|---|---|---|---|"
	for size in "${sizes_n[@]}"; do
		b=$(n_bytes "$size")
		say "| $size | $((b / 4)) | $(n_cells backend "$b") | $(n_cells gloo "$b") |" \
			"$(ratio "${N[backend,$b]}" "${N[gloo,$b]}") | $(n_cells worker "$b" | cut -d' ' -f1) |" \
			"$(ratio "${N[backend,$b]}" "${N[worker,$b]}") |"
	done
	say
	say "### MPI: \`MPI_Allreduce\` (Open MPI $(mpirun --version 2>/dev/null | sed -n '1s/.* //p'), TCP)"
	say
	say "| size | count | with libnetagg-mpi ms | algbw | busbw | Open MPI alone ms | algbw | busbw | with / alone |"
	say "|---|---|---|---|---|---|---|---|---|"
	for size in "${sizes_n[@]}"; do
		b=$(n_bytes "$size")
		say "| $size | $((b / 4)) | $(n_cells mpi-netagg "$b") | $(n_cells mpi "$b") |" \
			"$(ratio "${N[mpi-netagg,$b]}" "${N[mpi,$b]}") |"
	done
	say
	say "libnetagg-mpi's reports (NETAGG_MPI_REPORT=1), all ranks together: $netagg_calls"
	say "allreduces through netagg, $pmpi_calls through PMPI."
	say
}
