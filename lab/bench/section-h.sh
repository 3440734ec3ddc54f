# shellcheck shell=bash
# Section (h) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (allreduce).
#
# (h) Where the time goes. The allreduce of (g) with super-packets of 1 to
#     44 chunks: what a send costs, and what the bytes cost.

# Where the time goes: the same allreduce (4 workers, 16 MiB, one tree) with
# super-packets of at most SEGS chunks each, 1 (plain packets) to 44. What a
# send costs (the stack, the hook's lookup, a lock hold, the library's
# batch) is paid once a super-packet; the sums, copies and checksums once a
# byte. A least-squares line through (sends per worker, time) splits them:
# its slope is the cost of one more send, its intercept what the bytes cost
# with sends free.
section_h() {
	local n=4 mib=16 segs res sends fit
	local -a segments=(${SEGS_H:-1 2 4 11 22 44})
	say "## (h) Where the time goes: per super-packet and per byte"
	say
	say "4 workers, $mib MiB each, MTU 1500, one tree; super-packets of at most"
	say "SEGS chunks (1448 bytes of gradient each; 1: plain packets). Time: the"
	say "slowest worker's, median of $reps_f after a warm-up; sends: datagrams"
	say "(plain or super) a worker sent per allreduce, retransmissions included."
	say
	say "| SEGS | sends per worker | seconds | vs plain |"
	say "|---|---|---|---|"
	star "$n" 1500 || { echo "bench: no star of $n" >&2; return; }
	for i in $(seq "$n"); do
		steer "w$i" v0 0
		steer sw "s$i" 0
	done
	: >"$TEST_TMP/h.points"
	TREES=1
	for segs in "${segments[@]}"; do
		module_unload
		module_load && root_job 1 1500 "$n" 1 || { echo "bench: (h) no job" >&2; continue; }
		rm -f "$TEST_TMP"/ar.*
		ITER=$reps_f allreduce "$n" "$mib" --segments "$segs" >"$TEST_TMP/h.res"
		res=$(cat "$TEST_TMP/h.res")
		module_unload
		if [ "$res" = fail ]; then
			say "| $segs | - | failed | - |"
			continue
		fi
		sends=$(jq -s --argjson r "$reps_f" 'map(.sends) | add / length / $r | round' "$TEST_TMP"/ar.*)
		echo "$segs $sends $res" >>"$TEST_TMP/h.points"
		say "| $segs | $sends | $(secs "$res") | $(ratio "$res" "$(awk 'NR == 1 { print $3 }' "$TEST_TMP/h.points")") |"
	done
	say
	fit=$(awk -v bytes=$((mib * 1048576)) '{ x[NR] = $2; y[NR] = $3; sx += $2; sy += $3 }
		END {
			if (NR < 2) exit
			mx = sx / NR; my = sy / NR
			for (i = 1; i <= NR; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
			if (sxx == 0) exit
			b = sxy / sxx; a = my - b * mx
			for (i = 1; i <= NR; i++) { e = y[i] - a - b * x[i]; r += e * e; t += (y[i] - my) ^ 2 }
			printf "%.1f %.3f %.1f %.3f", b * 1e6, a, a / bytes * 1e9, (t > 0 ? 1 - r / t : 1)
		}' "$TEST_TMP/h.points")
	if [ -n "$fit" ]; then
		set -- $fit
		say "Fit, time = a + b x sends: b = $1 µs a send (everything a datagram costs,"
		say "on the worker, the switch and back), a = $2 s for the bytes alone, $3 ns"
		say "a byte of one worker's gradient (R² $4). At $(awk 'END { print $1 }' "$TEST_TMP/h.points") chunks a super-packet the"
		say "sends cost $(awk -v b="$1" -v p="$(awk 'END { print $2 }' "$TEST_TMP/h.points")" -v t="$(awk 'END { print $3 }' "$TEST_TMP/h.points")" \
			'BEGIN { printf "%.0f", b * p / 1e6 / t * 100 }')% of the time, the bytes the rest."
	else
		say "No fit: fewer than two runs succeeded."
	fi
	say
}
