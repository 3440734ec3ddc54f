# shellcheck shell=bash
# Section (s) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh.
#
# (s) One straggler. 4 workers, SIZE_S MiB each, one tree on sw; w4's
#     contributions delayed by netem (DELAYS_S ms): the time of the slowest
#     worker that completed when the tree waits for all four and when its
#     quorum is 3 of 4 (straggler delay 0), median of REPS_S, every buffer
#     verified. Raw figures also go to CSV_S (lab/bench/bench.sh plots them).

# s_run JOB QUORUM: the four workers of star 4 on JOB once, round $ROUND
# (the caller moves it on: this runs in a subshell); prints the seconds of
# the slowest worker that completed and how many did, or "failed". With
# QUORUM "all" every worker must complete. With a quorum of 3, each worker
# accepts 3 to 4 contributions, and three must complete: the slowest
# contributor to a VID is left out of it, gets the result late, and fails
# (after 2 s without results) once it falls more than the results kept
# behind the others.
s_run() {
	local job=$1 q=$2 i pids=() ok=() args=(--pattern bit) tmo=10000
	[ "$q" = all ] || { args+=(--quorum 3); tmo=2000; }
	rm -f "$TEST_TMP"/s.*
	for i in 1 2 3 4; do
		timeout 300 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job "$job" \
			--rank $((i - 1)) --workers 4 --count $((size_s * 262144)) \
			--round "$ROUND" --tree "0=10.0.$i.254" -j "${args[@]}" \
			--timeout-ms "$tmo" >"$TEST_TMP/s.$i" 2>"$TEST_TMP/s.$i.err" &
		pids+=($!)
	done
	for i in 1 2 3 4; do wait "${pids[$((i - 1))]}" && ok+=("$i"); done
	if [ ${#ok[@]} -lt "$([ "$q" = all ] && echo 4 || echo 3)" ]; then
		cat "$TEST_TMP"/s.*.err >&2
		echo failed
		return
	fi
	echo "$(for i in "${ok[@]}"; do cat "$TEST_TMP/s.$i"; done |
		jq -s 'map(.seconds) | max') ${#ok[@]}"
}

section_s() {
	local d q r res t n
	local -A S=() N=()
	size_s=${SIZE_S:-4}
	say "## (s) One straggler: a quorum of 3 of 4 against waiting for all"
	say
	say "4 workers, $size_s MiB each, one tree on sw (window $window); w4's contributions"
	say "delayed by netem. The time of the slowest worker that completed, median of"
	say "${REPS_S:-3}: the tree waits for all four, or completes each VID with its first 3"
	say "(quorum 3, straggler delay 0; the workers accept 3 to 4 contributions, and"
	say "at least 3 must complete). Every buffer verified chunk by chunk (--pattern"
	say "bit). Completed: workers that completed, median; the one left out of VIDs"
	say "gets their results late, and fails once it is more than the kept results"
	say "behind the others."
	say
	mkdir -p "$(dirname "$CSV_S")"
	echo "delay_ms,quorum,seconds" >"$CSV_S"
	star 4 1500 || { say "(setup failed)"; return 0; }
	module_unload
	module_load && root_job 1 1500 4 && root_job 2 1500 4 &&
		netagg_in sw tree set job 2 tree 0 quorum 3 straggler 0 ||
		{ say "(setup failed)"; return 0; }
	for d in ${DELAYS_S:-0 5 10 25 50}; do
		tc -n w4 qdisc del dev v0 root 2>/dev/null
		[ "$d" = 0 ] || tc -n w4 qdisc add dev v0 root netem delay "${d}ms" limit 100000
		for q in all 3; do
			t=()
			n=()
			for r in $(seq "${REPS_S:-3}"); do
				res=$(s_run "$([ $q = all ] && echo 1 || echo 2)" "$q")
				ROUND=$((ROUND + 1))
				t+=("${res% *}")
				n+=("${res#* }")
			done
			if printf '%s\n' "${t[@]}" | grep -q failed; then
				S[$d,$q]=failed
				N[$d,$q]=-
			else
				S[$d,$q]=$(printf '%s\n' "${t[@]}" | median)
				N[$d,$q]=$(printf '%s\n' "${n[@]}" | median)
				echo "$d,$q,${S[$d,$q]}" >>"$CSV_S"
			fi
		done
	done
	tc -n w4 qdisc del dev v0 root 2>/dev/null
	say "| w4 delay ms | wait for all s | quorum 3 of 4 s | quorum vs all | completed (quorum) |"
	say "|---|---|---|---|---|"
	for d in ${DELAYS_S:-0 5 10 25 50}; do
		say "| $d | $(secs "${S[$d,all]}") | $(secs "${S[$d,3]}") |" \
			"$(ratio "${S[$d,3]}" "${S[$d,all]}") | ${N[$d,3]} of 4 |"
	done
	say
	module_unload
}
