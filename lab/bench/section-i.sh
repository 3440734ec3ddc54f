# shellcheck shell=bash
# Section (i) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh, and section-f-peers.sh (f_run, insn_table).

# Instructions per allreduced byte (make profile: the VM runs under the
# plugin, which counts every guest instruction): the systems of (f) on the
# unshaped star, routed and bridged (TOPOS_F), WORKERS_I workers, SIZES_I
# MiB, REPS_I timed allreduces each after a warm-up; the first cell (4
# workers, the first size, routed) twice, to show the count repeats.
# SYSTEMS_I: which of gloo, openmpi, netagg-demo, netagg-best (all of
# these by default), netagg-xdp (netagg-best with the XDP hook on sw's
# ports) and netagg-keyed (netagg-best with the job keyed: tagged packets).
# f_run writes PROF_DIR/peers.csv; the report is insn_table's.
section_i() {
	local topo n sys prof_run reps_f=${REPS_I:-2}
	local -a sizes_i=(${SIZES_I:-16 64}) sizes_f
	echo "topology,workers,mib,system,run,insns_per_byte,user_share,snap0,snap1" \
		>"$PROF_DIR/peers.csv"
	# Every process at the same addresses: the plugin counts blocks by
	# address, and one worker's map (f_netagg's PROF_MAPS) names them all.
	echo 0 >/proc/sys/kernel/randomize_va_space
	say "## (i) Whole-VM instructions per allreduced byte"
	say
	say "Every guest instruction of every vCPU, kernel and user, executed while any"
	say "worker was inside a timed allreduce (each marks its own: util/mark.h),"
	say "over $reps_f timed ones after a warm-up, each after a barrier, per allreduce"
	say "and per byte of one worker's buffer; user space: the share of them in user"
	say "space. The star of (f), links unshaped, MTU 1500, float32, no steering;"
	say "netagg on one tree and on four (make demo's)."
	say
	for topo in "${topos_f[@]}"; do
		for n in ${WORKERS_I:-4 8}; do
			unshaped_star "$topo" "$n" || continue
			for prof_run in 1 2; do
				[ "$prof_run" = 1 ] || [ "$topo,$n" = "${topos_f[0]},4" ] || continue
				sizes_f=("${sizes_i[@]}")	# what f_run runs
				[ "$prof_run" = 1 ] || sizes_f=("${sizes_i[0]}")	# the repeat
				for sys in ${SYSTEMS_I:-gloo openmpi netagg-demo netagg-best}; do
					case $sys in
					gloo) f_run 0 "$n" gloo f_gloo 0 "$n" ;;
					openmpi) f_run 0 "$n" openmpi f_mpi 0 "$n" ;;
					netagg-demo) f_run 0 "$n" netagg-demo f_netagg 0 "$n" demo 1 ;;
					netagg-best) f_run 0 "$n" netagg-best f_netagg 0 "$n" best 4 ;;
					netagg-xdp) f_run 0 "$n" netagg-xdp f_netagg 0 "$n" xdp 4 ;;
					netagg-keyed) f_run 0 "$n" netagg-keyed f_netagg 0 "$n" keyed 4 ;;
					esac
				done
			done
		done
		say "### $topo switch"
		say
		insn_table "$PROF_DIR/peers.csv" "$topo" | tee -a "$out"
		say
	done
	say "Repeated (the same cell, run 1 and run 2): $(awk -F, '$5 == 2 { r2[$1 FS $2 FS $3 FS $4] = $6 }
		$5 == 1 { r1[$1 FS $2 FS $3 FS $4] = $6 }
		END { for (k in r2) { split(k, f, FS); printf "%s %s %s/%s MiB: %s, %s; ", f[4], f[1], f[2], f[3], r1[k], r2[k] } }' \
		"$PROF_DIR/peers.csv")"
	say
}
