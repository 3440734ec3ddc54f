# shellcheck shell=bash
# The peers' runs of section (f) of lab/bench/bench-vm.sh (section-f.sh),
# which section (i) (section-i.sh) makes too, over lib.sh and lib-runs.sh
# (allreduce, the instruction counts); their settings are in lib.sh.
#
# netagg against the allreduce of two software stacks, on the star of (c),
# MTU 1500, float32: Gloo (torch.distributed, one Python process a worker
# namespace, rank 0's TCP store the rendezvous) and Open MPI (mpirun in sw
# starts an orted in each worker namespace through lab/bench/netns-rsh; TCP).
# Both sum by transfers between the workers, through sw; netagg sends each
# worker's data to sw once and gets the sum back once. On a shaped link that
# is the whole difference: an allreduce among the workers moves at least
# 2(n-1)/n times the buffer each way of every worker's link (a ring does
# just that), netagg once, so netagg's time can at best be n/(2(n-1)) of
# theirs ("wire limit").

# shape RATE N: tbf at RATE Mbit/s on both ends of every link of star N.
# The queue (latency: 168 ms at 200 Mbit/s, 1678 ms at 20) holds 4 MiB, so
# that the shaper drops nothing and each system gets the rate, never loses
# to it: more than netagg's deepest burst (a window of 64 VIDs on each of 4
# trees, 384 KiB, and the same again of retransmissions) and than the
# window TCP's autotuning reaches with the default tcp_rmem (6 MiB buffer,
# 3 MiB window), on a link that two or three connections share in a ring.
# The table says how many packets the shapers dropped all the same. The
# bucket (burst) holds 2 ms at the rate, at least 8 frames: the guest's
# timers fire late under TCG, and a bucket of a frame or two would leave
# the link idle, the rate short of RATE; 2 ms is still small against the
# transfers (1 MiB takes 42 ms at 200 Mbit/s).
shape() {
	local rate=$1 n=$2 i burst lat
	burst=$((rate * 250))	# bytes in 2 ms: rate * 10^6 / 8 * 0.002
	[ "$burst" -ge 12112 ] || burst=12112
	lat=$((8 * 4194304 / (rate * 1000)))ms
	for i in $(seq "$n"); do
		tc -n "w$i" qdisc replace dev v0 root tbf rate "${rate}mbit" burst "$burst" latency "$lat" &&
			tc -n sw qdisc replace dev "s$i" root tbf rate "${rate}mbit" burst "$burst" latency "$lat" ||
			return 1
	done
}

# shaper_drops N: packets the tbf qdiscs of star N dropped so far.
shaper_drops() {
	local i
	{
		for i in $(seq "$1"); do
			tc -n "w$i" -s -j qdisc show dev v0
			tc -n sw -s -j qdisc show dev "s$i"
		done
	} | jq -s '[.[][] | select(.kind == "tbf") | .drops] | add // 0'
}

# slowest_median SELECT LINES FILE...: of the JSON lines in FILEs that jq's
# SELECT keeps, the median over reps of the slowest rank's seconds (each
# rep's in $TEST_TMP/peer.slowest); "wrong" when a rank saw a wrong
# element, "failed" when there are not LINES of them. Other output
# (warnings) is skipped: only whole objects.
slowest_median() {
	local sel=$1 lines=$2
	shift 2
	cat "$@" | jq -cR "fromjson? | select($sel)" >"$TEST_TMP/peer.lines"
	if [ "$(jq -s 'any(.ok != true)' "$TEST_TMP/peer.lines")" = true ]; then
		echo wrong
	elif [ "$(wc -l <"$TEST_TMP/peer.lines")" -ne "$lines" ]; then
		echo failed
	else
		jq -s 'group_by(.rep)[] | map(.seconds) | max' "$TEST_TMP/peer.lines" >"$TEST_TMP/peer.slowest"
		median <"$TEST_TMP/peer.slowest"
	fi
}

# f_result RATE N SYSTEM FILE...: from the peers' JSON lines in FILEs, for
# each size of (f): slowest_median's figure, and its spread in FS.
f_result() {
	local rate=$1 n=$2 sys=$3 mib r
	shift 3
	for mib in "${sizes_f[@]}"; do
		rm -f "$TEST_TMP/peer.slowest"
		r=$(slowest_median ".mib == $mib" $((n * reps_f)) "$@")
		F[$rate,$n,$mib,$sys]=$r
		FS[$rate,$n,$mib,$sys]=$( [ ! -s "$TEST_TMP/peer.slowest" ] || spread <"$TEST_TMP/peer.slowest")
		[ "$r" = wrong ] || [ "$r" = failed ] && { echo "bench: $sys, $n workers, $mib MiB, $rate Mbit/s: $r" >&2; tail -n 20 "$@" >&2; }
	done
}

# A peer's run of all sizes may take this long before it is killed: the
# sizes' allreduces at 4 s a MiB (TCG) plus the wire time of a ring at RATE.
f_timeout() {
	local rate=$1 total=0 mib
	for mib in "${sizes_f[@]}"; do total=$((total + mib)); done
	echo $((600 + (reps_f + 1) * total * (4 + (rate > 0 ? (20 + rate - 1) / rate : 0))))
}

f_gloo() {	# RATE N: every size, one process a worker namespace
	local rate=$1 n=$2 i pids=()
	rm -f "$TEST_TMP"/gloo.*
	F_PORT=$((F_PORT + 1))	# a fresh port: no listener of a run before in the way
	for i in $(seq "$n"); do
		GLOO_SOCKET_IFNAME=v0 timeout "$(f_timeout "$rate")" ip netns exec "w$i" "$GLOO" \
			--rank $((i - 1)) --workers "$n" --master "10.0.1.1:$F_PORT" \
			--reps "$reps_f" "${sizes_f[@]}" >"$TEST_TMP/gloo.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	f_result "$rate" "$n" gloo "$TEST_TMP"/gloo.*
}

# Open MPI: mpirun in sw (it reaches every worker namespace, and their
# daemons reach it back over the links), one slot on each "host" w1..wN.
# Every orted believes it has a machine to itself, so ranks are not bound
# (all would be bound to CPU 0); ob1 over btl tcp, on the links only. The
# ranks get NETAGG_MARK_SYSCALL where it is set (section w).
f_mpi() {	# RATE N
	local rate=$1 n=$2
	seq "$n" | sed 's/.*/w& slots=1/' >"$TEST_TMP/hosts"
	mpi_netns
	ip netns exec sw timeout "$(f_timeout "$rate")" mpirun \
		-np "$n" --hostfile "$TEST_TMP/hosts" --map-by node --bind-to none \
		${NETAGG_MARK_SYSCALL:+-x NETAGG_MARK_SYSCALL} \
		"$MPI_ALLREDUCE" --reps "$reps_f" "${sizes_f[@]}" >"$TEST_TMP/mpi.out" 2>&1
	f_result "$rate" "$n" openmpi "$TEST_TMP/mpi.out"
}

# f_netagg RATE N HOW TREES: allreduce of (c), sw the root of TREES trees;
# each worker one process: a warm-up, then REPS_F timed allreduces, each
# after a barrier (--barrier), as the peers'.
f_netagg() {
	local rate=$1 n=$2 how=$3 mib res setup=ok key=()
	TREES=$4
	# HOW keyed: the job given a key, every packet tagged (docs/design.md).
	if [ "$how" = keyed ]; then
		BENCH_KEY=$TEST_TMP/bench.key
		head -c 32 /dev/urandom >"$BENCH_KEY"
		key=(--key "$BENCH_KEY")
	fi
	module_unload
	module_load && root_job 1 1500 "$n" "$TREES" || setup=failed
	BENCH_KEY=
	# HOW xdp: the XDP hook on sw's ports as well (docs/xdp.md).
	[ "$how" != xdp ] || [ "$setup" != ok ] || xdp_star "$n" attach || setup=failed
	[ -z "${PROF_KALLSYMS:-}" ] || cat /proc/kallsyms >"$PROF_KALLSYMS"
	for mib in "${sizes_f[@]}"; do
		res=failed
		if [ "$setup" = ok ]; then
			rm -f "$TEST_TMP"/ar.*	# allreduce reads every ar.*: none of more workers
			# Not in $(...): allreduce counts ROUND up.
			# After a barrier each, as the peers' (bench/). Counted (i), the
			# VM runs 3 to 7 times slower, and 8 workers filling their
			# buffers on 2 vCPUs before they join take longer than the
			# 10 s a worker waits without progress.
			ITER=$reps_f PROF_MAPS=${PROF_KALLSYMS:+${PROF_KALLSYMS/kallsyms/maps}} \
				allreduce "$n" "$mib" --barrier "${key[@]}" \
				${PROF_KALLSYMS:+--timeout-ms 120000} >"$TEST_TMP/f.res"
			res=$(cat "$TEST_TMP/f.res")
		fi
		# -j reports a wrong buffer (exit 3) as "ok": false
		[ "$res" = fail ] && grep -Eqs '"ok": ?false' "$TEST_TMP"/ar.* && res=wrong
		[ "$res" = fail ] && res=failed
		F[$rate,$n,$mib,netagg-$how]=$res
		FS[$rate,$n,$mib,netagg-$how]=
		[ "$res" = failed ] || [ "$res" = wrong ] ||
			FS[$rate,$n,$mib,netagg-$how]=$(spread <"$TEST_TMP/allreduce.slowest")
		RT[$rate,$n,$mib,$how]=-
		[ "$res" = failed ] || [ "$res" = wrong ] ||
			RT[$rate,$n,$mib,$how]=$(jq -rs --argjson r "$reps_f" \
				'"\(map(.retransmits) | add / $r | round) (\(map(.probes) | add / $r | round))"' \
				"$TEST_TMP"/ar.*)
	done
	# Counted (section i): the switch's counters beside the symbols.
	[ -z "${PROF_KALLSYMS:-}" ] || netagg_in sw -j stats >"${PROF_KALLSYMS/kallsyms/stats}"
	[ "$how" != xdp ] || xdp_star "$n" detach
	module_unload
}

# f_timed RATE N CMD...: CMD, and how long it took on stderr (progress, and
# what f_timeout has to allow).
f_timed() {
	local t0=$SECONDS
	"${@:3}"
	echo "bench: (f) $1 Mbit/s, $2 workers: ${*:3} took $((SECONDS - t0)) s" >&2
}

# bridge N: star N's switch made a bridge (bridge_star), with permanent
# neighbours as star has them.
bridge() {
	local n=$1 i
	bridge_star "$n" || return 1
	for i in $(seq "$n"); do
		neighbour sw br0 "10.0.$i.1" "w$i" v0 &&
			neighbour "w$i" v0 "10.0.$i.254" sw br0 || return 1
	done
}

# unshaped_star TOPOLOGY N: the star of N workers, links unshaped, sw
# routing or (TOPOLOGY bridged) bridging its ports, no steering, the
# module unloaded: where (i) and (w) run the systems of (f).
unshaped_star() {
	local i
	star "$2" 1500 || { echo "bench: no star of $2" >&2; return 1; }
	[ "$1" = routed ] || bridge "$2" || { echo "bench: no bridge on sw" >&2; return 1; }
	for i in $(seq "$2"); do
		steer "w$i" v0 0
		steer sw "s$i" 0
	done
	module_unload
}

# f_run RATE N SYSTEM CMD...: CMD (f_gloo, f_mpi or f_netagg, with its
# arguments) for the sizes of SIZES_F. Under the plugin (section i) each
# size runs on its own between two snapshots, and a line "TOPOLOGY,N,MIB,
# SYSTEM,RUN,INSNS_PER_BYTE,USER_SHARE,S0,S1" goes to PROF_DIR/peers.csv:
# the whole VM's instructions while any worker was inside a timed
# allreduce (each marks its own: util/mark.h), per byte of one
# worker's buffer and per allreduce, the share of them in user space, and
# the snapshots (full: profile.sh lists the functions they went to).
f_run() {
	local rate=$1 n=$2 sys=$3 mib s0 t u k b e o ib us
	shift 3
	if [ -z "${PROF_DIR:-}" ]; then
		f_timed "$rate" "$n" "$@"
		return
	fi
	local -a all=("${sizes_f[@]}")
	for mib in "${all[@]}"; do
		local -a sizes_f=("$mib")	# what CMD runs
		# f_netagg leaves the kernel's symbols here, its module loaded.
		PROF_KALLSYMS=$PROF_DIR/kallsyms.$topo.$n.$mib.$sys.$prof_run
		ib=- us=-
		prof_snapshot && s0=$prof_snaps || s0=
		f_timed "$rate" "$n" "$@"
		if [ -n "$s0" ] && prof_snapshot; then
			read -r t u k b e o < <(timed_insns "$s0" "$prof_snaps")
			if [ "$b" -eq $((n * reps_f)) ] && [ "$e" -eq "$b" ] && [ "$o" -eq 0 ]; then
				ib=$(awk -v t="$t" -v r="$reps_f" -v m="$mib" \
					'BEGIN { printf "%.2f", t / (r * m * 1048576) }')
				us=$(awk -v t="$t" -v u="$u" 'BEGIN { if (t > 0) printf "%.2f", u / t; else print "-" }')
			else
				echo "bench: (i) $sys, $n workers, $mib MiB: $b timed allreduces begun, $e ended," \
					"$o open, where $((n * reps_f)) were run: no count" >&2
			fi
		fi
		echo "$topo,$n,$mib,$sys,$prof_run,$ib,$us,$s0,$prof_snaps" >>"$PROF_DIR/peers.csv"
	done
	PROF_KALLSYMS=
}

# insn_table CSV TOPOLOGY: the instructions per allreduced byte of CSV
# (PROF_DIR/peers.csv of a make profile run) for TOPOLOGY, a row a worker
# count and size (the first run of each), as a Markdown table.
insn_table() {
	echo "| workers | MiB | Gloo | Open MPI | netagg 1 tree | netagg 4 trees | netagg 4 trees / best peer | user space: Gloo / Open MPI / netagg 4 trees | netagg 4 trees, XDP hook | netagg 4 trees, keyed | keyed / unkeyed |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	awk -F, -v topo="$2" 'NR > 1 && $1 == topo && $5 == 1 {
		k = $2 "," $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		ib[k, $4] = $6; us[k, $4] = $7 }
		function pct(v) { return v == "-" || v == "" ? "-" : sprintf("%.0f%%", 100 * v) }
		function num(v) { return v == "" ? "-" : v }
		END { for (i = 1; i <= nk; i++) { k = keys[i]; split(k, f, ",")
			best = ""
			if (ib[k, "gloo"] != "-" && ib[k, "gloo"] != "") best = ib[k, "gloo"] + 0
			if (ib[k, "openmpi"] != "-" && ib[k, "openmpi"] != "" && (best == "" || ib[k, "openmpi"] + 0 < best)) best = ib[k, "openmpi"] + 0
			r = (best != "" && ib[k, "netagg-best"] != "-" && ib[k, "netagg-best"] != "") ? sprintf("%.2f", ib[k, "netagg-best"] / best) : "-"
			kr = (ib[k, "netagg-keyed"] != "-" && ib[k, "netagg-keyed"] != "" && ib[k, "netagg-best"] != "-" && ib[k, "netagg-best"] != "") ? sprintf("%.2f", ib[k, "netagg-keyed"] / ib[k, "netagg-best"]) : "-"
			printf "| %s | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s | %s | %s |\n", f[1], f[2],
				num(ib[k, "gloo"]), num(ib[k, "openmpi"]), num(ib[k, "netagg-demo"]),
				num(ib[k, "netagg-best"]), r, pct(us[k, "gloo"]), pct(us[k, "openmpi"]),
				pct(us[k, "netagg-best"]), num(ib[k, "netagg-xdp"]), num(ib[k, "netagg-keyed"]), kr } }' "$1"
}
