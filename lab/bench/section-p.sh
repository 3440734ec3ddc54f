# shellcheck shell=bash
# Section (p) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (stream, setup_mode, stop_mode, prof_snapshot).

# Instruction profile (lab/profile/profile.sh, whose QEMU plugin counts the
# guest instructions every vCPU runs): for each way of MODES and MTU of
# MTUS, the kernel's symbols, then two unpaced streams, of PROF_PACKETS and
# of three times as many VIDs a worker, with a snapshot of the counts
# before, between and after. Each stream costs a fixed part (its start and
# end, the idle ticks around it) and a part per packet; the difference of
# the two is the second alone, for 8 x PROF_PACKETS packets. Lines "MODE
# MTU PROF_PACKETS S1 S2 S3" (snapshot numbers) go to PROF_DIR/runs.
section_p() {
	local mode mtu n=${PROF_PACKETS:-2000} snap res1 res2
	: >"$PROF_DIR/runs"
	for mtu in ${MTUS:-1500}; do
		for mode in ${MODES:-forward netagg netagg-i32}; do
			setup_mode "$mode" "$mtu" || return 1
			cat /proc/kallsyms >"$PROF_DIR/kallsyms.$mode.$mtu"
			prof_snapshot || return 1
			snap=$((prof_snaps - 1))
			# Not in $(...): the second stream needs the round the
			# first one counted up.
			stream "$mode" "$mtu" 0 "$n" >"$TEST_TMP/prof.1"
			prof_snapshot || return 1
			stream "$mode" "$mtu" 0 $((3 * n)) >"$TEST_TMP/prof.2"
			prof_snapshot || return 1
			res1=$(cat "$TEST_TMP/prof.1") res2=$(cat "$TEST_TMP/prof.2")
			[[ $mode == netagg* ]] && netagg_in sw -j stats >"$PROF_DIR/stats.$mode.$mtu"
			stop_mode "$mode"
			[ "$res1" != fail ] && [ "$res2" != fail ] || return 1
			echo "$mode $mtu $n $((snap + 1)) $((snap + 2)) $((snap + 3))" >>"$PROF_DIR/runs"
		done
	done
}
