# shellcheck shell=bash
# Section (w) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh, and section-f-peers.sh (the runs of (f)).

# Where the wall time goes (make profile, in a boot of its own without the
# instruction-counting plugin, which slows the VM): the allreduces of (f),
# netagg's and its peers', on the unshaped star, routed and bridged
# (TOPOS_F), WORKERS_W workers, SIZES_W MiB, REPS_W timed allreduces after
# a warm-up, each system under perf recording every context switch,
# wake-up, system call and softirq of the VM (lab/profile/wall.py says
# what of). Each worker marks its timed allreduces with util/mark.h's
# close() marks (NETAGG_MARK_SYSCALL). The traces go to
# PROF_DIR/wall.TOPOLOGY.N.MIB.SYSTEM.data; lab/profile/profile.sh reads
# them on the host (wall.py) into its report. SYSTEMS_W: as SYSTEMS_I.
section_w() {
	local topo n i sys mib data perf_pid reps_f=${REPS_W:-3}
	local -a sizes_f
	[ -x "$MPI_ALLREDUCE" ] && [ "$MPI_ALLREDUCE" -nt "$NETAGG_ROOT/lab/bench/mpi-allreduce.c" ] ||
		make -s -C "$NETAGG_ROOT" tests/out/mpi-allreduce >&2
	export NETAGG_MARK_SYSCALL=1
	: >"$PROF_DIR/wall.runs"
	for topo in "${topos_f[@]}"; do
		for n in ${WORKERS_W:-4}; do
			unshaped_star "$topo" "$n" || continue
			for mib in ${SIZES_W:-16 64}; do
				sizes_f=("$mib")	# what the f_ functions run
				for sys in ${SYSTEMS_W:-gloo openmpi netagg-demo netagg-best}; do
					data=$PROF_DIR/wall.$topo.$n.$mib.$sys.data
					# Into the guest's memory: over 9p perf would fall behind.
					# perf's own system calls left out: each of its writes
					# would be events for it to write.
					# Its workload's pid is written once its events are on
					# (under TCG that takes seconds); killing it ends perf.
					rm -f /tmp/wall.data /tmp/wall.pid
					perf record -q -o /tmp/wall.data -a -k CLOCK_MONOTONIC -m 16M \
						-e sched:sched_switch -e sched:sched_wakeup \
						-e sched:sched_wakeup_new -e irq:softirq_entry -e irq:softirq_exit \
						-e raw_syscalls:sys_enter --exclude-perf \
						-e raw_syscalls:sys_exit --exclude-perf \
						-- bash -c 'echo $$ >/tmp/wall.pid; exec sleep 86400' \
						</dev/null 2>"$TEST_TMP/perf.err" &
					perf_pid=$!
					for i in $(seq 600); do
						[ -s /tmp/wall.pid ] && break
						sleep 0.2
					done
					if [ ! -s /tmp/wall.pid ]; then
						echo "bench: (w) perf did not start in 120 s" >&2
						kill "$perf_pid"
						wait "$perf_pid"
						continue
					fi
					case $sys in
					gloo) f_timed 0 "$n" f_gloo 0 "$n" ;;
					openmpi) f_timed 0 "$n" f_mpi 0 "$n" ;;
					netagg-demo) f_timed 0 "$n" f_netagg 0 "$n" demo 1 ;;
					netagg-best) f_timed 0 "$n" f_netagg 0 "$n" best 4 ;;
					netagg-xdp) f_timed 0 "$n" f_netagg 0 "$n" xdp 4 ;;
					netagg-keyed) f_timed 0 "$n" f_netagg 0 "$n" keyed 4 ;;
					esac
					kill "$(cat /tmp/wall.pid)"
					wait "$perf_pid"
					sed 's/^/bench: (w) perf: /' "$TEST_TMP/perf.err" >&2
					mv /tmp/wall.data "$data"
					echo "$topo $n $mib $sys $reps_f" >>"$PROF_DIR/wall.runs"
				done
			done
		done
	done
	unset NETAGG_MARK_SYSCALL
}
