# shellcheck shell=bash
# Section (f) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh, and section-f-peers.sh (its runs).
#
# (f) Peers. netagg against Gloo (torch.distributed) and Open MPI on the star
#     of (c), routed and bridged (TOPOS_F), 4 and 8 workers, 1 to 64 MiB
#     each, links unlimited and shaped to 200 and 20 Mbit/s both ways: the
#     slowest worker's time, median of REPS_F (and their spread) after a
#     warm-up, each after a barrier, every result checked element by
#     element; netagg on 1 tree and on 4 (make demo's); and after each
#     unshaped table, the instructions per allreduced byte that make
#     profile's (i) counted last and where the wall time went as its (w)
#     traced it (f_wall).
#     Raw figures also go to CSV_F (lab/bench/bench.sh plots them). PEERS_F=0
#     runs netagg alone (its times and retransmissions, in minutes).

# f_cell RATE,N,MIB,SYSTEM: a time of the table, its spread in brackets.
f_cell() {
	local t
	t=$(secs "${F[$1]:--}")
	[ -z "${FS[$1]:-}" ] || t+=" (${FS[$1]})"
	echo "$t"
}

section_f() {
	local topo rate n mib sys best drops wire i xh= xs= xv
	local -a systems=(gloo openmpi netagg-demo netagg-best)
	# XDP_F=1: netagg on 4 trees again, with the XDP hook on sw's ports.
	if [ "${XDP_F:-0}" = 1 ]; then
		systems+=(netagg-xdp)
		xh=" netagg 4 trees, XDP hook s |" xs="---|"
	fi
	[ -x "$MPI_ALLREDUCE" ] && [ "$MPI_ALLREDUCE" -nt "$NETAGG_ROOT/lab/bench/mpi-allreduce.c" ] ||
		make -s -C "$NETAGG_ROOT" tests/out/mpi-allreduce >&2
	mkdir -p "$(dirname "$CSV_F")"
	echo "topology,regime_mbit,workers,mib,system,seconds" >"$CSV_F"
	say "## (f) netagg against Gloo and Open MPI"
	say
	# The guest's /var/lib is empty (tmpfs): no dpkg database to ask.
	say "The star of (c), MTU 1500, float32: Gloo (torch" \
		"$(/usr/bin/python3 -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null),"
	say "one process a worker) and Open MPI ($(mpirun --version 2>/dev/null | sed -n '1s/.* //p'), MPI_Allreduce over TCP) run their"
	say "own allreduce between the workers, through sw; netagg on one tree rooted on"
	say "sw, and on four (as make demo has them). Slowest worker's time, median of"
	say "$reps_f after a warm-up, each after a barrier (netagg's: an allreduce of one"
	say "element), and in brackets the least and the most of the $reps_f (the"
	say "run-to-run spread in this boot); every element of every result checked (a"
	say "wrong one shows as \"wrong\", never a time). Ratio: netagg on 4 trees over"
	say "the faster peer (medians), below"
	say "1 netagg is faster. Retransmits (probes): netagg's, all workers', per"
	say "allreduce (1 tree / 4 trees)."
	say
	say "Routed: sw routes between its ports (10.0.i.254 on port si). Bridged: the"
	say "ports are in br0, which has those addresses: every packet enters and leaves"
	say "sw through the bridge."
	say
	say "Unshaped, the figures are the emulated CPUs' more than the links': TCP's"
	say "segments cross the veth links as 64 KB GSO packets, sw forwarding each"
	say "whole, where netagg's are 1500-byte datagrams, each summed on sw. A shaper"
	say "cuts those larger than its bucket (2 ms at its rate, at least 8 frames) into"
	say "frames of the MTU."
	say
	# Instruction counts are make profile's (the plugin slows the VM, so a
	# run that counts cannot time): its last run's, where there is one.
	local icsv=$NETAGG_ROOT/tests/out/profile/peers.csv
	[ -s "$icsv" ] || icsv=
	if [ -n "$icsv" ]; then
		say "Instructions: whole-VM instructions per allreduced byte, as the last"
		say "make profile counted them ($(date -u -r "$icsv" '+%Y-%m-%d %H:%M UTC'), docs/performance.md says"
		say "how), after each unshaped table: they do not move between boots, as times do."
		say
	fi
	for topo in "${topos_f[@]}"; do
	for rate in "${rates_f[@]}"; do
		if [ "$rate" = 0 ]; then
			say "### $topo switch, links unshaped"
			say
			say "| workers | MiB | Gloo s | Open MPI s | netagg 1 tree s | netagg 4 trees s | netagg 4 trees / best peer | netagg retransmits (probes) per allreduce |$xh"
			say "|---|---|---|---|---|---|---|---|$xs"
		else
			say "### $topo switch, links shaped to $rate Mbit/s each way (tbf)"
			say
			say "| workers | MiB | Gloo s | Open MPI s | netagg 1 tree s | netagg 4 trees s | netagg 4 trees / best peer | wire limit n/(2(n-1)) | netagg retransmits (probes) per allreduce |$xh"
			say "|---|---|---|---|---|---|---|---|---|$xs"
		fi
		drops=0
		for n in "${workers_f[@]}"; do
			star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
			[ "$topo" = routed ] || bridge "$n" || { echo "bench: no bridge on sw" >&2; continue; }
			for i in $(seq "$n"); do	# as in (c): no steering
				steer "w$i" v0 0
				steer sw "s$i" 0
			done
			[ "$rate" = 0 ] || shape "$rate" "$n" || { echo "bench: tbf failed" >&2; continue; }
			module_unload
			if [ "$peers_f" != 0 ]; then
				f_run "$rate" "$n" gloo f_gloo "$rate" "$n"
				f_run "$rate" "$n" openmpi f_mpi "$rate" "$n"
			else
				for mib in "${sizes_f[@]}"; do
					F[$rate,$n,$mib,gloo]=-
					F[$rate,$n,$mib,openmpi]=-
				done
			fi
			f_run "$rate" "$n" netagg-demo f_netagg "$rate" "$n" demo 1
			f_run "$rate" "$n" netagg-best f_netagg "$rate" "$n" best 4
			[ -z "$xh" ] || f_run "$rate" "$n" netagg-xdp f_netagg "$rate" "$n" xdp 4
			[ "$rate" = 0 ] || drops=$((drops + $(shaper_drops "$n")))
			for mib in "${sizes_f[@]}"; do
				for sys in "${systems[@]}"; do
					echo "$topo,$rate,$n,$mib,$sys,${F[$rate,$n,$mib,$sys]}" >>"$CSV_F"
				done
				best=$(printf '%s\n' "${F[$rate,$n,$mib,gloo]}" "${F[$rate,$n,$mib,openmpi]}" |
					grep -E '^[0-9.e+-]+$' | sort -g | head -n 1)
				wire=	# the column of shaped links only
				[ "$rate" = 0 ] || wire=$(awk -v n="$n" 'BEGIN { printf " %.2f |", n / (2 * (n - 1)) }')
				xv=
				[ -z "$xh" ] || xv=" $(f_cell "$rate,$n,$mib,netagg-xdp") (${RT[$rate,$n,$mib,xdp]}) |"
				say "| $n | $mib | $(f_cell "$rate,$n,$mib,gloo") | $(f_cell "$rate,$n,$mib,openmpi") |" \
					"$(f_cell "$rate,$n,$mib,netagg-demo") | $(f_cell "$rate,$n,$mib,netagg-best") |" \
					"$(ratio "${F[$rate,$n,$mib,netagg-best]}" "${best:-0}") |$wire" \
					"${RT[$rate,$n,$mib,demo]} / ${RT[$rate,$n,$mib,best]} |$xv"
			done
		done
		say
		[ "$rate" = 0 ] || { say "The shapers dropped $drops packets in this regime."; say; }
		[ "$rate" = 0 ] || continue
		if [ -n "$icsv" ]; then
			say "Instructions per allreduced byte ($topo switch, unshaped, make profile)"
			say
			insn_table "$icsv" "$topo" | tee -a "$out"
			say
		fi
		f_wall "$topo"
	done
	done
}

# f_wall TOPOLOGY: where the wall time went in the unshaped allreduces on
# TOPOLOGY's switch, as the last make profile traced them (its (w): the
# summaries lab/profile/wall.py left in tests/out/profile), a table a
# worker count and size; nothing where it traced none.
f_wall() {
	local runs=$NETAGG_ROOT/tests/out/profile/wall.runs
	[ ! -s "$runs" ] || "$NETAGG_ROOT/lab/profile/wall.py" tables "$runs" --topology "$1" |
		tee -a "$out"
}
