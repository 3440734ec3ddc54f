# shellcheck shell=bash
# The runs on lib.sh's star that several sections of lab/bench/bench-vm.sh
# make: the stream of (b) with setup_mode and stop_mode ((b), (e), (p)),
# the allreduce of (c) ((c), (f), (g), (h)), and the instruction counts of
# make profile ((f), (i), (p)).

# stream MODE MTU RATE PACKETS: "pps bytes_per_s cpu_us_per_packet
# cpu1_util" or "fail". RATE 0: as fast as the window allows.
stream() {
	local mode=$1 mtu=$2 rate=$3 n=$4 i dst pids=() rc=0 m0 m1 count el wait_first segs=()
	# What a packet of the MTU carries: IP 20, UDP 8, netagg header 24 bytes.
	count=$(( (mtu - 52) / 4 ))
	# -super: as many packets a UDP GSO send as 64 KiB takes (44 at 1500)
	[[ $mode == *-super ]] && segs=(--segments $(( 65507 / (mtu - 28) > 64 ? 64 : 65507 / (mtu - 28) )))
	m0=$(cpu1_mark)
	# Forwarding is a ring, w1 -> w2 -> w3 -> w4 -> w1: all but w1 wait
	# for their predecessor's first packet, so none goes to an unbound port.
	for i in 2 3 4 1; do
		wait_first=()
		if [[ $mode == forward* ]]; then
			dst=10.0.$((i % 4 + 1)).1
			[ "$i" = 1 ] && sleep 0.5 || wait_first=(--wait-first)
		else
			dst=10.0.$i.254
		fi
		timeout 300 ip netns exec "w$i" "$BLAST" --dst "$dst" --job 1 --tree 0 \
			--dtype "$([[ $mode == netagg-i32* ]] && echo i32 || echo f32)" \
			--count "$count" --packets "$n" --window "$window" --rate $((rate / 4)) \
			--round "$ROUND" --cpu 0 --timeout-ms 5000 "${wait_first[@]}" "${segs[@]}" \
			>"$TEST_TMP/blast.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	m1=$(cpu1_mark)
	ROUND=$((ROUND + 1))
	if [ $rc -ne 0 ]; then
		{
			echo "bench: $mode MTU $mtu rate $rate failed:"
			cat "$TEST_TMP"/blast.*
			[[ $mode == netagg* ]] && netagg_in sw stats
		} >&2
		echo fail
		return
	fi
	el=$(cat "$TEST_TMP"/blast.[1-4] | jq -s '[.[].elapsed_s] | max')
	awk -v p=$((4 * n)) -v el="$el" -v c="$count" -v busy="$(cpu1_busy "$m0" "$m1")" \
		-v wall="$(awk -v a="${m0%% *}" -v b="${m1%% *}" 'BEGIN { print b - a }')" 'BEGIN {
		printf "%.0f %.0f %.2f %.0f", p / el, p * c * 4 / el, busy / p * 1e6, busy / wall * 100 }'
}

# setup_mode MODE MTU: the switch of (b) for one way; stop_mode after it.
setup_mode() {
	star 4 "$2" || return 1
	module_unload
	case $1 in
	netagg|netagg-super) module_load && root_job 1 "$2" 4 ;;
	netagg-i32|netagg-i32-super) module_load && root_job 1 "$2" 4 1 i32 ;;
	netagg-noreuse) NETAGG_MODPARAMS=reuse=0 module_load && root_job 1 "$2" 4 ;;
	# The XDP hook (docs/xdp.md) on the switch's four ports, native.
	netagg-xdp) module_load && root_job 1 "$2" 4 && xdp_star 4 attach ;;
	uagg) uagg_start 4 "$2" ;;
	esac
}

# xdp_star N attach|detach: netagg's XDP program on sw's ports s1..sN.
xdp_star() {
	local i
	for i in $(seq "$1"); do
		netagg_in sw xdp "$2" "s$i" || return 1
	done
}

stop_mode() {
	[ "$1" = uagg ] && uagg_stop
	[ "$1" = netagg-xdp ] && xdp_star 4 detach
	module_unload
}

# allreduce N MIB ARGS...: seconds of the slowest of N workers, or "fail":
# each worker runs a warm-up, then ITER (default 1) timed allreduces; the
# median over them of the slowest worker's time. The warm-up waits for every
# worker, so no worker's time counts the others' start (as the peers of (f)
# start each after a barrier). PIN: the CPUs (taskset list) the workers run
# on, all when unset. PROF_MAPS: a file to write the first worker's memory
# map to (make profile names its user-space functions by it; the workers
# run without address randomization there, so all have this one map).
allreduce() {
	local n=$1 mib=$2 i pids=() rc=0 trees pin=() per
	shift 2
	[ -z "${PIN:-}" ] || pin=(taskset -c "$PIN")	# (g): the workers on these CPUs
	rm -f "$TEST_TMP"/ar.*	# every ar.* is read: none of a run of more workers
	for i in $(seq "$n"); do
		mapfile -t trees < <(star_trees "$TREES" "$i")
		timeout 600 ip netns exec "w$i" "${pin[@]}" "$NETAGG_ALLREDUCE" --job 1 --rank $((i - 1)) \
			--workers "$n" --count $((mib * 262144)) --round "$ROUND" --window "$window" \
			--warmup --iterations "${ITER:-1}" \
			--timeout-ms 10000 -j "${trees[@]}" "$@" >"$TEST_TMP/ar.$i" 2>&1 &
		pids+=($!)
	done
	[ -z "${PROF_MAPS:-}" ] || save_maps "${pids[0]}" "$PROF_MAPS" || :
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	# A round an allreduce, and one each barrier before it.
	per=1
	[[ " $* " != *" --barrier "* ]] || per=2
	ROUND=$((ROUND + (1 + ${ITER:-1}) * per))
	if [ $rc -ne 0 ]; then
		cat "$TEST_TMP"/ar.* >&2
		echo fail
		return
	fi
	cat "$TEST_TMP"/ar.* | jq -s '[.[].times] | transpose | .[] | max' >"$TEST_TMP/allreduce.slowest"
	median <"$TEST_TMP/allreduce.slowest"
}

# save_maps PID FILE: the memory map of PID's child (timeout's command, once
# ip netns exec has run netagg-allreduce) into FILE, once the dynamic
# loader has mapped libc (at most 20 s).
save_maps() {
	local i child exe
	exe=$(readlink -f "$NETAGG_ALLREDUCE")
	for i in $(seq 200); do
		child=$(pgrep -P "$1" | head -n 1)
		[ -n "$child" ] && grep -qsF "$exe" "/proc/$child/maps" &&
			grep -qs 'libc\.so' "/proc/$child/maps" &&
			cp "/proc/$child/maps" "$2" && return 0
		sleep 0.1
	done
	echo "bench: no memory map of the first worker" >&2
	return 1
}

# Instruction counts, where the VM runs under the QEMU plugin of
# lab/profile/insn-profile.c (make bench and make profile load it and name its
# directory PROF_DIR; without PROF_DIR, (f) reports times only).
# prof_snapshot [totals]: ask the plugin for a snapshot (all blocks' counts,
# or with "totals" only each vCPU's sums) and wait till it is taken; its
# number (mark.N, mark.N.totals) is then prof_snaps. Not in $(...).
prof_snaps=0
prof_snapshot() {
	local i
	# Written whole before the plugin can see it: it reads the word.
	echo "${1:-all}" >"$PROF_DIR/mark.tmp" && mv "$PROF_DIR/mark.tmp" "$PROF_DIR/mark"
	for i in $(seq 500); do
		[ -e "$PROF_DIR/mark" ] || { prof_snaps=$((prof_snaps + 1)); return 0; }
		sleep 0.02
	done
	echo "bench: no snapshot: is the plugin loaded?" >&2
	return 1
}

# timed_insns S0 S1: "TIMED USER KERNEL BEGINS ENDS OPEN" between totals
# snapshots S0 and S1: the instructions of every vCPU while a timed region
# was open (util/mark.h), those in user space and in the kernel, the
# regions begun and ended, and those open at S1.
timed_insns() {
	awk 'FNR == 1 { f++ }
		$1 == "cpu" { t[f] += $6; u[f] += $8; k[f] += $10 }
		$1 == "marks" { b[f] = $3; e[f] = $5; o = $7 }
		END { printf "%.0f %.0f %.0f %d %d %d\n", t[2] - t[1], u[2] - u[1],
			k[2] - k[1], b[2] - b[1], e[2] - e[1], o }' \
		"$PROF_DIR/mark.$1.totals" "$PROF_DIR/mark.$2.totals"
}
